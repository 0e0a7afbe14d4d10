/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid: packets whose data RDMA already placed. Each is a CH3 PUT, GET or GET response under
 * a channel type; its handler runs CH3's own handler for the original type with no data bytes,
 * then finishes the request at once instead of waiting for bytes from the wire. All of CH3's
 * flag, lock, acknowledgement and counter logic runs as it does for data that came on SCTP.
 * GET_WRITE, a GET to answer by RDMA Write, also runs CH3's GET handler.
 *
 * A PUT header may also come as an RDMAP Send on the QP, behind its Write. CH3 needs the packets
 * of a peer handled in the order it issued them, and the QP and SCTP are two paths:
 *  - a header names how many SCTP control packets its sender sent before it; it waits (deferred)
 *    until this side has fully handled that many from the peer;
 *  - the sender holds every later SCTP packet until the Read it posted behind the header
 *    completes, so the header's receive completion is in our CQ when such a packet arrives: the
 *    CQ is polled before each control packet from a peer with a QP is handled.
 * If the QP breaks while headers are in flight, the sender asks (QP_SYNC) how many of its
 * headers were handled; this side closes its end of the QP first, so the answer is final, and
 * the sender resends the others on SCTP (that exchange: hy_hold.c).
 * This file sends nothing itself: what its handlers make CH3 send passes hy_hold.c's hooks. */
#include "mpidi_ch3_hybrid.h"

/* What CH3's GET handler is answering while it runs for one of our packets: its response is
 * header-only (GET_PLACED: the origin read the data) or goes by RDMA Write (GET_WRITE). CH3's
 * handler passes nothing of ours on to the send it makes, so run_as sets this around the call
 * and MPIDI_CH3I_Hy_answer_response reads it; no other code sees it. */
static struct {
    enum { ANSWER_PLAIN = 0, ANSWER_PLACED, ANSWER_WRITE } how;
    uint64_t origin_addr;
    uint32_t origin_stag;
} answer;

/* The request CH3's handler set up to receive into: its data is there already. */
static int data_already_placed(MPIDI_VC_t * vc, MPIR_Request * rreq)
{
    int complete = 0, mpi_errno = MPI_SUCCESS;
    while (!complete && !mpi_errno) {
        int (*fn) (MPIDI_VC_t *, MPIR_Request *, int *) = rreq->dev.OnDataAvail;
        if (!fn)
            return MPID_Request_complete(rreq);
        mpi_errno = fn(vc, rreq, &complete);
    }
    return mpi_errno;
}

/* Run CH3's handler for `type` on pkt, which carries no data; a GET's answer goes as `answer` says. */
static int run_as(MPIDI_CH3_Pkt_type_t type, MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt,
                  intptr_t * buflen, MPIR_Request ** rreqp, int how, uint64_t addr, uint32_t stag)
{
    MPIDI_CH3_PktHandler_Fcn *handler = type == MPIDI_CH3_PKT_PUT ? MPIDI_CH3_PktHandler_Put
        : type == MPIDI_CH3_PKT_GET ? MPIDI_CH3_PktHandler_Get : MPIDI_CH3_PktHandler_GetResp;
    MPIR_Request *rreq = NULL;
    intptr_t none = 0;
    int mpi_errno;
    pkt->type = type;
    *buflen = 0;        /* the packet carries no data */
    *rreqp = NULL;
    answer.how = how;
    answer.origin_addr = addr;
    answer.origin_stag = stag;
    mpi_errno = handler(vc, pkt, NULL, &none, &rreq);
    answer.how = ANSWER_PLAIN;
    if (!mpi_errno && rreq)
        mpi_errno = data_already_placed(vc, rreq);
    return mpi_errno;
}

/* PUT_PLACED, GET_PLACED, GET_WRITE (whose pkt->get part is CH3's GET as the origin issued it). */
static int placed(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                  MPIR_Request ** rreqp)
{
    (void) data;
    if (pkt->type == MPIDI_CH3_PKT_HY_PUT_PLACED)
        return run_as(MPIDI_CH3_PKT_PUT, vc, pkt, buflen, rreqp, ANSWER_PLAIN, 0, 0);
    if (pkt->type == MPIDI_CH3_PKT_HY_GET_PLACED)
        return run_as(MPIDI_CH3_PKT_GET, vc, pkt, buflen, rreqp, ANSWER_PLACED, 0, 0);
    return run_as(MPIDI_CH3_PKT_GET, vc, pkt, buflen, rreqp, ANSWER_WRITE,
                  pkt->hy_get_write.origin_addr, pkt->hy_get_write.origin_stag);
}

