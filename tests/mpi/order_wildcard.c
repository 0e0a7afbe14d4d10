/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * order_wildcard: MPI's non-overtaking rule with MPI_ANY_TAG and MPI_ANY_SOURCE.
 *
 * Two messages from one sender on one communicator that a receive could both match must be
 * matched in send order.  A channel that maps (context, tag) to SCTP streams without restoring
 * order breaks this (Tsai 2007, Figure 3.5: tags 1, 3, 5 received by three MPI_ANY_TAG
 * receives came back as 3, 5, 1).  Every phase below sends a known sequence and checks that
 * wildcard receives, probes and matched probes see it in exactly that order, with the right
 * size and contents.  Sizes run from 0 B to 1 MiB so that eager and rendezvous messages mix
 * (a small eager message must not overtake an earlier rendezvous one).
 *
 * Usage: mpiexec -n N order_wildcard [rounds]     (N >= 2; 4 exercises more pairs)
 */
#define _DEFAULT_SOURCE /* usleep */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXMSG (1 << 20)

static int rank, nprocs;

#define TEST_NAME "order_wildcard"
#include "check.h"

static uint64_t mix(uint64_t x) /* splitmix64 finaliser: both sides derive the same data */
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void fill(uint8_t *b, int n, uint64_t key)
{
    uint32_t h = (uint32_t)mix(key);
    for (int j = 0; j < n; j++)
        b[j] = (uint8_t)(h + (uint32_t)j * 31u + (uint32_t)(j >> 8) * 7u);
}

static int first_bad(const uint8_t *b, int n, uint64_t key)
{
    uint32_t h = (uint32_t)mix(key);
    for (int j = 0; j < n; j++)
        if (b[j] != (uint8_t)(h + (uint32_t)j * 31u + (uint32_t)(j >> 8) * 7u))
            return j;
    return -1;
}

typedef struct {
    int tag, size, comm;
} msgdesc;

/* A sequence of messages, reproducible on both sides from the seed.  Large (rendezvous)
 * sizes are rarer to bound the run time, but appear in every sequence of useful length. */
static void gen_msgs(msgdesc *d, int n, uint64_t seed, int ncomm)
{
    static const int small[] = {0, 1, 3, 8, 100, 1024, 4000, 16384, 65536};
    static const int large[] = {131071, 131072, 131073, 300000, MAXMSG};
    for (int i = 0; i < n; i++) {
        uint64_t r = mix(seed * 1000003u + (uint64_t)i);
        d[i].tag = (int)(r % 1000);
        if ((r >> 10) % 8 == 0 || i == 1) /* i == 1: a large one early, before small ones */
            d[i].size = large[(r >> 16) % 5];
        else
            d[i].size = small[(r >> 16) % 9];
        d[i].comm = ncomm > 1 ? (int)((r >> 24) % (uint64_t)ncomm) : 0;
    }
}

static uint64_t key_of(int src, int phase, int round, int i)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)phase << 40) ^ ((uint64_t)round << 32) ^ (uint64_t)i;
}

static void check_msg(const char *what, int i, const msgdesc *d, const MPI_Status *st,
                      const uint8_t *buf, uint64_t key, int expect_src)
{
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_TAG != d->tag)
        FAIL("%s: message #%d: got tag %d, expected tag %d (an earlier or later message was "
             "matched first: non-overtaking rule broken)", what, i, st->MPI_TAG, d->tag);
    if (expect_src >= 0 && st->MPI_SOURCE != expect_src)
        FAIL("%s: message #%d: source %d, expected %d", what, i, st->MPI_SOURCE, expect_src);
    if (count != d->size)
        FAIL("%s: message #%d (tag %d): %d bytes, expected %d", what, i, d->tag, count, d->size);
    if (buf) {
        int bad = first_bad(buf, count, key);
        if (bad >= 0)
            FAIL("%s: message #%d (tag %d, %d bytes): wrong data at byte %d", what, i, d->tag,
                 d->size, bad);
    }
}

