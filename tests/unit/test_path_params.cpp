// SPDX-License-Identifier: BSD-3-Clause
// Path MTU units (path_params.hpp): what usrsctp is told for a link MTU, and what the kernel
// says a route's MTU is.
#include <gtest/gtest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <fstream>
#include <netinet/in.h>

#include "path_params.hpp"

namespace {

// IPv4: 20 IP + 8 UDP + 12 SCTP common header; the largest UDP datagram is then MTU - 28.
TEST(PathMtu, LinkMtuLeavesRoomForTheEncapsulationHeadersOnIpv4) {
    EXPECT_EQ(sctpm::sctp_path_mtu(1500, AF_INET), 1460u);
    EXPECT_EQ(sctpm::sctp_path_mtu(9000, AF_INET), 8960u);
}

// IPv6: a 40-byte IP header, so 20 bytes less; the largest UDP datagram is MTU - 48.
TEST(PathMtu, Ipv6PathsGiveUpTwentyBytesMore) {
    EXPECT_EQ(sctpm::sctp_path_mtu(1500, AF_INET6), 1440u);
    EXPECT_EQ(sctpm::sctp_path_mtu(9000, AF_INET6), 8940u);
}

TEST(PathMtu, LoopbackSizesAreCappedAndTinyLinksFloored) {
    EXPECT_EQ(sctpm::sctp_path_mtu(65536, AF_INET), 65000u);
    EXPECT_EQ(sctpm::sctp_path_mtu(65040, AF_INET), 65000u);
    EXPECT_EQ(sctpm::sctp_path_mtu(65039, AF_INET), 64999u);
    EXPECT_EQ(sctpm::sctp_path_mtu(100, AF_INET), 512u);
}

// The route to 127.0.0.1 goes over lo, so the kernel answers with lo's MTU (at most 65535, the
// largest IP packet).
TEST(PathMtu, RouteMtuOfLoopbackIsTheLoopbackInterfaceMtu) {
    unsigned lo_mtu = 0;
    std::ifstream("/sys/class/net/lo/mtu") >> lo_mtu;
    ASSERT_GT(lo_mtu, 0u) << "cannot read /sys/class/net/lo/mtu";
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    EXPECT_EQ(sctpm::route_mtu(reinterpret_cast<sockaddr*>(&a)), std::min(lo_mtu, 65535u));
}

} // namespace
