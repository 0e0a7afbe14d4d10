/* ch3:hybrid: packets whose data RDMA already placed. Each is a CH3 PUT, GET or GET response under
 * a channel type; its handler runs CH3's own handler for the original type with no data bytes,
 * then finishes the request at once instead of waiting for bytes from the wire. All of CH3's
 * flag, lock, acknowledgement and counter logic runs as it does for data that came on SCTP.
 * GET_WRITE, a GET to answer by RDMA Write, also runs CH3's GET handler. */
#include "mpidi_ch3_impl.h"

MPIDI_CH3I_Hy_answer_t MPIDI_CH3I_Hy_answer;

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
                  intptr_t * buflen, MPIR_Request ** rreqp, MPIDI_CH3I_Hy_answer_t answer)
{
    MPIDI_CH3_PktHandler_Fcn *handler = NULL;
    MPIR_Request *rreq = NULL;
    intptr_t none = 0;
    int mpi_errno;
    switch (type) {
        case MPIDI_CH3_PKT_PUT:
            handler = MPIDI_CH3_PktHandler_Put;
            break;
        case MPIDI_CH3_PKT_GET:
            handler = MPIDI_CH3_PktHandler_Get;
            break;
        default:
            handler = MPIDI_CH3_PktHandler_GetResp;
            break;
    }
    pkt->type = type;
    *buflen = 0;        /* the packet carries no data */
    *rreqp = NULL;
    MPIDI_CH3I_Hy_answer = answer;
    mpi_errno = handler(vc, pkt, NULL, &none, &rreq);
    MPIDI_CH3I_Hy_answer.how = MPIDI_CH3I_HY_ANSWER_PLAIN;
    if (!mpi_errno && rreq)
        mpi_errno = data_already_placed(vc, rreq);
    return mpi_errno;
}

static int put_placed(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                      MPIR_Request ** rreqp)
{
    MPIDI_CH3I_Hy_answer_t plain = { MPIDI_CH3I_HY_ANSWER_PLAIN, 0, 0 };
    (void) data;
    return run_as(MPIDI_CH3_PKT_PUT, vc, pkt, buflen, rreqp, plain);
}

static int get_placed(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                      MPIR_Request ** rreqp)
{
    MPIDI_CH3I_Hy_answer_t placed = { MPIDI_CH3I_HY_ANSWER_PLACED, 0, 0 };
    (void) data;
    return run_as(MPIDI_CH3_PKT_GET, vc, pkt, buflen, rreqp, placed);
}

/* The pkt->get part of a GET_WRITE is CH3's GET packet as the origin issued it. */
static int get_write(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                     MPIR_Request ** rreqp)
{
    MPIDI_CH3I_Hy_answer_t write = { MPIDI_CH3I_HY_ANSWER_WRITE, pkt->hy_get_write.origin_addr,
        pkt->hy_get_write.origin_stag
    };
    (void) data;
    return run_as(MPIDI_CH3_PKT_GET, vc, pkt, buflen, rreqp, write);
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
    MPIDI_CH3I_Hy_answer_t plain = { MPIDI_CH3I_HY_ANSWER_PLAIN, 0, 0 };
    (void) data;
    MPIDI_CH3I_Hy_get_answered(pkt->get_resp.request_handle);
    MPIDI_CH3I_Rma_answered(vc, pkt->get_resp.request_handle);
    return run_as(MPIDI_CH3_PKT_GET_RESP, vc, pkt, buflen, rreqp, plain);
}

/* An RDMA Read fetched a GET's data and the GET asks the target for nothing but its flush
 * acknowledgement (a read changes nothing there) and maybe the fence counter: finish it here as
 * CH3 finishes a GET response that acknowledges, and send the target only the counter packet.
 * Saves the round trip of GET_PLACED and its response. */
int MPIDI_CH3I_Hy_get_done(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * get)
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
    if (mpi_errno || !(g->pkt_flags & MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER))
        return mpi_errno;
    {
        MPIDI_CH3_Pkt_t decr;
        struct iovec iov = { &decr, sizeof(decr) };
        MPIR_Request *sreq = NULL;
        memset(&decr, 0, sizeof(decr));
        decr.type = MPIDI_CH3_PKT_DECR_AT_COUNTER;
        decr.decr_at_cnt.target_win_handle = g->target_win_handle;
        decr.decr_at_cnt.source_win_handle = source_win;
        decr.decr_at_cnt.pkt_flags = MPIDI_CH3_PKT_FLAG_NONE;   /* acknowledged above */
        return MPIDI_CH3I_Start_msg_now(vc, &iov, 1, &sreq);
    }
}

void MPIDI_CH3I_Hy_register_handlers(MPIDI_CH3_PktHandler_Fcn ** table)
{
    table[MPIDI_CH3_PKT_HY_PUT_PLACED] = put_placed;
    table[MPIDI_CH3_PKT_HY_GET_PLACED] = get_placed;
    table[MPIDI_CH3_PKT_HY_GET_RESP_PLACED] = get_resp_placed;
    table[MPIDI_CH3_PKT_HY_GET_WRITE] = get_write;
    plain_get_resp = table[MPIDI_CH3_PKT_GET_RESP];
    table[MPIDI_CH3_PKT_GET_RESP] = get_resp;
    table[MPIDI_CH3_PKT_HY_CONNECT_ME] = MPIDI_CH3I_Hy_pkt_connect_me;
}
