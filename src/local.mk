# SPDX-License-Identifier: BSD-3-Clause
# libsctpmpi: the SCTP transport core (one file per concern).
noinst_LTLIBRARIES += src/libsctpmpi.la
src_libsctpmpi_la_SOURCES = \
	src/sctpmpi.h src/error.hpp \
	src/settings.hpp src/settings.cpp \
	src/multihome.hpp src/multihome.cpp src/rails.hpp src/rails.cpp \
	src/frame.hpp src/frame.cpp \
	src/reorder.hpp src/held_bytes.hpp \
	src/stream_map.hpp src/stream_map.cpp \
	src/stack.hpp src/stack.cpp src/heap_policy.hpp src/heap_policy.cpp \
	src/path_params.hpp src/path_params.cpp \
	src/endpoint.hpp src/endpoint.cpp src/own_socket.hpp src/own_socket.cpp \
	src/abort_cause.hpp src/abort_cause.cpp \
	src/peer_table.hpp src/peer_table.cpp \
	src/card.hpp src/card.cpp \
	src/hmac_sha256.hpp src/hmac_sha256.cpp src/hello_auth.hpp src/hello_auth.cpp \
	src/packet_auth.hpp src/packet_auth.cpp \
	src/progress.hpp src/progress.cpp src/spin_budget.hpp \
	src/transport.hpp src/transport.cpp \
	src/transport_rx.cpp src/transport_tx.cpp src/transport_unlink.cpp src/transport_auth.cpp src/transport_packet_auth.cpp \
	src/transport_report.cpp src/endpoint_auth.cpp \
	src/capi.cpp
src_libsctpmpi_la_LIBADD = $(USRSCTP_LIBS) src/sctp/libsctpengine.la
