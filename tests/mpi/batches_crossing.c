/* SPDX-License-Identifier: BSD-3-Clause */
/* A noncontiguous message that CH3 sends in batches (it packs 256 KiB at a time and reloads the
 * request's iov), while rendezvous messages cross it the other way: the sender of the batches
 * answers their requests-to-send with clear-to-sends. The receiver appends every message from a
 * VC to the request it is filling, so a clear-to-send between two batches broke the message. The
 * receiver of the batches stays out of MPI for a while after the crossing sends started, so that
 * the batches back up behind a full send buffer (run with a small MPIR_CVAR_CH3_SCTP_SNDBUF).
 * Every element of both directions is checked. */
#define _POSIX_C_SOURCE 199309L /* nanosleep */
#define TEST_NAME "batches_crossing"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank;
#include "check.h"

enum { BLOCKS = 65536, BLOCK_LEN = 64, STRIDE = 128, CROSSING = 8, CROSSING_BYTES = 1 << 20, ROUNDS = 8 };

static void stay_out_of_mpi(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Datatype vec;
    MPI_Request rq[CROSSING + 1];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        FAIL("needs 2 processes, has %d", size);
    CHK(MPI_Type_vector(BLOCKS, BLOCK_LEN, STRIDE, MPI_DOUBLE, &vec));
    CHK(MPI_Type_commit(&vec));
    double *spread = malloc(sizeof(double) * (size_t) BLOCKS * STRIDE);
    double *packed = malloc(sizeof(double) * (size_t) BLOCKS * BLOCK_LEN);
    char *crossing = malloc((size_t) CROSSING * CROSSING_BYTES);
    if (!spread || !packed || !crossing)
        FAIL("out of memory");

    for (int round = 0; round < ROUNDS; round++) {
        int n = 0;
        if (rank == 0) {
            for (size_t i = 0; i < (size_t) BLOCKS * STRIDE; i++)
                spread[i] = (double) (i * 7 + round);
            for (int k = 0; k < CROSSING; k++)
                CHK(MPI_Irecv(crossing + (size_t) k * CROSSING_BYTES, CROSSING_BYTES, MPI_CHAR, 1, k,
                              MPI_COMM_WORLD, &rq[n++]));
            CHK(MPI_Isend(spread, 1, vec, 1, 100, MPI_COMM_WORLD, &rq[n++]));
        } else {
            int done = 0;
            for (int k = 0; k < CROSSING; k++)
                memset(crossing + (size_t) k * CROSSING_BYTES, (k + round) & 0xff, CROSSING_BYTES);
            CHK(MPI_Irecv(packed, BLOCKS * BLOCK_LEN, MPI_DOUBLE, 0, 100, MPI_COMM_WORLD, &rq[n++]));
            /* answer the vector's request-to-send, so that its batches start */
            for (double t0 = MPI_Wtime(); !done && MPI_Wtime() - t0 < 0.002;)
                CHK(MPI_Test(&rq[0], &done, MPI_STATUS_IGNORE));
            for (int k = 0; k < CROSSING; k++) {
                if (!done)
                    CHK(MPI_Test(&rq[0], &done, MPI_STATUS_IGNORE));
                CHK(MPI_Isend(crossing + (size_t) k * CROSSING_BYTES, CROSSING_BYTES, MPI_CHAR, 0, k,
                              MPI_COMM_WORLD, &rq[n++]));
            }
            stay_out_of_mpi(200);
        }
        CHK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
        if (rank == 1) {
            for (size_t b = 0; b < BLOCKS; b++)
                for (size_t j = 0; j < BLOCK_LEN; j++)
                    if (packed[b * BLOCK_LEN + j] != (double) ((b * STRIDE + j) * 7 + round))
                        FAIL("round %d: element %zu of block %zu of the vector is wrong", round, j, b);
        } else {
            for (int k = 0; k < CROSSING; k++)
                for (size_t i = 0; i < CROSSING_BYTES; i++)
                    if (crossing[(size_t) k * CROSSING_BYTES + i] != (char) ((k + round) & 0xff))
                        FAIL("round %d: byte %zu of crossing message %d is wrong", round, i, k);
        }
    }
    CHK(MPI_Type_free(&vec));
    free(spread);
    free(packed);
    free(crossing);
    if (rank == 0)
        printf("batches_crossing: OK (%d rounds of a %d-block vector against %d messages of %d bytes)\n",
               ROUNDS, BLOCKS, CROSSING, CROSSING_BYTES);
    MPI_Finalize();
    return 0;
}
