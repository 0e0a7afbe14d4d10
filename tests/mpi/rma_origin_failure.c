/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_origin_failure: an origin dies in the middle of a one-sided epoch with a live target; the
 * target must let the other origins go on (a lock the dead origin held is released) and must not
 * wait for ever for the dead origin's completion (MPI_Win_wait fails).
 *
 * Ranks: 0 is the target T, 1 the origin D that dies (_exit), 2 a bystander origin B. One
 * MPI_Win_allocate window of BLOCK bytes at each rank, MPI_ERRORS_RETURN everywhere. Scenarios
 * (first argument):
 *   exclusive  D takes an exclusive lock on T (lock, put, flush) and dies holding it; B then
 *              locks T exclusively, puts, unlocks; T checks B's data under a lock of its own.
 *   shared     T holds a shared lock on its own window; D takes a shared one too (lock, put,
 *              flush) and dies holding it; B asks for an exclusive lock, which must wait for T's
 *              unlock (T checks that B's data has not arrived while it holds its lock: only the
 *              dead origin's share may be released), then goes through with correct data.
 *   queued     B holds an exclusive lock on T; D asks for one (queued at T) and dies waiting;
 *              once T has seen D die (a receive from D fails), B unlocks, then locks, puts and
 *              unlocks again: D's request must not have taken the lock with it.
 *   pscw       T posts to {D, B} and waits; D starts, puts and dies before MPI_Win_complete; B
 *              completes. T's MPI_Win_wait must return an error of class MPIX_ERR_PROC_FAILED,
 *              and B's data must be there.
 *   pscw-done  the same, but D completes (its last operation a get, so that its completion has
 *              arrived when MPI_Win_complete returns) before it dies, while B has not yet: T's
 *              MPI_Win_wait must succeed.
 *   pscw-nocheck, pscw-nocheck-done
 *              the same two with MPI_MODE_NOCHECK on both sides (T tells the origins that it
 *              posted by a message): no post messages tell the target whom it waits for.
 *   After each PSCW scenario T opens one more exposure epoch, for B alone, which must end with
 *   B's data: the dead origin's share of the completion counter must be gone.
 *   fence      every rank opens a fence epoch and puts to T; D dies before the closing fence,
 *              which must return an error at T and B. Passes on MPICH 4.0.2; not in run-tests,
 *              because on 5.0.1 the fence's reduce-scatter ends B's process instead (README,
 *              "When a peer dies": MPICH 5.0 makes a failed receive inside a collective fatal).
 *   fence-late D's last operation before the closing fence is a 64 MiB put to T, and T makes D
 *              _exit (SIGUSR2, from a thread that watches T's window) once the put's first bytes
 *              landed: D has passed the fence's reduce-scatter, the put never completes. T's
 *              fence must return an error instead of waiting for that put for ever. Run with
 *              MPIR_CVAR_CH3_RMA_DELAY_ISSUING_FOR_PIGGYBACKING=1, which keeps the put until the
 *              closing fence issues it after its reduce-scatter (else CH3 may send it at once,
 *              and D may die before the reduce-scatter).
 * With RMA_EXPECT_RDMA set (ch3:hybrid, 1-byte thresholds), B first repeats a lock epoch with T
 * until a put goes by RDMA (the queue pair is up), and fails unless RDMA carried some of its puts
 * in the scenario itself. Calls that may hang are guarded by alarm() (second argument, seconds, default 20): a hang
 * prints "FAIL: hang: <call>". B reports its result to T, and T prints "rma_origin_failure: OK"
 * or "... FAIL ...".
 *
 * Launch (hydra kills the job when a rank dies unless told not to):
 *   mpiexec -disable-auto-cleanup -n 3 rma_origin_failure <scenario> [limit_s]
 */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include "death_notices.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 4096
#define TEST_NAME "rma_origin_failure"
#include "dying_rank.h"
#define T 0
#define D 1
#define B 2
#define TAG 7

/* D, blocked in MPI waiting for a lock it will never get: it dies there. */
static void die_now(int sig)
{
    (void)sig;
    _exit(3);
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        fail(what, rc);
}

/* Point-to-point between ranks, guarded. */
static void send_to(int dest, int value)
{
    check(GUARDED(MPI_Send(&value, 1, MPI_INT, dest, TAG, MPI_COMM_WORLD), "MPI_Send"), "MPI_Send");
}

/* D's last message before it dies: synchronous, so that it has been matched (not only handed
 * to the transport, which a process that _exits at once may never have sent). */
static void ssend_to(int dest, int value)
{
    check(GUARDED(MPI_Ssend(&value, 1, MPI_INT, dest, TAG, MPI_COMM_WORLD), "MPI_Ssend"), "MPI_Ssend");
}

static int recv_from(int src)
{
    int value = -1;
    check(GUARDED(MPI_Recv(&value, 1, MPI_INT, src, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv"),
          "MPI_Recv");
    return value;
}

/* BLOCK bytes to T at disp, in two puts: a lock request CH3 piggybacks rides on the first, so
 * that on ch3:hybrid with 1-byte thresholds the second goes by RDMA. */
static int put_block(MPI_Win win, unsigned char *src, MPI_Aint disp)
{
    int rc = GUARDED(MPI_Put(src, 8, MPI_BYTE, T, disp, 8, MPI_BYTE, win), "MPI_Put(T)");
    if (rc == MPI_SUCCESS)
        rc = GUARDED(MPI_Put(src + 8, BLOCK - 8, MPI_BYTE, T, disp + 8, BLOCK - 8, MPI_BYTE, win),
                     "MPI_Put(T)");
    return rc;
}

/* ch3:hybrid's count of puts that went by RDMA (MPI_T), or -1 without it. */
static long long rdma_puts(void)
{
    int index, count;
    unsigned long long puts = 0;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    if (MPI_T_pvar_get_index("ch3_hybrid_rdma_puts", MPI_T_PVAR_CLASS_COUNTER, &index) != MPI_SUCCESS)
        return -1;
    MPI_T_pvar_session_create(&session);
    MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count);
    MPI_T_pvar_read(session, handle, &puts);
    MPI_T_pvar_handle_free(session, &handle);
    MPI_T_pvar_session_free(&session);
    return (long long)puts;
}

static long long rdma_before; /* B's RDMA puts before the scenario */

/* B, with RMA_EXPECT_RDMA set: lock epochs with T until a put goes by RDMA (the queue pair that
 * MPIR_CVAR_CH3_HYBRID_CONNECT=all starts at window creation is up). */
static void warm_up(MPI_Win win, unsigned char *src)
{
    if (!getenv("RMA_EXPECT_RDMA") || rank != B)
        return;
    fill(src, 9);
    for (int i = 0; i < 1000 && rdma_puts() == 0; i++) {
        int rc = GUARDED(MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win), "MPI_Win_lock(warm-up)");
        if (rc == MPI_SUCCESS)
            rc = put_block(win, src, 0);
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_unlock(T, win), "MPI_Win_unlock(warm-up)");
        check(rc, "a warm-up lock epoch");
        usleep(2000);
    }
    rdma_before = rdma_puts();
    if (rdma_before <= 0)
        fail("RMA_EXPECT_RDMA is set but no put went by RDMA (no ch3_hybrid_rdma_puts counter, "
             "or no queue pair)", MPI_SUCCESS);
}

/* B, before it reports to T: with RMA_EXPECT_RDMA set, RDMA must have carried some of its puts
 * in the scenario. */
static void check_rdma(void)
{
    if (!getenv("RMA_EXPECT_RDMA"))
        return;
    long long puts = rdma_puts() - rdma_before;
    printf("rma_origin_failure: the bystander's puts by RDMA: %lld\n", puts);
    if (puts <= 0)
        fail("RMA_EXPECT_RDMA is set but RDMA carried none of the bystander's puts", MPI_SUCCESS);
}

/* Lock, put BLOCK bytes of `seed`, unlock: B's epoch. */
static void lock_put_unlock(MPI_Win win, int type, unsigned char *src, int seed)
{
    fill(src, seed);
    int rc = GUARDED(MPI_Win_lock(type, T, 0, win), "MPI_Win_lock(T)");
    if (rc == MPI_SUCCESS)
        rc = put_block(win, src, 0);
    if (rc == MPI_SUCCESS)
        rc = GUARDED(MPI_Win_unlock(T, win), "MPI_Win_unlock(T)");
    check(rc, "a lock epoch with the target after the dead origin's");
}

/* T: its window holds `seed`'s data, read under an exclusive lock of its own (which the dead
 * origin's lock would block too). */
static void check_data_at_t(MPI_Win win, unsigned char *base, int seed, const char *whose)
{
    int rc = GUARDED(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win), "MPI_Win_lock(self)");
    int ok = rc == MPI_SUCCESS && same(base, seed);
    if (rc == MPI_SUCCESS)
        rc = GUARDED(MPI_Win_unlock(T, win), "MPI_Win_unlock(self)");
    check(rc, "a lock epoch of the target on its own window");
    if (rc == MPI_SUCCESS && !ok)
        fail(whose, MPI_SUCCESS);
    else if (ok)
        printf("rma_origin_failure: the target holds the bystander's data\n");
}

