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
        move MPI_Put and MPI_Get data by RDMA (false: every operation on the SCTP path, as ch3:sctp).

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
      default     : caller
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        who runs the software RNIC: caller (MPI's progress engine, on the thread that waits in
        MPI) or thread (a thread of its own, which also moves data while the process computes).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/
#include "mpidi_ch3_hybrid.h"

MPIDI_CH3I_Hy_config_t MPIDI_CH3I_Hy_config = { 1, 524288, 131072, 0, 1, 0, 0, 0 };

static int bad_setting(const char *why, const char *value)
{
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "%s, not '%s'", why, value);
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__, MPI_ERR_OTHER,
                                "**ch3|hybrid|cvar", "**ch3|hybrid|cvar %s", why);
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
    c->progress_thread = choice(MPIR_CVAR_CH3_HYBRID_PROGRESS, "caller", "thread");
    if (c->progress_thread < 0)
        return bad_setting("MPIR_CVAR_CH3_HYBRID_PROGRESS must be caller or thread", MPIR_CVAR_CH3_HYBRID_PROGRESS);
    /* Fault injection for tests (not a CVAR: no user wants it): breaks one queue pair under load
     * while its peer lives, so that the recovery of RDMA transfers in flight can be tested. */
    if (getenv("MPICH_HYBRID_TEST_BREAK_QP_AFTER"))
        c->break_qp_after = atol(getenv("MPICH_HYBRID_TEST_BREAK_QP_AFTER"));
    /* ... and a completion queue with room for this many queue pairs only, so that peers past it
     * are tested on SCTP. */
    if (getenv("MPICH_HYBRID_TEST_MAX_QPS"))
        c->max_qps = atoi(getenv("MPICH_HYBRID_TEST_MAX_QPS"));
    if (c->put_threshold < 1 || c->get_threshold < 1) {
        snprintf(number, sizeof(number), "%ld", (long) (c->put_threshold < 1 ? c->put_threshold : c->get_threshold));
        return bad_setting("MPIR_CVAR_CH3_HYBRID_PUT_THRESHOLD and _GET_THRESHOLD must be at least 1 (byte)", number);
    }
    return MPI_SUCCESS;
}
