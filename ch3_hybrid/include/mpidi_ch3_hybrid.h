/* ch3:hybrid: how its files talk to each other and to the ch3:sctp glue they are built with.
 *
 * One-sided data moves by RDMA over per-peer iWARP queue pairs; every CH3 packet still travels on
 * the SCTP path, in issue order. An RDMA PUT is an RDMA Write of the origin data into the target
 * window plus a 1-byte RDMA Read behind it (a Read Request is served only after the earlier Write
 * is placed, RFC 5040 §5.5, and our RNIC handles messages in DDP-SSN order); when the Read
 * completes, the PUT's CH3 header goes out on SCTP under a "placed" packet type and the target
 * runs CH3's own handler with the data already in place. A GET is, by default, an RDMA Read into
 * the origin buffer and completes at the origin as CH3 completes an acknowledging GET response
 * (the target gets only a fence counter packet if the GET carried one, or the whole GET as
 * "placed" if it releases a lock). In the thesis' variant (GET_MODE=write) the GET goes to the
 * target with the origin buffer's STag, and the target answers with an RDMA Write, a fence Read
 * and a header-only response, as the origin does for a PUT. Sends issued to that peer meanwhile
 * are held behind each transfer (hy_hold.c), so every lock, flush, fence and counter packet of
 * CH3 still follows the data it covers, as with ch3:sctp (am_flush_ordered stays 1). */
#ifndef MPIDI_CH3_HYBRID_H_INCLUDED
#define MPIDI_CH3_HYBRID_H_INCLUDED

#include "iwarp_verbs.h"

/* ---- configuration (hy_cvars.c) ---- */
typedef struct {
    int rdma;              /* 0: everything on the SCTP path (for A/B runs) */
    MPI_Aint put_threshold; /* PUTs of at least this many bytes go by RDMA Write */
    MPI_Aint get_threshold; /* GETs of at least this many bytes go by RDMA */
    int get_write;         /* GETs are answered by the target's RDMA Write (else the origin's Read) */
    int connect_all;       /* connect to every window member at window creation, not on demand */
    int progress_thread;   /* the RNIC runs on its own thread (else in the progress engine) */
} MPIDI_CH3I_Hy_config_t;
extern MPIDI_CH3I_Hy_config_t MPIDI_CH3I_Hy_config;
int MPIDI_CH3I_Hy_read_cvars(void);

/* ---- the RNIC (hy_device.c) ---- */
typedef struct {
    iwv_device *dev;
    iwv_pd *pd;
    iwv_cq *cq;
    struct iwv_mr *scratch;   /* target of the 1-byte fence Reads */
    int fd;                   /* caller mode: the RNIC's work fd */
    char fence_byte[64];
    int windows;              /* live windows: the CQ stage runs only while > 0 or work is left */
    int in_flight;            /* RDMA operations not yet completed */
    int failed;               /* the RNIC could not be opened: RDMA is off for this process */
    /* MPI_T counters (hy_pvars.c) */
    unsigned long long puts, gets;      /* operations whose data RDMA placed */
    unsigned long long bytes;           /* their data */
    unsigned long long fallbacks;       /* RDMA operations that failed and went over SCTP instead */
} MPIDI_CH3I_Hy_rnic_t;
extern MPIDI_CH3I_Hy_rnic_t MPIDI_CH3I_Hy_rnic;
int MPIDI_CH3I_Hy_open(void);      /* at the first window: 0, or a reason printed once and RDMA off */
int MPIDI_CH3I_Hy_finalize(void);
void MPIDI_CH3I_Hy_connect(MPIDI_VC_t * vc);     /* start a connect if the VC has none (on demand) */
int MPIDI_CH3I_Hy_pkt_connect_me(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                                 MPIR_Request ** rreqp);
int MPIDI_CH3I_Hy_qp_ready(MPIDI_VC_t * vc);     /* 1 if RDMA may go to this peer now */
int MPIDI_CH3I_Hy_local_contact(char *addr, size_t len, unsigned short *sctp_port,
                                unsigned short *udp_port);

/* ---- registered windows of peers (hy_window.c) ---- */
typedef struct MPIDI_CH3I_Hy_remote_win {
    struct MPIDI_CH3I_Hy_remote_win *next;
    MPI_Win handle;            /* the peer's window handle, as CH3 packets name it */
    uintptr_t base;
    MPI_Aint size;
    uint32_t stag;
} MPIDI_CH3I_Hy_remote_win;
/* The STag covering [addr, addr+len) of the peer's window `handle`, or 0. */
uint32_t MPIDI_CH3I_Hy_stag_for(MPIDI_VC_t * vc, MPI_Win handle, const void *addr, size_t len);

