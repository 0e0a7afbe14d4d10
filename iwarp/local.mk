# SPDX-License-Identifier: BSD-3-Clause
# iwarp/: the software RNIC (RDMAP/DDP over SCTP, RFC 5040/5041/5043).
noinst_LTLIBRARIES += iwarp/libiwarp.la
iwarp_libiwarp_la_SOURCES = \
	iwarp/wire.hpp iwarp/wire.cpp \
	iwarp/memory.hpp iwarp/memory.cpp \
	iwarp/validate.hpp iwarp/validate.cpp

if HAVE_GTEST
# One process, no network: wire formats, checks, memory, session rules, and the engine of two QPs
# joined by an in-memory LLP (tests/iwarp/unit/).
check_PROGRAMS += tests/iwarp_unit_tests
tests_iwarp_unit_tests_SOURCES = \
	tests/iwarp/unit/test_wire.cpp \
	tests/iwarp/unit/test_memory.cpp \
	tests/iwarp/unit/test_validate.cpp \
	tests/iwarp/unit/test_session.cpp \
	tests/iwarp/unit/mem_llp.hpp tests/iwarp/unit/test_qp_loopback.cpp
tests_iwarp_unit_tests_LDADD = iwarp/libiwarp.la src/libsctpmpi.la $(USRSCTP_LIBS) -lgtest -lgtest_main
TESTS += tests/iwarp_unit_tests

# Two processes, two usrsctp stacks on loopback, the C verbs API end to end (tests/iwarp/pair/).
check_PROGRAMS += tests/iwarp_pair_tests
tests_iwarp_pair_tests_SOURCES = tests/wait_pair.hpp tests/iwarp/pair/pair_harness.hpp \
	tests/iwarp/pair/iwarp_pair.cpp tests/iwarp/pair/iwarp_threads.cpp
tests_iwarp_pair_tests_LDADD = iwarp/libiwarp.la src/libsctpmpi.la $(USRSCTP_LIBS) -lgtest -lgtest_main
TESTS += tests/iwarp_pair_tests
# The same with the RNIC on our own SCTP engine (stack=own).
TESTS += tests/iwarp_pair_tests_own.sh
EXTRA_DIST += tests/iwarp_pair_tests_own.sh
endif

# libFuzzer target for decode + validate (clang): `make fuzz-iwarp` builds fuzz/iwarp_segment_fuzz.
IWARP_FUZZ_CXX = clang++
IWARP_FUZZ_FLAGS = -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I$(top_srcdir)/src -I$(top_srcdir)/iwarp
IWARP_FUZZ_SOURCES = $(top_srcdir)/tests/fuzz/iwarp_segment_fuzz.cpp \
	$(top_srcdir)/iwarp/wire.cpp $(top_srcdir)/iwarp/memory.cpp $(top_srcdir)/iwarp/validate.cpp
fuzz/iwarp_segment_fuzz: $(IWARP_FUZZ_SOURCES) $(top_srcdir)/iwarp/wire.hpp $(top_srcdir)/iwarp/memory.hpp \
		$(top_srcdir)/iwarp/validate.hpp $(top_srcdir)/src/byte_order.hpp
	@mkdir -p fuzz
	$(IWARP_FUZZ_CXX) $(IWARP_FUZZ_FLAGS) -o $@ $(IWARP_FUZZ_SOURCES)
# One queue pair driven by a scripted peer (connection, placement, early messages, requests).
IWARP_QP_FUZZ_FILES = $(top_srcdir)/tests/fuzz/iwarp_qp_fuzz.cpp \
	$(top_srcdir)/iwarp/wire.cpp $(top_srcdir)/iwarp/memory.cpp $(top_srcdir)/iwarp/validate.cpp \
	$(top_srcdir)/iwarp/session.cpp $(top_srcdir)/iwarp/requests.cpp $(top_srcdir)/iwarp/cq.cpp \
	$(top_srcdir)/iwarp/qp.cpp $(top_srcdir)/iwarp/rdmap_tx.cpp $(top_srcdir)/iwarp/rdmap_rx.cpp
fuzz/iwarp_qp_fuzz: $(IWARP_QP_FUZZ_FILES) $(top_srcdir)/iwarp/qp.hpp $(top_srcdir)/iwarp/session.hpp \
		$(top_srcdir)/iwarp/requests.hpp $(top_srcdir)/iwarp/cq.hpp $(top_srcdir)/iwarp/llp.hpp $(top_srcdir)/iwarp/wire.hpp \
		$(top_srcdir)/iwarp/validate.hpp $(top_srcdir)/iwarp/memory.hpp $(top_srcdir)/iwarp/iwarp_verbs.h \
		$(top_srcdir)/tests/iwarp/unit/mem_llp.hpp
	@mkdir -p fuzz
	$(IWARP_FUZZ_CXX) $(IWARP_FUZZ_FLAGS) -o $@ $(IWARP_QP_FUZZ_FILES)
fuzz-iwarp: fuzz/iwarp_segment_fuzz fuzz/iwarp_qp_fuzz
.PHONY: fuzz-iwarp
EXTRA_DIST += tests/fuzz/iwarp_segment_fuzz.cpp tests/fuzz/iwarp_qp_fuzz.cpp tests/fuzz/gen_iwarp_qp_corpus.py

# The RNIC proper: RFC 5043 adaptation, session control, RDMAP/DDP engine, CQ/QP, device, verbs.
iwarp_libiwarp_la_SOURCES += \
	iwarp/iwarp_verbs.h \
	iwarp/llp.hpp \
	iwarp/session.hpp iwarp/session.cpp \
	iwarp/requests.hpp iwarp/requests.cpp \
	iwarp/adaptation.hpp iwarp/adaptation.cpp \
	iwarp/own_adaptation.hpp iwarp/own_adaptation.cpp \
	iwarp/cq.hpp iwarp/cq.cpp \
	iwarp/qp.hpp iwarp/qp.cpp iwarp/rdmap_tx.cpp iwarp/rdmap_rx.cpp \
	iwarp/device.hpp iwarp/device.cpp \
	iwarp/verbs.cpp
