/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI_T performance variables of ch3:sctp's paths (ch3_pvars.c): found by name with the
 * documented class, type and count (4 per rank of MPI_COMM_WORLD); after every other rank sends
 * rank 0 one MiB, rank 0 reads the path of each sender as active and at least that many bytes
 * received from it, and the counter grows by at least one more MiB after a second message. A rank
 * that never talked to another reads its entries as "none" and 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_NAME "path_pvars"
static int rank;
#include "check.h"

enum { PATHS = 4, MIB = 1 << 20 };

static int pvar_index(const char *name, int cls)
{
    int index;
    if (MPI_T_pvar_get_index(name, cls, &index) != MPI_SUCCESS)
        FAIL("no performance variable '%s' of class %d", name, cls);
    return index;
}

static void check_info(int index, const char *name, MPI_Datatype want_type, int want_enum)
{
    char n[128], desc[512];
    int nlen = sizeof n, dlen = sizeof desc, verb, cls, bind, readonly, continuous, atomic;
    MPI_Datatype type;
    MPI_T_enum et;
    CHK(MPI_T_pvar_get_info(index, n, &nlen, &verb, &cls, &type, &et, desc, &dlen, &bind, &readonly, &continuous,
                            &atomic));
    if (strcmp(n, name) != 0 || type != want_type || !readonly || !continuous || bind != MPI_T_BIND_NO_OBJECT)
        FAIL("%s: name '%s', readonly %d, continuous %d, bind %d, or its datatype is not the documented one", name, n,
             readonly, continuous, bind);
    if (want_enum) {
        int items;
        char ename[64], item[64];
        int elen = sizeof ename, ilen = sizeof item, value;
        CHK(MPI_T_enum_get_info(et, &items, ename, &elen));
        if (items != 5)
            FAIL("%s: enum '%s' has %d items, expected 5", name, ename, items);
        CHK(MPI_T_enum_get_item(et, 1, &value, item, &ilen));
        if (value != 1 || strcmp(item, "active") != 0)
            FAIL("%s: enum item 1 is '%s' = %d, expected 'active' = 1", name, item, value);
    }
}

static void read_all(MPI_T_pvar_session s, MPI_T_pvar_handle h, void *buf) { CHK(MPI_T_pvar_read(s, h, buf)); }

int main(int argc, char **argv)
{
    int size, provided, count_state, count_rx, count_srtt;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));

    const int i_state = pvar_index("ch3_sctp_path_state", MPI_T_PVAR_CLASS_STATE);
    const int i_rx = pvar_index("ch3_sctp_path_rx_bytes", MPI_T_PVAR_CLASS_COUNTER);
    const int i_srtt = pvar_index("ch3_sctp_path_srtt_us", MPI_T_PVAR_CLASS_LEVEL);
    check_info(i_state, "ch3_sctp_path_state", MPI_INT, 1);
    check_info(i_rx, "ch3_sctp_path_rx_bytes", MPI_UNSIGNED_LONG_LONG, 0);
    check_info(i_srtt, "ch3_sctp_path_srtt_us", MPI_UNSIGNED, 0);

    MPI_T_pvar_session session;
    MPI_T_pvar_handle h_state, h_rx, h_srtt;
    CHK(MPI_T_pvar_session_create(&session));
    CHK(MPI_T_pvar_handle_alloc(session, i_state, NULL, &h_state, &count_state));
    CHK(MPI_T_pvar_handle_alloc(session, i_rx, NULL, &h_rx, &count_rx));
    CHK(MPI_T_pvar_handle_alloc(session, i_srtt, NULL, &h_srtt, &count_srtt));
    if (count_state != size * PATHS || count_rx != size * PATHS || count_srtt != size * PATHS)
        FAIL("counts %d %d %d, expected %d (4 paths per rank)", count_state, count_rx, count_srtt, size * PATHS);

    int *state = calloc((size_t) size * PATHS, sizeof(int));
    unsigned long long *rx = calloc((size_t) size * PATHS, sizeof(unsigned long long)), *rx2 = calloc((size_t) size * PATHS, sizeof(unsigned long long));
    unsigned *srtt = calloc((size_t) size * PATHS, sizeof(unsigned));
    char *buf = malloc(MIB);

    /* Before any traffic: nothing for anyone (MPI_Init connects no pair). */
    read_all(session, h_state, state);
    read_all(session, h_rx, rx);
    for (int i = 0; i < size * PATHS; i++)
        if (state[i] != 0 || rx[i] != 0)
            FAIL("entry %d (rank %d path %d) reads state %d, %llu bytes before any traffic", i, i / PATHS, i % PATHS,
                 state[i], rx[i]);

    for (int round = 0; round < 2; round++) {
        if (rank == 0) {
            for (int src = 1; src < size; src++) {
                CHK(MPI_Recv(buf, MIB, MPI_CHAR, src, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                for (int k = 0; k < MIB; k += 4096)
                    if (buf[k] != (char) (src + round))
                        FAIL("round %d: byte %d from rank %d is %d", round, k, src, buf[k]);
            }
            read_all(session, h_state, state);
            read_all(session, h_rx, round ? rx2 : rx);
            read_all(session, h_srtt, srtt);
            for (int src = 1; src < size; src++) {
                unsigned long long total = 0, before = 0;
                for (int p = 0; p < PATHS; p++) {
                    total += (round ? rx2 : rx)[src * PATHS + p];
                    before += rx[src * PATHS + p];
                }
                if (state[src * PATHS] != 1)
                    FAIL("round %d: the first path to rank %d reads state %d, expected active (1)", round, src,
                         state[src * PATHS]);
                if (total < (unsigned long long) (round + 1) * MIB)
                    FAIL("round %d: %llu bytes received from rank %d, at least %d were", round, total, src,
                         (round + 1) * MIB);
                if (round && total < before + MIB)
                    FAIL("the byte counter of rank %d grew from %llu to %llu over one more MiB", src, before, total);
            }
            for (int p = 0; p < PATHS; p++)
                if (state[p] != 0)
                    FAIL("rank 0 has a path %d to itself (state %d)", p, state[p]);
        } else {
            memset(buf, (char) (rank + round), MIB);
            CHK(MPI_Send(buf, MIB, MPI_CHAR, 0, round, MPI_COMM_WORLD));
        }
    }
    /* Rank 1 never talked to rank 2 yet (point-to-point only so far). */
    if (rank == 1 && size > 2) {
        read_all(session, h_state, state);
        read_all(session, h_rx, rx);
        for (int p = 0; p < PATHS; p++)
            if (state[2 * PATHS + p] != 0 || rx[2 * PATHS + p] != 0)
                FAIL("rank 1 reads path %d to rank 2 (never used) as state %d, %llu bytes", p, state[2 * PATHS + p],
                     rx[2 * PATHS + p]);
    }

    CHK(MPI_T_pvar_handle_free(session, &h_state));
    CHK(MPI_T_pvar_handle_free(session, &h_rx));
    CHK(MPI_T_pvar_handle_free(session, &h_srtt));
    CHK(MPI_T_pvar_session_free(&session));
    CHK(MPI_T_finalize());
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("path_pvars: OK (%d ranks)\n", size);
    free(state);
    free(rx);
    free(rx2);
    free(srtt);
    free(buf);
    MPI_Finalize();
    return 0;
}
