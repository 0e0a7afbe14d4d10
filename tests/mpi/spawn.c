/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spawn: dynamic processes.  MPI_Comm_spawn of this program; MPI_Open_port, MPI_Comm_accept
 * and MPI_Comm_connect between the two halves of MPI_COMM_WORLD; MPI_Comm_join over a TCP
 * socket between two processes on one host.
 *
 * A channel needs more than its start-up connections here: processes of different process
 * groups (with their own COMM_WORLDs and business cards) connect later, through the port name
 * and the process-group exchange CH3 does, and must then carry point-to-point and collective
 * traffic both across the intercommunicator and in the merged intracommunicator.  Data in
 * every direction is verified.
 *
 * Usage: mpiexec -n N spawn      (N >= 2; the parent job spawns 2 children)
 */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NCHILD 2
#define BIG 300000 /* ints: rendezvous-sized */

static int rank, nprocs;
static const char *who = "parent";

static void fail(int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "spawn: %s rank %d: FAIL (line %d): ", who, rank, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}
#define FAIL(...) fail(__LINE__, __VA_ARGS__)
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

static int v(int side, int r, int i) { return side * 10000000 + r * 100000 + i; }

/* Across an intercommunicator: every local rank exchanges a small and a large message with
 * remote rank (local rank % remote size), then both sides merge and run collectives. */
static void exercise_inter(MPI_Comm inter, int side, const char *what)
{
    int lrank, lsize, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    int *s = malloc(BIG * sizeof(int)), *r = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        s[i] = v(side, lrank, i);
    /* Every local rank sends to remote rank lrank % rsize; every remote rank receives from all
     * of the local ranks mapped to it.  Count what I will receive. */
    int peer = lrank % rsize, nrecv = 0;
    for (int q = 0; q < rsize; q++)
        if (q % lsize == lrank)
            nrecv++;
    MPI_Request sr[2];
    CHK(MPI_Isend(s, 10, MPI_INT, peer, 1, inter, &sr[0]));
    CHK(MPI_Isend(s, BIG, MPI_INT, peer, 2, inter, &sr[1]));
    for (int k = 0; k < nrecv; k++) {
        MPI_Status st;
        int small[10];
        CHK(MPI_Recv(small, 10, MPI_INT, MPI_ANY_SOURCE, 1, inter, &st));
        int src = st.MPI_SOURCE;
        for (int i = 0; i < 10; i++)
            if (small[i] != v(1 - side, src, i))
                FAIL("%s: small message from remote rank %d: element %d wrong", what, src, i);
        CHK(MPI_Recv(r, BIG, MPI_INT, src, 2, inter, &st));
        for (int i = 0; i < BIG; i++)
            if (r[i] != v(1 - side, src, i))
                FAIL("%s: large message from remote rank %d: element %d is %d", what, src, i, r[i]);
    }
    CHK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));

    /* intercommunicator collective: Allreduce sums the other group's contributions */
    int x = v(side, lrank, 0), sum = 0, want = 0;
    CHK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, inter));
    for (int q = 0; q < rsize; q++)
        want += v(1 - side, q, 0);
    if (sum != want)
        FAIL("%s: intercommunicator Allreduce %d, expected %d", what, sum, want);

    /* merged: side 0 first */
    MPI_Comm merged;
    CHK(MPI_Intercomm_merge(inter, side, &merged));
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    if (msize != lsize + rsize || mrank != (side ? rsize : 0) + lrank)
        FAIL("%s: merged communicator rank %d of %d, expected %d of %d", what, mrank, msize,
             (side ? rsize : 0) + lrank, lsize + rsize);
    int *all = malloc(sizeof(int) * (size_t)msize);
    x = mrank * 3 + 1;
    CHK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, merged));
    for (int q = 0; q < msize; q++)
        if (all[q] != q * 3 + 1)
            FAIL("%s: Allgather on the merged communicator: element %d is %d", what, q, all[q]);
    /* a large Bcast from the last rank (on the other side for side 0) */
    for (int i = 0; i < BIG; i++)
        r[i] = mrank == msize - 1 ? i * 7 : -1;
    CHK(MPI_Bcast(r, BIG, MPI_INT, msize - 1, merged));
    for (int i = 0; i < BIG; i++)
        if (r[i] != i * 7)
            FAIL("%s: Bcast on the merged communicator: element %d is %d", what, i, r[i]);
    CHK(MPI_Barrier(merged));
    MPI_Comm_free(&merged);
    free(all);
    free(s);
    free(r);
}

