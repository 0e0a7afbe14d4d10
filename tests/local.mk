# Unit tests (GoogleTest) of the core, and the two-process integration tests.
if HAVE_GTEST
check_PROGRAMS += tests/unit_tests
tests_unit_tests_SOURCES = \
	tests/unit/test_settings.cpp \
	tests/unit/test_path_params.cpp \
	tests/unit/test_multihome.cpp \
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
	tests/unit/test_hy_order.cpp \
	tests/unit/test_hy_proto.cpp
# ch3_hybrid/include: the channel's rules and wire formats that need no MPICH (hy_order.h, hy_proto.h)
tests_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/ch3_hybrid/include \
	-DCHANNEL_CVARS_FILE='"$(abs_top_srcdir)/ch3_sctp/src/ch3_cvars.c"'
tests_unit_tests_LDADD = src/libsctpmpi.la $(USRSCTP_LIBS) -lgtest -lgtest_main
TESTS += tests/unit_tests

check_PROGRAMS += tests/transport_tests
tests_transport_tests_SOURCES = tests/integration/transport_pair.cpp tests/integration/held_bounds.cpp tests/integration/hello_auth.cpp \
	tests/integration/progress_capi.cpp tests/integration/udp_port_range.cpp tests/integration/pair_harness.hpp \
	tests/integration/packet_auth.cpp tests/integration/packet_auth_check.hpp \
	tests/integration/raw_peer.hpp tests/wait_pair.hpp
tests_transport_tests_LDADD = src/libsctpmpi.la -lgtest -lgtest_main
TESTS += tests/transport_tests
endif

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
fuzz/hello_fuzz: $(top_srcdir)/tests/fuzz/hello_fuzz.cpp $(top_srcdir)/src/hello_auth.cpp $(top_srcdir)/src/hello_auth.hpp \
		$(top_srcdir)/src/hmac_sha256.cpp
	@mkdir -p fuzz
	$(FUZZ_CXX) $(FUZZ_FLAGS) -o $@ $(top_srcdir)/tests/fuzz/hello_fuzz.cpp $(top_srcdir)/src/hello_auth.cpp \
		$(top_srcdir)/src/hmac_sha256.cpp
fuzz: fuzz/frame_fuzz fuzz/card_fuzz fuzz/hy_identity_fuzz fuzz/hello_fuzz
.PHONY: fuzz
EXTRA_DIST += tests/fuzz/frame_fuzz.cpp tests/fuzz/card_fuzz.cpp tests/fuzz/hy_identity_fuzz.cpp tests/fuzz/hello_fuzz.cpp
