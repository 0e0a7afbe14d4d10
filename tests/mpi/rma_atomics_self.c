/* SPDX-License-Identifier: BSD-3-Clause */
/* A window's owner applies MPI_Fetch_and_op, MPI_Accumulate and MPI_Compare_and_swap to its own
 * words back to back while every other rank applies its own to the same words (issue 47). MPI
 * makes all of them atomic with each other. CH3 applies the owner's inline, with plain loads and
 * stores and no packet, so ch3:hybrid must not let its RNIC serve the others' atomics from another
 * thread meanwhile (info key ch3_hybrid_rnic_atomics; other channels ignore it).
 *
 * Rank 0 owns three 8-byte words: one every rank adds 1 to by MPI_Fetch_and_op (MPI_SUM), one by
 * MPI_Accumulate (MPI_SUM), one every rank increments by MPI_Compare_and_swap (compare with the
 * value it expects, swap in one more). For SECONDS, in one lock_all(MPI_MODE_NOCHECK) epoch:
 *  - rank 0 runs its three operations back to back. It enters MPI's progress engine only every
 *    POKE_MS, by the MPI_Win_flush of itself that makes its compare-and-swap results readable, so
 *    an RNIC standby thread (ch3:hybrid's progress=standby, 250 us) would serve the others
 *    between. Its compare value is a plain read of the word: a guess, which the operation checks;
 *  - ranks 1..n-1 each do one of each per round, then MPI_Win_flush.
 * Each rank counts what it applied (the compare-and-swaps that matched); at the end every word
 * must equal the sum over the ranks exactly, and a difference is printed as updates lost.
 *
 * The info value is the second argument (default true). With RMA_EXPECT_RNIC_ATOMICS set
 * (ch3:hybrid, progress=caller) some of every other rank's operations must have been RNIC atomics
 * (MPI_T counter ch3_hybrid_rdma_atomics); with RMA_EXPECT_NO_RNIC_ATOMICS (progress=standby or
 * thread, which decline the key's `true`), none.
 *
 * Usage: mpiexec -n 2 rma_atomics_self [seconds] [info_value]
 */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define TEST_NAME "rma_atomics_self"
static int rank;
#include "check.h"

enum { FETCHED_AND_ADDED, ACCUMULATED, SWAPPED, WORDS };
#define POKE_MS 20
#define MAX_UNFLUSHED 65536     /* compare-and-swaps between two flushes, at most */
#define WARMUP_ROUNDS 100       /* each other rank's, while rank 0 waits in MPI (queue pairs connect) */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One rank's contributions to each word. */
typedef struct {
    int64_t applied[WORDS];
} counts_t;

/* Rank 0: its own operations until `until`, flushing (and so entering the progress engine) only
 * every POKE_MS. The compare-and-swaps' results are read after each flush. */
static void own_rounds(MPI_Win win, volatile int64_t *words, double until, counts_t *c)
{
    static int64_t expected[MAX_UNFLUSHED], got[MAX_UNFLUSHED];
    const int64_t one = 1;
    int64_t fetched;
    while (now() < until) {
        const double poke_at = now() + POKE_MS / 1e3;
        int n = 0;
        while (n < MAX_UNFLUSHED && (n % 64 != 0 || now() < poke_at)) {
            int64_t swap_in;
            CHK(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 0, FETCHED_AND_ADDED, MPI_SUM, win));
            CHK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, ACCUMULATED, 1, MPI_INT64_T, MPI_SUM, win));
            expected[n] = words[SWAPPED];
            swap_in = expected[n] + 1;
            CHK(MPI_Compare_and_swap(&swap_in, &expected[n], &got[n], MPI_INT64_T, 0, SWAPPED, win));
            n++;
        }
        CHK(MPI_Win_flush(0, win));
        c->applied[FETCHED_AND_ADDED] += n;
        c->applied[ACCUMULATED] += n;
        for (int i = 0; i < n; i++)
            c->applied[SWAPPED] += got[i] == expected[i];
    }
}

/* Ranks 1..n-1: rounds of one operation of each kind and a flush, `rounds` of them or until
 * `until` (whichever is given). */
