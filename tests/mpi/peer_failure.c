/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_failure: a process dies without MPI_Finalize; the survivors' operations with it must
 * fail with an error within a bounded time instead of hanging, and the survivors must still be
 * able to talk to each other and finish.
 *
 * Ranks: 0 observes, 1 dies (abort() or _exit(3), first argument), 2 (if present) is a
 * bystander.  With MPI_ERRORS_RETURN, rank 0 has a receive and a rendezvous send pending with
 * rank 1 when it dies, then tries a receive, an eager send, a synchronous send and a rendezvous
 * send to it.  Each operation is polled with MPI_Test against a deadline (second argument,
 * seconds, default 20) so that a missing error shows up as "still pending" rather than a hang,
 * and every outcome is printed.  Required: every operation returns; all but the eager send
 * return an error (an eager send may legally be buffered); a ping-pong 0 <-> 2 still works;
 * MPI_Finalize returns on ranks 0 and 2.  With "quiet" (third argument) the bystander makes no MPI
 * call from the death until its MPI_Finalize, QUIET_S seconds later, and there is no ping-pong: by
 * then its stack has ended the association with rank 1 unseen, so the close handshake's first send
 * finds it gone, and MPI_Finalize must still return.  Rank 0 prints "peer_failure: OK" or
 * "peer_failure: FAIL ...".  The rendezvous send pending at the death is the hard case: CH3
 * 4.0.2 fails only posted receives when a VC dies (MPIDI_CH3U_Complete_posted_with_error), and
 * a send that has sent its request-to-send and waits for clear-to-send sits in no CH3 queue;
 * ch3:sctp lists it per VC until the answer comes (ch3_sctp/src/ch3_awaited.c).
 *
 * Launching (hydra): mpiexec kills the whole job when a rank dies unless started with
 * -disable-auto-cleanup; it then sends SIGUSR1 to the survivors, whose default action would
 * kill them (ch3:sock installs no handler), so this program ignores SIGUSR1 before MPI_Init
 * (ch3:sctp then installs its own, see death_notices.h).  A hydra proxy also
 * SIGKILLs all of its processes when one of them dies by a signal, so abort() needs the victim
 * under its own proxy:
 *   mpiexec -disable-auto-cleanup -n 3 peer_failure exit [limit_s]
 *   mpiexec -disable-auto-cleanup -launcher fork -hosts 127.0.0.1:1,127.0.0.2:1,127.0.0.3:1 \
 *           -n 3 peer_failure abort
 * mpiexec's exit status reflects the dead rank; judge the run by rank 0's output.
 */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include "death_notices.h"
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define BIG (4 << 20)
#define QUIET_S 8 /* longer than an idle association takes to fail (heartbeats, ~2-4 s) */

static int rank, nprocs, limit = 20, failures, quiet;
static pid_t bystander_pid;
static const char *volatile step = "start";

