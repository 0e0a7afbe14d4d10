/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: the four send entry points. Each CH3 message (packet header plus the data of its first
 * iov) is one transport message; when a request reloads its iov, the next batch follows as a
 * further transport message on the same stream, which the receiver appends to the same request. */
#include "mpidi_ch3_impl.h"

/* Packets that MPI matching orders get their communicator and tag as stream-mapping key; all
 * others are control packets (the policy keeps them in one ordered domain). A clear-to-send may go
 * ahead of the queued messages to its peer that have not started (class 2): its peer waits for it
 * to send, and no packet's meaning depends on what came before it. Behind a queue of rendezvous
 * data going the other way, it held the opposite direction idle until that queue had drained. */
void MPIDI_CH3I_Key_of(const MPIDI_CH3_Pkt_t * pkt, MPIR_Request * req, sctpm_key * key)
{
    const MPIDI_Message_match *match = NULL;
    switch (pkt->type) {
        case MPIDI_CH3_PKT_EAGER_SEND:
        case MPIDI_CH3_PKT_EAGERSHORT_SEND:
        case MPIDI_CH3_PKT_EAGER_SYNC_SEND:
        case MPIDI_CH3_PKT_READY_SEND:
            match = &pkt->eager_send.match;
            break;
        case MPIDI_CH3_PKT_RNDV_REQ_TO_SEND:
            match = &pkt->rndv_req_to_send.match;
            break;
        case MPIDI_CH3_PKT_CANCEL_SEND_REQ:
            match = &pkt->cancel_send_req.match;
            break;
        default:
            break;
    }
    key->context = match ? match->parts.context_id : 0;
    key->tag = match ? match->parts.tag : 0;
    key->cls = match ? 0 : pkt->type == MPIDI_CH3_PKT_RNDV_CLR_TO_SEND ? 2 : 1;
    if (req) {
        req->ch.context = key->context;
        req->ch.tag = key->tag;
        req->ch.cls = key->cls;
    }
}

int MPIDI_CH3I_Peer_error_code(MPIDI_VC_t * vc, int rc)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET2(mpi_errno, MPIX_ERR_PROC_FAILED, "**comm_fail", "**comm_fail %d %s",
                  vc->pg_rank, rc == -ECONNRESET ? "the peer is lost (its SCTP association "
                  "failed, or the process manager reports it dead)" : strerror(-rc));
    return mpi_errno;
}

int MPIDI_CH3I_Peer_error(MPIDI_VC_t * vc, int rc)
{
    int mpi_errno = MPIDI_CH3I_Peer_error_code(vc, rc);
    if (vc->ch.failed)
        MPIDI_CH3I_Rma_send_failed(vc); /* a flush or unlock may just have counted on an answer */
    return mpi_errno;
}

/* A request whose iov is reloaded sends its data in batches, which the receiver appends to the
 * request it is filling: the transport lets nothing else to that peer come between two of them. */
static int send_batch(MPIDI_VC_t * vc, const sctpm_key * key, MPIR_Request * sreq, struct iovec *iov, int n)
{
    const int more = sreq->dev.OnDataAvail == MPIDI_CH3_ReqHandler_SendReloadIOV;
    return sctpm_send_batch(MPIDI_CH3I_sctp, vc->ch.peer, key, iov, n, sreq, more);
}

static void complete_with_error(MPIR_Request * sreq, int status)
{
    MPIDI_CH3I_Complete_with_error(sreq, MPIDI_CH3I_Peer_error(sreq->ch.vc, status));
}

/* The request's current iov went out: let CH3 reload it or finish, and send what follows. */
static int request_sent(MPIR_Request * sreq)
{
    for (;;) {
        int complete = 0, rc, mpi_errno;
        int (*fn) (MPIDI_VC_t *, MPIR_Request *, int *) = sreq->dev.OnDataAvail;
        MPIDI_VC_t *vc = sreq->ch.vc;
        if (!fn)
            return MPID_Request_complete(sreq);
        mpi_errno = fn(vc, sreq, &complete);
        if (mpi_errno || complete)
            return mpi_errno;
        sctpm_key key = { sreq->ch.context, sreq->ch.tag, sreq->ch.cls };
        rc = send_batch(vc, &key, sreq, sreq->dev.iov, sreq->dev.iov_count);
        if (rc == 1)
            return MPI_SUCCESS; /* continues in MPIDI_CH3I_On_sent */
        if (rc < 0) {
            complete_with_error(sreq, rc);
            return MPI_SUCCESS;
        }
    }
}

