/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_put_bibw: both ranks put a window of puts into each other's window at once, synchronised
 * by post/start/complete/wait (one PSCW epoch per window, as OSU); bandwidth of both directions
 * together in MB/s (10^6 bytes). */
#include "util.h"

static const struct bench_desc desc = {
    .title = "OSU MPI_Put Bi-directional Bandwidth Test",
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
    int peer = 1 - o.rank;
    MPI_Win win;
    char *window = bench_win_allocate(o.max_size, &win);
    char *sbuf = bench_alloc(o.max_size);
    MPI_Group world, other;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &other);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        unsigned in_seed = bench_seed(peer, o.rank, size);
        bench_fill(sbuf, size, bench_seed(o.rank, peer, size));
        bench_win_poison(win, window, size, in_seed);
        double t0 = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < skip + iters; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            MPI_Win_post(other, 0, win);
            MPI_Win_start(other, 0, win);
            for (int j = 0; j < o.window; j++)
                MPI_Put(sbuf, (int)size, MPI_CHAR, peer, 0, (int)size, MPI_CHAR, win);
            MPI_Win_complete(win);
            MPI_Win_wait(win);
        }
        double t = MPI_Wtime() - t0;
        bench_win_check(win, window, size, in_seed, "window after puts", size);
        if (o.rank == 0)
            bench_print(size, 2.0 * size * o.window * iters / t / 1e6);
    }
    MPI_Group_free(&other);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    bench_finalize();
    return 0;
}
