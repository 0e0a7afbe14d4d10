/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: one-sided operations with a peer that died. CH3 4.0.2 fails only posted receives when
 * a VC dies; its RMA waits (MPI_Win_flush, MPI_Win_unlock, the end of a fence or PSCW epoch, an
 * Rget) would wait forever for acknowledgements and responses the dead target never sends. So:
 * - the requests that wait for a response (GET, GET_ACCUM, FOP, CAS) fail with the peer's error,
 *   and so do the user requests (MPI_Rget, ...) behind them (ch3_awaited.c, after this file);
 * - operations to it that CH3 has not issued yet are dropped, their user requests failed;
 * - the acknowledgements expected from the dead target are dropped, a lock request it never
 *   answered counts as granted, and the target is left "owing a flush", so every later flush,
 *   unlock or epoch end towards it sends a packet and fails with the peer's error;
 * - if anything was outstanding, the progress call that saw the loss returns that error too,
 *   so a flush already waiting fails instead of succeeding on dropped acknowledgements.
 * - an operation issued after the loss does not fail its send: CH3's issue_ops_target (4.0.2 and
 *   5.0.1) returns on an error without clearing its static re-entrance mark, and from then on
 *   issues nothing to any target of any window. Its send fails through its request instead, in
 *   the next progress call (MPIDI_CH3I_Fail_later, ch3_awaited.c), with the rest above.
 * The target side (a dead origin's locks on our windows, an exposure epoch waiting for its
 * completion) is ch3_rma_dead_origin.c.
 * MPI_Win_lock_all's lock requests are per target too: each window has a target entry per rank
 * (ch3_win_fns.c), so CH3 never takes its window-wide protocol, whose requests have no target to
 * find them by. */
#include "mpidi_ch3_impl.h"
#include "mpidrma.h"

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

/* A send failed while the peer's loss was being handled (ch3:hybrid fails its held sends
 * first, and completing them issues the next operations, whose senders drop the error): what
 * that released counts as waited when the loss reaches this file, so the flush that waited for
 * a dropped acknowledgement gets the error. Later failed sends raise nothing: whatever they
 * released is reported by the next flush or unlock towards the dead peer. */
static MPIDI_VC_t *released_during_loss;

int MPIDI_CH3I_Rma_targets_lost(MPIDI_VC_t * vc, int mpi_errno)
{
    int waited = release_windows(MPIDI_RMA_Win_active_list_head, vc, mpi_errno, 1);
    waited |= release_windows(MPIDI_RMA_Win_inactive_list_head, vc, mpi_errno, 1);
    return waited;
}

int MPIDI_CH3I_Rma_peer_lost(MPIDI_VC_t * vc, int mpi_errno)
{
    int waited = released_during_loss == vc;
    released_during_loss = NULL;
    waited |= MPIDI_CH3I_Rma_targets_lost(vc, mpi_errno);
    waited |= MPIDI_CH3I_Rma_origin_lost(vc, mpi_errno);      /* the target side: ch3_rma_dead_origin.c */
    return waited;
}

int MPIDI_CH3I_Is_accumulate(const MPIDI_CH3_Pkt_t * pkt)
{
    switch (pkt->type) {
        case MPIDI_CH3_PKT_ACCUMULATE:
        case MPIDI_CH3_PKT_ACCUMULATE_IMMED:
        case MPIDI_CH3_PKT_GET_ACCUM:
        case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
        case MPIDI_CH3_PKT_FOP:
        case MPIDI_CH3_PKT_FOP_IMMED:
        case MPIDI_CH3_PKT_CAS_IMMED:
            return 1;
        default:
            return 0;
    }
}

int MPIDI_CH3I_Is_rma_operation(const MPIDI_CH3_Pkt_t * pkt)
{
    return pkt->type == MPIDI_CH3_PKT_PUT || pkt->type == MPIDI_CH3_PKT_PUT_IMMED ||
        pkt->type == MPIDI_CH3_PKT_GET || MPIDI_CH3I_Is_accumulate(pkt);
}

void MPIDI_CH3I_Rma_send_failed(MPIDI_VC_t * vc)
{
    int waited = release_windows(MPIDI_RMA_Win_active_list_head, vc, MPI_SUCCESS, 0);
    waited |= release_windows(MPIDI_RMA_Win_inactive_list_head, vc, MPI_SUCCESS, 0);
    if (waited)
        released_during_loss = vc;
}
