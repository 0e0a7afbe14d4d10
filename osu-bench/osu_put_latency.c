/* osu_put_latency: rank 0 puts into rank 1's window and waits for it with MPI_Win_flush, one put
 * at a time, inside one passive-target epoch (MPI_Win_lock shared) per size; latency = time per
 * put + flush, in µs. Rank 1 only checks its window afterwards. */
#include "util.h"

static const struct bench_desc desc = {
    .title = "OSU MPI_Put Latency Test",
    .columns = "# Size          Latency (us)",
    .ranks = BENCH_RANKS_TWO,
    .min_size = 1, .max_size = 4 * BENCH_MIB,
    .iters = 10000, .iters_large = 1000,
    .skip = 100, .skip_large = 10,
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
                MPI_Put(sbuf, (int)size, MPI_CHAR, 1, 0, (int)size, MPI_CHAR, win);
                MPI_Win_flush(1, win);
            }
            double t = MPI_Wtime() - t0;
            MPI_Win_unlock(1, win);
            bench_print(size, t * 1e6 / iters);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (o.rank == 1)
            bench_win_check(win, window, size, seed, "window after puts", size);
    }
    MPI_Win_free(&win);
    bench_finalize();
    return 0;
}
