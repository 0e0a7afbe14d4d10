// SPDX-License-Identifier: BSD-3-Clause
// Multihoming and failover (RFC 9260 §5.4, §6.4, §8; RFC 7829): two simulated nodes with two
// addresses each (rails 0 and 1); links cut and healed while checked traffic runs. Virtual time
// only; every seed replays exactly.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "scripted_peer.hpp"
#include "sim.hpp"
#include "traffic.hpp"

using namespace sim;

namespace {

Config mh_config(uint8_t last) {
    Config c;
    c.local_port = 5000;
    c.rto_initial = 100'000;
    c.rto_min = 50'000;
    c.rto_max = 800'000;
    c.delayed_sack = 20'000;
    c.max_retransmits = 10;
    c.path_max_retransmits = 5;
    c.pf_max_retransmits = 0;
    c.heartbeat_interval = 500'000;
    c.local_addresses = {rail_addr(0, last, static_cast<uint16_t>(9000 + last)),
                         rail_addr(1, last, static_cast<uint16_t>(9000 + last))};
    return c;
}

// Two dual-homed nodes (10.0.0.1 / 10.1.0.1 and 10.0.0.2 / 10.1.0.2), checked traffic between them.
struct MhPair : TrafficPair {
    Address a[2][2]; // a[node][rail]

    MhPair(uint64_t seed, Faults f = {}, Config c0 = mh_config(1), Config c1 = mh_config(2))
        : TrafficPair(seed, f, c0, c1) {
        for (int n = 0; n < 2; ++n) {
            a[n][0] = net.node(n).address;
            a[n][1] = net.add_address(n, 1);
        }
    }
    // Node 0 connects to node 1's first address only: the second comes from the INIT-ACK.
    void connect() {
        Address peer = a[1][0];
        ASSERT_NE(net.ep(0).connect(std::span<const Address>(&peer, 1), 5000, net.now), kNoAssoc);
    }
    bool up() const { return traffic.assoc(0) != kNoAssoc && traffic.assoc(1) != kNoAssoc; }
    std::optional<PathInfo> path(int side, const Address& addr) {
        auto i = net.ep(side).info(traffic.assoc(side));
        if (!i)
            return std::nullopt;
        for (const PathInfo& p : i->paths)
            if (p.address == addr)
                return p;
        return std::nullopt;
    }
    bool all_active(int side) {
        auto i = net.ep(side).info(traffic.assoc(side));
        if (!i || i->paths.size() != 2)
            return false;
        for (const PathInfo& p : i->paths)
            if (p.state != PathState::active)
                return false;
        return true;
    }
    // The states side `side` reported for `addr`, in order.
    std::vector<PathState> changes(int side, const Address& addr) const {
        std::vector<PathState> r;
        for (const Event& e : ev[side])
            if (e.type == EventType::path_change && e.path_address == addr)
                r.push_back(e.path_state);
        return r;
    }
    bool traffic_done() {
        traffic.pump();
        return traffic.done() || !traffic.error().empty();
    }
    // Runs the traffic until side 0 reports the peer's address `addr` inactive.
    bool run_until_inactive(const Address& addr) {
        return net.run_until(
            [&] {
                traffic_done();
                auto c = changes(0, addr);
                return !c.empty() && c.back() == PathState::inactive;
            },
            60'000'000);
    }
};

std::string dump(MhPair& p) {
    std::string r;
    for (int s = 0; s < 2; ++s) {
        auto i = p.net.ep(s).info(p.traffic.assoc(s));
        if (!i) continue;
        r += "\nside " + std::to_string(s) + " flight " + std::to_string(i->flight_size) + " queued " +
             std::to_string(i->send_queued) + " t3 " + std::to_string(i->t3_expiries) + " rwnd " + std::to_string(i->peer_rwnd);
        for (auto& q : i->paths)
            r += "\n  " + q.address.to_string() + " " + to_string(q.state) + (q.current ? " cur" : "") +
                 " err " + std::to_string(q.errors) + " rto " + std::to_string(q.rto) + " cwnd " + std::to_string(q.cwnd);
    }
    r += "\ndelivered " + std::to_string(p.traffic.delivered(0)) + "/" + std::to_string(p.traffic.delivered(1)) +
         " now " + std::to_string(p.net.now) + " lost " + std::to_string(p.net.packets_cut);
    return r;
}

// Every byte in flight was sent on exactly one path.
bool flights_add_up(MhPair& p, int side) {
    auto i = p.net.ep(side).info(p.traffic.assoc(side));
    if (!i)
        return true;
    uint64_t sum = 0;
    for (const PathInfo& q : i->paths)
        sum += q.flight_size;
    return sum == i->flight_size;
}

std::string events(const MhPair& p) {
    std::string r;
    for (int s = 0; s < 2; ++s)
        for (const Event& e : p.ev[s])
            r += "\n  side " + std::to_string(s) + ": " + to_string(e.type) + " " + e.path_address.to_string() + " " +
                 (e.type == EventType::path_change ? to_string(e.path_state) : "") + " " + e.reason;
    return r;
}

std::vector<Msg> messages(size_t n, uint32_t max_len, uint64_t seed) {
    Rng r(seed);
    std::vector<Msg> m;
    for (size_t i = 0; i < n; ++i)
        m.push_back({static_cast<uint16_t>(r.below(4)), 1 + r.below(max_len)});
    return m;
}

} // namespace

