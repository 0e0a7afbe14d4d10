/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * datatypes: noncontiguous derived datatypes sent and received, every element verified.
 *
 * A channel that places payload straight into the receive buffer (rather than through a
 * staging copy) must honour the request's iov for noncontiguous layouts, including iovs
 * longer than one packet and layouts larger than the eager limit.  Each case sends a layout
 * with one type and receives it with another of the same type signature, then checks every
 * element and that the gaps between blocks were not written.  Cases: vector (small and 4 MiB),
 * indexed with out-of-order blocks, hindexed, indexed_block, struct with padding (resized to
 * the C struct), struct received into an unaligned packed layout, resized column type (matrix
 * transpose), 3-d subarray, nested types, MPI_BOTTOM with absolute addresses, a partial
 * receive (MPI_Get_elements), and simultaneous exchange.  Each case runs in both directions.
 *
 * Usage: mpiexec -n 2 datatypes      (any even number of processes works: pairs r, r^1)
 */
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, peer;

#define TEST_NAME "datatypes"
#include "check.h"

#define GAP (-7777777) /* value of receive-buffer cells that must not be written */

static int val(int dir, int k) { return dir * 1000003 + k * 7 + 1; } /* element k's value */

/* Whether this process sends in direction dir (0: even -> odd, 1: odd -> even). */
static int sends(int dir) { return (rank % 2) == dir; }

static void expect_count(const char *what, MPI_Status *st, MPI_Datatype t, int n)
{
    int c;
    CHK(MPI_Get_count(st, t, &c));
    if (c != n)
        FAIL("%s: MPI_Get_count %d, expected %d", what, c, n);
}

