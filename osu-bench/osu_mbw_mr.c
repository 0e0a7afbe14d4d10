/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_mbw_mr: n/2 pairs stream windows at the same time (rank i sends to rank i + n/2, which acks
 * each window, as in osu_bw). Aggregate bandwidth in MB/s (10^6 bytes) and messages per second,
 * over the slowest sender's time, so pairs that do not overlap are not counted as parallel. */
#include "util.h"

#include <mpi.h>
#include <stdlib.h>

static const struct bench_desc desc = {
    .title = "OSU MPI Multiple Bandwidth / Message Rate Test",
    .columns = "# Size                  MB/s        Messages/s",
    .ranks = BENCH_RANKS_EVEN,
    .min_size = 1, .max_size = 4 * BENCH_MIB,
    .iters = 100, .iters_large = 20,
    .skip = 10, .skip_large = 2,
    .window = 64,
};

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    int pairs = o.nprocs / 2;
    int sender = o.rank < pairs;
    int peer = sender ? o.rank + pairs : o.rank - pairs;
    char *buf = bench_alloc(o.max_size); /* shared by the window, as in osu_bw */
    char ack[4] = {0};
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)o.window);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        unsigned seed = sender ? bench_seed(o.rank, peer, size) : bench_seed(peer, o.rank, size);
        if (sender)
            bench_fill(buf, size, seed);
        double t0 = 0, t = 0, tmax = 0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < skip + iters; i++) {
            if (i == skip) {
                MPI_Barrier(MPI_COMM_WORLD); /* all pairs start the timed part together */
                t0 = MPI_Wtime();
            }
            if (sender) {
                for (int w = 0; w < o.window; w++)
                    MPI_Isend(buf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(o.window, reqs, MPI_STATUSES_IGNORE);
                MPI_Recv(ack, 4, MPI_CHAR, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                if (i == skip + iters - 1)
                    bench_poison(buf, size, seed);
                for (int w = 0; w < o.window; w++)
                    MPI_Irecv(buf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(o.window, reqs, MPI_STATUSES_IGNORE);
                MPI_Send(ack, 4, MPI_CHAR, peer, 101, MPI_COMM_WORLD);
            }
        }
        if (sender)
            t = MPI_Wtime() - t0;
        else
            bench_check(buf, size, seed, "received message", size);
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (o.rank == 0) {
            double msgs = (double)pairs * iters * o.window;
            bench_print2(size, msgs * (double)size / 1e6 / tmax, msgs / tmax);
        }
    }
    free(reqs);
    bench_finalize();
    return 0;
}
