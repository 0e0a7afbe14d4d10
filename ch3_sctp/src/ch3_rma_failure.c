/* ch3:sctp: one-sided operations with a peer that died. CH3 4.0.2 fails only posted receives when
 * a VC dies; its RMA waits (MPI_Win_flush, MPI_Win_unlock, the end of a fence or PSCW epoch, an
 * Rget) would wait forever for acknowledgements and responses the dead target never sends. So:
 * - the requests that wait for a response (GET, GET_ACCUM, FOP, CAS) are listed per VC from the
 *   send funnels until their response arrives; when the peer is lost they complete with the
 *   peer's error, and so do the user requests (MPI_Rget, ...) behind them;
 * - operations to it that CH3 has not issued yet are dropped, their user requests failed;
 * - the acknowledgements expected from the dead target are dropped, a lock request it never
 *   answered counts as granted, and the target is left "owing a flush", so every later flush,
 *   unlock or epoch end towards it sends a packet and fails with the peer's error;
 * - if anything was outstanding, the progress call that saw the loss returns that error too,
 *   so a flush already waiting fails instead of succeeding on dropped acknowledgements.
 * Not covered: the target side (a lock the dead origin held on our window stays held, and a
 * fence or MPI_Win_wait counting on its completion waits), and MPI_Win_lock_all's lock requests
 * (MPI_MODE_NOCHECK avoids them). */
#include "mpidi_ch3_impl.h"
#include "mpidrma.h"

MPI_Request MPIDI_CH3I_Rma_awaited(const MPIDI_CH3_Pkt_t * pkt)
{
    switch (pkt->type) {
        case MPIDI_CH3_PKT_GET:
            return pkt->get.request_handle;
        case MPIDI_CH3_PKT_GET_ACCUM:
            return pkt->get_accum.request_handle;
        case MPIDI_CH3_PKT_FOP:
            return pkt->fop.request_handle;
        case MPIDI_CH3_PKT_CAS_IMMED:
            return pkt->cas.request_handle;
        default:
            return MPI_REQUEST_NULL;
    }
}

/* The live request behind a listed handle if it still awaits vc's answer, else NULL. A handle can
 * go stale: CH3 frees the request of an operation whose piggybacked lock the target discarded
 * (and issues it again later with a new one); a freed request has no references left, and a
 * request made anew from the same object had awaited_from reset (MPIDI_CH3_REQUEST_INIT). */
static MPIR_Request *still_awaiting(MPIDI_VC_t * vc, MPI_Request handle)
{
    MPIR_Request *req;
    MPIR_Request_get_ptr(handle, req);
    if (!req || req->ch.awaited_from != vc || MPIR_Object_get_ref(req) <= 0 ||
        MPIR_Request_is_complete(req))
        return NULL;
    return req;
}

/* Drop the stale handles (before the list grows). */
static void prune(MPIDI_VC_t * vc)
{
    MPIDI_CH3I_VC *ch = &vc->ch;
    int kept = 0;
    for (int i = 0; i < ch->awaiting_n; i++)
        if (still_awaiting(vc, ch->awaiting[i]))
            ch->awaiting[kept++] = ch->awaiting[i];
    ch->awaiting_n = kept;
}

void MPIDI_CH3I_Rma_await(MPIDI_VC_t * vc, MPI_Request handle)
{
    MPIDI_CH3I_VC *ch = &vc->ch;
    MPIR_Request *req;
    if (handle == MPI_REQUEST_NULL)
        return;
    MPIR_Request_get_ptr(handle, req);
    if (!req || req->ch.awaited_from == vc)
        return;         /* listed already (an operation issued again) */
    req->ch.awaited_from = vc;
    if (ch->awaiting_n == ch->awaiting_cap)
        prune(vc);
    if (ch->awaiting_n == ch->awaiting_cap) {
        int cap = ch->awaiting_cap ? 2 * ch->awaiting_cap : 16;
        MPI_Request *grown = MPL_realloc(ch->awaiting, cap * sizeof(*grown), MPL_MEM_RMA);
        if (!grown)
            return;     /* untracked: only a peer failure would then leave it waiting */
        ch->awaiting = grown;
        ch->awaiting_cap = cap;
    }
    ch->awaiting[ch->awaiting_n++] = handle;
}

