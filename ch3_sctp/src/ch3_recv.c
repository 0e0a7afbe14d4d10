/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: the transport's receive callbacks drive CH3's packet handlers. A message starts with
 * a fixed-size CH3 packet header unless its VC is still filling a request (a continuation batch);
 * payload goes straight into the request's iov. */
#include "mpidi_ch3_impl.h"

static MPIDI_CH3_PktHandler_Fcn *pktArray[MPIDI_CH3I_PKT_TYPES + 1];
int MPIDI_CH3I_pending_errno = MPI_SUCCESS;

/* The handlers: CH3's, then ch3_awaited.c's wrappers, then the extension's. */
int MPIDI_CH3I_Recv_init(void)
{
    int mpi_errno = MPIDI_CH3_PktHandler_Init(pktArray, MPIDI_CH3_PKT_END_CH3 + 1);
    MPIDI_CH3I_Wrap_answers(pktArray);
    if (MPIDI_CH3I_Ext()->handlers_register)
        MPIDI_CH3I_Ext()->handlers_register(pktArray);
    return mpi_errno;
}

MPIDI_CH3_PktHandler_Fcn *MPIDI_CH3I_Pkt_wrap(MPIDI_CH3_PktHandler_Fcn ** table,
                                              MPIDI_CH3_Pkt_type_t type,
                                              MPIDI_CH3_PktHandler_Fcn * wrapper)
{
    MPIDI_CH3_PktHandler_Fcn *wrapped = table[type];
    table[type] = wrapper;
    return wrapped;
}

void MPIDI_CH3I_Raise_error(int mpi_errno)
{
    MPIDI_CH3I_pending_errno = MPIDI_CH3I_FIRST_ERROR(MPIDI_CH3I_pending_errno, mpi_errno);
}

/* The extension (ch3:hybrid) orders what else it receives from vc with the packets handled here. */
static void before_packet(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt)
{
    if (MPIDI_CH3I_Ext()->before_packet)
        MPIDI_CH3I_Ext()->before_packet(vc, pkt);
}

static void packet_done(MPIDI_VC_t * vc)
{
    if (MPIDI_CH3I_Ext()->after_packet)
        MPIDI_CH3I_Ext()->after_packet(vc);
}

void MPIDI_CH3I_Fail_vc(MPIDI_VC_t * vc, const char *why)
{
    MPIR_Request *filling = vc->ch.recv_active;
    if (vc->ch.failed)
        return;
    vc->ch.failed = 1;
    vc->ch.recv_active = NULL;
    if (vc->ch.closed)
        return; /* the close handshake finished: the peer may end its association */
    if (filling)        /* matched, so in no queue CH3 fails: its remaining bytes never come */
        MPIDI_CH3I_Complete_with_error(filling, MPIDI_CH3I_Peer_error(vc, -ECONNRESET));
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "lost rank %d: %s", vc->pg_rank, why);
    MPIDI_CH3I_Note_lost_proc(vc);
    MPIDI_CH3I_Raise_error(MPIDI_CH3U_Handle_connection(vc, MPIDI_VC_EVENT_TERMINATED));
    {
        /* Sends and one-sided operations waiting for its answer fail; a call waiting on them
         * sees this error. */
        int mpi_errno = MPIDI_CH3I_Peer_error(vc, -ECONNRESET);
        if (MPIDI_CH3I_Ext()->vc_lost)
            MPIDI_CH3I_Ext()->vc_lost(vc, mpi_errno);
        if (MPIDI_CH3I_Fail_awaiting(vc, mpi_errno))
            MPIDI_CH3I_Raise_error(mpi_errno);
    }
    MPIDI_CH3_Progress_signal_completion();
}

