/* ch3:hybrid: sends held behind RDMA transfers. While an RDMA PUT or GET to a peer is in flight,
 * every later send to that peer waits in the VC's queue, in issue order, and leaves once all that
 * precedes it has left: CH3's packets reach the target in the order CH3 issued them, with each
 * RDMA-carried operation's header after its data. A peer with nothing in flight is not touched. */
#include "mpidi_ch3_hybrid.h"

void MPIDI_CH3I_Hy_hold(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h)
{
    h->next = NULL;
    h->vc = vc;
    if (!h->on_qp)
        vc->ch.hy.held_sctp++;
    if (vc->ch.hy.held_tail)
        vc->ch.hy.held_tail->next = h;
    else
        vc->ch.hy.held_head = h;
    vc->ch.hy.held_tail = h;
}

/* A header, or a held copy: within the copy limit, so the transport copies it at once. */
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

static void count(const MPIDI_CH3I_Hy_held * h)
{
    MPIDI_CH3I_Hy_rnic_t *r = &MPIDI_CH3I_Hy_rnic;
    if (h->failed) {
        r->fallbacks++;
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
    if ((int) (posted - vc->ch.hy.credit) > 0)
        vc->ch.hy.credit = posted;
}

/* A header that went on a QP that broke may or may not have been handled: only the peer knows.
 * 1 once its answer is here. */
static int fate_known(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h, int *mpi_errno)
{
    if (!h->on_qp || !h->failed || vc->ch.hy.sync == MPIDI_CH3I_HY_SYNC_ANSWERED)
        return 1;
    if (vc->ch.hy.sync == MPIDI_CH3I_HY_SYNC_NONE)
        *mpi_errno = MPIDI_CH3I_Hy_ask_sync(vc);
    return 0;
}

/* Send one entry that no longer waits. */
static int send_held(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h)
{
    int mpi_errno = MPI_SUCCESS;
    switch (h->kind) {
        case MPIDI_CH3I_HY_HELD_COPY:
            mpi_errno = send_copied(vc, h->buf, h->len);
            MPL_free(h->buf);
            break;
        case MPIDI_CH3I_HY_HELD_REQUEST:
            mpi_errno = MPIDI_CH3I_Send_request_now(vc, h->sreq, h->iov, h->n);
            break;
        case MPIDI_CH3I_HY_HELD_RDMA_WRITE:
            deregister(h);
            if (h->on_qp && (!h->failed || (int) (vc->ch.hy.peer_headers_done - h->seq) >= 0)) {
                /* The target has the header (its Read completed, or its QP_SYNC_ACK says so). */
                if (!h->failed)
                    take_credit(vc, h);
                h->failed = 0;
                count(h);
                mpi_errno = MPIDI_CH3I_Request_sent(vc, h->sreq);
                break;
            }
            count(h);
            if (!h->failed) {
                h->pkt.type = h->placed;
                mpi_errno = send_copied(vc, &h->pkt, sizeof(h->pkt));
                /* The data buffer is free once the Write is placed. */
                int err = MPIDI_CH3I_Request_sent(vc, h->sreq);
                if (!mpi_errno)
                    mpi_errno = err;
            } else {
                /* The RDMA path failed: the whole PUT or GET response goes on SCTP (overwriting
                 * whatever part the Write placed with the same bytes); the request completes
                 * when it is sent. */
                memcpy(&h->sreq->dev.pending_pkt, &h->pkt, sizeof(h->pkt));
                mpi_errno = MPIDI_CH3I_Send_request_now(vc, h->sreq, h->iov, 2);
            }
            break;
        case MPIDI_CH3I_HY_HELD_RDMA_GET:
            deregister(h);
            count(h);
            if (!h->failed && !(h->pkt.get.pkt_flags & MPIDI_CH3_PKT_FLAG_RMA_UNLOCK)) {
                mpi_errno = MPIDI_CH3I_Hy_get_done(vc, &h->pkt);
                break;
            }
            /* The target releases a lock: it gets the GET itself, as GET_PLACED (or, if the
             * Read failed, as the plain GET that it answers with the data on SCTP). */
            if (!h->failed)
                h->pkt.type = MPIDI_CH3_PKT_HY_GET_PLACED;
            mpi_errno = send_copied(vc, &h->pkt, sizeof(h->pkt));
            break;
    }
    return mpi_errno;
}

int MPIDI_CH3I_Hy_release(MPIDI_VC_t * vc)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_CH3I_Hy_held *h;
    while ((h = vc->ch.hy.held_head) != NULL && h->pending == 0 /* 0 unless an RDMA transfer */
           && fate_known(vc, h, &mpi_errno)) {
        vc->ch.hy.held_head = h->next;
        if (!h->next)
            vc->ch.hy.held_tail = NULL;
        if (!h->on_qp)
            vc->ch.hy.held_sctp--;
        int err = send_held(vc, h);
        if (err && !mpi_errno)
            mpi_errno = err;
        MPL_free(h);
    }
    return mpi_errno;
}

