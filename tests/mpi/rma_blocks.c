/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_blocks: MPI_Put and MPI_Get of contiguous blocks (12 B to 80 KB, so that ch3:hybrid moves
 * them by RDMA Write and RDMA Read) in every synchronization mode, with point-to-point traffic
 * running at the same time, window contents and fetched data verified after every epoch.
 *
 * Modes: fence; post/start/complete/wait; lock shared per target; lock_all with flush and
 * flush_local per target; request-based Rput/Rget under lock_all; and an exclusive-lock counter
 * (every rank repeatedly locks rank 0 exclusively, gets a block, adds 1 to each element and puts
 * it back): lost updates show if an unlock ever overtook the data of the put before it. Windows
 * from MPI_Win_create, MPI_Win_allocate and MPI_Win_create_dynamic (whose operations stay on the
 * point-to-point path, and must be just as correct).
 *
 * On ch3:hybrid it also prints the channel's MPI_T counters of operations RDMA carried; with
 * RMA_EXPECT_RDMA=1 in the environment it fails unless RDMA carried both puts and gets and some PUT
 * headers went as Sends on the queue pair, and with
 * RMA_EXPECT_NO_FALLBACK=1 also if any RDMA transfer failed and went over SCTP instead.
 *
 * Usage: mpiexec -n N rma_blocks [rounds [seconds]]      (2 <= N <= 16)
 *   seconds: go on with more rounds until at least that long has passed (rank 0 decides), e.g.
 *   to keep traffic running while tests/vcluster/failover takes rails down and up.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TEST_NAME "rma_blocks"
static int rank;
#include "check.h"

#define MAXB 20000 /* ints in the largest block (80 KB) */
#define COUNTER_ROUNDS 6
static const int sizes[] = {3, 1024, MAXB};
#define NSIZES 3

static int P;
static MPI_Comm pcomm; /* the concurrent point-to-point traffic */
static const char *mode = "";

/* Window layout (ints): P put slices of MAXB, then the source block (gets read MAXB ints from its
 * 8th), then the counter block. */
#define SLICE(o) ((MPI_Aint)(o) * MAXB)
#define SRC ((MPI_Aint)P * MAXB)
#define COUNTER (SRC + MAXB + 8)
#define WIN_INTS (COUNTER + MAXB)

typedef struct {
    MPI_Win win;
    int *mem;
    int dynamic;
    MPI_Aint base[16]; /* dynamic window: each rank's attached address */
} W;

static int putval(int o, int t, int i, int epoch) { return o * 1000003 + t * 7919 + i + epoch * 31; }
static int srcval(int t, int i) { return t * 100000 + i * 3 + 1; }
static MPI_Aint disp(const W *w, int t, MPI_Aint idx) { return w->dynamic ? w->base[t] + idx * (MPI_Aint)sizeof(int) : idx; }

/* ---- concurrent point-to-point traffic ---------------------------------------------------- */
#define PN 60000
static int *p2p_s, *p2p_r, p2p_iter;
static MPI_Request p2p_rq[2];
static void p2p_start(void)
{
    int right = (rank + 1) % P, left = (rank + P - 1) % P;
    p2p_iter++;
    for (int i = 0; i < PN; i++) {
        p2p_s[i] = rank * 13 + i + p2p_iter;
        p2p_r[i] = -1;
    }
    CHK(MPI_Irecv(p2p_r, PN, MPI_INT, left, p2p_iter, pcomm, &p2p_rq[0]));
    CHK(MPI_Isend(p2p_s, PN, MPI_INT, right, p2p_iter, pcomm, &p2p_rq[1]));
}
static void p2p_finish(void)
{
    int left = (rank + P - 1) % P;
    CHK(MPI_Waitall(2, p2p_rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < PN; i++)
        if (p2p_r[i] != left * 13 + i + p2p_iter)
            FAIL("[%s] concurrent point-to-point message: int %d is %d", mode, i, p2p_r[i]);
}

/* ---- one epoch's operations and their checks ---------------------------------------------- */
static int *origin[16], *fetched[16];

static void prepare(W *w)
{
    CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
    for (MPI_Aint i = 0; i < SRC; i++)
        w->mem[i] = -1;
    CHK(MPI_Win_sync(w->win));
    CHK(MPI_Win_unlock(rank, w->win));
    for (int t = 0; t < P; t++)
        for (int i = 0; i < MAXB; i++)
            fetched[t][i] = -2;
    CHK(MPI_Barrier(MPI_COMM_WORLD));
}

/* To target t: a put of block size n into my slice, and a get of n ints of its source block. */
static void ops_to(W *w, int t, int n, int epoch)
{
    for (int i = 0; i < n; i++)
        origin[t][i] = putval(rank, t, i, epoch);
    CHK(MPI_Put(origin[t], n, MPI_INT, t, disp(w, t, SLICE(rank)), n, MPI_INT, w->win));
    CHK(MPI_Get(fetched[t], n, MPI_INT, t, disp(w, t, SRC + 7), n, MPI_INT, w->win));
}

static void verify(W *w, int n, int epoch)
{
    for (int t = 0; t < P; t++)
        for (int i = 0; i < MAXB; i++) {
            int want = i < n ? srcval(t, i + 7) : -2;
            if (fetched[t][i] != want)
                FAIL("[%s, %d ints] get from rank %d: int %d is %d, expected %d", mode, n, t, i, fetched[t][i], want);
        }
    CHK(MPI_Barrier(MPI_COMM_WORLD)); /* every epoch that writes my window has ended */
    CHK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w->win));
    CHK(MPI_Win_sync(w->win));
    for (int o = 0; o < P; o++)
        for (int i = 0; i < MAXB; i++) {
            int want = i < n ? putval(o, rank, i, epoch) : -1;
            if (w->mem[SLICE(o) + i] != want)
                FAIL("[%s, %d ints] put from rank %d: int %d is %d, expected %d", mode, n, o, i,
                     w->mem[SLICE(o) + i], want);
        }
    CHK(MPI_Win_unlock(rank, w->win));
}

