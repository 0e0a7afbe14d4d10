/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Fetch_and_op and MPI_Compare_and_swap under contention from every other rank, with
 * point-to-point traffic beside, while the target computes outside MPI at first. The window asks
 * for RNIC atomics (ch3:hybrid's info key ch3_hybrid_rnic_atomics; other channels ignore it) with
 * the value remote_only, which lets ch3:hybrid's standby thread serve them: no rank applies these
 * operations to its own part of the window (rma_atomics_self does, with the value true).
 *
 * Rank 0 holds four 8-byte words: a counter that origins add 1 to (MPI_SUM), a counter they
 * increment by MPI_Compare_and_swap loops, a word they swap their own values into (MPI_REPLACE),
 * and a word a mismatched compare must leave alone. Ranks 1..n-1 each make ITERS rounds inside
 * one lock_all(MPI_MODE_NOCHECK) epoch, flushing after each round and trading a checked message
 * with their neighbours among the origins. Meanwhile rank 0 first computes for COMPUTE_MS with no
 * MPI call, then waits in MPI_Barrier. The checks are exact:
 *  - the values MPI_SUM returned, over all origins, are 0 .. total-1, each once (an update lost or
 *    doubled by a non-atomic read-modify-write shows as a repeat), and the counter ends at total;
 *  - the compare-and-swap counter ends at total, each origin's successes being its ITERS;
 *  - the values MPI_REPLACE returned, plus the word's last value, are the initial 0 and every
 *    value swapped in, each once;
 *  - a compare that does not match returns the word and leaves it unchanged;
 *  - an MPI_NO_OP fetch after everything reads the final counter.
 * With RMA_EXPECT_RNIC_ATOMICS set (ch3:hybrid), every origin must have had some of its operations
 * carried by RNIC atomics (MPI_T counter ch3_hybrid_rdma_atomics); with RMA_EXPECT_NO_RNIC_ATOMICS
 * (ch3:hybrid with progress=thread, whose RNIC thread could interleave with CH3's accumulates),
 * none.
 *
 * With a third argument `fence` or `pscw`, each round is an epoch of its own (MPI_Win_fence, or
 * MPI_Win_post/start/complete/wait with rank 0 the target): one MPI_SUM, one MPI_REPLACE and one
 * compare-and-swap attempt against the value the previous round's MPI_NO_OP read; the counter
 * must then end at the number of attempts that matched, over all origins. Rank 0 takes part in
 * every epoch, so it computes only before the first.
 *
 * Usage: mpiexec -n 4 rma_atomics [iterations] [compute_ms] [lockall|fence|pscw]
 */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define TEST_NAME "rma_atomics"
static int rank;
#include "check.h"

enum { SUMMED, SWAPPED_BY_CAS, REPLACED, UNMATCHED, ACCUMULATED, GOT_ACCUMULATED, WORDS };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Sort and check that v[0..n) holds each of want[0..n) once (want sorted). */
static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

static void expect_each_once(int64_t *v, int64_t *want, int n, const char *what)
{
    qsort(v, (size_t) n, sizeof(*v), cmp64);
    qsort(want, (size_t) n, sizeof(*want), cmp64);
    for (int i = 0; i < n; i++)
        if (v[i] != want[i])
            FAIL("%s: sorted value %d is %lld, expected %lld (an update lost or doubled)", what, i,
                 (long long) v[i], (long long) want[i]);
}

enum sync { LOCKALL, FENCE, PSCW };
static enum sync sync_mode = LOCKALL;
static MPI_Group origins_group, target_group;

/* An epoch-per-round mode's epoch boundaries; every rank calls them (rank 0 as the target). */
static void epoch_open(MPI_Win win)
{
    if (sync_mode == FENCE)
        CHK(MPI_Win_fence(0, win));
    else if (rank == 0)
        CHK(MPI_Win_post(origins_group, 0, win));
    else
        CHK(MPI_Win_start(target_group, 0, win));
}

static void epoch_close(MPI_Win win)
{
    if (sync_mode == FENCE)
        CHK(MPI_Win_fence(0, win));
    else if (rank == 0)
        CHK(MPI_Win_wait(win));
    else
        CHK(MPI_Win_complete(win));
}

/* Rounds of one origin in an epoch each (fence, PSCW); returns its matched compare-and-swaps. */
static int64_t origin_epochs(MPI_Win win, int iters, int64_t *summed, int64_t *replaced, int64_t *got_acc)
{
    const int64_t one = 1;
    int64_t seen = 0, got = -1, matched = 0;
    for (int i = 0; i < iters; i++) {
        int64_t mine = (int64_t) rank * 1000000 + i + 1, next = seen + 1, fresh = -1;
        epoch_open(win);
        CHK(MPI_Fetch_and_op(&one, &summed[i], MPI_INT64_T, 0, SUMMED, MPI_SUM, win));
        CHK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, ACCUMULATED, 1, MPI_INT64_T, MPI_SUM, win));
        CHK(MPI_Get_accumulate(&one, 1, MPI_INT64_T, &got_acc[i], 1, MPI_INT64_T, 0, GOT_ACCUMULATED, 1,
                               MPI_INT64_T, MPI_SUM, win));
        CHK(MPI_Compare_and_swap(&next, &seen, &got, MPI_INT64_T, 0, SWAPPED_BY_CAS, win));
        CHK(MPI_Fetch_and_op(NULL, &fresh, MPI_INT64_T, 0, SWAPPED_BY_CAS, MPI_NO_OP, win));
        CHK(MPI_Fetch_and_op(&mine, &replaced[i], MPI_INT64_T, 0, REPLACED, MPI_REPLACE, win));
        epoch_close(win);
        matched += got == seen;
        seen = fresh;
    }
    return matched;
}

