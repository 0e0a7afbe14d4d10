/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma: one-sided communication in every synchronization mode, window contents verified after
 * every epoch, with point-to-point traffic running at the same time.
 *
 * CH3 sends RMA operations as packets followed by lock, flush and unlock flags and expects the
 * channel to deliver them in order; ch3:hybrid moves some of them over a separate RDMA path,
 * which must keep the same order and completion semantics.  Operations: Put, Get, Accumulate,
 * Get_accumulate, Fetch_and_op, Compare_and_swap, request-based Rput/Rget/Raccumulate/
 * Rget_accumulate, with contiguous and derived (vector origin, indexed target) datatypes.
 * Modes: fence; post/start/complete/wait (ring and all-to-all); lock exclusive (a shared
 * counter updated by get-flush-put, which only mutual exclusion keeps exact); lock shared;
 * lock_all with flush, flush_local, flush_all, flush_local_all; request-based.  Windows from
 * MPI_Win_create, MPI_Win_allocate and MPI_Win_create_dynamic (attach/detach).  Every rank
 * rebuilds the exact expected contents of its own window and compares all of it; fetched
 * values from concurrent atomics must form one valid serial order.
 *
 * Usage: mpiexec -n N rma [rounds]      (N >= 1, up to 64; 4 is typical)
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WN 512 /* ints per window */
#define MAXP 64

static int P, me, left, right;
static MPI_Comm comm, pcomm; /* pcomm carries the concurrent point-to-point traffic */
static const char *cur_win = "", *cur_mode = "";
static MPI_Datatype vec_t, idx_t;
static const int soff[8] = {0, 1, 3, 4, 6, 7, 9, 10};   /* vector(4, 2, 3) of int */
static const int toff[8] = {0, 1, 5, 6, 9, 10, 14, 15}; /* indexed {2,2,2,2} at {0,5,9,14} */

static void fail(int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rma: rank %d: FAIL (line %d) [%s window, %s]: ", me, line, cur_win, cur_mode);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}
#define FAIL(...) fail(__LINE__, __VA_ARGS__)
#define CHK(call)                                                                  \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != MPI_SUCCESS) {                                                  \
            char s_[MPI_MAX_ERROR_STRING];                                         \
            int l_;                                                                \
            MPI_Error_string(rc_, s_, &l_);                                        \
            FAIL("%s returned error: %s", #call, s_);                              \
        }                                                                          \
    } while (0)

typedef struct {
    MPI_Win win;
    int *mem;
    MPI_Aint base[MAXP]; /* dynamic windows: every rank's attached address */
    int dyn;
} W;

static int init(int r, int k) { return r * 100000 + k * 3 + 7; } /* initial window contents */
static int val(int o, int t) { return 1000 * o + t + 11; }      /* what origin o puts into t */
static int dsrc(int o, int i) { return o * 1000 + 500 + i; }    /* derived-type source data */

/* Target displacement of int idx in rank t's window. */
static MPI_Aint D(W *w, int t, int idx)
{
    return w->dyn ? w->base[t] + (MPI_Aint)idx * (MPI_Aint)sizeof(int) : idx;
}

/* ---- expected contents and verification ------------------------------------------------ */
static void expect_init(int *e)
{
    for (int k = 0; k < WN; k++)
        e[k] = init(me, k);
    e[110] = -1; /* compare-and-swap slot */
}

static void reset(W *w)
{
    CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, w->win));
    expect_init(w->mem);
    CHK(MPI_Win_unlock(me, w->win));
    CHK(MPI_Barrier(comm));
}

static void verify(W *w, const int *e)
{
    CHK(MPI_Barrier(comm)); /* every origin has closed its epoch */
    CHK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w->win));
    for (int k = 0; k < WN; k++)
        if (w->mem[k] != e[k])
            FAIL("after the epoch my window int %d is %d, expected %d", k, w->mem[k], e[k]);
    CHK(MPI_Win_unlock(me, w->win));
    CHK(MPI_Barrier(comm)); /* nobody resets before everyone has checked */
}

/* Concurrent atomics on one location: the values each origin fetched from me must be the
 * prefix sums of one serial order, starting at the initial value. */
