/* SPDX-License-Identifier: BSD-3-Clause */
/* The job that tests/adversary/run attacks: two ranks swap checked messages, and put checked
 * blocks into each other's window (by RDMA on ch3:hybrid with a put threshold of 1), while a
 * process outside the job attacks rank 0. Rank 0 writes its port name (which holds its business card) to
 * argv[1] once the job runs; both ranks go on until the file argv[2] exists (the attacks are over)
 * or 120 s pass. Then each rank prints its peak RSS growth and its refusal counters (MPI_T:
 * ch3_sctp_auth_failures, ch3_sctp_bound_aborts, and on ch3:hybrid ch3_hybrid_qp_proof_failures),
 * and on ch3:hybrid ch3_hybrid_rdma_puts), and the job fails if a single byte arrived wrong. */
#define _DEFAULT_SOURCE /* usleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TEST_NAME "adversary_victim"
static int rank;
#include "check.h"

enum { WORDS = 16384, MAX_SECONDS = 120 };

/* VmHWM or VmRSS of this process, in KiB. */
static long status_kib(const char *field)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, strlen(field)) == 0)
            kib = atol(line + strlen(field) + 1);
    fclose(f);
    return kib;
}

static unsigned word(int round, int from, int i) { return (unsigned) round * 2654435761u ^ (unsigned) from << 24 ^ (unsigned) i; }

int main(int argc, char **argv)
{
    int size, provided;
    unsigned *out = malloc(WORDS * sizeof(unsigned)), *in = malloc(WORDS * sizeof(unsigned)), *win_mem;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || argc != 3)
        FAIL("usage: mpiexec -n 2 adversary_victim <port file> <done file>");
    CHK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    /* The window opens ch3:hybrid's RNIC, which the attacker goes for too. */
    CHK(MPI_Win_allocate(WORDS * sizeof(unsigned), sizeof(unsigned), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win));
    const long rss_before = status_kib("VmRSS:");
    if (rank == 0) {
        char port[MPI_MAX_PORT_NAME], tmp[4096];
        CHK(MPI_Open_port(MPI_INFO_NULL, port));
        snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%s\n", port) < 0 || fclose(f) != 0 || rename(tmp, argv[1]) != 0)
            FAIL("cannot write the port name to %s", argv[1]);
        CHK(MPI_Close_port(port));
    }
    const time_t start = time(NULL);
    int round = 0, stop = 0;
    while (!stop) {
        const int peer = 1 - rank;
        for (int i = 0; i < WORDS; i++)
            out[i] = word(round, rank, i);
        /* Rank 0 decides when to stop, and tells rank 1 after the round. */
        int want_stop = rank == 0 && (access(argv[2], F_OK) == 0 || time(NULL) - start > MAX_SECONDS);
        CHK(MPI_Sendrecv(out, WORDS, MPI_UNSIGNED, peer, round, in, WORDS, MPI_UNSIGNED, peer, round,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < WORDS; i++)
            if (in[i] != word(round, peer, i))
                FAIL("round %d: word %d from rank %d is %#x, expected %#x", round, i, peer, in[i], word(round, peer, i));
        CHK(MPI_Win_fence(0, win));
        CHK(MPI_Put(out, WORDS, MPI_UNSIGNED, peer, 0, WORDS, MPI_UNSIGNED, win));
        CHK(MPI_Win_fence(0, win));
        for (int i = 0; i < WORDS; i++)
            if (win_mem[i] != word(round, peer, i))
                FAIL("round %d: put word %d from rank %d is %#x, expected %#x", round, i, peer, win_mem[i],
                     word(round, peer, i));
        CHK(MPI_Bcast(&want_stop, 1, MPI_INT, 0, MPI_COMM_WORLD));
        stop = want_stop;
        round++;
        usleep(2000);
    }
    printf("%s: rank %d: %d rounds checked, RSS %ld KiB at start, peak growth %ld KiB, now %+ld KiB; "
           "auth_failures %lld, bound_aborts %lld, qp_proof_failures %lld, rdma_puts %lld\n",
           TEST_NAME, rank, round, rss_before, status_kib("VmHWM:") - rss_before, status_kib("VmRSS:") - rss_before,
           pvar_counter("ch3_sctp_auth_failures"), pvar_counter("ch3_sctp_bound_aborts"),
           pvar_counter("ch3_hybrid_qp_proof_failures"), pvar_counter("ch3_hybrid_rdma_puts"));
    fflush(stdout);
    CHK(MPI_Win_free(&win));
    CHK(MPI_T_finalize());
    MPI_Finalize();
    if (rank == 0)
        printf("%s: OK\n", TEST_NAME);
    free(out);
    free(in);
    return 0;
}