TEST(EngineMultihoming, BothAddressesAreLearnedAndConfirmedByHeartbeats) {
    MhPair p(3);
    p.connect();
    ASSERT_TRUE(p.net.run_until([&] { return p.up() && p.all_active(0) && p.all_active(1); }, 5'000'000));
    for (int s = 0; s < 2; ++s) {
        const Address* peer = p.a[1 - s];
        auto i = p.net.ep(s).info(p.traffic.assoc(s));
        ASSERT_EQ(i->paths.size(), 2u);
        // The first address is the primary and carries data; the second was probed: the
        // heartbeat's round trip is its first RTT measurement.
        EXPECT_EQ(i->paths[0].address, peer[0]);
        EXPECT_TRUE(i->paths[0].primary);
        EXPECT_TRUE(i->paths[0].current);
        EXPECT_EQ(i->paths[1].address, peer[1]);
        EXPECT_FALSE(i->paths[1].current);
        EXPECT_GT(i->paths[1].srtt, 0);
        // Learned unconfirmed, confirmed by a HEARTBEAT-ACK: exactly one change, to active.
        EXPECT_EQ(p.changes(s, peer[1]), std::vector<PathState>{PathState::active});
        EXPECT_TRUE(p.changes(s, peer[0]).empty());
    }
    // Idle paths keep being probed and stay up.
    Time t = p.net.now;
    ASSERT_FALSE(p.net.run_until([&] { return false; }, t + 5'000'000));
    EXPECT_TRUE(p.all_active(0));
    EXPECT_TRUE(p.all_active(1));
    // set_primary moves data to the other path.
    EXPECT_EQ(p.net.ep(0).set_primary(p.traffic.assoc(0), p.a[1][1], p.net.now), 0);
    EXPECT_TRUE(p.path(0, p.a[1][1])->current);
    EXPECT_EQ(p.net.ep(0).set_primary(p.traffic.assoc(0), addr(77, 1), p.net.now), -EINVAL);
}

