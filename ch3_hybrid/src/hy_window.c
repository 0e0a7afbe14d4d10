/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid: window creation registers the window memory and tells every member its STag and
 * the RNIC's contact; MPI_Win_free deregisters. Every flavour (create, allocate, shared, dynamic)
 * passes through gather_info; a dynamic window (size 0, memory attached later without a hook)
 * gets no STag, so its operations stay on the SCTP path. */
#include "mpidi_ch3_hybrid.h"
#include "mpidrma.h"
#include "uthash.h"

/* A peer's registered window, in its VC's table (vc->ch.hy.windows, by handle). */
typedef struct MPIDI_CH3I_Hy_remote_win {
    UT_hash_handle hh;
    MPI_Win handle;            /* the peer's window handle, as CH3 packets name it */
    uintptr_t base;
    MPI_Aint size;
    uint32_t stag;
    int atomics;                /* FOP and CAS to it may be RNIC atomics (every member asked) */
    MPIDI_CH3I_Hy_acks_t acks;  /* what our flushes to it may complete without the peer */
} MPIDI_CH3I_Hy_remote_win;

/* What each member contributes at window creation. */
typedef struct {
    uint32_t stag;              /* 0: no registered memory (or no RNIC) */
    uint16_t sctp_port, udp_port;
    uint16_t atomics;           /* asked for RNIC atomics, and its RNIC may run them (see below) */
    char addr[64];              /* "" if this process has no RNIC */
} hy_member_info;

/* The window's info asks for FOP and CAS by RNIC atomics (README, "RNIC atomics"). The target's
 * RNIC runs them with the CPU's compare-and-swap, under its device lock; CH3 applies every other
 * accumulate at the target with plain loads and stores. Another process's it applies in the
 * owner's progress engine, but the owner's own on its window inline, with no packet and no call
 * into the channel (MPIDI_CH3I_Shm_fop_op and its siblings, in MPICH 4.0.2 and 5.0.1 alike), in
 * an epoch that may begin without one too (MPI_Win_lock_all(MPI_MODE_NOCHECK)). So the two
 * exclude each other only where the RNIC runs in the owner's progress engine alone
 * (progress=caller). The standby thread serves while the process is out of that engine, which is
 * where it applies its own: a member in progress=standby accepts only `remote_only`, its promise
 * to apply none to its own part of the window. With its own thread (progress=thread) the RNIC
 * could change a word between any of CH3's loads and stores: such a member declines. One member
 * declining makes the whole window decline (hy_gather_info). */
static int wants_atomics(MPIR_Info * info)
{
    char value[16];
    int found = 0, remote_only;
    if (!info || MPIR_Info_get_impl(info, MPIDI_CH3I_HY_ATOMICS_INFO, sizeof(value), value, &found) ||
        !found)
        return 0;
    remote_only = strcmp(value, MPIDI_CH3I_HY_ATOMICS_REMOTE_ONLY) == 0;
    if (!remote_only && strcmp(value, MPIDI_CH3I_HY_ATOMICS_TRUE) != 0)
        return 0;
    if (MPIDI_CH3I_Hy_config.progress_thread)
        return 0;
    return remote_only || !MPIDI_CH3I_Hy_config.progress_standby;
}

static void remember_window(MPIDI_VC_t * vc, MPI_Win handle, void *base, MPI_Aint size, uint32_t stag,
                            int atomics)
{
    MPIDI_CH3I_Hy_remote_win *w;
    HASH_FIND_INT(vc->ch.hy.windows, &handle, w);
    if (!w) {
        if (!(w = MPL_malloc(sizeof(*w), MPL_MEM_RMA)))
            return;     /* its operations take the SCTP path */
        w->handle = handle;
        HASH_ADD_INT(vc->ch.hy.windows, handle, w, MPL_MEM_RMA);
    }
    w->base = (uintptr_t) base;
    w->size = size;
    w->stag = stag;
    w->atomics = atomics;
    memset(&w->acks, 0, sizeof(w->acks));
}