/* A send that finished changes the target's window state when it answered an RMA operation
 * (a GET-like response's OnDataAvail decrements the counter, releases a lock it ended). */
static int request_sent_event(MPIR_Request * sreq)
{
    MPIDI_VC_t *vc = sreq->ch.vc;
    int mpi_errno;
    MPIDI_CH3I_Target_event_begin();
    mpi_errno = request_sent(sreq);
    MPIDI_CH3I_Target_event_end(vc);
    return mpi_errno;
}

int MPIDI_CH3I_Request_sent(MPIDI_VC_t * vc, MPIR_Request * sreq)
{
    sreq->ch.vc = vc;
    return request_sent_event(sreq);
}

void MPIDI_CH3I_On_sent(void *ctx, void *cookie, int status)
{
    MPIR_Request *sreq = (MPIR_Request *) cookie;
    (void) ctx;
    if (status != 0) {
        complete_with_error(sreq, status);
        return;
    }
    MPIDI_CH3I_Raise_error(request_sent_event(sreq));
}

/* A packet that asks for an answer is listed once it went (ch3_awaited.c). */
static int awaited_if_sent(MPIDI_VC_t * vc, MPI_Request awaited, int mpi_errno)
{
    if (awaited != MPI_REQUEST_NULL && mpi_errno == MPI_SUCCESS)
        MPIDI_CH3I_Await_answer(vc, awaited);
    return mpi_errno;
}

/* A one-sided operation that CH3 issues from its list to a peer it cannot reach (lost, or no
 * usable card) must not return an error (ch3_rma_failure.c says why): the send is taken, and its
 * request fails in the next progress call, with the answer it asked for and the windows' waits on
 * that peer (MPIDI_CH3I_Fail_later). */
static int unreachable_rma(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt)
{
    return MPIDI_CH3I_Is_rma_operation(pkt) && MPIDI_CH3I_VC_peer(vc) < 0;
}

static int rma_to_lost_peer(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt, MPIR_Request * sreq,
                            MPIR_Request ** sreq_ptr)
{
    if (sreq == NULL)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomemreq", 0);
    MPIDI_CH3I_Await_answer(vc, MPIDI_CH3I_Answer_asked(pkt));
    MPIDI_CH3I_Fail_later(vc, sreq);
    if (sreq_ptr)
        *sreq_ptr = sreq;
    return MPI_SUCCESS;
}

/* The extension learns what went (ch3:hybrid counts the control packets). */
static void count_control(MPIDI_VC_t * vc, const sctpm_key * key)
{
    if (MPIDI_CH3I_Ext()->sent)
        MPIDI_CH3I_Ext()->sent(vc, key);
}

/* Send a request's header (already in sreq->dev.pending_pkt) plus iov[1..n). */
int MPIDI_CH3I_Send_request(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int n)
{
    MPI_Request awaited = MPIDI_CH3I_Answer_asked(&sreq->dev.pending_pkt);
    int mpi_errno;
    if (unreachable_rma(vc, &sreq->dev.pending_pkt))
        return rma_to_lost_peer(vc, &sreq->dev.pending_pkt, sreq, NULL);
    MPIDI_CH3I_Target_sending(vc, &sreq->dev.pending_pkt);
    if (MPIDI_CH3I_Ext()->send_request && MPIDI_CH3I_Ext()->send_request(vc, sreq, iov, &n, &mpi_errno))
        return awaited_if_sent(vc, awaited, mpi_errno);
    return awaited_if_sent(vc, awaited, MPIDI_CH3I_Send_request_now(vc, sreq, iov, n));
}

int MPIDI_CH3I_Send_request_now(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int n)
{
    sctpm_key key;
    int rc;
    if (MPIDI_CH3I_VC_peer(vc) < 0)
        return MPIDI_CH3I_Peer_error(vc, vc->ch.failed ? -ECONNRESET : -EHOSTUNREACH);
    sreq->ch.vc = vc;
    MPIDI_CH3I_Key_of(&sreq->dev.pending_pkt, sreq, &key);
    iov[0].iov_base = &sreq->dev.pending_pkt;
    iov[0].iov_len = sizeof(MPIDI_CH3_Pkt_t);
    rc = send_batch(vc, &key, sreq, iov, n);
    if (rc < 0)
        return MPIDI_CH3I_Peer_error(vc, rc);
    count_control(vc, &key);
    if (rc == 0)
        return request_sent(sreq);
    return MPI_SUCCESS;
}

