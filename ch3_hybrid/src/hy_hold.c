/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid: sends held behind RDMA transfers, and the channel glue. While an RDMA PUT or GET to
 * a peer is in flight, every later send to that peer waits in the VC's queue, in issue order, and
 * leaves once all that precedes it has left: CH3's packets reach the target in the order CH3
 * issued them, with each RDMA-carried operation's header after its data. A peer with nothing in
 * flight is not touched.
 *
 * This is the top layer of ch3:hybrid (docs/architecture.md): it fills in ch3:sctp's extension
 * table, gives the RNIC layer its callbacks, and is the one file that calls ch3:sctp's send
 * functions (send_now, send_held). Below it: hy_placed.c (received placed packets and headers),
 * hy_rdma.c (posting transfers), hy_window.c and hy_memory.c (registrations), hy_device.c. */
#include "mpidi_ch3_hybrid.h"

/* Append in issue order. */
static void hold(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h)
{
    h->vc = vc;
    if (!h->on_qp)
        vc->ch.hy.held_sctp++;
    LL_APPEND(vc->ch.hy.held_head, vc->ch.hy.held_tail, h);
}

/* A header, or a held copy, on SCTP now and not held: within the copy limit, so the transport
 * copies it at once. (Also the RNIC layer's CONNECT_ME.) */
static int send_copied(MPIDI_VC_t * vc, void *buf, size_t len)
{
    struct iovec iov = { buf, len };
    MPIR_Request *sreq = NULL;
    int mpi_errno = MPIDI_CH3I_Start_msg_now(vc, &iov, 1, &sreq);
    MPIR_Assert(sreq == NULL);
    return mpi_errno;
}

static void deregister(MPIDI_CH3I_Hy_held * h)
{
    if (h->mr && h->own_mr)
        iwv_dereg_mr(h->mr);
    h->mr = NULL;
}

static void count(const MPIDI_CH3I_Hy_held * h, int failed)
{
    MPIDI_CH3I_Hy_rnic_t *r = &MPIDI_CH3I_Hy_rnic;
    if (failed) {
        r->fallbacks++;
        return;
    }
    if (h->kind == MPIDI_CH3I_HY_HELD_RDMA_ATOMIC) {
        r->atomics++;
        return;
    }
    if (h->kind == MPIDI_CH3I_HY_HELD_RDMA_WRITE && h->placed == MPIDI_CH3_PKT_HY_PUT_PLACED)
        r->puts++;
    else
        r->gets++;
    r->bytes += h->len;
}

/* An on_qp entry's Read fetched the peer's receive count: our credit for further headers. */
static void take_credit(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_held * h)
{
    unsigned posted;
    if (!vc->ch.hy.mem)
        return;
    posted = vc->ch.hy.mem->credit_read[h->seq % MPIDI_CH3I_HY_HEADER_CREDITS];
    vc->ch.hy.credit = hy_credit_after_read(vc->ch.hy.credit, posted);
}

/* ---- after a QP broke: which headers did the peer handle? ---- */

static int release(MPIDI_VC_t * vc);

static int send_sync(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_type_t type, unsigned headers_done, uint64_t atomics)
{
    MPIDI_CH3_Pkt_t pkt;
    memset(&pkt, 0, sizeof(pkt));
    pkt.type = type;
    pkt.hy_sync.headers_done = headers_done;
    pkt.hy_sync.atomics = atomics;
    /* Not held: the sender's held packets wait for exactly this answer. */
    return send_copied(vc, &pkt, sizeof(pkt));
}

/* The peers asked QP_SYNC and not answered yet, with when. A peer answers from its progress
 * engine; one that never does (alive on SCTP, but never in MPI again) would leave our held
 * sends waiting forever, so past MPIR_CVAR_CH3_HYBRID_QP_SYNC_TIMEOUT it counts as lost. */
static struct asking_peer {
    MPIDI_VC_t *vc;
    double since;
} *asking;
static int asking_n, asking_cap;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sync_asked(MPIDI_VC_t * vc)
{
    if (asking_n == asking_cap) {
        int cap = asking_cap ? 2 * asking_cap : 8;
        struct asking_peer *grown = MPL_realloc(asking, cap * sizeof(*grown), MPL_MEM_OTHER);
        if (!grown)
            return;     /* no deadline for this one: it waits as it did before deadlines */
        asking = grown;
        asking_cap = cap;
    }
    asking[asking_n].vc = vc;
    asking[asking_n++].since = now_s();
}