/* The answer to a GET_WRITE whose Write could not go (the plain GET response, data on SCTP), or
 * to any other GET: the handler it replaced runs it. */
static MPIDI_CH3_PktHandler_Fcn *plain_get_resp;
static int get_resp(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                    MPIR_Request ** rreqp)
{
    MPIDI_CH3I_Hy_get_answered(pkt->get_resp.request_handle);
    return plain_get_resp(vc, pkt, data, buflen, rreqp);
}

static int get_resp_placed(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                           MPIR_Request ** rreqp)
{
    (void) data;
    MPIDI_CH3I_Hy_get_answered(pkt->get_resp.request_handle);
    MPIDI_CH3I_Answered(vc, pkt->get_resp.request_handle);
    return run_as(MPIDI_CH3_PKT_GET_RESP, vc, pkt, buflen, rreqp, ANSWER_PLAIN, 0, 0);
}

MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_answer_response(MPIDI_VC_t * vc, MPIR_Request * sreq,
                                                  const struct iovec *iov, int *n)
{
    if (answer.how == ANSWER_PLAIN || sreq->dev.pending_pkt.type != MPIDI_CH3_PKT_GET_RESP || *n != 2)
        return NULL;
    if (answer.how == ANSWER_WRITE)
        return MPIDI_CH3I_Hy_try_write_answer(vc, sreq, iov, answer.origin_addr, answer.origin_stag);
    sreq->dev.pending_pkt.type = MPIDI_CH3_PKT_HY_GET_RESP_PLACED;
    *n = 1;
    return NULL;
}

/* An RDMA Read fetched a GET's data and the GET asks the target for nothing but its flush
 * acknowledgement (a read changes nothing there) and maybe the fence counter: finish it here as
 * CH3 finishes a GET response that acknowledges; *decr becomes the counter packet the target
 * then gets, if any (else its type is the GET's). Saves the round trip of GET_PLACED and its
 * response. */
int MPIDI_CH3I_Hy_get_done(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * get, MPIDI_CH3_Pkt_t * decr)
{
    const MPIDI_CH3_Pkt_get_t *g = &get->get;
    MPIDI_CH3_Pkt_t resp;
    MPIR_Request *rreq, *unused;
    MPIR_Win *win_ptr;
    MPI_Win source_win;
    intptr_t buflen = 0;
    int mpi_errno;

    MPIR_Request_get_ptr(g->request_handle, rreq);
    source_win = rreq->dev.source_win_handle;   /* the request is gone once completed */
    MPIR_Win_get_ptr(source_win, win_ptr);
    memset(&resp, 0, sizeof(resp));
    resp.type = MPIDI_CH3_PKT_HY_GET_RESP_PLACED;
    resp.get_resp.request_handle = g->request_handle;
    resp.get_resp.pkt_flags = (g->pkt_flags & MPIDI_CH3_PKT_FLAG_RMA_FLUSH) ? MPIDI_CH3_PKT_FLAG_RMA_ACK : 0;
    resp.get_resp.target_rank = MPIDI_CH3I_Win_rank_of(win_ptr, vc);
    MPIR_Assert(resp.get_resp.target_rank >= 0);
    mpi_errno = get_resp_placed(vc, &resp, NULL, &buflen, &unused);
    memset(decr, 0, sizeof(*decr));
    decr->type = MPIDI_CH3_PKT_GET;
    if (mpi_errno || !(g->pkt_flags & MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER))
        return mpi_errno;
    decr->type = MPIDI_CH3_PKT_DECR_AT_COUNTER;
    decr->decr_at_cnt.target_win_handle = g->target_win_handle;
    decr->decr_at_cnt.source_win_handle = source_win;
    decr->decr_at_cnt.pkt_flags = MPIDI_CH3_PKT_FLAG_NONE;    /* acknowledged above */
    return MPI_SUCCESS;
}

