/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid MPI_T performance variables: how much one-sided data this process's RNIC moved (as
 * origin, or as the target answering a GET_MODE=write GET), so that a user, a test or a benchmark
 * can tell the RDMA path from the SCTP one.
 *   ch3_hybrid_rdma_puts       COUNTER: MPI_Put operations whose data an RDMA Write placed
 *   ch3_hybrid_rdma_gets       COUNTER: MPI_Get operations whose data an RDMA Read (or Write) moved
 *   ch3_hybrid_rdma_bytes      COUNTER: the data of both
 *   ch3_hybrid_rdma_atomics    COUNTER: MPI_Fetch_and_op, MPI_Compare_and_swap and one-element
 *                              MPI_Accumulate and MPI_Get_accumulate operations an RNIC atomic carried
 *   ch3_hybrid_rdma_fallbacks  COUNTER: RDMA operations that failed and were sent over SCTP
 *   ch3_hybrid_qp_put_headers  COUNTER: PUT headers sent as RDMAP Sends on the queue pair (the
 *                              others followed their data on SCTP)
 *   ch3_hybrid_qp_proof_failures COUNTER: queue-pair connects refused because their Initiate did
 *                              not prove that its sender holds this rank's business card */
#include "mpidi_ch3_hybrid.h"

static void counter(const char *name, unsigned long long *addr, const char *desc)
{
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, name, addr, 1,
                              MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS, NULL, NULL,
                              "CH3_HYBRID", desc);
}

void MPIDI_CH3I_Hy_pvars_register(void)
{
    MPIDI_CH3I_Hy_rnic_t *r = &MPIDI_CH3I_Hy_rnic;
    counter("ch3_hybrid_rdma_puts", &r->puts, "MPI_Put operations whose data an RDMA Write placed");
    counter("ch3_hybrid_rdma_gets", &r->gets, "MPI_Get operations whose data an RDMA Read (or, GET_MODE=write, Write) moved");
    counter("ch3_hybrid_rdma_bytes", &r->bytes, "bytes of one-sided data moved by RDMA");
    counter("ch3_hybrid_rdma_atomics", &r->atomics,
            "MPI_Fetch_and_op, MPI_Compare_and_swap and one-element MPI_Accumulate and "
            "MPI_Get_accumulate operations an RNIC atomic carried");
    counter("ch3_hybrid_rdma_fallbacks", &r->fallbacks,
            "RDMA operations that failed and were sent over SCTP instead");
    counter("ch3_hybrid_qp_put_headers", &r->qp_headers,
            "PUT headers sent as RDMAP Sends on the queue pair behind their data");
    counter("ch3_hybrid_qp_proof_failures", &r->proof_failures,
            "queue-pair connects refused because their Initiate did not prove that its sender holds "
            "this rank's business card");
}
