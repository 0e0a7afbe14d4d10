// SPDX-License-Identifier: BSD-3-Clause
// Text for the ABORT chunk that usrsctp attaches to an SCTP_COMM_LOST notification (sac_info):
// the error causes of RFC 9260 §3.3.10, including the reason text usrsctp puts in its own
// protocol-violation and user-initiated aborts. Users see why an association died.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace sctpm {

// `info` is sac_info (an ABORT chunk: 4-byte chunk header, then causes). Returns "" when there is
// no chunk (the association timed out rather than being aborted).
std::string describe_abort_chunk(const uint8_t* info, size_t len);

} // namespace sctpm