TEST(EngineMultihoming, PrimaryCutMidTransferFailsOverAndReturnsWhenHealed) {
    Faults f;
    f.delay = 2000; // a 4 ms round trip and a small window: the transfer outlasts cut and heal
    Config c0 = mh_config(1), c1 = mh_config(2);
    c0.rwnd = c1.rwnd = 8192;
    MhPair p(5, f, c0, c1);
    p.traffic.set_messages(0, messages(8000, 3000, 11));
    p.traffic.set_messages(1, messages(1000, 500, 12));
    p.connect();
    ASSERT_TRUE(p.net.run_until([&] { return p.up() && p.all_active(0) && p.all_active(1); }, 5'000'000));
    ASSERT_TRUE(p.net.run_until([&] { p.traffic_done(); return p.traffic.delivered(0) >= 500; }, 60'000'000));
    ASSERT_FALSE(p.traffic.done());
    const Address b0 = p.a[1][0], b1 = p.a[1][1];
    p.net.cut(p.a[0][0], b0);
    // Data moves to the other path once the primary times out (PF at the first timeout), and the
    // primary becomes inactive after Path.Max.Retrans more.
    ASSERT_TRUE(p.run_until_inactive(b0)) << p.traffic.error();
    EXPECT_EQ(p.changes(0, b0), (std::vector<PathState>{PathState::potentially_failed, PathState::inactive}));
    EXPECT_TRUE(p.path(0, b1)->current);
    EXPECT_EQ(p.path(0, b0)->state, PathState::inactive);
    size_t delivered_at_cut_end = p.traffic.delivered(0);
    ASSERT_TRUE(p.net.run_until([&] { p.traffic_done(); return p.traffic.delivered(0) > delivered_at_cut_end + 100; },
                                60'000'000))
        << "no progress on the alternate path: " << p.traffic.error() << dump(p);
    // Heal: a heartbeat to the inactive primary comes back, and data returns to it.
    p.net.heal(p.a[0][0], b0);
    ASSERT_TRUE(p.net.run_until(
        [&] {
            p.traffic_done();
            return p.changes(0, b0).size() == 3;
        },
        60'000'000));
    ASSERT_FALSE(p.traffic.done()) << "the transfer ended before the heal" << dump(p);
    EXPECT_EQ(p.changes(0, b0).back(), PathState::active);
    EXPECT_TRUE(p.path(0, b0)->current);
    EXPECT_TRUE(p.path(0, b1)->state == PathState::active);
    ASSERT_TRUE(p.net.run_until(
        [&] {
            if (!flights_add_up(p, 0) || !flights_add_up(p, 1))
                p.traffic.fail("the paths' flight sizes do not add up to the association's");
            return p.traffic_done();
        },
        600'000'000))
        << p.traffic.error();
    EXPECT_TRUE(p.traffic.done()) << p.traffic.error();
    EXPECT_EQ(p.traffic.error(), "");
    EXPECT_TRUE(p.path(0, b0)->current);
    EXPECT_EQ(p.net.ep(0).association_count(), 1u);
}

TEST(EngineMultihoming, BothPathsCutLosesTheAssociation) {
    MhPair p(9);
    p.traffic.set_messages(0, messages(2000, 2000, 21));
    p.connect();
    ASSERT_TRUE(p.net.run_until([&] { return p.up() && p.all_active(0) && p.all_active(1); }, 5'000'000));
    ASSERT_TRUE(p.net.run_until([&] { p.traffic_done(); return p.traffic.delivered(0) >= 100; }, 60'000'000));
    for (int r = 0; r < 2; ++r)
        p.net.cut(p.a[0][r], p.a[1][r]);
    auto lost = [&](int s) {
        for (const Event& e : p.ev[s])
            if (e.type == EventType::assoc_lost)
                return &e;
        return static_cast<const Event*>(nullptr);
    };
    ASSERT_TRUE(p.net.run_until([&] { p.traffic_done(); return lost(0) != nullptr; }, 600'000'000));
    EXPECT_NE(lost(0)->reason.find("Association.Max.Retrans (10)"), std::string::npos) << lost(0)->reason;
    EXPECT_EQ(p.net.ep(0).association_count(), 0u);
    // Both paths went down first (each reported before the end).
    EXPECT_FALSE(p.changes(0, p.a[1][0]).empty());
    EXPECT_FALSE(p.changes(0, p.a[1][1]).empty());
    // The receiver, with nothing to send but heartbeats, loses it too.
    ASSERT_TRUE(p.net.run_until([&] { return lost(1) != nullptr; }, 600'000'000));
    EXPECT_EQ(p.traffic.error(), "");
}