/* Rounds of one origin; its MPI_SUM and MPI_REPLACE results into summed[] and replaced[]. */
static void origin_rounds(MPI_Win win, int iters, int size, int64_t *summed, int64_t *replaced,
                          int64_t *got_acc)
{
    const int64_t one = 1;
    const int origins = size - 1, me = rank - 1;
    const int right = 1 + (me + 1) % origins, left = 1 + (me + origins - 1) % origins;
    for (int i = 0; i < iters; i++) {
        int64_t seen, got, mine = (int64_t) rank * 1000000 + i + 1, in = -1, out = mine;
        CHK(MPI_Fetch_and_op(&one, &summed[i], MPI_INT64_T, 0, SUMMED, MPI_SUM, win));
        CHK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, ACCUMULATED, 1, MPI_INT64_T, MPI_SUM, win));
        CHK(MPI_Get_accumulate(&one, 1, MPI_INT64_T, &got_acc[i], 1, MPI_INT64_T, 0, GOT_ACCUMULATED, 1,
                               MPI_INT64_T, MPI_SUM, win));
        CHK(MPI_Fetch_and_op(NULL, &seen, MPI_INT64_T, 0, SWAPPED_BY_CAS, MPI_NO_OP, win));
        CHK(MPI_Win_flush(0, win));
        for (;;) {      /* increment by compare-and-swap: retry with what the word held */
            int64_t next = seen + 1;
            CHK(MPI_Compare_and_swap(&next, &seen, &got, MPI_INT64_T, 0, SWAPPED_BY_CAS, win));
            CHK(MPI_Win_flush(0, win));
            if (got == seen)
                break;
            seen = got;
        }
        CHK(MPI_Fetch_and_op(&mine, &replaced[i], MPI_INT64_T, 0, REPLACED, MPI_REPLACE, win));
        CHK(MPI_Win_flush(0, win));
        if (origins > 1) {
            CHK(MPI_Sendrecv(&out, 1, MPI_INT64_T, right, i, &in, 1, MPI_INT64_T, left, i,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (in != (int64_t) left * 1000000 + i + 1)
                FAIL("round %d: the message from rank %d held %lld", i, left, (long long) in);
        }
    }
}

