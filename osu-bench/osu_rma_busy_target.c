/* SPDX-License-Identifier: BSD-3-Clause */
/* How long an origin's one-sided operation takes to complete while its target computes with no
 * MPI call (issue 18's table). Two ranks; each iteration: rank 1 tells rank 0 it starts computing
 * and spins for the compute time with no MPI call (0: it waits in MPI_Barrier instead), while
 * rank 0 times one of
 *   put      MPI_Put of SIZE bytes, then MPI_Win_flush     (in a lock_all(MPI_MODE_NOCHECK)
 *   get      MPI_Get of SIZE bytes, then MPI_Win_flush      epoch opened beforehand)
 *   fop      MPI_Fetch_and_op (MPI_SUM of one MPI_INT64_T), then MPI_Win_flush (the counter's
 *            window is created with ch3:hybrid's info key ch3_hybrid_rnic_atomics=remote_only)
 *   lockput  MPI_Win_lock(MPI_LOCK_EXCLUSIVE), MPI_Put of SIZE bytes, MPI_Win_unlock
 * Every iteration's data is checked (the target checks a put, the origin a get and every value
 * fetch-and-op returns). Prints the median, minimum and maximum of the origin's times in ms, and
 * (ch3:hybrid) how many of the timed puts or gets RDMA carried (-1: none counted). An operation
 * that completes without the target's MPI shows far less than the compute time; one that waits
 * for the target, a little more.
 *
 *   mpiexec -n 2 osu_rma_busy_target [put|get|fop|lockput] [size_bytes] [compute_ms] [iterations]
 *   (defaults: put 1048576 20 15)
 */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP 5
#define MAX_WARMUP 200

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* ch3:hybrid's MPI_T counter `name` (transfers RDMA carried), or -1 on another MPI. */
static long long rdma_counter(const char *name)
{
    int index, count;
    unsigned long long v = 0;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index) != MPI_SUCCESS)
        return -1;
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count);
    MPI_T_pvar_read(session, handle, &v);
    MPI_T_pvar_handle_free(session, &handle);
    MPI_T_pvar_session_free(&session);
    return (long long) v;
}

static int value(int it, size_t i) { return it * 1000003 + (int) i * 7 + 1; }

enum op { PUT, GET, FOP, LOCKPUT };
static const char *const op_names[] = { "put", "get", "fop", "lockput" };
static const char *const op_calls[] = { "MPI_Put + MPI_Win_flush", "MPI_Get + MPI_Win_flush",
    "MPI_Fetch_and_op + MPI_Win_flush", "MPI_Win_lock + MPI_Put + MPI_Win_unlock" };

/* The MPI_T counter of the transfers RDMA carried for this operation, or NULL. */
static const char *counter_of(enum op op)
{
    return op == GET ? "ch3_hybrid_rdma_gets" : op == FOP ? "ch3_hybrid_rdma_atomics" : "ch3_hybrid_rdma_puts";
}