static void sync_settled(MPIDI_VC_t * vc)
{
    for (int i = 0; i < asking_n; i++)
        if (asking[i].vc == vc) {
            asking[i] = asking[--asking_n];
            return;
        }
}

int MPIDI_CH3I_Hy_sync_deadlines(void)
{
    const int limit = MPIDI_CH3I_Hy_config.qp_sync_timeout_s;
    double now;
    if (asking_n == 0 || limit == 0)
        return 0;
    now = now_s();
    for (int i = 0; i < asking_n; i++) {
        MPIDI_VC_t *vc = asking[i].vc;
        if (now - asking[i].since < limit)
            continue;
        asking[i--] = asking[--asking_n];
        MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "rank %d did not answer which RDMA put headers it "
                          "handled (QP_SYNC) within %d s (MPIR_CVAR_CH3_HYBRID_QP_SYNC_TIMEOUT); "
                          "it is treated as lost", vc->pg_rank, limit);
        sctpm_peer_remove(MPIDI_CH3I_sctp, vc->ch.peer);        /* fails the VC (its event) */
        return 1;       /* the list may have changed under the failure's callbacks */
    }
    return 0;
}

/* At the target of QP_SYNC, our end closed: which of the peer's atomics from number `from` on our
 * RNIC ran, each with the value it returned (QP_SYNC_ATOMIC), then the counts (QP_SYNC_ACK). The
 * peer has at most MPIDI_CH3I_HY_ATOMIC_SLOTS in flight, all within the RNIC's log. */
typedef char hy_atomics_in_flight_fit_the_log[MPIDI_CH3I_HY_ATOMIC_SLOTS <= IWV_ATOMIC_LOG ? 1 : -1];
static int tell_atomics_run(MPIDI_VC_t * vc, uint64_t from)
{
    int mpi_errno = MPI_SUCCESS;
    uint64_t done = vc->ch.hy.qp ? iwv_qp_atomics_done(vc->ch.hy.qp) : 0;
    for (uint64_t i = from; i < done && !mpi_errno; i++) {
        MPIDI_CH3_Pkt_t pkt;
        memset(&pkt, 0, sizeof(pkt));
        pkt.type = MPIDI_CH3_PKT_HY_QP_SYNC_ATOMIC;
        pkt.hy_sync_atomic.index = i;
        if (iwv_qp_atomic_original(vc->ch.hy.qp, i, &pkt.hy_sync_atomic.original) == 0)
            mpi_errno = send_copied(vc, &pkt, sizeof(pkt));   /* not held: answers go at once */
    }
    return MPIDI_CH3I_FIRST_ERROR(mpi_errno, send_sync(vc, MPIDI_CH3_PKT_HY_QP_SYNC_ACK,
                                                       vc->ch.hy.headers_done, done));
}

/* At the origin: what one of our atomics on the broken QP returned at the peer. Kept with its
 * held entry, which leaves once the QP_SYNC_ACK came; one we did not ask about is ignored. */
static int qp_sync_atomic(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                          MPIR_Request ** rreqp)
{
    (void) data;
    *buflen = 0;
    *rreqp = NULL;
    if (vc->ch.hy.state == MPIDI_CH3I_HY_QP_SYNC_ASKED)
        for (MPIDI_CH3I_Hy_held * h = vc->ch.hy.held_head; h; h = h->next)
            if (h->kind == MPIDI_CH3I_HY_HELD_RDMA_ATOMIC && h->state == MPIDI_CH3I_HY_HELD_FAILED &&
                h->atomic_index == pkt->hy_sync_atomic.index) {
                h->original = pkt->hy_sync_atomic.original;
                h->original_known = 1;
                return MPI_SUCCESS;
            }
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "rank %d reported the result of atomic %llu, which "
                      "this rank did not ask about; ignored", vc->pg_rank,
                      (unsigned long long) pkt->hy_sync_atomic.index);
    return MPI_SUCCESS;
}

/* QP_SYNC, at the target: close our end first, so that no header lands after the count we
 * answer (the peer resends the rest). A header still deferred then waits for control packets the
 * peer says it never sent (it sends QP_SYNC after all of them): it is dropped, not handled, since
 * the count we answer makes the peer resend it. QP_SYNC_ACK, at the origin: release what waited
 * for it. */
