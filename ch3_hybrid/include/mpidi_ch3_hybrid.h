/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid: how its files talk to each other and to the ch3:sctp glue they are built with.
 *
 * One-sided data moves by RDMA over per-peer iWARP queue pairs; the other CH3 packets travel on
 * the SCTP path, in issue order. An RDMA PUT is an RDMA Write of the origin data into the target
 * window, then the PUT's CH3 header as an RDMAP Send under a "placed" packet type, then a 4-byte
 * RDMA Read of the target's count of posted receives (our credit for further headers). RDMAP
 * delivers in order (RFC 5040 §5.5; our RNIC handles messages in DDP-SSN order), so the target
 * runs CH3's own PUT handler with the data already in place, and the Read's completion says the
 * header has arrived. hy_placed.c orders headers from the QP with packets from SCTP. When no
 * credit is left, or a packet held for SCTP is ahead, the header instead follows the Write and a
 * 1-byte fence Read on SCTP. A GET is, by default, an RDMA Read into the origin buffer and
 * completes at the origin as CH3 completes an acknowledging GET response (the target gets only a
 * fence counter packet if the GET carried one, or the whole GET as "placed" if it releases a
 * lock). In the thesis' variant (GET_MODE=write) the GET goes to the target with the origin
 * buffer's STag, and the target answers with an RDMA Write, a fence Read and a header-only
 * response on SCTP. Sends issued to that peer meanwhile are held behind each transfer
 * (hy_hold.c), so every lock, flush, fence and counter packet of CH3 still follows the data it
 * covers, as with ch3:sctp (am_flush_ordered stays 1).
 *
 * The files are layers; each calls only those below it (docs/architecture.md):
 *   hy_hold.c     held sends, the QP_SYNC exchange, the extension table and the RNIC's callbacks;
 *                 the only caller of ch3:sctp's send functions
 *   hy_placed.c   placed packets and PUT headers received, in order with SCTP's packets
 *   hy_rdma.c     posting transfers (RDMA Write, Read, header Send)
 *   hy_window.c, hy_memory.c     registrations: windows (ours and peers'), MPI_Alloc_mem memory
 *   hy_device.c   the RNIC, queue pairs, completion queue; it reports upward by callbacks
 *   hy_cvars.c, hy_pvars.c       configuration and counters */
#ifndef MPIDI_CH3_HYBRID_H_INCLUDED
#define MPIDI_CH3_HYBRID_H_INCLUDED

#include "mpidi_ch3_impl.h"
#include "utlist.h"
#include "iwarp_verbs.h"
#include "hy_order.h"
#include "hy_proto.h"

/* A PUT header sent as an RDMAP Send on the QP, right behind the PUT's Write (hy_placed.c); a
 * wire format, so under MPIDI_CH3I_HY_PROTO_VERSION (hy_proto.h). */
typedef struct {
    uint32_t after_ctl;         /* SCTP control packets the sender sent to us before this header */
    uint32_t pad;
    MPIDI_CH3_Pkt_t pkt;        /* the PUT, as type PUT_PLACED */
} MPIDI_CH3I_Hy_header_t;

#define MPIDI_CH3I_HY_HEADER_CREDITS 64 /* receives each QP keeps posted for the peer's headers */
#define MPIDI_CH3I_HY_ATOMIC_SLOTS 64   /* RNIC atomics in flight per QP, at most (their results) */

/* Registered memory of one QP (lkey mem_mr->lkey): the receive count the peer reads as its
 * credit, the headers we send and receive, and where our Reads of the peer's count land. */
typedef struct MPIDI_CH3I_Hy_qp_mem {
    volatile uint32_t posted;   /* receives posted so far */
    uint32_t credit_read[MPIDI_CH3I_HY_HEADER_CREDITS];
    MPIDI_CH3I_Hy_header_t send[MPIDI_CH3I_HY_HEADER_CREDITS];
    MPIDI_CH3I_Hy_header_t recv[MPIDI_CH3I_HY_HEADER_CREDITS];
    uint64_t atomic_result[MPIDI_CH3I_HY_ATOMIC_SLOTS]; /* the target word's value before our atomic */
} MPIDI_CH3I_Hy_qp_mem;

/* ---- configuration (hy_cvars.c) ---- */
typedef struct {
    int rdma;              /* 0: everything on the SCTP path (for A/B runs) */
    MPI_Aint put_threshold; /* PUTs of at least this many bytes go by RDMA Write */
    MPI_Aint get_threshold; /* GETs of at least this many bytes go by RDMA */
    int get_write;         /* GETs are answered by the target's RDMA Write (else the origin's Read) */
    int header_on_qp;      /* an RDMA PUT's header goes as a Send on the QP (else on SCTP) */
    int connect_all;       /* connect to every window member at window creation, not on demand */
    int progress_thread;   /* the RNIC runs on its own thread (else in the progress engine) */
    int progress_standby;  /* in the progress engine, and on a thread while the process computes */
    int initiate_timeout_ms, pending_connects, early_bytes; /* the RNIC's bounds (iwv_device_attr) */
    int standby_after_us;  /* progress=standby: the absence after which its thread serves */
    int deferred_headers;  /* a peer's PUT headers held for its SCTP packets, at most */
    int qp_sync_timeout_s; /* a peer that leaves QP_SYNC unanswered this long is lost (0: never) */
    int ignore_qp_sync;    /* tests only (MPICH_HYBRID_TEST_IGNORE_QP_SYNC): never answer QP_SYNC */
    long break_qp_after;   /* tests only (MPICH_HYBRID_TEST_BREAK_QP_AFTER): after this many RDMA
                            * transfers, put the last one's QP into ERR while they are in flight */
    int break_qp_under_header; /* tests only (MPICH_HYBRID_TEST_BREAK_QP_UNDER_HEADER): count only
                                * transfers whose PUT header went on the QP (hy_rdma.c) */
    int max_qps;           /* tests only (MPICH_HYBRID_TEST_MAX_QPS): the CQ's room, in QPs (0: all) */
} MPIDI_CH3I_Hy_config_t;
extern MPIDI_CH3I_Hy_config_t MPIDI_CH3I_Hy_config;
int MPIDI_CH3I_Hy_read_cvars(void);

/* ---- the RNIC (hy_device.c) ---- */
/* What the RNIC layer reports upward (hy_hold.c gives them at MPIDI_CH3_Init). */
typedef struct {
    void (*completed) (const struct iwv_wc * wc);       /* a CQ entry of a held transfer */
    /* a message in a header receive: a PUT header if len is a header's */
    void (*header_arrived) (MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_header_t * h, size_t len);
    int (*send_now) (MPIDI_VC_t * vc, void *pkt, size_t len);    /* a packet on SCTP, not held */
} MPIDI_CH3I_Hy_device_ops_t;
void MPIDI_CH3I_Hy_device_init(const MPIDI_CH3I_Hy_device_ops_t * above);
typedef struct {
    iwv_device *dev;
    iwv_pd *pd;
    iwv_cq *cq;
    struct iwv_mr *scratch;   /* target of the 1-byte fence Reads */
    int fd;                   /* caller mode: the RNIC's work fd */
    uint64_t seen_activity;   /* the RNIC socket's upcall count when the CQ stage last ran it */
    int more;                 /* its last round found work: run it again */
    char fence_byte[64];
    int windows;              /* live windows: the CQ stage runs only while > 0 or work is left */
    int in_flight;            /* RDMA operations not yet completed */
    int failed;               /* the RNIC could not be opened: RDMA is off for this process */
    /* MPI_T counters (hy_pvars.c) */
    unsigned long long puts, gets;      /* operations whose data RDMA placed */
    unsigned long long atomics;         /* FOP and CAS carried by RNIC atomics */
    unsigned long long bytes;           /* their data */
    unsigned long long fallbacks;       /* RDMA operations that failed and went over SCTP instead */
    unsigned long long qp_headers;      /* PUT headers sent as Sends on the QP */
    unsigned long long proof_failures;  /* queue pair connects refused for a failed proof */
} MPIDI_CH3I_Hy_rnic_t;
extern MPIDI_CH3I_Hy_rnic_t MPIDI_CH3I_Hy_rnic;
int MPIDI_CH3I_Hy_open(void);      /* at the first window: 0, or a reason printed once and RDMA off */
void MPIDI_CH3I_Hy_blocking(int entering); /* the progress engine blocks in the kernel (1), is back (0) */
void MPIDI_CH3I_Hy_inside(int entering);   /* the progress engine is entered (1), left (0) */
int MPIDI_CH3I_Hy_finalize(void);
void MPIDI_CH3I_Hy_connect(MPIDI_VC_t * vc);     /* start a connect if the VC has none (on demand) */
int MPIDI_CH3I_Hy_pkt_connect_me(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                                 MPIR_Request ** rreqp);
int MPIDI_CH3I_Hy_qp_ready(MPIDI_VC_t * vc);     /* 1 if RDMA may go to this peer now */
int MPIDI_CH3I_Hy_local_contact(char *addr, size_t len, unsigned short *sctp_port,
                                unsigned short *udp_port);
int MPIDI_CH3I_Hy_sync_deadlines(void); /* a peer past the QP_SYNC timeout is lost; 1 if one was */
int MPIDI_CH3I_Hy_poll_cq(void);   /* handle what the CQ holds now (also before SCTP packets) */
void MPIDI_CH3I_Hy_close_qp(MPIDI_VC_t * vc);    /* into ERR at once: nothing more lands from it */
/* The one place vc->ch.hy.state changes, traced as MPIDI_CH3I_Hy_held_to; a transition the
 * machine (mpidi_ch3_hybrid_pre.h) does not have is a bug (asserted). */
void MPIDI_CH3I_Hy_qp_to(MPIDI_VC_t * vc, enum MPIDI_CH3I_Hy_qp_state to);
int MPIDI_CH3I_Hy_qp_failed(MPIDI_VC_t * vc);     /* into FAILED unless failed already: 1 if it went */

/* ---- windows: ours registered, peers' by handle (hy_window.c) ---- */
/* The STag covering [addr, addr+len) of the peer's window `handle`, or 0. */
uint32_t MPIDI_CH3I_Hy_stag_for(MPIDI_VC_t * vc, MPI_Win handle, const void *addr, size_t len);
/* ... for an RNIC atomic on the 8 bytes at addr: 0 unless the window was created with the info
 * key MPIDI_CH3I_HY_ATOMICS_INFO on every member (hy_window.c) and addr is 8-byte aligned. */
uint32_t MPIDI_CH3I_Hy_atomic_stag_for(MPIDI_VC_t * vc, MPI_Win handle, const void *addr);
#define MPIDI_CH3I_HY_ATOMICS_INFO "ch3_hybrid_rnic_atomics"
/* ... its values: atomic with everything (caller mode only), or also served by the standby thread
 * on the member's promise to apply no accumulate-family operation to its own part */
#define MPIDI_CH3I_HY_ATOMICS_TRUE "true"
#define MPIDI_CH3I_HY_ATOMICS_REMOTE_ONLY "remote_only"
void MPIDI_CH3I_Hy_win_fns(MPIDI_CH3U_Win_fns_t * win_fns);         /* extension hooks */
void MPIDI_CH3I_Hy_win_hooks(MPIDI_CH3U_Win_hooks_t * win_hooks);

/* Per peer window, at the origin: whether a flush or unlock of it may complete without the peer
 * (hy_placed.c). Lives with the peer's registration (hy_window.c); NULL if it has none. */
typedef struct {
    int unacked;        /* since the last packet that asks the peer to acknowledge, an operation
                         * went whose completion only the peer's CH3 can tell (SCTP, or an RDMA
                         * put whose header went on SCTP) */
    unsigned resent;    /* RDMA puts to it that failed and went again over SCTP */
} MPIDI_CH3I_Hy_acks_t;
MPIDI_CH3I_Hy_acks_t *MPIDI_CH3I_Hy_acks_of(MPIDI_VC_t * vc, MPI_Win handle);

/* ---- memory registered beforehand: MPI_Alloc_mem's and windows (hy_memory.c) ---- */
void MPIDI_CH3I_Hy_remember_region(struct iwv_mr *mr);
void MPIDI_CH3I_Hy_forget_region(struct iwv_mr *mr);
struct iwv_mr *MPIDI_CH3I_Hy_registered(const void *buf, size_t len); /* covering, or NULL */

/* ---- sends held behind RDMA transfers (hy_hold.c) ---- */
typedef enum {
    MPIDI_CH3I_HY_HELD_COPY,     /* header and data copied into buf */
    MPIDI_CH3I_HY_HELD_REQUEST,  /* a request whose buffers stay valid until it completes */
    MPIDI_CH3I_HY_HELD_RDMA_WRITE, /* a PUT (origin) or GET response (target): Write + fence Read
                                    * posted; then the header as `placed`, or all of it on SCTP;
                                    * or (on_qp) Write + header Send + Read: then nothing more */
    MPIDI_CH3I_HY_HELD_RDMA_GET, /* Read posted; then GET_PLACED, or the GET on SCTP */
    MPIDI_CH3I_HY_HELD_RDMA_ATOMIC, /* a FOP or CAS as an RNIC atomic; then finished here as CH3
                                     * finishes its response, or (never sent) on SCTP */
    MPIDI_CH3I_HY_HELD_LOCAL_ACK /* the acknowledgement of a flush or unlock that RDMA proved
                                  * (hy_placed.c), given here once all ahead of it left; pkt is
                                  * the FLUSH to send instead if a put ahead was resent */
} MPIDI_CH3I_Hy_held_kind;

/* Where a held entry is. Its state changes only in MPIDI_CH3I_Hy_held_to (hy_rdma.c), which
 * traces it (MPICH's debug log, class OTHER): QUEUED -> POSTED -> FAILED -> ABANDONED, or
 * POSTED -> ABANDONED. An entry leaves the queue once all before it left and `pending` is 0. */
typedef enum {
    MPIDI_CH3I_HY_HELD_QUEUED = 0,  /* COPY, REQUEST: waits only for what is ahead of it */
    MPIDI_CH3I_HY_HELD_POSTED,      /* RDMA: its work requests are on the QP */
    MPIDI_CH3I_HY_HELD_FAILED,      /* RDMA: one completed in error (or was refused): resend on
                                     * SCTP, unless the peer says it handled its header (on_qp) */
    MPIDI_CH3I_HY_HELD_ABANDONED    /* RDMA: its peer was lost; freed at its last completion */
} MPIDI_CH3I_Hy_held_state;

typedef struct MPIDI_CH3I_Hy_held {
    struct MPIDI_CH3I_Hy_held *next;
    MPIDI_CH3I_Hy_held_kind kind;
    MPIDI_VC_t *vc;
    MPIDI_CH3_Pkt_t pkt;         /* RDMA kinds: the CH3 header to send once the data is placed */
    MPIDI_CH3_Pkt_type_t placed; /* RDMA_WRITE: the header's type then (PUT_PLACED, GET_RESP_PLACED) */
    void *buf;                   /* COPY */
    size_t len;
    MPIR_Request *sreq;          /* REQUEST; RDMA_WRITE: the request CH3 waits on */
    struct iovec iov[MPL_IOV_LIMIT + 1]; /* REQUEST: iov[1..n); RDMA_WRITE: iov[1] is the data */
    int n;
    struct iwv_mr *mr;           /* RDMA: the origin buffer's registration */
    int own_mr;                  /* registered for this transfer alone (else a region's) */
    MPIDI_CH3I_Hy_held_state state;
    int pending;                 /* RDMA: completions still to come (always 0 for other kinds) */
    int on_qp;                   /* RDMA_WRITE: its header went as a Send, its Read reads credit */
    unsigned seq;                /* on_qp: which of our headers to this peer (from 1) */
    int acked_here;              /* RDMA_WRITE (PUT): the FLUSH or UNLOCK flag taken off its header,
                                  * since the origin acknowledges it itself (hy_placed.c) */
    unsigned resent_before;      /* LOCAL_ACK: its window's resends when it was held */
    unsigned slot;               /* RDMA_ATOMIC: where its result lands (qp_mem's atomic_result) */
    uint64_t atomic_index;       /* RDMA_ATOMIC: which of our atomics on this QP (from 0) */
    int not_sent;                /* RDMA_ATOMIC, FAILED: the peer never saw it (IWV_WC_NOT_SENT) */
    int original_known;          /* RDMA_ATOMIC, FAILED: the peer ran it and said what it returned */
    uint64_t original;           /* ... that value (QP_SYNC_ATOMIC) */
} MPIDI_CH3I_Hy_held;

/* ---- RDMA transfers (hy_rdma.c): each posted transfer is returned for the caller to hold ---- */
void MPIDI_CH3I_Hy_held_to(MPIDI_CH3I_Hy_held * h, MPIDI_CH3I_Hy_held_state to);
/* Held entries of every kind, zeroed, from a list of spares (NULL: out of memory). */
MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_held_new(MPIDI_CH3I_Hy_held_kind kind);
void MPIDI_CH3I_Hy_held_free(MPIDI_CH3I_Hy_held * h);
void MPIDI_CH3I_Hy_held_pool_finalize(void);
/* This PUT (header iov[0], data iov[1]) posted by RDMA (its request: ->sreq), or NULL: SCTP. */
MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_try_put(MPIDI_VC_t * vc, struct iovec *iov, int n);
/* This GET: SCTP (0), a Read posted (*posted), or GET_MODE=write's GET_WRITE to send (*instead). */
enum { MPIDI_CH3I_HY_GET_SCTP = 0, MPIDI_CH3I_HY_GET_POSTED, MPIDI_CH3I_HY_GET_ASK_WRITE };
int MPIDI_CH3I_Hy_try_get(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIDI_CH3I_Hy_held ** posted,
                          MPIDI_CH3_Pkt_t * instead);
/* The accumulate-family packets an RNIC atomic may carry (hy_rdma.c, hy_placed.c): one 8-byte
 * element. Their target window, flags, and the request awaiting the answer (MPI_REQUEST_NULL
 * for an accumulate, which has none); 0 if pkt is none of them. */
static inline int MPIDI_CH3I_Hy_atomic_fields(const MPIDI_CH3_Pkt_t * pkt, MPI_Win * win, int *flags,
                                              MPI_Request * handle)
{
    switch (pkt->type) {
        case MPIDI_CH3_PKT_FOP_IMMED:
            *win = pkt->fop.target_win_handle, *flags = pkt->fop.pkt_flags;
            *handle = pkt->fop.request_handle;
            return 1;
        case MPIDI_CH3_PKT_CAS_IMMED:
            *win = pkt->cas.target_win_handle, *flags = pkt->cas.pkt_flags;
            *handle = pkt->cas.request_handle;
            return 1;
        case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
            *win = pkt->get_accum.target_win_handle, *flags = pkt->get_accum.pkt_flags;
            *handle = pkt->get_accum.request_handle;
            return 1;
        case MPIDI_CH3_PKT_ACCUMULATE_IMMED:
            *win = pkt->accum.target_win_handle, *flags = pkt->accum.pkt_flags;
            *handle = MPI_REQUEST_NULL;
            return 1;
        default:
            return 0;
    }
}
/* This FOP, CAS, single-element get-accumulate or accumulate (one header, iov[0]) posted as an
 * RNIC atomic, or NULL: SCTP. */
MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_try_atomic(MPIDI_VC_t * vc, struct iovec *iov, int n);
/* Its completion came: finish it as CH3 finishes its response, or fail it (hy_placed.c); the
 * packets the target must then get (the FOP or CAS itself if it never went, a FLUSH, a
 * DECR_AT_COUNTER) are in send[0..*nsend), for the caller to send in that order. */
int MPIDI_CH3I_Hy_atomic_done(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h, MPIDI_CH3_Pkt_t send[2],
                              int *nsend);
/* At the target of a GET_WRITE: CH3's GET response (header in sreq->dev.pending_pkt, data iov[1])
 * posted as an RDMA Write to the origin's buffer, or NULL to send it on SCTP. */
MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_try_write_answer(MPIDI_VC_t * vc, MPIR_Request * sreq,
                                                  const struct iovec *iov, uint64_t origin_addr,
                                                  uint32_t origin_stag);
/* At the origin: the answer to GET_WRITE request `handle` came; drop its buffer's registration. */
void MPIDI_CH3I_Hy_get_answered(MPI_Request handle);
void MPIDI_CH3I_Hy_get_targets_lost(MPIDI_VC_t * vc); /* ... or never will: vc is lost */

void MPIDI_CH3I_Hy_pvars_register(void); /* hy_pvars.c */

/* ---- placed packets (hy_placed.c) ---- */
void MPIDI_CH3I_Hy_register_handlers(MPIDI_CH3_PktHandler_Fcn ** table);
/* CH3's GET handler, run for a GET_PLACED or GET_WRITE, sends its response: header-only (*n cut
 * to 1), or by RDMA Write (the transfer to hold is returned); else NULL and nothing changed. */
MPIDI_CH3I_Hy_held *MPIDI_CH3I_Hy_answer_response(MPIDI_VC_t * vc, MPIR_Request * sreq,
                                                  const struct iovec *iov, int *n);
/* A GET's Read done and no lock to release: finish it; *decr: a DECR_AT_COUNTER to send, if so typed. */
int MPIDI_CH3I_Hy_get_done(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * get, MPIDI_CH3_Pkt_t * decr);
/* Acknowledgements the origin gives itself (hy_placed.c). Issue order: what a packet sent to vc
 * (not an RDMA put) does to its window's record. */
void MPIDI_CH3I_Hy_note_issued(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt);
/* An RDMA put whose header goes on the QP: take its FLUSH or UNLOCK flag off (returned) if the
 * origin may acknowledge it itself once the put's Read completed; else 0. */
int MPIDI_CH3I_Hy_ack_here(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * put);
/* The RDMA put h was posted: its effect on its window's record (after MPIDI_CH3I_Hy_ack_here). */
void MPIDI_CH3I_Hy_put_issued(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_held * h);
/* A FLUSH or UNLOCK packet (asking for an ACK) that the origin may acknowledge itself. */
int MPIDI_CH3I_Hy_ack_packet_here(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt);
/* CH3's ACK handler run for the peer vc's acknowledgement of window source_win (ours). */
int MPIDI_CH3I_Hy_local_ack(MPIDI_VC_t * vc, MPI_Win source_win);
/* An RDMA put to the peer's window target_win failed and goes again over SCTP. */
void MPIDI_CH3I_Hy_put_resent(MPIDI_VC_t * vc, MPI_Win target_win);
/* PUT headers on the QP, at the target: one arrived (from the CQ); an SCTP packet from vc is
 * about to be handled; it was fully handled. */
void MPIDI_CH3I_Hy_header_arrived(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_header_t * h, size_t len);
void MPIDI_CH3I_Hy_before_packet(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt);
void MPIDI_CH3I_Hy_packet_done(MPIDI_VC_t * vc);
void MPIDI_CH3I_Hy_run_deferred(MPIDI_VC_t * vc);       /* handle the headers whose turn came */
void MPIDI_CH3I_Hy_drop_deferred(MPIDI_VC_t * vc);      /* the peer is gone */

#endif /* MPIDI_CH3_HYBRID_H_INCLUDED */
