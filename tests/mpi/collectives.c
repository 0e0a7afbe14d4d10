/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * collectives: every common collective on MPI_COMM_WORLD and on split/created communicators,
 * results checked element by element; then 200 communicators created, used and freed.
 *
 * Collectives are built on point-to-point traffic with many peers at once and with several
 * algorithms chosen by size and process count, so they stress a channel's handling of many
 * simultaneous associations, mixed eager/rendezvous sizes and per-communicator contexts.
 * A non-commutative user operation (2x2 matrix product) checks that reductions combine in
 * rank order.  Roots rotate.  Counts include zero contributions.
 *
 * Usage: mpiexec -n N collectives [quick]    (any N >= 1; "quick" skips the large sizes)
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, wsize, quick;
static const char *cname = "MPI_COMM_WORLD";

#define TEST_NAME "collectives"
#include "check.h"

static int f(int p, int i) { return p * 1009 + (i % 997) * 3 + 1; } /* rank p's element i */

/* ---- non-commutative op: 2x2 integer matrices (mod 2^31-ish via unsigned wrap) ----------- */
typedef struct {
    unsigned a, b, c, d;
} mat;
static MPI_Datatype mat_type;
static MPI_Op matmul_op;
static mat mmul(mat x, mat y)
{
    mat r = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
             x.c * y.b + x.d * y.d};
    return r;
}
/* MPI calls op(in, inout) meaning inout = in (op) inout, with in from lower ranks. */
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = mmul(x[i], y[i]);
}
static mat mat_of(int p, int i)
{
    mat m = {(unsigned)(p + 2), (unsigned)(i + 1), 1u, (unsigned)(p * 3 + i)};
    return m;
}

static void check_ints(const char *what, const int *got, const int *want, int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            FAIL("%s: element %d is %d, expected %d", what, i, got[i], want[i]);
}