static int qp_sync(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                   MPIR_Request ** rreqp)
{
    (void) data;
    *buflen = 0;
    *rreqp = NULL;
    if (pkt->type == MPIDI_CH3_PKT_HY_QP_SYNC) {
        if (MPIDI_CH3I_Hy_config.ignore_qp_sync)
            return MPI_SUCCESS;
        MPIDI_CH3I_Hy_close_qp(vc);
        MPIDI_CH3I_Hy_poll_cq();
        MPIDI_CH3I_Hy_run_deferred(vc);
        if (vc->ch.hy.deferred_head) {
            MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "rank %d asked which PUT headers this rank "
                              "handled while some still waited for its earlier packets; those are "
                              "dropped and it sends them again", vc->pg_rank);
            MPIDI_CH3I_Hy_drop_deferred(vc);
        }
        return tell_atomics_run(vc, pkt->hy_sync.atomics);
    }
    if (vc->ch.hy.state != MPIDI_CH3I_HY_QP_SYNC_ASKED) {
        MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "rank %d answered a queue-pair question this "
                          "rank did not ask; ignored", vc->pg_rank);
        return MPI_SUCCESS;
    }
    vc->ch.hy.peer_headers_done = pkt->hy_sync.headers_done;
    vc->ch.hy.peer_atomics_done = pkt->hy_sync.atomics;
    sync_settled(vc);
    MPIDI_CH3I_Hy_qp_to(vc, MPIDI_CH3I_HY_QP_SYNC_ANSWERED);
    int unsure = 0, handled = 0, atomics = 0, ran = 0;
    for (MPIDI_CH3I_Hy_held * h = vc->ch.hy.held_head; h; h = h->next)
        if (h->state != MPIDI_CH3I_HY_HELD_FAILED)
            continue;
        else if (h->on_qp) {
            unsure++;
            handled += hy_header_handled(vc->ch.hy.peer_headers_done, h->seq);
        } else if (h->kind == MPIDI_CH3I_HY_HELD_RDMA_ATOMIC && !h->not_sent) {
            atomics++;
            ran += h->atomic_index < vc->ch.hy.peer_atomics_done;
        }
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "rank %d had handled %d of the %d PUT headers and "
                      "run %d of the %u atomics in flight on the broken queue pair; the others go "
                      "again over SCTP", vc->pg_rank, handled, unsure, ran, atomics);
    return release(vc);
}

/* Whether the head entry h leaves now (hy_order.h). A header that went on a QP that broke may
 * or may not have been handled: only the peer knows, so it is asked once (QP_SYNC; its
 * QP_SYNC_ACK sets peer_headers_done). The QP is given up then: the peer closes its end when it
 * answers, and so do we (a transfer refused by a full queue leaves the QP READY). */
static int head_leaves(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h, int *mpi_errno)
{
    /* Only the peer knows whether it handled a header that went on the QP, or ran an atomic
     * that went out; an atomic not sent (or any other transfer) is simply sent again. */
    const int peer_knows = h->on_qp || (h->kind == MPIDI_CH3I_HY_HELD_RDMA_ATOMIC && !h->not_sent);
    hy_head_action a = hy_head_next(h->pending, peer_knows, h->state == MPIDI_CH3I_HY_HELD_FAILED,
                                    vc->ch.hy.state == MPIDI_CH3I_HY_QP_SYNC_ASKED,
                                    vc->ch.hy.state == MPIDI_CH3I_HY_QP_SYNC_ANSWERED);
    if (a == HY_HEAD_ASK) {
        MPIDI_CH3I_Hy_close_qp(vc);     /* READY (or already FAILED) -> FAILED */
        MPIDI_CH3I_Hy_qp_to(vc, MPIDI_CH3I_HY_QP_SYNC_ASKED);
        sync_asked(vc);
        *mpi_errno = MPIDI_CH3I_FIRST_ERROR(*mpi_errno, send_sync(vc, MPIDI_CH3_PKT_HY_QP_SYNC, 0,
                                                                  vc->ch.hy.atomics_answered));
    }
    return a == HY_HEAD_LEAVES;
}