namespace {

// Seeded schedules of cuts and heals of one rail at a time (never both down), with loss,
// duplication and reordering: every message arrives exactly once, in order per stream. With
// `cmt`, both paths carry data all along (and lose it to every cut).
void seeded_cuts_and_heals(bool cmt) {
    const uint64_t first = std::getenv("ENGINE_SEED") ? std::strtoull(std::getenv("ENGINE_SEED"), nullptr, 10) : 1;
    // ENGINE_SEED=N replays seed N alone; ENGINE_SEED_COUNT=K runs K seeds from there.
    const uint64_t count = std::getenv("ENGINE_SEED_COUNT") ? std::strtoull(std::getenv("ENGINE_SEED_COUNT"), nullptr, 10)
                           : std::getenv("ENGINE_SEED")     ? 1
                                                            : 300;
    uint64_t cuts = 0, failovers = 0;
    for (uint64_t seed = first; seed < first + count; ++seed) {
        Faults f;
        f.delay = 2000;
        f.loss_per_mille = 10;
        f.dup_per_mille = 5;
        f.reorder_per_mille = 20;
        Config c0 = mh_config(1), c1 = mh_config(2);
        c0.cmt = c1.cmt = cmt;
        MhPair p(seed, f, c0, c1);
        p.traffic.set_messages(0, messages(400, 4000, seed * 3));
        p.traffic.set_messages(1, messages(60, 1500, seed * 5));
        p.connect();
        // Cuts start once both paths are confirmed (the handshake knows one address only).
        if (!p.net.run_until([&] { p.traffic_done(); return p.up() && p.all_active(0) && p.all_active(1); },
                             60'000'000))
            FAIL() << "seed " << seed << ": no association with both paths confirmed" << events(p);
        Rng r(seed ^ 0xC0FFEE);
        Time next = p.net.now + r.below(50'000);
        int down = -1; // the rail that is cut, if any
        bool ok = p.net.run_until(
            [&] {
                if (p.net.now >= next) {
                    for (int side = 0; side < 2; ++side)
                        if (!flights_add_up(p, side))
                            p.traffic.fail("the paths' flight sizes do not add up to the association's");
                    if (down >= 0) {
                        p.net.heal(p.a[0][down], p.a[1][down]);
                        down = -1;
                    } else {
                        down = static_cast<int>(r.below(2));
                        p.net.cut(p.a[0][down], p.a[1][down]);
                        ++cuts;
                    }
                    next = p.net.now + 10'000 + r.below(150'000);
                }
                return p.traffic_done();
            },
            600'000'000);
        ASSERT_TRUE(ok && p.traffic.done()) << "seed " << seed << " (replay: ENGINE_SEED=" << seed
                                            << "): " << p.traffic.error() << " [virtual time " << p.net.now
                                            << ", delivered " << p.traffic.delivered(0) << "/"
                                            << p.traffic.delivered(1) << "]" << events(p) << dump(p);
        ASSERT_EQ(p.traffic.error(), "") << "seed " << seed;
        bool failed_over = false;
        for (int s = 0; s < 2; ++s)
            for (const Event& e : p.ev[s]) {
                ASSERT_NE(e.type, EventType::assoc_lost) << "seed " << seed << ": " << e.reason;
                failed_over |= e.type == EventType::path_change && e.path_state == PathState::potentially_failed;
            }
        failovers += failed_over;
    }
    // The schedules did cut paths under traffic, and most runs had to fail over.
    EXPECT_GT(cuts, count);
    EXPECT_GT(failovers, count / 2);
    std::printf("%s: %llu seeds, %llu cuts, %llu runs failed over\n", cmt ? "CMT" : "no CMT",
                static_cast<unsigned long long>(count), static_cast<unsigned long long>(cuts),
                static_cast<unsigned long long>(failovers));
}

// Node 0's share of its bytes sent to rail `rail`.
double rail_share(const MhPair& p, int rail) {
    const uint64_t total = p.net.bytes_to_rail[0][0] + p.net.bytes_to_rail[0][1];
    return total == 0 ? 0 : static_cast<double>(p.net.bytes_to_rail[0][rail]) / static_cast<double>(total);
}

// A one-way bulk transfer from node 0 over two healthy paths.
void bulk_transfer(MhPair& p) {
    p.traffic.set_messages(0, messages(3000, 8000, 31));
    p.connect();
    ASSERT_TRUE(p.net.run_until([&] { return p.up() && p.all_active(0) && p.all_active(1); }, 5'000'000));
    ASSERT_TRUE(p.net.run_until([&] { return p.traffic_done(); }, 600'000'000)) << p.traffic.error() << dump(p);
    ASSERT_EQ(p.traffic.error(), "");
}

} // namespace

