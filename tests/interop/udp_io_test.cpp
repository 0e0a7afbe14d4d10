// SPDX-License-Identifier: BSD-3-Clause
// The engine's UDP I/O (src/sctp/udp_io.hpp) on loopback: a burst sent with UDP_SEGMENT arrives
// as the same packets in order (whether the kernel hands it over as one GRO batch or not), the
// destination address comes from IP_PKTINFO, bursts past the kernel's 64 segments are cut, and
// the driver loop moves an Endpoint's packets.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "sctp/udp_io.hpp"

namespace sc = sctpm::sctp;

namespace {

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
    std::vector<uint8_t> v(n);
    uint32_t x = seed * 2654435761u + 1;
    for (auto& b : v) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        b = uint8_t(x);
    }
    return v;
}

struct Received {
    std::vector<std::vector<uint8_t>> packets;
    sockaddr_in from{}, to{};
};

// Reads until `want` packets came (or 2 s without any).
Received read_packets(sc::UdpSocket& s, size_t want) {
    Received r;
    while (r.packets.size() < want && s.wait_readable(2'000'000))
        s.receive([&](const sockaddr_in& from, const sockaddr_in& to, const uint8_t* p, size_t len) {
            r.from = from, r.to = to;
            r.packets.emplace_back(p, p + len);
        });
    return r;
}

sc::UdpSocket::Options loopback() {
    sc::UdpSocket::Options o;
    o.addr = "127.0.0.1";
    return o;
}

} // namespace

TEST(UdpIo, SegmentedBurstArrivesAsTheSamePacketsInOrder) {
    sc::UdpSocket a(loopback()), b(loopback());
    const size_t seg = 1472, count = 40;
    const auto data = pattern(seg * (count - 1) + 333, 1); // the last packet shorter
    ASSERT_EQ(a.send(b.local(), data.data(), data.size(), seg), 0);
    Received r = read_packets(b, count);
    ASSERT_EQ(r.packets.size(), count);
    size_t at = 0;
    for (size_t i = 0; i < count; ++i) {
        const size_t n = i + 1 < count ? seg : 333;
        ASSERT_EQ(r.packets[i].size(), n) << "packet " << i;
        EXPECT_EQ(0, std::memcmp(r.packets[i].data(), data.data() + at, n)) << "packet " << i;
        at += n;
    }
    EXPECT_EQ(r.from.sin_port, a.local().sin_port);
    EXPECT_EQ(a.stats().packets_out, count);
    if (a.gso_on()) {
        EXPECT_EQ(a.stats().sends, 1u) << "40 packets of 1472 bytes fit one UDP_SEGMENT send";
    }
    if (b.gro_on()) {
        EXPECT_LT(b.stats().reads, count) << "a segmented burst on loopback arrives in GRO batches";
    }
}

TEST(UdpIo, BurstOverTheKernelsSegmentLimitIsCutIntoSeveralSends) {
    sc::UdpSocket a(loopback()), b(loopback());
    const size_t seg = 100, count = 200; // 64 segments at most per send
    const auto data = pattern(seg * count, 2);
    ASSERT_EQ(a.send(b.local(), data.data(), data.size(), seg), 0);
    Received r = read_packets(b, count);
    ASSERT_EQ(r.packets.size(), count);
    for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(0, std::memcmp(r.packets[i].data(), data.data() + i * seg, seg)) << "packet " << i;
    if (a.gso_on()) {
        EXPECT_EQ(a.stats().sends, 4u); // 64 + 64 + 64 + 8
    }
}

TEST(UdpIo, WithoutSegmentationEveryPacketIsItsOwnSend) {
    auto o = loopback();
    o.gso = false;
    sc::UdpSocket a(o), b(loopback());
    const auto data = pattern(5 * 1000, 3);
    ASSERT_EQ(a.send(b.local(), data.data(), data.size(), 1000), 0);
    Received r = read_packets(b, 5);
    ASSERT_EQ(r.packets.size(), 5u);
    EXPECT_EQ(a.stats().sends, 5u);
}

TEST(UdpIo, PktinfoNamesTheAddressAPacketWasSentTo) {
    sc::UdpSocket::Options any;
    any.addr = "0.0.0.0";
    sc::UdpSocket a(loopback()), b(any);
    sockaddr_in to = b.local();
    to.sin_addr.s_addr = htonl(0x7f000001);
    const uint8_t one = 7;
    ASSERT_EQ(a.send(to, &one, 1, 0), 0);
    Received r = read_packets(b, 1);
    ASSERT_EQ(r.packets.size(), 1u);
    EXPECT_EQ(r.to.sin_addr.s_addr, htonl(0x7f000001)) << "bound to the wildcard, the destination is 127.0.0.1";
    EXPECT_EQ(r.to.sin_port, b.local().sin_port);
}

TEST(UdpIo, TooBigForOneDatagramReachesTheCaller) {
    sc::UdpSocket a(loopback()), b(loopback());
    std::vector<uint8_t> big(70000);
    EXPECT_EQ(a.send(b.local(), big.data(), big.size(), 0), -EMSGSIZE);
}