static void scenario_exclusive(MPI_Win win, unsigned char *base, unsigned char *src)
{
    if (rank == D) {
        fill(src, 1);
        int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Put(src, BLOCK, MPI_BYTE, T, 0, BLOCK, MPI_BYTE, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(T, win); /* the lock is granted and held */
        check(rc, "the dying origin's lock epoch");
        send_to(B, 1);
        usleep(200000); /* B's request queues behind the lock */
        _exit(3);
    } else if (rank == B) {
        recv_from(D);
        lock_put_unlock(win, MPI_LOCK_EXCLUSIVE, src, 2);
        check_rdma();
        send_to(T, failures);
    } else {
        failures += recv_from(B);
        check_data_at_t(win, base, 2, "the target's window does not hold the bystander's data");
    }
}

static void scenario_shared(MPI_Win win, unsigned char *base, unsigned char *src)
{
    if (rank == T) {
        int rc = GUARDED(MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win), "MPI_Win_lock(self, shared)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_flush(T, win), "MPI_Win_flush(self)");
        check(rc, "a shared lock of the target on its own window");
        send_to(D, 1);
        recv_from(B); /* B has asked for its exclusive lock */
        /* Progress for a while: D's loss and B's request are handled meanwhile. B must not get
         * the lock while this shared one is held. */
        double until = MPI_Wtime() + 1.0;
        int flag;
        while (MPI_Wtime() < until) {
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(1000);
        }
        if (same(base, 2))
            fail("the bystander's exclusive lock was granted while the target held a shared one",
                 MPI_SUCCESS);
        else
            printf("rma_origin_failure: the bystander waits for the target's shared lock\n");
        rc = GUARDED(MPI_Win_unlock(T, win), "MPI_Win_unlock(self)");
        check(rc, "unlocking the target's shared lock");
        failures += recv_from(B);
        check_data_at_t(win, base, 2, "the target's window does not hold the bystander's data");
    } else if (rank == D) {
        recv_from(T);
        fill(src, 1);
        int rc = MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Put(src, BLOCK, MPI_BYTE, T, 0, BLOCK, MPI_BYTE, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(T, win);
        check(rc, "the dying origin's lock epoch");
        send_to(B, 1);
        usleep(200000);
        _exit(3);
    } else {
        MPI_Request r;
        recv_from(D);
        fill(src, 2);
        int rc = GUARDED(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win), "MPI_Win_lock(T)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Rput(src, 8, MPI_BYTE, T, 0, 8, MPI_BYTE, win, &r), "MPI_Rput(T)");
        send_to(T, 1);
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait(Rput)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Put(src + 8, BLOCK - 8, MPI_BYTE, T, 8, BLOCK - 8, MPI_BYTE, win),
                         "MPI_Put(T)");
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_unlock(T, win), "MPI_Win_unlock(T)");
        check(rc, "an exclusive lock epoch with the target after the dead origin's shared one");
        check_rdma();
        send_to(T, failures);
    }
}

