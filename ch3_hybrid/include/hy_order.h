/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid's ordering rules, as pure functions of the counters and states they read (no MPICH
 * type), so that tests/unit/test_hy_order.cpp checks them, and a model of the protocol around
 * them, without an MPICH build. hy_hold.c, hy_placed.c and hy_rdma.c apply them.
 *
 * The protocol (docs/architecture.md, "The data path of an RDMA put"): a PUT header may travel
 * on the queue pair (QP) behind its RDMA Write while CH3's other packets to the same peer travel
 * on SCTP. The receiver must handle them in the order the sender issued them:
 *  - each header names how many SCTP control packets its sender had sent before it (after_ctl);
 *    the receiver handles it once it has handled that many, and defers it until then;
 *  - the sender holds every later SCTP packet until the header has arrived (the Read it posts
 *    behind the header completes), and the receiver polls its CQ before each control packet;
 *  - a header uses one of the receives the peer keeps posted (credit);
 *  - when the QP breaks, the sender asks how many of its headers the peer handled (QP_SYNC) and
 *    resends the others over SCTP.
 * The counters are 32-bit and wrap: "a has reached b" is a signed difference. */
#ifndef HY_ORDER_H_INCLUDED
#define HY_ORDER_H_INCLUDED

#include <stdint.h>

static inline int hy_reached(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) >= 0;
}

/* ---- the queue pair to a peer: one machine ----
 * NO_CONTACT -> IDLE when a shared window tells us the peer's RNIC contact; the first RDMA-sized
 * operation then starts a connect: -> CONNECTING -> READY (a peer's connect may also make it READY
 * from NO_CONTACT or IDLE). Rejected, unreachable or broken: -> FAILED, and this peer's RMA stays
 * on SCTP. A QP that broke under PUT headers asks the peer which it handled: -> SYNC_ASKED ->
 * SYNC_ANSWERED (both count as failed). Only MPIDI_CH3I_Hy_qp_to (hy_device.c) changes a VC's. */
enum MPIDI_CH3I_Hy_qp_state {
    MPIDI_CH3I_HY_QP_NO_CONTACT = 0,
    MPIDI_CH3I_HY_QP_IDLE,
    MPIDI_CH3I_HY_QP_CONNECTING,
    MPIDI_CH3I_HY_QP_READY,
    MPIDI_CH3I_HY_QP_FAILED,
    MPIDI_CH3I_HY_QP_SYNC_ASKED,
    MPIDI_CH3I_HY_QP_SYNC_ANSWERED
};

static inline int hy_qp_may_go(enum MPIDI_CH3I_Hy_qp_state from, enum MPIDI_CH3I_Hy_qp_state to)
{
    switch (from) {
        case MPIDI_CH3I_HY_QP_NO_CONTACT:
            return to == MPIDI_CH3I_HY_QP_IDLE || to == MPIDI_CH3I_HY_QP_READY || to == MPIDI_CH3I_HY_QP_FAILED;
        case MPIDI_CH3I_HY_QP_IDLE:
            return to == MPIDI_CH3I_HY_QP_CONNECTING || to == MPIDI_CH3I_HY_QP_READY ||
                to == MPIDI_CH3I_HY_QP_FAILED;
        case MPIDI_CH3I_HY_QP_CONNECTING:
            return to == MPIDI_CH3I_HY_QP_READY || to == MPIDI_CH3I_HY_QP_FAILED;
        case MPIDI_CH3I_HY_QP_READY:
            return to == MPIDI_CH3I_HY_QP_FAILED;
        case MPIDI_CH3I_HY_QP_FAILED:
            return to == MPIDI_CH3I_HY_QP_SYNC_ASKED;
        case MPIDI_CH3I_HY_QP_SYNC_ASKED:
            return to == MPIDI_CH3I_HY_QP_SYNC_ANSWERED;
        default:
            return 0;
    }
}

/* ---- the receiver ---- */

/* A header from the QP may run once this side has handled the control packets sent before it. */
static inline int hy_header_may_run(uint32_t ctl_done, uint32_t after_ctl)
{
    return hy_reached(ctl_done, after_ctl);
}

typedef enum {
    HY_ARRIVAL_RUN,             /* handle it now */
    HY_ARRIVAL_DEFER,           /* behind the deferred ones, until its control packets are handled */
    HY_ARRIVAL_BAD_LENGTH,      /* not a header's length */
    HY_ARRIVAL_BAD_TYPE,        /* its packet is not a PUT_PLACED */
    HY_ARRIVAL_TOO_MANY         /* max_deferred headers of the peer wait already */
} hy_arrival;