/* A held request sent on SCTP now. If it cannot go (the peer was lost, which a failed send can
 * find out first), it fails with that error, as a failed iSend's does: it left the held list
 * already, so vc_lost, which fails the held requests, no longer sees it, and an MPI_Rput
 * waiting on it would wait for ever. */
static int send_request_or_fail(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int n)
{
    return MPIDI_CH3I_Completed_if_failed(sreq, MPIDI_CH3I_Send_request_now(vc, sreq, iov, n));
}

/* Send one entry that no longer waits. */
static int send_held(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h)
{
    const int failed = h->state == MPIDI_CH3I_HY_HELD_FAILED;
    hy_write_exit leaves;
    int mpi_errno = MPI_SUCCESS;
    switch (h->kind) {
        case MPIDI_CH3I_HY_HELD_COPY:
            mpi_errno = send_copied(vc, h->buf, h->len);
            MPL_free(h->buf);
            break;
        case MPIDI_CH3I_HY_HELD_REQUEST:
            mpi_errno = send_request_or_fail(vc, h->sreq, h->iov, h->n);
            break;
        case MPIDI_CH3I_HY_HELD_RDMA_WRITE:
            leaves = hy_write_leaves(h->on_qp, failed, vc->ch.hy.peer_headers_done, h->seq);
            deregister(h);
            count(h, leaves == HY_WRITE_RESEND);
            switch (leaves) {
                case HY_WRITE_DELIVERED:       /* its Read completed, or the peer's QP_SYNC_ACK says so */
                    if (!failed)
                        take_credit(vc, h);
                    mpi_errno = MPIDI_CH3I_Request_sent(vc, h->sreq);
                    break;
                case HY_WRITE_HEADER:  /* the data buffer is free once the Write is placed */
                    h->pkt.type = h->placed;
                    mpi_errno = send_copied(vc, &h->pkt, sizeof(h->pkt));
                    mpi_errno = MPIDI_CH3I_FIRST_ERROR(mpi_errno, MPIDI_CH3I_Request_sent(vc, h->sreq));
                    break;
                case HY_WRITE_RESEND:
                    /* The whole PUT or GET response on SCTP (overwriting whatever part the Write
                     * placed with the same bytes); the request completes when it is sent. */
                    if (h->placed == MPIDI_CH3_PKT_HY_PUT_PLACED)
                        MPIDI_CH3I_Hy_put_resent(vc, h->pkt.put.target_win_handle);
                    memcpy(&h->sreq->dev.pending_pkt, &h->pkt, sizeof(h->pkt));
                    mpi_errno = send_request_or_fail(vc, h->sreq, h->iov, 2);
                    break;
            }
            break;
        case MPIDI_CH3I_HY_HELD_RDMA_GET:
            deregister(h);
            count(h, failed);
            if (!failed && !(h->pkt.get.pkt_flags & MPIDI_CH3_PKT_FLAG_RMA_UNLOCK)) {
                MPIDI_CH3_Pkt_t decr;
                mpi_errno = MPIDI_CH3I_Hy_get_done(vc, &h->pkt, &decr);
                if (!mpi_errno && decr.type == MPIDI_CH3_PKT_DECR_AT_COUNTER)
                    mpi_errno = send_copied(vc, &decr, sizeof(decr));
                break;
            }
            /* The target releases a lock: it gets the GET itself, as GET_PLACED (or, if the
             * Read failed, as the plain GET that it answers with the data on SCTP). */
            if (!failed)
                h->pkt.type = MPIDI_CH3_PKT_HY_GET_PLACED;
            mpi_errno = send_copied(vc, &h->pkt, sizeof(h->pkt));
            break;
        case MPIDI_CH3I_HY_HELD_RDMA_ATOMIC: {
            MPIDI_CH3_Pkt_t send[2];
            int nsend;
            count(h, failed);
            mpi_errno = MPIDI_CH3I_Hy_atomic_done(vc, h, send, &nsend);
            for (int i = 0; i < nsend; i++)
                mpi_errno = MPIDI_CH3I_FIRST_ERROR(mpi_errno, send_copied(vc, &send[i], sizeof(send[i])));
            break;
        }
        case MPIDI_CH3I_HY_HELD_LOCAL_ACK: {
            /* Every put ahead of it has been placed, unless one failed and went again on SCTP:
             * then only the target can say, and it is asked (h->pkt is that FLUSH). */
            MPIDI_CH3I_Hy_acks_t *acks = MPIDI_CH3I_Hy_acks_of(vc, h->pkt.flush.target_win_handle);
            if (acks && acks->resent != h->resent_before)
                mpi_errno = send_copied(vc, &h->pkt, sizeof(h->pkt));
            else
                mpi_errno = MPIDI_CH3I_Hy_local_ack(vc, h->pkt.flush.source_win_handle);
            break;
        }
    }
    return mpi_errno;
}

