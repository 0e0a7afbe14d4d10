/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cancel_probe: MPI_Cancel of receives and sends; MPI_Probe/Iprobe/Mprobe/Improbe/Mrecv/Imrecv.
 *
 * Cancelling a send makes CH3 send a cancel request that the receiver answers; it must arrive
 * in order after the message it refers to, so it exercises the channel's ordering and its
 * control-packet path.  MPI lets a send cancel succeed or fail, but the outcome must be
 * consistent: cancelled means the receiver never sees the message, not cancelled means it gets
 * it intact.  Probes must report the right source, tag and size (also for rendezvous messages
 * whose data has not moved yet), and a matched probe must take its message out of matching.
 *
 * Usage: mpiexec -n N cancel_probe    (N >= 2; pairs r, r^1; all ranks in the ANY_SOURCE part)
 */
#define _DEFAULT_SOURCE /* usleep */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nprocs, peer;
static MPI_Comm pc; /* communicator of this process' pair (size 2, or 1 for an odd one out) */

#define TEST_NAME "cancel_probe"
#include "check.h"

static void fill(unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 13 + i * 7 + (i >> 9));
}
static void verify(const char *what, const unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed * 13 + i * 7 + (i >> 9)))
            FAIL("%s: wrong data at byte %d of %d", what, i, n);
}
static void expect(const char *what, MPI_Status *st, int src, int tag, int bytes)
{
    int c;
    MPI_Get_count(st, MPI_BYTE, &c);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || c != bytes)
        FAIL("%s: status source %d tag %d count %d, expected source %d tag %d count %d", what,
             st->MPI_SOURCE, st->MPI_TAG, c, src, tag, bytes);
}

/* Wait up to 30 s for a message that must arrive (an Iprobe loop instead of a Recv that would
 * hang if it never comes). */
static void must_arrive(const char *what, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    double t0 = MPI_Wtime();
    int flag = 0;
    while (!flag) {
        CHK(MPI_Iprobe(src, tag, comm, &flag, st));
        if (!flag && MPI_Wtime() - t0 > 30)
            FAIL("%s: message (source %d, tag %d) did not arrive within 30 s", what, src, tag);
        if (!flag)
            usleep(1000);
    }
}

/* ---- cancel receives -------------------------------------------------------------------- */
static void cancel_recv(void)
{
    int me = rank % 2, other = 1 - me; /* ranks inside pc */
    unsigned char b[256];
    MPI_Status st;
    int flag;
    if (me == 0) {
        MPI_Request r[3];
        /* An unmatched receive (specific, then wildcards) can always be cancelled. */
        CHK(MPI_Irecv(b, 256, MPI_BYTE, other, 100, pc, &r[0]));
        CHK(MPI_Irecv(b, 256, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, pc, &r[1]));
        CHK(MPI_Recv_init(b, 256, MPI_BYTE, other, 100, pc, &r[2]));
        CHK(MPI_Start(&r[2]));
        for (int k = 0; k < 3; k++) {
            CHK(MPI_Cancel(&r[k]));
            CHK(MPI_Wait(&r[k], &st));
            CHK(MPI_Test_cancelled(&st, &flag));
            if (!flag)
                FAIL("cancel of unmatched receive #%d: MPI_Test_cancelled says not cancelled", k);
        }
        CHK(MPI_Barrier(pc));
        /* The cancelled receives must not have consumed anything: the next ones get it all. */
        CHK(MPI_Start(&r[2]));
        CHK(MPI_Wait(&r[2], &st));
        expect("persistent receive restarted after cancel", &st, other, 100, 100);
        verify("persistent receive restarted after cancel", b, 100, 1);
        CHK(MPI_Request_free(&r[2]));
        CHK(MPI_Recv(b, 256, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, pc, &st));
        expect("wildcard receive after cancel", &st, other, 101, 200);
        verify("wildcard receive after cancel", b, 200, 2);
    } else {
        CHK(MPI_Barrier(pc));
        fill(b, 100, 1);
        CHK(MPI_Send(b, 100, MPI_BYTE, other, 100, pc));
        fill(b, 200, 2);
        CHK(MPI_Send(b, 200, MPI_BYTE, other, 101, pc));
    }
}

