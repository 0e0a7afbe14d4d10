/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided operations that complete while the target computes outside MPI (ch3:hybrid, whose
 * RNIC a standby thread runs while the process is out of MPI (the default progress=standby) or a
 * thread of its own (progress=thread), with RDMA thresholds that take every put and get). In each
 * case rank 1 (the target) tells rank 0 (the origin) that it starts computing, then spins with no
 * MPI call until a marker appears in its memory. The origin, once told, runs the case's operations
 * (e.g. a 1 MiB MPI_Put then MPI_Win_flush) and only after they returned puts the marker (by RDMA,
 * into a second window it keeps a lock_all(MPI_MODE_NOCHECK) epoch open on). So the target sees
 * the marker only if the case's completion came without its MPI; if it never comes, the target
 * gives up after HANG_GUARD_S seconds (a hang guard, not a measure) and the test fails. The
 * target also reports when it started and stopped computing (CLOCK_MONOTONIC, so both ranks
 * must run on one host), and the origin checks that its operations began after the start and
 * returned before the end. A case whose operations began first (the target was descheduled
 * between its MPI_Send and its clock for longer than the origin's 20 ms wait) proved nothing,
 * and runs again, up to MAX_TRIES times: the scheduler decides that, not the channel. Then both ranks re-enter MPI, the origin ends the epoch, and the
 * target checks every int of the data (for a get, the origin checks what it read).
 *
 * Usage: mpiexec -n 2 rma_busy_target
 */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <string.h>
#include <time.h>

#define TEST_NAME "rma_busy_target"
static int rank;
#include "check.h"

#define N (256 * 1024)  /* ints: 1 MiB */
#define MARK_INTS 16    /* above CH3's 8-byte immediate size, so RDMA carries it */
#define HANG_GUARD_S 30.0
#define MAX_TRIES 5     /* runs of a case whose operations began before the target left MPI */
#define ORIGIN 0
#define TARGET 1

enum { FLUSH, FLUSH_ALL, FLUSH_LOCAL, RPUT, UNLOCK_ALL, EXCLUSIVE, SHARED, GET, CASES };
static const char *const names[CASES] = { "put+flush", "put+flush_all", "put+flush_local",
    "rput+wait", "lock_all+put+unlock_all", "exclusive put+unlock", "shared put+unlock", "get+flush" };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int value(int c, int i) { return c * 1000003 + i * 7 + 1; }

/* The epoch a case's operations run in, opened before the target starts computing (a lock must be
 * granted by the target's MPI: the flush waits for the grant) and ended after it re-entered MPI. */
static void open_epoch(int c, MPI_Win win)
{
    if (c == EXCLUSIVE || c == SHARED) {
        CHK(MPI_Win_lock(c == EXCLUSIVE ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, TARGET, 0, win));
        CHK(MPI_Win_flush(TARGET, win));
    } else if (c != UNLOCK_ALL) {
        CHK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    }
}

static void close_epoch(int c, MPI_Win win)
{
    if (c != EXCLUSIVE && c != SHARED && c != UNLOCK_ALL)
        CHK(MPI_Win_unlock_all(win));
}

/* The operations the target must not be needed for. */
static void run_case(int c, int *buf, MPI_Win win)
{
    MPI_Request req;
    switch (c) {
        case FLUSH:
        case FLUSH_ALL:
        case FLUSH_LOCAL:
            CHK(MPI_Put(buf, N, MPI_INT, TARGET, 0, N, MPI_INT, win));
            if (c == FLUSH)
                CHK(MPI_Win_flush(TARGET, win));
            else if (c == FLUSH_ALL)
                CHK(MPI_Win_flush_all(win));
            else
                CHK(MPI_Win_flush_local(TARGET, win));
            break;
        case RPUT:
            CHK(MPI_Rput(buf, N, MPI_INT, TARGET, 0, N, MPI_INT, win, &req));
            CHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            break;
        case UNLOCK_ALL:
            CHK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
            CHK(MPI_Put(buf, N, MPI_INT, TARGET, 0, N, MPI_INT, win));
            CHK(MPI_Win_unlock_all(win));
            break;
        case EXCLUSIVE:
        case SHARED:
            CHK(MPI_Put(buf, N, MPI_INT, TARGET, 0, N, MPI_INT, win));
            CHK(MPI_Win_unlock(TARGET, win));
            break;
        case GET:
            CHK(MPI_Get(buf, N, MPI_INT, TARGET, 0, N, MPI_INT, win));
            CHK(MPI_Win_flush(TARGET, win));
            break;
    }
}

/* The target's own window, read or written inside an epoch on itself (its lock waits for the
 * origin's exclusive lock, which its unlock released). */
static void target_local(int c, int *mem, MPI_Win win, int write)
{
    CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, TARGET, 0, win));
    CHK(MPI_Win_sync(win));
    for (int i = 0; i < N; i++) {
        if (write)
            mem[i] = value(c, i);
        else if (mem[i] != value(c, i))
            FAIL("%s: window[%d] = %d, expected %d", names[c], i, mem[i], value(c, i));
    }
    CHK(MPI_Win_sync(win));
    CHK(MPI_Win_unlock(TARGET, win));
}

