# SPDX-License-Identifier: BSD-3-Clause
# Unit tests (GoogleTest) of the core, and the two-process integration tests.
if HAVE_GTEST
check_PROGRAMS += tests/unit_tests
tests_unit_tests_SOURCES = tests/unit/error_of.hpp \
	tests/unit/test_settings.cpp \
	tests/unit/test_path_params.cpp \
	tests/unit/test_multihome.cpp \
	tests/unit/test_rails.cpp \
	tests/unit/test_frame.cpp \
	tests/unit/test_reorder.cpp \
	tests/unit/test_stream_map.cpp \
	tests/unit/test_card.cpp \
	tests/unit/test_hmac_sha256.cpp \
	tests/unit/test_packet_auth.cpp \
	tests/unit/test_abort_cause.cpp \
	tests/unit/test_usrsctp_checksum.cpp \
	tests/unit/test_channel_cvars.cpp \
	tests/unit/test_heap_policy.cpp \
	tests/unit/test_spin_budget.cpp \
	tests/unit/test_hy_order.cpp \
	tests/unit/test_hy_proto.cpp \
	tests/unit/test_own_socket.cpp
# ch3_hybrid/include: the channel's rules and wire formats that need no MPICH (hy_order.h, hy_proto.h)
tests_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ch3_hybrid/include \
	-DCHANNEL_CVARS_FILE='"$(abs_top_srcdir)/ch3_sctp/src/ch3_cvars.c"'
tests_unit_tests_LDADD = src/libsctpmpi.la $(USRSCTP_LIBS) -lgtest -lgtest_main
TESTS += tests/unit_tests

check_PROGRAMS += tests/transport_tests
tests_transport_tests_SOURCES = tests/integration/transport_pair.cpp tests/integration/held_bounds.cpp tests/integration/hello_auth.cpp \
	tests/integration/progress_capi.cpp tests/integration/udp_port_range.cpp tests/integration/pair_harness.hpp \
	tests/integration/packet_auth.cpp tests/integration/packet_auth_check.hpp \
	tests/integration/raw_peer.hpp tests/integration/sack_per_read.cpp tests/integration/port_successor.cpp \
	tests/wait_pair.hpp
tests_transport_tests_LDADD = src/libsctpmpi.la $(USRSCTP_LIBS) -lgtest -lgtest_main
TESTS += tests/transport_tests
# The same on our own SCTP engine (stack=own).
TESTS += tests/transport_tests_own.sh
EXTRA_DIST += tests/transport_tests_own.sh

# Our own SCTP engine (src/sctp/, issue 48) against usrsctp in one process, both roles, over UDP on
# 127.0.0.1; and the engine's UDP I/O (recvmmsg + GRO, sendmsg + GSO) on loopback.
check_PROGRAMS += tests/interop_tests
tests_interop_tests_SOURCES = tests/interop/usrsctp_interop.cpp tests/interop/udp_io_test.cpp \
	tests/interop/packet_trace.hpp
tests_interop_tests_LDADD = src/sctp/libsctpengine.la src/libsctpmpi.la $(USRSCTP_LIBS) -lgtest -lgtest_main
TESTS += tests/interop_tests

# Our own SCTP engine (src/sctp/, issue 48): CRC32c and wire format, packets from a scripted
# peer, and two engines on a seeded simulated network (ENGINE_SEED=N replays one seed).
check_PROGRAMS += tests/engine_tests
tests_engine_tests_SOURCES = tests/unit/test_engine_wire.cpp \
	tests/engine/sim.hpp tests/engine/traffic.hpp tests/engine/scripted_peer.hpp \
	tests/engine/test_engine_packets.cpp tests/engine/test_engine_sim.cpp \
	tests/engine/test_engine_multihoming.cpp
tests_engine_tests_LDADD = src/sctp/libsctpengine.la $(CRYPTO_LIBS) -lgtest -lgtest_main
TESTS += tests/engine_tests
# The engine's own cost per 1-byte round trip (for callgrind; built, not run, by make check).
check_PROGRAMS += tests/engine_pingpong
tests_engine_pingpong_SOURCES = tests/engine/engine_pingpong.cpp
tests_engine_pingpong_LDADD = src/sctp/libsctpengine.la $(CRYPTO_LIBS)
endif