int main(int argc, char **argv)
{
    int size, iters = argc > 1 ? atoi(argv[1]) : 200, compute_ms = argc > 2 ? atoi(argv[2]) : 300;
    int provided, total;
    int64_t matched = 0, cas_total = 0;
    int64_t *words, *summed, *replaced, *got_acc, unmatched, final_sum, *all = NULL, *want = NULL;
    long long carried;
    MPI_Info info;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || iters < 1)
        FAIL("needs 2 or more ranks and 1 or more iterations");
    if (argc > 3)
        sync_mode = !strcmp(argv[3], "fence") ? FENCE : !strcmp(argv[3], "pscw") ? PSCW : LOCKALL;
    {
        MPI_Group world;
        int zero = 0;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_excl(world, 1, &zero, &origins_group);
        MPI_Group_incl(world, 1, &zero, &target_group);
        MPI_Group_free(&world);
    }
    total = (size - 1) * iters;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ch3_hybrid_rnic_atomics", "remote_only");
    CHK(MPI_Win_allocate(WORDS * sizeof(int64_t), sizeof(int64_t), info, MPI_COMM_WORLD, &words, &win));
    MPI_Info_free(&info);
    memset(words, 0, WORDS * sizeof(int64_t));
    summed = calloc((size_t) iters, sizeof(int64_t));
    replaced = calloc((size_t) iters, sizeof(int64_t));
    got_acc = calloc((size_t) iters, sizeof(int64_t));
    if (!summed || !replaced || !got_acc)
        FAIL("out of memory");
    CHK(MPI_Barrier(MPI_COMM_WORLD));

    if (rank == 0) {
        double until = now() + compute_ms / 1e3;
        while (now() < until)
            ;   /* computing: no MPI call */
    }
    if (sync_mode != LOCKALL) {
        if (sync_mode == FENCE)
            CHK(MPI_Win_fence(0, win));
        if (rank == 0)
            for (int i = 0; i < iters; i++) {
                epoch_open(win);
                epoch_close(win);
            }
        else
            matched = origin_epochs(win, iters, summed, replaced, got_acc);
        if (sync_mode == FENCE)
            CHK(MPI_Win_fence(0, win));
    } else if (rank != 0) {
        const int64_t wrong = 12345, other = 999;
        CHK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
        if (rank == 1) {
            CHK(MPI_Compare_and_swap(&other, &wrong, &unmatched, MPI_INT64_T, 0, UNMATCHED, win));
            CHK(MPI_Win_flush(0, win));
            if (unmatched != 0)
                FAIL("a compare-and-swap that does not match returned %lld, not the word's 0",
                     (long long) unmatched);
        }
        origin_rounds(win, iters, size, summed, replaced, got_acc);
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));   /* every origin's rounds are flushed */
    if (rank != 0 && sync_mode == LOCKALL) {
        CHK(MPI_Fetch_and_op(NULL, &final_sum, MPI_INT64_T, 0, SUMMED, MPI_NO_OP, win));
        CHK(MPI_Win_flush(0, win));
        if (final_sum != total)
            FAIL("MPI_NO_OP read the counter as %lld, expected %d", (long long) final_sum, total);
        CHK(MPI_Win_unlock_all(win));
    }
    if (rank != 0) {
        carried = pvar_counter("ch3_hybrid_rdma_atomics");
        if (getenv("RMA_EXPECT_RNIC_ATOMICS") && carried <= 0)
            FAIL("no operation went by RNIC atomic (ch3_hybrid_rdma_atomics %lld)", carried);
        if (getenv("RMA_EXPECT_NO_RNIC_ATOMICS") && carried != 0)
            FAIL("%lld operations went by RNIC atomic where the window must decline them", carried);
        printf("rma_atomics: rank %d: %lld of its operations by RNIC atomics\n", rank, carried);
    }
    if (rank == 0) {
        all = calloc((size_t) total + 1, sizeof(int64_t));
        want = calloc((size_t) total + 1, sizeof(int64_t));
        if (!all || !want)
            FAIL("out of memory");
    }
    /* Rank 0 contributes nothing: its part of the gathers is empty. */
    {
        int *counts = calloc((size_t) size, sizeof(int)), *displs = calloc((size_t) size, sizeof(int));
        for (int r = 1; r < size; r++)
            counts[r] = iters, displs[r] = (r - 1) * iters;
        /* The results of the two counting operations: 0 .. total-1, each once. */
        const struct { int64_t *mine; const char *what; } counted[] = {
            { summed, "MPI_SUM's results" }, { got_acc, "MPI_Get_accumulate's results" } };
        for (int c = 0; c < 2; c++) {
            CHK(MPI_Gatherv(counted[c].mine, rank ? iters : 0, MPI_INT64_T, all, counts, displs,
                            MPI_INT64_T, 0, MPI_COMM_WORLD));
            if (rank == 0) {
                for (int i = 0; i < total; i++)
                    want[i] = i;
                expect_each_once(all, want, total, counted[c].what);
            }
        }
        CHK(MPI_Gatherv(replaced, rank ? iters : 0, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0,
                        MPI_COMM_WORLD));
        CHK(MPI_Reduce(&matched, &cas_total, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD));
        free(counts);
        free(displs);
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));   /* every origin's epoch has ended */
    if (rank == 0) {
        if (sync_mode == LOCKALL)
            cas_total = total;  /* each origin's loop succeeds once per round */
        if (words[SUMMED] != total || words[SWAPPED_BY_CAS] != cas_total)
            FAIL("counters %lld (MPI_SUM) and %lld (compare-and-swap), expected %d and %lld",
                 (long long) words[SUMMED], (long long) words[SWAPPED_BY_CAS], total,
                 (long long) cas_total);
        if (words[ACCUMULATED] != total || words[GOT_ACCUMULATED] != total)
            FAIL("MPI_Accumulate's word %lld and MPI_Get_accumulate's %lld, expected %d each",
                 (long long) words[ACCUMULATED], (long long) words[GOT_ACCUMULATED], total);
        if (words[UNMATCHED] != 0)
            FAIL("a compare that did not match changed the word to %lld", (long long) words[UNMATCHED]);
        all[total] = words[REPLACED];
        want[0] = 0;
        for (int r = 1, k = 1; r < size; r++)
            for (int i = 0; i < iters; i++)
                want[k++] = (int64_t) r * 1000000 + i + 1;
        expect_each_once(all, want, total + 1, "MPI_REPLACE's results and the last value");
        printf("rma_atomics: %d origins x %d rounds exact (%s, %lld compare-and-swaps matched), "
               "target computing %d ms first\n", size - 1, iters,
               sync_mode == FENCE ? "fence" : sync_mode == PSCW ? "pscw" : "lock_all",
               (long long) cas_total, compute_ms);
        printf("rma_atomics: OK\n");
    }
    free(all);
    free(want);
    free(summed);
    free(replaced);
    free(got_acc);
    CHK(MPI_Win_free(&win));
    MPI_Group_free(&origins_group);
    MPI_Group_free(&target_group);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