/* ---- acknowledgements the origin gives itself ----
 * A flush (or an unlock, or the end of a lock_all epoch) completes when the target's CH3 has
 * acknowledged a packet that follows every operation it covers. An RDMA put whose header went on
 * the QP is complete at the target once the Read behind it completed: the Write was placed
 * before the Read was served. So when every operation to a peer's window since its last
 * acknowledged packet was such a put (or an RDMA Read, which changes nothing there), the origin
 * acknowledges the flush itself, at that Read's completion, and the target is not asked: the
 * FLUSH flag comes off the put's header (the target's handler then sends no ACK, so none is
 * counted twice), a FLUSH packet is not sent, and an UNLOCK goes without asking for an ACK (the
 * target still releases its lock when it handles it, in order after the headers). Anything
 * else (an SCTP operation, an RDMA put whose header took SCTP) leaves the window "unacked" until
 * the next packet that asks for an ACK, and the target acknowledges as before. */

/* The window and flags of an RMA packet; 0 if it is not one. */
static int rma_fields(const MPIDI_CH3_Pkt_t * pkt, MPI_Win * win, int *flags)
{
    switch (pkt->type) {
        case MPIDI_CH3_PKT_PUT:
        case MPIDI_CH3_PKT_PUT_IMMED:
            *win = pkt->put.target_win_handle, *flags = pkt->put.pkt_flags;
            return 1;
        case MPIDI_CH3_PKT_GET:
            *win = pkt->get.target_win_handle, *flags = pkt->get.pkt_flags;
            return 1;
        case MPIDI_CH3_PKT_HY_GET_WRITE:
            *win = pkt->hy_get_write.get.target_win_handle, *flags = pkt->hy_get_write.get.pkt_flags;
            return 1;
        case MPIDI_CH3_PKT_ACCUMULATE:
        case MPIDI_CH3_PKT_ACCUMULATE_IMMED:
            *win = pkt->accum.target_win_handle, *flags = pkt->accum.pkt_flags;
            return 1;
        case MPIDI_CH3_PKT_GET_ACCUM:
        case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
            *win = pkt->get_accum.target_win_handle, *flags = pkt->get_accum.pkt_flags;
            return 1;
        case MPIDI_CH3_PKT_CAS_IMMED:
            *win = pkt->cas.target_win_handle, *flags = pkt->cas.pkt_flags;
            return 1;
        case MPIDI_CH3_PKT_FOP:
        case MPIDI_CH3_PKT_FOP_IMMED:
            *win = pkt->fop.target_win_handle, *flags = pkt->fop.pkt_flags;
            return 1;
        case MPIDI_CH3_PKT_LOCK:
            *win = pkt->lock.target_win_handle, *flags = pkt->lock.pkt_flags;
            return 1;
        case MPIDI_CH3_PKT_UNLOCK:
            *win = pkt->unlock.target_win_handle, *flags = pkt->unlock.pkt_flags;
            return 1;
        case MPIDI_CH3_PKT_FLUSH:
            *win = pkt->flush.target_win_handle, *flags = MPIDI_CH3_PKT_FLAG_NONE;
            return 1;
        case MPIDI_CH3_PKT_DECR_AT_COUNTER:
            *win = pkt->decr_at_cnt.target_win_handle, *flags = pkt->decr_at_cnt.pkt_flags;
            return 1;
        default:
            return 0;
    }
}

/* The target answers this packet with an acknowledgement that CH3 here waits for. */
static int asks_ack(const MPIDI_CH3_Pkt_t * pkt, int flags)
{
    if (pkt->type == MPIDI_CH3_PKT_FLUSH)
        return 1;
    if (pkt->type == MPIDI_CH3_PKT_UNLOCK)
        return !(flags & MPIDI_CH3_PKT_FLAG_RMA_UNLOCK_NO_ACK);
    return (flags & (MPIDI_CH3_PKT_FLAG_RMA_FLUSH | MPIDI_CH3_PKT_FLAG_RMA_UNLOCK)) != 0;
}

/* Operations only the target's CH3 completes. A LOCK, an UNLOCK without ACK and a counter
 * decrement change no window data, and an RDMA Read GET is only posted to a window that is not
 * unacked (hy_rdma.c), so they leave the record as it is. */
static int completes_at_target(const MPIDI_CH3_Pkt_t * pkt)
{
    return pkt->type != MPIDI_CH3_PKT_LOCK && pkt->type != MPIDI_CH3_PKT_UNLOCK &&
        pkt->type != MPIDI_CH3_PKT_DECR_AT_COUNTER && pkt->type != MPIDI_CH3_PKT_FLUSH;
}