# sctp-perf's channels carry checked data (the transport, kernel TCP and the kernel UDP floor).
TESTS += tests/sctp_perf_smoke.sh
EXTRA_DIST += tests/sctp_perf_smoke.sh
# ... and the `engine` channel (src/sctp/ over its UDP I/O) beside the transport, at MTU 1500.
TESTS += tests/sctp_perf_engine_smoke.sh
EXTRA_DIST += tests/sctp_perf_engine_smoke.sh

# tools/multihome-gen refuses a host file's ssh option and a hostile `uname -n` (a fake ssh, no root).
TESTS += tests/multihome_gen_hostile.sh
EXTRA_DIST += tests/multihome_gen_hostile.sh

# The process outside a job that tests/adversary/run sets on one of its ranks (not a test itself).
check_PROGRAMS += tests/adversary/attacker
tests_adversary_attacker_SOURCES = tests/adversary/attacker.cpp
tests_adversary_attacker_LDADD = iwarp/libiwarp.la src/libsctpmpi.la $(USRSCTP_LIBS)

# libFuzzer targets (clang): `make fuzz` builds them into fuzz/; see README.
FUZZ_CXX = clang++
FUZZ_FLAGS = -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I$(top_srcdir)/src
fuzz/frame_fuzz: $(top_srcdir)/tests/fuzz/frame_fuzz.cpp $(top_srcdir)/src/frame.cpp $(top_srcdir)/src/frame.hpp
	@mkdir -p fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $(top_srcdir)/tests/fuzz/frame_fuzz.cpp $(top_srcdir)/src/frame.cpp
fuzz/card_fuzz: $(top_srcdir)/tests/fuzz/card_fuzz.cpp $(top_srcdir)/src/card.cpp $(top_srcdir)/src/card.hpp
	@mkdir -p fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $(top_srcdir)/tests/fuzz/card_fuzz.cpp $(top_srcdir)/src/card.cpp
fuzz/hy_identity_fuzz: $(top_srcdir)/tests/fuzz/hy_identity_fuzz.cpp $(top_srcdir)/ch3_hybrid/include/hy_proto.h
	@mkdir -p fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -I$(top_srcdir)/ch3_hybrid/include -o $@ $(top_srcdir)/tests/fuzz/hy_identity_fuzz.cpp
fuzz/hy_header_fuzz: $(top_srcdir)/tests/fuzz/hy_header_fuzz.cpp $(top_srcdir)/ch3_hybrid/include/hy_order.h
	@mkdir -p fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -I$(top_srcdir)/ch3_hybrid/include -o $@ $(top_srcdir)/tests/fuzz/hy_header_fuzz.cpp
fuzz/hello_fuzz: $(top_srcdir)/tests/fuzz/hello_fuzz.cpp $(top_srcdir)/src/hello_auth.cpp $(top_srcdir)/src/hello_auth.hpp \
		$(top_srcdir)/src/hmac_sha256.cpp
	@mkdir -p fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $(top_srcdir)/tests/fuzz/hello_fuzz.cpp $(top_srcdir)/src/hello_auth.cpp \
		$(top_srcdir)/src/hmac_sha256.cpp $(CRYPTO_LIBS)
# Our own SCTP engine's sources, for the fuzz targets that link it.
SCTP_ENGINE_FUZZ_SOURCES = \
	$(top_srcdir)/src/sctp/address.cpp $(top_srcdir)/src/sctp/crc32c.cpp $(top_srcdir)/src/sctp/wire.cpp \
	$(top_srcdir)/src/sctp/cookie.cpp $(top_srcdir)/src/sctp/endpoint.cpp $(top_srcdir)/src/sctp/handshake.cpp \
	$(top_srcdir)/src/sctp/data_rx.cpp $(top_srcdir)/src/sctp/data_tx.cpp $(top_srcdir)/src/sctp/output.cpp \
	$(top_srcdir)/src/sctp/shutdown.cpp $(top_srcdir)/src/sctp/path.cpp
