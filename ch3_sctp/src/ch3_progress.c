/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: the progress engine is the transport's pipeline; this file adds CH3's completion
 * counting, the thread hand-off (the global lock is released while blocked), VC termination and
 * the process manager's notices of dead processes. */
#include "mpidi_ch3_impl.h"
#include "mpidrma.h"
#include <signal.h>
#include <time.h>

volatile unsigned int MPIDI_CH3I_progress_completion_count = 0;
#ifdef MPICH_IS_THREADED
volatile int MPIDI_CH3I_progress_blocked = FALSE;
volatile int MPIDI_CH3I_progress_wakeup_signalled = FALSE;
/* Threads that find another thread blocked in the transport sleep here until a completion: busy
 * re-entry (yield and retry) starved usrsctp's threads and the blocked one on a loaded machine
 * (four threads sending 16 MiB messages ran at a tenth of one thread's rate). */
static MPID_Thread_cond_t progress_completion_cond;
volatile int MPIDI_CH3I_progress_waiters = 0;

static void wait_for_completion(unsigned int seen)
{
    int err;
    MPIDI_CH3I_progress_waiters++;
    while (seen == MPIDI_CH3I_progress_completion_count)
        MPID_Thread_cond_wait(&progress_completion_cond, &MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX, &err);
    MPIDI_CH3I_progress_waiters--;
}

void MPIDI_CH3I_Progress_wake_waiters(void)
{
    int err;
    MPID_Thread_cond_broadcast(&progress_completion_cond, &err);
}
#endif

static int take_pending_errno(void)
{
    int e = MPIDI_CH3I_pending_errno;
    MPIDI_CH3I_pending_errno = MPI_SUCCESS;
    return e;
}

/* sctpm_progress failed inside (a defect, named by sctpm_last_error): the call that waits fails
 * with that message instead of waiting for what the failed round did not do. */
static int transport_failed(void)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__, MPI_ERR_INTERN,
                                "**ch3|sctp|progress", "**ch3|sctp|progress %s",
                                sctpm_last_error(MPIDI_CH3I_sctp));
}

/* ---- Processes the process manager reports dead ----
 * A rank that dies before it ever talked to us leaves no association whose end we would see, so
 * a receive posted for it would wait forever. Under mpiexec -disable-auto-cleanup, hydra lists the
 * dead ranks in the job attribute PMI_dead_processes and sends the survivors SIGUSR1 (what CH3's
 * nemesis channel reads too). The handler only counts and wakes the progress engine; a progress
 * round then reads the list (CH3's MPIDI_CH3U_Check_for_failed_procs), which terminates each newly
 * dead rank's VC: MPIDI_CH3_Connection_terminate fails it as a lost association. hydra signals
 * the dead rank's neighbours under its own proxy before it updates the list, so after a notice
 * the list is read again every DEAD_RECHECK_US, DEAD_RECHECKS times. */
#define DEAD_RECHECK_US 100000
#define DEAD_RECHECKS 30

static volatile sig_atomic_t dead_notices;      /* written by the handler only */
static sig_atomic_t dead_notices_read;
static int dead_rechecks_left;
static int64_t dead_next_check_us;
static struct sigaction sigusr1_before;
static int sigusr1_ours;

static void on_sigusr1(int sig, siginfo_t * info, void *uctx)
{
    dead_notices = dead_notices + 1;
    if (MPIDI_CH3I_sctp)
        sctpm_wakeup(MPIDI_CH3I_sctp);  /* atomics and an eventfd write: async-signal-safe */
    /* A handler the application had is still called; SIG_DFL (terminate) and SIG_IGN are not. */
    if (sigusr1_before.sa_flags & SA_SIGINFO) {
        if (sigusr1_before.sa_sigaction)
            sigusr1_before.sa_sigaction(sig, info, uctx);
    } else if (sigusr1_before.sa_handler != SIG_DFL && sigusr1_before.sa_handler != SIG_IGN) {
        sigusr1_before.sa_handler(sig);
    }
}

int MPIDI_CH3I_Dead_notices_start(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_sigusr1;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;      /* the application's own calls are not interrupted */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, &sigusr1_before) != 0)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**signal", "**signal %s", strerror(errno));
    sigusr1_ours = 1;
    return MPI_SUCCESS;
}

