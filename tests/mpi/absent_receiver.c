/* SPDX-License-Identifier: BSD-3-Clause */
/* A receiver that stays out of MPI for a while must not lose its peer.
 *
 * Rank 0 posts many eager sends (more than the receiver's SCTP receive window holds) to rank 1,
 * which computes (sleeps) for SECONDS before its first receive, as an application between two
 * communication phases does. Over usrsctp the sender then probes a zero window for that long;
 * the stack's default gave up after 30 probes of one chunk (about 7 s) and aborted the
 * association. Every message must arrive once, in order, with its contents.
 *
 *   absent_receiver [seconds] [messages]   (defaults 12 and 600; 2 ranks)
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_NAME "absent_receiver"
static int rank;
#include "check.h"

enum { SIZE = 60000 }; /* eager (below the 64 KiB switch) and several SCTP packets */

static unsigned char pattern(int msg, int i) { return (unsigned char) (msg * 31 + i * 7); }

int main(int argc, char **argv)
{
    int seconds = argc > 1 ? atoi(argv[1]) : 12;
    int count = argc > 2 ? atoi(argv[2]) : 600;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    unsigned char *buf = malloc((size_t) count * SIZE);
    if (!buf)
        FAIL("out of memory for %d messages", count);
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_Request *req = malloc(count * sizeof *req);
        for (int m = 0; m < count; m++) {
            unsigned char *b = buf + (size_t) m * SIZE;
            for (int i = 0; i < SIZE; i++)
                b[i] = pattern(m, i);
            CHK(MPI_Isend(b, SIZE, MPI_BYTE, 1, m, MPI_COMM_WORLD, &req[m]));
        }
        CHK(MPI_Waitall(count, req, MPI_STATUSES_IGNORE));
        free(req);
    } else if (rank == 1) {
        sleep(seconds); /* not in MPI: nothing drains the socket */
        for (int m = 0; m < count; m++) {
            MPI_Status st;
            CHK(MPI_Recv(buf, SIZE, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            if (st.MPI_TAG != m)
                FAIL("message %d arrived as number %d", st.MPI_TAG, m);
            for (int i = 0; i < SIZE; i++)
                if (buf[i] != pattern(m, i))
                    FAIL("message %d byte %d is %d, expected %d", m, i, buf[i], pattern(m, i));
        }
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("%s: OK (%d messages of %d bytes, receiver away %d s)\n", TEST_NAME, count, SIZE, seconds);
    free(buf);
    MPI_Finalize();
    return 0;
}
