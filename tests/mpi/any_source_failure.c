/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * any_source_failure: receives from MPI_ANY_SOURCE when a rank of their communicator dies. Under
 * MPICH's fault tolerance (MPIR_CVAR_ENABLE_FT=1, the MPIX_* calls), CH3 disables MPI_ANY_SOURCE
 * on every communicator holding a failed rank until MPIX_Comm_failure_ack: a waiting MPI_Recv
 * from MPI_ANY_SOURCE returns MPIX_ERR_PROC_FAILED, MPI_Test of a nonblocking one returns
 * MPIX_ERR_PROC_FAILED_PENDING and leaves it posted. A channel that never tells CH3 of the death
 * leaves such a receive waiting for ever (a live rank might still send).
 *
 * 3 ranks. Rank 0 tells rank 2 to die and blocks in MPI_Recv(MPI_ANY_SOURCE), which no one
 * answers; rank 2 _exits 0.2 s later. Required, within the alarm (first argument, seconds,
 * default 30): that receive returns MPIX_ERR_PROC_FAILED; then MPI_Test of an MPI_Irecv from
 * MPI_ANY_SOURCE returns MPIX_ERR_PROC_FAILED_PENDING with the request still pending; after
 * MPIX_Comm_failure_ack, whose acknowledged group must be {2}, rank 1 sends one message and the
 * pending request receives it, from rank 1, with its data.
 *
 * Not tested: a blocking MPI_ANY_SOURCE receive posted after the death and before the
 * acknowledgement. CH3 checks for the disabled MPI_ANY_SOURCE only after a progress wait returns
 * (MPIR_Wait_state), and nothing wakes that wait.
 *
 * With DEATH_NOTICES=off (death_notices.h) the channel learns of the death from the association
 * alone and must tell CH3 itself. (CH3 builds the acknowledged group from hydra's list, which
 * hydra fills whether or not its signal is taken.)
 *
 *   mpiexec -disable-auto-cleanup -genv MPIR_CVAR_ENABLE_FT 1 -n 3 any_source_failure [limit_s]
 */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include "death_notices.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FAIL(...) (printf("any_source_failure: FAIL: " __VA_ARGS__), printf("\n"), fflush(stdout), _exit(1))

static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "any_source_failure: FAIL: hang: the MPI_ANY_SOURCE receive did not return\n";
    ssize_t ignored = write(1, m, sizeof m - 1);
    (void)ignored;
    _exit(1);
}

static int error_class(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    int rank, nprocs, limit = argc > 1 ? atoi(argv[1]) : 30;
    signal(SIGUSR1, SIG_IGN); /* hydra's notice that a rank died */
    signal(SIGALRM, on_alarm);
    MPI_Init(&argc, &argv);
    death_notices_after_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (nprocs != 3) {
        if (rank == 0)
            printf("any_source_failure: FAIL: needs 3 processes\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    alarm(limit);
    if (rank == 2) {
        int die = 0;
        MPI_Recv(&die, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        usleep(200000); /* rank 0 is inside its MPI_Recv by now */
        _exit(3);
    }
    if (rank == 1) {
        int go = 0, value = 4242;
        if (MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            FAIL("rank 1 did not get rank 0's go-ahead");
        if (MPI_Send(&value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD) != MPI_SUCCESS)
            FAIL("rank 1 could not send to rank 0");
    } else {
        int got = -1, other = -1, go = 1, die = 1, size = -1, failed_rank = -1, zero = 0, flag = 0;
        MPI_Request req;
        MPI_Status st;
        MPI_Group acked, world;
        if (MPI_Send(&die, 1, MPI_INT, 2, 2, MPI_COMM_WORLD) != MPI_SUCCESS)
            FAIL("rank 0 could not tell rank 2 to die");
        int c = error_class(MPI_Recv(&other, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        printf("any_source_failure: the waiting MPI_ANY_SOURCE MPI_Recv returned class %d\n", c);
        if (c != MPIX_ERR_PROC_FAILED)
            FAIL("expected MPIX_ERR_PROC_FAILED (%d), got class %d", MPIX_ERR_PROC_FAILED, c);
        int rc = MPI_SUCCESS;
        MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req);
        while (rc == MPI_SUCCESS && !flag)
            rc = MPI_Test(&req, &flag, &st);
        c = error_class(rc);
        printf("any_source_failure: MPI_Test of an MPI_ANY_SOURCE MPI_Irecv returned class %d\n", c);
        if (c != MPIX_ERR_PROC_FAILED_PENDING || flag || req == MPI_REQUEST_NULL)
            FAIL("expected MPIX_ERR_PROC_FAILED_PENDING (%d) and the request pending, got class %d, flag %d",
                 MPIX_ERR_PROC_FAILED_PENDING, c, flag);
        if (MPIX_Comm_failure_ack(MPI_COMM_WORLD) != MPI_SUCCESS ||
            MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked) != MPI_SUCCESS)
            FAIL("MPIX_Comm_failure_ack or _get_acked failed");
        MPI_Group_size(acked, &size);
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        if (size == 1)
            MPI_Group_translate_ranks(acked, 1, &zero, world, &failed_rank);
        if (size != 1 || failed_rank != 2)
            FAIL("the acknowledged failed group has %d ranks (first: %d), not {2}", size, failed_rank);
        MPI_Group_free(&acked);
        MPI_Group_free(&world);
        if (MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD) != MPI_SUCCESS)
            FAIL("rank 0 could not send to rank 1");
        if (MPI_Wait(&req, &st) != MPI_SUCCESS)
            FAIL("the pending receive failed after the acknowledgement");
        if (st.MPI_SOURCE != 1 || got != 4242 || other != -1)
            FAIL("the pending receive got %d from rank %d (the failed one holds %d)", got, st.MPI_SOURCE, other);
        printf("any_source_failure: OK\n");
    }
    fflush(stdout);
    alarm(0);
    MPI_Finalize();
    return 0;
}