/* CH3's callers free a request whose iSend/iSendv failed only once, which leaves the reference
 * the send holds, and with it (from MPICH 4.1) one on the communicator: MPI_Finalize then warns of
 * a builtin communicator's pending references. A lost peer completes the request with its error
 * instead, as when the send fails later (MPIDI_CH3I_On_sent), and the operation reports it when it
 * completes. */
int MPIDI_CH3I_Completed_if_failed(MPIR_Request * sreq, int mpi_errno)
{
    if (mpi_errno == MPI_SUCCESS || MPIR_Request_is_complete(sreq))
        return mpi_errno;
    /* every part it counts fails: a synchronous send's receiver acknowledgement too */
    while (!MPIR_Request_is_complete(sreq))
        MPIDI_CH3I_Complete_with_error(sreq, mpi_errno);
    return MPI_SUCCESS;
}

int MPIDI_CH3_iSend(MPIDI_VC_t * vc, MPIR_Request * sreq, void *hdr, intptr_t hdr_sz)
{
    struct iovec iov[1];
    MPIR_Assert(hdr_sz <= (intptr_t) sizeof(MPIDI_CH3_Pkt_t));
    if (hdr != &sreq->dev.pending_pkt)
        memcpy(&sreq->dev.pending_pkt, hdr, hdr_sz);
    return MPIDI_CH3I_Completed_if_failed(sreq, MPIDI_CH3I_Send_request(vc, sreq, iov, 1));
}

int MPIDI_CH3_iSendv(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int n_iov)
{
    struct iovec local[MPL_IOV_LIMIT + 1];
    MPIR_Assert(n_iov <= MPL_IOV_LIMIT);
    if (iov[0].iov_base != &sreq->dev.pending_pkt)
        memcpy(&sreq->dev.pending_pkt, iov[0].iov_base, iov[0].iov_len);
    for (int i = 1; i < n_iov; i++)
        local[i] = iov[i];
    return MPIDI_CH3I_Completed_if_failed(sreq, MPIDI_CH3I_Send_request(vc, sreq, local, n_iov));
}

/* A send request for a message whose buffers the caller keeps valid until it completes (one
 * reference for the caller, one for the send). */
MPIR_Request *MPIDI_CH3I_Send_request_create(const void *pkt)
{
    MPIR_Request *sreq = MPIR_Request_create(MPIR_REQUEST_KIND__SEND);
    if (sreq == NULL)
        return NULL;
    MPIR_Object_set_ref(sreq, 2);
    sreq->dev.OnDataAvail = NULL;
    memcpy(&sreq->dev.pending_pkt, pkt, sizeof(MPIDI_CH3_Pkt_t));
    return sreq;
}

/* A request-to-send that could not go: CH3's MPIDI_CH3_RndvSend frees its send request only once
 * on that error (the same leak as above), so the request fails here instead, with the error, as it
 * would when the peer is lost after the request-to-send went (ch3_awaited.c). */
static int rndv_failed_here(const MPIDI_CH3_Pkt_t * pkt, MPI_Request awaited, int mpi_errno)
{
    MPIR_Request *sreq = NULL;
    if (mpi_errno == MPI_SUCCESS || pkt->type != MPIDI_CH3_PKT_RNDV_REQ_TO_SEND)
        return mpi_errno;
    MPIR_Request_get_ptr(awaited, sreq);
    return sreq ? MPIDI_CH3I_Completed_if_failed(sreq, mpi_errno) : mpi_errno;
}

/* A close packet that finds its peer lost: the loss, handled meanwhile (MPIDI_CH3I_Fail_vc), already
 * ended the VC's close handshake for CH3 (a VC in LOCAL_CLOSE or CLOSE_ACKED becomes MORIBUND and no
 * longer counts as an outstanding close). MPI_Finalize goes on to the other VCs instead of failing:
 * with its association gone unseen, the first send to a rank that died is often this one. */
