/* SPDX-License-Identifier: BSD-3-Clause */
/* C ABI of the SCTP transport core (libsctpmpi).
 *
 * Included by the MPICH channel glue (which must be C) and by the tools. One transport per
 * process: one usrsctp stack, one UDP encapsulation port, one one-to-many SCTP socket.
 * Messages of any length are fragmented, sent on the stream chosen by the stream-mapping
 * policy, and delivered to the callbacks in per-sender order (README.md, "Message order").
 * Every call is made from the thread that drives progress unless noted otherwise. */
#ifndef SCTPMPI_H
#define SCTPMPI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sctpm_transport sctpm_transport;
typedef struct sctpm_config sctpm_config;
typedef int32_t sctpm_peer; /* index assigned by the transport, >= 0 */

#define SCTPM_ERRLEN 512
#define SCTPM_CARD_MAX 1024

/* ---- configuration ---------------------------------------------------------------------- */
/* Reads MPIR_CVAR_CH3_SCTP_* and the historical MPICH_SCTP_MULTIHOME_FILE, MPICH_SCTP_BINDALL,
 * MPICH_INTERFACE_HOSTNAME from the environment. NULL on a bad value (err names it). */
sctpm_config *sctpm_config_from_env(char *err, size_t errlen);
/* Set one key (names as in sctpm_config_keys, e.g. "cmt", "streams"); -1 on a bad key/value. */
int sctpm_config_set(sctpm_config *cfg, const char *key, const char *value, char *err, size_t errlen);
/* Current value of a key as text; -1 if the key is unknown. */
int sctpm_config_get(const sctpm_config *cfg, const char *key, char *out, size_t outlen);
/* NULL-terminated list of keys with one-line descriptions (for MPI_T / --help). */
const char *const *sctpm_config_keys(void);
const char *sctpm_config_describe(const char *key);
void sctpm_config_free(sctpm_config *cfg);

/* ---- events ------------------------------------------------------------------------------ */
typedef enum {
    SCTPM_EV_ASSOC_UP = 1,     /* association established (or peer restarted: restart = 1) */
    SCTPM_EV_ASSOC_LOST,       /* association aborted or timed out: the peer is failed */
    SCTPM_EV_CANT_START,       /* association setup failed: the peer is unreachable */
    SCTPM_EV_SHUTDOWN,         /* peer shut down gracefully */
    SCTPM_EV_PATH_CHANGE,      /* a path changed state (state field) */
    SCTPM_EV_SEND_FAILED,      /* data could not be delivered (peer failed) */
    SCTPM_EV_PROTOCOL_ERROR    /* malformed bytes from the peer: association aborted */
} sctpm_event_type;

typedef enum {
    SCTPM_PATH_ACTIVE = 1,
    SCTPM_PATH_UNREACHABLE,
    SCTPM_PATH_POTENTIALLY_FAILED,
    SCTPM_PATH_CONFIRMED,
    SCTPM_PATH_ADDED,
    SCTPM_PATH_REMOVED,
    SCTPM_PATH_ENDED           /* its association has ended (sctpm_peer_paths only) */
} sctpm_path_state;

typedef struct {
    sctpm_event_type type;
    sctpm_peer peer;         /* -1 if the association was never identified */
    uint32_t assoc_id;
    int restart;             /* ASSOC_UP after a peer restart */
    sctpm_path_state state;  /* PATH_CHANGE */
    char address[64];        /* PATH_CHANGE: the path's address */
    int error;               /* errno-style cause where known */
    char detail[256];        /* human-readable: what happened, with which peer and value */
} sctpm_event;

/* ---- callbacks ---------------------------------------------------------------------------- */
typedef struct {
    void *ctx;
    /* A message of `total` bytes from `peer` is next in order. `head` holds its first head_len bytes.
     * Return how many head bytes were consumed; if bytes remain (in head or still in the network),
     * set *msg to a handle: the transport then asks on_dest where they go. */
    size_t (*on_message)(void *ctx, sctpm_peer peer, uint64_t total, const void *head,
                         size_t head_len, void **msg);
    /* Where the next bytes of msg go: fill at most max iovs and return the count (> 0). */
    int (*on_dest)(void *ctx, void *msg, struct iovec *iov, int max);
    /* The iovs of the last on_dest hold `filled` bytes now; last = 1 when the message ended. */
    void (*on_placed)(void *ctx, void *msg, size_t filled, int last);
    /* A queued send finished: status 0 = handed to the stack (buffers reusable), else -errno. */
    void (*on_sent)(void *ctx, void *cookie, int status);
    /* An association or path event; events about failures also fail the peer's queued sends. */
    void (*on_event)(void *ctx, const sctpm_event *ev);
    /* An association we did not open introduced itself: `hello` is the blob the peer passed to
     * sctpm_open, `card` its business card. Return the peer id to bind it to (sctpm_peer_add may be
     * called from here), or -1 to reject (the association is aborted). */
    sctpm_peer (*on_hello)(void *ctx, const void *hello, size_t hello_len, const char *card);
    /* Optional: called with entering = 1 right before sctpm_progress blocks in the kernel and with
     * entering = 0 right after (e.g. to release a global lock meanwhile). No other sctpm call may
     * run concurrently with the transport outside that window. */
    void (*on_block)(void *ctx, int entering);
    /* Optional: an association ended while a link the remote opened on it was unproven (its hello
     * challenged, the proof never came), as when a process dies outside the library before it can
     * answer: no peer event would ever tell of that death. Called once per such hello. Return the
     * peer the hello names, added by the caller's own card for it (never one the hello carried), or
     * -1. The transport connects that peer if it has no association yet: a dead process then fails
     * the connect (SCTPM_EV_CANT_START), a live one costs one association. */
    sctpm_peer (*on_unproven_end)(void *ctx, const void *hello, size_t hello_len);
    /* Optional: called once right after the stall report (setting stall_report_s), from the
     * waiting call and under the caller's lock, for the caller to say what it waits for. */
    void (*on_stall)(void *ctx);
} sctpm_callbacks;

