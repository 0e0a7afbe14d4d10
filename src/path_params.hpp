// The per-path SCTP parameters every association of ours gets, in one place for the MPI socket
// (Endpoint) and the iWARP DDP socket (iwarp/adaptation): a fixed path MTU with PMTU discovery
// off, heartbeats at an interval, and a path retransmission limit.
#pragma once
#include <cstdint>

struct socket; // usrsctp

namespace sctpm {

struct Settings;

struct PathParams {
    uint32_t mtu = 0;              // path MTU (UDP/IP overhead already removed); 0 leaves usrsctp's
    uint32_t heartbeat_ms = 0;     // heartbeats are on; 0 leaves usrsctp's interval
    uint32_t path_max_retrans = 0; // 0 leaves usrsctp's limit
};
PathParams path_params(const Settings& s, uint32_t mtu);

// SCTP_PEER_ADDR_PARAMS on every path of `assoc` (a socket of address family `family`).
// SCTP_FUTURE_ASSOC makes them the default of associations created later, which is the only way
// to get large DATA chunks: usrsctp sizes them from the MTU an association starts with and never
// raises that later. Returns 0 or an errno value.
int set_path_params(struct socket* so, int family, uint32_t assoc, const PathParams& p);

} // namespace sctpm
