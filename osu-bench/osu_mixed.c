/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_mixed: the thesis' mixed MPI-1/MPI-2 synthetic benchmark (its Figure 4.3: ch3:hybrid took
 * 1.18x less time than ch3:sctp), on 2 ranks, both directions at once. Per iteration, in one
 * fence epoch, each rank
 * - posts receives for three messages of size/4, size/2 and size bytes from the other rank and
 *   Isends it the same three;
 * - puts size bytes into the first half of the other rank's window and gets size bytes from the
 *   second half;
 * - completes the receives one at a time with MPI_Waitany and the sends with MPI_Waitall;
 * then both call MPI_Win_fence. Reported: µs per iteration (lower is better).
 * The data of all three kinds is checked after the last iteration of each size. */
#include "util.h"

#define MESSAGES 3

static const struct bench_desc desc = {
    .title = "OSU MPI-1/MPI-2 Mixed Test",
    .columns = "# Size          Latency (us)",
    .ranks = BENCH_RANKS_TWO,
    .min_size = 4, .max_size = 1 * BENCH_MIB,
    .iters = 1000, .iters_large = 50,
    .skip = 20, .skip_large = 5,
};

/* Seeds of the three kinds of data from one rank to the other, distinct for equal sizes. */
static unsigned message_seed(int from, int to, size_t len) { return bench_seed(from, to, len); }
static unsigned put_seed(int from, int to, size_t size) { return bench_seed(from, to, size) ^ 0x5a5a5a5au; }
static unsigned get_seed(int owner, int reader, size_t size) { return bench_seed(owner, reader, size) ^ 0xa5a5a5a5u; }

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    int peer = 1 - o.rank;
    MPI_Win win;
    char *window = bench_win_allocate(2 * o.max_size, &win); /* [put target | get source] */
    char *get_source = window + o.max_size;
    char *sbuf[MESSAGES], *rbuf[MESSAGES];
    for (int k = 0; k < MESSAGES; k++) {
        sbuf[k] = bench_alloc(o.max_size);
        rbuf[k] = bench_alloc(o.max_size);
    }
    char *put_buf = bench_alloc(o.max_size), *get_buf = bench_alloc(o.max_size);

    for (size_t size = bench_first(&o); size <= o.max_size; size = bench_next(size)) {
        int iters = bench_iters(&o, size), skip = bench_skip(&o, size);
        size_t len[MESSAGES] = {size / 4, size / 2, size};
        for (int k = 0; k < MESSAGES; k++)
            bench_fill(sbuf[k], len[k], message_seed(o.rank, peer, len[k]));
        bench_fill(put_buf, size, put_seed(o.rank, peer, size));
        bench_win_poison(win, window, size, put_seed(peer, o.rank, size));
        bench_win_fill(win, get_source, size, get_seed(o.rank, peer, size));
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        double t0 = 0;
        for (int i = 0; i < skip + iters; i++) {
            MPI_Request recv[MESSAGES], send[MESSAGES];
            if (i == skip)
                t0 = MPI_Wtime();
            if (i == skip + iters - 1) { /* the last iteration must bring its own data */
                for (int k = 0; k < MESSAGES; k++)
                    bench_poison(rbuf[k], len[k], message_seed(peer, o.rank, len[k]));
                bench_poison(get_buf, size, get_seed(peer, o.rank, size));
            }
            for (int k = 0; k < MESSAGES; k++)
                MPI_Irecv(rbuf[k], (int)len[k], MPI_CHAR, peer, k + 1, MPI_COMM_WORLD, &recv[k]);
            for (int k = 0; k < MESSAGES; k++)
                MPI_Isend(sbuf[k], (int)len[k], MPI_CHAR, peer, k + 1, MPI_COMM_WORLD, &send[k]);
            MPI_Put(put_buf, (int)size, MPI_CHAR, peer, 0, (int)size, MPI_CHAR, win);
            MPI_Get(get_buf, (int)size, MPI_CHAR, peer, (MPI_Aint)o.max_size, (int)size, MPI_CHAR, win);
            for (int k = 0; k < MESSAGES; k++) {
                int done;
                MPI_Waitany(MESSAGES, recv, &done, MPI_STATUS_IGNORE);
            }
            MPI_Waitall(MESSAGES, send, MPI_STATUSES_IGNORE);
            MPI_Win_fence(0, win);
        }
        double t = MPI_Wtime() - t0;
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        for (int k = 0; k < MESSAGES; k++)
            bench_check(rbuf[k], len[k], message_seed(peer, o.rank, len[k]), "received message", size);
        bench_check(get_buf, size, get_seed(peer, o.rank, size), "data got", size);
        MPI_Barrier(MPI_COMM_WORLD);
        bench_win_check(win, window, size, put_seed(peer, o.rank, size), "window after puts", size);
        if (o.rank == 0)
            bench_print(size, t * 1e6 / iters);
    }
    MPI_Win_free(&win);
    bench_finalize();
    return 0;
}
