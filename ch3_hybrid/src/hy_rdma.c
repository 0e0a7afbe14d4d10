/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid: PUT by RDMA Write and GET by RDMA Read (or, in the thesis' variant, by the target's
 * RDMA Write), at the origin; and that Write at the target. Only operations CH3 issues through its
 * fast path qualify: contiguous data of a predefined type, a target window with an
 * STag, at least the threshold, and no lock request piggybacked (a target may queue such an
 * operation until the lock is free, and RDMA would not wait). Anything else returns 0 and takes
 * the SCTP path, which stays correct for every operation. */
#include "mpidi_ch3_hybrid.h"

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
    if (vc->ch.hy.state == MPIDI_CH3I_HY_QP_IDLE)
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

/* Registered-memory access an origin buffer needs: local for our own Write or Read; remote too
 * when the target writes into it and reads its fence byte (GET_WRITE). */
#define LOCAL_ONLY IWV_ACCESS_LOCAL_WRITE
#define REMOTE_TOO (IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ)

/* buf's registration: a region's (which grants REMOTE_TOO), or its own (*own = 1); NULL if none. */
static struct iwv_mr *registration(void *buf, size_t len, int access, int *own)
{
    struct iwv_mr *mr = MPIDI_CH3I_Hy_registered(buf, len);
    *own = 0;
    if (mr)
        return mr;
    *own = 1;
    return iwv_reg_mr(MPIDI_CH3I_Hy_rnic.pd, buf, len, access);
}

void MPIDI_CH3I_Hy_held_to(MPIDI_CH3I_Hy_held * h, MPIDI_CH3I_Hy_held_state to)
{
    static const char *const names[] = { "queued", "posted", "failed", "abandoned" };
    static const unsigned allowed[] = { 1 << 0 | 1 << 1, 1 << 1 | 1 << 2 | 1 << 3, 1 << 2 | 1 << 3, 1 << 3 };
    MPIR_Assert(allowed[h->state] & (1u << to));        /* bit `to` of allowed[from] */
    MPL_DBG_MSG_FMT(MPIDI_CH3_DBG_OTHER, VERBOSE, (MPL_DBG_FDEST, "ch3:hybrid transfer %p to rank %d: %s -> %s",
                    (void *) h, h->vc ? h->vc->pg_rank : -1, names[h->state], names[to]));
    (void) names, (void) allowed;
    h->state = to;
}

/* Entries come from a list of spares: once it is warm, an operation allocates nothing. */
#define HY_SPARES_KEPT 256
static MPIDI_CH3I_Hy_held *spares;
static int spare_count;

MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_held_new(MPIDI_CH3I_Hy_held_kind kind)
{
    MPIDI_CH3I_Hy_held *h = spares;
    if (h) {
        spares = h->next;
        spare_count--;
        memset(h, 0, sizeof(*h));
    } else if (!(h = (MPIDI_CH3I_Hy_held *) MPL_calloc(1, sizeof(*h), MPL_MEM_BUFFER))) {
        return NULL;
    }
    h->kind = kind;
    return h;
}

void MPIDI_CH3I_Hy_held_free(MPIDI_CH3I_Hy_held * h)
{
    if (spare_count >= HY_SPARES_KEPT) {
        MPL_free(h);
        return;
    }
    h->next = spares;
    spares = h;
    spare_count++;
}

void MPIDI_CH3I_Hy_held_pool_finalize(void)
{
    while (spares) {
        MPIDI_CH3I_Hy_held *h = spares;
        spares = h->next;
        MPL_free(h);
    }
    spare_count = 0;
}

static MPIDI_CH3I_Hy_held *new_transfer(MPIDI_CH3I_Hy_held_kind kind, const void *pkt, void *buf,
                                        size_t len)
{
    MPIDI_CH3I_Hy_held *h = MPIDI_CH3I_Hy_held_new(kind);
    if (!h)
        return NULL;
    MPIDI_CH3I_Hy_held_to(h, MPIDI_CH3I_HY_HELD_POSTED);
    h->len = len;
    memcpy(&h->pkt, pkt, sizeof(h->pkt));
    h->mr = registration(buf, len, LOCAL_ONLY, &h->own_mr);
    if (!h->mr) {
        MPIDI_CH3I_Hy_held_free(h);
        return NULL;
    }
    return h;
}

