/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: requests that wait for a peer's answer, listed per VC so that they fail when the peer
 * is lost. CH3 4.0.2 fails only posted receives when a VC dies; a request that has sent its
 * packet and waits for the answer is in no queue CH3 walks, so without this list it would wait
 * forever:
 * - a rendezvous send after its request-to-send, until the clear-to-send;
 * - a rendezvous receive after its clear-to-send, until the data's first packet (from then on it
 *   is the VC's receive being filled, which the channel fails itself);
 * - a synchronous eager send, until the receiver's acknowledgement;
 * - GET, GET_ACCUMULATE, FOP and CAS, until their response (and the MPI_Rget, ... behind them).
 * The send funnels list the request once its packet went (ch3_send.c); the answer's handler,
 * wrapped here, marks it answered first. An answered or completed request (a cancelled send
 * completes) no longer counts; its handle leaves the list when the list is next pruned. */
#include "mpidi_ch3_impl.h"

MPI_Request MPIDI_CH3I_Answer_asked(const MPIDI_CH3_Pkt_t * pkt)
{
    switch (pkt->type) {
        case MPIDI_CH3_PKT_RNDV_REQ_TO_SEND:
            return pkt->rndv_req_to_send.sender_req_id;
        case MPIDI_CH3_PKT_RNDV_CLR_TO_SEND:
            return pkt->rndv_clr_to_send.receiver_req_id;
        case MPIDI_CH3_PKT_EAGER_SYNC_SEND:
            return pkt->eager_sync_send.sender_req_id;
        case MPIDI_CH3_PKT_GET:
            return pkt->get.request_handle;
        case MPIDI_CH3_PKT_GET_ACCUM:
        case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
            return pkt->get_accum.request_handle;
        case MPIDI_CH3_PKT_FOP:
        case MPIDI_CH3_PKT_FOP_IMMED:
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

void MPIDI_CH3I_Await_answer(MPIDI_VC_t * vc, MPI_Request handle)
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
        MPI_Request *grown = MPL_realloc(ch->awaiting, cap * sizeof(*grown), MPL_MEM_OTHER);
        if (!grown)
            return;     /* untracked: only a peer failure would then leave it waiting */
        ch->awaiting = grown;
        ch->awaiting_cap = cap;
    }
    ch->awaiting[ch->awaiting_n++] = handle;
}

/* The handle stays listed, stale, until prune drops it when the list is full: looking it up
 * here cost a scan per answer (14% of the time of 20000 rendezvous sends posted at once). */
void MPIDI_CH3I_Answered(MPIDI_VC_t * vc, MPI_Request handle)
{
    MPIR_Request *req;
    if (handle == MPI_REQUEST_NULL)
        return;
    MPIR_Request_get_ptr(handle, req);
    if (req && req->ch.awaited_from == vc)
        req->ch.awaited_from = NULL;
}

/* The response handlers, wrapped to mark their request answered first. */
static MPIDI_CH3_PktHandler_Fcn *response_handler[MPIDI_CH3_PKT_END_CH3 + 1];

