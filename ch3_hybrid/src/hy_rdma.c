/* ch3:hybrid: PUT by RDMA Write and GET by RDMA Read, at the origin. Only operations CH3 issues
 * through its fast path qualify: contiguous data of a predefined type, a target window with an
 * STag, at least the threshold, and no lock request piggybacked (a target may queue such an
 * operation until the lock is free, and RDMA would not wait). Anything else returns 0 and takes
 * the SCTP path, which stays correct for every operation. */
#include "mpidi_ch3_impl.h"

static int lock_requested(int pkt_flags)
{
    return (pkt_flags & (MPIDI_CH3_PKT_FLAG_RMA_LOCK_SHARED | MPIDI_CH3_PKT_FLAG_RMA_LOCK_EXCLUSIVE)) != 0;
}

/* 1 if an RDMA transfer of len bytes to this peer may start now (starting a connect if none). */
static int rdma_usable(MPIDI_VC_t * vc, size_t len, MPI_Aint threshold)
{
    if (!MPIDI_CH3I_Hy_config.rdma || len < (size_t) threshold || len > 0x7fffffffu)
        return 0;
    if (!MPIDI_CH3I_Hy_rnic.dev)
        return 0;
    if (vc->ch.hy.state == MPIDI_CH3I_HY_QP_NONE)
        MPIDI_CH3I_Hy_connect(vc);      /* on demand; this operation still takes SCTP */
    return MPIDI_CH3I_Hy_qp_ready(vc);
}

/* A signaled RDMA Write or Read of one local piece to (stag, remote). */
static struct iwv_send_wr rdma_wr(enum iwv_wr_opcode op, MPIDI_CH3I_Hy_held * h, struct iwv_sge *local,
                                  const void *remote, uint32_t stag)
{
    struct iwv_send_wr wr;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = (uint64_t) (uintptr_t) h;
    wr.opcode = op;
    wr.sg_list = local;
    wr.num_sge = 1;
    wr.send_flags = IWV_SEND_SIGNALED;
    wr.rdma.remote_addr = (uint64_t) (uintptr_t) remote;
    wr.rdma.rkey = stag;
    return wr;
}

static MPIDI_CH3I_Hy_held *new_transfer(MPIDI_CH3I_Hy_held_kind kind, const void *pkt, void *buf,
                                        size_t len)
{
    MPIDI_CH3I_Hy_held *h = (MPIDI_CH3I_Hy_held *) MPL_calloc(1, sizeof(*h), MPL_MEM_BUFFER);
    if (!h)
        return NULL;
    h->kind = kind;
    h->len = len;
    memcpy(&h->pkt, pkt, sizeof(h->pkt));
    h->mr = MPIDI_CH3I_Hy_registered(buf, len);
    if (!h->mr) {
        h->mr = iwv_reg_mr(MPIDI_CH3I_Hy_rnic.pd, buf, len, IWV_ACCESS_LOCAL_WRITE);
        h->own_mr = 1;
    }
    if (!h->mr) {
        MPL_free(h);
        return NULL;
    }
    return h;
}

static void drop_transfer(MPIDI_CH3I_Hy_held * h)
{
    if (h->own_mr)
        iwv_dereg_mr(h->mr);
    MPL_free(h);
}

/* Post the chain and hold the transfer in issue order; 0 if the QP refused the first WR. If it
 * refused a later one (a full queue), what went is awaited and the transfer then resent on SCTP. */
static int post(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h, struct iwv_send_wr *wr)
{
    struct iwv_send_wr *bad = NULL;
    if (iwv_post_send(vc->ch.hy.qp, wr, &bad) != 0) {
        if (bad == wr)
            return 0;
        h->failed = 1;
    }
    for (struct iwv_send_wr * w = wr; w && w != bad; w = w->next)
        h->pending++;
    MPIDI_CH3I_Hy_rnic.in_flight++;
    MPIDI_CH3I_Hy_hold(vc, h);
    return 1;
}