size_t MPIDI_CH3I_On_message(void *ctx, sctpm_peer peer, uint64_t total, const void *head,
                             size_t head_len, void **msg)
{
    MPIDI_VC_t *vc = MPIDI_CH3I_Peer_vc(peer);
    MPIDI_CH3_Pkt_t pkt;
    MPIR_Request *rreq = NULL;
    intptr_t buflen;
    int mpi_errno;
    (void) ctx;
    *msg = NULL;
    if (!vc || vc->ch.failed)
        return 0;
    if (vc->ch.recv_active) {
        *msg = vc;      /* more bytes for the request being filled */
        return 0;
    }
    if (head_len < sizeof(pkt)) {
        MPIDI_CH3I_Fail_vc(vc, "a message shorter than a CH3 packet header arrived");
        return 0;
    }
    memcpy(&pkt, head, sizeof(pkt));    /* aligned copy */
    if (pkt.type < 0 || pkt.type >= MPIDI_CH3I_PKT_TYPES || !pktArray[pkt.type]) {
        char why[96];
        snprintf(why, sizeof(why), "unknown CH3 packet type %d", (int) pkt.type);
        MPIDI_CH3I_Fail_vc(vc, why);
        return 0;
    }
    buflen = (intptr_t) (head_len - sizeof(pkt));
    /* A peer that sent us a packet closes with us at MPI_Finalize, though we may never send to it
     * (CH3 4.0.2 asserts on a CLOSE to a VC it left inactive). On_hello covers links the peer
     * opened; this, links we opened for the channel's own packets (ch3:hybrid's CONNECT_ME). */
    if (vc->state == MPIDI_VC_STATE_INACTIVE)
        MPIDI_CHANGE_VC_STATE(vc, ACTIVE);
    before_packet(vc, &pkt);
    MPIDI_CH3I_Target_event_begin();
    mpi_errno = pktArray[pkt.type] (vc, &pkt, (char *) head + sizeof(pkt), &buflen, &rreq);
    MPIDI_CH3I_Target_packet_done(vc, &pkt, rreq);
    MPIDI_CH3I_Target_event_end(vc);
    MPIDI_CH3I_Raise_error(mpi_errno);
    if (rreq) {
        vc->ch.recv_active = rreq;
        vc->ch.recv_filled = 0;
        *msg = vc;
    } else {
        packet_done(vc);
    }
    (void) total;
    return sizeof(pkt) + (size_t) buflen;
}

/* The unfilled part of the active request's iov. */
int MPIDI_CH3I_On_dest(void *ctx, void *msg, struct iovec *iov, int max)
{
    MPIDI_VC_t *vc = (MPIDI_VC_t *) msg;
    MPIR_Request *rreq = vc->ch.recv_active;
    size_t skip = vc->ch.recv_filled;
    int n = 0;
    (void) ctx;
    if (!rreq)
        return 0;
    for (int i = rreq->dev.iov_offset; i < rreq->dev.iov_offset + rreq->dev.iov_count && n < max; i++) {
        size_t len = rreq->dev.iov[i].iov_len;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        iov[n].iov_base = (char *) rreq->dev.iov[i].iov_base + skip;
        iov[n].iov_len = len - skip;
        skip = 0;
        n++;
    }
    return n;
}

static size_t iov_bytes(const MPIR_Request * rreq)
{
    size_t total = 0;
    for (int i = rreq->dev.iov_offset; i < rreq->dev.iov_offset + rreq->dev.iov_count; i++)
        total += rreq->dev.iov[i].iov_len;
    return total;
}

/* Bytes landed in the active request: once its iov is full, CH3 completes it or reloads the iov. */
void MPIDI_CH3I_On_placed(void *ctx, void *msg, size_t filled, int last)
{
    MPIDI_VC_t *vc = (MPIDI_VC_t *) msg;
    MPIR_Request *rreq = vc->ch.recv_active;
    (void) ctx;
    (void) last;
    if (!rreq)
        return;
    vc->ch.recv_filled += filled;
    while (rreq && vc->ch.recv_filled >= iov_bytes(rreq)) {
        int complete = 0, mpi_errno;
        int (*fn) (MPIDI_VC_t *, MPIR_Request *, int *) = rreq->dev.OnDataAvail;
        MPI_Win win = rreq->dev.target_win_handle;      /* MPI_WIN_NULL unless an RMA op's */
        int pkt_flags = win != MPI_WIN_NULL ? rreq->dev.pkt_flags : 0;
        MPIDI_CH3I_Target_event_begin();
        if (!fn) {
            mpi_errno = MPID_Request_complete(rreq);
            complete = 1;
        } else {
            mpi_errno = fn(vc, rreq, &complete);
        }
        if (complete && !mpi_errno)
            MPIDI_CH3I_Target_data_done(vc, win, pkt_flags);
        MPIDI_CH3I_Target_event_end(vc);
        MPIDI_CH3I_Raise_error(mpi_errno);
        vc->ch.recv_filled = 0;
        if (complete || mpi_errno) {
            vc->ch.recv_active = NULL;
            rreq = NULL;
            packet_done(vc);
        }
        /* else: the iov was reloaded; an empty reload loops to OnDataAvail again */
    }
}

void MPIDI_CH3I_On_event(void *ctx, const sctpm_event * ev)
{
    MPIDI_VC_t *vc = MPIDI_CH3I_Peer_vc(ev->peer);
    (void) ctx;
    switch (ev->type) {
        case SCTPM_EV_ASSOC_LOST:
        case SCTPM_EV_CANT_START:
        case SCTPM_EV_SEND_FAILED:
        case SCTPM_EV_PROTOCOL_ERROR:
            if (vc)
                MPIDI_CH3I_Fail_vc(vc, ev->detail);
            else if (ev->peer < 0)      /* unidentified association */
                MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "%s", ev->detail);
            break;
        default:
            break;
    }
}