static void drop_transfer(MPIDI_CH3I_Hy_held * h)
{
    if (h->own_mr)
        iwv_dereg_mr(h->mr);
    MPIDI_CH3I_Hy_held_free(h);
}

/* MPICH_HYBRID_TEST_BREAK_QP_AFTER: the QP breaks under the transfer just posted. With
 * MPICH_HYBRID_TEST_BREAK_QP_UNDER_HEADER, under the N-th whose PUT header went on the QP, and
 * before any completion of it can count: its header may or may not have been handled, which only
 * the peer's answer to QP_SYNC says (else a loaded machine may let the whole chain complete
 * between the post and the break, or break a QP with no header in flight: nothing to ask). */
static void break_for_test(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h)
{
    static long posted;
    const MPIDI_CH3I_Hy_config_t *c = &MPIDI_CH3I_Hy_config;
    if (c->break_qp_after <= 0 || (c->break_qp_under_header && !h->on_qp) || ++posted != c->break_qp_after)
        return;
    MPIDI_CH3I_Hy_close_qp(vc);
    if (c->break_qp_under_header)
        MPIDI_CH3I_Hy_held_to(h, MPIDI_CH3I_HY_HELD_FAILED);
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "broke the queue pair to rank %d for a test",
                      vc->pg_rank);
}

/* Post the chain; 0 if the QP refused the first WR. If it refused a later one (a full queue),
 * what went is awaited and the transfer then resent on SCTP. `header`: the chain's header Send,
 * if it has one; the transfer is on_qp once that went. The caller holds it in issue order. */
static int post(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h, struct iwv_send_wr *wr,
                struct iwv_send_wr *header)
{
    struct iwv_send_wr *bad = NULL;
    if (iwv_post_send(vc->ch.hy.qp, wr, &bad) != 0) {
        if (bad == wr)
            return 0;
        MPIDI_CH3I_Hy_held_to(h, MPIDI_CH3I_HY_HELD_FAILED);
    }
    for (struct iwv_send_wr * w = wr; w && w != bad; w = w->next) {
        h->pending++;
        if (w == header) {
            h->on_qp = 1;
            h->seq = ++vc->ch.hy.headers_sent;
            MPIDI_CH3I_Hy_rnic.qp_headers++;
        }
    }
    MPIDI_CH3I_Hy_rnic.in_flight++;
    break_for_test(vc, h);
    return 1;
}

/* The data of h->iov[1] into (stag, remote), then a 1-byte Read of its start into the scratch
 * byte: served only after the Write is placed, so its completion says the data is there. */
static int post_write(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h, const void *remote, uint32_t stag)
{
    struct iwv_sge data = { (uint64_t) (uintptr_t) h->iov[1].iov_base, (uint32_t) h->iov[1].iov_len,
        h->mr->lkey
    };
    struct iwv_sge fence = { (uint64_t) (uintptr_t) MPIDI_CH3I_Hy_rnic.fence_byte, 1,
        MPIDI_CH3I_Hy_rnic.scratch->lkey
    };
    struct iwv_send_wr write = rdma_wr(IWV_WR_RDMA_WRITE, h, &data, remote, stag);
    struct iwv_send_wr read = rdma_wr(IWV_WR_RDMA_READ, h, &fence, remote, stag);
    write.next = &read;
    return post(vc, h, &write, NULL);
}

/* Headers may go on the QP: the peer's receive count is known and leaves a receive free, the QP
 * is READY (not failed, nor syncing), and nothing held to this peer still goes on SCTP (a header
 * must not pass it). */
