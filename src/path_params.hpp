// SPDX-License-Identifier: BSD-3-Clause
// The per-path SCTP parameters every association of ours gets, in one place for the MPI socket
// (Endpoint) and the iWARP DDP socket (iwarp/adaptation): a fixed path MTU with PMTU discovery
// off, heartbeats at an interval, and a path retransmission limit.
//
// MTUs come in two units. A link MTU is what `ip link` shows: the largest IP packet a link
// carries, and what users set (path_mtu). usrsctp's path MTU (spp_pathmtu) is what is left of
// that packet after the IP header, our UDP encapsulation header and the SCTP common header;
// sctp_path_mtu() converts. Getting this wrong by the 12-byte common header made every full
// DATA packet 12 bytes too big for its link, so the kernel IP-fragmented each one.
#pragma once
#include <cstdint>
#include <string>
#include <sys/socket.h>
#include <vector>

struct socket; // usrsctp

namespace sctpm {

struct Settings;

// usrsctp's path MTU for a link MTU on an IPv4 or IPv6 path (AF_INET / AF_INET6): the link MTU
// minus 20 or 40 (IP), 8 (UDP) and 12 (SCTP common header), at most 65000 (the largest UDP
// datagram with room to spare; usrsctp 0.9.5.0 as released drops packets of more than 32 mbufs,
// about 16 KB, which tools/patches/usrsctp/send-mbuf-chain.patch lifts).
uint32_t sctp_path_mtu(uint32_t link_mtu, int family);

// The kernel's MTU of the route to `peer` (the interface's, or less once ICMP said so); 0 when
// the kernel has no route to it.
uint32_t route_mtu(const sockaddr* peer);

// Smallest link MTU of the interfaces holding these addresses (every non-loopback interface
// when the list is empty); 1500 when none is found.
uint32_t interface_mtu(const std::vector<std::string>& addresses);

struct PathParams {
    uint32_t link_mtu = 0;         // link MTU every path starts with; 0 leaves usrsctp's
    uint32_t link_mtu_cap = 0;     // a user's path_mtu: no path gets more; 0 = each path's route decides
    uint32_t heartbeat_ms = 0;     // heartbeats are on; 0 leaves usrsctp's interval
    uint32_t path_max_retrans = 0; // 0 leaves usrsctp's limit
};
// The path parameters of a socket bound to `addresses`: paths start at `configured_mtu` (a
// link MTU, also their cap) or, when it is 0, at the smallest MTU of those interfaces.
PathParams path_params(uint32_t configured_mtu, const std::vector<std::string>& addresses, uint32_t heartbeat_ms,
                       uint32_t path_max_retrans);
// The same from the settings' path_mtu, heartbeat_ms and path_max_retrans.
PathParams path_params(const Settings& s, const std::vector<std::string>& addresses);

// SCTP_PEER_ADDR_PARAMS on every path of `assoc` (a socket of address family `family`), with
// `p.link_mtu` converted for that family. SCTP_FUTURE_ASSOC makes them the default of
// associations created later, which is the only way to get large DATA chunks: usrsctp sizes
// them from the MTU an association starts with and never raises that later.
// Returns 0 or an errno value.
int set_path_params(struct socket* so, int family, uint32_t assoc, const PathParams& p);

// An association that exists: set_path_params, then each path's MTU from the kernel's route
// to that peer address (capped by p.link_mtu_cap), so that rails of different MTUs each carry
// packets of their own size. Failures leave usrsctp's values; the association still works.
void tune_paths(struct socket* so, int family, uint32_t assoc, const PathParams& p);

} // namespace sctpm
