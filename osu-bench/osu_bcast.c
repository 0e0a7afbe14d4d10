/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_bcast: MPI_Bcast from rank 0 to all ranks; the average latency in µs over ranks. Barriers
 * between iterations are not timed. */
#include "util.h"

#include <mpi.h>

static const struct bench_desc desc = {
    .title = "OSU MPI Broadcast Latency Test",
    .columns = "# Size       Avg Latency(us)",
    .ranks = BENCH_RANKS_ANY,
    .min_size = 1, .max_size = BENCH_MIB,
    .iters = 1000, .iters_large = 100,
    .skip = 200, .skip_large = 10,
};

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    char *buf = bench_alloc(o.max_size);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        unsigned seed = bench_seed(0, 0, size); /* same data for every receiver */
        if (o.rank == 0)
            bench_fill(buf, size, seed);
        double total = 0, lat, sum = 0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < skip + iters; i++) {
            if (i == skip + iters - 1 && o.rank != 0)
                bench_poison(buf, size, seed);
            double t0 = MPI_Wtime();
            MPI_Bcast(buf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
            if (i >= skip)
                total += MPI_Wtime() - t0;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        bench_check(buf, size, seed, o.rank ? "broadcast data" : "root's own buffer", size);
        lat = total * 1e6 / iters;
        MPI_Reduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (o.rank == 0)
            bench_print(size, sum / o.nprocs);
    }
    bench_finalize();
    return 0;
}