TEST(UdpIo, AddressConversionsKeepIpAndPort) {
    sockaddr_in s{};
    s.sin_family = AF_INET;
    s.sin_port = htons(9899);
    s.sin_addr.s_addr = htonl(0x0a000102);
    const sc::Address a = sc::to_address(s);
    EXPECT_EQ(a.family, AF_INET);
    EXPECT_EQ(a.port, 9899);
    EXPECT_EQ(a.ip[0], 10);
    EXPECT_EQ(a.ip[3], 2);
    const sockaddr_in back = sc::to_sockaddr_in(a);
    EXPECT_EQ(back.sin_port, s.sin_port);
    EXPECT_EQ(back.sin_addr.s_addr, s.sin_addr.s_addr);
}

TEST(UdpIo, RandomAndClock) {
    uint8_t a[32] = {}, b[32] = {};
    sc::fill_random(a, sizeof a);
    sc::fill_random(b, sizeof b);
    EXPECT_NE(0, std::memcmp(a, b, sizeof a)); // 2^-256 to fail
    const uint64_t t0 = sc::monotonic_us(), t1 = sc::monotonic_us();
    EXPECT_LE(t0, t1);
}

// The driver's waiting read ends at the engine's next deadline (a ppoll bounded by it):
// an INIT to a peer that never answers is sent again when its timer expires, with no
// packet arriving to wake the wait. (If the wait did not end, a datagram the test sends after
// 10 s ends it, and the test fails on the missing retransmission instead of hanging.)
TEST(UdpIo, DriverWaitEndsAtTheEnginesDeadline) {
    sc::UdpSocket sock(loopback()), silent(loopback());
    sc::Config c;
    c.local_port = sock.port();
    c.rto_initial = 20'000; // 20 ms, then 40, 80: the INIT timer doubles
    c.rto_min = 20'000;
    c.max_init_retransmits = 8;
    sc::Endpoint ep(c, sc::seeded_random(48));
    sc::EngineDriver drv(ep, sock);
    const auto peer = sc::to_address(silent.local());
    ASSERT_NE(sc::kNoAssoc, ep.connect(std::span(&peer, 1), 9, sc::Time(sc::monotonic_us())));
    drv.pump(); // the first INIT
    std::atomic<bool> done{false}, poked{false};
    std::thread watchdog([&] {
        for (int i = 0; i < 1000 && !done; ++i)
            usleep(10'000);
        if (!done) { // unblock a wait that never ends
            poked = true;
            sc::UdpSocket poke(loopback());
            const uint8_t b = 0;
            poke.send(sock.local(), &b, 1, 0);
        }
    });
    int inits = 0;
    size_t timeouts_before_poke = 0;
    // Bounded by time, not by a count of waits: a wait may end a little early (seen on a loaded
    // VM: 74 us before the deadline), and then the driver looks without sleeping until it is due.
    const uint64_t give_up = sc::monotonic_us() + 5'000'000;
    while (inits < 3 && sc::monotonic_us() < give_up) {
        drv.output_if_due();
        timeouts_before_poke = drv.stats().timeouts;
        drv.wait_input(-1);
        if (poked) // woken by the watchdog: the deadline did not end the wait
            break;
        timeouts_before_poke = drv.stats().timeouts;
        silent.receive([&](const sockaddr_in&, const sockaddr_in&, const uint8_t* p, size_t len) {
            inits += len >= 16 && p[12] == 1; // chunk type INIT
        });
    }
    drv.output_if_due();
    silent.receive([&](const sockaddr_in&, const sockaddr_in&, const uint8_t* p, size_t len) {
        inits += len >= 16 && p[12] == 1;
    });
    done = true;
    watchdog.join();
    EXPECT_FALSE(poked) << "a wait did not end at the engine's deadline";
    EXPECT_GE(timeouts_before_poke, 2u) << "the waits ended at the INIT timer's deadlines";
    EXPECT_GE(inits, 3) << "the INIT and two retransmissions, each after a wait that ended at the deadline";
}

// A destination the kernel has no route to (a rail that went down) fails every send with
// ENETUNREACH: the send reports it to the caller at once. It used to retry for ever (taking it for
// an ICMP error queued by an earlier send), and the engine's process stopped answering on every
// path. Run in a network namespace of its own with no route at all (needs root: skipped otherwise);
// the child must finish within 10 s.
TEST(UdpIo, SendWithoutARouteFailsAtOnce) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (unshare(CLONE_NEWNET) != 0)
            _exit(77);
        sc::UdpSocket::Options o;
        o.addr = "0.0.0.0";
        sc::UdpSocket sock(o);
        const sockaddr_in to = sc::to_sockaddr_in(*sc::Address::parse("198.18.0.1", 9));
        const uint8_t packet[48] = {};
        const int r = sock.send(to, packet, sizeof packet, 0);
        _exit(r == -ENETUNREACH ? 0 : 1);
    }
    int status = 0;
    for (int i = 0; i < 1000 && waitpid(child, &status, WNOHANG) == 0; ++i)
        usleep(10'000);
    if (waitpid(child, &status, WNOHANG) == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        FAIL() << "the send to an unroutable address did not return within 10 s";
    }
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        GTEST_SKIP() << "no network namespace of our own (not root)";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the send did not fail with ENETUNREACH";
}