static void die(const char *what, int it, size_t i)
{
    fprintf(stderr, "osu_rma_busy_target: data check failed (%s, iteration %d, int %zu)\n", what, it, i);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank, size, is_get, iters, provided, *mem, *buf;
    enum op op = PUT;
    int64_t *counter, one = 1, fetched, fops = 0;
    MPI_Info atomics;
    MPI_Win counter_win;
    long long rdma_before = -1;
    size_t bytes, n;
    double compute_s, *t;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    for (int o = PUT; argc > 1 && o <= LOCKPUT; o++)
        if (strcmp(argv[1], op_names[o]) == 0)
            op = (enum op) o;
    is_get = op == GET;
    bytes = argc > 2 ? (size_t) atol(argv[2]) : 1048576;
    compute_s = (argc > 3 ? atof(argv[3]) : 20.0) / 1e3;
    iters = argc > 4 ? atoi(argv[4]) : 15;
    if (size != 2 || bytes < sizeof(int) || iters < 1 || (argc > 1 && strcmp(argv[1], op_names[op]) != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 %s [put|get|fop|lockput] [size_bytes] [compute_ms] [iterations]\n",
                    argv[0]);
        MPI_Finalize();
        return 2;
    }
    n = bytes / sizeof(int);
    t = calloc((size_t) iters, sizeof(double));
    MPI_Alloc_mem((MPI_Aint) (n * sizeof(int)), MPI_INFO_NULL, &buf);
    MPI_Win_allocate((MPI_Aint) (n * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    /* The counter's window asks ch3:hybrid for RNIC atomics, also served while the target
     * computes: remote_only, since no rank applies one to its own counter (other MPIs ignore the
     * key). */
    MPI_Info_create(&atomics);
    MPI_Info_set(atomics, "ch3_hybrid_rnic_atomics", "remote_only");
    MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), atomics, MPI_COMM_WORLD, &counter, &counter_win);
    MPI_Info_free(&atomics);
    *counter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && op != LOCKPUT) {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, counter_win);
    }
    /* Untimed rounds first, WARMUP of them and then more until RDMA carried one (up to
     * MAX_WARMUP): the queue pair connects behind the first operations, which go on SCTP. */
    for (int it = -WARMUP, extra = 0; it < iters; it++) {
        int v = it < 0 ? iters - it : it;
        long long carried = rank == 0 && it < 0 && counter_of(op) ? rdma_counter(counter_of(op)) : -1;
        if (rank == 1 && is_get) {      /* the data the origin reads this time */
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            for (size_t i = 0; i < n; i++)
                mem[i] = value(v, i);
            MPI_Win_unlock(1, win);
        }
        if (rank == 0)
            for (size_t i = 0; i < n; i++)
                buf[i] = is_get ? -1 : value(v, i);
        MPI_Barrier(MPI_COMM_WORLD);
        if (it == 0 && rank == 0 && counter_of(op))
            rdma_before = rdma_counter(counter_of(op));
        /* The target says when it starts computing, so the origin starts then (after a barrier
         * alone, either rank may leave it first, by up to a scheduler's time slice). */
        if (rank == 0) {
            double t0;
            MPI_Recv(NULL, 0, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t0 = now();
            if (op == GET) {
                MPI_Get(buf, (int) n, MPI_INT, 1, 0, (int) n, MPI_INT, win);
                MPI_Win_flush(1, win);
            } else if (op == PUT) {
                MPI_Put(buf, (int) n, MPI_INT, 1, 0, (int) n, MPI_INT, win);
                MPI_Win_flush(1, win);
            } else if (op == FOP) {
                MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 1, 0, MPI_SUM, counter_win);
                MPI_Win_flush(1, counter_win);
            } else {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                MPI_Put(buf, (int) n, MPI_INT, 1, 0, (int) n, MPI_INT, win);
                MPI_Win_unlock(1, win);
            }
            if (it >= 0)
                t[it] = now() - t0;
            if (op == FOP && fetched != fops++) {
                fprintf(stderr, "osu_rma_busy_target: fetch-and-op %d fetched %lld, wanted %lld\n", it,
                        (long long) fetched, (long long) (fops - 1));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            if (is_get)
                for (size_t i = 0; i < n; i++)
                    if (buf[i] != value(v, i))
                        die("get", it, i);
        } else {
            MPI_Send(NULL, 0, MPI_INT, 0, 0, MPI_COMM_WORLD);
            for (double t0 = now(); now() - t0 < compute_s;)
                ;       /* computing: no MPI call */
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1 && (op == PUT || op == LOCKPUT)) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            MPI_Win_sync(win);
            for (size_t i = 0; i < n; i++)
                if (mem[i] != value(v, i))
                    die("put", it, i);
            MPI_Win_unlock(1, win);
        }
        if (it == -1) {
            int again = carried >= 0 && extra++ < MAX_WARMUP &&
                rdma_counter(counter_of(op)) == carried;
            MPI_Bcast(&again, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (again)
                it--;
        }
    }
    if (rank == 0 && op != LOCKPUT) {
        MPI_Win_unlock_all(counter_win);
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && op == FOP) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, counter_win);
        MPI_Win_sync(counter_win);
        MPI_Recv(&fops, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (*counter != fops) {
            fprintf(stderr, "osu_rma_busy_target: the counter holds %lld after %lld fetch-and-ops\n",
                    (long long) *counter, (long long) fops);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Win_unlock(1, counter_win);
    } else if (rank == 0 && op == FOP) {
        MPI_Send(&fops, 1, MPI_INT64_T, 1, 1, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        qsort(t, (size_t) iters, sizeof(double), cmp);
        printf("# osu_rma_busy_target: %s (%zu bytes), target %s %.1f ms, %d iterations\n", op_calls[op],
               op == FOP ? sizeof(int64_t) : bytes, compute_s > 0 ? "computing" : "in MPI_Barrier for",
               compute_s * 1e3, iters);
        printf("%-7s %10s %10s %10s %10s\n", "op", "median_ms", "min_ms", "max_ms", "by_rdma");
        printf("%-7s %10.3f %10.3f %10.3f %10lld\n", op_names[op], t[iters / 2] * 1e3, t[0] * 1e3,
               t[iters - 1] * 1e3, rdma_before < 0 ? -1LL : rdma_counter(counter_of(op)) - rdma_before);
    }
    MPI_Win_free(&counter_win);
    MPI_Win_free(&win);
    MPI_Free_mem(buf);
    free(t);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
