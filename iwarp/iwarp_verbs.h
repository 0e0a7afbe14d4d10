/* SPDX-License-Identifier: BSD-3-Clause */
/* C ABI of the software iWARP RNIC (libiwarp): a verbs API with libibverbs' names and semantics
 * (prefix iwv_), plus the connection calls that rdma_cm would give (connect/listen/accept/reject).
 * RDMAP (RFC 5040) over DDP (RFC 5041) over SCTP as RFC 5043 says, on the process's one usrsctp
 * stack (started through sctpm::start_stack, shared with the MPI transport) but on a socket of
 * its own that announces the DDP Adaptation Layer Indication.
 *
 * Threading rules
 *  - Every call may be made from any thread: each device has one lock that all calls on it and
 *    its PDs, MRs, CQs and QPs take. Callbacks do not exist; nothing is called back into user code.
 *  - Progress mode IWV_PROGRESS_THREAD: a device thread (the "RNIC") moves data; the user only
 *    posts and polls. iwv_cq_wait() blocks on the CQ's event fd.
 *    Progress mode IWV_PROGRESS_CALLER: nothing moves unless the owner calls iwv_progress() (or
 *    iwv_cq_wait(), which calls it). iwv_device_fd() becomes readable when progress has work
 *    (usrsctp's threads write it from their upcall), so the owner can add it to its own poll set.
 *    Progress mode IWV_PROGRESS_STANDBY: as CALLER while the owner calls in; when it has not driven
 *    progress for IWV_STANDBY_AFTER_US (it computes), a device thread moves data (places Writes,
 *    answers Reads) until the owner is back. The thread sleeps while the owner drives progress.
 *    post_send sends what it can at once in both modes.
 *  - Memory registered with iwv_reg_mr must stay valid until iwv_dereg_mr returns. Buffers of a
 *    posted WR must stay valid until its completion has been polled.
 *
 * Errors: functions returning int give 0 or a positive errno value (as libibverbs does); those
 * returning pointers give NULL. iwv_last_error(dev) then names what was wrong (the device's
 * latest error, copied for the calling thread: valid until its next iwv_last_error). */
#ifndef IWARP_VERBS_H
#define IWARP_VERBS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct iwv_device iwv_device;
typedef struct iwv_pd iwv_pd;
typedef struct iwv_cq iwv_cq;
typedef struct iwv_qp iwv_qp;
typedef struct iwv_conn_request iwv_conn_request;

/* ---- device ----------------------------------------------------------------------------- */
enum iwv_progress_mode { IWV_PROGRESS_THREAD = 0, IWV_PROGRESS_CALLER = 1, IWV_PROGRESS_STANDBY = 2 };
#define IWV_STANDBY_AFTER_US 250
#define IWV_OWNER_BACK_GUARD_US 1000 /* iwv_device_owner_back: no standby service starts for this long */

struct iwv_device_attr {
    enum iwv_progress_mode progress;
    const char *bind_address; /* local addresses of the DDP endpoint (RFC 5043 §7.2), comma-separated
                               * (several: each association is multihomed); NULL = all */
    uint16_t sctp_port;       /* SCTP port of the DDP endpoint; 0 = reserve a free one */
    uint32_t path_mtu;        /* largest IP packet on any path (link MTU); 0 = each path's route MTU */
    uint32_t max_segment;     /* cap on DDP segments (SCTP message bytes, DDP-SSN included); 0 = none */
    uint32_t initiate_timeout_ms; /* an incoming association whose Initiate has not arrived whole
                                   * within this is aborted; 0 = IWV_INITIATE_TIMEOUT_MS */
    uint32_t max_pending_requests; /* incoming associations waiting for their Initiate at most; a new
                                    * one past this aborts the oldest; 0 = IWV_MAX_PENDING_REQUESTS */
    uint64_t early_bytes; /* per QP, bytes of messages held ahead of a missing DDP-SSN; more ends the
                           * session with an error naming the bound; 0 = IWV_EARLY_BYTES */
    uint32_t standby_after_us; /* standby mode: the owner's absence after which the thread serves;
                                * 0 = IWV_STANDBY_AFTER_US */
};
#define IWV_INITIATE_TIMEOUT_MS 10000
#define IWV_MAX_PENDING_REQUESTS 64
#define IWV_EARLY_BYTES (64ull << 20)
void iwv_device_attr_init(struct iwv_device_attr *attr);