typedef void (*epoch_fn)(W *w, int n, int epoch);

static void e_fence(W *w, int n, int epoch)
{
    CHK(MPI_Win_fence(0, w->win));
    for (int t = 0; t < P; t++)
        ops_to(w, t, n, epoch);
    CHK(MPI_Win_fence(0, w->win));
}

static void e_pscw(W *w, int n, int epoch)
{
    MPI_Group world, all;
    CHK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    all = world;
    CHK(MPI_Win_post(all, 0, w->win));
    CHK(MPI_Win_start(all, 0, w->win));
    for (int k = 0; k < P; k++)
        ops_to(w, (rank + k) % P, n, epoch);
    CHK(MPI_Win_complete(w->win));
    CHK(MPI_Win_wait(w->win));
    CHK(MPI_Group_free(&world));
}

static void e_lock_shared(W *w, int n, int epoch)
{
    for (int k = 0; k < P; k++) {
        int t = (rank + k) % P;
        CHK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w->win));
        ops_to(w, t, n, epoch);
        CHK(MPI_Win_unlock(t, w->win));
    }
}

static void e_lock_all_flush(W *w, int n, int epoch)
{
    CHK(MPI_Win_lock_all(0, w->win));
    for (int k = 0; k < P; k++) {
        int t = (rank + k) % P;
        ops_to(w, t, n, epoch);
        if (k % 2)
            CHK(MPI_Win_flush(t, w->win));
        else
            CHK(MPI_Win_flush_local(t, w->win));
    }
    CHK(MPI_Win_flush_all(w->win));
    CHK(MPI_Win_unlock_all(w->win));
}

static void e_request(W *w, int n, int epoch)
{
    MPI_Request rq[32];
    CHK(MPI_Win_lock_all(0, w->win));
    for (int t = 0; t < P; t++) {
        for (int i = 0; i < n; i++)
            origin[t][i] = putval(rank, t, i, epoch);
        CHK(MPI_Rput(origin[t], n, MPI_INT, t, disp(w, t, SLICE(rank)), n, MPI_INT, w->win, &rq[2 * t]));
        CHK(MPI_Rget(fetched[t], n, MPI_INT, t, disp(w, t, SRC + 7), n, MPI_INT, w->win, &rq[2 * t + 1]));
    }
    CHK(MPI_Waitall(2 * P, rq, MPI_STATUSES_IGNORE));
    CHK(MPI_Win_flush_all(w->win));
    CHK(MPI_Win_unlock_all(w->win));
}

/* Read-modify-write of rank 0's counter block under an exclusive lock. */
static void counter(W *w, int n)
{
    static int block[MAXB];
    mode = "exclusive-lock counter";
    if (rank == 0) {
        CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
        for (int i = 0; i < MAXB; i++)
            w->mem[COUNTER + i] = 0;
        CHK(MPI_Win_unlock(0, w->win));
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    p2p_start();
    for (int r = 0; r < COUNTER_ROUNDS; r++) {
        CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
        CHK(MPI_Get(block, n, MPI_INT, 0, disp(w, 0, COUNTER), n, MPI_INT, w->win));
        CHK(MPI_Win_flush(0, w->win));
        for (int i = 0; i < n; i++)
            block[i] += 1;
        CHK(MPI_Put(block, n, MPI_INT, 0, disp(w, 0, COUNTER), n, MPI_INT, w->win));
        CHK(MPI_Win_unlock(0, w->win));
    }
    p2p_finish();
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win));
        for (int i = 0; i < n; i++)
            if (w->mem[COUNTER + i] != P * COUNTER_ROUNDS)
                FAIL("[%s, %d ints] int %d is %d after %d locked increments by each of %d ranks (lost updates)",
                     mode, n, i, w->mem[COUNTER + i], COUNTER_ROUNDS, P);
        CHK(MPI_Win_unlock(0, w->win));
    }
}