TEST(EngineMultihoming, SeededCutsAndHealsDeliverEverythingOnce) { seeded_cuts_and_heals(false); }

// CMT: the same schedules with data on both paths all the time.
TEST(EngineMultihoming, CmtSeededCutsAndHealsDeliverEverythingOnce) { seeded_cuts_and_heals(true); }

// With CMT both paths carry the data, each growing its own window; without it the second path
// carries heartbeats only.
TEST(EngineMultihoming, CmtSpreadsDataOverBothPaths) {
    Faults f;
    f.delay = 2000;
    Config c0 = mh_config(1), c1 = mh_config(2);
    c0.heartbeat_interval = c1.heartbeat_interval = 5'000'000; // probes: a negligible share of the bytes
    MhPair plain(41, f, c0, c1);
    bulk_transfer(plain);
    EXPECT_LT(rail_share(plain, 1), 0.02) << "without CMT data went to the secondary path";

    c0.cmt = c1.cmt = true;
    MhPair p(41, f, c0, c1);
    bulk_transfer(p);
    EXPECT_GT(rail_share(p, 0), 0.35) << dump(p);
    EXPECT_GT(rail_share(p, 1), 0.35) << dump(p);
    // Everything is acknowledged in the end, each path's flight back to zero.
    ASSERT_TRUE(p.net.run_until([&] { return p.net.ep(0).info(p.traffic.assoc(0))->flight_size == 0; }, 60'000'000))
        << dump(p);
    auto info = p.net.ep(0).info(p.traffic.assoc(0));
    for (const PathInfo& q : info->paths) {
        EXPECT_GT(q.cwnd, 4u * c0.mtu) << q.address.to_string() << ": its window never grew" << dump(p);
        EXPECT_EQ(q.flight_size, 0u) << q.address.to_string();
    }
    std::printf("node 0's bytes per rail: without CMT %.3f / %.3f, with CMT %.3f / %.3f\n", rail_share(plain, 0),
                rail_share(plain, 1), rail_share(p, 0), rail_share(p, 1));
}

// CMT over paths of different delays: the slow path's data arrives after the fast path's later
// TSNs all the time. Split fast retransmit counts a miss only when later data of the same path
// is acknowledged, so a network that loses nothing sees no retransmission at all.
TEST(EngineMultihoming, CmtOverUnequalPathsRetransmitsNothingWithoutLoss) {
    Faults f;
    f.delay = 1000;
    f.rail_extra[1] = 20000; // rail 1: a 42 ms round trip against rail 0's 2 ms
    Config c0 = mh_config(1), c1 = mh_config(2);
    c0.cmt = c1.cmt = true;
    MhPair p(45, f, c0, c1);
    bulk_transfer(p);
    ASSERT_TRUE(p.net.run_until([&] { return p.net.ep(0).info(p.traffic.assoc(0))->flight_size == 0; }, 60'000'000))
        << dump(p);
    auto info = p.net.ep(0).info(p.traffic.assoc(0));
    EXPECT_EQ(info->fast_retransmits, 0u) << dump(p);
    EXPECT_EQ(info->retransmitted_chunks, 0u) << dump(p);
    EXPECT_EQ(info->t3_expiries, 0u) << dump(p);
    EXPECT_GT(rail_share(p, 1), 0.05) << "the slow path carried (almost) nothing" << dump(p);
    std::printf("bytes per rail with a 2 ms and a 42 ms path: %.3f / %.3f\n", rail_share(p, 0), rail_share(p, 1));
}