/* ---- Figure 3.5 ------------------------------------------------------------------------ */
/* Sender: tags t1 < t2 < t3 (sizes sz[]); receiver: three wildcard receives, either after the
 * messages arrived (unexpected queue) or pre-posted (posted queue). */
static void fig35(MPI_Comm comm, int round)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int partner = me ^ 1;
    if (partner >= n) {
        CHK(MPI_Barrier(comm));
        return;
    }
    int sender = (round % 2 == 0) ? (me % 2 == 0) : (me % 2 == 1);
    int variant = round % 3;  /* 0: unexpected, 1: pre-posted ANY_TAG, 2: pre-posted ANY_SOURCE */
    int base = 1 + 6 * (round % 1000);
    msgdesc d[3] = {{base, 4, 0}, {base + 2, 4, 0}, {base + 4, 4, 0}};
    if (round % 4 == 3) /* first message rendezvous-sized, the later two eager */
        d[0].size = MAXMSG;
    static uint8_t *buf[3];
    for (int k = 0; k < 3; k++)
        if (!buf[k] && !(buf[k] = malloc(MAXMSG)))
            FAIL("out of memory");

    if (sender) {
        MPI_Request rq[3];
        if (variant != 0)
            CHK(MPI_Barrier(comm)); /* receiver has pre-posted */
        for (int k = 0; k < 3; k++) {
            fill(buf[k], d[k].size, key_of(me, 1, round, k));
            /* Isend: a rendezvous send cannot complete before the receiver leaves the barrier */
            CHK(MPI_Isend(buf[k], d[k].size, MPI_BYTE, partner, d[k].tag, comm, &rq[k]));
        }
        if (variant == 0)
            CHK(MPI_Barrier(comm));
        CHK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    } else {
        MPI_Status st[3];
        if (variant == 0) {
            CHK(MPI_Barrier(comm)); /* sends were issued; most data is queued as unexpected */
            for (int k = 0; k < 3; k++)
                CHK(MPI_Recv(buf[k], MAXMSG, MPI_BYTE, partner, MPI_ANY_TAG, comm, &st[k]));
        } else {
            MPI_Request rq[3];
            for (int k = 0; k < 3; k++)
                CHK(MPI_Irecv(buf[k], MAXMSG, MPI_BYTE, variant == 2 ? MPI_ANY_SOURCE : partner,
                              MPI_ANY_TAG, comm, &rq[k]));
            CHK(MPI_Barrier(comm));
            CHK(MPI_Waitall(3, rq, st));
        }
        for (int k = 0; k < 3; k++)
            check_msg("Figure 3.5 (tags 1,3,5 by MPI_ANY_TAG)", k, &d[k], &st[k], buf[k],
                      key_of(partner, 1, round, k), partner);
    }
}

/* ---- random mix between pairs ---------------------------------------------------------- */
/* sendmode: 0 blocking Send, 1 Isend burst + Waitall, 2 mix of Send/Ssend/Isend.
 * recvmode: 0 Recv(partner, ANY_TAG) after a pause, 1 pre-posted Irecv(ANY_TAG) window,
 *           2 Recv(ANY_SOURCE, ANY_TAG). */