/* Starts the usrsctp stack if nobody has (settings from the MPIR_CVAR_CH3_SCTP_* environment). */
iwv_device *iwv_open_device(const struct iwv_device_attr *attr, char *err, size_t errlen);
int iwv_close_device(iwv_device *dev); /* EBUSY while PDs, CQs or QPs exist */
const char *iwv_last_error(iwv_device *dev);
uint16_t iwv_device_sctp_port(iwv_device *dev);
uint16_t iwv_device_udp_port(iwv_device *dev);
/* Lock-free, for a caller's spin loop: a count of the RNIC socket's upcalls (it moves when the
 * RNIC may have work; caller mode then needs iwv_progress). */
uint64_t iwv_device_activity(iwv_device *dev);

/* Caller-driven progress: runs the RNIC once, waiting up to timeout_ms (0 = poll, -1 = forever)
 * for work when there is none. Returns the amount of work done (>= 0). In thread mode it only waits. */
int iwv_progress(iwv_device *dev, int timeout_ms);
int iwv_device_fd(iwv_device *dev);
/* Standby mode: the owner is in its progress loop (it will drive progress when there is news),
 * so the standby thread stays asleep. Lock-free and cheap: call it every round. Other modes: no-op. */
void iwv_device_owner_present(iwv_device *dev);
/* Standby mode: as iwv_device_owner_present, and a standby service under way (placements, Read
 * answers, atomics) ends before this returns; none starts while the owner is inside its progress
 * engine (iwv_device_owner_inside) nor for the next IWV_OWNER_BACK_GUARD_US (or the standby delay
 * if longer). The owner's own loads and stores of memory the RNIC may change are then not
 * concurrent with it. Waits on the device lock if the thread is serving: not while holding it.
 * Other modes: no-op. */
void iwv_device_owner_back(iwv_device *dev);
/* Standby mode: the owner blocks in its own wait (1), which the device's fd wakes, or is back (0):
 * while it blocks there it counts as present. Lock-free. Other modes: no-op. */
void iwv_device_owner_waiting(iwv_device *dev, int waiting);
/* Standby mode: the owner entered its progress engine (1) or left it (0); calls nest (and
 * iwv_post_send counts as one). Between the two it counts as present however long a round takes
 * (a large copy is not an absence); its absence starts when it leaves. Lock-free, an atomic add
 * and a clock read: call it on every entry and exit. */
void iwv_device_owner_inside(iwv_device *dev, int inside);
/* Caller mode: 1 while a QP has data the association would not take yet. SCTP does not always
 * announce the window opening, so the owner should call iwv_progress again soon. */
int iwv_device_tx_blocked(iwv_device *dev);

/* ---- protection domains and memory regions ---------------------------------------------- */
iwv_pd *iwv_alloc_pd(iwv_device *dev);
int iwv_dealloc_pd(iwv_pd *pd); /* EBUSY while MRs or QPs use it */

enum iwv_access_flags { /* libibverbs' values */
    IWV_ACCESS_LOCAL_WRITE = 1,
    IWV_ACCESS_REMOTE_WRITE = 2,
    IWV_ACCESS_REMOTE_READ = 4,
    IWV_ACCESS_REMOTE_ATOMIC = 8 /* target of RFC 7306 atomics; needs LOCAL_WRITE too, as in verbs */
};

struct iwv_mr {
    iwv_device *device;
    iwv_pd *pd;
    void *addr;
    size_t length;
    uint32_t lkey; /* iWARP has one STag per region: lkey == rkey */
    uint32_t rkey;
};
struct iwv_mr *iwv_reg_mr(iwv_pd *pd, void *addr, size_t length, int access);
int iwv_dereg_mr(struct iwv_mr *mr);
/* Local invalidation (the effect of a LOCAL_INV work request, done at once). EINVAL if not valid. */
int iwv_invalidate_mr(struct iwv_mr *mr);
int iwv_mr_valid(struct iwv_mr *mr); /* 1 while the STag is valid, 0 once invalidated */

