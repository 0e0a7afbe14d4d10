/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * large: contiguous messages from 0 B up to 256 MiB (optionally larger), every byte verified.
 *
 * Large messages take the rendezvous path and, in an SCTP channel, are fragmented and
 * reassembled; the sizes straddle the eager limit and odd sizes catch off-by-one placement.
 * Each size is sent with the receive pre-posted and with the receiver late (the request-to-send
 * waits as unexpected), in both directions at once (Sendrecv), and synchronously (Ssend).
 * A guard area after each receive buffer must stay untouched.  Zero-byte messages get their own
 * checks: order under MPI_ANY_TAG, NULL buffers, Ssend and Isend/Irecv.
 *
 * Usage: mpiexec -n 2 large [max_MiB]     (default 256; e.g. 3072 also sends 512 MiB .. 3 GiB,
 *                                          above 2 GiB with a 1 MiB contiguous datatype)
 */
#define _DEFAULT_SOURCE /* usleep */
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB ((size_t)1 << 20)
#define GUARD 4096

static int rank, nprocs;

#define TEST_NAME "large"
#include "check.h"

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Pattern: 64-bit word w holds seed*golden + w*odd, so a shifted or repeated block is caught. */
static inline uint64_t word(uint64_t seed, size_t w)
{
    return mix(seed) ^ ((uint64_t)w * 0xD6E8FEB86659FD93ull);
}

static void fill(uint8_t *b, size_t n, uint64_t seed)
{
    size_t nw = n / 8;
    for (size_t w = 0; w < nw; w++) {
        uint64_t v = word(seed, w);
        memcpy(b + 8 * w, &v, 8);
    }
    uint64_t v = word(seed, nw);
    memcpy(b + 8 * nw, &v, n % 8);
}

static void verify(const char *what, const uint8_t *b, size_t n, uint64_t seed)
{
    size_t nw = n / 8;
    for (size_t w = 0; w < nw; w++) {
        uint64_t v = word(seed, w), got;
        memcpy(&got, b + 8 * w, 8);
        if (got != v) {
            for (size_t j = 8 * w; j < 8 * w + 8; j++)
                if (b[j] != ((const uint8_t *)&v)[j - 8 * w])
                    FAIL("%s: %zu bytes: wrong data at byte %zu (0x%02x, expected 0x%02x)", what,
                         n, j, b[j], ((const uint8_t *)&v)[j - 8 * w]);
        }
    }
    uint64_t v = word(seed, nw);
    if (memcmp(b + 8 * nw, &v, n % 8) != 0)
        FAIL("%s: %zu bytes: wrong data in the last %zu bytes", what, n, n % 8);
    for (size_t j = n; j < n + GUARD; j++)
        if (b[j] != 0xA5)
            FAIL("%s: %zu bytes: byte %zu past the end of the message was overwritten", what, n,
                 j - n);
}

/* Count and datatype for n bytes: MPI_BYTE while the count fits an int, else 1 MiB blocks. */
static MPI_Datatype mib_type;
static void count_of(size_t n, int *count, MPI_Datatype *type)
{
    if (n <= (size_t)INT_MAX) {
        *count = (int)n;
        *type = MPI_BYTE;
    } else {
        if (n % MiB)
            FAIL("size %zu above 2 GiB must be a multiple of 1 MiB", n);
        *count = (int)(n / MiB);
        *type = mib_type;
    }
}

static void check_count(const char *what, MPI_Status *st, size_t n, MPI_Datatype type)
{
    int count;
    CHK(MPI_Get_count(st, type, &count));
    size_t got = type == MPI_BYTE ? (size_t)count : (size_t)count * MiB;
    if (count == MPI_UNDEFINED || got != n)
        FAIL("%s: received %zu bytes (count %d), expected %zu", what, got, count, n);
}

static uint8_t *sbuf, *rbuf;