static void child(MPI_Comm parent)
{
    who = "child";
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    /* the children's own COMM_WORLD works */
    int x = rank + 1, sum;
    CHK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (nprocs != NCHILD || sum != NCHILD * (NCHILD + 1) / 2)
        FAIL("children's COMM_WORLD: size %d, Allreduce %d", nprocs, sum);
    exercise_inter(parent, 1, "spawned children <-> parents");
    CHK(MPI_Comm_disconnect(&parent));
}

/* Two halves of COMM_WORLD become separate groups and connect through a port. */
static void connect_accept(void)
{
    MPI_Comm half, inter;
    int side = rank < nprocs / 2 ? 0 : 1, hrank;
    CHK(MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half));
    MPI_Comm_rank(half, &hrank);
    char port[MPI_MAX_PORT_NAME] = "";
    if (side == 0 && hrank == 0) {
        CHK(MPI_Open_port(MPI_INFO_NULL, port));
        CHK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, nprocs / 2, 0, MPI_COMM_WORLD));
    }
    if (side == 1 && hrank == 0)
        CHK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (side == 0)
        CHK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
    else
        CHK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    exercise_inter(inter, side, "connect/accept between halves of COMM_WORLD");
    CHK(MPI_Comm_disconnect(&inter));
    if (side == 0 && hrank == 0)
        CHK(MPI_Close_port(port));
    MPI_Comm_free(&half);
}

/* MPI_Comm_join between ranks 0 and 1 over a loopback TCP connection (same host only). */
static int join(void)
{
    char n0[MPI_MAX_PROCESSOR_NAME], n1[MPI_MAX_PROCESSOR_NAME];
    int len, same;
    MPI_Get_processor_name(n0, &len);
    if (rank == 1)
        CHK(MPI_Send(n0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 5, MPI_COMM_WORLD));
    if (rank == 0) {
        CHK(MPI_Recv(n1, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        same = strcmp(n0, n1) == 0;
    }
    CHK(MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (!same || rank > 1)
        return same;
    int fd = -1, port = 0;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rank == 0) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        socklen_t al = sizeof a;
        if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) ||
            getsockname(ls, (struct sockaddr *)&a, &al))
            FAIL("MPI_Comm_join: cannot listen on a loopback TCP socket");
        port = ntohs(a.sin_port);
        CHK(MPI_Send(&port, 1, MPI_INT, 1, 6, MPI_COMM_WORLD));
        fd = accept(ls, NULL, NULL);
        close(ls);
    } else {
        CHK(MPI_Recv(&port, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        a.sin_port = htons((unsigned short)port);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a)) {
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0)
        FAIL("MPI_Comm_join: no TCP connection between ranks 0 and 1");
    MPI_Comm inter;
    CHK(MPI_Comm_join(fd, &inter));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    exercise_inter(inter, rank, "MPI_Comm_join");
    CHK(MPI_Comm_disconnect(&inter));
    close(fd);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(parent);
        MPI_Finalize();
        return 0;
    }
    if (nprocs < 2)
        FAIL("needs at least 2 processes");

    /* 1. spawn two copies of this program */
    MPI_Comm inter;
    int errcodes[NCHILD];
    CHK(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       errcodes));
    for (int i = 0; i < NCHILD; i++)
        if (errcodes[i] != MPI_SUCCESS)
            FAIL("MPI_Comm_spawn: child %d error code %d", i, errcodes[i]);
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    if (rsize != NCHILD)
        FAIL("MPI_Comm_spawn: %d children, expected %d", rsize, NCHILD);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    exercise_inter(inter, 0, "parents <-> spawned children");
    CHK(MPI_Comm_disconnect(&inter));
    if (rank == 0)
        printf("spawn: MPI_Comm_spawn of %d children ok\n", NCHILD);

    /* 2. port-based connect/accept */
    connect_accept();
    if (rank == 0)
        printf("spawn: MPI_Open_port/MPI_Comm_accept/MPI_Comm_connect ok\n");

    /* 3. join */
    int joined = join();
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("spawn: MPI_Comm_join %s\n", joined ? "ok" : "skipped (ranks 0 and 1 on different hosts)");
    if (rank == 0)
        printf("spawn: OK\n");
    MPI_Finalize();
    return 0;
}