/* ---- completion queues ------------------------------------------------------------------ */
enum iwv_wc_status { /* libibverbs' values */
    IWV_WC_SUCCESS = 0,
    IWV_WC_LOC_LEN_ERR = 1,
    IWV_WC_LOC_QP_OP_ERR = 2,
    IWV_WC_LOC_PROT_ERR = 4,
    IWV_WC_WR_FLUSH_ERR = 5,
    IWV_WC_LOC_ACCESS_ERR = 8,
    IWV_WC_REM_INV_REQ_ERR = 9,
    IWV_WC_REM_ACCESS_ERR = 10,
    IWV_WC_REM_OP_ERR = 11,
    IWV_WC_FATAL_ERR = 19,
    IWV_WC_GENERAL_ERR = 21
};
enum iwv_wc_opcode { /* libibverbs' values */
    IWV_WC_SEND = 0,
    IWV_WC_RDMA_WRITE = 1,
    IWV_WC_RDMA_READ = 2,
    IWV_WC_COMP_SWAP = 3,
    IWV_WC_FETCH_ADD = 4,
    IWV_WC_RECV = 128
};
enum iwv_wc_flags {
    IWV_WC_WITH_INV = 1 << 3,  /* libibverbs' value: invalidated_rkey is set */
    IWV_WC_SOLICITED = 1 << 8, /* ours: the Send carried the Solicited Event flag */
    IWV_WC_NOT_SENT = 1 << 9   /* ours: flushed before any of it went to the LLP, so the peer
                                * never saw it (a non-idempotent atomic may be posted again) */
};
struct iwv_wc {
    uint64_t wr_id;
    enum iwv_wc_status status;
    enum iwv_wc_opcode opcode;
    uint32_t vendor_err; /* for errors caused by a Terminate: layer << 16 | etype << 8 | code */
    uint32_t byte_len;
    uint32_t invalidated_rkey;
    uint32_t qp_num;
    unsigned int wc_flags;
};

iwv_cq *iwv_create_cq(iwv_device *dev, int cqe); /* cqe: capacity; overflow is an error state */
int iwv_destroy_cq(iwv_cq *cq);                  /* EBUSY while a QP uses it */
int iwv_poll_cq(iwv_cq *cq, int num_entries, struct iwv_wc *wc); /* count, or -1 on overflow */
/* Arm the event fd for the next completion (solicited_only: only solicited receives and errors),
 * as ibv_req_notify_cq. The fd stays readable until iwv_cq_ack_event. */
int iwv_req_notify_cq(iwv_cq *cq, int solicited_only);
int iwv_cq_fd(iwv_cq *cq);
int iwv_cq_pending(iwv_cq *cq); /* lock-free: 1 if entries seem to be waiting (a hint for spin loops) */
void iwv_cq_ack_event(iwv_cq *cq);
/* Wait until the CQ is non-empty or timeout_ms passes (-1 = forever); drives progress in caller
 * mode. Returns 1 if entries are waiting, 0 on timeout. */
int iwv_cq_wait(iwv_cq *cq, int timeout_ms);

