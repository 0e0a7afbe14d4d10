/* SPDX-License-Identifier: BSD-3-Clause */
/* The channel's eager limit (eager_max, MPIR_CVAR_CH3_SCTP_EAGER_MAX) decides how a send travels.
 *
 * Rank 0 starts a send of BYTES to rank 1, which posts its receive only after a second message
 * that rank 0 sends once it has tested the first for a while. An eager send completes on its own
 * (the data leaves without the receiver); a rendezvous send cannot complete before the receive
 * is posted. So the first send's state before the second message tells which protocol carried
 * it, with no timing involved; the data is checked either way.
 *
 *   eager_limit <bytes> eager|rendezvous   (2 ranks)
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_NAME "eager_limit"
static int rank;
#include "check.h"

enum { TAG_DATA = 1, TAG_GO = 2 };
enum { RENDEZVOUS_TESTS = 300, EAGER_GIVE_UP_TESTS = 30000 }; /* MPI_Test calls, 1 ms apart */

static unsigned char pattern(size_t i) { return (unsigned char) (i * 13 + 5); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3 || (strcmp(argv[2], "eager") != 0 && strcmp(argv[2], "rendezvous") != 0))
        FAIL("usage: eager_limit <bytes> eager|rendezvous");
    const size_t bytes = strtoul(argv[1], NULL, 10);
    const int expect_eager = strcmp(argv[2], "eager") == 0;
    unsigned char *buf = malloc(bytes);
    if (!buf)
        FAIL("out of memory for %zu bytes", bytes);
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        for (size_t i = 0; i < bytes; i++)
            buf[i] = pattern(i);
        MPI_Request req;
        int done = 0, tests = 0;
        CHK(MPI_Isend(buf, (int) bytes, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req));
        /* Eager: wait for completion (the bound only turns a wrong protocol into a clear FAIL).
         * Rendezvous: the receive is not posted yet, so no number of tests may complete it. */
        const int limit = expect_eager ? EAGER_GIVE_UP_TESTS : RENDEZVOUS_TESTS;
        while (!done && tests++ < limit) {
            CHK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
            if (!done)
                usleep(1000);
        }
        CHK(MPI_Send(&done, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD));
        CHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (done != expect_eager)
            FAIL("a send of %zu bytes %s before its receive was posted: it went %s, expected %s", bytes,
                 done ? "completed" : "did not complete", done ? "eagerly" : "by rendezvous", argv[2]);
    } else if (rank == 1) {
        int sender_done = -1;
        CHK(MPI_Recv(&sender_done, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        memset(buf, 0, bytes);
        CHK(MPI_Recv(buf, (int) bytes, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (size_t i = 0; i < bytes; i++)
            if (buf[i] != pattern(i))
                FAIL("byte %zu of %zu is %u, expected %u", i, bytes, buf[i], pattern(i));
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("eager_limit: OK (%zu bytes went %s)\n", bytes, argv[2]);
    free(buf);
    MPI_Finalize();
    return 0;
}
