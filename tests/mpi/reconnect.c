/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reconnect: MPI_Comm_connect / MPI_Comm_accept / MPI_Comm_disconnect between the same two
 * processes, many times over. Each cycle makes CH3 a temporary VC on both sides (and the
 * process-group exchange VCs), which the channel links onto the one SCTP association the two
 * processes share; a channel that never gives those links back runs out of them (128 per side
 * and association) or grows without bound. Each cycle exchanges checked data both ways.
 *
 * Usage: mpiexec -n 2 reconnect [cycles]   (default 300)
 */
#define TEST_NAME "reconnect"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
#include "check.h"

/* Resident set in KiB, from /proc (0 where there is none). */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = atol(line + 6);
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    int size, cycles = argc > 1 ? atoi(argv[1]) : 300;
    char port[MPI_MAX_PORT_NAME];
    long rss_at_10 = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        FAIL("needs exactly 2 ranks, has %d", size);

    if (rank == 0)
        CHK(MPI_Open_port(MPI_INFO_NULL, port));
    CHK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));

    for (int c = 0; c < cycles; c++) {
        MPI_Comm inter;
        int out[4], in[4];
        if (rank == 0)
            CHK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter));
        else
            CHK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter));
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        for (int i = 0; i < 4; i++)
            out[i] = c * 1000 + rank * 100 + i;
        CHK(MPI_Sendrecv(out, 4, MPI_INT, 0, c, in, 4, MPI_INT, 0, c, inter, MPI_STATUS_IGNORE));
        for (int i = 0; i < 4; i++)
            if (in[i] != c * 1000 + (1 - rank) * 100 + i)
                FAIL("cycle %d: word %d is %d, expected %d", c, i, in[i], c * 1000 + (1 - rank) * 100 + i);
        CHK(MPI_Comm_disconnect(&inter));
        if (c == 10)
            rss_at_10 = rss_kib();
    }
    /* Memory the cycles kept: printed, not judged (the allocator's own growth varies). */
    printf("reconnect: rank %d: %d cycles, RSS after cycle 10 %ld KiB, at the end %ld KiB\n", rank,
           cycles, rss_at_10, rss_kib());
    if (rank == 0)
        CHK(MPI_Close_port(port));
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("reconnect: OK\n");
    MPI_Finalize();
    return 0;
}