/* A message of `len` bytes from the peer landed in a header receive (a header has header_len;
 * is_put: its packet says PUT_PLACED). `deferred` of the peer's headers wait already. A well-
 * behaved peer sends a header only once the control packets before it went to SCTP, so headers
 * wait only while SCTP is slower than the QP; a peer that makes more than max_deferred wait, or
 * sends anything else, loses its QP: what was not handled it sends again on SCTP (QP_SYNC). */
static inline hy_arrival hy_header_arrival(size_t len, size_t header_len, int is_put,
                                           unsigned deferred, unsigned max_deferred,
                                           uint32_t ctl_done, uint32_t after_ctl)
{
    if (len != header_len)
        return HY_ARRIVAL_BAD_LENGTH;
    if (!is_put)
        return HY_ARRIVAL_BAD_TYPE;
    if (deferred == 0 && hy_header_may_run(ctl_done, after_ctl))
        return HY_ARRIVAL_RUN;
    return deferred < max_deferred ? HY_ARRIVAL_DEFER : HY_ARRIVAL_TOO_MANY;
}

/* ---- the sender: credit ---- */

/* credit: the receives the peer had posted for our headers, as last read; headers_sent: ours. */
static inline int hy_credit_left(uint32_t credit, uint32_t headers_sent)
{
    return (int32_t) (credit - headers_sent) > 0;
}

/* A Read fetched the peer's count: an older value than one we know never lowers the credit. */
static inline uint32_t hy_credit_after_read(uint32_t credit, uint32_t posted)
{
    return (int32_t) (posted - credit) > 0 ? posted : credit;
}

/* A header may go on the QP: the peer's count is known (credit_known), a receive is free, the QP
 * is ready (not failed or syncing after a failure), and no earlier packet to the peer still
 * waits to go on SCTP (a header must not pass one). */
static inline int hy_header_may_use_qp(int credit_known, int qp_not_ready, int held_for_sctp,
                                       uint32_t credit, uint32_t headers_sent)
{
    return credit_known && !qp_not_ready && held_for_sctp == 0 && hy_credit_left(credit, headers_sent);
}

/* ---- the sender: the queue of held sends ---- */

/* After a QP broke, the peer's answer says how many of our headers it handled: the one
 * numbered seq (1 for the first header on that QP) was handled if that count reached it. */
static inline int hy_header_handled(uint32_t peer_headers_done, uint32_t seq)
{
    return hy_reached(peer_headers_done, seq);
}

typedef enum {
    HY_HEAD_WAIT,       /* completions still to come, or the peer's answer to our question */
    HY_HEAD_ASK,        /* its header was on a QP that broke: ask the peer once, then wait */
    HY_HEAD_LEAVES      /* it leaves the queue now (sent, resent or finished) */
} hy_head_action;

/* The entry at the head of a peer's queue: `pending` completions still to come; only the peer
 * knows its fate once its transfer failed (peer_knows: a header that went on the QP, an atomic
 * that went out) and it did fail (failed); the sync question already asked (asked) or answered
 * (answered). Entries behind the head wait for it. */
static inline hy_head_action hy_head_next(int pending, int peer_knows, int failed, int asked, int answered)
{
    if (pending > 0)
        return HY_HEAD_WAIT;
    if (!peer_knows || !failed || answered)
        return HY_HEAD_LEAVES;
    return asked ? HY_HEAD_WAIT : HY_HEAD_ASK;
}

typedef enum {
    HY_WRITE_DELIVERED, /* its header went on the QP and the peer has it: only finish the request */
    HY_WRITE_HEADER,    /* the data is placed: the header follows on SCTP, as the placed type */
    HY_WRITE_RESEND     /* the RDMA path failed: the whole operation goes again on SCTP */
} hy_write_exit;

/* How an RDMA Write entry (a PUT, or a GET's response) leaves the queue. */
static inline hy_write_exit hy_write_leaves(int on_qp, int failed, uint32_t peer_headers_done,
                                            uint32_t seq)
{
    if (on_qp && (!failed || hy_header_handled(peer_headers_done, seq)))
        return HY_WRITE_DELIVERED;
    return failed ? HY_WRITE_RESEND : HY_WRITE_HEADER;
}

#endif /* HY_ORDER_H_INCLUDED */