void MPIDI_CH3I_Rma_answered(MPIDI_VC_t * vc, MPI_Request handle)
{
    MPIDI_CH3I_VC *ch = &vc->ch;
    MPIR_Request *req;
    if (handle == MPI_REQUEST_NULL)
        return;
    MPIR_Request_get_ptr(handle, req);
    if (req && req->ch.awaited_from == vc)
        req->ch.awaited_from = NULL;
    for (int i = ch->awaiting_n - 1; i >= 0; i--)
        if (ch->awaiting[i] == handle) {
            ch->awaiting[i] = ch->awaiting[--ch->awaiting_n];
            return;
        }
}

/* The response handlers, wrapped to take their request off the list first. */
static MPIDI_CH3_PktHandler_Fcn *response_handler[MPIDI_CH3_PKT_END_CH3 + 1];

static MPI_Request answered_by(const MPIDI_CH3_Pkt_t * pkt)
{
    switch (pkt->type) {
        case MPIDI_CH3_PKT_GET_RESP:
        case MPIDI_CH3_PKT_GET_RESP_IMMED:
            return pkt->get_resp.request_handle;
        case MPIDI_CH3_PKT_GET_ACCUM_RESP:
        case MPIDI_CH3_PKT_GET_ACCUM_RESP_IMMED:
            return pkt->get_accum_resp.request_handle;
        case MPIDI_CH3_PKT_FOP_RESP:
        case MPIDI_CH3_PKT_FOP_RESP_IMMED:
            return pkt->fop_resp.request_handle;
        case MPIDI_CH3_PKT_CAS_RESP_IMMED:
            return pkt->cas_resp.request_handle;
        default:
            return MPI_REQUEST_NULL;
    }
}

static int response_arrived(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                            MPIR_Request ** rreqp)
{
    MPIDI_CH3_PktHandler_Fcn *handler = response_handler[pkt->type];
    MPIDI_CH3I_Rma_answered(vc, answered_by(pkt));
    return handler(vc, pkt, data, buflen, rreqp);
}

void MPIDI_CH3I_Rma_wrap_handlers(MPIDI_CH3_PktHandler_Fcn ** table)
{
    static const MPIDI_CH3_Pkt_type_t responses[] = {
        MPIDI_CH3_PKT_GET_RESP, MPIDI_CH3_PKT_GET_RESP_IMMED, MPIDI_CH3_PKT_GET_ACCUM_RESP,
        MPIDI_CH3_PKT_GET_ACCUM_RESP_IMMED, MPIDI_CH3_PKT_FOP_RESP, MPIDI_CH3_PKT_FOP_RESP_IMMED,
        MPIDI_CH3_PKT_CAS_RESP_IMMED
    };
    for (size_t i = 0; i < sizeof(responses) / sizeof(responses[0]); i++) {
        if (table[responses[i]] != response_arrived)   /* not wrapped already */
            response_handler[responses[i]] = MPIDI_CH3I_Pkt_wrap(table, responses[i], response_arrived);
    }
}

void MPIDI_CH3I_Complete_with_error(MPIR_Request * req, int mpi_errno)
{
    req->status.MPI_ERROR = mpi_errno;
    if (req->dev.request_completed_cb == MPIDI_CH3_Req_handler_rma_op_complete &&
        req->dev.request_handle != MPI_REQUEST_NULL) {
        MPIR_Request *ureq;     /* the MPI_Rput/MPI_Rget request it completes */
        MPIR_Request_get_ptr(req->dev.request_handle, ureq);
        if (ureq)
            ureq->status.MPI_ERROR = mpi_errno;
    }
    MPID_Request_complete(req);
}