/* ---- cancel sends ------------------------------------------------------------------------ */
/* mode 0: Isend eager, 1: Isend rendezvous (1 MiB), 2: Issend small, 3: Isend already received */
static int cancel_send(int mode)
{
    int me = rank % 2, other = 1 - me;
    static const int sizes[] = {64, 1 << 20, 64, 64};
    static const char *names[] = {"eager Isend", "rendezvous Isend (1 MiB)", "Issend", "Isend already received"};
    int n = sizes[mode], tag = 200 + mode, cancelled = -1;
    unsigned char *b = malloc((size_t)n);
    MPI_Status st;
    char what[96];
    snprintf(what, sizeof what, "cancel of %s", names[mode]);
    if (me == 0) {
        MPI_Request r;
        fill(b, n, 10 + mode);
        if (mode == 2)
            CHK(MPI_Issend(b, n, MPI_BYTE, other, tag, pc, &r));
        else
            CHK(MPI_Isend(b, n, MPI_BYTE, other, tag, pc, &r));
        if (mode == 3) /* wait until the receiver has the message; then cancel must fail */
            CHK(MPI_Recv(NULL, 0, MPI_BYTE, other, 299, pc, &st));
        else
            usleep(20000); /* let the message (or its request-to-send) reach the receiver */
        CHK(MPI_Cancel(&r));
        CHK(MPI_Wait(&r, &st));
        CHK(MPI_Test_cancelled(&st, &cancelled));
        if (mode == 3 && cancelled)
            FAIL("%s: reported cancelled although the receiver already received it", what);
        CHK(MPI_Send(&cancelled, 1, MPI_INT, other, 298, pc));
        CHK(MPI_Barrier(pc));
    } else {
        if (mode == 3) {
            CHK(MPI_Recv(b, n, MPI_BYTE, other, tag, pc, &st));
            expect(what, &st, other, tag, n);
            verify(what, b, n, 10 + mode);
            CHK(MPI_Send(NULL, 0, MPI_BYTE, other, 299, pc));
        }
        CHK(MPI_Recv(&cancelled, 1, MPI_INT, other, 298, pc, &st));
        CHK(MPI_Barrier(pc));
        if (mode != 3) {
            int flag;
            CHK(MPI_Iprobe(other, tag, pc, &flag, &st));
            if (cancelled && flag)
                FAIL("%s: sender says cancelled, but the message is still there to receive", what);
            if (!cancelled) {
                must_arrive(what, other, tag, pc, &st);
                memset(b, 0, (size_t)n);
                CHK(MPI_Recv(b, n, MPI_BYTE, other, tag, pc, &st));
                expect(what, &st, other, tag, n);
                verify(what, b, n, 10 + mode);
            }
        }
    }
    CHK(MPI_Bcast(&cancelled, 1, MPI_INT, 0, pc));
    free(b);
    return cancelled;
}

