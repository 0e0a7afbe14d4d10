/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_latency: ping-pong between two ranks; one-way latency = round trip / 2, in µs. */
#include "util.h"

#include <mpi.h>

static const struct bench_desc desc = {
    .title = "OSU MPI Latency Test",
    .columns = "# Size          Latency (us)",
    .ranks = BENCH_RANKS_TWO,
    .min_size = 0, .max_size = 4 * BENCH_MIB,
    .iters = 10000, .iters_large = 1000,
    .skip = 100, .skip_large = 10,
};

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    int peer = 1 - o.rank;
    char *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(o.max_size);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        unsigned in_seed = bench_seed(peer, o.rank, size);
        bench_fill(sbuf, size, bench_seed(o.rank, peer, size));
        double t0 = 0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < skip + iters; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (i == skip + iters - 1) /* the last message must bring its own data */
                bench_poison(rbuf, size, in_seed);
            if (o.rank == 0) {
                MPI_Send(sbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        bench_check(rbuf, size, in_seed, "received message", size);
        if (o.rank == 0)
            bench_print(size, t * 1e6 / (2.0 * iters));
    }
    bench_finalize();
    return 0;
}
