/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp and ch3:hybrid: what differs between the MPICH releases the channels build against
 * (4.0.x and 5.0.x). Every MPICH version test of the channels' sources is here, named by the
 * release that made the change. MPICH_NUMVERSION (mpi.h) is major * 10^7 + minor * 10^5 + ... */
#ifndef MPIDI_CH3_COMPAT_H_INCLUDED
#define MPIDI_CH3_COMPAT_H_INCLUDED

#define MPIDI_CH3I_MPICH_AT_LEAST(major_, minor_) \
    (MPICH_NUMVERSION >= (major_) * 10000000 + (minor_) * 100000)

/* 4.2 removed the POBJ critical sections; a progress state then holds no lock of its own. */
#if MPIDI_CH3I_MPICH_AT_LEAST(4, 2)
#define MPIDI_CH3I_PROGRESS_STATE_ENTER() do { } while (0)
#define MPIDI_CH3I_PROGRESS_STATE_EXIT() do { } while (0)
#else
#define MPIDI_CH3I_PROGRESS_STATE_ENTER() \
    MPID_THREAD_CS_ENTER(POBJ, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX)
#define MPIDI_CH3I_PROGRESS_STATE_EXIT() \
    MPID_THREAD_CS_EXIT(POBJ, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX)
#endif

/* 4.3 runs progress hooks per VCI; CH3 has one, and -1 runs the hooks of every VCI. */
#if MPIDI_CH3I_MPICH_AT_LEAST(4, 3)
#define MPIDI_CH3I_Progress_hooks(made_progress_) MPIR_Progress_hook_exec_all(-1, made_progress_)
#else
#define MPIDI_CH3I_Progress_hooks(made_progress_) MPIR_Progress_hook_exec_all(made_progress_)
#endif

/* The context id offset of point-to-point traffic (CH3's PSCW post messages use it):
 * MPIR_CONTEXT_INTRA_PT2PT in 4.0, MPIR_CONTEXT_PT2PT_OFFSET by 5.0 (tested by name). */
#ifdef MPIR_CONTEXT_PT2PT_OFFSET
#define MPIDI_CH3I_CONTEXT_PT2PT MPIR_CONTEXT_PT2PT_OFFSET
#else
#define MPIDI_CH3I_CONTEXT_PT2PT MPIR_CONTEXT_INTRA_PT2PT
#endif

/* An allgather in place of bytes_each bytes per member of comm, for the channel's own window
 * set-up. By 5.0 the internal collectives take an attribute word, return every error and accept
 * only MPICH's internal datatypes (MPIR_BYTE_INTERNAL, from configure); 4.0 reports a peer's
 * failure through an MPIR_Errflag_t beside the return code and takes MPI_BYTE. (Both declare
 * MPIR_Allgather before mpiimpl.h includes this header.) */
static inline int MPIDI_CH3I_Allgather_bytes_inplace(void *recvbuf, MPI_Aint bytes_each,
                                                     MPIR_Comm * comm)
{
#if MPIDI_CH3I_MPICH_AT_LEAST(5, 0)
    return MPIR_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, bytes_each,
                          MPIR_BYTE_INTERNAL, comm, 0);
#else
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    int mpi_errno = MPIR_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, bytes_each,
                                   MPI_BYTE, comm, &errflag);
    if (mpi_errno == MPI_SUCCESS && errflag != MPIR_ERR_NONE)
        mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                         MPI_ERR_OTHER, "**coll_fail", NULL);
    return mpi_errno;
#endif
}

/* ---- For the channel's own files only (they include mpidi_ch3_impl.h, which defines its guard
 * before MPICH's headers bring this one in). Every MPICH file compiles what is above; what is
 * below is skipped there, so a change to it leaves their preprocessed text, and ccache's hits,
 * as they were (a change above recompiles all of MPICH). ---- */
#ifdef MPIDI_CH3_IMPL_H_INCLUDED

/* Whether CH3's MPIDI_CH3U_Check_for_failed_procs may read the process manager's list of dead
 * processes. By 5.0 it reads the list with MPIR_pmi_get_jobattr and dereferences the result,
 * NULL under a process manager without that key (MPICH built for a third party's PMI); 4.0 reads
 * it into a buffer of its own and returns a PMI error instead. */
static inline int MPIDI_CH3I_Pm_lists_dead_procs(void)
{
#if MPIDI_CH3I_MPICH_AT_LEAST(5, 0)
    char *list = MPIR_pmi_get_jobattr("PMI_dead_processes");
    MPL_free(list);
    return list != NULL;
#else
    return 1;
#endif
}

#endif /* MPIDI_CH3_IMPL_H_INCLUDED */
#endif /* MPIDI_CH3_COMPAT_H_INCLUDED */
