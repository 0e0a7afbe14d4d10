/* SPDX-License-Identifier: BSD-3-Clause */
/* qp_sync_timeout (ch3:hybrid): a queue pair breaks under RDMA puts while its peer lives, and the
 * peer never answers the question that follows (QP_SYNC: which PUT headers did you handle?).
 * The origin must not wait forever: past MPIR_CVAR_CH3_HYBRID_QP_SYNC_TIMEOUT it treats the peer
 * as lost, and its MPI_Win_flush returns MPIX_ERR_PROC_FAILED naming it.
 *
 * Ranks: 0 puts to 1 by RDMA (thresholds of 1 byte); MPICH_HYBRID_TEST_BREAK_QP_AFTER breaks the
 * queue pair under those puts (with MPICH_HYBRID_TEST_BREAK_QP_UNDER_HEADER, under the N-th whose
 * header went on it, before its completions count: else a loaded machine can let every header in
 * flight complete first, and nothing is left to ask), and MPICH_HYBRID_TEST_IGNORE_QP_SYNC makes
 * rank 1 leave the question unanswered while it waits in MPI_Recv for a message that never comes. Rank 1's receive
 * must then fail too (rank 0 ended their association). The epochs are MPI_Win_lock_all's. Each
 * wait is bounded by alarm(limit):
 * a hang prints "FAIL: hang". Rank 0 prints "qp_sync_timeout: OK" or a FAIL line.
 *
 *   mpiexec -disable-auto-cleanup -n 2 -genv MPIR_CVAR_CH3_HYBRID_CONNECT all -genv MPIR_CVAR_CH3_HYBRID_PUT_THRESHOLD 1 \
 *       -genv MPICH_HYBRID_TEST_BREAK_QP_AFTER 10 \
 *       -genv MPICH_HYBRID_TEST_BREAK_QP_UNDER_HEADER 1 -genv MPICH_HYBRID_TEST_IGNORE_QP_SYNC 1 \
 *       -genv MPIR_CVAR_CH3_HYBRID_QP_SYNC_TIMEOUT 2 qp_sync_timeout [limit_s]
 */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include "death_notices.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_NAME "qp_sync_timeout"
static int rank;
#include "check.h"

#define BLOCK 65536
#define PUTS 64
static const char *volatile step = "start";

static void on_alarm(int sig)
{
    (void)sig;
    static const char a[] = "qp_sync_timeout: FAIL: hang: ", b[] = " did not return within the limit\n";
    ssize_t ignored = write(1, a, sizeof a - 1);
    ignored = write(1, (const char *)step, strlen((const char *)step));
    ignored = write(1, b, sizeof b - 1);
    (void)ignored;
    _exit(1);
}

/* rc must be an error of class MPIX_ERR_PROC_FAILED; prints the outcome, 1 if it was. */
static int proc_failed(const char *what, int rc, double t)
{
    char e[MPI_MAX_ERROR_STRING] = "";
    int l, cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, e, &l);
        for (char *p = e; *p; p++)
            if (*p == '\n')
                *p = ' ';
    }
    printf("qp_sync_timeout: rank %d: %s returned after %.1f s: %s%s\n", rank, what, t,
           rc == MPI_SUCCESS ? "MPI_SUCCESS" : e, cls == MPIX_ERR_PROC_FAILED ? " (MPIX_ERR_PROC_FAILED)" : "");
    if (cls != MPIX_ERR_PROC_FAILED)
        printf("qp_sync_timeout: FAIL: rank %d: %s should fail with MPIX_ERR_PROC_FAILED\n", rank, what);
    fflush(stdout);
    return cls == MPIX_ERR_PROC_FAILED;
}

int main(int argc, char **argv)
{
    int nprocs, limit = argc > 1 ? atoi(argv[1]) : 30, ok;
    char *win_mem, *origin = malloc(BLOCK);
    MPI_Win win;
    signal(SIGALRM, on_alarm);
    signal(SIGUSR1, SIG_IGN); /* hydra's notice of a process that ended without MPI_Finalize */
    setvbuf(stdout, NULL, _IOLBF, 0);
    int provided;
    MPI_Init(&argc, &argv);
    death_notices_after_init();
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (nprocs != 2) {
        printf("qp_sync_timeout: FAIL: needs 2 processes, not %d\n", nprocs);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(origin, 'q', BLOCK);
    MPI_Win_allocate(BLOCK, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    /* Warm-up: puts until one went by RDMA, so that the queue pair is up before the burst (until
     * it is, puts go over SCTP). The queue pair breaks later, under the burst. */
    if (rank == 0) {
        double until = MPI_Wtime() + limit / 2;
        while (pvar_counter("ch3_hybrid_rdma_puts") < 1) {
            if (pvar_counter("ch3_hybrid_rdma_puts") < 0 || MPI_Wtime() > until)
                FAIL("no put went by RDMA (is this ch3:hybrid with MPIR_CVAR_CH3_HYBRID_PUT_THRESHOLD=1?)");
            CHK(MPI_Win_lock_all(0, win));
            for (int k = 0; k < 4; k++) /* the first and the last carry lock and unlock: SCTP */
                CHK(MPI_Put(origin, BLOCK, MPI_CHAR, 1, 0, BLOCK, MPI_CHAR, win));
            CHK(MPI_Win_unlock_all(win));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank == 0) {
        int rc = MPI_Win_lock_all(0, win);
        for (int k = 0; k < PUTS && rc == MPI_SUCCESS; k++)
            rc = MPI_Put(origin, BLOCK, MPI_CHAR, 1, 0, BLOCK, MPI_CHAR, win);
        step = "MPI_Win_flush on rank 0";
        alarm((unsigned)limit);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(1, win);
        alarm(0);
        ok = proc_failed("MPI_Win_flush(1)", rc, MPI_Wtime() - t0);
    } else {
        char never;
        step = "MPI_Recv on rank 1";
        alarm((unsigned)limit);
        int rc = MPI_Recv(&never, 1, MPI_CHAR, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        alarm(0);
        ok = proc_failed("MPI_Recv from rank 0", rc, MPI_Wtime() - t0);
    }
    /* Both sides count the other as lost: finalize each alone, bounded. */
    step = "MPI_Finalize";
    alarm((unsigned)limit);
    MPI_Finalize();
    alarm(0);
    if (rank == 0 && ok)
        printf("qp_sync_timeout: OK (the unanswered QP_SYNC ended in an error, not a hang)\n");
    free(origin);
    return ok ? 0 : 1;
}