static void check_chain(const char *what, const int *fetched, int idx, int (*contrib)(int))
{
    int got[MAXP], ord[MAXP];
    CHK(MPI_Alltoall((void *)fetched, 1, MPI_INT, got, 1, MPI_INT, comm));
    for (int o = 0; o < P; o++)
        ord[o] = o;
    for (int i = 1; i < P; i++) /* insertion sort of origins by fetched value */
        for (int j = i; j > 0 && got[ord[j]] < got[ord[j - 1]]; j--) {
            int t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    int expectv = init(me, idx);
    for (int k = 0; k < P; k++) {
        if (got[ord[k]] != expectv)
            FAIL("%s: fetched values are not one serial order: origin %d fetched %d, expected %d",
                 what, ord[k], got[ord[k]], expectv);
        expectv += contrib(ord[k]);
    }
}
static int plus_rank1(int o) { return o + 1; }
static int plus_one(int o) { (void)o; return 1; }

/* ---- concurrent point-to-point traffic ------------------------------------------------- */
#define PN 50000 /* ints: 200 KB, rendezvous */
static int *p2p_s, *p2p_r, p2p_iter;
static int p2p_small_s, p2p_small_r;
static MPI_Request p2p_rq[4];
static void p2p_start(void)
{
    p2p_iter++;
    for (int i = 0; i < PN; i++) {
        p2p_s[i] = me * 7 + i + p2p_iter;
        p2p_r[i] = -1;
    }
    p2p_small_s = me + 1000 * p2p_iter;
    CHK(MPI_Irecv(p2p_r, PN, MPI_INT, left, p2p_iter, pcomm, &p2p_rq[0]));
    CHK(MPI_Irecv(&p2p_small_r, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, pcomm, &p2p_rq[1]));
    CHK(MPI_Isend(&p2p_small_s, 1, MPI_INT, right, 0, pcomm, &p2p_rq[2]));
    CHK(MPI_Isend(p2p_s, PN, MPI_INT, right, p2p_iter, pcomm, &p2p_rq[3]));
}
static void p2p_finish(void)
{
    CHK(MPI_Waitall(4, p2p_rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < PN; i++)
        if (p2p_r[i] != left * 7 + i + p2p_iter)
            FAIL("concurrent point-to-point message: int %d is %d, expected %d", i, p2p_r[i],
                 left * 7 + i + p2p_iter);
    if (p2p_small_r != left + 1000 * p2p_iter)
        FAIL("concurrent small message: %d, expected %d", p2p_small_r, left + 1000 * p2p_iter);
}

/* ---- modes -------------------------------------------------------------------------------- */
static void m_fence(W *w)
{
    cur_mode = "fence";
    int e[WN], putv[MAXP], one[MAXP], accv[4], getb[MAXP], dget[8], src[12];
    expect_init(e);
    reset(w);
    for (int i = 0; i < 12; i++)
        src[i] = dsrc(me, i);
    for (int j = 0; j < 4; j++)
        accv[j] = me;
    p2p_start();
    CHK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win));
    for (int t = 0; t < P; t++) {
        putv[t] = val(me, t);
        one[t] = me + 1;
        CHK(MPI_Put(&putv[t], 1, MPI_INT, t, D(w, t, me), 1, MPI_INT, w->win));
        CHK(MPI_Accumulate(&one[t], 1, MPI_INT, t, D(w, t, 64), 1, MPI_INT, MPI_SUM, w->win));
        CHK(MPI_Accumulate(accv, 4, MPI_INT, t, D(w, t, 65), 4, MPI_INT, MPI_SUM, w->win));
        CHK(MPI_Get(&getb[t], 1, MPI_INT, t, D(w, t, 200 + me % 8), 1, MPI_INT, w->win));
    }
    CHK(MPI_Put(src, 1, vec_t, right, D(w, right, 440), 1, idx_t, w->win));
    CHK(MPI_Get(dget, 8, MPI_INT, left, D(w, left, 460), 1, vec_t, w->win));
    CHK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win));
    p2p_finish();
    for (int t = 0; t < P; t++)
        if (getb[t] != init(t, 200 + me % 8))
            FAIL("Get from rank %d returned %d, expected %d", t, getb[t], init(t, 200 + me % 8));
    for (int j = 0; j < 8; j++)
        if (dget[j] != init(left, 460 + soff[j]))
            FAIL("Get with a vector target type from rank %d: element %d is %d", left, j, dget[j]);
    for (int p = 0; p < P; p++) {
        e[p] = val(p, me);
        e[64] += p + 1;
        for (int j = 0; j < 4; j++)
            e[65 + j] += p;
    }
    for (int j = 0; j < 8; j++)
        e[440 + toff[j]] = dsrc(left, soff[j]);
    verify(w, e);
}

