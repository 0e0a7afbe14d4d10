/* ch3:sctp: the progress engine is the transport's pipeline; this file adds CH3's completion
 * counting, the thread hand-off (the global lock is released while blocked) and VC termination. */
#include "mpidi_ch3_impl.h"

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

int MPIDI_CH3I_Progress(int blocking, MPID_Progress_state * state)
{
    int mpi_errno = MPI_SUCCESS, made_progress = 0, rc;

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
        rc = MPIDI_CH3I_pending_errno ? 0 : sctpm_progress(MPIDI_CH3I_sctp, -1);
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

/* Called by the transport around its blocking wait: other MPI threads may run meanwhile. */
void MPIDI_CH3I_On_block(void *ctx, int entering)
{
    (void) ctx;
#ifdef MPICH_IS_THREADED
    if (entering) {
        MPIDI_CH3I_Rma_target_safe(0);  /* other threads may be inside CH3 meanwhile */
        MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    } else {
        MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
        MPIDI_CH3I_Rma_target_safe(1);
    }
#else
    (void) entering;
#endif
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
 * every peer); the VC just returns to the unconnected state. */
int MPIDI_CH3_Connection_terminate(MPIDI_VC_t * vc)
{
    vc->ch.recv_active = NULL;
    vc->ch.closed = 1;
    return MPIDI_CH3U_Handle_connection(vc, MPIDI_VC_EVENT_TERMINATED);
}