/* ---- probes ------------------------------------------------------------------------------- */
static void probes(void)
{
    int me = rank % 2, other = 1 - me;
    enum { BIG = 1 << 20 };
    const int tags[] = {5, 6, 7, 8, 9, 10};
    const int sizes[] = {10, 0, BIG, 1000, 70000, BIG + 1};
    unsigned char *b = malloc(BIG + 1);
    MPI_Status st;
    int flag, c;
    if (me == 1) {
        MPI_Request r[6];
        unsigned char *s[6];
        for (int k = 0; k < 6; k++) {
            s[k] = malloc((size_t)sizes[k] + 1);
            fill(s[k], sizes[k], 30 + k);
            CHK(MPI_Isend(s[k], sizes[k], MPI_BYTE, other, tags[k], pc, &r[k]));
        }
        CHK(MPI_Waitall(6, r, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 6; k++)
            free(s[k]);
        CHK(MPI_Barrier(pc));
        free(b);
        return;
    }
    /* Nothing is there yet for tag 999. */
    CHK(MPI_Iprobe(other, 999, pc, &flag, &st));
    if (flag)
        FAIL("MPI_Iprobe found a message with tag 999 that nobody sent");
    MPI_Message m;
    CHK(MPI_Improbe(other, 999, pc, &flag, &m, &st));
    if (flag || m != MPI_MESSAGE_NULL)
        FAIL("MPI_Improbe matched a message with tag 999 that nobody sent");

    /* Specific probes, out of order; the rendezvous message reports its full size. */
    CHK(MPI_Probe(other, 7, pc, &st));
    expect("MPI_Probe(tag 7, rendezvous)", &st, other, 7, BIG);
    CHK(MPI_Probe(other, 6, pc, &st));
    expect("MPI_Probe(tag 6, zero bytes)", &st, other, 6, 0);
    must_arrive("MPI_Iprobe(tag 5)", other, 5, pc, &st);
    expect("MPI_Iprobe(tag 5)", &st, other, 5, 10);
    /* Probe does not consume: ANY_TAG still finds tag 5 first. */
    CHK(MPI_Probe(other, MPI_ANY_TAG, pc, &st));
    expect("MPI_Probe(ANY_TAG) after other probes", &st, other, 5, 10);

    /* Receive tag 7 first (out of send order by explicit tag), then 5, then 6. */
    CHK(MPI_Recv(b, BIG, MPI_BYTE, other, 7, pc, &st));
    expect("MPI_Recv(tag 7)", &st, other, 7, BIG);
    verify("MPI_Recv(tag 7)", b, BIG, 32);
    CHK(MPI_Recv(b, BIG, MPI_BYTE, other, 5, pc, &st));
    expect("MPI_Recv(tag 5)", &st, other, 5, 10);
    verify("MPI_Recv(tag 5)", b, 10, 30);

    /* Mprobe(ANY_TAG) takes tag 6 out of matching: a later Probe(ANY_TAG) sees tag 8. */
    MPI_Message m6, m8;
    CHK(MPI_Mprobe(other, MPI_ANY_TAG, pc, &m6, &st));
    expect("MPI_Mprobe(ANY_TAG)", &st, other, 6, 0);
    CHK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, pc, &st));
    expect("MPI_Probe(ANY_TAG) after MPI_Mprobe", &st, other, 8, 1000);
    flag = 0;
    while (!flag)
        CHK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, pc, &flag, &m8, &st));
    expect("MPI_Improbe(ANY_TAG)", &st, other, 8, 1000);
    /* and now the next one is tag 9 */
    CHK(MPI_Probe(other, MPI_ANY_TAG, pc, &st));
    expect("MPI_Probe after MPI_Improbe", &st, other, 9, 70000);

    /* Receive the matched messages in reverse order of matching. */
    MPI_Request r;
    CHK(MPI_Imrecv(b, BIG, MPI_BYTE, &m8, &r));
    CHK(MPI_Wait(&r, &st));
    expect("MPI_Imrecv(tag 8)", &st, other, 8, 1000);
    verify("MPI_Imrecv(tag 8)", b, 1000, 33);
    if (m8 != MPI_MESSAGE_NULL)
        FAIL("MPI_Imrecv did not set the message handle to MPI_MESSAGE_NULL");
    memset(b, 0xEE, 16);
    CHK(MPI_Mrecv(b, 16, MPI_BYTE, &m6, &st));
    expect("MPI_Mrecv(tag 6, zero bytes)", &st, other, 6, 0);
    if (b[0] != 0xEE)
        FAIL("zero-byte MPI_Mrecv wrote into the buffer");

    /* Large messages through Mprobe/Mrecv: 70000 (eager or not) and 1 MiB + 1 (rendezvous). */
    CHK(MPI_Mprobe(other, 10, pc, &m, &st));
    expect("MPI_Mprobe(tag 10, rendezvous)", &st, other, 10, BIG + 1);
    CHK(MPI_Mrecv(b, BIG + 1, MPI_BYTE, &m, &st));
    expect("MPI_Mrecv(tag 10)", &st, other, 10, BIG + 1);
    verify("MPI_Mrecv(tag 10)", b, BIG + 1, 35);
    CHK(MPI_Mprobe(other, MPI_ANY_TAG, pc, &m, &st));
    expect("MPI_Mprobe(tag 9)", &st, other, 9, 70000);
    CHK(MPI_Get_count(&st, MPI_BYTE, &c));
    CHK(MPI_Mrecv(b, c, MPI_BYTE, &m, &st));
    verify("MPI_Mrecv(tag 9)", b, 70000, 34);

    /* MPI_PROC_NULL */
    CHK(MPI_Probe(MPI_PROC_NULL, 3, pc, &st));
    expect("MPI_Probe(MPI_PROC_NULL)", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
    CHK(MPI_Mprobe(MPI_PROC_NULL, 3, pc, &m, &st));
    if (m != MPI_MESSAGE_NO_PROC)
        FAIL("MPI_Mprobe(MPI_PROC_NULL) did not return MPI_MESSAGE_NO_PROC");
    CHK(MPI_Mrecv(b, 10, MPI_BYTE, &m, &st));
    expect("MPI_Mrecv(MPI_MESSAGE_NO_PROC)", &st, MPI_PROC_NULL, MPI_ANY_TAG, 0);

    CHK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, pc, &flag, &st));
    if (flag)
        FAIL("a message is left over after all were received (tag %d)", st.MPI_TAG);
    CHK(MPI_Barrier(pc));
    free(b);
}