static int header_may_go_on_qp(MPIDI_VC_t * vc)
{
    const MPIDI_CH3I_Hy_vc *hy = &vc->ch.hy;
    return MPIDI_CH3I_Hy_config.header_on_qp &&
        hy_header_may_use_qp(hy->peer_posted_addr && hy->mem, hy->state != MPIDI_CH3I_HY_QP_READY,
                             hy->held_sctp, hy->credit, hy->headers_sent);
}

/* The data of h->iov[1] into (stag, remote); the PUT header as a Send, which the target handles
 * with the data in place (RDMAP delivers in order); a Read of the target's receive count, whose
 * completion says the header arrived (so later SCTP packets may go) and refreshes our credit. */
static int post_write_and_header(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h, const void *remote,
                                 uint32_t stag)
{
    MPIDI_CH3I_Hy_qp_mem *mem = vc->ch.hy.mem;
    unsigned slot = (vc->ch.hy.headers_sent + 1) % MPIDI_CH3I_HY_HEADER_CREDITS;
    MPIDI_CH3I_Hy_header_t *msg = &mem->send[slot];
    uint32_t lkey = vc->ch.hy.mem_mr->lkey;
    struct iwv_sge data = { (uint64_t) (uintptr_t) h->iov[1].iov_base, (uint32_t) h->iov[1].iov_len,
        h->mr->lkey
    };
    struct iwv_sge header = { (uint64_t) (uintptr_t) msg, sizeof(*msg), lkey };
    struct iwv_sge count = { (uint64_t) (uintptr_t) & mem->credit_read[slot], sizeof(uint32_t), lkey };
    struct iwv_send_wr write = rdma_wr(IWV_WR_RDMA_WRITE, h, &data, remote, stag);
    struct iwv_send_wr send = rdma_wr(IWV_WR_SEND, h, &header, NULL, 0);
    struct iwv_send_wr read = rdma_wr(IWV_WR_RDMA_READ, h, &count,
                                      (const void *) (uintptr_t) vc->ch.hy.peer_posted_addr,
                                      vc->ch.hy.peer_posted_stag);
    msg->after_ctl = vc->ch.hy.ctl_sent;
    msg->pad = 0;
    msg->pkt = h->pkt;
    msg->pkt.type = MPIDI_CH3_PKT_HY_PUT_PLACED;
    write.next = &send;
    send.next = &read;
    return post(vc, h, &write, &send);
}

MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_try_put(MPIDI_VC_t * vc, struct iovec *iov, int n)
{
    const MPIDI_CH3_Pkt_put_t *put = &((const MPIDI_CH3_Pkt_t *) iov[0].iov_base)->put;
    MPIDI_CH3I_Hy_held *h;
    uint32_t stag;
    int rc;
    if (n != 2 || lock_requested(put->pkt_flags) || !rdma_usable(vc, iov[1].iov_len,
                                                                   MPIDI_CH3I_Hy_config.put_threshold))
        return NULL;
    stag = MPIDI_CH3I_Hy_stag_for(vc, put->target_win_handle, put->addr, iov[1].iov_len);
    if (!stag)
        return NULL;
    h = new_transfer(MPIDI_CH3I_HY_HELD_RDMA_WRITE, put, iov[1].iov_base, iov[1].iov_len);
    if (!h)
        return NULL;
    h->placed = MPIDI_CH3_PKT_HY_PUT_PLACED;
    h->sreq = MPIDI_CH3I_Send_request_create(put);
    if (!h->sreq) {
        drop_transfer(h);
        return NULL;
    }
    h->iov[1] = iov[1];         /* also for a resend on SCTP if the Write fails */
    h->n = 2;
    if (header_may_go_on_qp(vc)) {
        h->acked_here = MPIDI_CH3I_Hy_ack_here(vc, &h->pkt);    /* before the header is copied */
        rc = post_write_and_header(vc, h, put->addr, stag);
    } else
        rc = post_write(vc, h, put->addr, stag);
    if (!rc) {
        MPIR_Request_free(h->sreq);     /* both references */
        MPIR_Request_free(h->sreq);
        drop_transfer(h);
        return NULL;
    }
    return h;
}

