# SPDX-License-Identifier: BSD-3-Clause
## ch3:sctp channel (inserted into MPICH's tree by tools/mpich-integrate)

errnames_txt_files += src/mpid/ch3/channels/sctp/src/errnames.txt

## The channel's sources, also built into ch3:hybrid (with MPIDI_CH3_HYBRID and its extension
## table): every file but ch3_no_ext.c, ch3:sctp's empty extension table.
ch3_sctp_shared_sources = \
    src/mpid/ch3/channels/sctp/src/ch3_awaited.c \
    src/mpid/ch3/channels/sctp/src/ch3_cvars.c \
    src/mpid/ch3/channels/sctp/src/ch3_init.c \
    src/mpid/ch3/channels/sctp/src/ch3_peers.c \
    src/mpid/ch3/channels/sctp/src/ch3_progress.c \
    src/mpid/ch3/channels/sctp/src/ch3_pvars.c \
    src/mpid/ch3/channels/sctp/src/ch3_recv.c \
    src/mpid/ch3/channels/sctp/src/ch3_rma_dead_origin.c \
    src/mpid/ch3/channels/sctp/src/ch3_rma_failure.c \
    src/mpid/ch3/channels/sctp/src/ch3_send.c \
    src/mpid/ch3/channels/sctp/src/ch3_win_fns.c

if BUILD_CH3_SCTP

AM_CPPFLAGS += -I$(top_srcdir)/src/mpid/ch3/channels/sctp/include

noinst_HEADERS += \
    src/mpid/ch3/channels/sctp/include/mpidi_ch3_pre.h \
    src/mpid/ch3/channels/sctp/include/mpidi_ch3_post.h \
    src/mpid/ch3/channels/sctp/include/mpidi_ch3_compat.h \
    src/mpid/ch3/channels/sctp/include/mpidi_ch3_impl.h

mpi_core_sources += $(ch3_sctp_shared_sources) \
    src/mpid/ch3/channels/sctp/src/ch3_no_ext.c

endif BUILD_CH3_SCTP