/* ---- vector: strided ints, received contiguous and as the same vector -------------------- */
static void t_vector(int dir, int count, int blen, int stride)
{
    char what[64];
    snprintf(what, sizeof what, "vector(%d,%d,%d)", count, blen, stride);
    MPI_Datatype vt;
    CHK(MPI_Type_vector(count, blen, stride, MPI_INT, &vt));
    CHK(MPI_Type_commit(&vt));
    size_t span = (size_t)(count - 1) * stride + blen, n = (size_t)count * blen;
    int *a = malloc(span * sizeof(int)), *c = malloc(n * sizeof(int));
    MPI_Status st;
    if (sends(dir)) {
        for (size_t k = 0; k < span; k++)
            a[k] = val(dir, (int)k);
        CHK(MPI_Send(a, 1, vt, peer, 1, MPI_COMM_WORLD));
        CHK(MPI_Send(a, 1, vt, peer, 2, MPI_COMM_WORLD));
        CHK(MPI_Send(c, 0, vt, peer, 3, MPI_COMM_WORLD)); /* zero of a derived type */
    } else {
        for (size_t k = 0; k < n; k++)
            c[k] = GAP;
        CHK(MPI_Recv(c, (int)n, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
        expect_count(what, &st, MPI_INT, (int)n);
        for (int b = 0; b < count; b++)
            for (int j = 0; j < blen; j++)
                if (c[b * blen + j] != val(dir, b * stride + j))
                    FAIL("%s -> contiguous: block %d element %d: %d, expected %d", what, b, j,
                         c[b * blen + j], val(dir, b * stride + j));
        for (size_t k = 0; k < span; k++)
            a[k] = GAP;
        CHK(MPI_Recv(a, 1, vt, peer, 2, MPI_COMM_WORLD, &st));
        expect_count(what, &st, vt, 1);
        for (size_t k = 0; k < span; k++) {
            int in = (int)(k % (size_t)stride) < blen;
            int want = in ? val(dir, (int)k) : GAP;
            if (a[k] != want)
                FAIL("%s -> same vector: int %zu is %d, expected %d (%s)", what, k, a[k], want,
                     in ? "data" : "gap must stay untouched");
        }
        CHK(MPI_Recv(c, 5, vt, peer, 3, MPI_COMM_WORLD, &st));
        expect_count("zero count of a vector type", &st, vt, 0);
    }
    free(a);
    free(c);
    MPI_Type_free(&vt);
}

/* ---- indexed (blocks out of order), hindexed, indexed_block ------------------------------- */
static void t_indexed(int dir)
{
    const int nb = 6;
    int lens[] = {1, 4, 2, 7, 3, 5};
    int disp[] = {40, 3, 20, 60, 0, 30}; /* type-map order is this order, not address order */
    MPI_Datatype it, ht, ibt;
    CHK(MPI_Type_indexed(nb, lens, disp, MPI_INT, &it));
    MPI_Aint hdisp[6];
    for (int i = 0; i < nb; i++)
        hdisp[i] = (MPI_Aint)disp[i] * (MPI_Aint)sizeof(int);
    CHK(MPI_Type_create_hindexed(nb, lens, hdisp, MPI_INT, &ht));
    int bdisp[] = {50, 10, 30};
    CHK(MPI_Type_create_indexed_block(3, 4, bdisp, MPI_INT, &ibt));
    CHK(MPI_Type_commit(&it));
    CHK(MPI_Type_commit(&ht));
    CHK(MPI_Type_commit(&ibt));
    enum { A = 160 }; /* room for 2 indexed_block instances (extent 44 ints, lb 10) */
    int a[A], c[22];
    MPI_Status st;
    int n = 22;
    if (sends(dir)) {
        for (int k = 0; k < 80; k++)
            a[k] = val(dir, k);
        CHK(MPI_Send(a, 1, it, peer, 10, MPI_COMM_WORLD));
        CHK(MPI_Send(a, 1, ht, peer, 11, MPI_COMM_WORLD));
        CHK(MPI_Send(a, 1, it, peer, 12, MPI_COMM_WORLD));
        CHK(MPI_Send(a, 12, MPI_INT, peer, 13, MPI_COMM_WORLD));
    } else {
        /* indexed -> contiguous, in type-map order */
        for (int k = 0; k < n; k++)
            c[k] = GAP;
        CHK(MPI_Recv(c, n, MPI_INT, peer, 10, MPI_COMM_WORLD, &st));
        expect_count("indexed", &st, MPI_INT, n);
        for (int i = 0, k = 0; i < nb; i++)
            for (int j = 0; j < lens[i]; j++, k++)
                if (c[k] != val(dir, disp[i] + j))
                    FAIL("indexed -> contiguous: element %d (block %d+%d): %d, expected %d", k, i,
                         j, c[k], val(dir, disp[i] + j));
        /* hindexed -> indexed: same layout through byte displacements */
        for (int k = 0; k < 80; k++)
            a[k] = GAP;
        CHK(MPI_Recv(a, 1, it, peer, 11, MPI_COMM_WORLD, &st));
        int mark[80] = {0};
        for (int i = 0; i < nb; i++)
            for (int j = 0; j < lens[i]; j++)
                mark[disp[i] + j] = 1;
        for (int k = 0; k < 80; k++)
            if (a[k] != (mark[k] ? val(dir, k) : GAP))
                FAIL("hindexed -> indexed: int %d is %d, expected %d", k, a[k],
                     mark[k] ? val(dir, k) : GAP);
        /* indexed (22 ints) -> 2 x indexed_block (12 ints each): partial second element */
        for (int k = 0; k < A; k++)
            a[k] = GAP;
        CHK(MPI_Recv(a, 2, ibt, peer, 12, MPI_COMM_WORLD, &st));
        int cnt, el;
        CHK(MPI_Get_count(&st, ibt, &cnt));
        CHK(MPI_Get_elements(&st, MPI_INT, &el));
        if (cnt != MPI_UNDEFINED || el != 22)
            FAIL("partial receive: MPI_Get_count %d (expected MPI_UNDEFINED), MPI_Get_elements "
                 "%d (expected 22)", cnt, el);
        /* element k of the stream lands at block (k/4)%3 of instance k/12 */
        MPI_Aint lb, ext;
        MPI_Type_get_extent(ibt, &lb, &ext);
        int exti = (int)(ext / (MPI_Aint)sizeof(int));
        for (int i = 0, k = 0; i < nb; i++)
            for (int j = 0; j < lens[i]; j++, k++) {
                int pos = (k / 12) * exti + bdisp[(k % 12) / 4] + k % 4;
                if (pos >= A)
                    FAIL("test bug: position %d outside the buffer", pos);
                if (a[pos] != val(dir, disp[i] + j))
                    FAIL("indexed -> indexed_block: element %d at int %d is %d, expected %d", k,
                         pos, a[pos], val(dir, disp[i] + j));
            }
        /* contiguous 12 ints -> one indexed_block */
        for (int k = 0; k < 80; k++)
            a[k] = GAP;
        CHK(MPI_Recv(a, 1, ibt, peer, 13, MPI_COMM_WORLD, &st));
        expect_count("indexed_block", &st, ibt, 1);
        for (int k = 0; k < 12; k++)
            if (a[bdisp[k / 4] + k % 4] != val(dir, k))
                FAIL("contiguous -> indexed_block: element %d wrong", k);
        if (a[0] != GAP || a[14] != GAP || a[49] != GAP || a[54] != GAP)
            FAIL("contiguous -> indexed_block: a gap was written");
    }
    MPI_Type_free(&it);
    MPI_Type_free(&ht);
    MPI_Type_free(&ibt);
}

/* ---- struct with padding, resized to the C struct; unaligned packed receive ------------- */
struct rec {
    int id;
    double x;
    char name[3];
    short s;
};

static void t_struct(int dir)
{
    enum { N = 500 };
    int bl[] = {1, 1, 3, 1};
    MPI_Aint dsp[] = {offsetof(struct rec, id), offsetof(struct rec, x), offsetof(struct rec, name),
                      offsetof(struct rec, s)};
    MPI_Datatype tys[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_SHORT};
    MPI_Datatype st0, rt, pt;
    CHK(MPI_Type_create_struct(4, bl, dsp, tys, &st0));
    CHK(MPI_Type_create_resized(st0, 0, sizeof(struct rec), &rt));
    CHK(MPI_Type_commit(&rt));
    /* The same signature packed without alignment: int@0, double@4, char[3]@12, short@15. */
    MPI_Aint pdsp[] = {0, 4, 12, 15};
    CHK(MPI_Type_create_struct(4, bl, pdsp, tys, &pt));
    MPI_Datatype ptr;
    CHK(MPI_Type_create_resized(pt, 0, 17, &ptr));
    CHK(MPI_Type_commit(&ptr));
    struct rec *r = malloc(N * sizeof *r);
    unsigned char *p = malloc(N * 17 + 64);
    MPI_Status st;
    if (sends(dir)) {
        memset(r, 0x33, N * sizeof *r); /* padding bytes have a value that must not arrive */
        for (int i = 0; i < N; i++) {
            r[i].id = val(dir, i);
            r[i].x = i * 0.5 + dir;
            r[i].name[0] = 'a' + i % 26;
            r[i].name[1] = 'A' + i % 26;
            r[i].name[2] = (char)i;
            r[i].s = (short)(i * 3 - 700);
        }
        CHK(MPI_Send(r, N, rt, peer, 20, MPI_COMM_WORLD));
        CHK(MPI_Send(r, N, rt, peer, 21, MPI_COMM_WORLD));
    } else {
        memset(r, 0xEE, N * sizeof *r);
        CHK(MPI_Recv(r, N, rt, peer, 20, MPI_COMM_WORLD, &st));
        expect_count("struct", &st, rt, N);
        for (int i = 0; i < N; i++)
            if (r[i].id != val(dir, i) || r[i].x != i * 0.5 + dir || r[i].name[0] != 'a' + i % 26 ||
                r[i].name[1] != 'A' + i % 26 || r[i].name[2] != (char)i ||
                r[i].s != (short)(i * 3 - 700))
                FAIL("struct: record %d has wrong fields (id %d x %g s %d)", i, r[i].id, r[i].x,
                     r[i].s);
        /* padding between name and s (if any) must be untouched */
        size_t pad = offsetof(struct rec, name) + 3;
        if (pad < offsetof(struct rec, s) && ((unsigned char *)&r[7])[pad] != 0xEE)
            FAIL("struct: padding byte written");
        memset(p, 0xEE, N * 17 + 64);
        CHK(MPI_Recv(p, N, ptr, peer, 21, MPI_COMM_WORLD, &st));
        expect_count("packed struct", &st, ptr, N);
        for (int i = 0; i < N; i++) {
            int id;
            double x;
            short s;
            memcpy(&id, p + 17 * i, 4);
            memcpy(&x, p + 17 * i + 4, 8);
            memcpy(&s, p + 17 * i + 15, 2);
            if (id != val(dir, i) || x != i * 0.5 + dir || p[17 * i + 12] != 'a' + i % 26 ||
                p[17 * i + 14] != (unsigned char)(char)i || s != (short)(i * 3 - 700))
                FAIL("struct -> unaligned packed struct: record %d wrong", i);
        }
        if (p[N * 17] != 0xEE)
            FAIL("packed struct: byte after the last record written");
    }
    free(r);
    free(p);
    MPI_Type_free(&st0);
    MPI_Type_free(&rt);
    MPI_Type_free(&pt);
    MPI_Type_free(&ptr);
}

/* ---- resized column type: sending M columns sends the transpose ------------------------- */
static void t_resized(int dir)
{
    enum { R = 37, C = 53 };
    MPI_Datatype col, colr;
    CHK(MPI_Type_vector(R, 1, C, MPI_INT, &col));
    CHK(MPI_Type_create_resized(col, 0, sizeof(int), &colr));
    CHK(MPI_Type_commit(&colr));
    int *a = malloc(R * C * sizeof(int)), *t = malloc(R * C * sizeof(int));
    MPI_Status st;
    if (sends(dir)) {
        for (int i = 0; i < R * C; i++)
            a[i] = val(dir, i);
        CHK(MPI_Send(a, C, colr, peer, 30, MPI_COMM_WORLD));
        CHK(MPI_Send(a, R * C, MPI_INT, peer, 31, MPI_COMM_WORLD));
    } else {
        CHK(MPI_Recv(t, R * C, MPI_INT, peer, 30, MPI_COMM_WORLD, &st));
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++)
                if (t[c * R + r] != val(dir, r * C + c))
                    FAIL("resized column -> contiguous: transpose[%d][%d] wrong", c, r);
        for (int i = 0; i < R * C; i++)
            a[i] = GAP;
        CHK(MPI_Recv(a, C, colr, peer, 31, MPI_COMM_WORLD, &st)); /* receive as the transpose */
        expect_count("resized column", &st, colr, C);
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++)
                if (a[r * C + c] != val(dir, c * R + r))
                    FAIL("contiguous -> resized columns: a[%d][%d] wrong", r, c);
    }
    free(a);
    free(t);
    MPI_Type_free(&col);
    MPI_Type_free(&colr);
}