static void m_pscw(W *w)
{
    cur_mode = "post/start/complete/wait";
    int e[WN], putv, one, getb, dget[8], src[12], gacc[MAXP], c1[MAXP];
    MPI_Group wg, gl, gr;
    MPI_Comm_group(comm, &wg);
    MPI_Group_incl(wg, 1, &left, &gl);
    MPI_Group_incl(wg, 1, &right, &gr);
    expect_init(e);
    reset(w);
    for (int i = 0; i < 12; i++)
        src[i] = dsrc(me, i);
    p2p_start();
    /* ring: expose to the left neighbour, access the right one */
    CHK(MPI_Win_post(gl, 0, w->win));
    CHK(MPI_Win_start(gr, 0, w->win));
    putv = val(me, right);
    one = me + 1;
    CHK(MPI_Put(&putv, 1, MPI_INT, right, D(w, right, me), 1, MPI_INT, w->win));
    CHK(MPI_Accumulate(&one, 1, MPI_INT, right, D(w, right, 64), 1, MPI_INT, MPI_SUM, w->win));
    CHK(MPI_Get(&getb, 1, MPI_INT, right, D(w, right, 200), 1, MPI_INT, w->win));
    CHK(MPI_Put(src, 1, vec_t, right, D(w, right, 440), 1, idx_t, w->win));
    CHK(MPI_Get(dget, 8, MPI_INT, right, D(w, right, 460), 1, vec_t, w->win));
    CHK(MPI_Win_complete(w->win));
    CHK(MPI_Win_wait(w->win));
    p2p_finish();
    if (getb != init(right, 200))
        FAIL("Get from rank %d returned %d", right, getb);
    for (int j = 0; j < 8; j++)
        if (dget[j] != init(right, 460 + soff[j]))
            FAIL("Get with a vector target type: element %d is %d", j, dget[j]);
    e[left] = val(left, me);
    e[64] += left + 1;
    for (int j = 0; j < 8; j++)
        e[440 + toff[j]] = dsrc(left, soff[j]);
    verify(w, e);

    /* all-to-all: every rank exposes to and accesses every rank; atomics on one location */
    cur_mode = "post/start/complete/wait (all ranks)";
    reset(w);
    expect_init(e);
    p2p_start();
    CHK(MPI_Win_post(wg, 0, w->win));
    CHK(MPI_Win_start(wg, 0, w->win));
    for (int t = 0; t < P; t++) {
        c1[t] = me + 1;
        CHK(MPI_Get_accumulate(&c1[t], 1, MPI_INT, &gacc[t], 1, MPI_INT, t, D(w, t, 102), 1,
                               MPI_INT, MPI_SUM, w->win));
    }
    CHK(MPI_Win_complete(w->win));
    CHK(MPI_Win_wait(w->win));
    p2p_finish();
    check_chain("Get_accumulate(SUM) in a post/start epoch", gacc, 102, plus_rank1);
    for (int p = 0; p < P; p++)
        e[102] += p + 1;
    verify(w, e);
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&wg);
}

