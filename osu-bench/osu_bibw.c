/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_bibw: both ranks send a window to each other at the same time; bandwidth counts both
 * directions, in MB/s (10^6 bytes), as OSU. */
#include "util.h"

#include <mpi.h>
#include <stdlib.h>

static const struct bench_desc desc = {
    .title = "OSU MPI Bi-Directional Bandwidth Test",
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
    /* One send and one receive buffer shared by the window, as in osu_bw. */
    char *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(o.max_size);
    MPI_Request *reqs = malloc(sizeof *reqs * 2 * (size_t)o.window);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        unsigned in_seed = bench_seed(peer, o.rank, size);
        bench_fill(sbuf, size, bench_seed(o.rank, peer, size));
        double t0 = 0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < skip + iters; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (i == skip + iters - 1)
                bench_poison(rbuf, size, in_seed);
            /* Receives first, so the peer's sends find them posted. */
            for (int w = 0; w < o.window; w++)
                MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &reqs[w]);
            for (int w = 0; w < o.window; w++)
                MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD,
                          &reqs[o.window + w]);
            MPI_Waitall(2 * o.window, reqs, MPI_STATUSES_IGNORE);
        }
        double t = MPI_Wtime() - t0;
        bench_check(rbuf, size, in_seed, "received message", size);
        if (o.rank == 0)
            bench_print(size, (double)size / 1e6 * iters * o.window * 2 / t);
    }
    free(reqs);
    bench_finalize();
    return 0;
}
