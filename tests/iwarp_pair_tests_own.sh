#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The RNIC's two-process tests again with the RNIC on our own SCTP engine (stack=own,
# iwarp/own_adaptation.hpp): every operation and size, atomics, errors, the bounds on silent
# associations (whose attacker is then a usrsctp peer of the engine), the progress modes and
# threads. Nothing is left out.
set -eu
MPIR_CVAR_CH3_SCTP_STACK=own exec "${IWARP_PAIR_TESTS:-./tests/iwarp_pair_tests}" "$@"