/* ---- lifecycle ----------------------------------------------------------------------------- */
/* Create the process's transport. `hostname` selects the multihome-file lines (NULL: gethostname);
 * `hello` is an opaque identity sent to every peer on a new association. */
sctpm_transport *sctpm_open(const sctpm_config *cfg, const char *hostname, const void *hello,
                            size_t hello_len, const sctpm_callbacks *cb, char *err, size_t errlen);
/* Flush queued sends (bounded by timeout_ms), shut the associations down, free everything. */
void sctpm_close(sctpm_transport *t, int timeout_ms);
/* This process's business card: "sctpm1;udp=<port>;sctp=<port>;addr=<a>[,<a>...];key=<hex>". The
 * key is the job's secret: quote a card only through sctpm_redact_key. */
const char *sctpm_card(const sctpm_transport *t);
/* text, a card or its PMI form (a business card or port name of the channels, "key#<hex>"), fit for a
 * message: the value of its key field replaced by "<redacted>". Writes at most outlen bytes to out
 * (NUL-terminated, cut short if need be) and returns out. */
const char *sctpm_redact_key(const char *text, char *out, size_t outlen);
const char *sctpm_last_error(const sctpm_transport *t);

/* ---- peers --------------------------------------------------------------------------------- */
/* Register a peer by its card; no association is made until the first send. -1 on a bad card. */
sctpm_peer sctpm_peer_add(sctpm_transport *t, const char *card);
/* Start the association now and introduce ourselves (sctpm_send does this lazily): lets the
 * peer learn of us before we have data for it (connect/accept). 0 or -errno. */
int sctpm_peer_connect(sctpm_transport *t, sctpm_peer p);
/* The same, introducing ourselves on this association with another hello blob. */
int sctpm_peer_connect_as(sctpm_transport *t, sctpm_peer p, const void *hello, size_t hello_len);
/* 1 if the peer failed (association lost / unreachable / protocol error), else 0. */
int sctpm_peer_failed(const sctpm_transport *t, sctpm_peer p);
/* Abort the association with a peer and forget it (its queued sends complete with -ECONNABORTED). */
void sctpm_peer_remove(sctpm_transport *t, sctpm_peer p);
/* The caller is done with the peer for good: its memory is freed, no event names it again, and
 * its link on the association is given back once the remote gives it back too (the association
 * stays, for the process's other peers). Its id is not reused. */
void sctpm_peer_release(sctpm_transport *t, sctpm_peer p);

/* ---- sending -------------------------------------------------------------------------------- */
typedef struct {
    int32_t context;  /* MPI context id (or any ordering domain key) */
    int32_t tag;      /* MPI tag */
    int32_t cls;      /* 0 = matchable message; 1 = control packet (the policy may pin it); 2 = a
                       * control packet that may go ahead of this peer's queued messages that have
                       * not started (a reply its sender waits for, such as a clear-to-send) */
} sctpm_key;

/* Send iov as one message. Returns 0 if it was handed to the stack at once (buffers reusable;
 * on_sent is not called), 1 if queued (on_sent(cookie) follows; iov buffers must stay valid until
 * then; the iov array itself is copied), or -errno (peer failed: -ECONNRESET, bad peer: -EINVAL). */
int sctpm_send(sctpm_transport *t, sctpm_peer p, const sctpm_key *key, const struct iovec *iov,
               int iovcnt, void *cookie);

/* sctpm_send for one batch of a message sent in several (the receiver appends each to the one
 * before): more != 0 says that the next batch, with the same cookie, follows at once, or from
 * on_sent for this one when it was queued. Whatever else is sent to p until then goes after it. */
int sctpm_send_batch(sctpm_transport *t, sctpm_peer p, const sctpm_key *key, const struct iovec *iov,
                     int iovcnt, void *cookie, int more);

/* Like sctpm_send, but the caller's buffers are free when it returns: if the message cannot be
 * handed to the stack at once, its bytes are copied and sent later. Returns 0 or -errno. */
int sctpm_send_copy(sctpm_transport *t, sctpm_peer p, const sctpm_key *key, const struct iovec *iov,
                    int iovcnt);

