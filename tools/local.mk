# SPDX-License-Identifier: BSD-3-Clause
# Benchmarks and helpers built into build/bin.

# The channels, measurement loop and output shared by the benchmarks.
noinst_LTLIBRARIES += tools/libperf.la
tools_libperf_la_SOURCES = \
	tools/perf/perf_util.hpp tools/perf/perf_util.cpp \
	tools/perf/channel.hpp tools/perf/schedule.cpp \
	tools/perf/sctp_channel.hpp tools/perf/sctp_channel.cpp \
	tools/perf/tcp_channel.hpp tools/perf/tcp_channel.cpp \
	tools/perf/udp_channel.hpp tools/perf/udp_channel.cpp \
	tools/perf/engine_channel.hpp tools/perf/engine_channel.cpp

noinst_PROGRAMS += bin/sctp-perf
bin_sctp_perf_SOURCES = tools/sctp-perf/main.cpp
bin_sctp_perf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/perf
bin_sctp_perf_LDADD = tools/libperf.la src/libsctpmpi.la src/sctp/libsctpengine.la

noinst_PROGRAMS += bin/iwarp-perf
bin_iwarp_perf_SOURCES = \
	tools/iwarp-perf/main.cpp \
	tools/iwarp-perf/control.hpp tools/iwarp-perf/control.cpp \
	tools/iwarp-perf/rdma_bench.hpp tools/iwarp-perf/rdma_bench.cpp
bin_iwarp_perf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/perf
bin_iwarp_perf_LDADD = tools/libperf.la iwarp/libiwarp.la src/libsctpmpi.la src/sctp/libsctpengine.la