static void m_lock_exclusive(W *w)
{
    cur_mode = "lock exclusive";
    int e[WN], x, putv, g, src[12];
    expect_init(e);
    reset(w);
    for (int i = 0; i < 12; i++)
        src[i] = dsrc(me, i);
    p2p_start();
    /* read-modify-write of a counter: exact only if exclusive locks exclude each other */
    for (int it = 0; it < 2 * P; it++) {
        int t = it % P;
        CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w->win));
        CHK(MPI_Get(&x, 1, MPI_INT, t, D(w, t, 100), 1, MPI_INT, w->win));
        CHK(MPI_Win_flush(t, w->win));
        x += 1;
        CHK(MPI_Put(&x, 1, MPI_INT, t, D(w, t, 100), 1, MPI_INT, w->win));
        CHK(MPI_Win_unlock(t, w->win));
    }
    for (int t = 0; t < P; t++) {
        CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w->win));
        putv = val(me, t);
        CHK(MPI_Put(&putv, 1, MPI_INT, t, D(w, t, me), 1, MPI_INT, w->win));
        CHK(MPI_Win_flush(t, w->win));
        CHK(MPI_Get(&g, 1, MPI_INT, t, D(w, t, me), 1, MPI_INT, w->win));
        if (t == right)
            CHK(MPI_Put(src, 1, vec_t, t, D(w, t, 440), 1, idx_t, w->win));
        CHK(MPI_Win_unlock(t, w->win));
        if (g != val(me, t))
            FAIL("Get after Put+flush in one exclusive epoch on rank %d returned %d, expected %d",
                 t, g, val(me, t));
    }
    p2p_finish();
    e[100] += 2 * P;
    for (int p = 0; p < P; p++)
        e[p] = val(p, me);
    for (int j = 0; j < 8; j++)
        e[440 + toff[j]] = dsrc(left, soff[j]);
    verify(w, e);
}

static void m_lock_shared(W *w)
{
    cur_mode = "lock shared";
    int e[WN], one = 1, mine, fop[MAXP], gacc[MAXP], src[12];
    expect_init(e);
    reset(w);
    for (int i = 0; i < 12; i++)
        src[i] = dsrc(me, i);
    p2p_start();
    for (int k = 0; k < P; k++) {
        int t = (me + k) % P; /* everyone starts at a different target */
        mine = me + 1;
        CHK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w->win));
        CHK(MPI_Accumulate(&mine, 1, MPI_INT, t, D(w, t, 64), 1, MPI_INT, MPI_SUM, w->win));
        CHK(MPI_Fetch_and_op(&one, &fop[t], MPI_INT, t, D(w, t, 101), MPI_SUM, w->win));
        CHK(MPI_Get_accumulate(&mine, 1, MPI_INT, &gacc[t], 1, MPI_INT, t, D(w, t, 102), 1, MPI_INT,
                               MPI_SUM, w->win));
        /* derived origin and target types in an accumulate (same basic type) */
        CHK(MPI_Accumulate(src, 1, vec_t, t, D(w, t, 440), 1, idx_t, MPI_SUM, w->win));
        CHK(MPI_Win_unlock(t, w->win));
    }
    p2p_finish();
    check_chain("Fetch_and_op(SUM) under shared locks", fop, 101, plus_one);
    check_chain("Get_accumulate(SUM) under shared locks", gacc, 102, plus_rank1);
    for (int p = 0; p < P; p++) {
        e[64] += p + 1;
        e[101] += 1;
        e[102] += p + 1;
        for (int j = 0; j < 8; j++)
            e[440 + toff[j]] += dsrc(p, soff[j]);
    }
    verify(w, e);
}

