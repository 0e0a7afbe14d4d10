/* osu_get_bw: rank 0 issues a window of gets from rank 1's window, then MPI_Win_flush, inside one
 * passive-target epoch (MPI_Win_lock shared) per size; bandwidth in MB/s (10^6 bytes), as OSU.
 * The gets of a window all read the same bytes into one buffer (as OSU's shared buffer). */
#include "util.h"

static const struct bench_desc desc = {
    .title = "OSU MPI_Get Bandwidth Test",
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
    char *rbuf = bench_alloc(o.max_size);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        unsigned seed = bench_seed(1, 0, size);
        if (o.rank == 1)
            bench_win_fill(win, window, size, seed);
        MPI_Barrier(MPI_COMM_WORLD);
        if (o.rank == 0) {
            double t0 = 0;
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            for (int i = 0; i < skip + iters; i++) {
                if (i == skip)
                    t0 = MPI_Wtime();
                if (i == skip + iters - 1) /* the last window must bring its own data */
                    bench_poison(rbuf, size, seed);
                for (int j = 0; j < o.window; j++)
                    MPI_Get(rbuf, (int)size, MPI_CHAR, 1, 0, (int)size, MPI_CHAR, win);
                MPI_Win_flush(1, win);
            }
            double t = MPI_Wtime() - t0;
            MPI_Win_unlock(1, win);
            bench_check(rbuf, size, seed, "data got", size);
            bench_print(size, (double)size * o.window * iters / t / 1e6);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    bench_finalize();
    return 0;
}
