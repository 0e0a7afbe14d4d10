/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared parts of the osu-bench programs; see util.h. */
#include "util.h"

#include <mpi.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prog = "osu-bench";
static int my_rank;

static void usage(const struct bench_desc *d)
{
    printf("usage: %s [-m [MIN:]MAX] [-i ITERS[:LARGE]] [-x WARMUP[:LARGE]]%s [-h]\n"
           "  %s (OSU micro-benchmark methodology)\n"
           "  -m  message sizes in bytes, powers of two from MIN to MAX; K and M suffixes\n"
           "      (default %zu:%zu)\n"
           "  -i  timed iterations per size; LARGE for sizes > %d B (default %d:%d; a single\n"
           "      value scales LARGE in the same proportion)\n"
           "  -x  warm-up iterations per size, not timed (default %d:%d)\n",
           prog, d->window ? " [-W WINDOW]" : "", d->title, d->min_size, d->max_size,
           BENCH_LARGE_SIZE, d->iters, d->iters_large, d->skip, d->skip_large);
    if (d->window)
        printf("  -W  messages in flight per iteration (default %d)\n", d->window);
}

/* "4096", "4K", "1M"; returns 0 on a syntax error. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    if (*end)
        return 0;
    *out = (size_t)v;
    return 1;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 100000000)
        return 0;
    *out = (int)v;
    return 1;
}

/* "N" or "N:L". With only N, L keeps the program's small/large proportion. */
static int parse_pair(const char *s, int *small, int *large, int def_small, int def_large,
                      int min_value)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = '\0';
        return parse_int(buf, small) && parse_int(colon + 1, large) && *small >= min_value &&
               *large >= min_value;
    }
    if (!parse_int(buf, small) || *small < min_value)
        return 0;
    long scaled = (long)*small * def_large / def_small; /* defaults are never 0 */
    *large = scaled == 0 && *small > 0 ? 1 : (int)scaled;
    return 1;
}

static int parse_sizes(const char *s, size_t *min, size_t *max)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *colon = strchr(buf, ':');
    if (!colon)
        return parse_size(buf, max);
    *colon = '\0';
    if (!parse_size(buf, min))
        return 0;
    return colon[1] == '\0' || parse_size(colon + 1, max);
}

static void quit(int status)
{
    MPI_Finalize();
    exit(status);
}

void bench_init(int *argc, char ***argv, const struct bench_desc *d, struct bench_opts *o)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o->nprocs);
    my_rank = o->rank;
    const char *slash = strrchr((*argv)[0], '/');
    prog = slash ? slash + 1 : (*argv)[0];

    o->min_size = d->min_size;
    o->max_size = d->max_size;
    o->iters = d->iters;
    o->iters_large = d->iters_large;
    o->skip = d->skip;
    o->skip_large = d->skip_large;
    o->window = d->window;

    /* Every rank parses the same arguments, so all ranks agree on errors without talking. */
    const char *optstring = d->window ? "m:i:x:W:h" : "m:i:x:h";
    opterr = o->rank == 0; /* one complaint, not one per rank */
    int c, bad = 0, help = 0;
    while ((c = getopt(*argc, *argv, optstring)) != -1) {
        switch (c) {
        case 'm': bad |= !parse_sizes(optarg, &o->min_size, &o->max_size); break;
        case 'i':
            bad |= !parse_pair(optarg, &o->iters, &o->iters_large, d->iters, d->iters_large, 1);
            break;
        case 'x':
            bad |= !parse_pair(optarg, &o->skip, &o->skip_large, d->skip, d->skip_large, 0);
            break;
        case 'W': bad |= !parse_int(optarg, &o->window) || o->window < 1; break;
        case 'h': help = 1; break;
        default: bad = 1; break;
        }
    }
    if (optind < *argc)
        bad = 1;
    if (!bad && (o->min_size > o->max_size || o->max_size > INT_MAX))
        bad = 1; /* MPI counts are int */
    if (help || bad) {
        if (o->rank == 0) {
            if (bad)
                fprintf(stderr, "%s: bad arguments\n", prog);
            usage(d);
        }
        quit(bad ? 1 : 0);
    }

    int ok = o->nprocs >= 2;
    if (d->ranks == BENCH_RANKS_TWO)
        ok = o->nprocs == 2;
    else if (d->ranks == BENCH_RANKS_EVEN)
        ok = ok && o->nprocs % 2 == 0;
    if (!ok) {
        if (o->rank == 0)
            fprintf(stderr, "%s: needs %s ranks, got %d\n", prog,
                    d->ranks == BENCH_RANKS_TWO    ? "exactly 2"
                    : d->ranks == BENCH_RANKS_EVEN ? "an even number (>= 2) of"
                                                   : "at least 2",
                    o->nprocs);
        quit(1);
    }

    if (o->rank == 0) {
        printf("# %s (osu-bench, sctpmpi)\n", d->title);
        printf("# [ ranks: %d ]", o->nprocs);
        if (d->ranks == BENCH_RANKS_EVEN)
            printf(" [ pairs: %d ]", o->nprocs / 2);
        if (o->window)
            printf(" [ window size: %d ]", o->window);
        printf(" [ iterations: %d:%d warm-up: %d:%d, large > %d B ]\n", o->iters,
               o->iters_large, o->skip, o->skip_large, BENCH_LARGE_SIZE);
        printf("%s\n", d->columns);
        fflush(stdout);
    }
}