/* One size, four ways. */
static void one_size(size_t n, int idx)
{
    int count;
    MPI_Datatype type;
    MPI_Status st;
    char what[96];
    count_of(n, &count, &type);
    int peer = 1 - rank;
    double t0 = MPI_Wtime();

    /* 1: 0 -> 1, receive posted early */
    snprintf(what, sizeof what, "0->1 posted receive, %zu bytes", n);
    if (rank == 0) {
        fill(sbuf, n, 1000 + idx);
        CHK(MPI_Send(sbuf, count, type, 1, idx, MPI_COMM_WORLD));
    } else {
        memset(rbuf, 0xA5, n + GUARD);
        CHK(MPI_Recv(rbuf, count, type, 0, idx, MPI_COMM_WORLD, &st));
        check_count(what, &st, n, type);
        verify(what, rbuf, n, 1000 + idx);
    }

    /* 2: 1 -> 0, receiver late, the message (or its request-to-send) waits as unexpected */
    snprintf(what, sizeof what, "1->0 late receive, %zu bytes", n);
    if (rank == 1) {
        fill(sbuf, n, 2000 + idx);
        CHK(MPI_Send(sbuf, count, type, 0, idx, MPI_COMM_WORLD));
    } else {
        memset(rbuf, 0xA5, n + GUARD);
        usleep(50000);
        CHK(MPI_Recv(rbuf, count, type, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        check_count(what, &st, n, type);
        verify(what, rbuf, n, 2000 + idx);
    }

    /* 3: both directions at once */
    snprintf(what, sizeof what, "Sendrecv exchange, %zu bytes", n);
    fill(sbuf, n, 3000 + 10 * idx + rank);
    memset(rbuf, 0xA5, n + GUARD);
    CHK(MPI_Sendrecv(sbuf, count, type, peer, idx, rbuf, count, type, peer, idx, MPI_COMM_WORLD,
                     &st));
    check_count(what, &st, n, type);
    verify(what, rbuf, n, 3000 + 10 * idx + peer);

    /* 4: synchronous send into a larger posted receive (count smaller than the buffer) */
    snprintf(what, sizeof what, "Ssend 0->1 into a larger Irecv, %zu bytes", n);
    if (rank == 0) {
        fill(sbuf, n, 4000 + idx);
        CHK(MPI_Ssend(sbuf, count, type, 1, idx, MPI_COMM_WORLD));
    } else {
        MPI_Request rq;
        memset(rbuf, 0xA5, n + GUARD);
        /* room for one more unit than sent; the guard then starts right after the data */
        CHK(MPI_Irecv(rbuf, count + (type == MPI_BYTE && count < INT_MAX ? 1 : 0), type, 0, idx,
                      MPI_COMM_WORLD, &rq));
        CHK(MPI_Wait(&rq, &st));
        check_count(what, &st, n, type);
        verify(what, rbuf, n, 4000 + idx);
    }
    double dt = MPI_Wtime() - t0;
    if (rank == 0 && n >= MiB)
        printf("large: %10zu bytes ok (4 transfers + 1 exchange, %.2f s)\n", n, dt);
}

static void zero_bytes(void)
{
    enum { N = 1000 };
    MPI_Status st;
    int count;
    /* Many zero-byte messages: order, tags and counts under ANY_TAG, NULL buffers. */
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            CHK(MPI_Send(NULL, 0, (i % 2) ? MPI_BYTE : MPI_DOUBLE, 1, i % 977, MPI_COMM_WORLD));
        CHK(MPI_Ssend(NULL, 0, MPI_INT, 1, 5000, MPI_COMM_WORLD));
    } else if (rank == 1) {
        for (int i = 0; i < N; i++) {
            CHK(MPI_Recv(NULL, 0, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHK(MPI_Get_count(&st, MPI_BYTE, &count));
            if (st.MPI_TAG != i % 977 || count != 0)
                FAIL("zero-byte message %d: tag %d count %d, expected tag %d count 0", i,
                     st.MPI_TAG, count, i % 977);
        }
        CHK(MPI_Recv(NULL, 0, MPI_INT, 0, 5000, MPI_COMM_WORLD, &st));
        CHK(MPI_Get_count(&st, MPI_INT, &count));
        if (count != 0)
            FAIL("zero-byte Ssend: count %d", count);
    }
    /* Zero bytes into a non-empty buffer must leave it untouched. */
    uint8_t b[16];
    memset(b, 0x5A, sizeof b);
    MPI_Request rq[2];
    CHK(MPI_Irecv(b, 16, MPI_BYTE, 1 - rank, 6000, MPI_COMM_WORLD, &rq[0]));
    CHK(MPI_Isend(b, 0, MPI_BYTE, 1 - rank, 6000, MPI_COMM_WORLD, &rq[1]));
    MPI_Status sts[2];
    CHK(MPI_Waitall(2, rq, sts));
    CHK(MPI_Get_count(&sts[0], MPI_BYTE, &count));
    if (count != 0 || sts[0].MPI_SOURCE != 1 - rank || sts[0].MPI_TAG != 6000)
        FAIL("zero-byte Isend/Irecv: count %d source %d tag %d", count, sts[0].MPI_SOURCE,
             sts[0].MPI_TAG);
    for (int j = 0; j < 16; j++)
        if (b[j] != 0x5A)
            FAIL("zero-byte receive modified byte %d of the receive buffer", j);
    if (rank == 0)
        printf("large: zero-byte messages ok (%d in order under MPI_ANY_TAG, Ssend, Isend)\n", N);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (nprocs != 2)
        FAIL("run with exactly 2 processes");
    size_t max_mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    if (max_mib < 1)
        FAIL("max_MiB must be at least 1");
    CHK(MPI_Type_contiguous((int)MiB, MPI_BYTE, &mib_type));
    CHK(MPI_Type_commit(&mib_type));

    size_t sizes[64];
    int ns = 0;
    const size_t base[] = {0, 1, 7, 1023, 65536, 131071, 131072, 131073, 1 * MiB + 3, 4 * MiB,
                           16 * MiB + 5, 64 * MiB, 128 * MiB - 1, 256 * MiB};
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (base[i] <= max_mib * MiB)
            sizes[ns++] = base[i];
    for (size_t m = 512; m <= max_mib && ns < 60; m *= 2)
        sizes[ns++] = m * MiB;
    if (max_mib > 256 && sizes[ns - 1] != max_mib * MiB)
        sizes[ns++] = max_mib * MiB;
    size_t maxn = sizes[ns - 1];

    sbuf = malloc(maxn + GUARD);
    rbuf = malloc(maxn + GUARD + MiB);
    if (!sbuf || !rbuf)
        FAIL("cannot allocate 2 x %zu bytes", maxn);

    zero_bytes();
    for (int i = 0; i < ns; i++)
        one_size(sizes[i], i);

    MPI_Type_free(&mib_type);
    free(sbuf);
    free(rbuf);
    if (rank == 0)
        printf("large: OK (%d sizes, 0 B .. %zu bytes)\n", ns, maxn);
    MPI_Finalize();
    return 0;
}