/* ---- queue pairs ------------------------------------------------------------------------ */
enum iwv_qp_state { /* libibverbs' values */
    IWV_QPS_RESET = 0,
    IWV_QPS_INIT = 1,
    IWV_QPS_RTR = 2,
    IWV_QPS_RTS = 3,
    IWV_QPS_ERR = 6
};
struct iwv_qp_cap {
    uint32_t max_send_wr;
    uint32_t max_recv_wr;
    uint32_t max_send_sge;
    uint32_t max_recv_sge;
    uint32_t max_inline_data; /* accepted and ignored: data is copied into the segment anyway */
};
struct iwv_qp_init_attr {
    void *qp_context;
    iwv_cq *send_cq;
    iwv_cq *recv_cq;
    struct iwv_qp_cap cap;
    int sq_sig_all;
};
struct iwv_qp_attr {
    enum iwv_qp_state state;
    uint32_t qp_num;
    uint16_t ird, ord; /* negotiated (RFC 6581) once connected */
    uint32_t max_segment; /* DDP segment limit of the association (SCTP message bytes), 0 if none */
    /* The first Terminate this QP sent or received (RFC 5040 §4.8), 0/0 if none:
     * layer << 16 | etype << 8 | code, and a text naming it. */
    int terminate_sent, terminate_received;
    uint32_t terminate_code;
    char terminate_text[160];
};
iwv_qp *iwv_create_qp(iwv_pd *pd, const struct iwv_qp_init_attr *attr);
int iwv_destroy_qp(iwv_qp *qp);
/* RESET->INIT, INIT->RTR, RTR->RTS, any->ERR, ERR/any->RESET; anything else is EINVAL. Moving to
 * ERR flushes every outstanding WR with IWV_WC_WR_FLUSH_ERR. iWARP QPs normally reach RTS through
 * iwv_connect/iwv_accept rather than by hand; posting sends needs a connected QP in RTS. */
int iwv_modify_qp(iwv_qp *qp, enum iwv_qp_state state);
int iwv_query_qp(iwv_qp *qp, struct iwv_qp_attr *attr);
uint32_t iwv_qp_num(iwv_qp *qp);

/* Ours: what became of the peer's RFC 7306 atomics, for a peer whose connection broke while
 * some were in flight (an atomic is not idempotent: it must not be sent again if it ran, and its
 * Response may be what was lost). The QP counts the Atomic Requests it carried out, in order from
 * 0, and keeps the original values of the last IWV_ATOMIC_LOG; a peer with at most that many in
 * flight can learn each one's fate (by some other path) and the result of each that ran. */
#define IWV_ATOMIC_LOG 64
uint64_t iwv_qp_atomics_done(iwv_qp *qp);
/* 0 and *original if the index-th atomic carried out is among the last IWV_ATOMIC_LOG; else ENOENT. */
int iwv_qp_atomic_original(iwv_qp *qp, uint64_t index, uint64_t *original);

struct iwv_sge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
};
enum iwv_wr_opcode { /* libibverbs' values */
    IWV_WR_RDMA_WRITE = 0,
    IWV_WR_SEND = 2,
    IWV_WR_RDMA_READ = 4,
    IWV_WR_ATOMIC_CMP_AND_SWP = 5,   /* RFC 7306 CmpSwap, unmasked */
    IWV_WR_ATOMIC_FETCH_AND_ADD = 6, /* RFC 7306 FetchAdd, one 64-bit field */
    IWV_WR_ATOMIC_SWAP = 64,         /* ours: RFC 7306 CmpSwap with compare mask 0 (always swaps) */
    IWV_WR_SEND_WITH_INV = 9
};
enum iwv_send_flags { /* libibverbs' values */
    IWV_SEND_FENCE = 1,     /* wait for earlier RDMA Reads to complete first */
    IWV_SEND_SIGNALED = 2,
    IWV_SEND_SOLICITED = 4, /* Send with Solicited Event (also with Invalidate) */
    IWV_SEND_INLINE = 8     /* accepted; makes no difference here */
};
struct iwv_send_wr {
    uint64_t wr_id;
    struct iwv_send_wr *next;
    struct iwv_sge *sg_list;
    int num_sge;
    enum iwv_wr_opcode opcode;
    unsigned int send_flags;
    uint32_t invalidate_rkey; /* SEND_WITH_INV */
    struct {
        uint64_t remote_addr; /* the remote region's Tagged Offset (its virtual address) */
        uint32_t rkey;
    } rdma;
    /* ATOMIC_*: the 8 bytes at remote_addr (an 8-byte aligned address in a region registered with
     * IWV_ACCESS_REMOTE_ATOMIC) become compare_add + them (FETCH_AND_ADD), or swap if they equal
     * compare_add (CMP_AND_SWP), or swap (SWAP); the value before lands in the one 8-byte SGE
     * (host order).
     * Atomic between all atomics of the target's device; each takes an ORD credit as a Read does. */
    struct {
        uint64_t remote_addr;
        uint64_t compare_add;
        uint64_t swap;
        uint32_t rkey;
    } atomic;
};
struct iwv_recv_wr {
    uint64_t wr_id;
    struct iwv_recv_wr *next;
    struct iwv_sge *sg_list;
    int num_sge;
};
/* Chained WRs are checked one by one; the first bad one stops the chain (*bad_wr names it). */
int iwv_post_send(iwv_qp *qp, struct iwv_send_wr *wr, struct iwv_send_wr **bad_wr);
int iwv_post_recv(iwv_qp *qp, struct iwv_recv_wr *wr, struct iwv_recv_wr **bad_wr);