// CMT: a path cut under load has its data resent on the other (its T3 only), turns PF and then
// inactive while the other carries everything, and carries data again once healed.
TEST(EngineMultihoming, CmtPathCutResendsItsDataElsewhereAndRejoinsWhenHealed) {
    Faults f;
    f.delay = 2000;
    Config c0 = mh_config(1), c1 = mh_config(2);
    c0.cmt = c1.cmt = true;
    c0.rwnd = c1.rwnd = 65536;
    MhPair p(43, f, c0, c1);
    p.traffic.set_messages(0, messages(12000, 3000, 47));
    p.connect();
    ASSERT_TRUE(p.net.run_until([&] { return p.up() && p.all_active(0) && p.all_active(1); }, 5'000'000));
    ASSERT_TRUE(p.net.run_until([&] { p.traffic_done(); return p.traffic.delivered(0) >= 1000; }, 60'000'000));
    ASSERT_GT(p.net.bytes_to_rail[0][0], 0u);
    ASSERT_GT(p.net.bytes_to_rail[0][1], 0u);
    const Address b0 = p.a[1][0];
    p.net.cut(p.a[0][0], b0);
    ASSERT_TRUE(p.run_until_inactive(b0)) << p.traffic.error() << dump(p);
    EXPECT_EQ(p.changes(0, b0), (std::vector<PathState>{PathState::potentially_failed, PathState::inactive}));
    const size_t at_inactive = p.traffic.delivered(0);
    ASSERT_TRUE(p.net.run_until([&] { p.traffic_done(); return p.traffic.delivered(0) > at_inactive + 500; },
                                60'000'000))
        << "no progress on the remaining path: " << p.traffic.error() << dump(p);
    ASSERT_FALSE(p.traffic.done());
    p.net.heal(p.a[0][0], b0);
    ASSERT_TRUE(p.net.run_until([&] { p.traffic_done(); return p.changes(0, b0).size() == 3; }, 60'000'000)) << dump(p);
    EXPECT_EQ(p.changes(0, b0).back(), PathState::active);
    const uint64_t rail0_at_heal = p.net.bytes_to_rail[0][0];
    ASSERT_FALSE(p.traffic.done()) << "the transfer ended before the heal" << dump(p);
    ASSERT_TRUE(p.net.run_until(
        [&] {
            if (!flights_add_up(p, 0))
                p.traffic.fail("the paths' flight sizes do not add up to the association's");
            return p.traffic_done();
        },
        600'000'000))
        << p.traffic.error() << dump(p);
    EXPECT_EQ(p.traffic.error(), "");
    // The healed path took a share of the rest again (far more than its heartbeats).
    EXPECT_GT(p.net.bytes_to_rail[0][0] - rail0_at_heal, 200'000u) << dump(p);
    for (const Event& e : p.ev[0])
        EXPECT_NE(e.type, EventType::assoc_lost) << e.reason;
}

// Scripted peer: a forged HEARTBEAT-ACK does not revive a path; a HEARTBEAT from an address the
// association does not know is answered there and the address is not added.
TEST(EngineMultihoming, ForgedHeartbeatAckIsIgnoredAndUnknownHeartbeatIsAnsweredThere) {
    using namespace scripted;
    Config c = Peer::default_config();
    c.heartbeat_interval = 1'000'000;
    c.path_max_retransmits = 0; // the first unanswered heartbeat makes the (only) path inactive
    Peer p(c);
    p.handshake();
    auto heartbeats = [&](size_t from) {
        std::vector<Bytes> r;
        for (auto& [type, flags, value] : p.chunks_since(from))
            if (type == kHeartbeat)
                r.push_back(value);
        return r;
    };
    size_t mark = p.out.size();
    for (int k = 0; k < 40 && heartbeats(mark).empty(); ++k)
        p.advance(100'000);
    ASSERT_EQ(heartbeats(mark).size(), 1u);
    // Unanswered for an RTO: inactive, and probed again.
    mark = p.out.size();
    for (int k = 0; k < 40 && heartbeats(mark).empty(); ++k)
        p.advance(100'000);
    auto hb = heartbeats(mark);
    ASSERT_EQ(hb.size(), 1u);
    ASSERT_EQ(p.ep->info(p.id)->paths.at(0).state, PathState::inactive);
    auto state_changes = [&] {
        size_t n = 0;
        for (const Event& e : p.events)
            n += e.type == EventType::path_change;
        return n;
    };
    ASSERT_EQ(state_changes(), 1u);
    // A forged ack: the right shape, a nonce we never sent.
    Bytes forged = hb[0];
    forged[4] ^= 0x5a;
    p.send_chunks({{kHeartbeatAck, 0, forged}});
    EXPECT_EQ(p.ep->info(p.id)->paths.at(0).state, PathState::inactive);
    EXPECT_EQ(state_changes(), 1u);
    // Garbage of another shape neither.
    p.send_chunks({{kHeartbeatAck, 0, Bytes{0, 1, 0, 8, 1, 2, 3, 4}}});
    EXPECT_EQ(p.ep->info(p.id)->paths.at(0).state, PathState::inactive);
    // The real echo revives it.
    p.send_chunks({{kHeartbeatAck, 0, hb[0]}});
    EXPECT_EQ(p.ep->info(p.id)->paths.at(0).state, PathState::active);
    EXPECT_EQ(state_changes(), 2u);
    EXPECT_EQ(p.events.back().path_state, PathState::active);
    // Replayed, it is ignored (the nonce was used).
    p.send_chunks({{kHeartbeatAck, 0, hb[0]}});
    EXPECT_EQ(state_changes(), 2u);

    // A HEARTBEAT from an unknown address (right tag): answered to that address, not added.
    Address stranger = v4(77, 9077);
    Bytes info = {0, 1, 0, 12, 9, 8, 7, 6, 5, 4, 3, 2};
    Bytes pkt = build(p.my_port, c.local_port, p.their_tag, {{kHeartbeat, 0, info}});
    p.ep->receive(stranger, p.them, pkt.data(), pkt.size(), p.now);
    Bytes buf(65536);
    auto t = p.ep->poll_transmit(buf.data(), buf.size(), 64, p.now);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->to, stranger);
    ChunkIter it(buf.data(), t->bytes);
    Chunk ch;
    ASSERT_TRUE(it.next(ch));
    EXPECT_EQ(ch.type, kHeartbeatAck);
    EXPECT_EQ(Bytes(ch.value, ch.value + ch.value_len), info);
    EXPECT_EQ(p.ep->info(p.id)->paths.size(), 1u);
}

// Our INIT-ACK lists Config::local_addresses; the peer's INIT addresses (and the packet's
// source) become paths with the peer's one UDP port, the extra one unconfirmed and probed.
TEST(EngineMultihoming, InitAddressesAreListedAndLearned) {
    using namespace scripted;
    Config c = Peer::default_config();
    c.local_addresses = {v4(1, 9001), rail_addr(1, 1, 9001)};
    Peer p(c);
    p.handshake({{kIPv4Address, {10, 0, 0, 2}}, {kIPv4Address, {10, 1, 0, 2}}});
    Chunk ch{kInitAck, 0, static_cast<uint16_t>(4 + p.init_ack.size()), p.init_ack.data(), p.init_ack.size()};
    InitChunk ia;
    ASSERT_EQ(parse_init(ch, ia), nullptr);
    ASSERT_EQ(ia.ipv4_addresses, 2u);
    EXPECT_EQ(std::memcmp(ia.ipv4[1], rail_addr(1, 1, 0).ip, 4), 0);
    auto i = p.ep->info(p.id);
    ASSERT_EQ(i->paths.size(), 2u);
    EXPECT_EQ(i->paths[0].address, p.me);
    EXPECT_EQ(i->paths[0].state, PathState::active);
    EXPECT_EQ(i->paths[1].address, rail_addr(1, 2, 9002));
    EXPECT_EQ(i->paths[1].state, PathState::unconfirmed);
    // The unconfirmed address is probed at once (the probe goes there, not to p.me: read it
    // directly).
    p.ep->handle_timeout(p.now);
    Bytes buf(65536);
    bool probed = false;
    while (auto t = p.ep->poll_transmit(buf.data(), buf.size(), 64, p.now)) {
        ChunkIter it(buf.data(), t->bytes);
        Chunk k;
        if (it.next(k) && k.type == kHeartbeat && t->to == rail_addr(1, 2, 9002))
            probed = true;
    }
    EXPECT_TRUE(probed);
}