static void m_lock_all_flush(W *w)
{
    cur_mode = "lock_all + flush/flush_local/flush_all";
    int e[WN], pv, g, rv, gr, b, nop = 0, rd;
    expect_init(e);
    reset(w);
    p2p_start();
    CHK(MPI_Win_lock_all(0, w->win));
    for (int t = 0; t < P; t++) {
        /* flush completes the put at the target: a later get sees it */
        pv = val(me, t);
        CHK(MPI_Put(&pv, 1, MPI_INT, t, D(w, t, me), 1, MPI_INT, w->win));
        CHK(MPI_Win_flush(t, w->win));
        CHK(MPI_Get(&g, 1, MPI_INT, t, D(w, t, me), 1, MPI_INT, w->win));
        CHK(MPI_Win_flush(t, w->win));
        if (g != val(me, t))
            FAIL("Put, flush, Get on rank %d: got %d, expected %d", t, g, val(me, t));
        /* accumulate ordering (default rar,raw,war,waw): no flush needed between the two */
        rv = me * 7 + t;
        CHK(MPI_Accumulate(&rv, 1, MPI_INT, t, D(w, t, 130 + me), 1, MPI_INT, MPI_REPLACE, w->win));
        CHK(MPI_Get_accumulate(&nop, 1, MPI_INT, &gr, 1, MPI_INT, t, D(w, t, 130 + me), 1, MPI_INT,
                               MPI_NO_OP, w->win));
        CHK(MPI_Win_flush(t, w->win));
        if (gr != rv)
            FAIL("Accumulate(REPLACE) then Get_accumulate(NO_OP) on rank %d: got %d, expected %d",
                 t, gr, rv);
        /* flush_local: the origin buffer may be reused at once */
        b = val(me, t) + 1;
        CHK(MPI_Put(&b, 1, MPI_INT, t, D(w, t, 300 + me), 1, MPI_INT, w->win));
        CHK(MPI_Win_flush_local(t, w->win));
        b = val(me, t) + 2;
        CHK(MPI_Put(&b, 1, MPI_INT, t, D(w, t, 370 + me), 1, MPI_INT, w->win));
        CHK(MPI_Win_flush_local_all(w->win));
        /* atomic read */
        CHK(MPI_Fetch_and_op(&nop, &rd, MPI_INT, t, D(w, t, 201), MPI_NO_OP, w->win));
        CHK(MPI_Win_flush_all(w->win));
        if (rd != init(t, 201))
            FAIL("Fetch_and_op(NO_OP) on rank %d read %d", t, rd);
    }
    CHK(MPI_Win_unlock_all(w->win));
    p2p_finish();
    for (int p = 0; p < P; p++) {
        e[p] = val(p, me);
        e[130 + p] = p * 7 + me;
        e[300 + p] = val(p, me) + 1;
        e[370 + p] = val(p, me) + 2;
    }
    verify(w, e);
}

static void m_cas(W *w)
{
    cur_mode = "lock_all + Compare_and_swap";
    int e[WN], mine = me, cmp = -1, res[MAXP], got[MAXP];
    expect_init(e);
    reset(w);
    p2p_start();
    CHK(MPI_Win_lock_all(0, w->win));
    for (int k = 0; k < P; k++) {
        int t = (me + k) % P;
        CHK(MPI_Compare_and_swap(&mine, &cmp, &res[t], MPI_INT, t, D(w, t, 110), w->win));
    }
    CHK(MPI_Win_flush_all(w->win));
    CHK(MPI_Win_unlock_all(w->win));
    p2p_finish();
    CHK(MPI_Alltoall(res, 1, MPI_INT, got, 1, MPI_INT, comm));
    int winner = -1;
    for (int o = 0; o < P; o++)
        if (got[o] == -1) {
            if (winner >= 0)
                FAIL("Compare_and_swap: ranks %d and %d both saw the empty slot", winner, o);
            winner = o;
        }
    if (winner < 0)
        FAIL("Compare_and_swap: nobody saw the initial value -1");
    for (int o = 0; o < P; o++)
        if (o != winner && got[o] != winner)
            FAIL("Compare_and_swap: rank %d saw %d, but the winner was %d", o, got[o], winner);
    e[110] = winner;
    verify(w, e);
}