static void run_all(MPI_Comm comm)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    const int big = quick ? 5000 : 300000; /* ints: 1.2 MB, beyond the eager limit */
    /* room for the largest layout below (Allgatherv with gaps grows like n^2) */
    size_t cap = 2 * (size_t)big + 120 * (size_t)n * (size_t)(n + 1) + 1000;
    int *a = malloc(sizeof(int) * cap), *b = malloc(sizeof(int) * cap);
    int *w = malloc(sizeof(int) * cap);
    int *big_all = malloc(sizeof(int) * (size_t)n * 20000);

    for (int k = 0; k < 3; k++)
        CHK(MPI_Barrier(comm));

    /* Bcast: every root for small sizes; first, middle and last root for large. */
    const int bsz[] = {1, 100, 10000, big};
    for (int s = 0; s < 4; s++)
        for (int root = 0; root < n; root++) {
            if (s >= 2 && root != 0 && root != n / 2 && root != n - 1)
                continue;
            for (int i = 0; i < bsz[s]; i++)
                a[i] = me == root ? f(root, i) : -1;
            CHK(MPI_Bcast(a, bsz[s], MPI_INT, root, comm));
            for (int i = 0; i < bsz[s]; i++)
                if (a[i] != f(root, i))
                    FAIL("Bcast %d ints from root %d: element %d is %d", bsz[s], root, i, a[i]);
        }

    /* Reduce (sum), Allreduce (sum, in place, min, max), MAXLOC. */
    const int rsz[] = {1, 1000, quick ? 2000 : 100000};
    for (int s = 0; s < 3; s++) {
        int cnt = rsz[s], root = (s * 7) % n;
        for (int i = 0; i < cnt; i++) {
            a[i] = f(me, i);
            w[i] = 0;
            for (int p = 0; p < n; p++)
                w[i] += f(p, i);
        }
        CHK(MPI_Reduce(a, b, cnt, MPI_INT, MPI_SUM, root, comm));
        if (me == root)
            check_ints("Reduce(SUM)", b, w, cnt);
        CHK(MPI_Allreduce(a, b, cnt, MPI_INT, MPI_SUM, comm));
        check_ints("Allreduce(SUM)", b, w, cnt);
        CHK(MPI_Allreduce(MPI_IN_PLACE, a, cnt, MPI_INT, MPI_SUM, comm));
        check_ints("Allreduce(SUM, MPI_IN_PLACE)", a, w, cnt);
        for (int i = 0; i < cnt; i++)
            a[i] = f(me, i) * ((i % 2) ? 1 : -1);
        CHK(MPI_Allreduce(a, b, cnt, MPI_INT, MPI_MAX, comm));
        for (int i = 0; i < cnt; i++)
            if (b[i] != ((i % 2) ? f(n - 1, i) : -f(0, i)))
                FAIL("Allreduce(MAX) %d ints: element %d is %d", cnt, i, b[i]);
    }
    struct {
        double v;
        int r;
    } in = {(double)((me * 5) % n), me}, out;
    CHK(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
    {
        double best = -1;
        int who = -1;
        for (int p = 0; p < n; p++)
            if ((double)((p * 5) % n) > best)
                best = (double)((p * 5) % n), who = p;
        if (out.v != best || out.r != who)
            FAIL("Allreduce(MAXLOC): (%g, %d), expected (%g, %d)", out.v, out.r, best, who);
    }

    /* Non-commutative: the result must be m_0 * m_1 * ... * m_{n-1}. */
    {
        enum { M = 17 };
        mat mi[M], mo[M], want[M];
        for (int i = 0; i < M; i++) {
            mi[i] = mat_of(me, i);
            want[i] = mat_of(0, i);
            for (int p = 1; p < n; p++)
                want[i] = mmul(want[i], mat_of(p, i));
        }
        for (int root = 0; root < n && root < 3; root++) {
            CHK(MPI_Reduce(mi, mo, M, mat_type, matmul_op, root, comm));
            if (me == root && memcmp(mo, want, sizeof want))
                FAIL("Reduce(non-commutative matrix product) to root %d: wrong order", root);
        }
        CHK(MPI_Allreduce(mi, mo, M, mat_type, matmul_op, comm));
        if (memcmp(mo, want, sizeof want))
            FAIL("Allreduce(non-commutative matrix product): wrong order");
        /* Scan: prefix product m_0 * ... * m_me */
        CHK(MPI_Scan(mi, mo, M, mat_type, matmul_op, comm));
        for (int i = 0; i < M; i++) {
            mat p = mat_of(0, i);
            for (int q = 1; q <= me; q++)
                p = mmul(p, mat_of(q, i));
            if (memcmp(&mo[i], &p, sizeof p))
                FAIL("Scan(non-commutative matrix product): element %d wrong", i);
        }
    }

    /* Scan, Exscan (sum) */
    {
        enum { S = 50 };
        int x[S], y[S];
        for (int i = 0; i < S; i++)
            x[i] = f(me, i);
        CHK(MPI_Scan(x, y, S, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < S; i++) {
            int want = 0;
            for (int p = 0; p <= me; p++)
                want += f(p, i);
            if (y[i] != want)
                FAIL("Scan(SUM): element %d is %d, expected %d", i, y[i], want);
        }
        CHK(MPI_Exscan(x, y, S, MPI_INT, MPI_SUM, comm));
        if (me > 0)
            for (int i = 0; i < S; i++) {
                int want = 0;
                for (int p = 0; p < me; p++)
                    want += f(p, i);
                if (y[i] != want)
                    FAIL("Exscan(SUM): element %d is %d, expected %d", i, y[i], want);
            }
    }

    /* Allgather: small and large; Allgatherv with zero, gaps and unequal counts. */
    {
        const int gs[] = {3, quick ? 500 : 20000};
        for (int s = 0; s < 2; s++) {
            int k = gs[s];
            for (int i = 0; i < k; i++)
                a[i] = f(me, i);
            CHK(MPI_Allgather(a, k, MPI_INT, big_all, k, MPI_INT, comm));
            for (int p = 0; p < n; p++)
                for (int i = 0; i < k; i++)
                    if (big_all[p * k + i] != f(p, i))
                        FAIL("Allgather %d ints: block %d element %d wrong", k, p, i);
        }
        int *cnt = malloc(sizeof(int) * (size_t)n), *dsp = malloc(sizeof(int) * (size_t)n);
        int tot = 0;
        for (int p = 0; p < n; p++) {
            cnt[p] = (p % 3) * (p + 1) * 37; /* rank 0 (and every third) sends nothing */
            dsp[p] = tot + 2;                /* gap of 2 before each block */
            tot = dsp[p] + cnt[p];
        }
        for (int i = 0; i < cnt[me]; i++)
            a[i] = f(me, i);
        for (int i = 0; i < tot + 2; i++)
            b[i] = -5;
        CHK(MPI_Allgatherv(a, cnt[me], MPI_INT, b, cnt, dsp, MPI_INT, comm));
        for (int p = 0; p < n; p++) {
            for (int i = 0; i < cnt[p]; i++)
                if (b[dsp[p] + i] != f(p, i))
                    FAIL("Allgatherv: block of rank %d, element %d wrong", p, i);
            if (b[dsp[p] - 1] != -5 || b[dsp[p] - 2] != -5)
                FAIL("Allgatherv: gap before block %d was written", p);
        }
        /* Gatherv / Scatterv with the same layout, rotating roots */
        for (int root = 0; root < n && root < 4; root++) {
            for (int i = 0; i < tot + 2; i++)
                b[i] = -5;
            CHK(MPI_Gatherv(a, cnt[me], MPI_INT, b, cnt, dsp, MPI_INT, root, comm));
            if (me == root)
                for (int p = 0; p < n; p++)
                    for (int i = 0; i < cnt[p]; i++)
                        if (b[dsp[p] + i] != f(p, i))
                            FAIL("Gatherv to %d: block %d element %d wrong", root, p, i);
            if (me == root)
                for (int p = 0; p < n; p++)
                    for (int i = 0; i < cnt[p]; i++)
                        b[dsp[p] + i] = f(p + 100, i);
            for (int i = 0; i < cnt[me] + 1; i++)
                a[i] = -9;
            CHK(MPI_Scatterv(b, cnt, dsp, MPI_INT, a, cnt[me], MPI_INT, root, comm));
            for (int i = 0; i < cnt[me]; i++)
                if (a[i] != f(me + 100, i))
                    FAIL("Scatterv from %d: element %d wrong", root, i);
            if (a[cnt[me]] != -9)
                FAIL("Scatterv from %d: wrote past the count", root);
            for (int i = 0; i < cnt[me]; i++)
                a[i] = f(me, i);
        }
        free(cnt);
        free(dsp);
    }

    /* Gather / Scatter, rotating roots */
    for (int root = 0; root < n; root += (n > 4 ? n / 3 : 1)) {
        const int k = 11;
        for (int i = 0; i < k; i++)
            a[i] = f(me, i);
        CHK(MPI_Gather(a, k, MPI_INT, b, k, MPI_INT, root, comm));
        if (me == root)
            for (int p = 0; p < n; p++)
                for (int i = 0; i < k; i++)
                    if (b[p * k + i] != f(p, i))
                        FAIL("Gather to %d: block %d element %d wrong", root, p, i);
        if (me == root)
            for (int p = 0; p < n; p++)
                for (int i = 0; i < k; i++)
                    b[p * k + i] = f(p + 7, i);
        CHK(MPI_Scatter(b, k, MPI_INT, a, k, MPI_INT, root, comm));
        for (int i = 0; i < k; i++)
            if (a[i] != f(me + 7, i))
                FAIL("Scatter from %d: element %d wrong", root, i);
    }

    /* Alltoall (element depends on source and destination); Alltoallv with zero counts. */
    {
        const int k = 2;
        for (int p = 0; p < n; p++)
            for (int j = 0; j < k; j++)
                a[p * k + j] = f(me, p * 10 + j);
        CHK(MPI_Alltoall(a, k, MPI_INT, b, k, MPI_INT, comm));
        for (int p = 0; p < n; p++)
            for (int j = 0; j < k; j++)
                if (b[p * k + j] != f(p, me * 10 + j))
                    FAIL("Alltoall: from rank %d element %d wrong", p, j);
        int *sc = malloc(sizeof(int) * (size_t)n * 4), *sd = sc + n, *rc = sc + 2 * n,
            *rd = sc + 3 * n;
        int st = 0, rt = 0;
        for (int p = 0; p < n; p++) {
            sc[p] = ((me + p) % 4) * 50; /* zero for some pairs */
            sd[p] = st;
            st += sc[p];
            rc[p] = ((p + me) % 4) * 50;
            rd[p] = rt + 1;
            rt += rc[p] + 1;
        }
        for (int p = 0; p < n; p++)
            for (int j = 0; j < sc[p]; j++)
                a[sd[p] + j] = f(me, p * 1000 + j);
        for (int i = 0; i < rt + 1; i++)
            b[i] = -3;
        CHK(MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, comm));
        for (int p = 0; p < n; p++) {
            for (int j = 0; j < rc[p]; j++)
                if (b[rd[p] + j] != f(p, me * 1000 + j))
                    FAIL("Alltoallv: from rank %d element %d wrong", p, j);
            if (b[rd[p] - 1] != -3)
                FAIL("Alltoallv: gap before the block from rank %d was written", p);
        }
        free(sc);
    }

    /* Reduce_scatter (unequal counts, some zero) and Reduce_scatter_block */
    {
        int *rc = malloc(sizeof(int) * (size_t)n), tot = 0, off = 0;
        for (int p = 0; p < n; p++) {
            rc[p] = (p % 2) ? 0 : p + 3;
            tot += rc[p];
        }
        for (int p = 0; p < me; p++)
            off += rc[p];
        for (int i = 0; i < tot; i++)
            a[i] = f(me, i);
        CHK(MPI_Reduce_scatter(a, b, rc, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < rc[me]; i++) {
            int want = 0;
            for (int p = 0; p < n; p++)
                want += f(p, off + i);
            if (b[i] != want)
                FAIL("Reduce_scatter: element %d is %d, expected %d", i, b[i], want);
        }
        const int k = 40;
        for (int i = 0; i < k * n; i++)
            a[i] = f(me, i);
        CHK(MPI_Reduce_scatter_block(a, b, k, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < k; i++) {
            int want = 0;
            for (int p = 0; p < n; p++)
                want += f(p, me * k + i);
            if (b[i] != want)
                FAIL("Reduce_scatter_block: element %d is %d, expected %d", i, b[i], want);
        }
        free(rc);
    }

    /* Nonblocking collectives in flight together. */
    {
        MPI_Request r[3];
        int x = me + 1, sum = 0, bc[64];
        for (int i = 0; i < 64; i++)
            bc[i] = me == n - 1 ? f(n - 1, i) : 0;
        CHK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &r[0]));
        CHK(MPI_Ibcast(bc, 64, MPI_INT, n - 1, comm, &r[1]));
        CHK(MPI_Ibarrier(comm, &r[2]));
        CHK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        if (sum != n * (n + 1) / 2)
            FAIL("Iallreduce: %d, expected %d", sum, n * (n + 1) / 2);
        for (int i = 0; i < 64; i++)
            if (bc[i] != f(n - 1, i))
                FAIL("Ibcast: element %d wrong", i);
    }
    free(a);
    free(b);
    free(w);
    free(big_all);
}

