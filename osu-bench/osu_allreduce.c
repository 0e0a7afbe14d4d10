/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_allreduce: MPI_Allreduce (MPI_SUM of floats, as OSU) over all ranks; the average latency
 * in µs over ranks. Barriers between iterations are not timed. */
#include "util.h"

#include <mpi.h>

static const struct bench_desc desc = {
    .title = "OSU MPI Allreduce Latency Test",
    .columns = "# Size       Avg Latency(us)",
    .ranks = BENCH_RANKS_ANY,
    .min_size = sizeof(float), .max_size = BENCH_MIB,
    .iters = 1000, .iters_large = 100,
    .skip = 200, .skip_large = 10,
};

/* Small integers, so the sum over ranks is exact in float. */
static float value(int rank, size_t i)
{
    return (float)((rank + 1) * (int)(i % 13 + 1));
}

static void check(const float *r, size_t count, int nprocs, size_t size)
{
    size_t at[2] = {0, count - 1};
    for (int k = 0; k < 2; k++) {
        float want = (float)(nprocs * (nprocs + 1) / 2 * (int)(at[k] % 13 + 1));
        if (r[at[k]] != want)
            bench_fail(size, "sum element %zu of %zu is %g, expected %g", at[k], count,
                       (double)r[at[k]], (double)want);
    }
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    float *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(o.max_size);
    for (size_t i = 0; i < o.max_size / sizeof(float); i++)
        sbuf[i] = value(o.rank, i);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        size_t count = size / sizeof(float);
        if (count == 0)
            continue; /* no whole float */
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        double total = 0, lat, sum = 0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < skip + iters; i++) {
            if (i == skip + iters - 1)
                rbuf[0] = rbuf[count - 1] = -1.0f;
            double t0 = MPI_Wtime();
            MPI_Allreduce(sbuf, rbuf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            if (i >= skip)
                total += MPI_Wtime() - t0;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        check(rbuf, count, o.nprocs, size);
        lat = total * 1e6 / iters;
        MPI_Reduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (o.rank == 0)
            bench_print(size, sum / o.nprocs);
    }
    bench_finalize();
    return 0;
}