static void pair_mix(MPI_Comm comm, int round, int n, int sendmode, int recvmode, int phase)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int partner = me ^ 1;
    if (partner >= np)
        return;
    int sender = ((round + phase) % 2 == 0) ? (me % 2 == 0) : (me % 2 == 1);
    int src = sender ? me : partner;
    msgdesc *d = malloc(sizeof(msgdesc) * n);
    gen_msgs(d, n, key_of(src, phase, round, 0x77), 1);

    if (sender) {
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += (size_t)d[i].size;
        uint8_t *b = malloc(total + 1);
        MPI_Request *rq = malloc(sizeof(MPI_Request) * n);
        size_t off = 0;
        int nrq = 0;
        for (int i = 0; i < n; i++) {
            fill(b + off, d[i].size, key_of(src, phase, round, i));
            int how = sendmode == 2 ? (int)(mix((uint64_t)i + 99) % 3) : sendmode;
            if (how == 0)
                CHK(MPI_Send(b + off, d[i].size, MPI_BYTE, partner, d[i].tag, comm));
            else if (how == 1)
                CHK(MPI_Isend(b + off, d[i].size, MPI_BYTE, partner, d[i].tag, comm, &rq[nrq++]));
            else
                CHK(MPI_Ssend(b + off, d[i].size, MPI_BYTE, partner, d[i].tag, comm));
            off += (size_t)d[i].size;
        }
        CHK(MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE));
        free(rq);
        free(b);
    } else {
        if (recvmode == 1) {
            /* Post a window of W receives ahead; matching follows posting order. */
            enum { W = 16 };
            uint8_t *b = malloc((size_t)W * MAXMSG);
            MPI_Request rq[W];
            int posted = 0, done = 0;
            while (done < n) {
                while (posted < n && posted - done < W) {
                    CHK(MPI_Irecv(b + (size_t)(posted % W) * MAXMSG, MAXMSG, MPI_BYTE, partner,
                                  MPI_ANY_TAG, comm, &rq[posted % W]));
                    posted++;
                }
                MPI_Status st;
                CHK(MPI_Wait(&rq[done % W], &st));
                check_msg("pre-posted MPI_Irecv(ANY_TAG)", done, &d[done], &st,
                          b + (size_t)(done % W) * MAXMSG, key_of(src, phase, round, done), partner);
                done++;
            }
            free(b);
        } else {
            uint8_t *b = malloc(MAXMSG);
            if (recvmode == 0)
                usleep(20000); /* let messages pile up in the unexpected queue */
            for (int i = 0; i < n; i++) {
                MPI_Status st;
                CHK(MPI_Recv(b, MAXMSG, MPI_BYTE, recvmode == 2 ? MPI_ANY_SOURCE : partner,
                             MPI_ANY_TAG, comm, &st));
                check_msg(recvmode == 2 ? "MPI_Recv(ANY_SOURCE, ANY_TAG)" : "MPI_Recv(ANY_TAG)",
                          i, &d[i], &st, b, key_of(src, phase, round, i), partner);
            }
            free(b);
        }
    }
    free(d);
}

