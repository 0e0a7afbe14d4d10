/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: what the channel's own files share. */
#ifndef MPIDI_CH3_IMPL_H_INCLUDED
#define MPIDI_CH3_IMPL_H_INCLUDED

#include "mpidimpl.h"
#include "sctpmpi.h"

#define MPIDI_CH3I_SHM_MUTEX_LOCK(win_ptr)
#define MPIDI_CH3I_SHM_MUTEX_UNLOCK(win_ptr)
#define MPIDI_CH3I_SHM_MUTEX_INIT(win_ptr)
#define MPIDI_CH3I_SHM_MUTEX_DESTROY(win_ptr)

/* The process's transport (ch3_init.c). */
extern sctpm_transport *MPIDI_CH3I_sctp;

/* ch3_peers.c: VC <-> transport peer. */
int MPIDI_CH3I_VC_peer(MPIDI_VC_t * vc);        /* registers the VC's card on first use; -1 on error */
MPIDI_VC_t *MPIDI_CH3I_Peer_vc(sctpm_peer peer);
void MPIDI_CH3I_Peer_bind(sctpm_peer peer, MPIDI_VC_t * vc);
void MPIDI_CH3I_Peer_unbind(sctpm_peer peer);
sctpm_peer MPIDI_CH3I_On_hello(void *ctx, const void *hello, size_t len, const char *card);
sctpm_peer MPIDI_CH3I_On_unproven_end(void *ctx, const void *hello, size_t len);
void MPIDI_CH3I_On_stall(void *ctx);
int MPIDI_CH3I_Card_to_bc(const char *card, char *bc, size_t len);  /* PMI-safe form */
int MPIDI_CH3I_Bc_to_card(const char *bc, char *card, size_t len);
int MPIDI_CH3I_Apply_cvars(sctpm_config * cfg, char *err, size_t errlen); /* ch3_cvars.c */
#define MPIDI_CH3I_PVAR_PATHS 4 /* paths per rank in the MPI_T path variables (ch3_pvars.c) */
void MPIDI_CH3I_Pvars_register(int world_size);

/* ch3_send.c: shared send path. The two funnels every send passes (iov[0] is the header slot);
 * the _now forms skip the extension's send hooks (for sends it held and now releases). */
int MPIDI_CH3I_Send_request(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int n);
int MPIDI_CH3I_Send_request_now(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int n);
/* A send that failed completes its request with the error (every part it counts); MPI_SUCCESS. */
int MPIDI_CH3I_Completed_if_failed(MPIR_Request * sreq, int mpi_errno);
int MPIDI_CH3I_Start_msg_now(MPIDI_VC_t * vc, struct iovec *iov, int n, MPIR_Request ** sreq_ptr);
MPIR_Request *MPIDI_CH3I_Send_request_create(const void *pkt); /* for a caller-buffered message */
/* The request's data left by other means (ch3:hybrid's RDMA): finish it as a sent request. */
int MPIDI_CH3I_Request_sent(MPIDI_VC_t * vc, MPIR_Request * sreq);
#define MPIDI_CH3I_COPY_LIMIT (256 * 1024) /* messages up to this size are copied when they cannot leave */
void MPIDI_CH3I_On_sent(void *ctx, void *cookie, int status);
void MPIDI_CH3I_Key_of(const MPIDI_CH3_Pkt_t * pkt, MPIR_Request * req, sctpm_key * key);
int MPIDI_CH3I_Peer_error(MPIDI_VC_t * vc, int rc);
int MPIDI_CH3I_Peer_error_code(MPIDI_VC_t * vc, int rc);      /* the same error, nothing released */

/* ch3_recv.c: the peer is lost (why: for the notice); its receives, sends and windows fail. */
void MPIDI_CH3I_Fail_vc(MPIDI_VC_t * vc, const char *why);
/* ch3_progress.c: hydra's notices of dead processes (SIGUSR1), read from MPI_Init to finalize. */
int MPIDI_CH3I_Dead_notices_start(void);
void MPIDI_CH3I_Dead_notices_stop(void);
/* ch3_progress.c: a lost rank of MPI_COMM_WORLD counts as failed for CH3's MPI_ANY_SOURCE rule. */
void MPIDI_CH3I_Note_lost_proc(MPIDI_VC_t * vc);

/* ch3_awaited.c: requests waiting for a peer's answer (clear-to-send, sync acknowledgement, RMA
 * response), listed per VC so that they fail when it is lost. */
MPI_Request MPIDI_CH3I_Answer_asked(const MPIDI_CH3_Pkt_t * pkt); /* the request it asks an answer for */
void MPIDI_CH3I_Await_answer(MPIDI_VC_t * vc, MPI_Request handle);  /* that packet went */
void MPIDI_CH3I_Answered(MPIDI_VC_t * vc, MPI_Request handle);      /* its answer arrived */
void MPIDI_CH3I_Wrap_answers(MPIDI_CH3_PktHandler_Fcn ** table);
/* The peer is lost: fail what waits for it (its windows too); 1 if something did. */
int MPIDI_CH3I_Fail_awaiting(MPIDI_VC_t * vc, int mpi_errno);
/* A request for a peer already lost (or unreachable): it fails, with the windows' waits on that
 * peer, in the next progress call (Fail_late), not at once. */
