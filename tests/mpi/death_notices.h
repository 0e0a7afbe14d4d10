/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the tests in which a rank dies on purpose. Under mpiexec -disable-auto-cleanup, hydra
 * tells the survivors of a death (SIGUSR1 and its list of dead processes), which ch3:sctp reads
 * from MPI_Init on. With DEATH_NOTICES=off in the environment (run-tests' "-assoc" entries), the
 * test ignores SIGUSR1 again after MPI_Init, which takes those notices away: the channel then learns
 * of a death only from the association that ends, the path a process manager without notices
 * leaves. Before MPI_Init every such test ignores SIGUSR1 itself, as ch3:sock installs no handler. */
#ifndef TESTS_MPI_DEATH_NOTICES_H
#define TESTS_MPI_DEATH_NOTICES_H
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void death_notices_after_init(void)
{
    const char *v = getenv("DEATH_NOTICES");
    if (v && strcmp(v, "off") == 0)
        signal(SIGUSR1, SIG_IGN);
}
#endif
