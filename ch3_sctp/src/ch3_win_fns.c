/* ch3:sctp: RMA uses CH3's defaults; the transport keeps every VC's packets in order. This is the
 * one source file only ch3:sctp builds (ch3:hybrid has its own), so it also holds ch3:sctp's
 * extension table: no hook. */
#include "mpidi_ch3_impl.h"
#include "mpidrma.h"

const MPIDI_CH3I_Ext_t MPIDI_CH3I_ext = { NULL };

int MPIDI_CH3_Win_fns_init(MPIDI_CH3U_Win_fns_t * win_fns)
{
    (void) win_fns;
    return MPI_SUCCESS;
}

int MPIDI_CH3_Win_hooks_init(MPIDI_CH3U_Win_hooks_t * win_hooks)
{
    (void) win_hooks;
    return MPI_SUCCESS;
}

int MPIDI_CH3_Win_pkt_orderings_init(MPIDI_CH3U_Win_pkt_ordering_t * win_pkt_orderings)
{
    /* RMA packets are control packets: one ordered domain per VC under every stream policy. */
    win_pkt_orderings->am_flush_ordered = 1;
    return MPI_SUCCESS;
}