void MPIDI_CH3I_Fail_later(MPIDI_VC_t * vc, MPIR_Request * req);
int MPIDI_CH3I_Fail_late(void);         /* an mpi_errno if a one-sided wait was failed */
void MPIDI_CH3I_Awaiting_vc_destroy(MPIDI_VC_t * vc);

/* ch3_rma_failure.c: one-sided operations towards a target that died. */
int MPIDI_CH3I_Rma_peer_lost(MPIDI_VC_t * vc, int mpi_errno); /* its windows; 1 if one waited */
int MPIDI_CH3I_Rma_targets_lost(MPIDI_VC_t * vc, int mpi_errno); /* the origin side of that only */
int MPIDI_CH3I_Is_rma_operation(const MPIDI_CH3_Pkt_t * pkt);    /* CH3 issues it from its op list */
int MPIDI_CH3I_Is_accumulate(const MPIDI_CH3_Pkt_t * pkt); /* ACCUMULATE, GET_ACCUM, FOP, CAS (+IMMED) */
void MPIDI_CH3I_Rma_send_failed(MPIDI_VC_t * vc); /* to a lost peer: drop the answers CH3 counted on */
/* Complete a request with an error, and the MPI_Rput/MPI_Rget request it stands for. */
void MPIDI_CH3I_Complete_with_error(MPIR_Request * req, int mpi_errno);
int MPIDI_CH3I_Win_rank_of(MPIR_Win * win_ptr, MPIDI_VC_t * vc); /* vc's rank in the window, or -1 */
/* ch3_rma_dead_origin.c, the target side: who holds this process's window locks, which origins an exposure epoch waits
 * for. Every event that may change a window's lock or completion counter runs between
 * Target_event_begin and Target_event_end(the peer it came from): packet handlers, requests that
 * finish (their OnDataAvail), ch3:hybrid's placed headers. */
int MPIDI_CH3I_Rma_target_win_init(MPIR_Win * win_ptr);  /* window hooks (ch3_win_fns.c) */
void MPIDI_CH3I_Rma_target_win_free(MPIR_Win * win_ptr);
void MPIDI_CH3I_Target_event_begin(void);
void MPIDI_CH3I_Target_event_end(MPIDI_VC_t * vc);
/* A packet's handler returned (rreq: the request still receiving its data, or NULL) ... */
void MPIDI_CH3I_Target_packet_done(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt,
                                   const MPIR_Request * rreq);
/* ... or that request's data was all handled (its target window and packet flags). */
void MPIDI_CH3I_Target_data_done(MPIDI_VC_t * vc, MPI_Win handle, int pkt_flags);
void MPIDI_CH3I_Target_sending(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt); /* the send funnels */
/* The origin is lost: release its locks, fail an exposure epoch waiting for it; 1 if one did.
 * A loss reported from inside CH3 (a send that failed) waits for a safe point. */
int MPIDI_CH3I_Rma_origin_lost(MPIDI_VC_t * vc, int mpi_errno);
/* The progress engine: 1 entering the transport's progress (or back from its blocking wait), 0
 * leaving it (or blocking, when other threads may enter CH3); both are safe points. */
void MPIDI_CH3I_Rma_target_safe(int safe);

/* ch3_recv.c: receive callbacks. */
size_t MPIDI_CH3I_On_message(void *ctx, sctpm_peer peer, uint64_t total, const void *head,
                             size_t head_len, void **msg);
int MPIDI_CH3I_On_dest(void *ctx, void *msg, struct iovec *iov, int max);
void MPIDI_CH3I_On_placed(void *ctx, void *msg, size_t filled, int last);
void MPIDI_CH3I_On_event(void *ctx, const sctpm_event * ev);
int MPIDI_CH3I_Recv_init(void);
extern int MPIDI_CH3I_pending_errno; /* error raised inside a callback, returned by progress */
void MPIDI_CH3I_Raise_error(int mpi_errno); /* inside a callback: keep the first error */
/* Diagnostics, the one way both channels speak to the user: one stderr line "[<channel>] rank
 * R: <text>". ERROR: the user must see it (a refused setting, a failed start). NOTICE: a peer is
 * gone or the channel recovered from a failure (a lost rank, a broken queue pair);
 * MPIR_CVAR_CH3_SCTP_NOTICES=0 silences these, for runs that provoke failures on purpose. ASKED:
 * what the user turned on (MPIR_CVAR_CH3_SCTP_PATH_REPORT). Developer tracing goes to MPICH's
 * debug log (MPL_DBG), not here. */
enum { MPIDI_CH3I_REPORT_ERROR, MPIDI_CH3I_REPORT_NOTICE, MPIDI_CH3I_REPORT_ASKED };
/* At MPI_Finalize, with MPIR_CVAR_CH3_SCTP_PATH_REPORT: one line per peer rank, its paths and
 * the bytes each carried to us (ch3_pvars.c). */