/* ---- 3-d subarray; nested vector of struct-free contiguous ------------------------------ */
static void t_subarray(int dir)
{
    int sizes[] = {20, 30, 40}, sub[] = {5, 10, 20}, start[] = {3, 4, 5};
    MPI_Datatype sa, nest, inner;
    CHK(MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &sa));
    CHK(MPI_Type_commit(&sa));
    /* nested: contiguous(2) of vector(3 blocks of 2, stride 5) of doubles, resized to 40 */
    CHK(MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &inner));
    MPI_Datatype inr;
    CHK(MPI_Type_create_resized(inner, 0, 40 * sizeof(double), &inr));
    CHK(MPI_Type_contiguous(2, inr, &nest));
    CHK(MPI_Type_commit(&nest));
    size_t n = 20 * 30 * 40;
    double *a = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
    MPI_Status st;
    if (sends(dir)) {
        for (size_t k = 0; k < n; k++)
            a[k] = val(dir, (int)k);
        CHK(MPI_Send(a, 1, sa, peer, 40, MPI_COMM_WORLD));
        CHK(MPI_Send(a, 1, sa, peer, 41, MPI_COMM_WORLD));
        CHK(MPI_Send(a, 3, nest, peer, 42, MPI_COMM_WORLD));
    } else {
        CHK(MPI_Recv(c, 1000, MPI_DOUBLE, peer, 40, MPI_COMM_WORLD, &st));
        expect_count("subarray", &st, MPI_DOUBLE, 1000);
        for (int i = 0, k = 0; i < 5; i++)
            for (int j = 0; j < 10; j++)
                for (int l = 0; l < 20; l++, k++) {
                    int idx = ((i + 3) * 30 + (j + 4)) * 40 + (l + 5);
                    if (c[k] != val(dir, idx))
                        FAIL("subarray -> contiguous: element (%d,%d,%d) wrong", i, j, l);
                }
        for (size_t k = 0; k < n; k++)
            a[k] = GAP;
        CHK(MPI_Recv(a, 1, sa, peer, 41, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 20; i++)
            for (int j = 0; j < 30; j++)
                for (int l = 0; l < 40; l++) {
                    int idx = (i * 30 + j) * 40 + l;
                    int in = i >= 3 && i < 8 && j >= 4 && j < 14 && l >= 5 && l < 25;
                    if (a[idx] != (in ? val(dir, idx) : GAP))
                        FAIL("subarray -> subarray: element (%d,%d,%d) %s", i, j, l,
                             in ? "wrong" : "outside the subarray was written");
                }
        CHK(MPI_Recv(c, 36, MPI_DOUBLE, peer, 42, MPI_COMM_WORLD, &st));
        expect_count("nested", &st, MPI_DOUBLE, 36);
        for (int k = 0; k < 36; k++) {
            int inst = k / 12, half = (k % 12) / 6, blk = (k % 6) / 2, j = k % 2;
            int idx = inst * 80 + half * 40 + blk * 5 + j;
            if (c[k] != val(dir, idx))
                FAIL("nested contiguous(vector) -> contiguous: element %d wrong", k);
        }
    }
    free(a);
    free(c);
    MPI_Type_free(&sa);
    MPI_Type_free(&inner);
    MPI_Type_free(&inr);
    MPI_Type_free(&nest);
}

