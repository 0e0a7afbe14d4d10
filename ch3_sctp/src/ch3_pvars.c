/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp MPI_T performance variables: the paths of each peer's association, so that a user can
 * watch multihoming and failover from inside the job. Each is an array indexed by
 * rank * MPIDI_CH3I_PVAR_PATHS + path, over the ranks of MPI_COMM_WORLD (a spawned or connected
 * process is not included) and the peer's addresses in the order the association lists them (the
 * multihome file's order: rail 1 first). Entries for no path (fewer addresses, the rank itself,
 * no association yet) read as state "none" and 0.
 *   ch3_sctp_path_state     STATE (enum ch3_sctp_path_state): none, active, unreachable,
 *                           potentially_failed, confirmed
 *   ch3_sctp_path_rx_bytes  COUNTER: bytes received from that address
 *   ch3_sctp_path_srtt_us   LEVEL: the stack's smoothed round-trip time on that path, in us
 * And two scalars about what remotes attempted (sctpm_held_stats):
 *   ch3_sctp_auth_failures  COUNTER: associations aborted for a failed proof of membership
 *   ch3_sctp_bound_aborts   COUNTER: associations aborted for passing a bound on held bytes
 * MPIR_CVAR_CH3_SCTP_PATH_REPORT prints the path variables' values once, at MPI_Finalize. */
#include "mpidi_ch3_impl.h"

enum { PATHS = MPIDI_CH3I_PVAR_PATHS };
enum what { STATE, RX_BYTES, SRTT };

/* The paths of one rank (their count; 0 for this rank, a rank not talked to, or no such rank). */
static int paths_of(int rank, sctpm_path_info *out)
{
    const MPIDI_VC_t *vc;
    if (!MPIDI_Process.my_pg || rank >= MPIDI_Process.my_pg->size || rank == MPIR_Process.rank)
        return 0;
    vc = &MPIDI_Process.my_pg->vct[rank];
    return vc->ch.peer >= 0 ? sctpm_peer_paths(MPIDI_CH3I_sctp, vc->ch.peer, out, PATHS) : 0;
}

static void read_paths(enum what what, int count, void *buf)
{
    MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    for (int i = 0; i < count; i += PATHS) {
        sctpm_path_info all[PATHS];
        const int n = paths_of(i / PATHS, all);
        for (int k = 0; k < PATHS && i + k < count; k++) {
            const sctpm_path_info *p = k < n ? &all[k] : NULL;
            switch (what) {
                case STATE:
                    /* an ended association's paths read "none": the enum has no word for it */
                    ((int *) buf)[i + k] = p && p->state != SCTPM_PATH_ENDED ? (int) p->state : 0;
                    break;
                case RX_BYTES:
                    ((unsigned long long *) buf)[i + k] = p ? p->rx_bytes : 0;
                    break;
                case SRTT:
                    ((unsigned *) buf)[i + k] = p ? p->srtt_us : 0;
                    break;
            }
        }
    }
    MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
}

static void get_state(void *addr, void *obj, int count, void *buf)
{
    (void) addr;
    (void) obj;
    read_paths(STATE, count, buf);
}

static void get_rx_bytes(void *addr, void *obj, int count, void *buf)
{
    (void) addr;
    (void) obj;
    read_paths(RX_BYTES, count, buf);
}

static void get_srtt(void *addr, void *obj, int count, void *buf)
{
    (void) addr;
    (void) obj;
    read_paths(SRTT, count, buf);
}

static const char *state_name(sctpm_path_state state)
{
    switch (state) {
        case SCTPM_PATH_ACTIVE:
            return "active";
        case SCTPM_PATH_UNREACHABLE:
            return "unreachable";
        case SCTPM_PATH_POTENTIALLY_FAILED:
            return "potentially_failed";
        case SCTPM_PATH_CONFIRMED:
            return "confirmed";
        case SCTPM_PATH_ENDED:
            return "ended";
        default:
            return "none";
    }
}

