/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recv_peer_failure: a rank dies while its large message is arriving; the receive already being
 * filled (matched, so in no queue CH3 fails when the VC dies) must return an error instead of
 * waiting forever for the rest of the bytes.
 *
 * Rank 1 starts a 512 MiB MPI_Isend to rank 0, keeps it moving for 50 ms and _exits; rank 0's
 * MPI_Recv of it is bounded by alarm() (first argument, seconds, default 30). Required: the
 * receive returns. An error is what a death mid-message gives; a success (the whole message
 * arrived first) is printed but accepted. Rank 0 prints "recv_peer_failure: OK" or "... FAIL".
 *
 * With "late" (second argument), rank 0 posts its receive only after rank 1 died: it probes until
 * the request-to-send is there (unexpected), tells rank 1 so, which then _exits, and 0.2 s later
 * receives. The receive matches the request-to-send, sends its clear-to-send to the dead rank and
 * then waits for data that never comes (also in no queue CH3 fails). On a loaded machine the first
 * form can meet the same case, when rank 1 dies before the clear-to-send reaches it.
 *
 * With "unproven", rank 1 sends one small (eager) message and leaves MPI at once, then _exits:
 * its new link's hello went out, but it never answered rank 0's challenge, so its message stays
 * with it and rank 0 never learns who that association was (the transport's on_unproven_end).
 * Rank 0's receive of that message must fail, not wait forever.
 *
 * With "silent", rank 1 _exits right after MPI_Init, before any message: no association with it
 * ever exists, so only the process manager can tell rank 0 (hydra's PMI_dead_processes and its
 * SIGUSR1 under -disable-auto-cleanup). Rank 0's receive must fail, and so must a later send
 * (known dead, the rank gets nothing: a success would mean a byte silently lost).
 *
 *   mpiexec -disable-auto-cleanup -n 2 recv_peer_failure [limit_s [late|unproven|silent]]
 */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include "death_notices.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BYTES (512 << 20)

static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "recv_peer_failure: FAIL: hang: MPI_Recv from the dead rank did not return\n";
    ssize_t ignored = write(1, m, sizeof m - 1);
    (void)ignored;
    _exit(1);
}

int main(int argc, char **argv)
{
    int rank, nprocs, limit = argc > 1 ? atoi(argv[1]) : 30;
    int late = argc > 2 && strcmp(argv[2], "late") == 0;
    int unproven = argc > 2 && strcmp(argv[2], "unproven") == 0;
    int silent = argc > 2 && strcmp(argv[2], "silent") == 0;
    signal(SIGUSR1, SIG_IGN); /* hydra's notice that a rank died */
    signal(SIGALRM, on_alarm);
    MPI_Init(&argc, &argv);
    death_notices_after_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char *buf = calloc(BYTES, 1);
    if (nprocs != 2 || !buf) {
        if (rank == 0)
            printf("recv_peer_failure: FAIL: needs 2 processes and %d MiB\n", BYTES >> 20);
        MPI_Finalize();
        return 1;
    }
    if (rank == 1) {
        MPI_Request r;
        int done = 0;
        if (silent)
            _exit(3);
        if (unproven) {
            MPI_Send(buf, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            usleep(100000); /* out of MPI: rank 0's challenge is never answered */
            _exit(3);
        }
        MPI_Isend(buf, BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r);
        if (late) {
            char go;
            MPI_Recv(&go, 1, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            _exit(3);
        }
        for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.05 && !done;)
            MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        _exit(3);
    }
    alarm(limit);
    if (late) {
        int there = 0;
        char go = 1;
        while (!there)
            MPI_Iprobe(1, 1, MPI_COMM_WORLD, &there, MPI_STATUS_IGNORE);
        MPI_Send(&go, 1, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
        usleep(200000);
    }
    int rc = MPI_Recv(buf, BYTES, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    alarm(0);
    printf("recv_peer_failure: MPI_Recv returned %s\n",
           rc == MPI_SUCCESS ? "MPI_SUCCESS (the whole message came before the death)" : "an error");
    if (silent) {
        /* rank 1 never sent anything: a success would be invented data */
        if (rc == MPI_SUCCESS)
            printf("recv_peer_failure: FAIL: a receive from a rank that sent nothing succeeded\n");
        rc = MPI_Send(buf, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        printf("recv_peer_failure: a later MPI_Send to it returned %s\n",
               rc == MPI_SUCCESS ? "MPI_SUCCESS: FAIL (the byte went nowhere)" : "an error");
    }
    printf("recv_peer_failure: OK\n");
    fflush(stdout);
    alarm(limit);
    MPI_Finalize();
    return 0;
}
