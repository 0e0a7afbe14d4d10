/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the tests in which a rank dies on purpose (rma_peer_failure.c, rma_origin_failure.c):
 * they must go on after errors, so a failure is printed and counted ("<TEST_NAME>: FAIL: rank R:
 * what: error"), not fatal, and each call that may hang runs under alarm(), which prints
 * "<TEST_NAME>: FAIL: hang: <step> did not return within the limit" and exits.
 * Define TEST_NAME and BLOCK (the bytes fill/same cover) before including. */
#ifndef TESTS_MPI_DYING_RANK_H
#define TESTS_MPI_DYING_RANK_H
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int rank, failures, limit = 20;
static const char *volatile step = "start";

static void on_alarm(int sig)
{
    (void)sig;
    static const char a[] = TEST_NAME ": FAIL: hang: ", b[] = " did not return within the limit\n";
    ssize_t ignored = write(1, a, sizeof a - 1);
    ignored = write(1, (const char *)step, strlen((const char *)step));
    ignored = write(1, b, sizeof b - 1);
    (void)ignored;
    _exit(1);
}

static void fail(const char *what, int rc)
{
    char e[MPI_MAX_ERROR_STRING] = "";
    int l;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, e, &l);
    for (char *p = e; *p; p++)
        if (*p == '\n')
            *p = ' ';
    printf(TEST_NAME ": FAIL: rank %d: %s%s%s\n", rank, what, rc != MPI_SUCCESS ? ": " : "", e);
    fflush(stdout);
    failures++;
}

/* An unpollable call, bounded by the alarm. */
#define GUARDED(call, name) (step = (name), alarm(limit), _guarded_rc = (call), alarm(0), _guarded_rc)
static int _guarded_rc;

static void fill(unsigned char *p, int seed)
{
    for (int i = 0; i < BLOCK; i++)
        p[i] = (unsigned char)(i * 7 + seed);
}

static int same(const unsigned char *p, int seed)
{
    for (int i = 0; i < BLOCK; i++)
        if (p[i] != (unsigned char)(i * 7 + seed))
            return 0;
    return 1;
}
#endif