void MPIDI_CH3I_Dead_notices_stop(void)
{
    if (sigusr1_ours)
        sigaction(SIGUSR1, &sigusr1_before, NULL);
    sigusr1_ours = 0;
}

static int64_t monotonic_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* What a dead rank sent before it died and has arrived is delivered before its VC fails (a
 * message sent just before _exit would otherwise race hydra's notice): one round of the
 * transport that does not block, unless another thread is inside it. Its errors stay pending
 * for the progress call that follows. */
static void drain_before_deaths(void)
{
#ifdef MPICH_IS_THREADED
    if (MPIDI_CH3I_progress_blocked == TRUE)
        return;
#endif
    MPIDI_CH3I_Rma_target_safe(1);
    if (sctpm_progress(MPIDI_CH3I_sctp, 0) < 0)
        MPIDI_CH3I_Raise_error(transport_failed());
    MPIDI_CH3I_Rma_target_safe(0);
}

/* Reads the list when a notice came, and again while rechecks are due. A list that cannot be read
 * (a process manager without one) is named once; it does not fail the MPI call that polled. */
static void check_dead_procs(void)
{
    static int unreadable_reported;
    sig_atomic_t notices = dead_notices;
    int mpi_errno;
    if (MPIR_Process.comm_world == NULL)
        return; /* MPI_Finalize freed it (MPICH 5.0 does, before CH3 closes the VCs): CH3 reads
                 * the list into a group of MPI_COMM_WORLD */
    if (notices != dead_notices_read) {
        dead_notices_read = notices;
        dead_rechecks_left = DEAD_RECHECKS + 1;
    } else if (dead_rechecks_left == 0 || monotonic_us() < dead_next_check_us) {
        return;
    }
    dead_rechecks_left--;
    dead_next_check_us = monotonic_us() + DEAD_RECHECK_US;
    drain_before_deaths();
    mpi_errno = MPIDI_CH3I_Pm_lists_dead_procs() ? MPIDI_CH3U_Check_for_failed_procs()
        : MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                               MPI_ERR_OTHER, "**pmi_kvs_get", NULL);
    if (mpi_errno != MPI_SUCCESS) {
        dead_rechecks_left = 0;
        if (!unreadable_reported++)
            MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "SIGUSR1 came, but the process manager's "
                              "list of dead processes (PMI_dead_processes) cannot be read");
    }
}

/* A rank of MPI_COMM_WORLD whose association was lost failed for CH3's fault tolerance too
 * (MPIR_CVAR_ENABLE_FT): CH3 then disables MPI_ANY_SOURCE on every communicator holding it, so
 * an MPI_ANY_SOURCE receive no live rank answers fails instead of waiting for ever, as it does
 * when the process manager lists the death. A rank the list already named is skipped: CH3 handled
 * it when it read the list (and it reads the list alone to tell a user which failures were
 * acknowledged). The rank joins CH3's group of known failures, so a list read after this does not
 * report it again, unless the list is still empty then (CH3 resets the group to empty on that). */
void MPIDI_CH3I_Note_lost_proc(MPIDI_VC_t * vc)
{
    MPIR_Comm *world = MPIR_Process.comm_world;
    MPIR_Group *world_group = NULL, *failed = NULL, *known = NULL;
    int rank = vc->pg_rank, in_known = MPI_UNDEFINED;
    if (world == NULL || vc->pg != MPIDI_Process.my_pg || MPIDI_Failed_procs_group == NULL)
        return; /* a spawned or connected group: CH3 tracks failures in MPI_COMM_WORLD only */
    if (MPIR_Comm_group_impl(world, &world_group) != MPI_SUCCESS)
        return;
    MPIR_Group_translate_ranks_impl(world_group, 1, &rank, MPIDI_Failed_procs_group, &in_known);
    if (in_known == MPI_UNDEFINED && MPIR_Group_incl_impl(world_group, 1, &rank, &failed) == MPI_SUCCESS) {
        MPIDI_CH3I_Raise_error(MPIDI_CH3I_Comm_handle_failed_procs(failed));
        if (MPIR_Group_union_impl(MPIDI_Failed_procs_group, failed, &known) == MPI_SUCCESS) {
            if (MPIDI_Failed_procs_group != MPIR_Group_empty)
                MPIR_Group_release(MPIDI_Failed_procs_group);
            MPIDI_Failed_procs_group = known;
        }
        MPIR_Group_release(failed);
    }
    MPIR_Group_release(world_group);
}

