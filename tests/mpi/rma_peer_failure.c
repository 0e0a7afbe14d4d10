/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_peer_failure: a window member dies while one-sided operations to it are in flight; the
 * origin's operations with it must end with an error within a bounded time instead of hanging,
 * and one-sided traffic with the other members must go on, with correct data.
 *
 * Ranks: 0 is the origin, 1 dies (_exit) while rank 0 streams 1 MiB MPI_Rput/MPI_Rget to it,
 * 2 is a bystander. All share one MPI_Win_allocate window under MPI_Win_lock_all, with
 * MPI_ERRORS_RETURN. Rank 0 polls every request to rank 1 against a deadline (first argument,
 * seconds, default 20), then calls MPI_Win_flush(1), which must return an error, and an
 * exclusive lock epoch with a put to rank 1 on a second window, whose MPI_Win_unlock must
 * return an error too; then it puts and gets to rank 2 on both windows and checks the data. With
 * each put or get it also leaves an 8-byte MPI_Fetch_and_op to rank 1 in flight on a third
 * window, whose MPI_Win_flush(1) must then return an error. Once that error shows the loss is
 * known, one more put to rank 1, whose send meets the lost peer at once, and two flushes, which
 * must fail; the survivors' traffic after it checks that its error stopped nothing else. Calls
 * that cannot be polled are guarded by alarm(): a hang prints "FAIL: hang: <call>". Rank 0
 * prints "rma_peer_failure: OK" or "... FAIL ...".
 * On ch3:hybrid with 1-byte thresholds and MPIR_CVAR_CH3_HYBRID_CONNECT=all every transfer to
 * rank 1 goes by RDMA, so this covers a queue pair whose peer dies.
 *
 * Launch (hydra kills the job when a rank dies unless told not to):
 *   mpiexec -disable-auto-cleanup -n 3 rma_peer_failure [limit_s]
 */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include "death_notices.h"
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (1 << 20)
#define TEST_NAME "rma_peer_failure"
#include "dying_rank.h"
#define INFLIGHT 8 /* requests to the dying rank kept in flight */

/* Rank 0: keep INFLIGHT operations to rank 1 going until one fails or the deadline passes;
 * then every one still pending must end too. Returns the number of errors seen. */
static int stream_to_dying(MPI_Win win, unsigned char *src, unsigned char *dst, MPI_Win counter)
{
    const int64_t one = 1;
    int64_t fetched;
    MPI_Request r[INFLIGHT];
    int kind[INFLIGHT] = {0}; /* 0: put, 1: get */
    int errors = 0, issued = 0;
    double deadline = MPI_Wtime() + limit;
    for (int i = 0; i < INFLIGHT; i++)
        r[i] = MPI_REQUEST_NULL;
    while (MPI_Wtime() < deadline) {
        int idle = 1;
        for (int i = 0; i < INFLIGHT; i++) {
            int flag = 1, rc = MPI_SUCCESS;
            if (r[i] != MPI_REQUEST_NULL)
                rc = MPI_Test(&r[i], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                errors++;
                r[i] = MPI_REQUEST_NULL;
                continue;
            }
            if (!flag)
                continue;
            idle = 0;
            if (errors > 0)
                continue; /* drain only */
            kind[i] = issued % 2;
            /* and a fetch-and-op on a word of its own, left in flight (8 bytes: FOP_IMMED) */
            (void) MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 1, 0, MPI_SUM, counter);
            rc = (issued++ % 2) ? MPI_Rget(dst, BLOCK, MPI_BYTE, 1, 0, BLOCK, MPI_BYTE, win, &r[i])
                                : MPI_Rput(src, BLOCK, MPI_BYTE, 1, 0, BLOCK, MPI_BYTE, win, &r[i]);
            if (rc != MPI_SUCCESS) {
                errors++;
                r[i] = MPI_REQUEST_NULL;
            }
        }
        int pending = 0;
        for (int i = 0; i < INFLIGHT; i++)
            pending += r[i] != MPI_REQUEST_NULL;
        if (errors > 0 && pending == 0)
            break;
        if (idle)
            usleep(200);
    }
    int pending = 0, pending_gets = 0;
    for (int i = 0; i < INFLIGHT; i++) {
        pending += r[i] != MPI_REQUEST_NULL;
        pending_gets += r[i] != MPI_REQUEST_NULL && kind[i];
    }
    if (pending)
        printf("rma_peer_failure: pending: %d gets and %d puts\n", pending_gets, pending - pending_gets);
    printf("rma_peer_failure: %d operations issued to the dead rank, %d ended in error, %d still pending\n",
           issued, errors, pending);
    if (pending > 0)
        fail("operations to the dead rank still pending at the deadline (would hang)", MPI_SUCCESS);
    return errors;
}

