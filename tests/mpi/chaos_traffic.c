/* SPDX-License-Identifier: BSD-3-Clause */
/* chaos_traffic: checked traffic for the chaos runner (tests/vcluster/chaos), which fails and
 * heals rails, switches loss on and off and changes rail rates while this runs.
 *
 *   chaos_traffic SECONDS [p2p|rma] [SEED]      (2 <= ranks <= 64)
 *
 * Rounds until rank 0's clock says SECONDS are over. Every rank derives each round's plan from
 * (SEED, round), so all agree on it without sending it. A round is:
 *   p2p          each rank sends 1..8 messages of 1 B .. 1 MiB (log-uniform, eager and
 *                rendezvous, some synchronous) to rank+shift and receives as many from
 *                rank-shift, the shift changing every round (so pairs and directions vary);
 *                the receives are posted in order with one tag, so a lost, duplicated or
 *                reordered message shows as a wrong header; every byte is checked
 *   collectives  allreduce (exact int64 sums), bcast from a varying root, alltoall; every
 *                element checked
 *   rma          (with "rma") in one lock_all epoch, puts of 1 B .. 256 KiB to 1..3 targets
 *                and gets of their never-written source blocks, flush, gets of what was put
 *                (read back after the flush), unlock_all; then each target checks what every
 *                origin put into its window. On ch3:hybrid run with the PUT/GET thresholds at 1
 *                and CHAOS_EXPECT_RDMA=1: the job fails unless RDMA carried puts and gets;
 *                CHAOS_EXPECT_NO_FALLBACK=1 also fails it if a transfer fell back to SCTP
 *
 * Every blocking call is bounded by alarm() (CHAOS_HANG_S, default 60 s): a call that does not
 * return prints "chaos_traffic: rank R: FAIL: hang in <call> (...)" and the rank exits with 3.
 * A wrong byte prints a FAIL line with the rank, round, peer, message, offset, expected and
 * got, and aborts the job. Rank 0 prints a progress line per second on stderr and ends with
 * "chaos_traffic: OK rounds N ... verified B bytes".
 *
 * CHAOS_TEST_SLEEP=RANK:ROUND (a test of the runner's hang handling only): that rank stops
 * calling MPI for 10 minutes when it reaches that round. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TEST_NAME "chaos_traffic"
static int rank;
#include "check.h"

enum { MAX_MSGS = 8, MAX_MSG = 1 << 20, SLACK = 64, TAG_P2P = 7, MAX_TARGETS = 3 };
enum { MAX_BCAST = 256 << 10, MAX_A2A_BLOCK = 16 << 10, MAX_REDUCE = 4096 };
enum { SLOT = 256 << 10, SRC_BYTES = 256 << 10 }; /* window: P put slots, then the source block */
#define MAGIC 0x43484153u                         /* "CHAS": first word of a p2p header */

static int P;
static uint64_t seed;
static long round_no;            /* the round being run (FAIL lines and hang reports name it) */
static char phase[64] = "start"; /* what the round is doing, for hang reports */

/* ---- counts ------------------------------------------------------------------------------ */
enum { N_MSGS, N_COLL, N_PUTS, N_GETS, N_VERIFIED, N_COUNTS };
static unsigned long long counts[N_COUNTS];

/* ---- bounded calls ------------------------------------------------------------------------ */
static unsigned hang_seconds = 60;
static char hang_msg[256];
static size_t hang_len;

/* Only async-signal-safe calls here; the message was formatted when the call began. */
static void on_alarm(int sig)
{
    (void) sig;
    ssize_t ignored = write(2, hang_msg, hang_len);
    (void) ignored;
    struct timespec pause = {0, 200000000}; /* let the proxy forward the line (check.h says why) */
    nanosleep(&pause, NULL);
    _exit(3);
}