/* ---- connections (RFC 5043 session control, RFC 6581 IRD/ORD) ---------------------------- */
struct iwv_conn_param {
    const void *private_data; /* at most 508 bytes (512 minus the IRD/ORD word) */
    uint16_t private_data_len;
    uint16_t responder_resources; /* IRD: Read Requests we serve at once */
    uint16_t initiator_depth;     /* ORD: Read Requests we keep outstanding */
};
#define IWV_MAX_PRIVATE_DATA 508

/* Non-blocking. The QP must be in INIT with its PD; it moves to RTR, and to RTS when the peer
 * accepts (IWV_EVENT_ESTABLISHED) or ERR when it rejects (IWV_EVENT_REJECTED). */
int iwv_connect(iwv_qp *qp, const char *address, uint16_t sctp_port, uint16_t udp_port,
                const struct iwv_conn_param *param);
/* Take over an association that already exists on a DDP-enabled usrsctp socket (its Adaptation
 * Layer Indication must have been 1): usrsctp_peeloff'ed, or a one-to-one socket (one_to_many
 * NULL, assoc ignored). active = 1 sends the Initiate; 0 waits for one (IWV_EVENT_CONNECT_REQUEST). */
int iwv_adopt(iwv_device *dev, iwv_qp *qp, void *usrsctp_socket, int one_to_many, uint32_t assoc,
              int active, const struct iwv_conn_param *param);

enum iwv_event_type {
    IWV_EVENT_CONNECT_REQUEST = 1, /* passive side: request holds the Initiate */
    IWV_EVENT_ESTABLISHED,         /* qp reached RTS */
    IWV_EVENT_REJECTED,            /* active side: peer rejected; private data attached */
    IWV_EVENT_DISCONNECTED,        /* peer sent a session Terminate, or the association ended */
    IWV_EVENT_QP_ERROR,            /* a Terminate was sent or received; qp is in ERR */
    IWV_EVENT_UNREACHABLE          /* active side: the association could not be set up */
};
struct iwv_event {
    enum iwv_event_type type;
    iwv_qp *qp;                 /* NULL for CONNECT_REQUEST */
    iwv_conn_request *request;  /* CONNECT_REQUEST only; answer with accept or reject */
    uint16_t ird, ord;          /* the peer's, from its Initiate/Accept/Reject */
    uint16_t private_data_len;
    uint8_t private_data[IWV_MAX_PRIVATE_DATA];
    char detail[160];           /* why, for DISCONNECTED, QP_ERROR and UNREACHABLE */
};
/* Next connection event: 1 if one was returned, 0 if none (after waiting up to timeout_ms,
 * driving progress in caller mode). */
int iwv_get_event(iwv_device *dev, struct iwv_event *ev, int timeout_ms);
/* qp in INIT, same device. Sends Accept with our IRD/ORD (lowered to what the initiator offers);
 * the QP is in RTS on return. */
int iwv_accept(iwv_conn_request *req, iwv_qp *qp, const struct iwv_conn_param *param);
int iwv_reject(iwv_conn_request *req, const void *private_data, uint16_t len);
/* Sends the session Terminate and closes the association; the QP goes to ERR (flushing). */
int iwv_disconnect(iwv_qp *qp);

#ifdef __cplusplus
}
#endif
#endif