void MPIDI_CH3I_Hy_note_issued(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt)
{
    MPIDI_CH3I_Hy_acks_t *acks;
    MPI_Win win;
    int flags;
    if (!rma_fields(pkt, &win, &flags) || !(acks = MPIDI_CH3I_Hy_acks_of(vc, win)))
        return;
    if (asks_ack(pkt, flags))
        acks->unacked = 0;      /* its ACK follows everything before it */
    else if (completes_at_target(pkt))
        acks->unacked = 1;
}

int MPIDI_CH3I_Hy_ack_here(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * put)
{
    const int ending = MPIDI_CH3_PKT_FLAG_RMA_FLUSH | MPIDI_CH3_PKT_FLAG_RMA_UNLOCK;
    MPIDI_CH3I_Hy_acks_t *acks = MPIDI_CH3I_Hy_acks_of(vc, put->put.target_win_handle);
    int taken = put->put.pkt_flags & ending;
    if (!taken || !acks || acks->unacked)
        return 0;
    put->put.pkt_flags &= ~ending;
    return taken;
}

void MPIDI_CH3I_Hy_put_issued(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_held * h)
{
    MPIDI_CH3I_Hy_acks_t *acks = MPIDI_CH3I_Hy_acks_of(vc, h->pkt.put.target_win_handle);
    if (!acks || h->acked_here)
        return;
    if (asks_ack(&h->pkt, h->pkt.put.pkt_flags))
        acks->unacked = 0;
    else if (!h->on_qp)
        acks->unacked = 1;      /* its header reaches the target's CH3 on SCTP, not proven */
}

int MPIDI_CH3I_Hy_ack_packet_here(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt)
{
    MPIDI_CH3I_Hy_acks_t *acks;
    MPI_Win win;
    int flags;
    /* Only over a working queue pair: a peer that was lost must fail the flush (ch3_rma_failure.c
     * makes the next one send), and after a failure its RMA goes on SCTP anyway. */
    return (pkt->type == MPIDI_CH3_PKT_FLUSH || pkt->type == MPIDI_CH3_PKT_UNLOCK) &&
        vc->ch.hy.state == MPIDI_CH3I_HY_QP_READY && rma_fields(pkt, &win, &flags) &&
        asks_ack(pkt, flags) && (acks = MPIDI_CH3I_Hy_acks_of(vc, win)) != NULL && !acks->unacked;
}

int MPIDI_CH3I_Hy_local_ack(MPIDI_VC_t * vc, MPI_Win source_win)
{
    MPIDI_CH3_Pkt_t ack;
    MPIR_Request *unused = NULL;
    MPIR_Win *win_ptr;
    intptr_t buflen = 0;
    MPIR_Win_get_ptr(source_win, win_ptr);
    memset(&ack, 0, sizeof(ack));
    ack.type = MPIDI_CH3_PKT_ACK;
    ack.ack.source_win_handle = source_win;
    ack.ack.target_rank = MPIDI_CH3I_Win_rank_of(win_ptr, vc);
    MPIR_Assert(ack.ack.target_rank >= 0);
    return MPIDI_CH3_PktHandler_Ack(vc, &ack, NULL, &buflen, &unused);
}

void MPIDI_CH3I_Hy_put_resent(MPIDI_VC_t * vc, MPI_Win target_win)
{
    MPIDI_CH3I_Hy_acks_t *acks = MPIDI_CH3I_Hy_acks_of(vc, target_win);
    if (acks) {
        acks->unacked = 1;      /* on SCTP now: only the target's ACK proves it */
        acks->resent++;
    }
}

/* ---- PUT headers that came on the QP ---- */

typedef struct MPIDI_CH3I_Hy_deferred {
    struct MPIDI_CH3I_Hy_deferred *next;
    MPIDI_CH3I_Hy_header_t h;
} hy_deferred;

/* Every SCTP control packet sent before header h has been handled. */
static int predecessors_done(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_header_t * h)
{
    return hy_header_may_run(vc->ch.hy.ctl_done, h->after_ctl);
}

