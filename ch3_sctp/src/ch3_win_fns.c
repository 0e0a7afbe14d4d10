/* ch3:sctp: RMA uses CH3's defaults; the transport keeps every VC's packets in order. */
#include "mpidi_ch3_impl.h"
#include "mpidrma.h"

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
