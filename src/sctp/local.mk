# SPDX-License-Identifier: BSD-3-Clause
# libsctpengine: our own SCTP engine (issue 48), sans-I/O, written from RFC 9260 / RFC 6951.
# HMAC-SHA-256 of the state cookie comes from OpenSSL's libcrypto (libssl-dev).
noinst_LTLIBRARIES += src/sctp/libsctpengine.la
src_sctp_libsctpengine_la_SOURCES = \
	src/sctp/engine.hpp src/sctp/address.cpp \
	src/sctp/crc32c.hpp src/sctp/crc32c.cpp \
	src/byte_order.hpp src/sctp/wire.hpp src/sctp/wire.cpp \
	src/sctp/cookie.hpp src/sctp/cookie.cpp \
	src/sctp/ring.hpp src/sctp/impl.hpp \
	src/sctp/endpoint.cpp src/sctp/handshake.cpp \
	src/sctp/data_rx.cpp src/sctp/data_tx.cpp \
	src/sctp/output.cpp src/sctp/shutdown.cpp \
	src/sctp/path.cpp
src_sctp_libsctpengine_la_LIBADD = $(CRYPTO_LIBS)
# The UDP I/O the progress engine owns (recvmmsg + GRO, sendmsg + GSO) and the driver loop that
# glues an Endpoint to it (issue 48 item 2; maintained by the I/O's author, keep these lines).
src_sctp_libsctpengine_la_SOURCES += src/sctp/udp_io.hpp src/sctp/udp_io.cpp