/* Origin buffers of GET_WRITEs registered for that GET alone, until its answer comes. */
typedef struct hy_get_buffer {
    struct hy_get_buffer *next, *prev;
    MPI_Request handle;
    MPIDI_VC_t *target;
    struct iwv_mr *mr;
} hy_get_buffer;
static hy_get_buffer *get_buffers = NULL;

/* Deregister and drop the buffer of GET `handle` (the first), or all those for `target`. */
static void drop_buffers(MPI_Request handle, MPIDI_VC_t * target)
{
    hy_get_buffer *b, *next;
    DL_FOREACH_SAFE(get_buffers, b, next) {
        if (target ? b->target != target : b->handle != handle)
            continue;
        DL_DELETE(get_buffers, b);
        iwv_dereg_mr(b->mr);
        MPL_free(b);
        if (!target)
            return;
    }
}

/* The target is lost: its answers never come (the GETs' requests fail in ch3_awaited.c). */
void MPIDI_CH3I_Hy_get_targets_lost(MPIDI_VC_t * vc)
{
    drop_buffers(MPI_REQUEST_NULL, vc);
}

void MPIDI_CH3I_Hy_get_answered(MPI_Request handle)
{
    drop_buffers(handle, NULL);
}

/* The GET, to send to the target as GET_WRITE with the origin buffer's STag (into *pkt). */
static int ask_for_write(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_get_t * get, void *buf, size_t len,
                         MPIDI_CH3_Pkt_t * pkt)
{
    hy_get_buffer *kept = NULL;
    int own;
    struct iwv_mr *mr = registration(buf, len, REMOTE_TOO, &own);
    if (!mr)
        return 0;
    if (own) {
        kept = (hy_get_buffer *) MPL_malloc(sizeof(*kept), MPL_MEM_RMA);
        if (!kept) {
            iwv_dereg_mr(mr);
            return 0;
        }
        kept->handle = get->request_handle;
        kept->target = vc;
        kept->mr = mr;
        DL_PREPEND(get_buffers, kept);
    }
    memset(pkt, 0, sizeof(*pkt));
    pkt->hy_get_write.get = *get;
    pkt->hy_get_write.get.type = MPIDI_CH3_PKT_HY_GET_WRITE;
    pkt->hy_get_write.origin_addr = (uint64_t) (uintptr_t) buf;
    pkt->hy_get_write.origin_stag = mr->rkey;
    return MPIDI_CH3I_HY_GET_ASK_WRITE;
}

int MPIDI_CH3I_Hy_try_get(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIDI_CH3I_Hy_held ** posted,
                          MPIDI_CH3_Pkt_t * instead)
{
    const MPIDI_CH3_Pkt_get_t *get = &((const MPIDI_CH3_Pkt_t *) iov[0].iov_base)->get;
    MPIR_Request *rreq;
    MPI_Aint type_size, len;
    MPIDI_CH3I_Hy_held *h;
    uint32_t stag;
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
    {
        /* A Read's completion acknowledges the flush here (unless the GET releases a lock: the
         * target answers that one), which covers the operations before it: only if none of them
         * needs the target's own ACK (hy_placed.c). */
        MPIDI_CH3I_Hy_acks_t *acks = MPIDI_CH3I_Hy_acks_of(vc, get->target_win_handle);
        if (!MPIDI_CH3I_Hy_config.get_write && !(get->pkt_flags & MPIDI_CH3_PKT_FLAG_RMA_UNLOCK) &&
            (!acks || acks->unacked))
            return 0;
    }
    if (MPIDI_CH3I_Hy_config.get_write)
        return ask_for_write(vc, get, rreq->dev.user_buf, (size_t) len, instead);
    h = new_transfer(MPIDI_CH3I_HY_HELD_RDMA_GET, get, rreq->dev.user_buf, (size_t) len);
    if (!h)
        return 0;
    {
        struct iwv_sge into = { (uint64_t) (uintptr_t) rreq->dev.user_buf, (uint32_t) len, h->mr->lkey };
        struct iwv_send_wr read = rdma_wr(IWV_WR_RDMA_READ, h, &into, get->addr, stag);
        if (!post(vc, h, &read, NULL)) {
            drop_transfer(h);
            return 0;
        }
    }
    *posted = h;
    return MPIDI_CH3I_HY_GET_POSTED;
}

MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_try_write_answer(MPIDI_VC_t * vc, MPIR_Request * sreq,
                                                  const struct iovec *iov, uint64_t origin_addr,
                                                  uint32_t origin_stag)
{
    MPIDI_CH3I_Hy_held *h;
    if (!MPIDI_CH3I_Hy_config.rdma || iov[1].iov_len > 0x7fffffffu || !MPIDI_CH3I_Hy_qp_ready(vc))
        return NULL;
    h = new_transfer(MPIDI_CH3I_HY_HELD_RDMA_WRITE, &sreq->dev.pending_pkt, iov[1].iov_base,
                     iov[1].iov_len);
    if (!h)
        return NULL;
    h->placed = MPIDI_CH3_PKT_HY_GET_RESP_PLACED;
    h->sreq = sreq;
    h->iov[1] = iov[1];
    h->n = 2;
    if (!post_write(vc, h, (const void *) (uintptr_t) origin_addr, origin_stag)) {
        drop_transfer(h);
        return NULL;
    }
    return h;
}

/* ---- FOP, CAS and one-element accumulates as RNIC atomics (RFC 7306) ---- */

/* The predefined types an RNIC atomic carries: 8-byte integers (two's complement, so FetchAdd
 * serves signed and unsigned alike). */
static int atomic_type(MPI_Datatype t)
{
#ifdef MPIR_INT64
    /* MPICH 5 gives CH3 its internal handles: the type's class and size, with the index kept */
    if (MPIR_DATATYPE_IS_INTERNAL(t))
        return MPIR_DATATYPE_GET_RAW_INTERNAL(t) == MPIR_INT64 ||
            MPIR_DATATYPE_GET_RAW_INTERNAL(t) == MPIR_UINT64;
#endif
    return t == MPI_INT64_T || t == MPI_UINT64_T || t == MPI_LONG || t == MPI_UNSIGNED_LONG ||
        t == MPI_LONG_LONG || t == MPI_LONG_LONG_INT || t == MPI_UNSIGNED_LONG_LONG ||
        t == MPI_AINT || t == MPI_OFFSET || t == MPI_COUNT || t == MPI_INTEGER8;
}

/* The work request an operation of `op` with `operand` becomes (SUM: FetchAdd; NO_OP: FetchAdd of
 * 0; REPLACE: swap); 0 if no atomic does it (MPI_MAX and the others). */
static int op_wr(MPI_Op op, uint64_t operand, struct iwv_send_wr *wr)
{
    if (op == MPI_SUM || op == MPI_NO_OP) {
        wr->opcode = IWV_WR_ATOMIC_FETCH_AND_ADD;
        wr->atomic.compare_add = op == MPI_SUM ? operand : 0;
        return 1;
    }
    if (op == MPI_REPLACE) {
        wr->opcode = IWV_WR_ATOMIC_SWAP;
        wr->atomic.swap = operand;
        return 1;
    }
    return 0;
}

