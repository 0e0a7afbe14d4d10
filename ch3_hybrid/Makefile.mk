# SPDX-License-Identifier: BSD-3-Clause
## ch3:hybrid channel (inserted into MPICH's tree by tools/mpich-integrate): ch3:sctp's sources
## (ch3_sctp_shared_sources, from ch3:sctp's Makefile.mk), built with MPIDI_CH3_HYBRID, plus the
## RDMA files of this directory, whose hy_hold.c holds the extension table.

errnames_txt_files += src/mpid/ch3/channels/hybrid/src/errnames.txt

if BUILD_CH3_HYBRID

AM_CPPFLAGS += -DMPIDI_CH3_HYBRID \
    -I$(top_srcdir)/src/mpid/ch3/channels/hybrid/include \
    -I$(top_srcdir)/src/mpid/ch3/channels/sctp/include

noinst_HEADERS += \
    src/mpid/ch3/channels/hybrid/include/mpidi_ch3_hybrid_pre.h \
    src/mpid/ch3/channels/hybrid/include/mpidi_ch3_hybrid.h \
    src/mpid/ch3/channels/hybrid/include/hy_order.h \
    src/mpid/ch3/channels/hybrid/include/hy_proto.h

mpi_core_sources += $(ch3_sctp_shared_sources) \
    src/mpid/ch3/channels/hybrid/src/hy_cvars.c \
    src/mpid/ch3/channels/hybrid/src/hy_device.c \
    src/mpid/ch3/channels/hybrid/src/hy_hold.c \
    src/mpid/ch3/channels/hybrid/src/hy_memory.c \
    src/mpid/ch3/channels/hybrid/src/hy_placed.c \
    src/mpid/ch3/channels/hybrid/src/hy_pvars.c \
    src/mpid/ch3/channels/hybrid/src/hy_rdma.c \
    src/mpid/ch3/channels/hybrid/src/hy_window.c

endif BUILD_CH3_HYBRID