static MPI_Request answered_by(const MPIDI_CH3_Pkt_t * pkt)
{
    switch (pkt->type) {
        case MPIDI_CH3_PKT_RNDV_CLR_TO_SEND:
            return pkt->rndv_clr_to_send.sender_req_id;
        case MPIDI_CH3_PKT_RNDV_SEND:
            return pkt->rndv_send.receiver_req_id;
        case MPIDI_CH3_PKT_EAGER_SYNC_ACK:
            return pkt->eager_sync_ack.sender_req_id;
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
    MPIDI_CH3I_Answered(vc, answered_by(pkt));
    return handler(vc, pkt, data, buflen, rreqp);
}

void MPIDI_CH3I_Wrap_answers(MPIDI_CH3_PktHandler_Fcn ** table)
{
    static const MPIDI_CH3_Pkt_type_t responses[] = {
        MPIDI_CH3_PKT_RNDV_CLR_TO_SEND, MPIDI_CH3_PKT_RNDV_SEND, MPIDI_CH3_PKT_EAGER_SYNC_ACK,
        MPIDI_CH3_PKT_GET_RESP, MPIDI_CH3_PKT_GET_RESP_IMMED, MPIDI_CH3_PKT_GET_ACCUM_RESP,
        MPIDI_CH3_PKT_GET_ACCUM_RESP_IMMED, MPIDI_CH3_PKT_FOP_RESP, MPIDI_CH3_PKT_FOP_RESP_IMMED,
        MPIDI_CH3_PKT_CAS_RESP_IMMED
    };
    for (size_t i = 0; i < sizeof(responses) / sizeof(responses[0]); i++) {
        if (table[responses[i]] != response_arrived)   /* not wrapped already */
            response_handler[responses[i]] = MPIDI_CH3I_Pkt_wrap(table, responses[i], response_arrived);
    }
}

/* Fail vc's listed requests, after `release` stopped its windows' waits. */
static int fail_listed(MPIDI_VC_t * vc, int mpi_errno, int (*release) (MPIDI_VC_t *, int))
{
    /* Detached first: completing a request runs CH3 callbacks, which must not meet a
     * half-walked list. The windows go first, as their requests' callbacks expect. */
    MPI_Request *awaiting = vc->ch.awaiting;
    int n = vc->ch.awaiting_n, waited;
    vc->ch.awaiting = NULL;
    vc->ch.awaiting_n = vc->ch.awaiting_cap = 0;
    waited = release(vc, mpi_errno);
    for (int i = 0; i < n; i++) {
        MPIR_Request *req = still_awaiting(vc, awaiting[i]);
        if (req) {
            req->ch.awaited_from = NULL;
            /* A send or a receive carries the error to the call that waits on it, which frees
             * it. Raised from progress as well, the error would fail whichever call polls next
             * (MPI_Test returns a progress error before it looks at its request, which then
             * stays allocated, with a reference on its communicator). An RMA operation's
             * request is internal: only a raised error reaches its window's call. */
            if (req->kind != MPIR_REQUEST_KIND__SEND && req->kind != MPIR_REQUEST_KIND__RECV)
                waited = 1;
            MPIDI_CH3I_Complete_with_error(req, mpi_errno);
        }
    }
    MPL_free(awaiting);
    return waited;
}

int MPIDI_CH3I_Fail_awaiting(MPIDI_VC_t * vc, int mpi_errno)
{
    return fail_listed(vc, mpi_errno, MPIDI_CH3I_Rma_peer_lost);
}

/* The peers with requests to fail late: a one-sided operation CH3 issued to a peer that was
 * already lost (ch3_send.c). Its send must not return the error (ch3_rma_failure.c says why), so
 * its request is listed as awaiting, and so is the answer a GET-like one asked for; the next
 * progress call fails them and the windows' waits on that peer, as the loss itself did. */
static MPIDI_VC_t *late; /* through vc->ch.late_next */

void MPIDI_CH3I_Fail_later(MPIDI_VC_t * vc, MPIR_Request * req)
{
    MPIDI_CH3I_Await_answer(vc, req->handle);
    if (vc->ch.late_listed)
        return;
    vc->ch.late_listed = 1;
    vc->ch.late_next = late;
    late = vc;
}

int MPIDI_CH3I_Fail_late(void)
{
    int mpi_errno = MPI_SUCCESS;
    while (late) {
        MPIDI_VC_t *vc = late;
        late = vc->ch.late_next;
        vc->ch.late_listed = 0;
        /* Not Peer_error: the acknowledgements it would drop are what a flush may wait for, and
         * Rma_targets_lost must see them to say so. */
        int e = MPIDI_CH3I_Peer_error_code(vc, vc->ch.failed ? -ECONNRESET : -EHOSTUNREACH);
        if (fail_listed(vc, e, MPIDI_CH3I_Rma_targets_lost))
            mpi_errno = MPIDI_CH3I_FIRST_ERROR(mpi_errno, e);
    }
    return mpi_errno;
}

void MPIDI_CH3I_Awaiting_vc_destroy(MPIDI_VC_t * vc)
{
    for (MPIDI_VC_t ** at = &late; *at; at = &(*at)->ch.late_next)
        if (*at == vc) {
            *at = vc->ch.late_next;
            break;
        }
    MPL_free(vc->ch.awaiting);
    vc->ch.awaiting = NULL;
    vc->ch.awaiting_n = vc->ch.awaiting_cap = 0;
}