static void handle_header(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_header_t * h)
{
    MPIDI_CH3_Pkt_t pkt = h->pkt;
    MPIR_Request *rreq = NULL;
    intptr_t buflen = 0;
    vc->ch.hy.headers_done++;
    MPIDI_CH3I_Target_event_begin();     /* CH3's PUT handler may release a lock */
    MPIDI_CH3I_Raise_error(placed(vc, &pkt, NULL, &buflen, &rreq));
    MPIDI_CH3I_Target_packet_done(vc, &pkt, NULL);      /* as a PUT now, its data placed */
    MPIDI_CH3I_Target_event_end(vc);
}

void MPIDI_CH3I_Hy_run_deferred(MPIDI_VC_t * vc)
{
    hy_deferred *d;
    while ((d = vc->ch.hy.deferred_head) != NULL && predecessors_done(vc, &d->h)) {
        LL_DELETE(vc->ch.hy.deferred_head, vc->ch.hy.deferred_tail, d);
        vc->ch.hy.n_deferred--;
        handle_header(vc, &d->h);
        MPL_free(d);
    }
}

/* Bytes from the peer that break the protocol end its QP, which loses nothing: the peer then asks
 * which headers were handled (QP_SYNC) and sends the others again over SCTP. */
static void refuse(MPIDI_VC_t * vc, const char *what)
{
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "rank %d %s; closing that queue pair", vc->pg_rank, what);
    MPIDI_CH3I_Hy_close_qp(vc);
}

void MPIDI_CH3I_Hy_header_arrived(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_header_t * h, size_t len)
{
    hy_deferred *d;
    char what[160];
    switch (hy_header_arrival(len, sizeof(*h), h->pkt.type == MPIDI_CH3_PKT_HY_PUT_PLACED,
                              vc->ch.hy.n_deferred, (unsigned) MPIDI_CH3I_Hy_config.deferred_headers,
                              vc->ch.hy.ctl_done, h->after_ctl)) {
        case HY_ARRIVAL_RUN:
            handle_header(vc, h);
            return;
        case HY_ARRIVAL_BAD_LENGTH:
            snprintf(what, sizeof(what), "sent a %zu-byte message on its queue pair, not a %zu-byte "
                     "PUT header", len, sizeof(*h));
            refuse(vc, what);
            return;
        case HY_ARRIVAL_BAD_TYPE:
            snprintf(what, sizeof(what), "sent packet type %d on its queue pair, where only PUT "
                     "headers go", (int) h->pkt.type);
            refuse(vc, what);
            return;
        case HY_ARRIVAL_TOO_MANY:
            snprintf(what, sizeof(what), "sent more PUT headers ahead of its SCTP packets than "
                     "MPIR_CVAR_CH3_HYBRID_DEFERRED_HEADERS (%d) lets wait",
                     MPIDI_CH3I_Hy_config.deferred_headers);
            refuse(vc, what);
            return;
        case HY_ARRIVAL_DEFER:
            break;
    }
    d = (hy_deferred *) MPL_malloc(sizeof(*d), MPL_MEM_RMA);
    if (!d) {
        MPID_Abort(NULL, MPI_ERR_NO_MEM, 1, "ch3:hybrid: out of memory for a PUT header that "
                   "arrived before the packets preceding it");
        return;
    }
    d->h = *h;
    LL_APPEND(vc->ch.hy.deferred_head, vc->ch.hy.deferred_tail, d);
    vc->ch.hy.n_deferred++;
}

/* Only control packets are ordered with headers (MPI orders nothing between point-to-point and
 * one-sided traffic), so messages matched by MPI pay nothing here.
 * CH3 applies an accumulate-family packet to the window with plain loads and stores, in its
 * handler; the RNIC's standby thread (progress=standby) runs atomics on the same memory while
 * this process is away. So before such a packet, a service under way ends and none starts for
 * the next millisecond (iwv_device_owner_back), which covers the handler of a FOP, a CAS or an
 * immediate accumulate: RNIC atomics stay atomic against them (MPIDI_CH3I_Is_accumulate). */
void MPIDI_CH3I_Hy_before_packet(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt)
{
    sctpm_key key;
    if (MPIDI_CH3I_Hy_rnic.dev && MPIDI_CH3I_Is_accumulate(pkt))
        iwv_device_owner_back(MPIDI_CH3I_Hy_rnic.dev);
    MPIDI_CH3I_Key_of(pkt, NULL, &key);
    vc->ch.hy.recv_control = key.cls == 1; /* as sent_on_sctp counts */
    if (vc->ch.hy.recv_control && vc->ch.hy.qp)
        MPIDI_CH3I_Hy_poll_cq();
}