int main(int argc, char **argv)
{
    int P, provided, *mem, *buf, len;
    volatile int *mark;
    char host[MPI_MAX_PROCESSOR_NAME], peer_host[MPI_MAX_PROCESSOR_NAME] = "";
    long long puts_before = -1;
    MPI_Win win, mark_win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (P != 2)
        FAIL("needs 2 processes, not %d", P);
    CHK(MPI_Get_processor_name(host, &len));
    CHK(MPI_Sendrecv(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1 - rank, 0, peer_host,
                     MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (strcmp(host, peer_host) != 0)
        FAIL("both ranks must run on one host (their CLOCK_MONOTONIC times are compared)");
    CHK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHK(MPI_Win_allocate((MPI_Aint) N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                         &mem, &win));
    CHK(MPI_Win_allocate(MARK_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                         (void *) &mark, &mark_win));
    CHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHK(MPI_Win_set_errhandler(mark_win, MPI_ERRORS_RETURN));
    memset(mem, 0, (size_t) N * sizeof(int));
    memset((void *) mark, 0, MARK_INTS * sizeof(int));
    CHK(MPI_Alloc_mem((MPI_Aint) N * sizeof(int), MPI_INFO_NULL, &buf));
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == ORIGIN) {
        /* The queue pair connects while both ranks are in MPI (its connect is a packet exchange
         * on SCTP): until RDMA carries a put, put again. */
        int marker[MARK_INTS] = { 0 };
        long long first = pvar_counter("ch3_hybrid_rdma_puts");
        CHK(MPI_Win_lock_all(MPI_MODE_NOCHECK, mark_win));
        for (double start = now(); first >= 0; ) {
            CHK(MPI_Put(marker, MARK_INTS, MPI_INT, TARGET, 0, MARK_INTS, MPI_INT, mark_win));
            CHK(MPI_Win_flush(TARGET, mark_win));
            if (pvar_counter("ch3_hybrid_rdma_puts") > first)
                break;
            if (now() - start > HANG_GUARD_S)
                FAIL("RDMA never carried a put (is this ch3:hybrid with RDMA thresholds of 1?)");
        }
        puts_before = pvar_counter("ch3_hybrid_rdma_puts");
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    for (int c = 0, tries = 1, runs = 0; c < CASES; c++) {
        double times[3];        /* the target's: compute start, compute end, marker seen (0/1) */
        int marker[MARK_INTS], again = 0;
        const int mark_value = ++runs; /* new on every run, also of a case run again */
        if (rank == TARGET && c == GET)
            target_local(c, mem, win, 1);
        if (rank == ORIGIN)
            open_epoch(c, win); /* its lock granted while the target waits in the barrier */
        CHK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == ORIGIN) {
            double begun, returned, start;
            for (int i = 0; i < N; i++)
                buf[i] = c == GET ? -1 : value(c, i);
            CHK(MPI_Recv(NULL, 0, MPI_INT, TARGET, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            /* Lets the target's MPI_Send return before the operations start; if it did not, the
             * ordering check below fails (it cannot pass wrongly). */
            for (start = now(); now() - start < 0.02;)
                ;
            begun = now();
            run_case(c, buf, win);
            returned = now();
            for (int i = 0; i < MARK_INTS; i++)
                marker[i] = mark_value;
            CHK(MPI_Put(marker, MARK_INTS, MPI_INT, TARGET, 0, MARK_INTS, MPI_INT, mark_win));
            CHK(MPI_Win_flush(TARGET, mark_win));
            CHK(MPI_Recv(times, 3, MPI_DOUBLE, TARGET, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            /* The target was descheduled between its MPI_Send and leaving MPI for longer than the
             * origin's 20 ms: the case proved nothing either way, and runs again. */
            again = !(times[0] < begun);
            if (again && tries == MAX_TRIES)
                FAIL("%s: the operations began before the target left MPI, %d times", names[c], tries);
            if (again)
                printf("%s: the operations began before the target left MPI: case run again\n", names[c]);
            else if (times[2] == 0 || !(returned < times[1]))
                FAIL("%s: returned only after the target re-entered MPI (computed %.3f..%.3f s, "
                     "returned at %.3f s)", names[c], times[0], times[1], returned);
            else
                printf("%s: returned %.1f ms after it began, %.1f ms before the target's compute ended\n",
                       names[c], (returned - begun) * 1e3, (times[1] - returned) * 1e3);
            close_epoch(c, win);
            if (c == GET)
                for (int i = 0; i < N; i++)
                    if (buf[i] != value(c, i))
                        FAIL("%s: read [%d] = %d, expected %d", names[c], i, buf[i], value(c, i));
        } else {
            CHK(MPI_Send(NULL, 0, MPI_INT, ORIGIN, 1, MPI_COMM_WORLD));
            /* No MPI call from here until the marker came (or the hang guard ran out). */
            times[0] = now();
            times[2] = 0;
            while (now() - times[0] < HANG_GUARD_S)
                if (mark[MARK_INTS - 1] == mark_value) {
                    times[2] = 1;
                    break;
                }
            times[1] = now();
            CHK(MPI_Send(times, 3, MPI_DOUBLE, ORIGIN, 2, MPI_COMM_WORLD));
            if (times[2] == 0)
                FAIL("%s: the origin's marker never came while this rank computed", names[c]);
        }
        CHK(MPI_Barrier(MPI_COMM_WORLD));       /* the origin ended its epoch */
        if (rank == TARGET && c != GET)
            target_local(c, mem, win, 0);
        CHK(MPI_Barrier(MPI_COMM_WORLD));       /* before the next case's lock */
        CHK(MPI_Bcast(&again, 1, MPI_INT, ORIGIN, MPI_COMM_WORLD));
        if (again) {
            tries++;
            c--;
        } else {
            tries = 1;
        }
    }
    if (rank == ORIGIN) {
        long long puts = pvar_counter("ch3_hybrid_rdma_puts");
        CHK(MPI_Win_unlock_all(mark_win));
        if (puts >= 0 && puts - puts_before < 2 * (CASES - 1))
            FAIL("RDMA carried %lld puts, expected at least %d", puts - puts_before, 2 * (CASES - 1));
    }
    CHK(MPI_Win_free(&mark_win));
    CHK(MPI_Win_free(&win));
    CHK(MPI_Free_mem(buf));
    CHK(MPI_T_finalize());
    if (rank == 0)
        printf("rma_busy_target: OK\n");
    MPI_Finalize();
    return 0;
}
