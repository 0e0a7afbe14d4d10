/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: channel types that MPICH's device headers embed (VC, request, progress state). */
#ifndef MPIDI_CH3_PRE_H_INCLUDED
#define MPIDI_CH3_PRE_H_INCLUDED

/* The transport delivers each VC's packets in order: no CH3 sequence numbers. */
#undef MPID_USE_SEQUENCE_NUMBERS

#ifdef MPIDI_CH3_HYBRID
#include "mpidi_ch3_hybrid_pre.h" /* ch3:hybrid builds these sources too, with its VC fields */
#else
#define MPIDI_CH3I_HYBRID_VC_FIELDS
#endif

/* Needed for MPIDI_PG_To_string (spawn, connect/accept). */
#define MPIDI_DEV_IMPLEMENTS_KVS

typedef struct {
    int dummy;
} MPIDI_CH3I_CH_comm_t;

typedef struct MPIDI_CH3I_VC {
    int peer;                         /* transport peer id; -1 until the VC is first used */
    int failed;                       /* the transport reported the peer failed */
    int closed;                       /* CH3's close handshake finished (Connection_terminate) */
    struct MPIR_Request *recv_active; /* request whose iov takes the next bytes from this VC */
    size_t recv_filled;               /* bytes of recv_active's current iov already filled */
    int port_name_tag;                /* accept side of connect/accept: the port's tag */
    MPI_Request *awaiting;            /* requests waiting for this peer's answer (ch3_awaited.c) */
    int awaiting_n, awaiting_cap;     /* (ch3_awaited.c) */
    struct MPIDI_VC *late_next;       /* listed to fail late requests (ch3_awaited.c) */
    int late_listed;
    MPIDI_CH3I_HYBRID_VC_FIELDS
} MPIDI_CH3I_VC;
#define MPIDI_CH3_VC_DECL struct MPIDI_CH3I_VC ch;

typedef struct MPIDI_CH3I_Request {
    struct MPIDI_VC *vc;   /* where the rest of an iSend/iSendv goes */
    int context, tag, cls; /* stream-mapping key of the whole CH3 message */
    struct MPIDI_VC *awaited_from; /* an answer is awaited from it (ch3_awaited.c) */
} MPIDI_CH3I_Request;
#define MPIDI_CH3_REQUEST_DECL MPIDI_CH3I_Request ch;
#define MPIDI_CH3_REQUEST_INIT(req_) ((req_)->ch.awaited_from = NULL)

typedef struct MPIDI_CH3I_Progress_state {
    int completion_count;
} MPIDI_CH3I_Progress_state;
#define MPIDI_CH3_PROGRESS_STATE_DECL MPIDI_CH3I_Progress_state ch;

extern volatile unsigned int MPIDI_CH3I_progress_completion_count;

#if defined(MPICH_IS_THREADED)
/* Every completion (CH3's MPIDI_CH3_Progress_signal_completion) wakes the thread blocked in the
 * transport, and the threads asleep until a completion (ch3_progress.c): a completion made
 * outside the progress engine (a receive matching a self-send) would otherwise leave them asleep. */
extern volatile int MPIDI_CH3I_progress_waiters;
void MPIDI_CH3I_Progress_wake_waiters(void);
#define MPIDI_CH3I_PROGRESS_WAKEUP                                                                \
    do {                                                                                          \
        if (MPIDI_CH3I_progress_blocked == TRUE && MPIDI_CH3I_progress_wakeup_signalled == FALSE) \
        {                                                                                         \
            MPIDI_CH3I_progress_wakeup_signalled = TRUE;                                          \
            MPIDI_CH3I_Progress_wakeup();                                                         \
        }                                                                                         \
        if (MPIDI_CH3I_progress_waiters > 0)                                                      \
            MPIDI_CH3I_Progress_wake_waiters();                                                   \
    } while (0)
#endif

#endif /* MPIDI_CH3_PRE_H_INCLUDED */