/* Send what no longer waits; an mpi_errno. */
static int release(MPIDI_VC_t * vc)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_CH3I_Hy_held *h;
    while ((h = vc->ch.hy.held_head) != NULL && head_leaves(vc, h, &mpi_errno)) {
        LL_DELETE(vc->ch.hy.held_head, vc->ch.hy.held_tail, h);
        if (!h->on_qp)
            vc->ch.hy.held_sctp--;
        mpi_errno = MPIDI_CH3I_FIRST_ERROR(mpi_errno, send_held(vc, h));
        MPIDI_CH3I_Hy_held_free(h);
    }
    return mpi_errno;
}

/* A CQ entry of a held transfer (from hy_device.c). */
static void completed(const struct iwv_wc *wc)
{
    MPIDI_CH3I_Hy_held *h = (MPIDI_CH3I_Hy_held *) (uintptr_t) wc->wr_id;
    MPIDI_VC_t *vc = h->vc;
    if (h->state == MPIDI_CH3I_HY_HELD_ABANDONED) {
        if (--h->pending == 0) {
            MPIDI_CH3I_Hy_rnic.in_flight--;
            deregister(h);
            MPIDI_CH3I_Hy_held_free(h);
        }
        return;
    }
    if (wc->status != IWV_WC_SUCCESS) {
        if (h->state != MPIDI_CH3I_HY_HELD_FAILED)
            h->not_sent = (wc->wc_flags & IWV_WC_NOT_SENT) != 0;
        MPIDI_CH3I_Hy_held_to(h, MPIDI_CH3I_HY_HELD_FAILED);
        /* The QP is broken (flushed WRs follow): this peer's RMA goes on SCTP from now on. */
        if (MPIDI_CH3I_Hy_qp_failed(vc))
            MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "RDMA to rank %d failed (status %d); its "
                              "one-sided traffic continues over SCTP", vc->pg_rank, (int) wc->status);
    }
    else if (h->kind == MPIDI_CH3I_HY_HELD_RDMA_ATOMIC)
        vc->ch.hy.atomics_answered = h->atomic_index + 1;
    if (--h->pending == 0)
        MPIDI_CH3I_Hy_rnic.in_flight--;
    MPIDI_CH3I_Raise_error(release(vc));
}

/* The peer is gone: what waits for it fails now (a GET's request is failed with the others that
 * wait for this peer's answers, ch3_awaited.c); transfers still on the QP stay allocated,
 * abandoned, until their completions come. */
static void vc_lost(MPIDI_VC_t * vc, int mpi_errno)
{
    MPIDI_CH3I_Hy_held *h = vc->ch.hy.held_head;
    sync_settled(vc);
    vc->ch.hy.held_head = vc->ch.hy.held_tail = NULL;
    vc->ch.hy.held_sctp = 0;
    vc->ch.hy.atomics_in_flight = 0;
    MPIDI_CH3I_Hy_drop_deferred(vc);
    /* Into ERR first: the RNIC places nothing more into the buffers dropped below, and the
     * abandoned transfers' completions come at once, flushed. */
    MPIDI_CH3I_Hy_close_qp(vc);
    MPIDI_CH3I_Hy_get_targets_lost(vc);
    while (h) {
        MPIDI_CH3I_Hy_held *next = h->next;
        if (h->kind == MPIDI_CH3I_HY_HELD_COPY)
            MPL_free(h->buf);
        else if (h->sreq)   /* REQUEST, RDMA_WRITE (a LOCAL_ACK's ACK is dropped in ch3_rma_failure.c) */
            MPIDI_CH3I_Complete_with_error(h->sreq, mpi_errno);
        if (h->pending > 0)
            MPIDI_CH3I_Hy_held_to(h, MPIDI_CH3I_HY_HELD_ABANDONED);
        else {
            deregister(h);
            MPIDI_CH3I_Hy_held_free(h);
        }
        h = next;
    }
}

