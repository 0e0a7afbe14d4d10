/* ch3:sctp: RMA uses CH3's defaults, which an extension may change (its win_fns and win_hooks);
 * the transport keeps every VC's packets in order. */
#include "mpidi_ch3_impl.h"
#include "mpidrma.h"

int MPIDI_CH3_Win_fns_init(MPIDI_CH3U_Win_fns_t * win_fns)
{
    if (MPIDI_CH3I_ext.win_fns)
        MPIDI_CH3I_ext.win_fns(win_fns);
    return MPI_SUCCESS;
}

int MPIDI_CH3_Win_hooks_init(MPIDI_CH3U_Win_hooks_t * win_hooks)
{
    if (MPIDI_CH3I_ext.win_hooks)
        MPIDI_CH3I_ext.win_hooks(win_hooks);
    return MPI_SUCCESS;
}

int MPIDI_CH3_Win_pkt_orderings_init(MPIDI_CH3U_Win_pkt_ordering_t * win_pkt_orderings)
{
    /* RMA packets are control packets: one ordered domain per VC under every stream policy. An
     * extension that moves RMA data another way keeps each header behind its data (ch3:hybrid
     * holds later packets until the data is placed), so flushes stay ordered. */
    win_pkt_orderings->am_flush_ordered = 1;
    return MPI_SUCCESS;
}