static void scenario_queued(MPI_Win win, unsigned char *base, unsigned char *src)
{
    if (rank == B) {
        fill(src, 3);
        int rc = GUARDED(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win), "MPI_Win_lock(T)");
        if (rc == MPI_SUCCESS)
            rc = put_block(win, src, 0);
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_flush(T, win), "MPI_Win_flush(T)");
        send_to(D, 1);
        recv_from(T); /* D's request queued behind this lock, and T saw D die */
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_unlock(T, win), "MPI_Win_unlock(T)");
        check(rc, "the bystander's first lock epoch");
        lock_put_unlock(win, MPI_LOCK_EXCLUSIVE, src, 2);
        check_rdma();
        send_to(T, failures);
    } else if (rank == D) {
        recv_from(B);
        fill(src, 1);
        signal(SIGALRM, die_now);
        alarm(0);
        ualarm(300000, 0);
        int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Put(src, BLOCK, MPI_BYTE, T, 0, BLOCK, MPI_BYTE, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_flush(T, win); /* waits for the lock until the alarm ends it */
        printf("rma_origin_failure: FAIL: the dying origin got a lock the bystander held\n");
        fflush(stdout);
        _exit(3);
    } else {
        /* A receive posted for D fails when D's loss is handled, queued lock request and all. */
        int value, rc = GUARDED(MPI_Recv(&value, 1, MPI_INT, D, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                                "MPI_Recv(dead origin)");
        if (rc == MPI_SUCCESS)
            fail("a receive from the dead origin succeeded", MPI_SUCCESS);
        send_to(B, 1);
        failures += recv_from(B);
        check_data_at_t(win, base, 2, "the target's window does not hold the bystander's data");
    }
}

/* The PSCW epoch after the scenario, between T and B alone. */
static void pscw_after(MPI_Win win, unsigned char *base, unsigned char *src, MPI_Group world, int assert)
{
    MPI_Group origin, target;
    int o[1] = {B}, t[1] = {T};
    MPI_Group_incl(world, 1, o, &origin);
    MPI_Group_incl(world, 1, t, &target);
    if (rank == T) {
        int rc = GUARDED(MPI_Win_post(origin, assert, win), "MPI_Win_post(after)");
        check(rc, "MPI_Win_post of the epoch after the failed one");
        send_to(B, 1);
        rc = GUARDED(MPI_Win_wait(win), "MPI_Win_wait(after)");
        check(rc, "MPI_Win_wait of the epoch after the failed one");
        if (rc == MPI_SUCCESS && !same(base + BLOCK, 3))
            fail("the epoch after the failed one did not bring the bystander's data", MPI_SUCCESS);
        else if (rc == MPI_SUCCESS)
            printf("rma_origin_failure: the next exposure epoch ended with the bystander's data\n");
    } else if (rank == B) {
        fill(src, 3);
        recv_from(T);
        int rc = GUARDED(MPI_Win_start(target, assert, win), "MPI_Win_start(after)");
        if (rc == MPI_SUCCESS)
            rc = put_block(win, src, BLOCK);
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_complete(win), "MPI_Win_complete(after)");
        check(rc, "the bystander's access epoch after the failed one");
    }
    MPI_Group_free(&origin);
    MPI_Group_free(&target);
}

