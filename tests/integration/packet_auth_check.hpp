// SPDX-License-Identifier: BSD-3-Clause
// What auth=packet must have done on a peer's association once its links are proved: the stack
// sends under a key of the proofs and saw the peer do so, and the null key is gone.
#pragma once
#include <usrsctp.h>

#include "pair_harness.hpp"

namespace pair_test {

inline void expect_packet_auth(Side& s, sctpm_peer p) {
    sctpm_packet_auth pa{};
    CHILD_CHECK(s.progress_until([&] { return sctpm_packet_auth_get(s.t, p, &pa) == 0 && pa.null_key_deleted == 1; }, 10),
                "peer %d: the null SCTP-AUTH key was not deleted (active key %d, peer's key %d)", p, pa.active_key, pa.peer_key);
    CHILD_CHECK(pa.active_key > 0, "peer %d: the stack sends under key %d", p, pa.active_key);
    CHILD_CHECK(pa.peer_key > 0, "peer %d: the stack never saw the peer switch keys (%d)", p, pa.peer_key);
}

// Packets the stack dropped for an AUTH chunk under a key it does not have, or a MAC that did not
// match: a switch of keys at the wrong moment shows here (and costs a retransmission timeout).
// The switch itself may drop kAuthDropsAtSwitch: control chunks (a SACK, a HEARTBEAT) the peer's
// stack built under the null key just before it switched and sent just after its retire (usrsctp
// batches what one read makes it send). Never DATA: those hold the null key until acknowledged.
constexpr uint32_t kAuthDropsAtSwitch = 2;
inline uint32_t auth_drops() {
    sctpstat st{};
    usrsctp_get_stat(&st);
    return st.sctps_recvivalkeyid + st.sctps_recvauthfailed;
}

inline uint32_t auth_chunks_received() {
    sctpstat st{};
    usrsctp_get_stat(&st);
    return st.sctps_recvauth;
}

} // namespace pair_test