void MPIDI_CH3I_Path_report(void);
void MPIDI_CH3I_Report(int level, const char *format, ...) __attribute__ ((format(printf, 2, 3)));
/* Of two results, the first error (for code that goes on after one). */
#define MPIDI_CH3I_FIRST_ERROR(first, then) ((first) ? (first) : (then))
/* Install `wrapper` as table[type]; returns the handler it wraps, which the wrapper calls. */
MPIDI_CH3_PktHandler_Fcn *MPIDI_CH3I_Pkt_wrap(MPIDI_CH3_PktHandler_Fcn ** table,
                                              MPIDI_CH3_Pkt_type_t type,
                                              MPIDI_CH3_PktHandler_Fcn * wrapper);
/* Packet types: CH3's, then a channel's own (MPIDI_CH3_PKT_ENUM, compiled in with its VC fields). */
#define MPIDI_CH3I_PKT_TYPES MPIDI_CH3_PKT_END_ALL

int MPIDI_CH3I_Progress_init(void);
int MPIDI_CH3I_Progress_finalize(void);

/* ---- The extension interface: the hook points a channel built on these sources fills in ----
 * ch3:hybrid's table is in ch3_hybrid/src/hy_hold.c; ch3:sctp's is empty (ch3_no_ext.c, the one
 * file only ch3:sctp builds). A NULL hook is skipped. Hooks run where CH3's lock is held.
 * The table is used only if its `wanted` hook says so at the first look (MPIDI_CH3I_Ext, from
 * the first VC's initialisation on, before MPIDI_CH3_Init): otherwise none of its hooks ever
 * runs, and the process runs exactly ch3:sctp's code (ch3:hybrid with MPIR_CVAR_CH3_HYBRID_RDMA
 * false; that is how one MPICH build serves as both channels, e.g. in ./check.sh).
 * Return convention: a hook that can fail returns an mpi_errno; a send hook also says whether it
 * took the send (its return value), so its mpi_errno goes through a pointer. */
typedef struct {
    const char *name;           /* in diagnostics; NULL: "ch3:sctp" */
    int (*wanted) (void);       /* 0: the table is not used at all (NULL: it is) */
    int (*init) (void);         /* MPIDI_CH3_Init, before the transport opens: an mpi_errno */
    int (*finalize) (void);     /* MPIDI_CH3_Finalize, before the transport closes */
    void (*vc_init) (MPIDI_VC_t * vc);
    void (*vc_lost) (MPIDI_VC_t * vc, int mpi_errno);   /* before ch3_awaited.c fails what waits for it */
    void (*pvars_register) (void);
    /* After CH3's handlers and ch3_awaited.c's wrappers: set its own packet types' handlers,
     * wrap others with MPIDI_CH3I_Pkt_wrap. */
    void (*handlers_register) (MPIDI_CH3_PktHandler_Fcn ** table);
    void (*before_packet) (MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt); /* its handler runs next */
    void (*after_packet) (MPIDI_VC_t * vc);     /* that packet and its data are fully handled */
    /* The two send funnels: 1 if the hook took the send (its result in *mpi_errno), 0 to send it
     * on SCTP now (send_request may have cut the iov to the header: *n). */
    int (*start_msg) (MPIDI_VC_t * vc, struct iovec * iov, int n, MPIR_Request ** sreq_ptr,
                      int *mpi_errno);
    int (*send_request) (MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec * iov, int *n,
                         int *mpi_errno);
    void (*sent) (MPIDI_VC_t * vc, const sctpm_key * key);      /* a message went to the transport */
    void (*blocking) (int entering);    /* the progress engine blocks in the kernel (1), is back (0) */
    void (*inside) (int entering);      /* MPIDI_CH3I_Progress is entered (1), left (0) */
    /* RMA: CH3's window functions and hooks, changed where the extension needs (ch3_win_fns.c). */
    void (*win_fns) (MPIDI_CH3U_Win_fns_t * fns);
    void (*win_hooks) (MPIDI_CH3U_Win_hooks_t * hooks);
    void (*describe_stall) (MPIDI_VC_t * vc);   /* after the stall report: what waits for this peer */
} MPIDI_CH3I_Ext_t;
extern const MPIDI_CH3I_Ext_t MPIDI_CH3I_ext_table; /* the channel's (ch3_no_ext.c, hy_hold.c) */
extern const MPIDI_CH3I_Ext_t *MPIDI_CH3I_ext_in_use;
const MPIDI_CH3I_Ext_t *MPIDI_CH3I_Ext_choose(void);       /* ch3_init.c */
/* The extension's hooks as this process runs them. */
static inline const MPIDI_CH3I_Ext_t *MPIDI_CH3I_Ext(void)
{
    return MPIDI_CH3I_ext_in_use ? MPIDI_CH3I_ext_in_use : MPIDI_CH3I_Ext_choose();
}

#endif /* MPIDI_CH3_IMPL_H_INCLUDED */