void MPIDI_CH3I_Hy_packet_done(MPIDI_VC_t * vc)
{
    if (!vc->ch.hy.recv_control)
        return;
    vc->ch.hy.ctl_done++;
    MPIDI_CH3I_Hy_run_deferred(vc);
}

void MPIDI_CH3I_Hy_drop_deferred(MPIDI_VC_t * vc)
{
    hy_deferred *d, *next;
    LL_FOREACH_SAFE(vc->ch.hy.deferred_head, d, next)
        MPL_free(d);
    vc->ch.hy.deferred_head = vc->ch.hy.deferred_tail = NULL;
    vc->ch.hy.n_deferred = 0;
}

void MPIDI_CH3I_Hy_register_handlers(MPIDI_CH3_PktHandler_Fcn ** table)
{
    table[MPIDI_CH3_PKT_HY_PUT_PLACED] = table[MPIDI_CH3_PKT_HY_GET_PLACED] = placed;
    table[MPIDI_CH3_PKT_HY_GET_WRITE] = placed;
    table[MPIDI_CH3_PKT_HY_GET_RESP_PLACED] = get_resp_placed;
    plain_get_resp = MPIDI_CH3I_Pkt_wrap(table, MPIDI_CH3_PKT_GET_RESP, get_resp);
    table[MPIDI_CH3_PKT_HY_CONNECT_ME] = MPIDI_CH3I_Hy_pkt_connect_me;
}

/* ---- FOP, CAS and single-element accumulates that RNIC atomics carried (hy_rdma.c) ---- */

/* The atomic's original value came: run CH3's response handler on the response the target's CH3
 * would have sent, acknowledging a flush if the operation asked for one (its completion proves
 * that it, and every RDMA operation before it, took effect there). An accumulate has no
 * response: only the acknowledgement, as CH3's ACK handler would run it. */
static int atomic_answered(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_held * h, MPI_Win source_win, int rank,
                           const uint64_t * value)
{
    const MPIDI_CH3_Pkt_t *op = &h->pkt;
    MPIDI_CH3_Pkt_t resp;
    MPIR_Request *unused = NULL;
    intptr_t buflen = 0;
    MPI_Request handle;
    MPI_Win win;
    int flags, ack;
    MPIDI_CH3I_Hy_atomic_fields(op, &win, &flags, &handle);
    ack = (flags & MPIDI_CH3_PKT_FLAG_RMA_FLUSH) ? MPIDI_CH3_PKT_FLAG_RMA_ACK : 0;
    memset(&resp, 0, sizeof(resp));
    MPIDI_CH3I_Answered(vc, handle);
    /* The three responses share these fields under different names. */
#define FILL_RESPONSE(kind, resp_type)                                          \
    (resp.type = (resp_type), resp.kind.request_handle = handle, resp.kind.target_rank = rank, \
     resp.kind.pkt_flags = ack, memcpy(&resp.kind.info.data, value, 8))
    switch (op->type) {
        case MPIDI_CH3_PKT_CAS_IMMED:
            FILL_RESPONSE(cas_resp, MPIDI_CH3_PKT_CAS_RESP_IMMED);
            return MPIDI_CH3_PktHandler_CASResp(vc, &resp, NULL, &buflen, &unused);
        case MPIDI_CH3_PKT_FOP_IMMED:
            FILL_RESPONSE(fop_resp, MPIDI_CH3_PKT_FOP_RESP_IMMED);
            return MPIDI_CH3_PktHandler_FOPResp(vc, &resp, NULL, &buflen, &unused);
        case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
            FILL_RESPONSE(get_accum_resp, MPIDI_CH3_PKT_GET_ACCUM_RESP_IMMED);
            return MPIDI_CH3_PktHandler_Get_AccumResp(vc, &resp, NULL, &buflen, &unused);
        default:       /* ACCUMULATE_IMMED */
            return ack ? MPIDI_CH3I_Hy_local_ack(vc, source_win) : MPI_SUCCESS;
    }
#undef FILL_RESPONSE
}