void MPIDI_CH3I_Hy_completed(const struct iwv_wc *wc)
{
    MPIDI_CH3I_Hy_held *h = (MPIDI_CH3I_Hy_held *) (uintptr_t) wc->wr_id;
    MPIDI_VC_t *vc = h->vc;
    if (h->abandoned) {
        if (--h->pending == 0) {
            MPIDI_CH3I_Hy_rnic.in_flight--;
            deregister(h);
            MPL_free(h);
        }
        return;
    }
    if (wc->status != IWV_WC_SUCCESS) {
        h->failed = 1;
        if (vc->ch.hy.state == MPIDI_CH3I_HY_QP_READY) {
            /* The QP is broken (flushed WRs follow): this peer's RMA goes on SCTP from now on. */
            vc->ch.hy.state = MPIDI_CH3I_HY_QP_FAILED;
            if (getenv("MPICH_SCTP_QUIET") == NULL)
                fprintf(stderr, "[ch3:hybrid] rank %d: RDMA to rank %d failed (status %d); "
                        "its one-sided traffic continues over SCTP\n", MPIR_Process.rank,
                        vc->pg_rank, (int) wc->status);
        }
    }
    if (--h->pending == 0)
        MPIDI_CH3I_Hy_rnic.in_flight--;
    MPIDI_CH3I_Raise_error(MPIDI_CH3I_Hy_release(vc));
}

/* The peer is gone: what waits for it fails now (a GET's request is failed with the others that
 * wait for this peer's answers, ch3_rma_failure.c); transfers still on the QP stay allocated,
 * abandoned, until their completions come. */