static int close_to_lost_peer(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt, int mpi_errno)
{
    if (mpi_errno != MPI_SUCCESS && pkt->type == MPIDI_CH3_PKT_CLOSE &&
        vc->state == MPIDI_VC_STATE_MORIBUND)
        return MPI_SUCCESS;
    return mpi_errno;
}

static int start_msg(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIR_Request ** sreq_ptr)
{
    const MPIDI_CH3_Pkt_t *pkt = (const MPIDI_CH3_Pkt_t *) iov[0].iov_base;
    MPI_Request awaited = MPIDI_CH3I_Answer_asked(pkt);
    int mpi_errno;
    if (unreachable_rma(vc, pkt))
        return rma_to_lost_peer(vc, pkt, MPIDI_CH3I_Send_request_create(pkt), sreq_ptr);
    MPIDI_CH3I_Target_sending(vc, pkt);
    if (!(MPIDI_CH3I_Ext()->start_msg && MPIDI_CH3I_Ext()->start_msg(vc, iov, n, sreq_ptr, &mpi_errno)))
        mpi_errno = MPIDI_CH3I_Start_msg_now(vc, iov, n, sreq_ptr);
    mpi_errno = close_to_lost_peer(vc, pkt, mpi_errno);
    return rndv_failed_here(pkt, awaited, awaited_if_sent(vc, awaited, mpi_errno));
}

int MPIDI_CH3I_Start_msg_now(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIR_Request ** sreq_ptr)
{
    sctpm_key key;
    size_t total = 0;
    int rc;
    *sreq_ptr = NULL;
    if (MPIDI_CH3I_VC_peer(vc) < 0)
        return MPIDI_CH3I_Peer_error(vc, vc->ch.failed ? -ECONNRESET : -EHOSTUNREACH);
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    if (total <= MPIDI_CH3I_COPY_LIMIT) {
        MPIDI_CH3I_Key_of((MPIDI_CH3_Pkt_t *) iov[0].iov_base, NULL, &key);
        rc = sctpm_send_copy(MPIDI_CH3I_sctp, vc->ch.peer, &key, iov, n);
        if (rc < 0)
            return MPIDI_CH3I_Peer_error(vc, rc);
        count_control(vc, &key);
        return MPI_SUCCESS;
    }
    /* Large (e.g. a PUT's origin data): the caller's buffers stay valid until the request completes. */
    MPIR_Request *sreq = MPIDI_CH3I_Send_request_create(iov[0].iov_base);
    struct iovec local[MPL_IOV_LIMIT + 1];
    if (sreq == NULL)   /* an mpi_errno, not a -errno like rc */
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomemreq", 0);
    for (int i = 1; i < n; i++)
        local[i] = iov[i];
    int mpi_errno = MPIDI_CH3I_Send_request_now(vc, sreq, local, n);
    if (mpi_errno != MPI_SUCCESS && !MPIR_Request_is_complete(sreq)) {
        /* CH3 drops the request of a start that failed: both references are ours to release */
        MPIR_Object_set_ref(sreq, 1);
        MPIR_Request_free(sreq);
        sreq = NULL;
    }
    *sreq_ptr = sreq;
    return mpi_errno;
}

int MPIDI_CH3_iStartMsg(MPIDI_VC_t * vc, void *pkt, intptr_t pkt_sz, MPIR_Request ** sreq_ptr)
{
    struct iovec iov = { pkt, sizeof(MPIDI_CH3_Pkt_t) }; /* receivers read fixed-size headers */
    MPIR_Assert(pkt_sz <= (intptr_t) sizeof(MPIDI_CH3_Pkt_t));
    return start_msg(vc, &iov, 1, sreq_ptr);
}

int MPIDI_CH3_iStartMsgv(MPIDI_VC_t * vc, struct iovec *iov, int n_iov, MPIR_Request ** sreq_ptr)
{
    struct iovec local[MPL_IOV_LIMIT + 1];
    MPIR_Assert(n_iov <= MPL_IOV_LIMIT);
    for (int i = 0; i < n_iov; i++)
        local[i] = iov[i];
    local[0].iov_len = sizeof(MPIDI_CH3_Pkt_t);
    return start_msg(vc, local, n_iov, sreq_ptr);
}
