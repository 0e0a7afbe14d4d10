/* ch3:sctp: RMA uses CH3's defaults, which an extension may change (its win_fns and win_hooks);
 * the transport keeps every VC's packets in order. The window hooks also keep the target side's
 * records (ch3_rma_dead_origin.c). */
#include "mpidi_ch3_impl.h"
#include "mpidrma.h"

int MPIDI_CH3_Win_fns_init(MPIDI_CH3U_Win_fns_t * win_fns)
{
    if (MPIDI_CH3I_ext.win_fns)
        MPIDI_CH3I_ext.win_fns(win_fns);
    return MPI_SUCCESS;
}

/* Every window gets the target side's record of its lock holders (ch3_rma_dead_origin.c), around
 * the extension's hooks. */
static MPIDI_CH3U_Win_hooks_t ext_hooks;

static int win_init(MPI_Aint size, int disp_unit, int flavor, int model, MPIR_Info * info,
                    MPIR_Comm * comm_ptr, MPIR_Win ** win_ptr)
{
    int mpi_errno = MPI_SUCCESS;
    if (ext_hooks.win_init)
        mpi_errno = ext_hooks.win_init(size, disp_unit, flavor, model, info, comm_ptr, win_ptr);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_CH3I_Rma_target_win_init(*win_ptr);
    return mpi_errno;
}

static int win_free(MPIR_Win ** win_ptr)
{
    MPIDI_CH3I_Rma_target_win_free(*win_ptr);
    return ext_hooks.win_free ? ext_hooks.win_free(win_ptr) : MPI_SUCCESS;
}

int MPIDI_CH3_Win_hooks_init(MPIDI_CH3U_Win_hooks_t * win_hooks)
{
    if (MPIDI_CH3I_ext.win_hooks)
        MPIDI_CH3I_ext.win_hooks(win_hooks);
    ext_hooks = *win_hooks;
    win_hooks->win_init = win_init;
    win_hooks->win_free = win_free;
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