static void guard(const char *call, int peer)
{
    int n = snprintf(hang_msg, sizeof hang_msg,
                     "%s: rank %d: FAIL: hang in %s (round %ld, %s, peer %d): no return in %u s\n",
                     TEST_NAME, rank, call, round_no, phase, peer, hang_seconds);
    hang_len = n < 0 ? 0 : (size_t) n < sizeof hang_msg ? (size_t) n : sizeof hang_msg - 1;
    alarm(hang_seconds);
}

static void unguard(void) { alarm(0); }

/* A blocking MPI call that must return within hang_seconds; PEER is -1 when there is none. */
#define BOUNDED(peer, call)                                                                        \
    do {                                                                                           \
        guard(#call, (peer));                                                                      \
        CHK(call);                                                                                 \
        unguard();                                                                                 \
    } while (0)

/* ---- the plan: the same pseudo-random numbers on every rank ------------------------------- */
static uint64_t mix(uint64_t x) /* splitmix64's finaliser */
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A number for (round, what, a, b): each use of randomness names what it decides. */
static uint64_t draw(long round, int what, int a, int b)
{
    return mix(seed ^ mix((uint64_t) round * 1000003u ^ mix((uint64_t) what << 40 ^ (uint64_t) a << 20 ^ (uint64_t) b)));
}

enum { D_SHIFT, D_NMSGS, D_SIZE, D_SYNC, D_REDUCE, D_ROOT, D_BCAST, D_A2A, D_RMA_SHIFT, D_NTARGETS,
       D_PUT_LEN, D_PUT_OFF, D_GET_LEN, D_GET_OFF, D_NOCHECK, D_CONTENT };

/* 1 .. max bytes, log-uniform: as many small messages as large ones. */
static size_t log_uniform(uint64_t r, size_t max)
{
    int bits = 0;
    while (((size_t) 2 << bits) <= max)
        bits++;
    int b = (int) (r % (uint64_t) (bits + 1));
    size_t n = ((size_t) 1 << b) + (size_t) ((r >> 8) % ((uint64_t) 1 << b));
    return n > max ? max : n;
}

static int shift_of(long round, int what) { return 1 + (int) (draw(round, what, 0, 0) % (uint64_t) (P - 1)); }

/* ---- contents ---------------------------------------------------------------------------- */
static uint8_t pattern(uint64_t key, size_t i)
{
    return (uint8_t) ((key >> ((i & 7) * 8)) + i * 0x9du + (i >> 9));
}

static void fill(uint8_t *buf, size_t len, uint64_t key)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(key, i);
}

/* The first wrong byte of buf (and how many are wrong), or -1. */
static long first_wrong(const uint8_t *buf, size_t from, size_t len, uint64_t key, size_t key_offset,
                        size_t *wrong)
{
    long first = -1;
    *wrong = 0;
    for (size_t i = from; i < len; i++)
        if (buf[i] != pattern(key, i + key_offset)) {
            if (first < 0)
                first = (long) i;
            ++*wrong;
        }
    return first;
}

/* Checks LEN bytes against the pattern of KEY starting at pattern offset KEY_OFFSET. */
static void verify_bytes(const uint8_t *buf, size_t len, uint64_t key, size_t key_offset, const char *what,
                         int peer)
{
    size_t wrong;
    long at = first_wrong(buf, 0, len, key, key_offset, &wrong);
    if (at >= 0)
        FAIL("round %ld: %s, peer %d, %zu bytes: offset %ld is %u, expected %u (%zu bytes wrong)", round_no, what,
             peer, len, at, buf[at], pattern(key, (size_t) at + key_offset), wrong);
    counts[N_VERIFIED] += len;
}

/* ---- point-to-point ---------------------------------------------------------------------- */
/* A message of 16 bytes or more starts with who sent it in which round: seeing the header of
 * another message names what was lost, duplicated or reordered. */
typedef struct {
    uint32_t magic, src, round, index;
} header_t;