void MPIDI_CH3I_Hy_vc_lost(MPIDI_VC_t * vc, int mpi_errno)
{
    MPIDI_CH3I_Hy_held *h = vc->ch.hy.held_head;
    vc->ch.hy.held_head = vc->ch.hy.held_tail = NULL;
    vc->ch.hy.held_sctp = 0;
    MPIDI_CH3I_Hy_drop_deferred(vc);
    /* Into ERR first: the RNIC places nothing more into the buffers dropped below, and the
     * abandoned transfers' completions come at once, flushed. */
    MPIDI_CH3I_Hy_close_qp(vc);
    MPIDI_CH3I_Hy_get_targets_lost(vc);
    while (h) {
        MPIDI_CH3I_Hy_held *next = h->next;
        switch (h->kind) {
            case MPIDI_CH3I_HY_HELD_COPY:
                MPL_free(h->buf);
                break;
            case MPIDI_CH3I_HY_HELD_REQUEST:
            case MPIDI_CH3I_HY_HELD_RDMA_WRITE:
                MPIDI_CH3I_Complete_with_error(h->sreq, mpi_errno);
                break;
            case MPIDI_CH3I_HY_HELD_RDMA_GET:
                break;
        }
        if (h->pending > 0)
            h->abandoned = 1;
        else {
            deregister(h);
            MPL_free(h);
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
    MPIDI_CH3I_Hy_held *h = (MPIDI_CH3I_Hy_held *) MPL_calloc(1, sizeof(*h), MPL_MEM_BUFFER);
    if (!h)
        return no_memory();
    h->kind = MPIDI_CH3I_HY_HELD_REQUEST;
    h->sreq = sreq;
    for (int i = 1; i < n; i++)
        h->iov[i] = iov[i];
    h->n = n;
    MPIDI_CH3I_Hy_hold(vc, h);
    return MPI_SUCCESS;
}

/* Nothing in flight and nothing held: the plain ch3:sctp path. Otherwise keep the order; what
 * the transport would copy is copied now, anything larger waits as a request. */
int MPIDI_CH3I_Hy_start_msg(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIR_Request ** sreq_ptr,
                            int *mpi_errno)
{
    const MPIDI_CH3_Pkt_t *pkt = (const MPIDI_CH3_Pkt_t *) iov[0].iov_base;
    MPIDI_CH3I_Hy_held *h;
    size_t total = 0;
    char *p;
    *mpi_errno = MPI_SUCCESS;
    *sreq_ptr = NULL;
    if (pkt->type == MPIDI_CH3_PKT_PUT && MPIDI_CH3I_Hy_try_put(vc, iov, n, sreq_ptr))
        return 1;
    if (pkt->type == MPIDI_CH3_PKT_GET && MPIDI_CH3I_Hy_try_get(vc, iov, n, mpi_errno))
        return 1;
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
    h = (MPIDI_CH3I_Hy_held *) MPL_calloc(1, sizeof(*h), MPL_MEM_BUFFER);
    p = h ? MPL_malloc(total, MPL_MEM_BUFFER) : NULL;
    if (!p) {
        MPL_free(h);
        *mpi_errno = no_memory();
        return 1;
    }
    h->kind = MPIDI_CH3I_HY_HELD_COPY;
    h->buf = p;
    h->len = total;
    for (int i = 0; i < n; i++) {
        memcpy(p, iov[i].iov_base, iov[i].iov_len);
        p += iov[i].iov_len;
    }
    MPIDI_CH3I_Hy_hold(vc, h);
    return 1;
}

int MPIDI_CH3I_Hy_send_request(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int *n,
                               int *mpi_errno)
{
    const MPIDI_CH3I_Hy_answer_t *a = &MPIDI_CH3I_Hy_answer;
    *mpi_errno = MPI_SUCCESS;
    if (a->how != MPIDI_CH3I_HY_ANSWER_PLAIN && sreq->dev.pending_pkt.type == MPIDI_CH3_PKT_GET_RESP
        && *n == 2) {
        /* CH3's GET handler answers a GET_PLACED, whose data the origin already read: header
         * only; or a GET_WRITE: the data by RDMA Write, then the header (or both on SCTP). */
        if (a->how == MPIDI_CH3I_HY_ANSWER_WRITE &&
            MPIDI_CH3I_Hy_try_write_answer(vc, sreq, iov, a->origin_addr, a->origin_stag))
            return 1;
        if (a->how == MPIDI_CH3I_HY_ANSWER_PLACED) {
            sreq->dev.pending_pkt.type = MPIDI_CH3_PKT_HY_GET_RESP_PLACED;
            *n = 1;
        }
    }
    if (!vc->ch.hy.held_head)
        return 0;
    *mpi_errno = hold_request(vc, sreq, iov, *n);
    return 1;
}

static void vc_init(MPIDI_VC_t * vc)
{
    memset(&vc->ch.hy, 0, sizeof(vc->ch.hy));
}

/* PUT headers on a QP name how many SCTP control packets went before them. */
static void sent_on_sctp(MPIDI_VC_t * vc, const sctpm_key * key)
{
    vc->ch.hy.ctl_sent += key->cls;
}

/* ch3:hybrid's hooks into ch3:sctp (the extension interface of ch3_sctp's mpidi_ch3_impl.h). */
const MPIDI_CH3I_Ext_t MPIDI_CH3I_ext = {
    .init = MPIDI_CH3I_Hy_read_cvars,
    .finalize = MPIDI_CH3I_Hy_finalize,
    .vc_init = vc_init,
    .vc_lost = MPIDI_CH3I_Hy_vc_lost,
    .pvars_register = MPIDI_CH3I_Hy_pvars_register,
    .handlers_register = MPIDI_CH3I_Hy_register_handlers,
    .before_packet = MPIDI_CH3I_Hy_before_packet,
    .after_packet = MPIDI_CH3I_Hy_packet_done,
    .start_msg = MPIDI_CH3I_Hy_start_msg,
    .send_request = MPIDI_CH3I_Hy_send_request,
    .sent = sent_on_sctp,
};
