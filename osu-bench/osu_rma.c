/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_put_latency, osu_get_latency, osu_put_bw, osu_get_bw, osu_fence_put, osu_fence_get: one
 * source built six times; the Makefile sets RMA_OP (BENCH_PUT or BENCH_GET), RMA_SYNC
 * (BENCH_FLUSH or BENCH_FENCE) and, for the bandwidth pair, RMA_BW.
 *
 * Rank 0 puts into (gets from) rank 1's window at displacement 0 (bench_rma in util.c):
 * - latency and bandwidth, as OSU's default: inside one passive-target epoch (MPI_Win_lock
 *   shared) per size, one operation per MPI_Win_flush for latency (µs per operation + flush), a
 *   window of 64 for bandwidth (MB/s, 10^6 bytes);
 * - fence (the thesis' Figure 4.2): one operation, then MPI_Win_fence on both ranks; µs per
 *   operation + fence, which is where the data moves.
 * The operations of a window all move the same bytes through one buffer of the largest size, as
 * OSU's shared buffer. */
#include "util.h"

#define RMA_NAME_BENCH_PUT "MPI_Put"
#define RMA_NAME_BENCH_GET "MPI_Get"
#define RMA_NAME_(op) RMA_NAME_##op
#define RMA_NAME(op) RMA_NAME_(op)

#ifndef RMA_SYNC
#define RMA_SYNC BENCH_FLUSH
#endif

static const struct bench_desc desc = {
#ifdef RMA_BW
    .title = "OSU " RMA_NAME(RMA_OP) " Bandwidth Test",
    .columns = "# Size      Bandwidth (MB/s)",
    .iters = 100, .iters_large = 20,
    .skip = 10, .skip_large = 2,
    .window = 64,
#elif defined(RMA_FENCE)
    .title = "OSU " RMA_NAME(RMA_OP) " + MPI_Win_fence Latency Test",
    .columns = "# Size          Latency (us)",
    .iters = 1000, .iters_large = 100,
    .skip = 20, .skip_large = 5,
#else
    .title = "OSU " RMA_NAME(RMA_OP) " Latency Test",
    .columns = "# Size          Latency (us)",
    .iters = 10000, .iters_large = 1000,
    .skip = 100, .skip_large = 10,
#endif
    .ranks = BENCH_RANKS_TWO,
    .min_size = 1, .max_size = 4 * BENCH_MIB,
};

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    MPI_Win win;
    char *window = bench_win_allocate(o.max_size, &win);
    char *buf = bench_alloc(o.max_size);
    int batch = desc.window ? o.window : 1;

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        double t = bench_rma(&o, win, window, buf, RMA_OP, RMA_SYNC, size, batch);
        double per_iter = t / bench_iters(&o, size);
        if (o.rank == 0)
            bench_print(size, desc.window ? (double)size * batch / per_iter / 1e6 : per_iter * 1e6);
    }
    MPI_Win_free(&win);
    bench_finalize();
    return 0;
}