/* The work request a packet becomes; 0 if no atomic does its operation or type. */
static int atomic_wr(const MPIDI_CH3_Pkt_t * pkt, struct iwv_send_wr *wr)
{
    uint64_t operand = 0;
    switch (pkt->type) {
        case MPIDI_CH3_PKT_CAS_IMMED:
            if (!atomic_type(pkt->cas.datatype))
                return 0;
            wr->opcode = IWV_WR_ATOMIC_CMP_AND_SWP;
            memcpy(&wr->atomic.compare_add, &pkt->cas.compare_data, 8);
            memcpy(&wr->atomic.swap, &pkt->cas.origin_data, 8);
            wr->atomic.remote_addr = (uint64_t) (uintptr_t) pkt->cas.addr;
            return 1;
        case MPIDI_CH3_PKT_FOP_IMMED:
            if (!atomic_type(pkt->fop.datatype))
                return 0;
            memcpy(&operand, &pkt->fop.info.data, 8);
            wr->atomic.remote_addr = (uint64_t) (uintptr_t) pkt->fop.addr;
            return op_wr(pkt->fop.op, operand, wr);
        case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
            if (pkt->get_accum.count != 1 || !atomic_type(pkt->get_accum.datatype))
                return 0;
            if (pkt->get_accum.op != MPI_NO_OP)
                memcpy(&operand, &pkt->get_accum.info.data, 8);
            wr->atomic.remote_addr = (uint64_t) (uintptr_t) pkt->get_accum.addr;
            return op_wr(pkt->get_accum.op, operand, wr);
        case MPIDI_CH3_PKT_ACCUMULATE_IMMED:
            if (pkt->accum.count != 1 || !atomic_type(pkt->accum.datatype) || pkt->accum.op == MPI_NO_OP)
                return 0;
            memcpy(&operand, &pkt->accum.info.data, 8);
            wr->atomic.remote_addr = (uint64_t) (uintptr_t) pkt->accum.addr;
            return op_wr(pkt->accum.op, operand, wr);
        default:
            return 0;
    }
}

MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_try_atomic(MPIDI_VC_t * vc, struct iovec *iov, int n)
{
    const MPIDI_CH3_Pkt_t *pkt = (const MPIDI_CH3_Pkt_t *) iov[0].iov_base;
    MPIDI_CH3I_Hy_acks_t *acks;
    MPI_Request unused;
    MPI_Win win;
    int flags;
    MPIDI_CH3I_Hy_held *h;
    struct iwv_send_wr wr;
    struct iwv_sge result;
    memset(&wr, 0, sizeof(wr));
    /* A lock to take or release is the target CH3's to do; an SCTP operation to this window not
     * yet acknowledged could still be on its way, and an atomic must not pass it (MPI orders
     * accumulates from one origin to one location). */
    if (n != 1 || !MPIDI_CH3I_Hy_atomic_fields(pkt, &win, &flags, &unused) || lock_requested(flags) ||
        (flags & MPIDI_CH3_PKT_FLAG_RMA_UNLOCK) || !atomic_wr(pkt, &wr) ||
        !(acks = MPIDI_CH3I_Hy_acks_of(vc, win)) || acks->unacked)
        return NULL;
    wr.atomic.rkey = MPIDI_CH3I_Hy_atomic_stag_for(vc, win, (const void *) (uintptr_t) wr.atomic.remote_addr);
    if (!wr.atomic.rkey || !rdma_usable(vc, 8, 0) || !vc->ch.hy.mem ||
        vc->ch.hy.atomics_in_flight >= MPIDI_CH3I_HY_ATOMIC_SLOTS)
        return NULL;
    if (!(h = MPIDI_CH3I_Hy_held_new(MPIDI_CH3I_HY_HELD_RDMA_ATOMIC)))
        return NULL;
    MPIDI_CH3I_Hy_held_to(h, MPIDI_CH3I_HY_HELD_POSTED);
    memcpy(&h->pkt, pkt, sizeof(h->pkt));
    h->atomic_index = vc->ch.hy.atomics_posted;
    h->slot = (unsigned) (h->atomic_index % MPIDI_CH3I_HY_ATOMIC_SLOTS);
    result.addr = (uint64_t) (uintptr_t) & vc->ch.hy.mem->atomic_result[h->slot];
    result.length = 8;
    result.lkey = vc->ch.hy.mem_mr->lkey;
    wr.wr_id = (uint64_t) (uintptr_t) h;
    wr.sg_list = &result;
    wr.num_sge = 1;
    wr.send_flags = IWV_SEND_SIGNALED;
    if (!post(vc, h, &wr, NULL)) {
        MPIDI_CH3I_Hy_held_free(h);
        return NULL;
    }
    vc->ch.hy.atomics_posted++;
    vc->ch.hy.atomics_in_flight++;
    return h;
}