/* ---- Mprobe(ANY_SOURCE) with every rank sending to one root -------------------------------- */
static void mprobe_any_source(int root)
{
    int n = 3000 + rank;
    unsigned char *b = malloc((size_t)n + 100 * (size_t)nprocs);
    if (rank != root) {
        fill(b, n, 50 + rank);
        CHK(MPI_Send(b, n, MPI_BYTE, root, 77, MPI_COMM_WORLD));
        free(b);
        return;
    }
    MPI_Message *m = malloc(sizeof(MPI_Message) * (size_t)nprocs);
    int *src = malloc(sizeof(int) * (size_t)nprocs), *seen = calloc((size_t)nprocs, sizeof(int));
    MPI_Status st;
    for (int k = 0; k < nprocs - 1; k++) {
        CHK(MPI_Mprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &m[k], &st));
        src[k] = st.MPI_SOURCE;
        if (src[k] < 0 || src[k] >= nprocs || src[k] == root || seen[src[k]]++)
            FAIL("MPI_Mprobe(ANY_SOURCE): source %d matched twice or unexpected", src[k]);
        expect("MPI_Mprobe(ANY_SOURCE)", &st, src[k], 77, 3000 + src[k]);
    }
    for (int k = nprocs - 2; k >= 0; k--) {
        CHK(MPI_Mrecv(b, 3000 + 100 * nprocs, MPI_BYTE, &m[k], &st));
        expect("MPI_Mrecv after MPI_Mprobe(ANY_SOURCE)", &st, src[k], 77, 3000 + src[k]);
        verify("MPI_Mrecv after MPI_Mprobe(ANY_SOURCE)", b, 3000 + src[k], 50 + src[k]);
    }
    free(m);
    free(src);
    free(seen);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (nprocs < 2)
        FAIL("needs at least 2 processes");
    peer = rank ^ 1;
    CHK(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pc));
    int psize;
    MPI_Comm_size(pc, &psize);

    int outcome[4] = {-1, -1, -1, -1};
    for (int round = 0; round < 3; round++) {
        if (psize == 2) {
            cancel_recv();
            for (int mode = 0; mode < 4; mode++)
                outcome[mode] = cancel_send(mode);
            probes();
        }
        for (int root = 0; root < nprocs && root < 3; root++)
            mprobe_any_source(root);
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (rank == 0)
        printf("cancel_probe: OK (send cancel outcomes, consistent on both sides: eager %s, "
               "rendezvous %s, Issend %s, already received %s)\n",
               outcome[0] ? "cancelled" : "delivered", outcome[1] ? "cancelled" : "delivered",
               outcome[2] ? "cancelled" : "delivered", outcome[3] ? "cancelled" : "delivered");
    MPI_Comm_free(&pc);
    MPI_Finalize();
    return 0;
}
