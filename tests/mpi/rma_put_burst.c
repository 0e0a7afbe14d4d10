/* SPDX-License-Identifier: BSD-3-Clause */
/* Bursts of puts in flight at once, then one flush: the window must hold every put of every
 * origin, in every round. On ch3:hybrid with RDMA thresholds of 1 byte, more puts are in flight
 * to each target than it keeps receives posted for PUT headers on the queue pair (64), so the
 * run covers headers sent as Sends, credit running out and coming back, and headers that follow
 * their data on SCTP. With MPICH_HYBRID_TEST_BREAK_QP_AFTER=N a queue pair breaks under the
 * N-th transfer while its peer lives: the puts in flight on it must still land exactly once.
 *
 * Each round, rank o puts BURST blocks of BLOCK ints into its own slice of every other rank's
 * window (under lock_all, one MPI_Win_flush_all), then every rank checks its whole window.
 *
 * Usage: mpiexec -n N rma_put_burst [rounds]      (2 <= N <= 16)
 */
#include <mpi.h>
#include <stdlib.h>

#define TEST_NAME "rma_put_burst"
static int rank;
#include "check.h"

#define BURST 100
#define BLOCK 512
#define SLICE_INTS (BURST * BLOCK)

static int value(int o, int k, int i, int round) { return o * 7000003 + k * 65537 + i * 3 + round; }

int main(int argc, char **argv)
{
    int P, rounds;
    int *win_mem, *origin;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (P < 2 || P > 16)
        FAIL("needs 2 to 16 processes, not %d", P);
    rounds = argc > 1 ? atoi(argv[1]) : 4;
    origin = malloc((size_t)SLICE_INTS * sizeof(int));
    CHK(MPI_Win_allocate((MPI_Aint)P * SLICE_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL,
                         MPI_COMM_WORLD, &win_mem, &win));
    CHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < BURST; k++)
            for (int i = 0; i < BLOCK; i++)
                origin[k * BLOCK + i] = value(rank, k, i, round);
        CHK(MPI_Win_lock_all(0, win));
        for (int t = 0; t < P; t++) {
            if (t == rank)
                continue;
            for (int k = 0; k < BURST; k++)
                CHK(MPI_Put(origin + k * BLOCK, BLOCK, MPI_INT, t,
                            (MPI_Aint)rank * SLICE_INTS + k * BLOCK, BLOCK, MPI_INT, win));
        }
        CHK(MPI_Win_flush_all(win));
        CHK(MPI_Win_unlock_all(win));
        CHK(MPI_Barrier(MPI_COMM_WORLD)); /* every origin's flush returned */
        CHK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        CHK(MPI_Win_sync(win));
        for (int o = 0; o < P; o++) {
            if (o == rank)
                continue;
            for (int k = 0; k < BURST; k++)
                for (int i = 0; i < BLOCK; i++) {
                    int got = win_mem[(size_t)o * SLICE_INTS + k * BLOCK + i];
                    if (got != value(o, k, i, round))
                        FAIL("round %d: put %d of rank %d, int %d is %d, expected %d", round, k, o, i,
                             got, value(o, k, i, round));
                }
        }
        CHK(MPI_Win_unlock(rank, win));
        CHK(MPI_Barrier(MPI_COMM_WORLD)); /* checked before the next round overwrites */
    }
    CHK(MPI_Win_free(&win));
    free(origin);
    if (rank == 0)
        printf("rma_put_burst: OK (%d processes, %d rounds of %d puts of %d ints to each peer)\n", P,
               rounds, BURST, BLOCK);
    MPI_Finalize();
    return 0;
}