int main(int argc, char **argv)
{
    int nprocs;
    unsigned char *base, *src, *dst;
    MPI_Win win, win2;
    signal(SIGUSR1, SIG_IGN); /* hydra's notice that a rank died */
    signal(SIGALRM, on_alarm);
    MPI_Init(&argc, &argv);
    death_notices_after_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc > 1)
        limit = atoi(argv[1]);
    if (nprocs != 3) {
        if (rank == 0)
            printf("rma_peer_failure: FAIL: needs 3 processes, not %d\n", nprocs);
        MPI_Finalize();
        return 1;
    }
    MPI_Alloc_mem(BLOCK, MPI_INFO_NULL, &src);
    MPI_Alloc_mem(BLOCK, MPI_INFO_NULL, &dst);
    MPI_Win_allocate(BLOCK, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(0, win);
    int64_t *counter_base;
    MPI_Win counter;
    MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &counter_base, &counter);
    MPI_Win_set_errhandler(counter, MPI_ERRORS_RETURN);
    MPI_Win_lock_all(0, counter);
    unsigned char *base2 = malloc(BLOCK);
    MPI_Win_create(base2, BLOCK, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win2);
    MPI_Win_set_errhandler(win2, MPI_ERRORS_RETURN);

    /* Warm-up: every path works (and, on ch3:hybrid, every queue pair is up). */
    if (rank == 0) {
        fill(src, 1);
        for (int t = 1; t <= 2; t++) {
            int rc = MPI_Put(src, BLOCK, MPI_BYTE, t, 0, BLOCK, MPI_BYTE, win);
            if (rc == MPI_SUCCESS)
                rc = MPI_Win_flush(t, win);
            if (rc != MPI_SUCCESS)
                fail("warm-up put", rc);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        usleep(20000); /* let rank 0 get operations in flight */
        _exit(3);
    }
    if (rank == 0) {
        if (!stream_to_dying(win, src, dst, counter))
            fail("no operation to the dead rank reported an error", MPI_SUCCESS);
        /* Fetch-and-ops left in flight to it: their responses never come, and the flush fails. */
        int frc = GUARDED(MPI_Win_flush(1, counter), "MPI_Win_flush(dead rank, fetch-and-op)");
        printf("rma_peer_failure: MPI_Win_flush after fetch-and-ops to the dead rank returned %s\n",
               frc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error");
        if (frc == MPI_SUCCESS)
            fail("MPI_Win_flush after fetch-and-ops to the dead rank succeeded", MPI_SUCCESS);
        /* The loss is known now: a put issued after it meets the lost peer at once. Its error
         * must not stop CH3 from issuing anything else (MPICH's issue_ops_target stays marked
         * "running" after an error; the channel fails such a send through its request). */
        (void) GUARDED(MPI_Put(src, BLOCK, MPI_BYTE, 1, 0, BLOCK, MPI_BYTE, win), "MPI_Put(dead rank)");
        int rc = GUARDED(MPI_Win_flush(1, win), "MPI_Win_flush(dead rank)");
        printf("rma_peer_failure: MPI_Win_flush(dead rank) returned %s\n",
               rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error");
        if (rc == MPI_SUCCESS)
            fail("MPI_Win_flush to the dead rank succeeded", MPI_SUCCESS);
        rc = GUARDED(MPI_Win_flush(1, win), "MPI_Win_flush(dead rank, again)");
        if (rc == MPI_SUCCESS)
            fail("a second MPI_Win_flush to the dead rank succeeded", MPI_SUCCESS);
        /* A lock epoch with the dead rank ends in an error too. */
        rc = GUARDED(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win2), "MPI_Win_lock(dead rank)");
        if (rc == MPI_SUCCESS) {
            rc = GUARDED(MPI_Put(src, BLOCK, MPI_BYTE, 1, 0, BLOCK, MPI_BYTE, win2), "MPI_Put(dead rank)");
            int rc2 = GUARDED(MPI_Win_unlock(1, win2), "MPI_Win_unlock(dead rank)");
            if (rc == MPI_SUCCESS)
                rc = rc2;
        }
        printf("rma_peer_failure: lock, put, unlock with the dead rank returned %s\n",
               rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error");
        if (rc == MPI_SUCCESS)
            fail("a lock epoch with the dead rank succeeded", MPI_SUCCESS);
        /* The bystander's window memory still takes puts and gets. */
        fill(src, 2);
        memset(dst, 0, BLOCK);
        rc = GUARDED(MPI_Put(src, BLOCK, MPI_BYTE, 2, 0, BLOCK, MPI_BYTE, win), "MPI_Put(bystander)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_flush(2, win), "MPI_Win_flush(bystander)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Get(dst, BLOCK, MPI_BYTE, 2, 0, BLOCK, MPI_BYTE, win), "MPI_Get(bystander)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_flush(2, win), "MPI_Win_flush(bystander)");
        if (rc != MPI_SUCCESS)
            fail("put and get with the bystander", rc);
        else if (!same(dst, 2))
            fail("data read back from the bystander differs from what was put", MPI_SUCCESS);
        else
            printf("rma_peer_failure: put and get with the bystander ok\n");
        fill(src, 3);
        memset(dst, 0, BLOCK);
        rc = GUARDED(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win2), "MPI_Win_lock(bystander)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Put(src, BLOCK, MPI_BYTE, 2, 0, BLOCK, MPI_BYTE, win2), "MPI_Put(bystander)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_unlock(2, win2), "MPI_Win_unlock(bystander)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_lock(MPI_LOCK_SHARED, 2, 0, win2), "MPI_Win_lock(bystander)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Get(dst, BLOCK, MPI_BYTE, 2, 0, BLOCK, MPI_BYTE, win2), "MPI_Get(bystander)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_unlock(2, win2), "MPI_Win_unlock(bystander)");
        if (rc != MPI_SUCCESS)
            fail("a lock epoch with the bystander", rc);
        else if (!same(dst, 3))
            fail("data read back under lock from the bystander differs from what was put", MPI_SUCCESS);
        else
            printf("rma_peer_failure: a lock epoch with the bystander ok\n");
    }
    /* Tell the bystander it may go: point-to-point between survivors still works. */
    if (rank == 0) {
        int rc = GUARDED(MPI_Send(&failures, 1, MPI_INT, 2, 9, MPI_COMM_WORLD), "MPI_Send(bystander)");
        if (rc != MPI_SUCCESS)
            fail("send to the bystander", rc);
    } else {
        int rc = GUARDED(MPI_Recv(&failures, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         "MPI_Recv(origin)");
        (void)rc;
    }
    if (rank == 0) {
        printf(failures ? "rma_peer_failure: FAIL (%d)\n" : "rma_peer_failure: OK\n", failures);
        fflush(stdout);
    }
    /* The window cannot be freed collectively with a dead member; finish without it. */
    (void)GUARDED(MPI_Finalize(), "MPI_Finalize");
    return failures != 0;
}