static uint64_t msg_key(long round, int src, int index) { return draw(round, D_CONTENT, src, index); }
static size_t msg_len(long round, int src, int index) { return log_uniform(draw(round, D_SIZE, src, index), MAX_MSG); }
static int msg_count(long round, int src) { return 1 + (int) (draw(round, D_NMSGS, src, 0) % MAX_MSGS); }

static void make_message(uint8_t *buf, long round, int src, int index)
{
    size_t len = msg_len(round, src, index);
    fill(buf, len, msg_key(round, src, index));
    if (len >= sizeof(header_t)) {
        header_t h = {MAGIC, (uint32_t) src, (uint32_t) round, (uint32_t) index};
        memcpy(buf, &h, sizeof h);
    }
}

static void verify_message(const uint8_t *buf, int got_len, long round, int src, int index)
{
    size_t len = msg_len(round, src, index), from = 0, wrong;
    if ((size_t) got_len != len)
        FAIL("round %ld: message %d from rank %d: %d bytes, expected %zu (lost, duplicated or reordered?)", round,
             index, src, got_len, len);
    if (len >= sizeof(header_t)) {
        header_t h;
        memcpy(&h, buf, sizeof h);
        if (h.magic != MAGIC || h.src != (uint32_t) src || h.round != (uint32_t) round ||
            h.index != (uint32_t) index)
            FAIL("round %ld: message %d from rank %d: header says rank %u round %u message %u (magic %#x): "
                 "lost, duplicated or reordered",
                 round, index, src, h.src, h.round, h.index, h.magic);
        from = sizeof h;
    }
    long at = first_wrong(buf, from, len, msg_key(round, src, index), 0, &wrong);
    if (at >= 0)
        FAIL("round %ld: message %d from rank %d, %zu bytes: offset %ld is %u, expected %u (%zu bytes wrong)", round,
             index, src, len, at, buf[at], pattern(msg_key(round, src, index), (size_t) at), wrong);
    counts[N_VERIFIED] += len;
    counts[N_MSGS]++;
}

static uint8_t *send_pool, *recv_pool; /* MAX_MSGS messages of up to MAX_MSG + SLACK each */

static void p2p_round(long round)
{
    int shift = shift_of(round, D_SHIFT), to = (rank + shift) % P, from = (rank - shift + P) % P;
    int nsend = msg_count(round, rank), nrecv = msg_count(round, from);
    snprintf(phase, sizeof phase, "p2p: %d messages to rank %d, %d from rank %d", nsend, to, nrecv, from);
    MPI_Request rq[2 * MAX_MSGS];
    MPI_Status st[2 * MAX_MSGS];
    uint8_t *rbuf[MAX_MSGS];
    size_t off = 0;
    /* Each receive has room for its message and a little more, so a longer one shows. */
    for (int k = 0; k < nrecv; k++) {
        size_t room = msg_len(round, from, k) + SLACK;
        rbuf[k] = recv_pool + off;
        off += room;
        CHK(MPI_Irecv(rbuf[k], (int) room, MPI_BYTE, from, TAG_P2P, MPI_COMM_WORLD, &rq[k]));
    }
    off = 0;
    for (int k = 0; k < nsend; k++) {
        uint8_t *b = send_pool + off;
        size_t len = msg_len(round, rank, k);
        off += len;
        make_message(b, round, rank, k);
        if (draw(round, D_SYNC, rank, k) % 4 == 0)
            CHK(MPI_Issend(b, (int) len, MPI_BYTE, to, TAG_P2P, MPI_COMM_WORLD, &rq[nrecv + k]));
        else
            CHK(MPI_Isend(b, (int) len, MPI_BYTE, to, TAG_P2P, MPI_COMM_WORLD, &rq[nrecv + k]));
    }
    BOUNDED(from, MPI_Waitall(nrecv + nsend, rq, st));
    for (int k = 0; k < nrecv; k++) {
        int n;
        CHK(MPI_Get_count(&st[k], MPI_BYTE, &n));
        verify_message(rbuf[k], n, round, from, k);
    }
}

