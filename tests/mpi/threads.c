/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * threads: MPI_THREAD_MULTIPLE with several threads per process communicating at once.
 *
 * A channel's progress engine, send queues and receive reassembly are entered by several
 * threads together here (MPICH's global lock is released while a thread waits, so another
 * thread's traffic makes progress meanwhile).  Each thread owns a duplicate communicator on
 * which it streams messages of mixed sizes (eager and rendezvous) to the same thread of its
 * partner process and receives the partner's stream with MPI_ANY_TAG (order checked), using
 * blocking receives, Irecv/Wait or Mprobe/Mrecv; it also exchanges tagged messages on one
 * communicator shared by all threads (tags keep them apart) and runs an Allreduce on its own
 * communicator now and then.  All data is verified.
 *
 * Usage: mpiexec -n N threads [threads_per_process] [iterations]   (N even; default 4, 400)
 */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 16
#define MAXSZ 200000

static int rank, nprocs, partner, nthreads = 4, iters = 400;
static MPI_Comm own[MAXT], shared;

static void fail(int line, int th, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "threads: rank %d thread %d: FAIL (line %d): ", rank, th, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}
#define FAIL(...) fail(__LINE__, th, __VA_ARGS__)
#define CHK(call)                                                                  \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != MPI_SUCCESS) {                                                  \
            char s_[MPI_MAX_ERROR_STRING];                                         \
            int l_;                                                                \
            MPI_Error_string(rc_, s_, &l_);                                        \
            FAIL("%s returned error: %s", #call, s_);                              \
        }                                                                          \
    } while (0)

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
/* Message i of thread th on process src: size, tag and contents follow from these. */
static int msg_size(int src, int th, int i)
{
    static const int sz[] = {0, 8, 1000, 4096, 70000, MAXSZ};
    return sz[mix(((uint64_t)src << 40) ^ ((uint64_t)th << 32) ^ (uint64_t)i) % 6];
}
static int msg_tag(int src, int th, int i) { return (int)(mix((uint64_t)(src * 131 + th * 7919 + i)) % 30000); }
static unsigned char byte_at(int src, int th, int i, int j)
{
    return (unsigned char)(src * 31 + th * 17 + i * 5 + j * 3 + (j >> 10));
}

static void *worker(void *arg)
{
    int th = (int)(intptr_t)arg;
    unsigned char *sbuf = malloc((size_t)iters * MAXSZ / 4 + MAXSZ), *rbuf = malloc(MAXSZ);
    unsigned char *s2 = malloc(MAXSZ), *r2 = malloc(MAXSZ);
    MPI_Request *sreq = malloc(sizeof(MPI_Request) * (size_t)iters);
    size_t cap = (size_t)iters * MAXSZ / 4 + MAXSZ, off = 0;
    int nsreq = 0;
    MPI_Comm c = own[th];

    for (int i = 0; i < iters; i++) {
        /* 1. my stream to the partner's thread th: Isend (buffer kept until the end) */
        int n = msg_size(rank, th, i);
        if (off + (size_t)n > cap) { /* recycle the buffer space once the sends completed */
            CHK(MPI_Waitall(nsreq, sreq, MPI_STATUSES_IGNORE));
            nsreq = 0;
            off = 0;
        }
        for (int j = 0; j < n; j++)
            sbuf[off + (size_t)j] = byte_at(rank, th, i, j);
        CHK(MPI_Isend(sbuf + off, n, MPI_BYTE, partner, msg_tag(rank, th, i), c, &sreq[nsreq++]));
        off += (size_t)n;

        /* 2. the partner's stream, with MPI_ANY_TAG: must come in order */
        MPI_Status st;
        int how = (i + th) % 3;
        if (how == 0) {
            CHK(MPI_Recv(rbuf, MAXSZ, MPI_BYTE, partner, MPI_ANY_TAG, c, &st));
        } else if (how == 1) {
            MPI_Request r;
            CHK(MPI_Irecv(rbuf, MAXSZ, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &r));
            CHK(MPI_Wait(&r, &st));
        } else {
            MPI_Message m;
            CHK(MPI_Mprobe(partner, MPI_ANY_TAG, c, &m, &st));
            CHK(MPI_Mrecv(rbuf, MAXSZ, MPI_BYTE, &m, &st));
        }
        int cnt, want = msg_size(partner, th, i);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        if (st.MPI_TAG != msg_tag(partner, th, i) || cnt != want || st.MPI_SOURCE != partner)
            FAIL("stream message %d: tag %d size %d source %d, expected tag %d size %d source %d",
                 i, st.MPI_TAG, cnt, st.MPI_SOURCE, msg_tag(partner, th, i), want, partner);
        for (int j = 0; j < cnt; j++)
            if (rbuf[j] != byte_at(partner, th, i, j))
                FAIL("stream message %d (%d bytes): wrong data at byte %d", i, cnt, j);

        /* 3. a tagged exchange on the communicator all threads share */
        int n2 = msg_size(rank, th + MAXT, i) / 4;
        for (int j = 0; j < n2; j++)
            s2[j] = byte_at(rank, th + MAXT, i, j);
        int tag = th * 1000 + i % 1000;
        CHK(MPI_Sendrecv(s2, n2, MPI_BYTE, partner, tag, r2, MAXSZ, MPI_BYTE, partner, tag, shared,
                         &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        if (cnt != msg_size(partner, th + MAXT, i) / 4)
            FAIL("shared-communicator exchange %d: %d bytes, expected %d", i, cnt,
                 msg_size(partner, th + MAXT, i) / 4);
        for (int j = 0; j < cnt; j++)
            if (r2[j] != byte_at(partner, th + MAXT, i, j))
                FAIL("shared-communicator exchange %d: wrong data at byte %d", i, j);

        /* 4. now and then a collective on my own communicator */
        if (i % 25 == 0) {
            int x = rank * 100 + th, sum;
            CHK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
            if (sum != 100 * nprocs * (nprocs - 1) / 2 + nprocs * th)
                FAIL("Allreduce on the thread's communicator: %d", sum);
        }
    }
    CHK(MPI_Waitall(nsreq, sreq, MPI_STATUSES_IGNORE));
    free(sbuf);
    free(rbuf);
    free(s2);
    free(r2);
    free(sreq);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, th = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided != MPI_THREAD_MULTIPLE)
        FAIL("MPI_Init_thread provided level %d, not MPI_THREAD_MULTIPLE (%d)", provided,
             MPI_THREAD_MULTIPLE);
    if (nprocs % 2)
        FAIL("needs an even number of processes");
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        iters = atoi(argv[2]);
    if (nthreads < 1 || nthreads > MAXT || iters < 1)
        FAIL("bad arguments");
    partner = rank ^ 1;
    /* Communicator creation is collective: done here in one order, not in the threads. */
    for (int t = 0; t < nthreads; t++)
        CHK(MPI_Comm_dup(MPI_COMM_WORLD, &own[t]));
    CHK(MPI_Comm_dup(MPI_COMM_WORLD, &shared));

    double t0 = MPI_Wtime();
    pthread_t tid[MAXT];
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t))
            FAIL("pthread_create failed");
    for (int t = 0; t < nthreads; t++)
        pthread_join(tid[t], NULL);
    CHK(MPI_Barrier(MPI_COMM_WORLD));

    for (int t = 0; t < nthreads; t++)
        MPI_Comm_free(&own[t]);
    MPI_Comm_free(&shared);
    if (rank == 0)
        printf("threads: OK (%d processes x %d threads x %d iterations, %.1f s)\n", nprocs,
               nthreads, iters, MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
