/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid: memory the RNIC knows beforehand. MPI_Alloc_mem memory is registered when it is
 * allocated (MPI's hint that it will take part in one-sided communication), and so is every
 * window; an RDMA transfer whose origin buffer lies in such a region uses that registration.
 * Any other origin buffer is registered for the one transfer (cheap here: a table entry). */
#include "mpidi_ch3_hybrid.h"

typedef struct hy_region {
    struct hy_region *next, *prev;
    struct iwv_mr *mr;
    int allocated;      /* MPI_Alloc_mem's: freed with it */
} hy_region;
static hy_region *regions = NULL;

/* NULL if out of memory: transfers from that region then register their buffers one by one. */
static hy_region *remember(struct iwv_mr *mr, int allocated)
{
    hy_region *r = MPL_malloc(sizeof(*r), MPL_MEM_RMA);
    if (!r)
        return NULL;
    r->mr = mr;
    r->allocated = allocated;
    DL_PREPEND(regions, r);
    return r;
}

void MPIDI_CH3I_Hy_remember_region(struct iwv_mr *mr)
{
    remember(mr, 0);
}

/* Drop the first region of mr (any, or MPI_Alloc_mem's at address `allocated`); 1 if one was. */
static int forget(struct iwv_mr *mr, const void *allocated)
{
    hy_region *r;
    DL_FOREACH(regions, r)
        if (allocated ? r->allocated && r->mr->addr == allocated : r->mr == mr) {
            DL_DELETE(regions, r);
            if (allocated)
                iwv_dereg_mr(r->mr);
            MPL_free(r);
            return 1;
        }
    return 0;
}

void MPIDI_CH3I_Hy_forget_region(struct iwv_mr *mr)
{
    forget(mr, NULL);
}

struct iwv_mr *MPIDI_CH3I_Hy_registered(const void *buf, size_t len)
{
    uintptr_t a = (uintptr_t) buf;
    hy_region *r;
    DL_FOREACH(regions, r) {
        uintptr_t base = (uintptr_t) r->mr->addr;
        if (a >= base && len <= r->mr->length && a - base <= r->mr->length - len)
            return r->mr;
    }
    return NULL;
}

void *MPIDI_CH3I_Alloc_mem(MPI_Aint size, MPIR_Info * info_ptr)
{
    void *p = MPL_malloc(size, MPL_MEM_USER);
    struct iwv_mr *mr;
    (void) info_ptr;
    if (!p || size <= 0 || !MPIDI_CH3I_Hy_config.rdma || MPIDI_CH3I_Hy_open() != 0)
        return p;
    mr = iwv_reg_mr(MPIDI_CH3I_Hy_rnic.pd, p, size, IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE |
                    IWV_ACCESS_REMOTE_READ);
    if (mr && !remember(mr, 1))
        iwv_dereg_mr(mr);       /* not remembered: nothing would deregister it */
    return p;
}

int MPIDI_CH3I_Free_mem(void *ptr)
{
    forget(NULL, ptr);
    MPL_free(ptr);
    return MPI_SUCCESS;
}
