/* osu_put_bw: rank 0 issues a window of puts into rank 1's window, then MPI_Win_flush, inside one
 * passive-target epoch (MPI_Win_lock shared) per size; bandwidth in MB/s (10^6 bytes), as OSU.
 * The puts of a window all write the same bytes at displacement 0, so one buffer of the largest
 * size serves every window (as OSU's shared send buffer). */
#include "util.h"

static const struct bench_desc desc = {
    .title = "OSU MPI_Put Bandwidth Test",
    .columns = "# Size      Bandwidth (MB/s)",
    .ranks = BENCH_RANKS_TWO,
    .min_size = 1, .max_size = 4 * BENCH_MIB,
    .iters = 100, .iters_large = 20,
    .skip = 10, .skip_large = 2,
    .window = 64,
};

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    MPI_Win win;
    char *window = bench_win_allocate(o.max_size, &win);
    char *sbuf = bench_alloc(o.max_size);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        unsigned seed = bench_seed(0, 1, size);
        if (o.rank == 0)
            bench_fill(sbuf, size, seed);
        else
            bench_win_poison(win, window, size, seed);
        MPI_Barrier(MPI_COMM_WORLD);
        if (o.rank == 0) {
            double t0 = 0;
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            for (int i = 0; i < skip + iters; i++) {
                if (i == skip)
                    t0 = MPI_Wtime();
                for (int j = 0; j < o.window; j++)
                    MPI_Put(sbuf, (int)size, MPI_CHAR, 1, 0, (int)size, MPI_CHAR, win);
                MPI_Win_flush(1, win);
            }
            double t = MPI_Wtime() - t0;
            MPI_Win_unlock(1, win);
            bench_print(size, (double)size * o.window * iters / t / 1e6);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (o.rank == 1)
            bench_win_check(win, window, size, seed, "window after puts", size);
    }
    MPI_Win_free(&win);
    bench_finalize();
    return 0;
}