static void forget_window(MPIDI_VC_t * vc, MPI_Win handle)
{
    MPIDI_CH3I_Hy_remote_win *w;
    HASH_FIND_INT(vc->ch.hy.windows, &handle, w);
    if (w) {
        HASH_DEL(vc->ch.hy.windows, w);
        MPL_free(w);
    }
}

/* w's STag if [addr, addr+len) lies within it, else 0. */
static uint32_t stag_covering(const MPIDI_CH3I_Hy_remote_win * w, const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t) addr;
    return w && a >= w->base && len <= (size_t) w->size && a - w->base <= (size_t) w->size - len
        ? w->stag : 0;
}

uint32_t MPIDI_CH3I_Hy_stag_for(MPIDI_VC_t * vc, MPI_Win handle, const void *addr, size_t len)
{
    MPIDI_CH3I_Hy_remote_win *w;
    HASH_FIND_INT(vc->ch.hy.windows, &handle, w);
    return stag_covering(w, addr, len);
}

uint32_t MPIDI_CH3I_Hy_atomic_stag_for(MPIDI_VC_t * vc, MPI_Win handle, const void *addr)
{
    MPIDI_CH3I_Hy_remote_win *w;
    HASH_FIND_INT(vc->ch.hy.windows, &handle, w);
    /* A misaligned atomic would end the queue pair (RFC 7306 §8.2): such a word takes SCTP. */
    return w && w->atomics && ((uintptr_t) addr & 7) == 0 ? stag_covering(w, addr, 8) : 0;
}

MPIDI_CH3I_Hy_acks_t *MPIDI_CH3I_Hy_acks_of(MPIDI_VC_t * vc, MPI_Win handle)
{
    MPIDI_CH3I_Hy_remote_win *w;
    HASH_FIND_INT(vc->ch.hy.windows, &handle, w);
    return w ? &w->acks : NULL;
}