/* ---- collectives ------------------------------------------------------------------------- */
static long long reduce_value(int r, int e, long round) { return (long long) (r + 1) * (e + 3 * round + 1) + e; }

static void allreduce_round(long round)
{
    static long long in[MAX_REDUCE], out[MAX_REDUCE];
    int n = 1 + (int) (draw(round, D_REDUCE, 0, 0) % MAX_REDUCE);
    snprintf(phase, sizeof phase, "allreduce of %d int64", n);
    for (int e = 0; e < n; e++)
        in[e] = reduce_value(rank, e, round);
    BOUNDED(-1, MPI_Allreduce(in, out, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int e = 0; e < n; e++) {
        long long want = (long long) P * (P + 1) / 2 * (e + 3 * round + 1) + (long long) P * e;
        if (out[e] != want)
            FAIL("round %ld: allreduce of %d int64: element %d is %lld, expected %lld", round, n, e, out[e], want);
    }
    counts[N_VERIFIED] += (unsigned long long) n * sizeof(long long);
    counts[N_COLL]++;
}

static void bcast_round(long round, uint8_t *buf)
{
    int root = (int) (draw(round, D_ROOT, 0, 0) % (uint64_t) P);
    size_t len = log_uniform(draw(round, D_BCAST, 0, 0), MAX_BCAST);
    uint64_t key = draw(round, D_CONTENT, -1, root);
    snprintf(phase, sizeof phase, "bcast of %zu bytes from rank %d", len, root);
    if (rank == root)
        fill(buf, len, key);
    else
        memset(buf, 0, len);
    BOUNDED(root, MPI_Bcast(buf, (int) len, MPI_BYTE, root, MPI_COMM_WORLD));
    if (rank != root)
        verify_bytes(buf, len, key, 0, "bcast from its root", root);
    counts[N_COLL]++;
}

static void alltoall_round(long round, uint8_t *out, uint8_t *in)
{
    size_t block = log_uniform(draw(round, D_A2A, 0, 0), MAX_A2A_BLOCK);
    snprintf(phase, sizeof phase, "alltoall of %zu-byte blocks", block);
    for (int j = 0; j < P; j++)
        fill(out + (size_t) j * block, block, draw(round, D_CONTENT, rank, -2 - j));
    memset(in, 0, (size_t) P * block);
    BOUNDED(-1, MPI_Alltoall(out, (int) block, MPI_BYTE, in, (int) block, MPI_BYTE, MPI_COMM_WORLD));
    for (int j = 0; j < P; j++)
        verify_bytes(in + (size_t) j * block, block, draw(round, D_CONTENT, j, -2 - rank), 0,
                     "alltoall block from rank", j);
    counts[N_COLL]++;
}

/* ---- one-sided --------------------------------------------------------------------------- */
typedef struct {
    MPI_Win win;
    uint8_t *mem;     /* P slots of SLOT bytes (slot o: what origin o puts here), then the source */
    uint8_t *origin;  /* MAX_TARGETS put blocks (MPI_Alloc_mem) */
    uint8_t *fetched; /* MAX_TARGETS get blocks, then MAX_TARGETS read-back blocks (malloc) */
} rma_t;

static uint64_t source_key(int owner) { return mix(seed ^ 0x5352430000ull ^ (uint64_t) owner); }

/* What origin o puts into target t's window in this round, its j-th target. */
typedef struct {
    int target;
    size_t put_len, put_off, get_len, get_off;
    uint64_t key;
} rma_op_t;

static int rma_targets(long round) { return 1 + (int) (draw(round, D_NTARGETS, 0, 0) % MAX_TARGETS); }

static rma_op_t rma_op(long round, int origin, int j)
{
    rma_op_t op;
    int shift = 1 + (shift_of(round, D_RMA_SHIFT) - 1 + j) % (P - 1); /* distinct, never the origin */
    op.target = (origin + shift) % P;
    op.put_len = log_uniform(draw(round, D_PUT_LEN, origin, j), SLOT);
    op.put_off = (size_t) (draw(round, D_PUT_OFF, origin, j) % (SLOT - op.put_len + 1));
    op.get_len = log_uniform(draw(round, D_GET_LEN, origin, j), SRC_BYTES);
    op.get_off = (size_t) (draw(round, D_GET_OFF, origin, j) % (SRC_BYTES - op.get_len + 1));
    op.key = draw(round, D_CONTENT, origin, 1000 + j);
    return op;
}

static MPI_Aint slot_disp(int origin, size_t off) { return (MPI_Aint) origin * SLOT + (MPI_Aint) off; }

static void rma_setup(rma_t *w)
{
    MPI_Aint bytes = (MPI_Aint) P * SLOT + SRC_BYTES;
    BOUNDED(-1, MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win));
    CHK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
    CHK(MPI_Alloc_mem(MAX_TARGETS * SLOT, MPI_INFO_NULL, &w->origin));
    w->fetched = malloc(2 * MAX_TARGETS * (size_t) SLOT);
    if (!w->fetched)
        FAIL("out of memory");
    BOUNDED(rank, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w->win));
    memset(w->mem, 0, (size_t) P * SLOT);
    fill(w->mem + (size_t) P * SLOT, SRC_BYTES, source_key(rank));
    CHK(MPI_Win_sync(w->win));
    BOUNDED(rank, MPI_Win_unlock(rank, w->win));
    BOUNDED(-1, MPI_Barrier(MPI_COMM_WORLD));
}