/* ---- MPI_BOTTOM with absolute addresses -------------------------------------------------- */
static void t_bottom(int dir)
{
    static int x[10];
    static double y[4];
    int bl[] = {10, 4};
    MPI_Aint ad[2];
    MPI_Datatype tys[] = {MPI_INT, MPI_DOUBLE}, t;
    CHK(MPI_Get_address(x, &ad[0]));
    CHK(MPI_Get_address(y, &ad[1]));
    CHK(MPI_Type_create_struct(2, bl, ad, tys, &t));
    CHK(MPI_Type_commit(&t));
    MPI_Status st;
    if (sends(dir)) {
        for (int i = 0; i < 10; i++)
            x[i] = val(dir, i);
        for (int i = 0; i < 4; i++)
            y[i] = -val(dir, i);
        CHK(MPI_Send(MPI_BOTTOM, 1, t, peer, 50, MPI_COMM_WORLD));
    } else {
        memset(x, 0, sizeof x);
        memset(y, 0, sizeof y);
        CHK(MPI_Recv(MPI_BOTTOM, 1, t, peer, 50, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 10; i++)
            if (x[i] != val(dir, i))
                FAIL("MPI_BOTTOM struct: x[%d] wrong", i);
        for (int i = 0; i < 4; i++)
            if (y[i] != -val(dir, i))
                FAIL("MPI_BOTTOM struct: y[%d] wrong", i);
    }
    MPI_Type_free(&t);
}

/* ---- both directions at once, large noncontiguous, nonblocking ------------------------- */
static void t_exchange(void)
{
    const int count = 100000, blen = 3, stride = 5; /* 1.2 MB of data each way */
    MPI_Datatype vt;
    CHK(MPI_Type_vector(count, blen, stride, MPI_INT, &vt));
    CHK(MPI_Type_commit(&vt));
    size_t span = (size_t)count * stride;
    int *s = malloc(span * sizeof(int)), *r = malloc(span * sizeof(int));
    for (size_t k = 0; k < span; k++) {
        s[k] = val(rank, (int)k);
        r[k] = GAP;
    }
    MPI_Request rq[2];
    MPI_Status st[2];
    CHK(MPI_Irecv(r, 1, vt, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]));
    CHK(MPI_Isend(s, 1, vt, peer, 60, MPI_COMM_WORLD, &rq[1]));
    CHK(MPI_Waitall(2, rq, st));
    for (size_t k = 0; k < span; k++) {
        int in = (int)(k % stride) < blen;
        if (r[k] != (in ? val(peer, (int)k) : GAP))
            FAIL("noncontiguous exchange: int %zu wrong", k);
    }
    free(s);
    free(r);
    MPI_Type_free(&vt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (nprocs % 2)
        FAIL("needs an even number of processes");
    peer = rank ^ 1;
    for (int dir = 0; dir < 2; dir++) {
        t_vector(dir, 10, 3, 7);
        t_vector(dir, 200000, 5, 9); /* 4 MB: rendezvous with a long iov */
        t_vector(dir, 1000, 1, 2);
        t_indexed(dir);
        t_struct(dir);
        t_resized(dir);
        t_subarray(dir);
        t_bottom(dir);
    }
    t_exchange();
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("datatypes: OK (vector, indexed, hindexed, indexed_block, struct, packed struct, "
               "resized, subarray, nested, MPI_BOTTOM, partial receive, exchange; both "
               "directions)\n");
    MPI_Finalize();
    return 0;
}
