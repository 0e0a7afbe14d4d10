#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The transport's tests again on our own SCTP engine (stack=own, src/own_socket.hpp): pairs of
# processes, failures, bounds and the attacks (whose raw peer is then an engine socket too).
# Left out:
# - PacketAuth.* and the auth=packet variants of two link tests (they print a line for each): the
#   engine has no SCTP-AUTH yet, and its sockets refuse auth=packet with an error that says so;
# - SackPerRead.* and SackFullPackets.*: they count SACKs with usrsctp's statistics; the engine's
#   own SACK rules are checked in tests/engine_tests (EnginePackets.*Sack*).
set -eu
MPIR_CVAR_CH3_SCTP_STACK=own exec "${TRANSPORT_TESTS:-./tests/transport_tests}" \
    --gtest_filter='-PacketAuth.*:SackPerRead.*:SackFullPackets.*' "$@"
