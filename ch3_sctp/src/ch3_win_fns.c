/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: RMA uses CH3's defaults, which an extension may change (its win_fns and win_hooks);
 * the transport keeps every VC's packets in order. The window hooks also keep the target side's
 * records (ch3_rma_dead_origin.c) and give each window a target entry per rank. */
#include "mpidi_ch3_impl.h"
#include "mpidrma.h"

int MPIDI_CH3_Win_fns_init(MPIDI_CH3U_Win_fns_t * win_fns)
{
    if (MPIDI_CH3I_Ext()->win_fns)
        MPIDI_CH3I_Ext()->win_fns(win_fns);
    return MPI_SUCCESS;
}

/* Every window gets the target side's record of its lock holders (ch3_rma_dead_origin.c), around
 * the extension's hooks. */
static MPIDI_CH3U_Win_hooks_t ext_hooks;

/* A target entry for every rank of the window's communicator. With fewer (the window's pool holds
 * MIN(MPIR_CVAR_CH3_RMA_TARGET_WIN_POOL_SIZE, 256 by default, the communicator's size), then the
 * global pool is shared), an MPI_Win_lock_all epoch that needs one more switches to CH3's
 * window-wide protocol, which fails an assertion in CH3 itself (outstanding_locks >= 0 in
 * mpidrma.h: a grant of a per-target lock is counted against the window-wide requests), on every
 * channel; and its lock requests have no target entry by which a lost peer's could be failed
 * (ch3_rma_failure.c). With an entry per rank, lock_all always locks per target. */
typedef struct extra_targets {
    MPIR_Win *win;
    MPIDI_RMA_Target_t *entries;
    struct extra_targets *next;
} extra_targets;
static extra_targets *extras;

static int add_target_entries(MPIR_Win * win)
{
    int have = 0, need = MPIR_Comm_size(win->comm_ptr);
    extra_targets *x;
    for (MPIDI_RMA_Target_t * e = win->target_pool_head; e; e = e->next)
        have++;
    if (have >= need)
        return MPI_SUCCESS;
    x = MPL_malloc(sizeof(*x), MPL_MEM_RMA);
    if (x)
        x->entries = MPL_calloc(need - have, sizeof(MPIDI_RMA_Target_t), MPL_MEM_RMA);
    if (!x || !x->entries) {
        MPL_free(x);
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    }
    for (int i = 0; i < need - have; i++) {
        x->entries[i].pool_type = MPIDI_RMA_POOL_WIN;  /* a freed one returns to this window */
        DL_APPEND(win->target_pool_head, &x->entries[i]);
    }
    x->win = win;
    x->next = extras;
    extras = x;
    return MPI_SUCCESS;
}

/* The window's epochs are over (MPID_Win_free checked), so none of its entries is in use. */
static void free_target_entries(MPIR_Win * win)
{
    for (extra_targets ** p = &extras; *p; p = &(*p)->next)
        if ((*p)->win == win) {
            extra_targets *x = *p;
            *p = x->next;
            MPL_free(x->entries);
            MPL_free(x);
            return;
        }
}

static int win_init(MPI_Aint size, int disp_unit, int flavor, int model, MPIR_Info * info,
                    MPIR_Comm * comm_ptr, MPIR_Win ** win_ptr)
{
    int mpi_errno = MPI_SUCCESS;
    if (ext_hooks.win_init)
        mpi_errno = ext_hooks.win_init(size, disp_unit, flavor, model, info, comm_ptr, win_ptr);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = add_target_entries(*win_ptr);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_CH3I_Rma_target_win_init(*win_ptr);
    return mpi_errno;
}

static int win_free(MPIR_Win ** win_ptr)
{
    MPIDI_CH3I_Rma_target_win_free(*win_ptr);
    free_target_entries(*win_ptr);
    return ext_hooks.win_free ? ext_hooks.win_free(win_ptr) : MPI_SUCCESS;
}

int MPIDI_CH3_Win_hooks_init(MPIDI_CH3U_Win_hooks_t * win_hooks)
{
    if (MPIDI_CH3I_Ext()->win_hooks)
        MPIDI_CH3I_Ext()->win_hooks(win_hooks);
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