static void say(const char *fmt, ...)
{
    va_list ap;
    printf("peer_failure: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* Last resort for calls that cannot be polled (MPI_Finalize): report, stop the bystander
 * (so mpiexec ends), exit. */
static void on_alarm(int sig)
{
    (void)sig;
    static const char a[] = "peer_failure: FAIL: hang: ", b[] = " did not return within the limit\n";
    ssize_t ignored = write(1, a, sizeof a - 1);
    ignored = write(1, (const char *)step, strlen((const char *)step));
    ignored = write(1, b, sizeof b - 1);
    (void)ignored;
    if (rank == 0 && bystander_pid > 0)
        kill(bystander_pid, SIGKILL);
    _exit(1);
}

static const char *errtext(int rc)
{
    static char s[MPI_MAX_ERROR_STRING + 64];
    if (rc == MPI_SUCCESS)
        return "MPI_SUCCESS";
    char e[MPI_MAX_ERROR_STRING];
    int l, cls;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, e, &l);
    for (char *p = e; *p; p++) /* MPICH's error strings span lines: keep one line */
        if (*p == '\n')
            *p = ' ';
    snprintf(s, sizeof s, "error class %d%s: %s", cls,
             cls == MPIX_ERR_PROC_FAILED ? " (MPIX_ERR_PROC_FAILED)" : "", e);
    return s;
}

/* One operation with the dead rank: posted nonblocking, then polled against a deadline. */
typedef struct {
    const char *what;
    int must_fail; /* 2: an error is required; 1: success or error, but it must return */
    MPI_Request r;
    int rc, done;
    double t; /* seconds from the phase start until it returned or failed to post */
} op_t;

/* rc is what the posting call returned: an error there completes the operation at once. */
static void posted(op_t *o, int rc, double t0)
{
    o->rc = rc;
    o->done = rc != MPI_SUCCESS;
    o->t = MPI_Wtime() - t0;
}

static void poll_until(int n, op_t *o, double t0, double deadline)
{
    int left = 0;
    for (int i = 0; i < n; i++)
        left += !o[i].done;
    while (left > 0 && MPI_Wtime() < deadline) {
        for (int i = 0; i < n; i++) {
            if (o[i].done)
                continue;
            int flag = 0;
            o[i].rc = MPI_Test(&o[i].r, &flag, MPI_STATUS_IGNORE);
            if (o[i].rc != MPI_SUCCESS || flag) {
                o[i].done = 1;
                o[i].t = MPI_Wtime() - t0;
                left--;
            }
        }
        usleep(1000);
    }
    for (int i = 0; i < n; i++)
        if (!o[i].done)
            o[i].t = MPI_Wtime() - t0;
}

static void report(const op_t *o)
{
    if (!o->done)
        say("%-50s STILL PENDING after %.1f s (no error reported: would hang)", o->what, o->t);
    else
        say("%-50s %s after %.2f s", o->what, errtext(o->rc), o->t);
    if (!o->done || (o->must_fail == 2 && o->rc == MPI_SUCCESS)) {
        failures++;
        if (o->done)
            say("  ^ FAIL: expected an error, got success");
    }
}

/* Small and rendezvous-sized round trips with a live peer, polled with a deadline too. */
static void ping(int peer, int initiator, char *buf)
{
    double t0 = MPI_Wtime(), deadline = t0 + 8.0 * limit;
    for (int k = 0; k < 2; k++) {
        int n = k ? BIG / 4 : 8;
        op_t o[2] = {{"ping-pong with live rank 2: send", 1, MPI_REQUEST_NULL, 0, 0, 0},
                     {"ping-pong with live rank 2: receive", 1, MPI_REQUEST_NULL, 0, 0, 0}};
        if (initiator) {
            memset(buf, 'p' + k, (size_t)n);
            posted(&o[0], MPI_Isend(buf, n, MPI_CHAR, peer, 20 + k, MPI_COMM_WORLD, &o[0].r), t0);
            posted(&o[1], MPI_Irecv(buf + BIG / 2, n, MPI_CHAR, peer, 30 + k, MPI_COMM_WORLD, &o[1].r),
                   t0);
            poll_until(2, o, t0, deadline);
        } else {
            posted(&o[1], MPI_Irecv(buf, n, MPI_CHAR, peer, 20 + k, MPI_COMM_WORLD, &o[1].r), t0);
            poll_until(1, &o[1], t0, deadline);
            if (o[1].done && o[1].rc == MPI_SUCCESS) {
                posted(&o[0], MPI_Isend(buf, n, MPI_CHAR, peer, 30 + k, MPI_COMM_WORLD, &o[0].r), t0);
                poll_until(1, &o[0], t0, deadline);
            }
        }
        for (int i = 0; i < 2; i++)
            if (!o[i].done || o[i].rc != MPI_SUCCESS) {
                if (rank == 0)
                    report(&o[i]);
                else
                    failures++;
                if (rank == 0 && o[i].done)
                    say("  ^ FAIL: communication between live ranks failed");
                if (rank == 0 && o[i].done)
                    failures++;
                return;
            }
        if (initiator && (buf[BIG / 2] != 'p' + k || buf[BIG / 2 + n - 1] != 'p' + k)) {
            say("  FAIL: ping-pong with rank 2 returned wrong data");
            failures++;
            return;
        }
    }
    if (rank == 0)
        say("%-50s ok after %.2f s", "ping-pong with live rank 2 (8 B and 1 MiB)", MPI_Wtime() - t0);
}

int main(int argc, char **argv)
{
    signal(SIGUSR1, SIG_IGN); /* hydra's notice of a dead process, see above */
    signal(SIGPIPE, SIG_IGN); /* a write to a dead peer's socket must be an error, not death */
    signal(SIGALRM, on_alarm);
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Init(&argc, &argv);
    death_notices_after_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int use_abort = !(argc > 1 && strcmp(argv[1], "exit") == 0);
    if (argc > 2)
        limit = atoi(argv[2]);
    quiet = argc > 3 && strcmp(argv[3], "quiet") == 0;
    if (nprocs < 2) {
        say("FAIL: needs at least 2 processes");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char *buf = malloc(BIG * 2);
    memset(buf, 0, BIG * 2);

    /* Warm up every connection that will matter; learn the bystander's pid. */
    int pid = (int)getpid(), pids[3] = {0, 0, 0};
    MPI_Gather(&pid, 1, MPI_INT, rank == 0 ? pids : NULL, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (nprocs > 2 && rank == 0)
        bystander_pid = (pid_t)pids[2];
    if (rank == 0 || rank == 1) {
        int other = 1 - rank;
        MPI_Sendrecv(buf, BIG / 4, MPI_CHAR, other, 1, buf + BIG, BIG / 4, MPI_CHAR, other, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank == 0 || rank == 2)
        if (nprocs > 2)
            MPI_Sendrecv(buf, 100, MPI_CHAR, 2 - rank, 2, buf + BIG, 100, MPI_CHAR, 2 - rank, 2,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 1) {
        char go;
        MPI_Recv(&go, 1, MPI_CHAR, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (use_abort)
            abort();
        _exit(3);
    }

    if (rank == 0) {
        say("rank 1 will die by %s; deadline per phase %d s", use_abort ? "abort()" : "_exit(3)",
            limit);
        static int irecv_buf[4];
        int small[2] = {1, 2};
        /* pending when the peer dies: a receive and a rendezvous send (waits for clear-to-send) */
        op_t p[2] = {{"MPI_Irecv from rank 1, pending at its death", 2, MPI_REQUEST_NULL, 0, 0, 0},
                     {"MPI_Isend 4 MiB to rank 1, pending at its death", 2, MPI_REQUEST_NULL, 0, 0, 0}};
        double t0 = MPI_Wtime();
        posted(&p[0], MPI_Irecv(irecv_buf, 4, MPI_INT, 1, 11, MPI_COMM_WORLD, &p[0].r), t0);
        posted(&p[1], MPI_Isend(buf, BIG, MPI_CHAR, 1, 12, MPI_COMM_WORLD, &p[1].r), t0);
        char go = 1;
        MPI_Send(&go, 1, MPI_CHAR, 1, 9, MPI_COMM_WORLD);
        t0 = MPI_Wtime(); /* times below count from the go signal */
        poll_until(2, p, t0, t0 + limit);
        report(&p[0]);
        report(&p[1]);

        /* later operations, after the death */
        op_t l[4] = {{"later MPI_Irecv from rank 1", 2, MPI_REQUEST_NULL, 0, 0, 0},
                     {"later MPI_Isend 8 B to rank 1 (may be buffered)", 1, MPI_REQUEST_NULL, 0, 0, 0},
                     {"later MPI_Issend 8 B to rank 1", 2, MPI_REQUEST_NULL, 0, 0, 0},
                     {"later MPI_Isend 4 MiB to rank 1", 2, MPI_REQUEST_NULL, 0, 0, 0}};
        double t1 = MPI_Wtime();
        posted(&l[0], MPI_Irecv(irecv_buf, 4, MPI_INT, 1, 13, MPI_COMM_WORLD, &l[0].r), t1);
        posted(&l[1], MPI_Isend(small, 2, MPI_INT, 1, 14, MPI_COMM_WORLD, &l[1].r), t1);
        posted(&l[2], MPI_Issend(small, 2, MPI_INT, 1, 15, MPI_COMM_WORLD, &l[2].r), t1);
        posted(&l[3], MPI_Isend(buf + BIG, BIG, MPI_CHAR, 1, 16, MPI_COMM_WORLD, &l[3].r), t1);
        poll_until(4, l, t1, t1 + limit);
        for (int i = 0; i < 4; i++)
            report(&l[i]);

        if (nprocs > 2 && !quiet)
            ping(2, 1, buf);

        if (failures) {
            say("FAIL: %d of the checks above failed (MPI_Finalize not attempted: requests with "
                "the dead rank may still be pending)", failures);
            if (bystander_pid > 0)
                kill(bystander_pid, SIGKILL);
            _exit(1);
        }
        step = "MPI_Finalize on rank 0";
        alarm((unsigned)limit);
        time_t tf = time(NULL); /* no MPI_Wtime after MPI_Finalize */
        int frc = MPI_Finalize();
        alarm(0);
        printf("peer_failure: %-50s %s after %d s\n", "MPI_Finalize on rank 0",
               frc == MPI_SUCCESS ? "MPI_SUCCESS" : "an error", (int)(time(NULL) - tf));
        printf("peer_failure: OK (errors instead of hangs; the survivors kept working and "
               "finalized)\n");
        fflush(stdout);
        return 0;
    }

    /* bystanders (rank 2 answers rank 0's ping; others only finalize) */
    if (rank == 2 && !quiet)
        ping(0, 0, buf);
    if (rank == 2 && quiet)
        sleep(QUIET_S);
    if (failures)
        _exit(1);
    step = "MPI_Finalize on a bystander";
    alarm((unsigned)(2 * limit));
    MPI_Finalize();
    alarm(0);
    return 0;
}
