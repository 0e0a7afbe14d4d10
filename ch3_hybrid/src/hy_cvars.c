/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid configuration as MPICH control variables (read at MPI_Init). The SCTP transport's own
 * settings are ch3:sctp's MPIR_CVAR_CH3_SCTP_* and apply here too.

=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories:
    - name        : CH3_HYBRID
      description : cvars that control the ch3:hybrid channel (one-sided operations by RDMA over iWARP)

cvars:
    - name        : MPIR_CVAR_CH3_HYBRID_RDMA
      category    : CH3_HYBRID
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        move MPI_Put and MPI_Get data by RDMA (false: the process runs as ch3:sctp, none of
        ch3:hybrid's hooks runs; every rank of a job must agree).

    - name        : MPIR_CVAR_CH3_HYBRID_PUT_THRESHOLD
      category    : CH3_HYBRID
      type        : int
      default     : 524288
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        MPI_Put of at least this many bytes (contiguous, predefined type) goes by RDMA Write.
        The default is where RDMA overtook the SCTP path on loopback (2026-11-24).

    - name        : MPIR_CVAR_CH3_HYBRID_PUT_HEADER
      category    : CH3_HYBRID
      type        : string
      default     : qp
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        how the CH3 header of an RDMA put reaches the target: qp (as an RDMAP Send on the queue
        pair right behind the RDMA Write, while credit lasts) or sctp (on the SCTP path once a
        fence RDMA Read says the data is placed: one round trip more).

    - name        : MPIR_CVAR_CH3_HYBRID_GET_THRESHOLD
      category    : CH3_HYBRID
      type        : int
      default     : 131072
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        MPI_Get of at least this many bytes (contiguous, predefined type) goes by RDMA Read
        (default: about where RDMA overtook the SCTP path on loopback, 2026-11-24).

    - name        : MPIR_CVAR_CH3_HYBRID_GET_MODE
      category    : CH3_HYBRID
      type        : string
      default     : read
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        how an RDMA-sized MPI_Get moves: read (the origin's RDMA Read from the target window) or
        write (the thesis' variant: the target RDMA-Writes into the origin buffer, then sends a
        header-only response).

    - name        : MPIR_CVAR_CH3_HYBRID_CONNECT
      category    : CH3_HYBRID
      type        : string
      default     : ondemand
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        when queue pairs connect: ondemand (at the first RDMA-sized operation to a peer, which
        itself still goes over SCTP) or all (to every window member at window creation).

    - name        : MPIR_CVAR_CH3_HYBRID_PROGRESS
      category    : CH3_HYBRID
      type        : string
      default     : standby
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        who runs the software RNIC: caller (MPI's progress engine, on the thread that waits in
        MPI), thread (a thread of its own, which also moves data while the process computes) or
        standby (the progress engine while the process is in MPI; a thread that sleeps meanwhile
        takes over once the process has stayed out of MPI's progress engine for
        MPIR_CVAR_CH3_HYBRID_STANDBY_AFTER_US).

    - name        : MPIR_CVAR_CH3_HYBRID_STANDBY_AFTER_US
      category    : CH3_HYBRID
      type        : int
      default     : 250
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        progress=standby: microseconds out of MPI's progress engine after which the standby thread
        reads the transport's socket and serves RDMA (from 10 to 1000000). Shorter answers a
        computing target sooner; while the process is in MPI the thread looks this often whether
        it left.

    - name        : MPIR_CVAR_CH3_HYBRID_INITIATE_TIMEOUT_MS
      category    : CH3_HYBRID
      type        : int
      default     : 10000
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        an incoming queue-pair association whose iWARP Initiate has not arrived whole within this
        many milliseconds is aborted (at least 1).

    - name        : MPIR_CVAR_CH3_HYBRID_PENDING_CONNECTS
      category    : CH3_HYBRID
      type        : int
      default     : 64
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        incoming queue-pair associations waiting for their Initiate at most; one more aborts the
        oldest (at least 1).

    - name        : MPIR_CVAR_CH3_HYBRID_EARLY_BYTES
      category    : CH3_HYBRID
      type        : int
      default     : 67108864
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        per queue pair, bytes of iWARP messages held while they arrived ahead of a missing one;
        more ends that queue pair with an error naming the bound (its transfers then go over
        SCTP). At least 65536.

    - name        : MPIR_CVAR_CH3_HYBRID_DEFERRED_HEADERS
      category    : CH3_HYBRID
      type        : int
      default     : 65536
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        per peer, RDMA put headers held while they arrived on the queue pair ahead of the
        peer's SCTP packets they follow (about 110 bytes each); one more ends that queue pair
        with a message naming the bound, and the peer sends what was not handled again over
        SCTP. At least 64.

    - name        : MPIR_CVAR_CH3_HYBRID_QP_SYNC_TIMEOUT
      category    : CH3_HYBRID
      type        : int
      default     : 600
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        seconds a rank waits for a peer to answer which RDMA put headers it handled after their
        queue pair broke (QP_SYNC) while the SCTP association stays up; past this the peer is
        treated as lost (its operations fail with MPIX_ERR_PROC_FAILED). A peer answers from its
        progress engine, so this must exceed the longest time it computes outside MPI. 0 = wait
        forever.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/
#include "mpidi_ch3_hybrid.h"

MPIDI_CH3I_Hy_config_t MPIDI_CH3I_Hy_config = {
    .rdma = 1, .put_threshold = 524288, .get_threshold = 131072, .header_on_qp = 1,
    .initiate_timeout_ms = 10000, .pending_connects = 64, .early_bytes = 64 << 20, .deferred_headers = 65536,
    .qp_sync_timeout_s = 600, .standby_after_us = 250
};

static int bad_setting(const char *why, const char *value)
{
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "%s, not '%s'", why, value);
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__, MPI_ERR_OTHER,
                                "**ch3|hybrid|cvar", "**ch3|hybrid|cvar %s", why);
}