/* ---- many senders, one wildcard receiver ------------------------------------------------ */
/* Arrival interleaving across sources is free; each source's own order is not. */
static void any_source(MPI_Comm comm, int round, int n)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int root = round % np;
    const int phase = 3;
    if (me != root) {
        msgdesc *d = malloc(sizeof(msgdesc) * n);
        gen_msgs(d, n, key_of(me, phase, round, 0x55), 1);
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += (size_t)d[i].size;
        uint8_t *b = malloc(total + 1);
        MPI_Request *rq = malloc(sizeof(MPI_Request) * n);
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            fill(b + off, d[i].size, key_of(me, phase, round, i));
            CHK(MPI_Isend(b + off, d[i].size, MPI_BYTE, root, d[i].tag, comm, &rq[i]));
            off += (size_t)d[i].size;
        }
        CHK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        free(rq);
        free(b);
        free(d);
        return;
    }
    msgdesc **d = malloc(sizeof(msgdesc *) * np);
    int *next = calloc((size_t)np, sizeof(int));
    for (int s = 0; s < np; s++) {
        d[s] = malloc(sizeof(msgdesc) * n);
        gen_msgs(d[s], n, key_of(s, phase, round, 0x55), 1);
    }
    uint8_t *b = malloc(MAXMSG);
    for (int k = 0; k < n * (np - 1); k++) {
        MPI_Status st;
        CHK(MPI_Recv(b, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
        int s = st.MPI_SOURCE;
        if (s < 0 || s >= np || s == root || next[s] >= n)
            FAIL("ANY_SOURCE: unexpected source %d", s);
        int i = next[s]++;
        check_msg("MPI_Recv(ANY_SOURCE, ANY_TAG), per-source order", i, &d[s][i], &st, b,
                  key_of(s, phase, round, i), s);
    }
    for (int s = 0; s < np; s++)
        free(d[s]);
    free(d);
    free(next);
    free(b);
}

/* ---- several communicators ---------------------------------------------------------------- */
/* The sender interleaves messages over NC duplicates of one communicator; the receiver drains
 * them one communicator at a time, last first, so the others' messages wait as unexpected. */
static void multi_comm(MPI_Comm *comms, int nc, int round, int n)
{
    int me, np;
    MPI_Comm_rank(comms[0], &me);
    MPI_Comm_size(comms[0], &np);
    int partner = me ^ 1;
    if (partner >= np)
        return;
    const int phase = 4;
    int sender = (round % 2 == 0) ? (me % 2 == 0) : (me % 2 == 1);
    int src = sender ? me : partner;
    msgdesc *d = malloc(sizeof(msgdesc) * n);
    gen_msgs(d, n, key_of(src, phase, round, 0x33), nc);
    if (sender) {
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += (size_t)d[i].size;
        uint8_t *b = malloc(total + 1);
        MPI_Request *rq = malloc(sizeof(MPI_Request) * n);
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            fill(b + off, d[i].size, key_of(src, phase, round, i));
            CHK(MPI_Isend(b + off, d[i].size, MPI_BYTE, partner, d[i].tag, comms[d[i].comm], &rq[i]));
            off += (size_t)d[i].size;
        }
        CHK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        free(rq);
        free(b);
    } else {
        uint8_t *b = malloc(MAXMSG);
        for (int c = nc - 1; c >= 0; c--) {
            for (int i = 0; i < n; i++) {
                if (d[i].comm != c)
                    continue;
                MPI_Status st;
                CHK(MPI_Recv(b, MAXMSG, MPI_BYTE, (c % 2) ? MPI_ANY_SOURCE : partner, MPI_ANY_TAG,
                             comms[c], &st));
                char what[80];
                snprintf(what, sizeof what, "communicator %d of %d, MPI_Recv(ANY_TAG)", c, nc);
                check_msg(what, i, &d[i], &st, b, key_of(src, phase, round, i), partner);
            }
        }
        free(b);
    }
    free(d);
}