static void rma_teardown(rma_t *w)
{
    BOUNDED(-1, MPI_Win_free(&w->win));
    CHK(MPI_Free_mem(w->origin));
    free(w->fetched);
}

/* The origin's side: gets and puts, flush, read back what was put, all in one lock_all epoch.
 * Every other round asserts MPI_MODE_NOCHECK (no lock is exclusive here): without it the first
 * operation to each target carries CH3's lock request, which ch3:hybrid sends over SCTP, and
 * the get goes first so that the put after it can take RDMA (a get issued behind an
 * unacknowledged put also takes SCTP). */
static void rma_origin(rma_t *w, long round, int n)
{
    uint8_t *got = w->fetched, *back = w->fetched + MAX_TARGETS * (size_t) SLOT;
    int assert_mode = draw(round, D_NOCHECK, 0, 0) % 2 ? MPI_MODE_NOCHECK : 0;
    snprintf(phase, sizeof phase, "rma: lock_all epoch as origin to %d target(s)", n);
    BOUNDED(-1, MPI_Win_lock_all(assert_mode, w->win));
    for (int j = 0; j < n; j++) {
        rma_op_t op = rma_op(round, rank, j);
        uint8_t *src = w->origin + (size_t) j * SLOT;
        CHK(MPI_Get(got + (size_t) j * SLOT, (int) op.get_len, MPI_BYTE, op.target,
                    (MPI_Aint) P * SLOT + (MPI_Aint) op.get_off, (int) op.get_len, MPI_BYTE, w->win));
        fill(src, op.put_len, op.key);
        CHK(MPI_Put(src, (int) op.put_len, MPI_BYTE, op.target, slot_disp(rank, op.put_off), (int) op.put_len,
                    MPI_BYTE, w->win));
        if (j % 2)
            BOUNDED(op.target, MPI_Win_flush(op.target, w->win));
    }
    BOUNDED(-1, MPI_Win_flush_all(w->win));
    for (int j = 0; j < n; j++) {
        rma_op_t op = rma_op(round, rank, j);
        verify_bytes(got + (size_t) j * SLOT, op.get_len, source_key(op.target), op.get_off,
                     "get of the source block of rank", op.target);
        /* The flush completed the put at the target: reading it back must see all of it. */
        CHK(MPI_Get(back + (size_t) j * SLOT, (int) op.put_len, MPI_BYTE, op.target, slot_disp(rank, op.put_off),
                    (int) op.put_len, MPI_BYTE, w->win));
        BOUNDED(op.target, MPI_Win_flush(op.target, w->win));
        verify_bytes(back + (size_t) j * SLOT, op.put_len, op.key, 0, "get after flush of my put to rank",
                     op.target);
        counts[N_PUTS]++;
        counts[N_GETS] += 2;
    }
    BOUNDED(-1, MPI_Win_unlock_all(w->win));
}