/* The same data as the variables, read by the channel itself at MPI_Finalize, for a user who wants
 * to see at a glance that every rail carried traffic. Peers never talked to are left out; a peer
 * that finished first shows its paths as "ended", with the bytes that came over each. */
void MPIDI_CH3I_Path_report(void)
{
    const int world = MPIDI_Process.my_pg ? MPIDI_Process.my_pg->size : 0;
    for (int rank = 0; rank < world; rank++) {
        sctpm_path_info all[PATHS];
        char line[900];
        size_t used = 0;
        const int n = paths_of(rank, all);
        for (int k = 0; k < n && used < sizeof(line); k++)
            used += (size_t) snprintf(line + used, sizeof(line) - used, "%s%s %s, %llu bytes in, srtt %u us",
                                      k ? "; " : "", all[k].address, state_name(all[k].state),
                                      (unsigned long long) all[k].rx_bytes, all[k].srtt_us);
        if (n > 0)
            MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ASKED, "paths to rank %d: %s", rank, line);
    }
}

static sctpm_held_stats held_stats(void)
{
    sctpm_held_stats h = { 0 };
    MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    if (MPIDI_CH3I_sctp)
        sctpm_held_stats_get(MPIDI_CH3I_sctp, &h);
    MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    return h;
}

static void get_auth_failures(void *addr, void *obj, int count, void *buf)
{
    (void) addr;
    (void) obj;
    (void) count;
    *(unsigned long long *) buf = held_stats().auth_failures;
}

static void get_bound_aborts(void *addr, void *obj, int count, void *buf)
{
    (void) addr;
    (void) obj;
    (void) count;
    *(unsigned long long *) buf = held_stats().bound_aborts;
}

void MPIDI_CH3I_Pvars_register(int world_size)
{
    static int done = 0;
    MPI_T_enum states;
    const int count = world_size * PATHS;
    const int flags = MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS;
    if (done)
        return;
    done = 1;
    if (MPIDI_CH3I_Ext()->pvars_register)
        MPIDI_CH3I_Ext()->pvars_register();
    MPIR_T_enum_create("ch3_sctp_path_state", &states);
    MPIR_T_enum_add_item(states, "none", 0);
    MPIR_T_enum_add_item(states, "active", SCTPM_PATH_ACTIVE);
    MPIR_T_enum_add_item(states, "unreachable", SCTPM_PATH_UNREACHABLE);
    MPIR_T_enum_add_item(states, "potentially_failed", SCTPM_PATH_POTENTIALLY_FAILED);
    MPIR_T_enum_add_item(states, "confirmed", SCTPM_PATH_CONFIRMED);
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_STATE, MPI_INT, "ch3_sctp_path_state", NULL, count, states,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags, get_state, NULL,
                              "CH3_SCTP",
                              "state of each path to each rank (index rank * 4 + path; path = the peer's "
                              "address in multihome-file order)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ch3_sctp_path_rx_bytes", NULL,
                              count, MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags,
                              get_rx_bytes, NULL, "CH3_SCTP",
                              "bytes received from each address of each rank (index rank * 4 + path)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED, "ch3_sctp_path_srtt_us", NULL, count,
                              MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_DETAIL, MPI_T_BIND_NO_OBJECT, flags, get_srtt,
                              NULL, "CH3_SCTP",
                              "smoothed round-trip time of each path to each rank in us (index rank * 4 + path)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ch3_sctp_auth_failures", NULL, 1,
                              MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags,
                              get_auth_failures, NULL, "CH3_SCTP",
                              "associations this process aborted because their opener failed to prove that "
                              "it holds this process's business card (MPIR_CVAR_CH3_SCTP_AUTH)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, "ch3_sctp_bound_aborts", NULL, 1,
                              MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, flags,
                              get_bound_aborts, NULL, "CH3_SCTP",
                              "associations this process aborted because a remote made it hold more than "
                              "MPIR_CVAR_CH3_SCTP_PRE_HELLO_BYTES or _REORDER_BYTES");
}