static void m_request(W *w)
{
    cur_mode = "lock_all + Rput/Rget/Raccumulate/Rget_accumulate";
    int e[WN], pv[MAXP], rg[MAXP], one[MAXP], rga[MAXP];
    MPI_Request rq[4 * MAXP];
    expect_init(e);
    reset(w);
    p2p_start();
    CHK(MPI_Win_lock_all(0, w->win));
    for (int t = 0; t < P; t++) {
        pv[t] = val(me, t);
        one[t] = me + 1;
        CHK(MPI_Rput(&pv[t], 1, MPI_INT, t, D(w, t, me), 1, MPI_INT, w->win, &rq[4 * t]));
        CHK(MPI_Rget(&rg[t], 1, MPI_INT, t, D(w, t, 200 + me % 8), 1, MPI_INT, w->win, &rq[4 * t + 1]));
        CHK(MPI_Raccumulate(&one[t], 1, MPI_INT, t, D(w, t, 64), 1, MPI_INT, MPI_SUM, w->win,
                            &rq[4 * t + 2]));
        CHK(MPI_Rget_accumulate(&one[t], 1, MPI_INT, &rga[t], 1, MPI_INT, t, D(w, t, 102), 1,
                                MPI_INT, MPI_SUM, w->win, &rq[4 * t + 3]));
    }
    CHK(MPI_Waitall(4 * P, rq, MPI_STATUSES_IGNORE));
    for (int t = 0; t < P; t++)
        if (rg[t] != init(t, 200 + me % 8))
            FAIL("Rget from rank %d (after MPI_Wait) returned %d", t, rg[t]);
    CHK(MPI_Win_flush_all(w->win));
    CHK(MPI_Win_unlock_all(w->win));
    p2p_finish();
    check_chain("Rget_accumulate(SUM)", rga, 102, plus_rank1);
    for (int p = 0; p < P; p++) {
        e[p] = val(p, me);
        e[64] += p + 1;
        e[102] += p + 1;
    }
    verify(w, e);
}

/* ---- windows ------------------------------------------------------------------------------ */
static void run_window(int flavor)
{
    static const char *names[] = {"MPI_Win_create", "MPI_Win_allocate", "MPI_Win_create_dynamic"};
    W w;
    memset(&w, 0, sizeof w);
    cur_win = names[flavor];
    cur_mode = "window creation";
    if (flavor == 0) {
        w.mem = malloc(WN * sizeof(int));
        CHK(MPI_Win_create(w.mem, WN * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &w.win));
    } else if (flavor == 1) {
        CHK(MPI_Win_allocate(WN * sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &w.mem, &w.win));
    } else {
        w.dyn = 1;
        w.mem = malloc(WN * sizeof(int));
        CHK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w.win));
        CHK(MPI_Win_attach(w.win, w.mem, WN * sizeof(int)));
        MPI_Aint mine;
        CHK(MPI_Get_address(w.mem, &mine));
        CHK(MPI_Allgather(&mine, 1, MPI_AINT, w.base, 1, MPI_AINT, comm));
    }
    CHK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
    m_fence(&w);
    m_pscw(&w);
    m_lock_exclusive(&w);
    m_lock_shared(&w);
    m_lock_all_flush(&w);
    m_cas(&w);
    m_request(&w);
    cur_mode = "window free";
    if (flavor == 2) {
        CHK(MPI_Barrier(comm)); /* nobody accesses my memory any more */
        CHK(MPI_Win_detach(w.win, w.mem));
    }
    CHK(MPI_Win_free(&w.win));
    if (flavor != 1)
        free(w.mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    comm = MPI_COMM_WORLD;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (P > MAXP)
        FAIL("at most %d processes", MAXP);
    int rounds = argc > 1 ? atoi(argv[1]) : 2;
    left = (me + P - 1) % P;
    right = (me + 1) % P;
    CHK(MPI_Comm_dup(comm, &pcomm));
    p2p_s = malloc(PN * sizeof(int));
    p2p_r = malloc(PN * sizeof(int));
    CHK(MPI_Type_vector(4, 2, 3, MPI_INT, &vec_t));
    CHK(MPI_Type_commit(&vec_t));
    int bl[4] = {2, 2, 2, 2}, ds[4] = {0, 5, 9, 14};
    CHK(MPI_Type_indexed(4, bl, ds, MPI_INT, &idx_t));
    CHK(MPI_Type_commit(&idx_t));

    for (int r = 0; r < rounds; r++)
        for (int flavor = 0; flavor < 3; flavor++) {
            run_window(flavor);
            if (me == 0 && r == 0)
                printf("rma: %s window: all modes ok\n", cur_win);
        }

    MPI_Type_free(&vec_t);
    MPI_Type_free(&idx_t);
    MPI_Comm_free(&pcomm);
    free(p2p_s);
    free(p2p_r);
    if (me == 0)
        printf("rma: OK (%d processes, %d rounds x 3 window kinds x 8 epochs kinds)\n", P, rounds);
    MPI_Finalize();
    return 0;
}
