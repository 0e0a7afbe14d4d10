/* SPDX-License-Identifier: BSD-3-Clause */
/* Traffic for the failover tests (tests/vcluster/failover): ranks 0 and 1 exchange checksummed
 * messages until rank 0's clock says SECONDS are over, while the test takes rails down and up.
 *
 *   failover_stream mixed SECONDS   ping-pong of mixed sizes (0 B .. 4 MiB, eager and rendezvous):
 *                                   rank 1 checks each message and echoes it, rank 0 checks the echo
 *   failover_stream bw SECONDS      windows of 16 x 1 MiB from rank 0, rank 1 checks each, then acks
 *
 * Every message carries its sequence number and a pattern derived from it, so a lost, duplicated,
 * reordered or corrupted message fails the check. Rank 0 prints one "progress" line per second
 * (messages, bytes) on stderr so a stall is visible in the log; rank 0 ends with
 * "failover_stream: OK <messages> messages <bytes> bytes". */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TEST_NAME "failover_stream"
static int rank;
#include "check.h"

enum { TAG_DATA = 1, TAG_STOP = 2, TAG_ACK = 3, WINDOW = 16, BW_SIZE = 1 << 20 };

static const int sizes[] = {0, 1, 8, 100, 1000, 4096, 65536, 65537, 300000, 1 << 20, 4 << 20};
#define NSIZES ((int) (sizeof sizes / sizeof sizes[0]))

static uint8_t pattern(uint64_t seq, size_t i)
{
    return (uint8_t) ((seq * 131u + i * 7u + (i >> 11)) & 0xff);
}

/* The first 8 bytes (when there is room) are the sequence number, the rest the pattern. */
static void fill(uint8_t *buf, size_t len, uint64_t seq)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(seq, i);
    if (len >= sizeof seq)
        memcpy(buf, &seq, sizeof seq);
}

static void verify(const uint8_t *buf, size_t len, int got_len, uint64_t seq, const char *what)
{
    if ((size_t) got_len != len)
        FAIL("%s %llu: %d bytes, expected %zu", what, (unsigned long long) seq, got_len, len);
    size_t start = 0;
    if (len >= sizeof seq) {
        uint64_t s;
        memcpy(&s, buf, sizeof s);
        if (s != seq)
            FAIL("%s: sequence %llu where %llu was due (lost, duplicated or reordered)", what,
                 (unsigned long long) s, (unsigned long long) seq);
        start = sizeof seq;
    }
    for (size_t i = start; i < len; i++)
        if (buf[i] != pattern(seq, i))
            FAIL("%s %llu: byte %zu is %u, expected %u", what, (unsigned long long) seq, i, buf[i],
                 pattern(seq, i));
}

static void progress_line(double start, double *next, uint64_t msgs, uint64_t bytes)
{
    double now = MPI_Wtime();
    if (now < *next)
        return;
    fprintf(stderr, "failover_stream: progress t=%.1f s messages %llu bytes %llu\n", now - start,
            (unsigned long long) msgs, (unsigned long long) bytes);
    *next = now + 1.0;
}

static void mixed(double seconds)
{
    uint8_t *buf = malloc(4 << 20), *back = malloc(4 << 20);
    if (!buf || !back)
        FAIL("out of memory");
    uint64_t seq = 0, bytes = 0;
    double start = MPI_Wtime(), next = start + 1.0;
    for (;; seq++) {
        size_t len = (size_t) sizes[seq % NSIZES];
        MPI_Status st;
        int n;
        if (rank == 0) {
            int stop = MPI_Wtime() - start >= seconds;
            if (stop) {
                CHK(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_STOP, MPI_COMM_WORLD));
                break;
            }
            fill(buf, len, seq);
            CHK(MPI_Send(buf, (int) len, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD));
            CHK(MPI_Recv(back, 4 << 20, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &st));
            CHK(MPI_Get_count(&st, MPI_BYTE, &n));
            verify(back, len, n, seq, "echo");
            bytes += 2 * len;
            progress_line(start, &next, seq + 1, bytes);
        } else {
            CHK(MPI_Recv(buf, 4 << 20, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            if (st.MPI_TAG == TAG_STOP)
                break;
            CHK(MPI_Get_count(&st, MPI_BYTE, &n));
            verify(buf, len, n, seq, "message");
            CHK(MPI_Send(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD));
        }
    }
    if (rank == 0)
        printf("failover_stream: OK %llu messages %llu bytes\n", (unsigned long long) seq,
               (unsigned long long) bytes);
    free(buf);
    free(back);
}

static void bw(double seconds)
{
    uint8_t *bufs = malloc((size_t) WINDOW * BW_SIZE);
    if (!bufs)
        FAIL("out of memory");
    MPI_Request reqs[WINDOW];
    uint64_t seq = 0, bytes = 0;
    double start = MPI_Wtime(), next = start + 1.0;
    for (;;) {
        int go = 1;
        if (rank == 0)
            go = MPI_Wtime() - start < seconds;
        CHK(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (!go)
            break;
        for (int w = 0; w < WINDOW; w++) {
            uint8_t *b = bufs + (size_t) w * BW_SIZE;
            if (rank == 0) {
                fill(b, BW_SIZE, seq + w);
                CHK(MPI_Isend(b, BW_SIZE, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &reqs[w]));
            } else {
                CHK(MPI_Irecv(b, BW_SIZE, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &reqs[w]));
            }
        }
        MPI_Status st[WINDOW];
        CHK(MPI_Waitall(WINDOW, reqs, st));
        if (rank == 1) {
            for (int w = 0; w < WINDOW; w++) {
                int n;
                CHK(MPI_Get_count(&st[w], MPI_BYTE, &n));
                verify(bufs + (size_t) w * BW_SIZE, BW_SIZE, n, seq + w, "message");
            }
            CHK(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD));
        } else {
            CHK(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        seq += WINDOW;
        bytes += (uint64_t) WINDOW * BW_SIZE;
        if (rank == 0)
            progress_line(start, &next, seq, bytes);
    }
    if (rank == 0)
        printf("failover_stream: OK %llu messages %llu bytes (%.1f MB/s)\n", (unsigned long long) seq,
               (unsigned long long) bytes, bytes / 1e6 / (MPI_Wtime() - start));
    free(bufs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size != 2 || argc != 3 || (strcmp(argv[1], "mixed") && strcmp(argv[1], "bw")))
        FAIL("usage: failover_stream mixed|bw SECONDS, with 2 ranks");
    double seconds = atof(argv[2]);
    if (strcmp(argv[1], "mixed") == 0)
        mixed(seconds);
    else
        bw(seconds);
    MPI_Finalize();
    return 0;
}