int MPIDI_CH3I_Hy_try_put(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIR_Request ** sreq_ptr)
{
    const MPIDI_CH3_Pkt_put_t *put = &((const MPIDI_CH3_Pkt_t *) iov[0].iov_base)->put;
    MPIDI_CH3I_Hy_held *h;
    uint32_t stag;
    int rc;
    if (n != 2 || lock_requested(put->pkt_flags) || !rdma_usable(vc, iov[1].iov_len,
                                                                   MPIDI_CH3I_Hy_config.put_threshold))
        return 0;
    stag = MPIDI_CH3I_Hy_stag_for(vc, put->target_win_handle, put->addr, iov[1].iov_len);
    if (!stag)
        return 0;
    h = new_transfer(MPIDI_CH3I_HY_HELD_RDMA_PUT, put, iov[1].iov_base, iov[1].iov_len);
    if (!h)
        return 0;
    h->sreq = MPIDI_CH3I_Send_request_create(put);
    if (!h->sreq) {
        drop_transfer(h);
        return 0;
    }
    h->iov[1] = iov[1];         /* for a resend on SCTP if the Write fails */
    h->n = 2;
    {
        struct iwv_sge data = { (uint64_t) (uintptr_t) iov[1].iov_base, (uint32_t) iov[1].iov_len,
            h->mr->lkey
        };
        struct iwv_sge fence = { (uint64_t) (uintptr_t) MPIDI_CH3I_Hy_rnic.fence_byte, 1,
            MPIDI_CH3I_Hy_rnic.scratch->lkey
        };
        struct iwv_send_wr write = rdma_wr(IWV_WR_RDMA_WRITE, h, &data, put->addr, stag);
        /* Served only after the Write is placed: its completion says the data is there. */
        struct iwv_send_wr read = rdma_wr(IWV_WR_RDMA_READ, h, &fence, put->addr, stag);
        write.next = &read;
        rc = post(vc, h, &write);
    }
    if (!rc) {
        MPIR_Request_free(h->sreq);     /* both references */
        MPIR_Request_free(h->sreq);
        drop_transfer(h);
        return 0;
    }
    *sreq_ptr = h->sreq;
    return 1;
}

int MPIDI_CH3I_Hy_try_get(MPIDI_VC_t * vc, struct iovec *iov, int n)
{
    const MPIDI_CH3_Pkt_get_t *get = &((const MPIDI_CH3_Pkt_t *) iov[0].iov_base)->get;
    MPIR_Request *rreq;
    MPI_Aint type_size, len;
    MPIDI_CH3I_Hy_held *h;
    uint32_t stag;
    int rc;
    if (n != 1 || lock_requested(get->pkt_flags) || (get->pkt_flags & MPIDI_CH3_PKT_FLAG_RMA_IMMED_RESP)
        || !MPIR_DATATYPE_IS_PREDEFINED(get->datatype))
        return 0;
    MPIR_Datatype_get_size_macro(get->datatype, type_size);
    len = type_size * get->count;
    MPIR_Request_get_ptr(get->request_handle, rreq);
    if (!rreq || !MPIR_DATATYPE_IS_PREDEFINED(rreq->dev.datatype))
        return 0;
    {
        MPI_Aint origin_size;
        MPIR_Datatype_get_size_macro(rreq->dev.datatype, origin_size);
        if (origin_size * rreq->dev.user_count != len)
            return 0;
    }
    if (!rdma_usable(vc, (size_t) len, MPIDI_CH3I_Hy_config.get_threshold))
        return 0;
    stag = MPIDI_CH3I_Hy_stag_for(vc, get->target_win_handle, get->addr, (size_t) len);
    if (!stag)
        return 0;
    h = new_transfer(MPIDI_CH3I_HY_HELD_RDMA_GET, get, rreq->dev.user_buf, (size_t) len);
    if (!h)
        return 0;
    {
        struct iwv_sge into = { (uint64_t) (uintptr_t) rreq->dev.user_buf, (uint32_t) len, h->mr->lkey };
        struct iwv_send_wr read = rdma_wr(IWV_WR_RDMA_READ, h, &into, get->addr, stag);
        rc = post(vc, h, &read);
    }
    if (!rc)
        drop_transfer(h);
    return rc;
}