static int no_memory(void)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__, MPI_ERR_OTHER,
                                "**nomem", 0);
}

/* Hold a request whose header is in sreq->dev.pending_pkt and whose data is iov[1..n). */
static int hold_request(MPIDI_VC_t * vc, MPIR_Request * sreq, const struct iovec *iov, int n)
{
    MPIDI_CH3I_Hy_held *h = MPIDI_CH3I_Hy_held_new(MPIDI_CH3I_HY_HELD_REQUEST);
    if (!h)
        return no_memory();
    h->sreq = sreq;
    for (int i = 1; i < n; i++)
        h->iov[i] = iov[i];
    h->n = n;
    hold(vc, h);
    return MPI_SUCCESS;
}

/* Hold a copy of iov[0..n) (small: a header, or within the copy limit). */
static int hold_copy(MPIDI_VC_t * vc, const struct iovec *iov, int n)
{
    MPIDI_CH3I_Hy_held *h = MPIDI_CH3I_Hy_held_new(MPIDI_CH3I_HY_HELD_COPY);
    size_t total = 0;
    char *p;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    p = h ? MPL_malloc(total, MPL_MEM_BUFFER) : NULL;
    if (!p) {
        if (h)
            MPIDI_CH3I_Hy_held_free(h);
        return no_memory();
    }
    h->buf = p;
    h->len = total;
    for (int i = 0; i < n; i++) {
        memcpy(p, iov[i].iov_base, iov[i].iov_len);
        p += iov[i].iov_len;
    }
    hold(vc, h);
    return MPI_SUCCESS;
}

/* The acknowledgement of a flush or unlock of the peer's window target_win that the origin
 * gives itself (hy_placed.c): now if nothing to the peer is in flight, else once all that is
 * ahead of it has left (the puts it covers are placed then). */
static int ack_here(MPIDI_VC_t * vc, MPI_Win target_win, MPI_Win source_win)
{
    MPIDI_CH3I_Hy_acks_t *acks = MPIDI_CH3I_Hy_acks_of(vc, target_win);
    MPIDI_CH3I_Hy_held *h;
    if (!vc->ch.hy.held_head)
        return MPIDI_CH3I_Hy_local_ack(vc, source_win);
    if (!(h = MPIDI_CH3I_Hy_held_new(MPIDI_CH3I_HY_HELD_LOCAL_ACK)))
        return no_memory();
    h->pkt.type = MPIDI_CH3_PKT_FLUSH;  /* what to send instead if a put ahead is resent */
    h->pkt.flush.target_win_handle = target_win;
    h->pkt.flush.source_win_handle = source_win;
    h->resent_before = acks ? acks->resent : 0;
    hold(vc, h);
    return MPI_SUCCESS;
}

/* An UNLOCK that asks for no acknowledgement, in issue order. */
static int send_unlock_unacked(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * unlock)
{
    struct iovec iov = { unlock, sizeof(*unlock) };
    unlock->unlock.pkt_flags |= MPIDI_CH3_PKT_FLAG_RMA_UNLOCK_NO_ACK;
    return vc->ch.hy.held_head ? hold_copy(vc, &iov, 1) : send_copied(vc, unlock, sizeof(*unlock));
}

/* After the RDMA put h, whose FLUSH or UNLOCK flag came off its header: the lock's release, then
 * the acknowledgement. */
static int after_put_acked_here(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_held * h)
{
    const MPIDI_CH3_Pkt_put_t *put = &h->pkt.put;
    int mpi_errno = MPI_SUCCESS;
    if (h->acked_here & MPIDI_CH3_PKT_FLAG_RMA_UNLOCK) {
        MPIDI_CH3_Pkt_t unlock;
        memset(&unlock, 0, sizeof(unlock));
        unlock.type = MPIDI_CH3_PKT_UNLOCK;
        unlock.unlock.target_win_handle = put->target_win_handle;
        unlock.unlock.source_win_handle = put->source_win_handle;
        mpi_errno = send_unlock_unacked(vc, &unlock);
    }
    return MPIDI_CH3I_FIRST_ERROR(mpi_errno, ack_here(vc, put->target_win_handle, put->source_win_handle));
}