static int hy_gather_info(void *base, MPI_Aint size, int disp_unit, MPIR_Info * info,
                          MPIR_Comm * comm_ptr, MPIR_Win ** win_ptr)
{
    MPIR_Comm *comm;
    hy_member_info *all = NULL;
    int mpi_errno, me, n, atomics = 1;

    mpi_errno = MPIDI_CH3U_Win_gather_info(base, size, disp_unit, info, comm_ptr, win_ptr);
    if (mpi_errno)
        return mpi_errno;
    comm = (*win_ptr)->comm_ptr;
    me = comm->rank;
    n = comm->local_size;
    all = MPL_calloc(n, sizeof(*all), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(all == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");

    if (MPIDI_CH3I_Hy_config.rdma && MPIDI_CH3I_Hy_open() == 0) {
        hy_member_info *mine = &all[me];
        MPIDI_CH3I_Hy_local_contact(mine->addr, sizeof(mine->addr), &mine->sctp_port, &mine->udp_port);
        mine->atomics = (uint16_t) wants_atomics(info);
        if (size > 0 && base != NULL && base != MPI_BOTTOM) {
            (*win_ptr)->hy_mr = iwv_reg_mr(MPIDI_CH3I_Hy_rnic.pd, base, size, IWV_ACCESS_LOCAL_WRITE |
                                           IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ |
                                           (mine->atomics ? IWV_ACCESS_REMOTE_ATOMIC : 0));
            if ((*win_ptr)->hy_mr) {
                mine->stag = (*win_ptr)->hy_mr->rkey;
                MPIDI_CH3I_Hy_remember_region((*win_ptr)->hy_mr); /* also as an origin buffer */
            }
        }
    }
    /* Always collective, whatever this process's RNIC did: members must not disagree on it. */
    mpi_errno = MPIDI_CH3I_Allgather_bytes_inplace(all, sizeof(*all), comm);
    MPIR_ERR_CHECK(mpi_errno);

    MPIDI_CH3I_Hy_rnic.windows++;
    for (int i = 0; i < n; i++)
        atomics &= all[i].atomics != 0;
    for (int i = 0; i < n; i++) {
        MPIDI_VC_t *vc;
        if (i == me || all[i].addr[0] == '\0')
            continue;
        MPIDI_Comm_get_vc(comm, i, &vc);
        all[i].addr[sizeof(all[i].addr) - 1] = '\0';
        if (vc->ch.hy.state == MPIDI_CH3I_HY_QP_NO_CONTACT) {
            strcpy(vc->ch.hy.addr, all[i].addr);
            vc->ch.hy.sctp_port = all[i].sctp_port;
            vc->ch.hy.udp_port = all[i].udp_port;
            MPIDI_CH3I_Hy_qp_to(vc, MPIDI_CH3I_HY_QP_IDLE);
        }
        if (all[i].stag)
            remember_window(vc, (*win_ptr)->basic_info_table[i].win_handle,
                            (*win_ptr)->basic_info_table[i].base_addr,
                            (*win_ptr)->basic_info_table[i].size, all[i].stag, atomics);
        if (MPIDI_CH3I_Hy_config.connect_all && MPIDI_CH3I_Hy_rnic.dev)
            MPIDI_CH3I_Hy_connect(vc);
    }
  fn_fail:
    MPL_free(all);
    return mpi_errno;
}

static int hy_win_init(MPI_Aint size, int disp_unit, int flavor, int model, MPIR_Info * info,
                       MPIR_Comm * comm_ptr, MPIR_Win ** win_ptr)
{
    (void) size, (void) disp_unit, (void) flavor, (void) model, (void) info, (void) comm_ptr;
    (*win_ptr)->hy_mr = NULL;
    return MPI_SUCCESS;
}

/* A peer's flush may return before our CH3 handled its last PUT headers (hy_placed.c,
 * acknowledgements the origin gives itself). Each is in our CQ by the time its origin reaches
 * MPI_Win_free's barrier (the Read behind it completed first), or deferred behind control
 * packets sent before it; handle them while the window still exists. */
static int handle_last_headers(MPIR_Comm * comm)
{
    int waiting, mpi_errno = MPI_SUCCESS;
    do {
        MPIDI_CH3I_Hy_poll_cq();
        waiting = 0;
        for (int i = 0; i < comm->local_size && !waiting; i++) {
            MPIDI_VC_t *vc;
            if (i == comm->rank)
                continue;
            MPIDI_Comm_get_vc(comm, i, &vc);
            waiting = vc->ch.hy.deferred_head != NULL;
        }
        if (waiting)
            mpi_errno = MPIDI_CH3_Progress_test();
    } while (waiting && !mpi_errno);
    return mpi_errno;
}

/* After MPI_Win_free's barrier: no operation on this window is in flight anywhere. */
static int hy_win_free(MPIR_Win ** win_ptr)
{
    MPIR_Comm *comm = (*win_ptr)->comm_ptr;
    int mpi_errno = handle_last_headers(comm);
    if (mpi_errno)
        return mpi_errno;
    for (int i = 0; i < comm->local_size; i++) {
        MPIDI_VC_t *vc;
        if (i == comm->rank)
            continue;
        MPIDI_Comm_get_vc(comm, i, &vc);
        forget_window(vc, (*win_ptr)->basic_info_table[i].win_handle);
    }
    if ((*win_ptr)->hy_mr) {
        MPIDI_CH3I_Hy_forget_region((*win_ptr)->hy_mr);
        iwv_dereg_mr((*win_ptr)->hy_mr);
    }
    (*win_ptr)->hy_mr = NULL;
    if (MPIDI_CH3I_Hy_rnic.windows > 0)
        MPIDI_CH3I_Hy_rnic.windows--;
    return MPI_SUCCESS;
}

void MPIDI_CH3I_Hy_win_fns(MPIDI_CH3U_Win_fns_t * win_fns)
{
    win_fns->gather_info = hy_gather_info;
}

void MPIDI_CH3I_Hy_win_hooks(MPIDI_CH3U_Win_hooks_t * win_hooks)
{
    win_hooks->win_init = hy_win_init;
    win_hooks->win_free = hy_win_free;
}
