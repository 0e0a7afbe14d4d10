/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_alltoall: MPI_Alltoall, SIZE bytes from every rank to every rank; the average latency in
 * µs over ranks. Barriers between iterations are not timed. */
#include "util.h"

#include <mpi.h>
#include <stdio.h>

static const struct bench_desc desc = {
    .title = "OSU MPI All-to-All Personalized Exchange Latency Test",
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
    size_t n = (size_t)o.nprocs;
    char *sbuf = bench_alloc(o.max_size * n), *rbuf = bench_alloc(o.max_size * n);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        /* Block p goes to rank p and carries data only the pair (me, p) would have. */
        for (int p = 0; p < o.nprocs; p++)
            bench_fill(sbuf + p * size, size, bench_seed(o.rank, p, size));
        double total = 0, lat, sum = 0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < skip + iters; i++) {
            if (i == skip + iters - 1)
                for (int p = 0; p < o.nprocs; p++)
                    bench_poison(rbuf + p * size, size, bench_seed(p, o.rank, size));
            double t0 = MPI_Wtime();
            MPI_Alltoall(sbuf, (int)size, MPI_CHAR, rbuf, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            if (i >= skip)
                total += MPI_Wtime() - t0;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        for (int p = 0; p < o.nprocs; p++) {
            char what[48];
            snprintf(what, sizeof what, "block from rank %d", p);
            bench_check(rbuf + p * size, size, bench_seed(p, o.rank, size), what, size);
        }
        lat = total * 1e6 / iters;
        MPI_Reduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (o.rank == 0)
            bench_print(size, sum / o.nprocs);
    }
    bench_finalize();
    return 0;
}
