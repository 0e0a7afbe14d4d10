/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_bw: rank 0 streams windows of non-blocking sends to rank 1, which answers each window with
 * a short ack; bandwidth in MB/s (10^6 bytes), as OSU. */
#include "util.h"

#include <mpi.h>
#include <stdlib.h>

static const struct bench_desc desc = {
    .title = "OSU MPI Bandwidth Test",
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
    /* Like OSU, all messages of a window use the same buffer: the data is identical, and a
     * window of distinct 4 MiB buffers would measure the memory system rather than the channel. */
    char *buf = bench_alloc(o.max_size);
    char ack[4] = {0};
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)o.window);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        unsigned seed = bench_seed(0, 1, size);
        if (o.rank == 0)
            bench_fill(buf, size, seed);
        double t0 = 0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < skip + iters; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (o.rank == 0) {
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
        double t = MPI_Wtime() - t0;
        if (o.rank == 1)
            bench_check(buf, size, seed, "received message", size);
        if (o.rank == 0)
            bench_print(size, (double)size / 1e6 * iters * o.window / t);
    }
    free(reqs);
    bench_finalize();
    return 0;
}
