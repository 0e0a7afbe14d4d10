/* ch3:hybrid: packets whose data RDMA already placed. Each is a CH3 PUT, GET or GET response under
 * a channel type; its handler runs CH3's own handler for the original type with no data bytes,
 * then finishes the request at once instead of waiting for bytes from the wire. All of CH3's
 * flag, lock, acknowledgement and counter logic runs as it does for data that came on SCTP. */
#include "mpidi_ch3_impl.h"

int MPIDI_CH3I_Hy_answering_placed_get = 0;

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

static int run_as(MPIDI_CH3_Pkt_type_t type, MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt,
                  intptr_t * buflen, MPIR_Request ** rreqp)
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
    if (type == MPIDI_CH3_PKT_GET)
        MPIDI_CH3I_Hy_answering_placed_get = 1;
    mpi_errno = handler(vc, pkt, NULL, &none, &rreq);
    MPIDI_CH3I_Hy_answering_placed_get = 0;
    if (!mpi_errno && rreq)
        mpi_errno = data_already_placed(vc, rreq);
    return mpi_errno;
}

static int put_placed(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                      MPIR_Request ** rreqp)
{
    (void) data;
    return run_as(MPIDI_CH3_PKT_PUT, vc, pkt, buflen, rreqp);
}

static int get_placed(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                      MPIR_Request ** rreqp)
{
    (void) data;
    return run_as(MPIDI_CH3_PKT_GET, vc, pkt, buflen, rreqp);
}

static int get_resp_placed(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                           MPIR_Request ** rreqp)
{
    (void) data;
    return run_as(MPIDI_CH3_PKT_GET_RESP, vc, pkt, buflen, rreqp);
}

void MPIDI_CH3I_Hy_register_handlers(MPIDI_CH3_PktHandler_Fcn ** table)
{
    table[MPIDI_CH3_PKT_HY_PUT_PLACED] = put_placed;
    table[MPIDI_CH3_PKT_HY_GET_PLACED] = get_placed;
    table[MPIDI_CH3_PKT_HY_GET_RESP_PLACED] = get_resp_placed;
    table[MPIDI_CH3_PKT_HY_CONNECT_ME] = MPIDI_CH3I_Hy_pkt_connect_me;
}