/* A small collective on a fresh communicator, checked against its expected members. */
static void use_comm(MPI_Comm c, int expected_size, const char *what)
{
    int n, me, sum = 0, x;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    if (n != expected_size)
        FAIL("%s: size %d, expected %d", what, n, expected_size);
    x = rank;
    CHK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
    int *all = malloc(sizeof(int) * (size_t)n), want = 0;
    CHK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, c));
    for (int p = 0; p < n; p++)
        want += all[p];
    if (all[me] != rank || sum != want)
        FAIL("%s: Allreduce %d does not match the members' world ranks (%d)", what, sum, want);
    free(all);
}

static void many_comms(void)
{
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    /* 200 created and freed one after the other, three ways */
    for (int i = 0; i < 200; i++) {
        MPI_Comm c;
        char what[64];
        int kind = i % 3;
        if (kind == 0) {
            CHK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
            snprintf(what, sizeof what, "communicator #%d (dup)", i);
            use_comm(c, wsize, what);
        } else if (kind == 1) {
            int ncol = 2 + i % 3, color = rank % ncol;
            CHK(MPI_Comm_split(MPI_COMM_WORLD, color, (rank * 7 + i) % wsize, &c));
            snprintf(what, sizeof what, "communicator #%d (split into %d)", i, ncol);
            use_comm(c, (wsize - color + ncol - 1) / ncol, what);
        } else {
            /* everyone but one rank, rotating; that rank gets MPI_COMM_NULL */
            MPI_Group g;
            int ex = i % wsize;
            if (wsize > 1)
                MPI_Group_excl(wg, 1, &ex, &g);
            else
                MPI_Group_incl(wg, 1, &ex, &g);
            CHK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
            MPI_Group_free(&g);
            snprintf(what, sizeof what, "communicator #%d (create)", i);
            if (wsize > 1 && rank == ex) {
                if (c != MPI_COMM_NULL)
                    FAIL("%s: excluded rank got a communicator", what);
                continue;
            }
            use_comm(c, wsize > 1 ? wsize - 1 : 1, what);
        }
        CHK(MPI_Comm_free(&c));
    }
    /* 200 alive at once, used in reverse order of creation, freed in creation order */
    MPI_Comm cs[200];
    for (int i = 0; i < 200; i++)
        CHK(MPI_Comm_dup(i % 2 || i == 0 ? MPI_COMM_WORLD : cs[i - 1], &cs[i])); /* some dups of dups */
    for (int i = 199; i >= 0; i--)
        use_comm(cs[i], wsize, "one of 200 live communicators");
    for (int i = 0; i < 200; i++)
        CHK(MPI_Comm_free(&cs[i]));
    MPI_Group_free(&wg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    CHK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_type));
    CHK(MPI_Type_commit(&mat_type));
    CHK(MPI_Op_create(matmul_fn, 0, &matmul_op));

    run_all(MPI_COMM_WORLD);

    MPI_Comm half, third, rev, part;
    /* split by parity, reversed rank order inside */
    CHK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    cname = "split(rank % 2, reversed order)";
    run_all(half);
    CHK(MPI_Comm_split(MPI_COMM_WORLD, rank % 3, rank, &third));
    cname = "split(rank % 3)";
    run_all(third);
    CHK(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - rank, &rev));
    cname = "split(one color, reversed)";
    run_all(rev);
    /* first half of the ranks through MPI_Comm_create */
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int range[1][3] = {{0, (wsize - 1) / 2, 1}};
    MPI_Group_range_incl(wg, 1, range, &g);
    CHK(MPI_Comm_create(MPI_COMM_WORLD, g, &part));
    cname = "create(first half)";
    if (part != MPI_COMM_NULL) {
        run_all(part);
        MPI_Comm_free(&part);
    }
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Comm_free(&half);
    MPI_Comm_free(&third);
    MPI_Comm_free(&rev);

    cname = "200 communicators";
    many_comms();
    cname = "MPI_COMM_WORLD";
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Op_free(&matmul_op);
    MPI_Type_free(&mat_type);
    if (rank == 0)
        printf("collectives: OK (%d processes; world, 4 derived communicators, 200 created/freed "
               "and 200 alive at once%s)\n", wsize, quick ? "; quick sizes" : "");
    MPI_Finalize();
    return 0;
}