static void scenario_pscw(MPI_Win win, unsigned char *base, unsigned char *src, int d_completes, int assert)
{
    MPI_Group world, origins, target;
    int o[2] = {D, B}, t[1] = {T};
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 2, o, &origins);
    MPI_Group_incl(world, 1, t, &target);
    if (rank == T) {
        int rc = GUARDED(MPI_Win_post(origins, assert, win), "MPI_Win_post");
        check(rc, "MPI_Win_post");
        if (assert & MPI_MODE_NOCHECK) { /* what the post messages would have said */
            send_to(D, 1);
            send_to(B, 1);
        }
        rc = GUARDED(MPI_Win_wait(win), "MPI_Win_wait");
        if (d_completes) {
            printf("rma_origin_failure: MPI_Win_wait returned %s\n", rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error");
            check(rc, "MPI_Win_wait when the dead origin had completed its access epoch");
        } else if (rc == MPI_SUCCESS) {
            fail("MPI_Win_wait succeeded though an origin died before MPI_Win_complete", MPI_SUCCESS);
        } else {
            char e[MPI_MAX_ERROR_STRING];
            int cls, l;
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, e, &l);
            for (char *p = e; *p; p++)
                if (*p == '\n')
                    *p = ' ';
            printf("rma_origin_failure: MPI_Win_wait returned an error: %s\n", e);
            if (cls != MPIX_ERR_PROC_FAILED)
                fail("MPI_Win_wait's error is not of class MPIX_ERR_PROC_FAILED", MPI_SUCCESS);
        }
        failures += recv_from(B);
        if (!same(base + BLOCK, 2))
            fail("the target's window does not hold the bystander's data", MPI_SUCCESS);
        else
            printf("rma_origin_failure: the target holds the bystander's data\n");
    } else if (rank == D) {
        fill(src, 1);
        if (assert & MPI_MODE_NOCHECK)
            recv_from(T);
        int rc = MPI_Win_start(target, assert, win);
        if (rc == MPI_SUCCESS)
            rc = MPI_Put(src, BLOCK, MPI_BYTE, T, 0, BLOCK, MPI_BYTE, win);
        if (d_completes) {
            /* The get's response comes after T handled the put and the get with it. */
            if (rc == MPI_SUCCESS)
                rc = MPI_Get(src, 1, MPI_BYTE, T, 0, 1, MPI_BYTE, win);
            if (rc == MPI_SUCCESS)
                rc = MPI_Win_complete(win);
            check(rc, "the dying origin's access epoch");
            ssend_to(B, 1);
        } else {
            check(rc, "the dying origin's access epoch");
            ssend_to(B, 1);
            usleep(100000);
        }
        _exit(3);
    } else {
        fill(src, 2);
        if (assert & MPI_MODE_NOCHECK)
            recv_from(T);
        int rc = GUARDED(MPI_Win_start(target, assert, win), "MPI_Win_start");
        if (rc == MPI_SUCCESS)
            rc = put_block(win, src, BLOCK);
        recv_from(D);
        if (d_completes)
            usleep(500000); /* T still waits for this rank when D dies */
        if (rc == MPI_SUCCESS)
            rc = GUARDED(MPI_Win_complete(win), "MPI_Win_complete");
        check(rc, "the bystander's access epoch");
        check_rdma();
        send_to(T, failures);
    }
    pscw_after(win, base, src, world, assert);
    MPI_Group_free(&origins);
    MPI_Group_free(&target);
    MPI_Group_free(&world);
}