/* A FLUSH or UNLOCK (asking for an ACK) that the origin may acknowledge itself: the FLUSH is not
 * sent, the UNLOCK goes without asking. 1 if so. */
static int ack_packet_here(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt, int *mpi_errno)
{
    if (!MPIDI_CH3I_Hy_ack_packet_here(vc, pkt))
        return 0;
    if (pkt->type == MPIDI_CH3_PKT_UNLOCK) {
        MPIDI_CH3_Pkt_t unlock = *pkt;
        *mpi_errno = send_unlock_unacked(vc, &unlock);
        *mpi_errno = MPIDI_CH3I_FIRST_ERROR(*mpi_errno, ack_here(vc, pkt->unlock.target_win_handle,
                                                                 pkt->unlock.source_win_handle));
    } else {
        *mpi_errno = ack_here(vc, pkt->flush.target_win_handle, pkt->flush.source_win_handle);
    }
    return 1;
}

/* Start-message hook: a PUT or GET that RDMA takes is posted and held. Else, nothing in flight
 * and nothing held: the plain ch3:sctp path. Otherwise keep the order; what the transport would
 * copy is copied now, anything larger waits as a request. */
static int start_msg(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIR_Request ** sreq_ptr,
                     int *mpi_errno)
{
    const MPIDI_CH3_Pkt_t *pkt = (const MPIDI_CH3_Pkt_t *) iov[0].iov_base;
    MPIDI_CH3I_Hy_held *h = NULL;
    MPIDI_CH3_Pkt_t instead;
    size_t total = 0;
    *mpi_errno = MPI_SUCCESS;
    *sreq_ptr = NULL;
    if (pkt->type == MPIDI_CH3_PKT_PUT && (h = MPIDI_CH3I_Hy_try_put(vc, iov, n)) != NULL) {
        hold(vc, h);
        *sreq_ptr = h->sreq;
        MPIDI_CH3I_Hy_put_issued(vc, h);
        if (h->acked_here)
            *mpi_errno = after_put_acked_here(vc, h);
        return 1;
    }
    if (ack_packet_here(vc, pkt, mpi_errno))
        return 1;
    if ((h = MPIDI_CH3I_Hy_try_atomic(vc, iov, n)) != NULL) {
        hold(vc, h);    /* its effect on the window's record: none (hy_placed.c) */
        return 1;
    }
    if (pkt->type == MPIDI_CH3_PKT_GET) {
        switch (MPIDI_CH3I_Hy_try_get(vc, iov, n, &h, &instead)) {
            case MPIDI_CH3I_HY_GET_POSTED:
                MPIDI_CH3I_Hy_note_issued(vc, pkt);
                hold(vc, h);
                return 1;
            case MPIDI_CH3I_HY_GET_ASK_WRITE:  /* in issue order as any packet; a header is copied */
                if (!start_msg(vc, &(struct iovec) { &instead, sizeof(instead) }, 1, sreq_ptr, mpi_errno))
                    *mpi_errno = send_copied(vc, &instead, sizeof(instead));
                return 1;
            default:
                break;
        }
    }
    MPIDI_CH3I_Hy_note_issued(vc, pkt);
    if (!vc->ch.hy.held_head)
        return 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    if (total > MPIDI_CH3I_COPY_LIMIT) {
        MPIR_Request *sreq = MPIDI_CH3I_Send_request_create(pkt);
        *mpi_errno = sreq ? hold_request(vc, sreq, iov, n) : no_memory();
        if (!*mpi_errno)
            *sreq_ptr = sreq;
        else if (sreq) {
            MPIR_Request_free(sreq);    /* both references */
            MPIR_Request_free(sreq);
        }
        return 1;
    }
    *mpi_errno = hold_copy(vc, iov, n);
    return 1;
}

/* Send-request hook: a GET response CH3's handler makes for one of our packets may go by RDMA
 * Write or header-only (hy_placed.c); then as start_msg. */
static int send_request(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int *n,
                        int *mpi_errno)
{
    MPIDI_CH3I_Hy_held *h = MPIDI_CH3I_Hy_answer_response(vc, sreq, iov, n);
    *mpi_errno = MPI_SUCCESS;
    MPIDI_CH3I_Hy_note_issued(vc, &sreq->dev.pending_pkt);
    if (h)
        hold(vc, h);
    else if (vc->ch.hy.held_head)
        *mpi_errno = hold_request(vc, sreq, iov, *n);
    return h != NULL || vc->ch.hy.held_head != NULL;    /* taken: posted, or held behind others */
}

