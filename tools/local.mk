# Benchmarks and helpers built into build/bin.
noinst_PROGRAMS += bin/sctp-perf
bin_sctp_perf_SOURCES = tools/sctp-perf/main.cpp
bin_sctp_perf_LDADD = src/libsctpmpi.la