static int is(const char *value, const char *name)
{
    return value != NULL && strcmp(value, name) == 0;
}

/* A string CVAR with two values: 0 for `no` (or unset), 1 for `yes`, -1 for anything else. */
static int choice(const char *value, const char *no, const char *yes)
{
    if (value == NULL || strcmp(value, no) == 0)
        return 0;
    return strcmp(value, yes) == 0 ? 1 : -1;
}

int MPIDI_CH3I_Hy_read_cvars(void)
{
    MPIDI_CH3I_Hy_config_t *c = &MPIDI_CH3I_Hy_config;
    char number[32];
    c->rdma = MPIR_CVAR_CH3_HYBRID_RDMA;
    c->put_threshold = MPIR_CVAR_CH3_HYBRID_PUT_THRESHOLD;
    c->get_threshold = MPIR_CVAR_CH3_HYBRID_GET_THRESHOLD;
    c->get_write = choice(MPIR_CVAR_CH3_HYBRID_GET_MODE, "read", "write");
    if (c->get_write < 0)
        return bad_setting("MPIR_CVAR_CH3_HYBRID_GET_MODE must be read or write", MPIR_CVAR_CH3_HYBRID_GET_MODE);
    c->header_on_qp = choice(MPIR_CVAR_CH3_HYBRID_PUT_HEADER, "sctp", "qp");
    if (c->header_on_qp < 0)
        return bad_setting("MPIR_CVAR_CH3_HYBRID_PUT_HEADER must be qp or sctp", MPIR_CVAR_CH3_HYBRID_PUT_HEADER);
    c->connect_all = choice(MPIR_CVAR_CH3_HYBRID_CONNECT, "ondemand", "all");
    if (c->connect_all < 0)
        return bad_setting("MPIR_CVAR_CH3_HYBRID_CONNECT must be ondemand or all", MPIR_CVAR_CH3_HYBRID_CONNECT);
    c->progress_thread = is(MPIR_CVAR_CH3_HYBRID_PROGRESS, "thread");
    c->progress_standby = is(MPIR_CVAR_CH3_HYBRID_PROGRESS, "standby");
    if (!c->progress_thread && !c->progress_standby && !is(MPIR_CVAR_CH3_HYBRID_PROGRESS, "caller"))
        return bad_setting("MPIR_CVAR_CH3_HYBRID_PROGRESS must be caller, thread or standby",
                           MPIR_CVAR_CH3_HYBRID_PROGRESS);
    /* Fault injection for tests (not a CVAR: no user wants it): breaks one queue pair under load
     * while its peer lives, so that the recovery of RDMA transfers in flight can be tested. */
    if (getenv("MPICH_HYBRID_TEST_BREAK_QP_AFTER"))
        c->break_qp_after = atol(getenv("MPICH_HYBRID_TEST_BREAK_QP_AFTER"));
    c->break_qp_under_header = getenv("MPICH_HYBRID_TEST_BREAK_QP_UNDER_HEADER") != NULL;
    /* ... and a completion queue with room for this many queue pairs only, so that peers past it
     * are tested on SCTP. */
    if (getenv("MPICH_HYBRID_TEST_MAX_QPS"))
        c->max_qps = atoi(getenv("MPICH_HYBRID_TEST_MAX_QPS"));
    /* ... and a peer that never answers QP_SYNC, though it lives (MPIR_CVAR_CH3_HYBRID_QP_SYNC_TIMEOUT). */
    c->ignore_qp_sync = getenv("MPICH_HYBRID_TEST_IGNORE_QP_SYNC") != NULL;
    c->initiate_timeout_ms = MPIR_CVAR_CH3_HYBRID_INITIATE_TIMEOUT_MS;
    c->pending_connects = MPIR_CVAR_CH3_HYBRID_PENDING_CONNECTS;
    c->early_bytes = MPIR_CVAR_CH3_HYBRID_EARLY_BYTES;
    c->deferred_headers = MPIR_CVAR_CH3_HYBRID_DEFERRED_HEADERS;
    c->qp_sync_timeout_s = MPIR_CVAR_CH3_HYBRID_QP_SYNC_TIMEOUT;
    c->standby_after_us = MPIR_CVAR_CH3_HYBRID_STANDBY_AFTER_US;
    if (c->standby_after_us < 10 || c->standby_after_us > 1000000) {
        snprintf(number, sizeof(number), "%d", c->standby_after_us);
        return bad_setting("MPIR_CVAR_CH3_HYBRID_STANDBY_AFTER_US must be from 10 to 1000000 (microseconds)", number);
    }
    if (c->initiate_timeout_ms < 1 || c->pending_connects < 1) {
        snprintf(number, sizeof(number), "%d", c->initiate_timeout_ms < 1 ? c->initiate_timeout_ms : c->pending_connects);
        return bad_setting("MPIR_CVAR_CH3_HYBRID_INITIATE_TIMEOUT_MS and _PENDING_CONNECTS must be at least 1", number);
    }
    if (c->early_bytes < 65536) {
        snprintf(number, sizeof(number), "%d", c->early_bytes);
        return bad_setting("MPIR_CVAR_CH3_HYBRID_EARLY_BYTES must be at least 65536", number);
    }
    if (c->deferred_headers < MPIDI_CH3I_HY_HEADER_CREDITS) {
        snprintf(number, sizeof(number), "%d", c->deferred_headers);
        return bad_setting("MPIR_CVAR_CH3_HYBRID_DEFERRED_HEADERS must be at least 64", number);
    }
    if (c->qp_sync_timeout_s < 0) {
        snprintf(number, sizeof(number), "%d", c->qp_sync_timeout_s);
        return bad_setting("MPIR_CVAR_CH3_HYBRID_QP_SYNC_TIMEOUT must be 0 (wait forever) or seconds", number);
    }
    if (c->put_threshold < 1 || c->get_threshold < 1) {
        snprintf(number, sizeof(number), "%ld", (long) (c->put_threshold < 1 ? c->put_threshold : c->get_threshold));
        return bad_setting("MPIR_CVAR_CH3_HYBRID_PUT_THRESHOLD and _GET_THRESHOLD must be at least 1 (byte)", number);
    }
    return MPI_SUCCESS;
}
