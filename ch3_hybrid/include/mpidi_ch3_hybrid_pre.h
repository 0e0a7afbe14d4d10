/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid: what it adds to ch3:sctp's channel types (included by ch3_sctp's mpidi_ch3_pre.h
 * when MPIDI_CH3_HYBRID is defined). */
#ifndef MPIDI_CH3_HYBRID_PRE_H_INCLUDED
#define MPIDI_CH3_HYBRID_PRE_H_INCLUDED

struct iwv_qp;
struct iwv_mr;
struct MPIDI_CH3I_Hy_held;
struct MPIDI_CH3I_Hy_remote_win;
struct MPIDI_CH3I_Hy_deferred;
struct MPIDI_CH3I_Hy_qp_mem;

#include "hy_order.h"      /* the queue pair's states (enum MPIDI_CH3I_Hy_qp_state) */
#include "hy_proto.h"      /* MPIDI_CH3I_HY_NONCE_BYTES */

typedef struct MPIDI_CH3I_Hy_vc {
    enum MPIDI_CH3I_Hy_qp_state state;
    struct iwv_qp *qp;
    struct MPIDI_CH3I_Hy_qp_mem *mem; /* its registered memory, and that registration */
    struct iwv_mr *mem_mr;
    /* Sends to this peer in issue order, held while an RDMA transfer at the head is in flight:
     * its CH3 header may only follow the data (ch3_hybrid/src/hy_hold.c). */
    struct MPIDI_CH3I_Hy_held *held_head, *held_tail;
    int held_sctp;              /* of them, entries that will still send on SCTP */
    /* PUT headers sent as RDMAP Sends on the QP (hy_placed.c). A header names how many of our
     * SCTP control packets precede it; the peer handles it only after handling those. */
    unsigned ctl_sent, ctl_done;   /* SCTP control packets sent to / fully handled from the peer */
    unsigned headers_sent;         /* PUT headers we sent on the QP */
    unsigned credit;               /* receives the peer had posted on its QP, as last read */
    uint64_t peer_posted_addr;     /* where the peer counts them (0: unknown, headers stay on SCTP) */
    uint32_t peer_posted_stag;
    unsigned headers_done;         /* headers from the peer handled */
    /* RNIC atomics to the peer (FOP and CAS, hy_rdma.c): posted on its QP, in order from 0; of
     * them, completed with their result (a prefix: completions come in order); in flight. */
    uint64_t atomics_posted, atomics_answered;
    unsigned atomics_in_flight;
    uint64_t peer_atomics_done;    /* the peer's answer (SYNC_ANSWERED): how many of them it ran */
    int recv_control;              /* the SCTP packet being handled is of the control class */
    struct MPIDI_CH3I_Hy_deferred *deferred_head, *deferred_tail; /* arrived before their predecessors */
    unsigned n_deferred;
    unsigned peer_headers_done;    /* the peer's answer (SYNC_ANSWERED): how many of our headers it handled */
    struct MPIDI_CH3I_Hy_remote_win *windows; /* the peer's registered windows (hy_window.c) */
    char addr[64];              /* the peer's DDP endpoint, from window creation (from IDLE on) */
    unsigned short sctp_port, udp_port;
    /* The higher side's nonce for the lower side's connect, sent in CONNECT_ME (hy_device.c). */
    uint8_t connect_nonce[MPIDI_CH3I_HY_NONCE_BYTES];
    int nonce_issued;
} MPIDI_CH3I_Hy_vc;
#define MPIDI_CH3I_HYBRID_VC_FIELDS MPIDI_CH3I_Hy_vc hy;

/* A PUT, GET or GET response whose data RDMA already placed: the same packet under another type,
 * so the receiver runs CH3's handler without waiting for data bytes (hy_placed.c). GET_WRITE: a
 * GET to be answered by an RDMA Write into the origin buffer (MPIR_CVAR_CH3_HYBRID_GET_MODE=write).
 * CONNECT_ME: from the higher side, "connect a queue pair to me, proving it with this nonce"; from
 * the lower side, "send me your nonce" (hy_device.c). QP_SYNC: "our queue pair broke: how many
 * of my PUT headers did you handle, and which of my atomics from number `atomics` on did you
 * run?", answered by a QP_SYNC_ATOMIC (index, original value) for each atomic that ran, then
 * QP_SYNC_ACK with both counts (hy_hold.c). */
#define MPIDI_CH3_PKT_ENUM                      \
    MPIDI_CH3_PKT_HY_PUT_PLACED,                \
    MPIDI_CH3_PKT_HY_GET_PLACED,                \
    MPIDI_CH3_PKT_HY_GET_RESP_PLACED,           \
    MPIDI_CH3_PKT_HY_GET_WRITE,                 \
    MPIDI_CH3_PKT_HY_CONNECT_ME,                \
    MPIDI_CH3_PKT_HY_QP_SYNC,                   \
    MPIDI_CH3_PKT_HY_QP_SYNC_ATOMIC,            \
    MPIDI_CH3_PKT_HY_QP_SYNC_ACK

/* GET_WRITE: CH3's GET packet (type GET_WRITE) plus where the answer goes. */
#define MPIDI_CH3_PKT_DECL                      \
    struct {                                    \
        MPIDI_CH3_Pkt_get_t get;                \
        uint64_t origin_addr;                   \
        uint32_t origin_stag;                   \
    } hy_get_write;                             \
    struct {                                    \
        MPIDI_CH3_Pkt_type_t type;              \
        unsigned headers_done;                  \
        uint64_t atomics;                       \
    } hy_sync;                                  \
    struct {                                    \
        MPIDI_CH3_Pkt_type_t type;              \
        uint64_t index, original;               \
    } hy_sync_atomic;                           \
    struct {                                    \
        MPIDI_CH3_Pkt_type_t type;              \
        uint8_t nonce[MPIDI_CH3I_HY_NONCE_BYTES]; \
    } hy_connect_me;

/* MPI_Alloc_mem memory is registered with the RNIC (hy_memory.c). */
#define MPIDI_CH3I_HAS_ALLOC_MEM
#define MPIDI_CH3I_HAS_FREE_MEM

/* The window's registration (its STag is the MR's rkey). */
#define MPIDI_CH3_WIN_DECL struct iwv_mr *hy_mr;

#endif /* MPIDI_CH3_HYBRID_PRE_H_INCLUDED */