/* The target's side, after every origin's unlock_all: each put that came here is in place. */
static void rma_target(rma_t *w, long round, int n)
{
    snprintf(phase, sizeof phase, "rma: checking my window");
    BOUNDED(rank, MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w->win));
    CHK(MPI_Win_sync(w->win));
    for (int origin = 0; origin < P; origin++)
        for (int j = 0; j < n; j++) {
            rma_op_t op = rma_op(round, origin, j);
            if (op.target == rank)
                verify_bytes(w->mem + slot_disp(origin, op.put_off), op.put_len, op.key, 0,
                             "put into my window by rank", origin);
        }
    BOUNDED(rank, MPI_Win_unlock(rank, w->win));
}

static void rma_round(rma_t *w, long round)
{
    int n = rma_targets(round);
    if (n > P - 1)
        n = P - 1;
    rma_origin(w, round, n);
    snprintf(phase, sizeof phase, "rma: barrier after the epoch");
    BOUNDED(-1, MPI_Barrier(MPI_COMM_WORLD));
    rma_target(w, round, n);
    snprintf(phase, sizeof phase, "rma: barrier after the checks");
    /* No origin may write my slots again before I have checked them. */
    BOUNDED(-1, MPI_Barrier(MPI_COMM_WORLD));
}

/* ch3:hybrid's MPI_T counters, summed over the ranks: puts, gets, fallbacks (-1: no counters). */
static void rdma_counters(long long all[3])
{
    int provided;
    long long mine[3];
    CHK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    mine[0] = pvar_counter("ch3_hybrid_rdma_puts");
    mine[1] = pvar_counter("ch3_hybrid_rdma_gets");
    mine[2] = pvar_counter("ch3_hybrid_rdma_fallbacks");
    CHK(MPI_T_finalize());
    BOUNDED(-1, MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD));
    if (all[0] < 0)
        return; /* some rank has no such counters: not ch3:hybrid */
    BOUNDED(-1, MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
}

static void check_rdma(const long long rdma[3])
{
    if (getenv("CHAOS_EXPECT_RDMA") && (rdma[0] <= 0 || rdma[1] <= 0))
        FAIL("CHAOS_EXPECT_RDMA is set but RDMA carried %lld puts and %lld gets", rdma[0], rdma[1]);
    if (getenv("CHAOS_EXPECT_NO_FALLBACK") && rdma[2] > 0)
        FAIL("CHAOS_EXPECT_NO_FALLBACK is set but %lld RDMA transfers fell back to SCTP", rdma[2]);
}

/* ---- the run ----------------------------------------------------------------------------- */
/* CHAOS_TEST_SLEEP=RANK:ROUND: -1 when unset or for another rank. */
static long test_sleep_round(void)
{
    const char *v = getenv("CHAOS_TEST_SLEEP");
    int r;
    long at;
    if (!v || sscanf(v, "%d:%ld", &r, &at) != 2 || r != rank)
        return -1;
    return at;
}

static void progress_line(double start, double *next)
{
    double now = MPI_Wtime();
    if (rank != 0 || now < *next)
        return;
    fprintf(stderr, "%s: progress t=%.1f s round %ld messages %llu collectives %llu puts %llu verified %llu bytes\n",
            TEST_NAME, now - start, round_no, counts[N_MSGS], counts[N_COLL], counts[N_PUTS], counts[N_VERIFIED]);
    *next = now + 1.0;
}