static int finalize(void)
{
    int mpi_errno = MPIDI_CH3I_Hy_finalize();
    MPL_free(asking);
    asking = NULL;
    asking_n = asking_cap = 0;
    MPIDI_CH3I_Hy_held_pool_finalize();
    return mpi_errno;
}

static void vc_init(MPIDI_VC_t * vc)
{
    memset(&vc->ch.hy, 0, sizeof(vc->ch.hy));
}

static int init(void)
{
    static const MPIDI_CH3I_Hy_device_ops_t up = { completed, MPIDI_CH3I_Hy_header_arrived, send_copied };
    MPIDI_CH3I_Hy_device_init(&up);
    return MPIDI_CH3I_Hy_read_cvars();
}

static void register_handlers(MPIDI_CH3_PktHandler_Fcn ** table)
{
    MPIDI_CH3I_Hy_register_handlers(table);
    table[MPIDI_CH3_PKT_HY_QP_SYNC] = table[MPIDI_CH3_PKT_HY_QP_SYNC_ACK] = qp_sync;
    table[MPIDI_CH3_PKT_HY_QP_SYNC_ATOMIC] = qp_sync_atomic;
}

/* PUT headers on a QP name how many SCTP control packets went before them. A clear-to-send (class
 * 2) is not counted on either side: it may overtake other packets (MPIDI_CH3I_Key_of). */
static void sent_on_sctp(MPIDI_VC_t * vc, const sctpm_key * key)
{
    vc->ch.hy.ctl_sent += key->cls == 1;
}

/* After the stall report: this peer's queue pair and what is held for it, head first. */
static void describe_stall(MPIDI_VC_t * vc)
{
    int n = 0;
    if (!vc->ch.hy.held_head && vc->ch.hy.state == MPIDI_CH3I_HY_QP_NO_CONTACT)
        return;
    for (const MPIDI_CH3I_Hy_held * h = vc->ch.hy.held_head; h; h = h->next)
        n++;
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "stall: rank %d: queue pair state %d, %d held "
                      "(%d for SCTP), %u atomics in flight, deferred headers %s", vc->pg_rank,
                      (int) vc->ch.hy.state, n, vc->ch.hy.held_sctp, vc->ch.hy.atomics_in_flight,
                      vc->ch.hy.deferred_head ? "yes" : "none");
    n = 0;
    for (const MPIDI_CH3I_Hy_held * h = vc->ch.hy.held_head; h && n < 8; h = h->next, n++)
        MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "stall:   held %d: kind %d, state %d, %d work "
                          "requests pending, on the QP %d, seq %u", n, (int) h->kind, (int) h->state,
                          h->pending, h->on_qp, (unsigned) h->seq);
}

/* MPIR_CVAR_CH3_HYBRID_RDMA false: none of the hooks below runs, the process is ch3:sctp.
 * Asked before MPIDI_CH3_Init, so the control variable itself, not MPIDI_CH3I_Hy_config. */
static int wanted(void)
{
    return MPIR_CVAR_CH3_HYBRID_RDMA;
}

/* ch3:hybrid's hooks into ch3:sctp (the extension interface of ch3_sctp's mpidi_ch3_impl.h). */
const MPIDI_CH3I_Ext_t MPIDI_CH3I_ext_table = {
    .name = "ch3:hybrid",
    .wanted = wanted,
    .init = init,
    .finalize = finalize,
    .vc_init = vc_init,
    .vc_lost = vc_lost,
    .pvars_register = MPIDI_CH3I_Hy_pvars_register,
    .handlers_register = register_handlers,
    .before_packet = MPIDI_CH3I_Hy_before_packet,
    .after_packet = MPIDI_CH3I_Hy_packet_done,
    .start_msg = start_msg,
    .send_request = send_request,
    .sent = sent_on_sctp,
    .blocking = MPIDI_CH3I_Hy_blocking,
    .inside = MPIDI_CH3I_Hy_inside,
    .win_fns = MPIDI_CH3I_Hy_win_fns,
    .win_hooks = MPIDI_CH3I_Hy_win_hooks,
    .describe_stall = describe_stall,
};