static void scenario_fence(MPI_Win win, unsigned char *src)
{
    int rc = GUARDED(MPI_Win_fence(0, win), "MPI_Win_fence(open)");
    check(rc, "the fence that opens the epoch");
    fill(src, rank);
    if (rank != T)
        check(MPI_Put(src, BLOCK, MPI_BYTE, T, (rank == B) * BLOCK, BLOCK, MPI_BYTE, win), "MPI_Put");
    if (rank == D) {
        usleep(100000);
        _exit(3);
    }
    rc = GUARDED(MPI_Win_fence(0, win), "MPI_Win_fence(close)");
    printf("rma_origin_failure: rank %d: the fence after the origin died returned %s\n", rank,
           rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error");
    if (rc == MPI_SUCCESS)
        fail("a fence with a dead window member succeeded", MPI_SUCCESS);
    if (rank == B) {
        check_rdma();
        send_to(T, failures);
    } else
        failures += recv_from(B);
}

/* fence-late: D's last operation is a large put, and T ends D once its first bytes landed, so
 * D has surely passed the closing fence's reduce-scatter (with the delayed issuing above, it
 * sends the put only after it) and the put never completes. T's fence counts D among the origins it waits for: it must fail, not
 * wait for ever. B is targeted by no one; its fence may succeed or fail. */
#define LATE_BYTES (64 << 20)

static volatile unsigned char *late_base;
static volatile pid_t late_victim;

static void *kill_when_landed(void *arg)
{
    (void)arg;
    while (late_base[0] == 0)
        usleep(100);
    kill(late_victim, SIGUSR2); /* its handler _exits: hydra takes a death by signal for a crash */
    return NULL;
}

static void scenario_fence_late(void)
{
    unsigned char *base = NULL, *src = NULL;
    MPI_Win win;
    pthread_t watcher;
    int pid = (int)getpid(), rc;
    MPI_Win_allocate(rank == T ? LATE_BYTES : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (rank == T) {
        memset(base, 0, LATE_BYTES);
        check(GUARDED(MPI_Recv(&pid, 1, MPI_INT, D, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv(pid)"), "MPI_Recv(pid)");
        late_base = base;
        late_victim = (pid_t)pid;
    } else if (rank == D) {
        signal(SIGUSR2, die_now);
        src = malloc(LATE_BYTES);
        if (!src)
            fail("no memory for the large put", MPI_SUCCESS);
        memset(src, 0x5a, LATE_BYTES);
        send_to(T, pid);
    }
    check(GUARDED(MPI_Win_fence(0, win), "MPI_Win_fence(open)"), "the fence that opens the epoch");
    if (rank == D)
        check(MPI_Put(src, LATE_BYTES, MPI_BYTE, T, 0, LATE_BYTES, MPI_BYTE, win), "MPI_Put");
    if (rank == T && pthread_create(&watcher, NULL, kill_when_landed, NULL) != 0)
        fail("cannot start the watcher thread", MPI_SUCCESS);
    rc = GUARDED(MPI_Win_fence(0, win), "MPI_Win_fence(close)");
    if (rank == D) /* the put went whole before the kill: nothing was tested */
        fail("the large put completed before its origin was killed", MPI_SUCCESS);
    printf("rma_origin_failure: rank %d: the fence whose origin died in its last put returned %s\n", rank,
           rc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error");
    if (rank == T) {
        pthread_join(watcher, NULL);
        if (rc == MPI_SUCCESS)
            fail("the fence succeeded though its origin's put never completed", MPI_SUCCESS);
    }
}

int main(int argc, char **argv)
{
    int nprocs;
    unsigned char *base, *src;
    MPI_Win win;
    const char *scenario = argc > 1 ? argv[1] : "";
    signal(SIGUSR1, SIG_IGN); /* hydra's notice that a rank died */
    signal(SIGALRM, on_alarm);
    MPI_Init(&argc, &argv);
    death_notices_after_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (getenv("RMA_EXPECT_RDMA")) {
        int provided;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    }
    if (argc > 2)
        limit = atoi(argv[2]);
    if (nprocs != 3) {
        if (rank == 0)
            printf("rma_origin_failure: FAIL: needs 3 processes, not %d\n", nprocs);
        MPI_Finalize();
        return 1;
    }
    MPI_Alloc_mem(BLOCK, MPI_INFO_NULL, &src);
    MPI_Win_allocate(2 * BLOCK, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(base, 0, 2 * BLOCK);
    MPI_Barrier(MPI_COMM_WORLD);
    warm_up(win, src);
    MPI_Barrier(MPI_COMM_WORLD);

    if (!strcmp(scenario, "exclusive"))
        scenario_exclusive(win, base, src);
    else if (!strcmp(scenario, "shared"))
        scenario_shared(win, base, src);
    else if (!strcmp(scenario, "queued"))
        scenario_queued(win, base, src);
    else if (!strcmp(scenario, "pscw"))
        scenario_pscw(win, base, src, 0, 0);
    else if (!strcmp(scenario, "pscw-done"))
        scenario_pscw(win, base, src, 1, 0);
    else if (!strcmp(scenario, "pscw-nocheck"))
        scenario_pscw(win, base, src, 0, MPI_MODE_NOCHECK);
    else if (!strcmp(scenario, "pscw-nocheck-done"))
        scenario_pscw(win, base, src, 1, MPI_MODE_NOCHECK);
    else if (!strcmp(scenario, "fence"))
        scenario_fence(win, src);
    else if (!strcmp(scenario, "fence-late"))
        scenario_fence_late();
    else if (rank == T)
        fail("unknown scenario (exclusive, shared, queued, pscw, pscw-done, pscw-nocheck, pscw-nocheck-done, fence, fence-late)", MPI_SUCCESS);

    if (rank == T) {
        printf(failures ? "rma_origin_failure: FAIL (%d)\n" : "rma_origin_failure: OK\n", failures);
        fflush(stdout);
    }
    /* The window cannot be freed collectively with a dead member; finish without it. */
    (void)GUARDED(MPI_Finalize(), "MPI_Finalize");
    return failures != 0;
}
