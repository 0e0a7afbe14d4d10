/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: the target side of one-sided operations when an origin dies (the origin side, a
 * target that dies, is ch3_rma_failure.c).
 * CH3 4.0.2 keeps a window's lock as a type and a count of shared holders, and its queue of lock
 * requests; it records no holder. So a lock that a dead origin held would stay held, and every
 * other origin's lock request to this window would wait behind it for ever. And an exposure
 * epoch (MPI_Win_post) counts the completions it waits for in at_completion_counter, which a
 * dead origin's completion would never decrement.
 *
 * Each window has a record here (made by the window hooks, ch3_win_fns.c) of who holds its lock,
 * built by watching the lock change around every event that can change it: each packet handler
 * CH3 runs, each receive or send request that finishes (their OnDataAvail), and ch3:hybrid's
 * placed headers (MPIDI_CH3I_Target_event_begin/end). What changed during an event belongs to
 * the event's peer, except that
 * - a request that left the lock queue was granted to the entry's VC (when a lock is released,
 *   CH3 grants queued requests, and may perform and release one at once if it carried UNLOCK);
 * - what changed between events belongs to this process itself (MPI_Win_lock and
 *   MPI_Win_unlock of its own window, from the caller or CH3's progress hook).
 * A release is charged to the event's peer first, then to a queued request granted and
 * released in the same event, then to this process. When the origin dies, its queued requests
 * leave the queue and each lock it held is released (MPIDI_CH3I_Release_lock, which grants the
 * next requests as an UNLOCK would), at the next point where CH3 is at rest (see at_rest).
 *
 * PSCW: the record keeps which origins the open exposure epoch posted to (the zero-byte post
 * messages it sends, SYNC_POST_TAG on the window's communicator) and whose completion came
 * (a DECR_AT_COUNTER flag, or the counter falling in its events). An origin posted to that dies
 * before its completion came fails the epoch: its share of the counter is taken back, the epoch
 * ends, and the progress call that saw the loss returns the peer's error, so an MPI_Win_wait or
 * MPI_Win_test waiting for it fails. A completion that came before the origin died counts as
 * usual (the wait succeeds).
 *
 * Fence: a fence past its reduce-scatter waits for the origins that target this window, and
 * which of them the dead one was, and whether its last operation came, is unknown. A fence epoch
 * waiting for any completion fails as an exposure epoch does.
 * An exposure epoch posted with MPI_MODE_NOCHECK sends no post messages, so which origins it
 * waits for is unknown. The record opens such an epoch ("unposted") when it sees the window
 * exposed without posts, or the counter rise between events (MPI_Win_post of the next epoch). A
 * window member that dies before its completion came fails it, as a fence: it may have been one
 * of them, if the epoch opened before the loss was reported (a later one is left alone, even
 * if the loss is handled during it). Its share of the counter is taken back only if it is known
 * to be a member (it sent this epoch an RMA packet); else the counter keeps it, and a later
 * exposure epoch of the window would wait for it.
 *
 * Not covered (README, "When a peer dies"): the epoch's error reaching another call than
 * MPI_Win_wait when that call's progress saw the loss; counter increments of GET-like
 * operations from the dead origin whose response could not be sent (MPI_Win_free at this rank
 * then waits for them). */
#include "mpidi_ch3_impl.h"
#include "mpidrma.h"

#define SYNC_POST_TAG 100 /* CH3's tag for MPI_Win_post's messages (ch3u_rma_sync.c) */

typedef struct {
    const void *entry;          /* the lock queue entry */
    MPIDI_VC_t *vc;
    int flags;
} queued_t;

typedef struct target_rec {
    MPIR_Win *win;
    MPIDI_VC_t **holders;       /* one per lock held (a shared lock: one per origin) */
    int n_holders, cap_holders;
    queued_t *queue;            /* the lock queue as of the last reconciliation */
    int n_queue, cap_queue;
    /* PSCW, per rank of the window's communicator, for the open exposure epoch */
    int size;
    char *posted, *completed;
    char *accessed;             /* sent an RMA packet for this window in the epoch */
    int *net;                   /* change of at_completion_counter in the rank's events */
    int epoch_open;
    int unposted;               /* the open epoch sent no post messages (MPI_MODE_NOCHECK) */
    int counter_before;         /* at_completion_counter when the current event began */
    int counter_after;          /* ... when the last event ended, or the epoch opened */
    unsigned opened_after;      /* the number of losses reported when the epoch opened */
    struct target_rec *next;
} target_rec;

static target_rec *records;
static int event_depth;
/* The transport may report a loss from inside a send, that is from anywhere in CH3, even from
 * MPIDI_CH3I_Release_lock walking the lock queue. A lost origin's locks and queue entries are
 * therefore handled only where CH3 is at rest: inside the transport's progress, between events
 * (the progress engine says when, MPIDI_CH3I_Rma_target_safe). */
static int at_rest;
static struct {
    MPIDI_VC_t *vc;
    int mpi_errno;
    unsigned seq;               /* its number among the losses reported */
} *lost_pending;
static unsigned losses_reported;
static int n_lost_pending, cap_lost_pending;

static int grow(void **array, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int cap2 = *cap ? 2 * *cap : 8;
    while (cap2 < need)
        cap2 *= 2;
    void *p = MPL_realloc(*array, cap2 * elem, MPL_MEM_RMA);
    if (!p)
        return -1;
    *array = p;
    *cap = cap2;
    return 0;
}

static int locks_held(const MPIR_Win * w)
{
    if (w->current_lock_type == MPI_LOCK_EXCLUSIVE)
        return 1;
    if (w->current_lock_type == MPI_LOCK_SHARED)
        return w->shared_lock_ref_cnt;
    return 0;
}

static MPIDI_VC_t *self_vc(MPIR_Win * w)
{
    MPIDI_VC_t *vc;
    MPIDI_Comm_get_vc(w->comm_ptr, w->comm_ptr->rank, &vc);
    return vc;
}

/* An RMA packet's flags and target window; -1 for a packet without them. */
static int rma_flags(const MPIDI_CH3_Pkt_t * pkt, MPI_Win * handle)
{
    switch (pkt->type) {
        case MPIDI_CH3_PKT_PUT:
        case MPIDI_CH3_PKT_PUT_IMMED:
            *handle = pkt->put.target_win_handle;
            return pkt->put.pkt_flags;
        case MPIDI_CH3_PKT_GET:
            *handle = pkt->get.target_win_handle;
            return pkt->get.pkt_flags;
        case MPIDI_CH3_PKT_ACCUMULATE:
        case MPIDI_CH3_PKT_ACCUMULATE_IMMED:
            *handle = pkt->accum.target_win_handle;
            return pkt->accum.pkt_flags;
        case MPIDI_CH3_PKT_GET_ACCUM:
        case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
            *handle = pkt->get_accum.target_win_handle;
            return pkt->get_accum.pkt_flags;
        case MPIDI_CH3_PKT_FOP:
        case MPIDI_CH3_PKT_FOP_IMMED:
            *handle = pkt->fop.target_win_handle;
            return pkt->fop.pkt_flags;
        case MPIDI_CH3_PKT_CAS_IMMED:
            *handle = pkt->cas.target_win_handle;
            return pkt->cas.pkt_flags;
        case MPIDI_CH3_PKT_LOCK:
            *handle = pkt->lock.target_win_handle;
            return pkt->lock.pkt_flags;
        case MPIDI_CH3_PKT_DECR_AT_COUNTER:
            *handle = pkt->decr_at_cnt.target_win_handle;
            return pkt->decr_at_cnt.pkt_flags | MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER;
        default:
            return -1;
    }
}

static int entry_flags(const MPIDI_RMA_Target_lock_entry_t * e)
{
    MPI_Win handle;
    return rma_flags(&e->pkt, &handle);
}

static void add_holder(target_rec * r, MPIDI_VC_t * vc)
{
    if (grow((void **) &r->holders, &r->cap_holders, r->n_holders + 1, sizeof(*r->holders)) == 0)
        r->holders[r->n_holders++] = vc;
}

static int remove_holder(target_rec * r, MPIDI_VC_t * vc)
{
    for (int i = r->n_holders - 1; i >= 0; i--)
        if (r->holders[i] == vc) {
            r->holders[i] = r->holders[--r->n_holders];
            return 1;
        }
    return 0;
}

/* Bring the record up to the window's lock state; `vc` is the peer whose event changed it. */
static void reconcile(target_rec * r, MPIDI_VC_t * vc)
{
    MPIR_Win *w = r->win;
    MPIDI_RMA_Target_lock_entry_t *e;
    queued_t granted[16];       /* requests granted in this event (beyond 16: charged as others) */
    int n_granted = 0, used[16] = { 0 }, held = locks_held(w), d;

    if (r->n_holders == 0 && r->n_queue == 0 && held == 0 && !w->target_lock_queue_head)
        return;
    /* Requests that left the queue were granted (CH3 takes one off only to grant it). */
    for (int i = 0; i < r->n_queue; i++) {
        int found = 0;
        for (e = (MPIDI_RMA_Target_lock_entry_t *) w->target_lock_queue_head; e; e = e->next)
            if ((const void *) e == r->queue[i].entry && e->vc == r->queue[i].vc &&
                entry_flags(e) == r->queue[i].flags) {
                found = 1;
                break;
            }
        if (!found) {
            add_holder(r, r->queue[i].vc);
            if (n_granted < 16)
                granted[n_granted++] = r->queue[i];
        }
    }
    r->n_queue = 0;
    for (e = (MPIDI_RMA_Target_lock_entry_t *) w->target_lock_queue_head; e; e = e->next) {
        if (grow((void **) &r->queue, &r->cap_queue, r->n_queue + 1, sizeof(*r->queue)))
            break;
        r->queue[r->n_queue].entry = e;
        r->queue[r->n_queue].vc = e->vc;
        r->queue[r->n_queue].flags = entry_flags(e);
        r->n_queue++;
    }
    d = held - r->n_holders;
    for (; d > 0; d--)
        add_holder(r, vc);      /* granted at once to the event's peer */
    while (d < 0 && remove_holder(r, vc))
        d++;
    for (int i = 0; d < 0 && i < n_granted; i++)
        if ((granted[i].flags & MPIDI_CH3_PKT_FLAG_RMA_UNLOCK) && remove_holder(r, granted[i].vc)) {
            used[i] = 1;
            d++;
        }
    if (d < 0) {
        MPIDI_VC_t *self = self_vc(w);
        while (d < 0 && remove_holder(r, self))
            d++;
    }
    for (int i = 0; d < 0 && i < n_granted; i++)
        if (!used[i] && remove_holder(r, granted[i].vc))
            d++;
    if (held == 0)
        r->n_holders = 0;
    else if (r->n_holders > held) {     /* not explained by the rules above: keep the newest */
        memmove(r->holders, r->holders + (r->n_holders - held), held * sizeof(*r->holders));
        r->n_holders = held;
    }
}

static target_rec *record_of(MPI_Win handle)
{
    for (target_rec * r = records; r; r = r->next)
        if (r->win->handle == handle)
            return r;
    return NULL;
}

int MPIDI_CH3I_Rma_target_win_init(MPIR_Win * win_ptr)
{
    target_rec *r = MPL_calloc(1, sizeof(*r), MPL_MEM_RMA);
    if (!r)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    r->win = win_ptr;
    r->next = records;
    records = r;
    return MPI_SUCCESS;
}

void MPIDI_CH3I_Rma_target_win_free(MPIR_Win * win_ptr)
{
    for (target_rec ** p = &records; *p; p = &(*p)->next)
        if ((*p)->win == win_ptr) {
            target_rec *r = *p;
            *p = r->next;
            MPL_free(r->holders);
            MPL_free(r->queue);
            MPL_free(r->posted);
            MPL_free(r->completed);
            MPL_free(r->accessed);
            MPL_free(r->net);
            MPL_free(r);
            return;
        }
}

static int rank_in(target_rec * r, MPIDI_VC_t * vc)
{
    int rank = MPIDI_CH3I_Win_rank_of(r->win, vc);
    return rank >= 0 && rank < r->size ? rank : -1;
}

/* rank's completion of the open epoch came: its flag, or the counter fell in its events. */
static int completed_epoch(const target_rec * r, int rank)
{
    return r->completed[rank] || r->net[rank] <= -1;
}

static int epoch_waits_for(target_rec * r, int rank)
{
    return r->posted[rank] && !completed_epoch(r, rank);
}

/* The decrements a lost rank will never make leave the counter. */
static void take_back_share(target_rec * r, int rank)
{
    int owed = 1 + r->net[rank];
    if (owed > 0) {
        r->win->at_completion_counter -= MPL_MIN(owed, r->win->at_completion_counter);
        r->net[rank] -= owed;
    }
}

/* The open exposure epoch ends in error (the progress call that saw the loss returns it). */
static void fail_epoch(target_rec * r, int *epoch_failed)
{
    r->win->states.exposure_state = MPIDI_RMA_NONE;
    r->epoch_open = 0;
    *epoch_failed = 1;
}

/* The per-rank arrays sized for the window's communicator; 0 if memory ran out. */
static int sized(target_rec * r)
{
    int size = r->win->comm_ptr->local_size;
    if (size == r->size)
        return 1;
    MPL_free(r->posted);
    MPL_free(r->completed);
    MPL_free(r->accessed);
    MPL_free(r->net);
    r->posted = MPL_calloc(size, 1, MPL_MEM_RMA);
    r->completed = MPL_calloc(size, 1, MPL_MEM_RMA);
    r->accessed = MPL_calloc(size, 1, MPL_MEM_RMA);
    r->net = MPL_calloc(size, sizeof(int), MPL_MEM_RMA);
    r->size = (r->posted && r->completed && r->accessed && r->net) ? size : 0;
    r->epoch_open = 0;
    return r->size != 0;
}

static void open_epoch(target_rec * r, int unposted)
{
    memset(r->posted, 0, r->size);
    memset(r->completed, 0, r->size);
    memset(r->accessed, 0, r->size);
    memset(r->net, 0, r->size * sizeof(int));
    r->epoch_open = 1;
    r->unposted = unposted;
    r->counter_after = r->win->at_completion_counter;
    r->opened_after = losses_reported;
}

/* A post message of window r's exposure epoch goes to rank. */
static void posted_to(target_rec * r, int rank)
{
    if (!sized(r))
        return;
    if (r->epoch_open) {
        /* An epoch whose posts all completed has ended (MPI_Win_wait); this post opens the
         * next. Within one epoch MPI_Win_post sends every post before it waits for anything. */
        int waiting = 0;
        for (int i = 0; i < r->size && !waiting; i++)
            waiting = epoch_waits_for(r, i);
        if (!waiting || r->posted[rank])
            r->epoch_open = 0;
    }
    if (!r->epoch_open)
        open_epoch(r, 0);
    r->posted[rank] = 1;
}

/* Between events only this process changes the counter: MPI_Win_post raises it, its own
 * completions lower it. An exposure without posts, or a rise, is an unposted epoch opening. */
static void notice_unposted_epoch(target_rec * r)
{
    if (r->win->states.exposure_state != MPIDI_RMA_PSCW_EXPO)
        return;
    if ((!r->epoch_open || r->win->at_completion_counter > r->counter_after) && sized(r))
        open_epoch(r, 1);
}

void MPIDI_CH3I_Target_sending(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt)
{
    if (!records || (pkt->type != MPIDI_CH3_PKT_EAGER_SEND &&
                     pkt->type != MPIDI_CH3_PKT_EAGERSHORT_SEND) ||
        pkt->eager_send.match.parts.tag != SYNC_POST_TAG)
        return;
    for (target_rec * r = records; r; r = r->next)
        if (r->win->comm_ptr->context_id + MPIDI_CH3I_CONTEXT_PT2PT ==
            pkt->eager_send.match.parts.context_id &&
            r->win->states.exposure_state == MPIDI_RMA_PSCW_EXPO) {
            int rank = MPIDI_CH3I_Win_rank_of(r->win, vc);
            if (rank >= 0)
                posted_to(r, rank);
            return;
        }
}

/* An origin's completion (DECR_AT_COUNTER) for window `handle` was fully handled. */
static void completion_from(MPIDI_VC_t * vc, MPI_Win handle)
{
    target_rec *r = record_of(handle);
    int rank;
    if (r && r->epoch_open && (rank = rank_in(r, vc)) >= 0)
        r->completed[rank] = 1;
}

void MPIDI_CH3I_Target_packet_done(MPIDI_VC_t * vc, const MPIDI_CH3_Pkt_t * pkt,
                                   const MPIR_Request * rreq)
{
    MPI_Win handle;
    target_rec *r;
    int flags, rank;
    if (!records || (flags = rma_flags(pkt, &handle)) < 0)
        return;
    if ((r = record_of(handle)) && r->epoch_open && (rank = rank_in(r, vc)) >= 0)
        r->accessed[rank] = 1;  /* it accesses the window in this epoch: a member of it */
    if (!rreq && (flags & MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER))
        completion_from(vc, handle);    /* else when its data is done (Target_data_done) */
}

void MPIDI_CH3I_Target_data_done(MPIDI_VC_t * vc, MPI_Win handle, int pkt_flags)
{
    if (records && handle != MPI_WIN_NULL && (pkt_flags & MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER))
        completion_from(vc, handle);
}

void MPIDI_CH3I_Target_event_begin(void)
{
    if (event_depth++ > 0)
        return;
    for (target_rec * r = records; r; r = r->next) {
        reconcile(r, self_vc(r->win));  /* what this process did since the last event */
        notice_unposted_epoch(r);
        r->counter_before = r->win->at_completion_counter;
    }
}

static void origin_lost(MPIDI_VC_t * vc, unsigned seq, int *epoch_failed);

/* The origins lost since CH3 was last at rest; a failed exposure epoch raises the peer's error,
 * which the progress call returns. */
static void handle_lost(void)
{
    while (n_lost_pending > 0) {
        int failed = 0;
        n_lost_pending--;
        origin_lost(lost_pending[n_lost_pending].vc, lost_pending[n_lost_pending].seq, &failed);
        if (failed) {
            MPIDI_CH3I_Raise_error(lost_pending[n_lost_pending].mpi_errno);
            MPIDI_CH3_Progress_signal_completion();
        }
    }
}

void MPIDI_CH3I_Rma_target_safe(int safe)
{
    at_rest = safe;
    if (event_depth == 0)
        handle_lost();  /* at either edge the caller is the progress engine, not CH3 */
}

void MPIDI_CH3I_Target_event_end(MPIDI_VC_t * vc)
{
    if (--event_depth > 0)
        return;
    for (target_rec * r = records; r; r = r->next) {
        int rank;
        reconcile(r, vc);
        if (r->epoch_open && r->win->states.exposure_state != MPIDI_RMA_PSCW_EXPO)
            r->epoch_open = 0;
        if (r->epoch_open && (rank = rank_in(r, vc)) >= 0)
            r->net[rank] += r->win->at_completion_counter - r->counter_before;
        r->counter_after = r->win->at_completion_counter;
    }
    if (at_rest)
        handle_lost();
}

static int holds(const target_rec * r, const MPIDI_VC_t * vc)
{
    int n = 0;
    for (int i = 0; i < r->n_holders; i++)
        n += r->holders[i] == vc;
    return n;
}

static const char *lock_name(int type)
{
    return type == MPI_LOCK_EXCLUSIVE ? "an exclusive" : "a shared";
}

static void origin_lost(MPIDI_VC_t * vc, unsigned seq, int *epoch_failed)
{
    for (target_rec * r = records; r; r = r->next) {
        MPIR_Win *w = r->win;
        MPIDI_RMA_Target_lock_entry_t *e, *next;
        MPIDI_RMA_Target_lock_entry_t **head =
            (MPIDI_RMA_Target_lock_entry_t **) & w->target_lock_queue_head;
        int rank = MPIDI_CH3I_Win_rank_of(w, vc), held = 0, queued = 0, type;
        if (rank < 0 || rank == w->comm_ptr->rank)
            continue;
        reconcile(r, self_vc(w));
        /* Its lock requests still queued go; they were never granted. */
        for (e = *head; e; e = next) {
            next = e->next;
            if (e->vc == vc) {
                DL_DELETE(*head, e);
                MPIDI_CH3I_Win_target_lock_entry_free(w, e);
                queued++;
            }
        }
        {
            int kept = 0;       /* the record's queue too: these left it without a grant */
            for (int i = 0; i < r->n_queue; i++)
                if (r->queue[i].vc != vc)
                    r->queue[kept++] = r->queue[i];
            r->n_queue = kept;
        }
        type = w->current_lock_type;
        held = holds(r, vc);
        /* One at a time, each charged to it, so that a release never takes a lock that the
         * previous one granted to another origin. */
        for (int i = 0; i < held && holds(r, vc) > 0; i++) {
            int rc = MPIDI_CH3I_Release_lock(w);       /* grants the next queued requests */
            if (rc)
                MPIDI_CH3I_Raise_error(rc);
            reconcile(r, vc);
        }
        if (held) {
            MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "released %s lock that lost rank %d "
                              "held on a window%s", lock_name(type), vc->pg_rank,
                              queued ? ", and its queued lock requests" : "");
        } else if (queued) {
            MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "dropped the lock requests lost rank %d "
                              "had queued on a window", vc->pg_rank);
        }
        /* A fence past its reduce-scatter waits until at_completion_counter, the number of
         * origins whose operations target this window, falls to zero. Whether the dead origin
         * is among them, and whether its last operation came, no one can tell: fail the epoch
         * rather than wait for ever for an operation that may never come (MPI's fence is
         * collective; a member of the window died). */
        if (w->states.access_state == MPIDI_RMA_FENCE_GRANTED && w->at_completion_counter > 0) {
            *epoch_failed = 1;
            MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "a fence epoch ends in error: lost rank %d "
                              "may owe it an operation", vc->pg_rank);
        }
        /* An exposure epoch that posted to it, or one without posts, opened before the loss
         * was reported, that it may owe a completion (a member can be told only by the packets
         * it sent). */
        notice_unposted_epoch(r);
        if (r->epoch_open && r->unposted && r->opened_after < seq &&
            w->states.exposure_state == MPIDI_RMA_PSCW_EXPO &&
            w->at_completion_counter > 0 && rank < r->size && !completed_epoch(r, rank)) {
            if (r->accessed[rank])
                take_back_share(r, rank);
            fail_epoch(r, epoch_failed);
            MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "an exposure epoch (MPI_Win_post, "
                              "MPI_MODE_NOCHECK) ends in error: lost rank %d %s", vc->pg_rank,
                              r->accessed[rank] ? "did not complete it" : "may have owed it a completion");
        }
        if (r->epoch_open && !r->unposted && w->states.exposure_state == MPIDI_RMA_PSCW_EXPO &&
            rank < r->size && r->posted[rank]) {
            int came = completed_epoch(r, rank);
            take_back_share(r, rank);
            r->posted[rank] = 0;
            if (!came) {
                fail_epoch(r, epoch_failed);
                MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "an exposure epoch (MPI_Win_post) "
                                  "ends in error: lost rank %d did not complete it", vc->pg_rank);
            }
        }
    }
}

/* The origin side of a loss is MPIDI_CH3I_Rma_peer_lost's; this is the target side. 1 if an
 * exposure epoch failed (the progress call that saw the loss returns the error). */
int MPIDI_CH3I_Rma_origin_lost(MPIDI_VC_t * vc, int mpi_errno)
{
    int failed = 0;
    if (!records)
        return 0;
    /* Epochs without posts that opened by now are the ones the loss may fail, even if it is
     * handled later. Inside an event they were noticed when it began. */
    if (event_depth == 0)
        for (target_rec * r = records; r; r = r->next)
            notice_unposted_epoch(r);
    losses_reported++;
    if (event_depth > 0 || !at_rest) {  /* inside CH3: where it is at rest again */
        if (grow((void **) &lost_pending, &cap_lost_pending, n_lost_pending + 1,
                 sizeof(*lost_pending)) == 0) {
            lost_pending[n_lost_pending].vc = vc;
            lost_pending[n_lost_pending].mpi_errno = mpi_errno;
            lost_pending[n_lost_pending++].seq = losses_reported;
        }
        return 0;
    }
    origin_lost(vc, losses_reported, &failed);
    return failed;
}
