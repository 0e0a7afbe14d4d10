/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared parts of the osu-bench programs: options, buffers, the size loop, data checks and the
 * OSU output format. Each benchmark describes itself with a struct bench_desc and then only
 * contains its timed loop. */
#ifndef OSU_BENCH_UTIL_H
#define OSU_BENCH_UTIL_H

#include <mpi.h>
#include <stddef.h>

/* Sizes above this count as large: fewer iterations, as in OSU. */
#define BENCH_LARGE_SIZE 8192
#define BENCH_MIB ((size_t)1 << 20)

enum bench_ranks {
    BENCH_RANKS_TWO,  /* exactly 2 (point-to-point) */
    BENCH_RANKS_EVEN, /* an even number >= 2 (pairs: rank i talks to rank i + n/2) */
    BENCH_RANKS_ANY,  /* >= 2 (collectives) */
};

struct bench_desc {
    const char *title;   /* "OSU MPI Latency Test" */
    const char *columns; /* column header line, starting with "# Size" */
    enum bench_ranks ranks;
    size_t min_size, max_size;  /* defaults for -m */
    int iters, iters_large;     /* timed iterations: size <= BENCH_LARGE_SIZE / above */
    int skip, skip_large;       /* warm-up iterations, not timed */
    int window;                 /* default for -W; 0: the program has no window */
};

struct bench_opts {
    size_t min_size, max_size;
    int iters, iters_large, skip, skip_large, window;
    int rank, nprocs;
};

/* MPI_Init, options, rank count check, header on rank 0. Exits (after MPI_Finalize) on a usage
 * error or with -h. */
void bench_init(int *argc, char ***argv, const struct bench_desc *d, struct bench_opts *o);
void bench_finalize(void);

/* The size loop: for (s = bench_first(o); s <= o->max_size; s = bench_next(s)) */
size_t bench_first(const struct bench_opts *o);
size_t bench_next(size_t size);
int bench_iters(const struct bench_opts *o, size_t size);
int bench_skip(const struct bench_opts *o, size_t size);

/* Page-aligned buffer, zeroed (touches every page before timing). Aborts when out of memory. */
void *bench_alloc(size_t bytes);

/* One-sided benchmarks: a window of `bytes` (disp_unit 1) from MPI_Win_allocate on
 * MPI_COMM_WORLD, zeroed. Aborts on failure. */
void *bench_win_allocate(size_t bytes, MPI_Win *win);
/* Bracket direct reads and writes of this rank's own window memory: a shared lock of itself with
 * MPI_Win_sync on both sides, so they meet remote accesses correctly in either memory model. */
void bench_win_begin(MPI_Win win);
void bench_win_end(MPI_Win win);
/* bench_fill, bench_poison and bench_check (below) on this rank's window memory, so bracketed. */
void bench_win_fill(MPI_Win win, void *buf, size_t len, unsigned seed);
void bench_win_poison(MPI_Win win, void *buf, size_t len, unsigned seed);
void bench_win_check(MPI_Win win, const void *buf, size_t len, unsigned seed, const char *what, size_t size);

/* One size of a put or get benchmark between ranks 0 and 1 (the programs' timed loop): rank 0
 * issues `batch` operations of `size` bytes at displacement 0 of rank 1's window (`window`
 * there), skip + iters times, each batch closed by
 *   BENCH_FLUSH: MPI_Win_flush, inside one passive-target epoch (MPI_Win_lock shared), or
 *   BENCH_FENCE: MPI_Win_fence, which rank 1 calls with it (active target, the thesis' Figure 4.2);
 * the seed's pattern is checked where the data lands (rank 1's window after puts, rank 0's `buf`,
 * poisoned before the last batch, after gets). Returns the seconds of the timed iterations on
 * rank 0, 0 on rank 1. */
enum bench_rma_op { BENCH_PUT, BENCH_GET };
enum bench_rma_sync { BENCH_FLUSH, BENCH_FENCE };
double bench_rma(const struct bench_opts *o, MPI_Win win, char *window, char *buf, enum bench_rma_op op,
                 enum bench_rma_sync sync, size_t size, int batch);

/* Data checks. The sender fills a message with bench_fill(seed); the receiver poisons the first
 * and last byte with bench_poison(seed) before the last timed iteration and calls bench_check
 * afterwards, so a message that did not arrive (or arrived shifted, truncated or from a different
 * size) is caught. A mismatch prints the details and calls MPI_Abort (exit status non-zero). */
unsigned bench_seed(int from, int to, size_t size);
void bench_fill(void *buf, size_t len, unsigned seed);
void bench_poison(void *buf, size_t len, unsigned seed);
void bench_check(const void *buf, size_t len, unsigned seed, const char *what, size_t size);
/* For checks the benchmark does itself (e.g. float sums). */
void bench_fail(size_t size, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* One output line on rank 0: "%-10zu%18.2f" (and a second value column for bench_print2). */
void bench_print(size_t size, double value);
void bench_print2(size_t size, double value1, double value2);

#endif