# The transport on a scripted socket: its own sources instrumented, usrsctp and our own engine
# (stack=own) linked but never started; a UBSan report stops the run (a finding), as in the iWARP targets.
TRANSPORT_FUZZ_FILES = $(top_srcdir)/tests/fuzz/transport_rx_fuzz.cpp \
	$(top_srcdir)/src/transport.cpp $(top_srcdir)/src/transport_rx.cpp $(top_srcdir)/src/transport_tx.cpp \
	$(top_srcdir)/src/transport_unlink.cpp $(top_srcdir)/src/transport_auth.cpp $(top_srcdir)/src/transport_packet_auth.cpp \
	$(top_srcdir)/src/transport_report.cpp \
	$(top_srcdir)/src/peer_table.cpp $(top_srcdir)/src/stream_map.cpp $(top_srcdir)/src/progress.cpp \
	$(top_srcdir)/src/frame.cpp $(top_srcdir)/src/card.cpp $(top_srcdir)/src/hello_auth.cpp \
	$(top_srcdir)/src/hmac_sha256.cpp $(top_srcdir)/src/packet_auth.cpp $(top_srcdir)/src/abort_cause.cpp \
	$(top_srcdir)/src/endpoint.cpp $(top_srcdir)/src/endpoint_auth.cpp \
	$(top_srcdir)/src/stack.cpp $(top_srcdir)/src/settings.cpp $(top_srcdir)/src/multihome.cpp $(top_srcdir)/src/rails.cpp \
	$(top_srcdir)/src/path_params.cpp $(top_srcdir)/src/heap_policy.cpp \
	$(top_srcdir)/src/own_socket.cpp $(SCTP_ENGINE_FUZZ_SOURCES) $(top_srcdir)/src/sctp/udp_io.cpp
fuzz/transport_rx_fuzz: $(TRANSPORT_FUZZ_FILES) $(top_srcdir)/src/transport.hpp $(top_srcdir)/src/sctp_socket.hpp \
		$(top_srcdir)/src/endpoint.hpp $(top_srcdir)/src/peer_table.hpp $(top_srcdir)/src/reorder.hpp \
		$(top_srcdir)/src/held_bytes.hpp $(top_srcdir)/src/frame.hpp $(top_srcdir)/src/hello_auth.hpp \
		$(top_srcdir)/src/packet_auth.hpp
	@mkdir -p fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fno-sanitize-recover=undefined $(CPPFLAGS) -o $@ $(TRANSPORT_FUZZ_FILES) \
		$(LDFLAGS) $(USRSCTP_LIBS) $(CRYPTO_LIBS) -pthread
# Our own SCTP engine's packet parser and one Endpoint's answer to a packet (pure, seeded:
# deterministic); libcrypto for the cookie's HMAC.
SCTP_ENGINE_FUZZ_FILES = $(top_srcdir)/tests/fuzz/sctp_packet_fuzz.cpp $(SCTP_ENGINE_FUZZ_SOURCES)
fuzz/sctp_packet_fuzz: $(SCTP_ENGINE_FUZZ_FILES) $(top_srcdir)/src/sctp/engine.hpp $(top_srcdir)/src/sctp/impl.hpp \
		$(top_srcdir)/src/sctp/wire.hpp $(top_srcdir)/src/sctp/ring.hpp $(top_srcdir)/src/sctp/cookie.hpp \
		$(top_srcdir)/src/sctp/crc32c.hpp
	@mkdir -p fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fno-sanitize-recover=undefined -o $@ $(SCTP_ENGINE_FUZZ_FILES) $(CRYPTO_LIBS)
fuzz: fuzz/frame_fuzz fuzz/card_fuzz fuzz/hy_identity_fuzz fuzz/hy_header_fuzz fuzz/hello_fuzz fuzz/transport_rx_fuzz \
	fuzz/sctp_packet_fuzz
.PHONY: fuzz
EXTRA_DIST += tests/fuzz/frame_fuzz.cpp tests/fuzz/card_fuzz.cpp tests/fuzz/hy_identity_fuzz.cpp tests/fuzz/hy_header_fuzz.cpp tests/fuzz/hello_fuzz.cpp \
	tests/fuzz/transport_rx_fuzz.cpp tests/fuzz/gen_transport_rx_corpus.py tests/fuzz/sctp_packet_fuzz.cpp