/* How long a blocking round may sleep: until the next recheck of the list, if one is due. */
static int64_t block_us(void)
{
    return dead_rechecks_left ? DEAD_RECHECK_US : -1;
}

static int progress(int blocking, MPID_Progress_state * state)
{
    int mpi_errno = MPI_SUCCESS, made_progress = 0, rc;

    check_dead_procs();
    MPIDI_CH3I_Raise_error(MPIDI_CH3I_Fail_late());
    mpi_errno = MPIDI_CH3I_Progress_hooks(&made_progress);
    if (mpi_errno || (made_progress && !blocking))
        return mpi_errno;
    if (!blocking) {
#ifdef MPICH_IS_THREADED
        if (MPIDI_CH3I_progress_blocked == TRUE)
            return MPI_SUCCESS; /* another thread is inside the transport */
#endif
        MPIDI_CH3I_Rma_target_safe(1);
        rc = sctpm_progress(MPIDI_CH3I_sctp, 0);
        MPIDI_CH3I_Rma_target_safe(0);
        mpi_errno = take_pending_errno();
        if (!mpi_errno && rc < 0)
            mpi_errno = transport_failed();
        return mpi_errno;
    }
    if (made_progress) {
        MPIDI_CH3_Progress_signal_completion();
        goto fn_exit;
    }
    if (state->ch.completion_count != MPIDI_CH3I_progress_completion_count)
        goto fn_exit;   /* completed since the caller looked (drain_before_deaths, another thread) */
    do {
#ifdef MPICH_IS_THREADED
        if (MPIDI_CH3I_progress_blocked == TRUE) {
            /* Another thread blocks in the transport: sleep until it completes something. */
            wait_for_completion(MPIDI_CH3I_progress_completion_count);
            goto fn_exit;
        }
        MPIDI_CH3I_progress_blocked = TRUE;
#endif
        MPIDI_CH3I_Rma_target_safe(1);
        /* A loss handled just now may have raised an error: return it, do not block first. */
        rc = MPIDI_CH3I_pending_errno ? 0 : sctpm_progress(MPIDI_CH3I_sctp, block_us());
        MPIDI_CH3I_Rma_target_safe(0);
#ifdef MPICH_IS_THREADED
        MPIDI_CH3I_progress_blocked = FALSE;
        MPIDI_CH3I_progress_wakeup_signalled = FALSE;
#endif
        mpi_errno = take_pending_errno();
        if (!mpi_errno && rc < 0)
            mpi_errno = transport_failed();
        if (mpi_errno)
            break;
        check_dead_procs();
        MPIDI_CH3I_Raise_error(MPIDI_CH3I_Fail_late());
        mpi_errno = MPIDI_CH3I_Progress_hooks(&made_progress);
        if (mpi_errno)
            break;
        if (made_progress)
            MPIDI_CH3_Progress_signal_completion();
    } while (state->ch.completion_count == MPIDI_CH3I_progress_completion_count);
#ifdef MPICH_IS_THREADED
    MPIDI_CH3I_Progress_wake_waiters(); /* also after an error: they must not sleep on */
#endif
  fn_exit:
    state->ch.completion_count = MPIDI_CH3I_progress_completion_count;
    return mpi_errno;
}

int MPIDI_CH3I_Progress(int blocking, MPID_Progress_state * state)
{
    int mpi_errno;
    if (MPIDI_CH3I_Ext()->inside)
        MPIDI_CH3I_Ext()->inside(1);
    mpi_errno = progress(blocking, state);
    if (MPIDI_CH3I_Ext()->inside)
        MPIDI_CH3I_Ext()->inside(0);
    return mpi_errno;
}

/* Called by the transport around its blocking wait: other MPI threads may run meanwhile. */
void MPIDI_CH3I_On_block(void *ctx, int entering)
{
    (void) ctx;
    /* The extension's hook runs under CH3's lock: before it is released, after it is taken. */
    if (entering && MPIDI_CH3I_Ext()->blocking)
        MPIDI_CH3I_Ext()->blocking(1);
#ifdef MPICH_IS_THREADED
    if (entering) {
        MPIDI_CH3I_Rma_target_safe(0);  /* other threads may be inside CH3 meanwhile */
        MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    } else {
        MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
        MPIDI_CH3I_Rma_target_safe(1);
    }
#endif
    if (!entering && MPIDI_CH3I_Ext()->blocking)
        MPIDI_CH3I_Ext()->blocking(0);
}

