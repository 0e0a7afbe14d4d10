// SPDX-License-Identifier: BSD-3-Clause
// Per-path SCTP parameters and path MTUs; see path_params.hpp.
#include "path_params.hpp"

#include "endpoint.hpp"
#include "settings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <usrsctp.h>

namespace sctpm {
namespace {

constexpr uint32_t kMaxSctpPathMtu = 65000;
constexpr uint32_t kUdpHeader = 8, kSctpCommonHeader = 12;

int set_params(struct socket* so, const sockaddr_storage& address, uint32_t assoc, uint32_t sctp_mtu,
               const PathParams& p) {
    sctp_paddrparams pp{};
    pp.spp_address = address;
    pp.spp_assoc_id = assoc;
    pp.spp_flags = SPP_HB_ENABLE | SPP_PMTUD_DISABLE;
    pp.spp_hbinterval = p.heartbeat_ms;
    pp.spp_pathmtu = sctp_mtu;
    pp.spp_pathmaxrxt = static_cast<uint16_t>(p.path_max_retrans);
    return usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof pp) == 0 ? 0 : errno;
}

} // namespace

uint32_t sctp_path_mtu(uint32_t link_mtu, int family) {
    const uint32_t ip = family == AF_INET6 ? 40 : 20;
    const uint32_t overhead = ip + kUdpHeader + kSctpCommonHeader;
    if (link_mtu < overhead + 512)
        return 512; // far below any real link (IPv6 needs 1280); usrsctp refuses less
    return std::min(link_mtu - overhead, kMaxSctpPathMtu);
}

uint32_t route_mtu(const sockaddr* peer) {
    const bool v6 = peer->sa_family == AF_INET6;
    int fd = socket(peer->sa_family, SOCK_DGRAM, 0);
    if (fd < 0)
        return 0;
    sockaddr_storage to{};
    const socklen_t len = v6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    std::memcpy(&to, peer, len);
    reinterpret_cast<sockaddr_in*>(&to)->sin_port = htons(9); // connect needs a port, sends nothing
    int mtu = 0;
    socklen_t ml = sizeof mtu;
    if (connect(fd, reinterpret_cast<sockaddr*>(&to), len) != 0 ||
        getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_MTU : IP_MTU, &mtu, &ml) != 0)
        mtu = 0;
    close(fd);
    return mtu > 0 ? static_cast<uint32_t>(mtu) : 0;
}

uint32_t interface_mtu(const std::vector<std::string>& addresses) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    uint32_t best = 0;
    for_each_ip_interface([&](const ifaddrs& i) {
        const std::string text = address_text(i.ifa_addr);
        bool wanted = addresses.empty() ? !(i.ifa_flags & IFF_LOOPBACK) : false;
        for (const auto& a : addresses)
            wanted |= a == text;
        ifreq req{};
        std::strncpy(req.ifr_name, i.ifa_name, IFNAMSIZ - 1);
        if (!wanted || fd < 0 || ioctl(fd, SIOCGIFMTU, &req) != 0 || req.ifr_mtu <= 0)
            return;
        const auto mtu = static_cast<uint32_t>(req.ifr_mtu);
        best = best == 0 ? mtu : std::min(best, mtu);
    });
    if (fd >= 0)
        close(fd);
    return best ? best : 1500;
}

PathParams path_params(uint32_t configured_mtu, const std::vector<std::string>& addresses, uint32_t heartbeat_ms,
                       uint32_t path_max_retrans) {
    return {configured_mtu ? configured_mtu : interface_mtu(addresses), configured_mtu, heartbeat_ms, path_max_retrans};
}

PathParams path_params(const Settings& s, const std::vector<std::string>& addresses) {
    return path_params(s.path_mtu, addresses, s.heartbeat_ms, s.path_max_retrans);
}

int set_path_params(struct socket* so, int family, uint32_t assoc, const PathParams& p) {
    sockaddr_storage wildcard{};
    wildcard.ss_family = static_cast<sa_family_t>(family); // every path
    return set_params(so, wildcard, assoc, p.link_mtu ? sctp_path_mtu(p.link_mtu, family) : 0, p);
}

void tune_paths(struct socket* so, int family, uint32_t assoc, const PathParams& p) {
    set_path_params(so, family, assoc, p);
    sockaddr* addrs = nullptr;
    const int n = usrsctp_getpaddrs(so, assoc, &addrs);
    auto* at = reinterpret_cast<uint8_t*>(addrs);
    for (int i = 0; i < n; ++i) {
        auto* sa = reinterpret_cast<sockaddr*>(at);
        const socklen_t len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
        at += len;
        uint32_t link = route_mtu(sa);
        if (link == 0)
            continue; // no route now: the path keeps the association's default
        if (p.link_mtu_cap)
            link = std::min(link, p.link_mtu_cap);
        sockaddr_storage one{};
        std::memcpy(&one, sa, len);
        set_params(so, one, assoc, sctp_path_mtu(link, sa->sa_family), p);
    }
    if (n > 0)
        usrsctp_freepaddrs(addrs);
}

} // namespace sctpm
