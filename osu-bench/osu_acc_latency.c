/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_acc_latency: rank 0 adds into rank 1's window with MPI_Accumulate (MPI_INT, MPI_SUM) and
 * waits for it with MPI_Win_flush, one at a time, inside one passive-target epoch per size;
 * latency = time per accumulate + flush, in µs. Sizes are bytes, whole ints (from 4 B). The
 * check: every int of the target is the number of accumulates of 1 it received. */
#include "util.h"

#include <string.h>

static const struct bench_desc desc = {
    .title = "OSU MPI_Accumulate latency Test",
    .columns = "# Size          Latency (us)",
    .ranks = BENCH_RANKS_TWO,
    .min_size = 4, .max_size = 4 * BENCH_MIB,
    .iters = 10000, .iters_large = 1000,
    .skip = 100, .skip_large = 10,
};

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    MPI_Win win;
    int *window = bench_win_allocate(o.max_size, &win);
    int *ones = bench_alloc(o.max_size);
    for (size_t k = 0; k < o.max_size / sizeof(int); k++)
        ones[k] = 1;

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        int count = (int)(size / sizeof(int));
        if (count == 0)
            continue;
        if (o.rank == 1) {
            bench_win_begin(win);
            memset(window, 0, size);
            bench_win_end(win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (o.rank == 0) {
            double t0 = 0;
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            for (int i = 0; i < skip + iters; i++) {
                if (i == skip)
                    t0 = MPI_Wtime();
                MPI_Accumulate(ones, count, MPI_INT, 1, 0, count, MPI_INT, MPI_SUM, win);
                MPI_Win_flush(1, win);
            }
            double t = MPI_Wtime() - t0;
            MPI_Win_unlock(1, win);
            bench_print(size, t * 1e6 / iters);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (o.rank == 1) {
            bench_win_begin(win);
            for (int k = 0; k < count; k++)
                if (window[k] != skip + iters)
                    bench_fail(size, "int %d of the window is %d after %d accumulates of 1", k, window[k], skip + iters);
            bench_win_end(win);
        }
    }
    MPI_Win_free(&win);
    bench_finalize();
    return 0;
}
