## ch3:hybrid channel (inserted into MPICH's tree by tools/mpich-integrate): ch3:sctp's sources,
## built with MPIDI_CH3_HYBRID, plus the RDMA files of this directory.

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

mpi_core_sources += \
    src/mpid/ch3/channels/sctp/src/ch3_cvars.c \
    src/mpid/ch3/channels/sctp/src/ch3_init.c \
    src/mpid/ch3/channels/sctp/src/ch3_peers.c \
    src/mpid/ch3/channels/sctp/src/ch3_progress.c \
    src/mpid/ch3/channels/sctp/src/ch3_pvars.c \
    src/mpid/ch3/channels/sctp/src/ch3_recv.c \
    src/mpid/ch3/channels/sctp/src/ch3_rma_failure.c \
    src/mpid/ch3/channels/sctp/src/ch3_send.c \
    src/mpid/ch3/channels/hybrid/src/ch3_win_fns.c \
    src/mpid/ch3/channels/hybrid/src/hy_cvars.c \
    src/mpid/ch3/channels/hybrid/src/hy_device.c \
    src/mpid/ch3/channels/hybrid/src/hy_hold.c \
    src/mpid/ch3/channels/hybrid/src/hy_memory.c \
    src/mpid/ch3/channels/hybrid/src/hy_placed.c \
    src/mpid/ch3/channels/hybrid/src/hy_pvars.c \
    src/mpid/ch3/channels/hybrid/src/hy_rdma.c

endif BUILD_CH3_HYBRID