/* The queue pair broke after the atomic went out, and the peer said it ran it but not what it
 * returned (its RNIC's log no longer had it: cannot happen while MPIDI_CH3I_HY_ATOMIC_SLOTS <=
 * IWV_ATOMIC_LOG). An atomic is not idempotent, so it is neither resent nor given a made-up
 * result: its request fails with an error naming that; a flush it carried is asked of the target
 * instead, so that the flush itself completes. */
static int atomic_unknown(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_held * h, MPI_Win source_win, int rank,
                          MPIDI_CH3_Pkt_t * send, int *nsend)
{
    MPIR_Request *req = NULL;
    MPI_Request handle;
    MPI_Win target_win;
    int flags;
    int mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                         MPI_ERR_OTHER, "**ch3|hybrid|atomic", "**ch3|hybrid|atomic %d",
                                         rank);
    MPIDI_CH3I_Hy_atomic_fields(&h->pkt, &target_win, &flags, &handle);
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "the queue pair to rank %d broke while an RNIC atomic "
                      "was in flight; whether rank %d applied it is unknown, so the operation fails",
                      rank, rank);
    if (handle != MPI_REQUEST_NULL)
        MPIR_Request_get_ptr(handle, req);
    MPIDI_CH3I_Answered(vc, handle);
    if (req)
        MPIDI_CH3I_Complete_with_error(req, mpi_errno);
    if (flags & MPIDI_CH3_PKT_FLAG_RMA_FLUSH) {
        MPIDI_CH3_Pkt_t *flush = &send[(*nsend)++];
        memset(flush, 0, sizeof(*flush));
        flush->type = MPIDI_CH3_PKT_FLUSH;
        flush->flush.target_win_handle = target_win;
        flush->flush.source_win_handle = source_win;
    }
    return mpi_errno;
}

int MPIDI_CH3I_Hy_atomic_done(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h, MPIDI_CH3_Pkt_t send[2],
                              int *nsend)
{
    const MPIDI_CH3_Pkt_t *op = &h->pkt;
    const int failed = h->state == MPIDI_CH3I_HY_HELD_FAILED;
    MPIR_Request *req;
    MPIR_Win *win_ptr;
    MPI_Request handle;
    MPI_Win target_win, source_win;
    int flags, rank, mpi_errno;

    *nsend = 0;
    vc->ch.hy.atomics_in_flight--;
    /* A failed atomic that went out: the peer's QP_SYNC answer says whether it ran (hy_hold.c). */
    if (failed && (h->not_sent || h->atomic_index >= vc->ch.hy.peer_atomics_done)) {
        /* The target never saw it, or never ran it: the operation goes to its CH3 as usual. */
        MPIDI_CH3I_Hy_note_issued(vc, op);
        send[(*nsend)++] = h->pkt;
        return MPI_SUCCESS;
    }
    MPIDI_CH3I_Hy_atomic_fields(op, &target_win, &flags, &handle);
    if (handle != MPI_REQUEST_NULL) {
        MPIR_Request_get_ptr(handle, req);
        source_win = req->dev.source_win_handle;        /* the request is gone once completed */
    } else
        source_win = op->accum.source_win_handle;
    MPIR_Win_get_ptr(source_win, win_ptr);
    rank = MPIDI_CH3I_Win_rank_of(win_ptr, vc);
    MPIR_Assert(rank >= 0);
    if (!failed)
        mpi_errno = atomic_answered(vc, h, source_win, rank, &vc->ch.hy.mem->atomic_result[h->slot]);
    else if (h->original_known)
        mpi_errno = atomic_answered(vc, h, source_win, rank, &h->original);
    else
        mpi_errno = atomic_unknown(vc, h, source_win, rank, send, nsend);
    if (flags & MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER) {
        /* The end of an access epoch (PSCW): the target still counts it. */
        MPIDI_CH3_Pkt_t *decr = &send[(*nsend)++];
        memset(decr, 0, sizeof(*decr));
        decr->type = MPIDI_CH3_PKT_DECR_AT_COUNTER;
        decr->decr_at_cnt.target_win_handle = target_win;
        decr->decr_at_cnt.source_win_handle = source_win;
        decr->decr_at_cnt.pkt_flags = MPIDI_CH3_PKT_FLAG_NONE;
    }
    return mpi_errno;
}