void bench_finalize(void)
{
    MPI_Finalize();
}

size_t bench_first(const struct bench_opts *o)
{
    return o->min_size;
}

size_t bench_next(size_t size)
{
    return size ? size * 2 : 1;
}

int bench_iters(const struct bench_opts *o, size_t size)
{
    return size > BENCH_LARGE_SIZE ? o->iters_large : o->iters;
}

int bench_skip(const struct bench_opts *o, size_t size)
{
    return size > BENCH_LARGE_SIZE ? o->skip_large : o->skip;
}

void *bench_win_allocate(size_t bytes, MPI_Win *win)
{
    void *base = NULL;
    if (MPI_Win_allocate((MPI_Aint)(bytes ? bytes : 1), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, win) !=
        MPI_SUCCESS) {
        fprintf(stderr, "%s: rank %d: MPI_Win_allocate of %zu bytes failed\n", prog, my_rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bench_win_begin(*win);
    memset(base, 0, bytes);
    bench_win_end(*win);
    MPI_Barrier(MPI_COMM_WORLD);
    return base;
}

void bench_win_begin(MPI_Win win)
{
    MPI_Win_lock(MPI_LOCK_SHARED, my_rank, 0, win);
    MPI_Win_sync(win);
}

void bench_win_end(MPI_Win win)
{
    MPI_Win_sync(win);
    MPI_Win_unlock(my_rank, win);
}

void bench_win_fill(MPI_Win win, void *buf, size_t len, unsigned seed)
{
    bench_win_begin(win);
    bench_fill(buf, len, seed);
    bench_win_end(win);
}

void bench_win_poison(MPI_Win win, void *buf, size_t len, unsigned seed)
{
    bench_win_begin(win);
    bench_poison(buf, len, seed);
    bench_win_end(win);
}

void bench_win_check(MPI_Win win, const void *buf, size_t len, unsigned seed, const char *what, size_t size)
{
    bench_win_begin(win);
    bench_check(buf, len, seed, what, size);
    bench_win_end(win);
}

double bench_rma(const struct bench_opts *o, MPI_Win win, char *window, char *buf, enum bench_rma_op op,
                 enum bench_rma_sync sync, size_t size, int batch)
{
    int iters = bench_iters(o, size), skip = bench_skip(o, size);
    unsigned seed = op == BENCH_PUT ? bench_seed(0, 1, size) : bench_seed(1, 0, size);
    double t0 = 0, t = 0;
    if (o->rank == 0 && op == BENCH_PUT)
        bench_fill(buf, size, seed);
    if (o->rank == 1)
        (op == BENCH_PUT ? bench_win_poison : bench_win_fill)(win, window, size, seed);
    MPI_Barrier(MPI_COMM_WORLD);
    if (sync == BENCH_FENCE)
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    else if (o->rank == 0)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    if (o->rank == 0 || sync == BENCH_FENCE) {
        for (int i = 0; i < skip + iters; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (o->rank == 0 && op == BENCH_GET && i == skip + iters - 1) /* the last gets bring their own data */
                bench_poison(buf, size, seed);
            for (int j = 0; o->rank == 0 && j < batch; j++) {
                if (op == BENCH_PUT)
                    MPI_Put(buf, (int)size, MPI_CHAR, 1, 0, (int)size, MPI_CHAR, win);
                else
                    MPI_Get(buf, (int)size, MPI_CHAR, 1, 0, (int)size, MPI_CHAR, win);
            }
            if (sync == BENCH_FENCE)
                MPI_Win_fence(0, win);
            else
                MPI_Win_flush(1, win);
        }
        t = MPI_Wtime() - t0;
    }
    if (sync == BENCH_FENCE)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win); /* no epoch left open: the check locks the window */
    else if (o->rank == 0)
        MPI_Win_unlock(1, win);
    if (o->rank == 0 && op == BENCH_GET)
        bench_check(buf, size, seed, "data got", size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (o->rank == 1 && op == BENCH_PUT)
        bench_win_check(win, window, size, seed, "window after puts", size);
    return o->rank == 0 ? t : 0;
}

void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    long page = sysconf(_SC_PAGESIZE);
    if (bytes == 0)
        bytes = 1;
    if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytes) != 0) {
        fprintf(stderr, "%s: rank %d: cannot allocate %zu bytes\n", prog, my_rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(p, 0, bytes);
    return p;
}

unsigned bench_seed(int from, int to, size_t size)
{
    /* Mix sender, receiver and size so that data of another size or peer never matches. */
    unsigned x = (unsigned)from * 0x9e3779b1u ^ (unsigned)to * 0x85ebca77u ^ (unsigned)size;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return x;
}

/* Byte i of a message: depends on the position, so shifted data does not match either. */
static unsigned char pattern(unsigned seed, size_t i)
{
    return (unsigned char)(seed + i * 7 + (i >> 8) * 13);
}

void bench_fill(void *buf, size_t len, unsigned seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = pattern(seed, i);
}

void bench_poison(void *buf, size_t len, unsigned seed)
{
    unsigned char *p = buf;
    if (len == 0)
        return;
    p[0] = (unsigned char)~pattern(seed, 0);
    p[len - 1] = (unsigned char)~pattern(seed, len - 1);
}

void bench_fail(size_t size, const char *fmt, ...)
{
    /* One write: another rank's MPI_Abort may kill this process between two. */
    char msg[512];
    int n = snprintf(msg, sizeof msg, "%s: rank %d: DATA ERROR at message size %zu: ", prog,
                     my_rank, size);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof msg)
        vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3); /* not reached */
}

void bench_check(const void *buf, size_t len, unsigned seed, const char *what, size_t size)
{
    const unsigned char *p = buf;
    if (len == 0)
        return;
    size_t at[2] = {0, len - 1};
    for (int k = 0; k < 2; k++) {
        unsigned char want = pattern(seed, at[k]);
        if (p[at[k]] != want)
            bench_fail(size, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, at[k], len,
                       p[at[k]], want);
    }
}

void bench_print(size_t size, double value)
{
    printf("%-10zu%18.2f\n", size, value);
    fflush(stdout); /* a run that hangs later still leaves the sizes done so far */
}

void bench_print2(size_t size, double value1, double value2)
{
    printf("%-10zu%18.2f%18.2f\n", size, value1, value2);
    fflush(stdout);
}