int MPIDI_CH3I_Win_rank_of(MPIR_Win * win_ptr, MPIDI_VC_t * vc)
{
    MPIR_Comm *comm = win_ptr->comm_ptr;
    for (int i = 0; i < comm->local_size; i++) {
        MPIDI_VC_t *v;
        MPIDI_Comm_get_vc(comm, i, &v);
        if (v == vc)
            return i;
    }
    return -1;
}

/* Operations not issued yet (CH3 issues them from its progress hook): dropped, their user
 * requests completed with the error. Not called from within CH3's issuing, which walks the list. */
static int drop_unissued(MPIR_Win * w, MPIDI_RMA_Target_t * t, int mpi_errno)
{
    int dropped = 0;
    MPIDI_RMA_Op_t *op = t->pending_net_ops_list_head;
    while (op) {
        MPIDI_RMA_Op_t *next = op->next;
        int done;
        if (op->ureq)
            op->ureq->status.MPI_ERROR = mpi_errno;
        check_and_set_req_completion(w, t, op, &done);  /* frees op */
        dropped = 1;
        op = next;
    }
    t->next_op_to_issue = NULL;
    return dropped;
}

/* Stop every window waiting on the dead target; 1 if one was waiting. */
static int release_windows(MPIR_Win * list, MPIDI_VC_t * vc, int mpi_errno, int drop_ops)
{
    int waited = 0;
    MPIR_Win *next;
    for (MPIR_Win * w = list; w; w = next) {
        MPIDI_RMA_Target_t *t = NULL;
        int rank = MPIDI_CH3I_Win_rank_of(w, vc);
        next = w->next; /* dropping a window's last operations moves it to the inactive list */
        if (rank < 0 || rank == w->comm_ptr->rank ||
            MPIDI_CH3I_Win_find_target(w, rank, &t) != MPI_SUCCESS || !t)
            continue;
        if (drop_ops)
            waited |= drop_unissued(w, t, mpi_errno);
        while (t->sync.outstanding_acks > 0) {
            MPIDI_CH3I_RMA_Handle_ack(w, rank);
            waited = 1;
        }
        if (t->access_state == MPIDI_RMA_LOCK_ISSUED) {
            t->access_state = MPIDI_RMA_LOCK_GRANTED;  /* its operations now go, and fail */
            waited = 1;
        }
        t->num_ops_flush_not_issued = 1;        /* a later flush or unlock must send, and fail */
    }
    return waited;
}

int MPIDI_CH3I_Rma_peer_lost(MPIDI_VC_t * vc, int mpi_errno)
{
    /* Detached first: completing a request runs CH3 callbacks, which must not meet a
     * half-walked list. */
    MPI_Request *awaiting = vc->ch.awaiting;
    int n = vc->ch.awaiting_n, waited = 0;
    vc->ch.awaiting = NULL;
    vc->ch.awaiting_n = vc->ch.awaiting_cap = 0;
    waited |= release_windows(MPIDI_RMA_Win_active_list_head, vc, mpi_errno, 1);
    waited |= release_windows(MPIDI_RMA_Win_inactive_list_head, vc, mpi_errno, 1);
    for (int i = 0; i < n; i++) {
        MPIR_Request *req = still_awaiting(vc, awaiting[i]);
        if (req) {
            req->ch.awaited_from = NULL;
            MPIDI_CH3I_Complete_with_error(req, mpi_errno);
            waited = 1;
        }
    }
    MPL_free(awaiting);
    return waited;
}

void MPIDI_CH3I_Rma_send_failed(MPIDI_VC_t * vc)
{
    release_windows(MPIDI_RMA_Win_active_list_head, vc, MPI_SUCCESS, 0);
    release_windows(MPIDI_RMA_Win_inactive_list_head, vc, MPI_SUCCESS, 0);
}

void MPIDI_CH3I_Rma_vc_destroy(MPIDI_VC_t * vc)
{
    MPL_free(vc->ch.awaiting);
    vc->ch.awaiting = NULL;
    vc->ch.awaiting_n = vc->ch.awaiting_cap = 0;
}
