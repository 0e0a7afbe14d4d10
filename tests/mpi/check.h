/* SPDX-License-Identifier: BSD-3-Clause */
/* Failure reporting shared by the MPI test programs. Define TEST_NAME and declare
 * `static int rank;` before including: a failure prints "<name>: rank N: FAIL (line L): ..."
 * (run-tests looks for it) and aborts the job. */
#ifndef TESTS_MPI_CHECK_H
#define TESTS_MPI_CHECK_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void fail(int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: rank %d: FAIL (line %d): ", TEST_NAME, rank, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    /* MPI_Abort makes hydra kill every process at once, and a line still in the pipe to this
     * process's proxy can be lost then (seen: 1 run in 5 of the failover test's all-rails-down
     * case lost every rank's FAIL line). A tenth of a second lets the proxy forward it. */
    for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.1;)
        ; /* (MPI_Wtime: no POSIX header under -std=c99) */
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}
#define FAIL(...) fail(__LINE__, __VA_ARGS__)

/* Errors are returned (not fatal) so that the failing call is named. */
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

/* An MPI_T counter (MPI_UNSIGNED_LONG_LONG, count 1) by name, read now; -1 if this install has
 * none of that name (MPI_T initialised by the caller). */
static inline long long pvar_counter(const char *name)
{
    int index, count;
    unsigned long long value = 0;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index) != MPI_SUCCESS)
        return -1;
    CHK(MPI_T_pvar_session_create(&session));
    CHK(MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count));
    CHK(MPI_T_pvar_read(session, handle, &value));
    CHK(MPI_T_pvar_handle_free(session, &handle));
    CHK(MPI_T_pvar_session_free(&session));
    return (long long) value;
}

#endif