/* ---- memory registered beforehand: MPI_Alloc_mem's and windows (hy_memory.c) ---- */
void MPIDI_CH3I_Hy_remember_region(struct iwv_mr *mr);
void MPIDI_CH3I_Hy_forget_region(struct iwv_mr *mr);
struct iwv_mr *MPIDI_CH3I_Hy_registered(const void *buf, size_t len); /* covering, or NULL */

/* ---- sends held behind RDMA transfers (hy_hold.c) ---- */
typedef enum {
    MPIDI_CH3I_HY_HELD_COPY,     /* header and data copied into buf */
    MPIDI_CH3I_HY_HELD_REQUEST,  /* a request whose buffers stay valid until it completes */
    MPIDI_CH3I_HY_HELD_RDMA_WRITE, /* a PUT (origin) or GET response (target): Write + fence Read
                                    * posted; then the header as `placed`, or all of it on SCTP */
    MPIDI_CH3I_HY_HELD_RDMA_GET  /* Read posted; then GET_PLACED, or the GET on SCTP */
} MPIDI_CH3I_Hy_held_kind;

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
    int pending;                 /* RDMA: completions still to come (always 0 for other kinds) */
    int failed;                  /* RDMA: one completed in error, so resend on the SCTP path */
    int abandoned;               /* RDMA: its peer was lost; only its completions are awaited */
} MPIDI_CH3I_Hy_held;

/* Hooks at the two send funnels of ch3_send.c: 1 if they took the send (result in *mpi_errno);
 * 0 sends it on the plain path (the request hook may have cut it to its header: *n). */
int MPIDI_CH3I_Hy_start_msg(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIR_Request ** sreq_ptr,
                            int *mpi_errno);
int MPIDI_CH3I_Hy_send_request(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int *n,
                               int *mpi_errno);
void MPIDI_CH3I_Hy_hold(MPIDI_VC_t * vc, MPIDI_CH3I_Hy_held * h);   /* append in issue order */
int MPIDI_CH3I_Hy_release(MPIDI_VC_t * vc);  /* send what no longer waits; an mpi_errno */
void MPIDI_CH3I_Hy_completed(const struct iwv_wc *wc);  /* a CQ entry of a held transfer */
void MPIDI_CH3I_Hy_vc_lost(MPIDI_VC_t * vc, int mpi_errno); /* fail and drop what it holds */

/* ---- RDMA operations (hy_rdma.c) ---- */
/* Try to move this PUT or GET by RDMA; 1 if taken (result in *mpi_errno), 0 to send it on the
 * SCTP path. */
int MPIDI_CH3I_Hy_try_put(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIR_Request ** sreq_ptr);
int MPIDI_CH3I_Hy_try_get(MPIDI_VC_t * vc, struct iovec *iov, int n, int *mpi_errno);
/* At the target of a GET_WRITE: answer CH3's GET response (header in sreq->dev.pending_pkt, data
 * iov[1]) by an RDMA Write to the origin's buffer; 1 if posted (then held), 0 to send it on SCTP. */
int MPIDI_CH3I_Hy_try_write_answer(MPIDI_VC_t * vc, MPIR_Request * sreq, const struct iovec *iov,
                                   uint64_t origin_addr, uint32_t origin_stag);
/* At the origin: the answer to GET_WRITE request `handle` came; drop its buffer's registration. */
void MPIDI_CH3I_Hy_get_answered(MPI_Request handle);

void MPIDI_CH3I_Hy_pvars_register(void); /* hy_pvars.c */

/* ---- placed packets (hy_placed.c) ---- */
void MPIDI_CH3I_Hy_register_handlers(MPIDI_CH3_PktHandler_Fcn ** table);
/* What CH3's GET handler is answering while it runs for one of our packets: its response is
 * header-only (GET_PLACED: the origin read the data) or goes by RDMA Write (GET_WRITE). */
typedef struct {
    enum { MPIDI_CH3I_HY_ANSWER_PLAIN = 0, MPIDI_CH3I_HY_ANSWER_PLACED, MPIDI_CH3I_HY_ANSWER_WRITE } how;
    uint64_t origin_addr;
    uint32_t origin_stag;
} MPIDI_CH3I_Hy_answer_t;
extern MPIDI_CH3I_Hy_answer_t MPIDI_CH3I_Hy_answer;
int MPIDI_CH3I_Hy_get_done(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * get); /* Read done, no lock to release */

#endif /* MPIDI_CH3_HYBRID_H_INCLUDED */