/* ---- probe / mprobe / improbe order ------------------------------------------------------ */
static void probe_order(MPI_Comm comm, int round, int n)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int partner = me ^ 1;
    if (partner >= np)
        return;
    const int phase = 5;
    int sender = (round % 2 == 0) ? (me % 2 == 1) : (me % 2 == 0);
    int src = sender ? me : partner;
    msgdesc *d = malloc(sizeof(msgdesc) * n);
    gen_msgs(d, n, key_of(src, phase, round, 0x11), 1);
    if (sender) {
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += (size_t)d[i].size;
        uint8_t *b = malloc(total + 1);
        MPI_Request *rq = malloc(sizeof(MPI_Request) * n);
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            fill(b + off, d[i].size, key_of(src, phase, round, i));
            CHK(MPI_Isend(b + off, d[i].size, MPI_BYTE, partner, d[i].tag, comm, &rq[i]));
            off += (size_t)d[i].size;
        }
        CHK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        free(rq);
        free(b);
    } else {
        uint8_t *b = malloc(MAXMSG);
        for (int i = 0; i < n; i++) {
            MPI_Status st;
            uint64_t key = key_of(src, phase, round, i);
            int flag = 0;
            switch ((i + round) % 4) {
            case 0: /* Probe(ANY_TAG), then receive exactly the probed tag */
                CHK(MPI_Probe(partner, MPI_ANY_TAG, comm, &st));
                check_msg("MPI_Probe(ANY_TAG)", i, &d[i], &st, NULL, key, partner);
                CHK(MPI_Recv(b, MAXMSG, MPI_BYTE, partner, st.MPI_TAG, comm, &st));
                check_msg("MPI_Recv after MPI_Probe", i, &d[i], &st, b, key, partner);
                break;
            case 1: /* Iprobe(ANY_SOURCE, ANY_TAG); a wildcard Recv must get the same message */
                while (!flag)
                    CHK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
                check_msg("MPI_Iprobe(ANY_SOURCE, ANY_TAG)", i, &d[i], &st, NULL, key, partner);
                CHK(MPI_Recv(b, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
                check_msg("MPI_Recv(ANY_SOURCE, ANY_TAG) after MPI_Iprobe", i, &d[i], &st, b, key,
                          partner);
                break;
            case 2: {
                MPI_Message m;
                CHK(MPI_Mprobe(partner, MPI_ANY_TAG, comm, &m, &st));
                check_msg("MPI_Mprobe(ANY_TAG)", i, &d[i], &st, NULL, key, partner);
                CHK(MPI_Mrecv(b, MAXMSG, MPI_BYTE, &m, &st));
                check_msg("MPI_Mrecv", i, &d[i], &st, b, key, partner);
                break;
            }
            default: {
                MPI_Message m;
                MPI_Request r;
                while (!flag)
                    CHK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &m, &st));
                check_msg("MPI_Improbe(ANY_SOURCE, ANY_TAG)", i, &d[i], &st, NULL, key, partner);
                CHK(MPI_Imrecv(b, MAXMSG, MPI_BYTE, &m, &r));
                CHK(MPI_Wait(&r, &st));
                check_msg("MPI_Imrecv", i, &d[i], &st, b, key, partner);
                break;
            }
            }
        }
        free(b);
    }
    free(d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (nprocs < 2)
        FAIL("needs at least 2 processes");
    int rounds = argc > 1 ? atoi(argv[1]) : 2;

    enum { NC = 4 };
    MPI_Comm phase_comm, comms[NC];
    CHK(MPI_Comm_dup(MPI_COMM_WORLD, &phase_comm));
    for (int c = 0; c < NC; c++)
        CHK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]));

    /* Figure 3.5 itself, many times, all variants. */
    for (int r = 0; r < 24; r++)
        fig35(phase_comm, r);
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("order_wildcard: Figure 3.5 (tags 1,3,5 + MPI_ANY_TAG, 24 variants) ok\n");

    for (int round = 0; round < rounds; round++) {
        for (int m = 0; m < 9; m++) {
            int sendmode = m % 3, recvmode = m / 3;
            pair_mix(phase_comm, round, recvmode == 1 ? 120 : 250, sendmode, recvmode, 10 + m);
            CHK(MPI_Barrier(MPI_COMM_WORLD));
        }
        if (rank == 0)
            printf("order_wildcard: round %d: pair mixes (3 send x 3 receive modes) ok\n", round);
        any_source(phase_comm, round, nprocs > 8 ? 40 : 100);
        CHK(MPI_Barrier(MPI_COMM_WORLD));
        multi_comm(comms, NC, round, 240);
        CHK(MPI_Barrier(MPI_COMM_WORLD));
        probe_order(phase_comm, round, 200);
        CHK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0)
            printf("order_wildcard: round %d: ANY_SOURCE, %d communicators, probe/mprobe/improbe ok\n",
                   round, NC);
    }

    for (int c = 0; c < NC; c++)
        MPI_Comm_free(&comms[c]);
    MPI_Comm_free(&phase_comm);
    if (rank == 0)
        printf("order_wildcard: OK (%d processes, %d rounds)\n", nprocs, rounds);
    MPI_Finalize();
    return 0;
}