static void run_window(int flavor, int round)
{
    static const char *names[] = {"MPI_Win_create", "MPI_Win_allocate", "MPI_Win_create_dynamic"};
    static const struct { const char *name; epoch_fn fn; } epochs[] = {
        {"fence", e_fence}, {"post/start/complete/wait", e_pscw}, {"lock shared", e_lock_shared},
        {"lock_all + flush/flush_local", e_lock_all_flush}, {"request-based", e_request}};
    const MPI_Aint bytes = WIN_INTS * (MPI_Aint)sizeof(int);
    W w;
    memset(&w, 0, sizeof w);
    if (flavor == 1) {
        CHK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w.mem, &w.win));
    } else {
        w.mem = malloc(bytes);
        if (!w.mem)
            FAIL("out of memory");
        if (flavor == 0) {
            CHK(MPI_Win_create(w.mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w.win));
        } else {
            MPI_Aint mine;
            w.dynamic = 1;
            CHK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w.win));
            CHK(MPI_Win_attach(w.win, w.mem, bytes));
            CHK(MPI_Get_address(w.mem, &mine));
            CHK(MPI_Allgather(&mine, 1, MPI_AINT, w.base, 1, MPI_AINT, MPI_COMM_WORLD));
        }
    }
    CHK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
    CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    for (int i = 0; i < MAXB + 8; i++)
        w.mem[SRC + i] = srcval(rank, i);
    CHK(MPI_Win_unlock(rank, w.win));

    int epoch = round * 100;
    for (size_t e = 0; e < sizeof epochs / sizeof epochs[0]; e++)
        for (int s = 0; s < NSIZES; s++) {
            mode = epochs[e].name;
            prepare(&w);
            p2p_start();
            epochs[e].fn(&w, sizes[s], ++epoch);
            p2p_finish();
            verify(&w, sizes[s], epoch);
        }
    for (int s = 0; s < NSIZES; s++)
        counter(&w, sizes[s]);
    if (rank == 0)
        printf("rma_blocks: %s window: all modes ok\n", names[flavor]);
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (flavor == 2)
        CHK(MPI_Win_detach(w.win, w.mem));
    CHK(MPI_Win_free(&w.win));
    if (flavor != 1)
        free(w.mem);
}

static void report_rdma(void)
{
    int provided;
    long long mine[4], all[4];
    CHK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    mine[0] = pvar_counter("ch3_hybrid_rdma_puts");
    mine[1] = pvar_counter("ch3_hybrid_rdma_gets");
    mine[2] = pvar_counter("ch3_hybrid_rdma_fallbacks");
    mine[3] = pvar_counter("ch3_hybrid_qp_put_headers");
    CHK(MPI_T_finalize());
    if (mine[0] < 0) {
        if (getenv("RMA_EXPECT_RDMA"))
            FAIL("RMA_EXPECT_RDMA is set but this MPI has no ch3_hybrid_rdma_* counters");
        return;
    }
    CHK(MPI_Allreduce(mine, all, 4, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_blocks: RDMA carried %lld puts (%lld headers as Sends on the queue pair) and "
               "%lld gets (%lld fell back to SCTP)\n", all[0], all[3], all[1], all[2]);
    if (getenv("RMA_EXPECT_RDMA") && (all[0] == 0 || all[1] == 0 || all[3] == 0))
        FAIL("RMA_EXPECT_RDMA is set but RDMA carried %lld puts (%lld headers on the queue pair) "
             "and %lld gets", all[0], all[3], all[1]);
    if (getenv("RMA_EXPECT_NO_FALLBACK") && all[2] != 0)
        FAIL("RMA_EXPECT_NO_FALLBACK is set but %lld RDMA transfers failed over to SCTP", all[2]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (P < 2 || P > 16)
        FAIL("needs 2 to 16 processes, not %d", P);
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    double seconds = argc > 2 ? atof(argv[2]) : 0, t0 = MPI_Wtime();
    CHK(MPI_Comm_dup(MPI_COMM_WORLD, &pcomm));
    p2p_s = malloc(PN * sizeof(int));
    p2p_r = malloc(PN * sizeof(int));
    /* Origin buffers from MPI_Alloc_mem (which ch3:hybrid registers beforehand), get buffers
     * from malloc (registered per transfer). */
    for (int t = 0; t < P; t++) {
        CHK(MPI_Alloc_mem(MAXB * sizeof(int), MPI_INFO_NULL, &origin[t]));
        fetched[t] = malloc(MAXB * sizeof(int));
        if (!fetched[t])
            FAIL("out of memory");
    }
    int done = 0;
    for (int more = 1; done < rounds || more; done++) {
        for (int flavor = 0; flavor < 3; flavor++)
            run_window(flavor, done);
        more = MPI_Wtime() - t0 < seconds;
        CHK(MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
    rounds = done;
    report_rdma();
    for (int t = 0; t < P; t++) {
        CHK(MPI_Free_mem(origin[t]));
        free(fetched[t]);
    }
    free(p2p_s);
    free(p2p_r);
    MPI_Comm_free(&pcomm);
    if (rank == 0)
        printf("rma_blocks: OK (%d processes, %d rounds x 3 window kinds x 5 epoch kinds x 3 sizes, and the counter)\n",
               P, rounds);
    MPI_Finalize();
    return 0;
}
