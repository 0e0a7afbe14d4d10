/* SPDX-License-Identifier: BSD-3-Clause */
/* Bandwidth over time (the thesis' Figure 4.4): rank 0 streams windows of messages to rank 1
 * for a given time; rank 1 timestamps every message it completes and prints the bytes received
 * per interval, so that a rail failure and recovery show up as a dip and a return.
 *
 *   bw_timeline [-s SIZE] [-W WINDOW] [-t SECONDS] [-i INTERVAL_MS]
 *
 * Defaults: 64 KiB messages, windows of 64, 20 s, 100 ms intervals. Output (rank 1):
 *   # start_unix T       wall-clock time (s since the epoch) of t = 0, to line up events
 *   # t_s  MB/s          one line per interval, t_s = the interval's end
 *   # total ...          bytes, seconds, mean MB/s
 * Every message carries its sequence number in its first and last 8 bytes; rank 1 checks them,
 * so a lost, duplicated, reordered or truncated message aborts the run (exit status non-zero).
 * Exactly 2 ranks. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct opts {
    size_t size;
    int window;
    double seconds;
    double interval;
};

static void usage_exit(int rank, const char *why)
{
    if (rank == 0)
        fprintf(stderr, "bw_timeline: %s\nusage: bw_timeline [-s SIZE] [-W WINDOW] [-t SECONDS] "
                        "[-i INTERVAL_MS]\n", why);
    MPI_Finalize();
    exit(why[0] ? 1 : 0);
}

static struct opts parse(int argc, char **argv, int rank)
{
    struct opts o = {64 * 1024, 64, 20.0, 0.1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0)
            usage_exit(rank, "");
        if (i + 1 >= argc || a[0] != '-' || strlen(a) != 2)
            usage_exit(rank, "bad or incomplete option");
        char *end;
        double v = strtod(argv[++i], &end);
        if (*end != '\0' || v <= 0)
            usage_exit(rank, "option values must be positive numbers");
        switch (a[1]) {
        case 's': o.size = (size_t)v; break;
        case 'W': o.window = (int)v; break;
        case 't': o.seconds = v; break;
        case 'i': o.interval = v / 1000.0; break;
        default: usage_exit(rank, "unknown option");
        }
    }
    if (o.size < 16)
        usage_exit(rank, "-s must be at least 16 bytes (sequence numbers)");
    return o;
}

static void stamp(char *msg, size_t size, uint64_t seq)
{
    memcpy(msg, &seq, sizeof seq);
    memcpy(msg + size - sizeof seq, &seq, sizeof seq);
}

static void check(const char *msg, size_t size, uint64_t want)
{
    uint64_t head, tail;
    memcpy(&head, msg, sizeof head);
    memcpy(&tail, msg + size - sizeof tail, sizeof tail);
    if (head != want || tail != want) {
        fprintf(stderr, "bw_timeline: FAIL: message %llu arrived as %llu/%llu (first/last 8 bytes)\n",
                (unsigned long long)want, (unsigned long long)head, (unsigned long long)tail);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void sender(const struct opts *o, char *buf)
{
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)o->window);
    uint64_t seq = 0;
    double t0 = MPI_Wtime();
    int more = 1;
    while (more) {
        for (int w = 0; w < o->window; w++) {
            char *msg = buf + (size_t)w * o->size;
            stamp(msg, o->size, seq++);
            MPI_Isend(msg, (int)o->size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &reqs[w]);
        }
        MPI_Waitall(o->window, reqs, MPI_STATUSES_IGNORE);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        more = MPI_Wtime() - t0 < o->seconds;
        MPI_Send(&more, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    }
    free(reqs);
}

static void receiver(const struct opts *o, char *buf)
{
    size_t nbins = (size_t)(o->seconds / o->interval) + 64; /* the last window may run over */
    double *bytes = calloc(nbins, sizeof *bytes);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)o->window);
    uint64_t seq = 0;
    double t0 = MPI_Wtime(), last = t0;
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    int more = 1;
    while (more) {
        for (int w = 0; w < o->window; w++)
            MPI_Irecv(buf + (size_t)w * o->size, (int)o->size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &reqs[w]);
        for (int n = 0; n < o->window; n++) {
            int w;
            MPI_Waitany(o->window, reqs, &w, MPI_STATUS_IGNORE);
            last = MPI_Wtime();
            size_t bin = (size_t)((last - t0) / o->interval);
            if (bin < nbins)
                bytes[bin] += (double)o->size;
        }
        for (int w = 0; w < o->window; w++)
            check(buf + (size_t)w * o->size, o->size, seq++);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        MPI_Recv(&more, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    size_t used = (size_t)((last - t0) / o->interval) + 1;
    if (used > nbins)
        used = nbins;
    printf("# bw_timeline: %zu-byte messages, windows of %d, %.0f ms intervals\n", o->size,
           o->window, o->interval * 1000);
    printf("# start_unix %.3f\n# t_s MB/s\n", (double)wall.tv_sec + (double)wall.tv_nsec / 1e9);
    double total = 0;
    for (size_t b = 0; b < used; b++) {
        printf("%.3f %.2f\n", (double)(b + 1) * o->interval, bytes[b] / o->interval / 1e6);
        total += bytes[b];
    }
    printf("# total %.0f bytes in %.2f s: %.2f MB/s, %llu messages checked\n", total, last - t0,
           total / (last - t0) / 1e6, (unsigned long long)seq);
    fflush(stdout);
    free(reqs);
    free(bytes);
}

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    struct opts o = parse(argc, argv, rank);
    if (n != 2)
        usage_exit(rank, "needs exactly 2 ranks");
    char *buf = malloc(o.size * (size_t)o.window);
    if (!buf) {
        fprintf(stderr, "bw_timeline: out of memory (%zu bytes)\n", o.size * (size_t)o.window);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 0, o.size * (size_t)o.window);
    if (rank == 0)
        sender(&o, buf);
    else
        receiver(&o, buf);
    free(buf);
    MPI_Finalize();
    return 0;
}