static int ops_in(const MPIDI_RMA_Op_t * op)
{
    int n = 0;
    for (; op; op = op->next)
        n++;
    return n;
}

/* Every RMA target of the windows in `list` that still has something to finish, in CH3's terms. */
static void describe_rma_targets(const char *list_name, MPIR_Win * list)
{
    for (MPIR_Win * w = list; w; w = w->next) {
        MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "stall: %s window %#x: access state %d, "
                          "exposure state %d, at_completion_counter %d", list_name, (unsigned) w->handle,
                          (int) w->states.access_state, (int) w->states.exposure_state,
                          w->at_completion_counter);
        for (int i = 0; w->slots && i < w->num_slots; i++)
            for (MPIDI_RMA_Target_t * t = w->slots[i].target_list_head; t; t = t->next)
                MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "stall:   target rank %d: access state %d, "
                                  "sync flag %d, outstanding acks %d, ops not issued %d, ops waiting "
                                  "for the user %d, packets awaiting local completion %d, ops without "
                                  "a flush %d", t->target_rank, (int) t->access_state,
                                  (int) t->sync.sync_flag, t->sync.outstanding_acks,
                                  ops_in(t->pending_net_ops_list_head),
                                  ops_in(t->pending_user_ops_list_head),
                                  t->num_pkts_wait_for_local_completion, t->num_ops_flush_not_issued);
    }
}

/* Called once after the transport's stall report (MPIR_CVAR_CH3_SCTP_STALL_REPORT_S): what CH3
 * and the extension wait for, which the transport cannot see (a flush waiting for an
 * acknowledgement that was never sent leaves nothing queued there). */
void MPIDI_CH3I_On_stall(void *ctx)
{
    MPIDI_PG_t *pg = MPIDI_Process.my_pg;
    (void) ctx;
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "stall: completions so far %u",
                      MPIDI_CH3I_progress_completion_count);
    describe_rma_targets("active", MPIDI_RMA_Win_active_list_head);
    describe_rma_targets("inactive", MPIDI_RMA_Win_inactive_list_head);
    for (int r = 0; pg && r < pg->size; r++) {
        MPIDI_VC_t *vc = &pg->vct[r];
        if (r == MPIR_Process.rank)
            continue;
        if (vc->ch.failed || vc->state != MPIDI_VC_STATE_INACTIVE)
            MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "stall: VC of rank %d: state %d%s", r,
                              (int) vc->state, vc->ch.failed ? ", failed" : "");
        if (MPIDI_CH3I_Ext()->describe_stall)
            MPIDI_CH3I_Ext()->describe_stall(vc);
    }
}

#ifdef MPICH_IS_THREADED
void MPIDI_CH3I_Progress_wakeup(void)
{
    sctpm_wakeup(MPIDI_CH3I_sctp);
}
#endif

int MPIDI_CH3I_Progress_init(void)
{
#ifdef MPICH_IS_THREADED
    int err;
    MPID_Thread_cond_create(&progress_completion_cond, &err);
    if (err)
        return MPI_ERR_OTHER;
#endif
    return MPIDI_CH3I_Recv_init();
}

int MPIDI_CH3I_Progress_finalize(void)
{
#ifdef MPICH_IS_THREADED
    int err;
    MPID_Thread_cond_destroy(&progress_completion_cond, &err);
#endif
    return MPI_SUCCESS;
}

/* CH3 finished the close handshake on this VC: the association itself stays (one socket serves
 * every peer); the VC just returns to the unconnected state. Called in any other state, CH3 read
 * that the VC's process died (check_dead_procs): the VC fails as if its association was lost. */
int MPIDI_CH3_Connection_terminate(MPIDI_VC_t * vc)
{
    if (vc->state != MPIDI_VC_STATE_CLOSED) {
        MPIDI_CH3I_Fail_vc(vc, "the process manager reports it dead");
        return MPI_SUCCESS;
    }
    vc->ch.recv_active = NULL;
    vc->ch.closed = 1;
    return MPIDI_CH3U_Handle_connection(vc, MPIDI_VC_EVENT_TERMINATED);
}