static void report(long rounds, const long long rdma[3])
{
    unsigned long long all[N_COUNTS];
    BOUNDED(-1, MPI_Reduce(counts, all, N_COUNTS, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank != 0)
        return;
    printf("%s: OK rounds %ld ranks %d messages %llu collectives %llu puts %llu gets %llu verified %llu bytes",
           TEST_NAME, rounds, P, all[N_MSGS], all[N_COLL], all[N_PUTS], all[N_GETS], all[N_VERIFIED]);
    if (rdma[0] > 0 || rdma[1] > 0 || getenv("CHAOS_EXPECT_RDMA"))
        printf("; RDMA carried %lld puts and %lld gets, %lld fell back to SCTP", rdma[0], rdma[1], rdma[2]);
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    if (getenv("CHAOS_HANG_S"))
        hang_seconds = (unsigned) atoi(getenv("CHAOS_HANG_S"));
    if (hang_seconds == 0)
        hang_seconds = 60;
    rank = -1;
    guard("MPI_Init", -1);
    MPI_Init(&argc, &argv);
    unguard();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (P < 2 || P > 64 || argc < 2 || argc > 4 || (argc > 2 && strcmp(argv[2], "p2p") && strcmp(argv[2], "rma")))
        FAIL("usage: chaos_traffic SECONDS [p2p|rma] [SEED], 2 to 64 ranks");
    double seconds = atof(argv[1]);
    int with_rma = argc > 2 && strcmp(argv[2], "rma") == 0;
    seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    /* Names this rank's process, so that the transport's stall report ("[sctpm PID] stall:")
     * can be traced to a rank. */
    char host[MPI_MAX_PROCESSOR_NAME];
    int host_len;
    CHK(MPI_Get_processor_name(host, &host_len));
    fprintf(stderr, "%s: rank %d pid %ld host %s\n", TEST_NAME, rank, (long) getpid(), host);

    send_pool = malloc(MAX_MSGS * (size_t) (MAX_MSG + SLACK));
    recv_pool = malloc(MAX_MSGS * (size_t) (MAX_MSG + SLACK));
    uint8_t *coll_a = malloc(64 * (size_t) MAX_A2A_BLOCK + MAX_BCAST), *coll_b = malloc(64 * (size_t) MAX_A2A_BLOCK);
    if (!send_pool || !recv_pool || !coll_a || !coll_b)
        FAIL("out of memory");
    rma_t w;
    if (with_rma)
        rma_setup(&w);

    long sleep_round = test_sleep_round();
    double start = MPI_Wtime(), next = start + 1.0;
    for (round_no = 0;; round_no++) {
        if (round_no == sleep_round)
            sleep(600);
        int go = rank != 0 || MPI_Wtime() - start < seconds;
        snprintf(phase, sizeof phase, "round start");
        BOUNDED(0, MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (!go)
            break;
        p2p_round(round_no);
        allreduce_round(round_no);
        bcast_round(round_no, coll_a);
        alltoall_round(round_no, coll_a, coll_b);
        if (with_rma)
            rma_round(&w, round_no);
        progress_line(start, &next);
    }
    long rounds = round_no;
    snprintf(phase, sizeof phase, "the end");
    if (with_rma)
        rma_teardown(&w);
    long long rdma[3] = {-1, -1, -1};
    rdma_counters(rdma);
    if (rank == 0)
        check_rdma(rdma); /* the others wait in report's reduce until the abort */
    report(rounds, rdma);
    free(send_pool);
    free(recv_pool);
    free(coll_a);
    free(coll_b);
    guard("MPI_Finalize", -1);
    MPI_Finalize();
    unguard();
    return 0;
}