static void remote_rounds(MPI_Win win, int rounds, double until, int64_t *seen, counts_t *c)
{
    const int64_t one = 1;
    for (int i = 0; rounds ? i < rounds : now() < until; i++) {
        int64_t fetched, got, swap_in = *seen + 1;
        CHK(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 0, FETCHED_AND_ADDED, MPI_SUM, win));
        CHK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, ACCUMULATED, 1, MPI_INT64_T, MPI_SUM, win));
        CHK(MPI_Compare_and_swap(&swap_in, seen, &got, MPI_INT64_T, 0, SWAPPED, win));
        CHK(MPI_Win_flush(0, win));
        c->applied[FETCHED_AND_ADDED]++;
        c->applied[ACCUMULATED]++;
        if (got == *seen) {
            c->applied[SWAPPED]++;
            *seen = swap_in;
        } else {
            *seen = got;
        }
    }
}

int main(int argc, char **argv)
{
    static const char *const names[WORDS] = { "MPI_Fetch_and_op", "MPI_Accumulate",
        "MPI_Compare_and_swap" };
    const double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    const char *value = argc > 2 ? argv[2] : "true";
    int size, provided, failed = 0;
    int64_t *words, seen = 0;
    counts_t mine = { { 0 } }, all = { { 0 } };
    long long carried;
    MPI_Info info;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || seconds <= 0)
        FAIL("needs 2 or more ranks and a positive duration");
    MPI_Info_create(&info);
    MPI_Info_set(info, "ch3_hybrid_rnic_atomics", value);
    CHK(MPI_Win_allocate(WORDS * sizeof(int64_t), sizeof(int64_t), info, MPI_COMM_WORLD, &words, &win));
    MPI_Info_free(&info);
    memset(words, 0, WORDS * sizeof(int64_t));
    CHK(MPI_Barrier(MPI_COMM_WORLD));

    CHK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    if (rank != 0)
        remote_rounds(win, WARMUP_ROUNDS, 0, &seen, &mine);
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        own_rounds(win, words, now() + seconds, &mine);
    else
        remote_rounds(win, 0, now() + seconds, &seen, &mine);
    CHK(MPI_Win_unlock_all(win));       /* every operation is complete at rank 0 */

    carried = pvar_counter("ch3_hybrid_rdma_atomics");
    if (rank != 0)
        printf("rma_atomics_self: rank %d: %lld rounds, %lld of its operations by RNIC atomics\n",
               rank, (long long) mine.applied[ACCUMULATED], carried);
    CHK(MPI_Reduce(mine.applied, all.applied, WORDS, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        int64_t held[WORDS];
        CHK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHK(MPI_Win_sync(win));
        memcpy(held, words, sizeof(held));
        CHK(MPI_Win_unlock(0, win));
        printf("rma_atomics_self: info %s, %.1f s: rank 0 applied %lld of each to its own window "
               "(%lld compare-and-swaps matched), the others %lld\n", value, seconds,
               (long long) mine.applied[ACCUMULATED], (long long) mine.applied[SWAPPED],
               (long long) (all.applied[ACCUMULATED] - mine.applied[ACCUMULATED]));
        for (int w = 0; w < WORDS; w++)
            if (held[w] != all.applied[w]) {
                fprintf(stderr, "rma_atomics_self: %s word %lld, applied %lld: %lld updates lost\n",
                        names[w], (long long) held[w], (long long) all.applied[w],
                        (long long) (all.applied[w] - held[w]));
                failed = 1;
            }
        if (failed)
            FAIL("updates lost (above): the owner's operations and the others' were not atomic");
        printf("rma_atomics_self: every update counted (%lld, %lld, %lld)\n",
               (long long) held[FETCHED_AND_ADDED], (long long) held[ACCUMULATED],
               (long long) held[SWAPPED]);
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD)); /* the counts first, then how the operations went */
    if (rank != 0 && getenv("RMA_EXPECT_RNIC_ATOMICS") && carried <= 0)
        FAIL("no operation went by RNIC atomic (ch3_hybrid_rdma_atomics %lld)", carried);
    if (rank != 0 && getenv("RMA_EXPECT_NO_RNIC_ATOMICS") && carried != 0)
        FAIL("%lld operations went by RNIC atomic where the window must decline them", carried);
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_atomics_self: OK\n");
    CHK(MPI_Win_free(&win));
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