/* ---- progress ------------------------------------------------------------------------------- */
/* Run every stage once (read, write, events, extra stages). If nothing happened and timeout_us != 0,
 * busy-poll for the configured spin time, then block on the eventfd for up to timeout_us
 * (-1 = until something happens); if nothing happened and timeout_us == 0, yield the CPU once, so
 * that a caller polling in a loop leaves it to usrsctp's threads. Returns the work done (>= 0), or
 * -EIO after an internal error (sctpm_last_error says which): the call waiting on progress should
 * fail with that message, as no later round may do what the failed one left undone. */
int sctpm_progress(sctpm_transport *t, int64_t timeout_us);
/* Make a blocked sctpm_progress return; safe from any thread. */
void sctpm_wakeup(sctpm_transport *t);
/* Extra progress stage (e.g. the iWARP completion queue): fn returns work done. */
int sctpm_add_stage(sctpm_transport *t, const char *name, int (*fn)(void *arg), void *arg);
/* Also wake sctpm_progress when fd becomes readable (e.g. an armed completion queue's event fd):
 * the stages then run. A stage must make the fd unreadable again (read it), or the wait spins. */
int sctpm_watch_fd(sctpm_transport *t, int fd);
/* While spinning, ask ready(arg) instead of polling the watched fds (a system call per spin round
 * costs small messages ~15% of their round trip): non-zero runs the stages. Once a probe is added
 * it must stand for every watched fd; a blocked wait still sleeps on the fds. */
int sctpm_add_spin_probe(sctpm_transport *t, int (*ready)(void *arg), void *arg);
/* While busy(arg) returns non-zero, a blocked sctpm_progress runs the stages every 50 us or so
 * (as for its own blocked sends): for work that no fd announces, such as a send waiting for the
 * peer's window to open. */
int sctpm_add_busy(sctpm_transport *t, int (*busy)(void *arg), void *arg);
/* 1 while sends are queued inside the transport. */
int sctpm_sends_pending(const sctpm_transport *t);

/* ---- observability --------------------------------------------------------------------------- */
typedef struct {
    char address[64];
    sctpm_path_state state;
    uint32_t srtt_us, rto_ms, cwnd, mtu;
    uint64_t rx_bytes;  /* payload bytes received from this address */
} sctpm_path_info;

typedef struct {
    uint64_t tx_bytes, rx_bytes, tx_messages, rx_messages, reordered, retries;
} sctpm_peer_stats;

/* Paths of the peer's association (state from the stack), in the order of the peer's card (its
 * multihome-file order); returns the count, 0 if the peer never sent us anything, -1 if no such
 * peer. After its association ended (the peer shut down or died), the
 * addresses its data came from, as SCTPM_PATH_ENDED with their byte counts: counters never go back
 * to zero, and a report at the end of a job still shows the peers that left first. */
int sctpm_peer_paths(sctpm_transport *t, sctpm_peer p, sctpm_path_info *out, int max);
int sctpm_peer_stats_get(const sctpm_transport *t, sctpm_peer p, sctpm_peer_stats *out);

/* SCTP-AUTH on peer p's association (setting auth=packet): the key id it sends with, as the stack
 * reports it (0 = the null key, -1 = unknown), the key id the stack last saw the peer's packets
 * switch to (-1 = none yet), and 1 once the null key is deleted (packets under it are dropped).
 * Once the association has ended: its state at the end (the key as the stack reported it when it
 * last changed). Returns 0, or -1 when p is unknown or never had an association. */
typedef struct {
    int active_key, peer_key, null_key_deleted;
} sctpm_packet_auth;
int sctpm_packet_auth_get(const sctpm_transport *t, sctpm_peer p, sctpm_packet_auth *out);

/* Bytes that remotes made this process hold before the receiver took them, against the bounds
 * pre_hello_bytes (frames of links whose hello has not arrived) and reorder_bytes (messages
 * ahead of their turn): held now over all associations / all peers, the most one association /
 * one peer ever held, and the associations aborted for passing a bound; also the associations
 * aborted for a failed proof of membership (setting auth). */
typedef struct {
    uint64_t pre_hello_bytes, pre_hello_peak;
    uint64_t reorder_bytes, reorder_peak;
    uint64_t bound_aborts;
    uint64_t auth_failures;
} sctpm_held_stats;
void sctpm_held_stats_get(const sctpm_transport *t, sctpm_held_stats *out);

/* HMAC-SHA-256 of the concatenated parts (32 bytes into out) under a link key (the "auth"
 * setting): this process's own (p < 0) or the one in peer p's card. For the channels' own proofs
 * of membership (ch3:hybrid's queue-pair connections); make a label of your own the first part.
 * Returns 0, or -1 when p is unknown or its card has no key (a card from a hello). */
int sctpm_link_key_mac(const sctpm_transport *t, sctpm_peer p, const struct iovec *parts, int n,
                       unsigned char out[32]);
/* 1 if mac is that HMAC (compared in constant time), else 0 (also without a key). */
int sctpm_link_key_mac_check(const sctpm_transport *t, sctpm_peer p, const struct iovec *parts, int n,
                             const unsigned char mac[32]);

#ifdef __cplusplus
}
#endif
#endif
