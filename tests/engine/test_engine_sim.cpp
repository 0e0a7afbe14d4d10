// SPDX-License-Identifier: BSD-3-Clause
// The engine end to end on the simulated network (sim.hpp): handshake from either side and from
// both at once, messages of every size both ways with every byte checked, per-stream order,
// seeded loss / duplication / reordering, shutdown and abort seen by the peer. A failing seed
// prints itself; ENGINE_SEED=N replays only that seed, ENGINE_SEEDS=N runs N seeds.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <tuple>

#include "traffic.hpp"

using namespace sim;

namespace {

Config sim_config() {
    Config c;
    c.local_port = 5000;
    c.rto_initial = 100'000;
    c.rto_min = 50'000; // above the delayed SACK, as the RFC defaults are (1 s vs 200 ms)
    c.rto_max = 2'000'000;
    c.delayed_sack = 20'000;
    c.max_init_retransmits = 8;
    c.max_retransmits = 30; // a lossy simulated path must not end the association
    c.send_buffer = 4u << 20;
    c.rwnd = 1u << 20;
    return c;
}

// Two nodes, checked traffic, events recorded per side.
struct Pair : TrafficPair {
    Pair(uint64_t seed, Faults f = {}, Config c0 = sim_config(), Config c1 = sim_config())
        : TrafficPair(seed, f, c0, c1) {}
    AssocId connect(int side) {
        Address peer = net.node(1 - side).address;
        AssocId id = net.ep(side).connect(std::span<const Address>(&peer, 1), 5000, net.now);
        return id;
    }
    bool has(int side, EventType t) const {
        for (const Event& e : ev[side])
            if (e.type == t)
                return true;
        return false;
    }
    const Event* find(int side, EventType t) const {
        for (const Event& e : ev[side])
            if (e.type == t)
                return &e;
        return nullptr;
    }
    // Runs until both sides delivered everything (pumping sends each step).
    bool run_traffic(Time limit) {
        return net.run_until(
            [&] {
                traffic.pump();
                return traffic.done() || !traffic.error().empty();
            },
            limit) &&
               traffic.error().empty();
    }
};

uint64_t env_u64(const char* name, uint64_t dflt) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
}

std::string where(uint64_t seed, Pair& p) {
    return "seed " + std::to_string(seed) + " (replay: ENGINE_SEED=" + std::to_string(seed) +
           " tests/engine_tests --gtest_filter='" + ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() +
           "." + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "'): " + p.traffic.error() +
           " [virtual time " + std::to_string(p.net.now) + " µs, delivered " + std::to_string(p.traffic.delivered(0)) +
           "/" + std::to_string(p.traffic.delivered(1)) + ", packets " + std::to_string(p.net.packets_sent) + "]";
}

} // namespace

class Handshake : public ::testing::TestWithParam<int> {};

TEST_P(Handshake, FromEitherSide) {
    int client = GetParam();
    Pair p(7);
    AssocId id = p.connect(client);
    ASSERT_NE(id, kNoAssoc);
    ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] == 1 && p.ups[1] == 1; }, 5'000'000));
    EXPECT_EQ(p.traffic.assoc(client), id);
    for (int s = 0; s < 2; ++s) {
        auto info = p.net.ep(s).info(p.traffic.assoc(s));
        ASSERT_TRUE(info);
        EXPECT_EQ(info->state, AssocState::established);
        EXPECT_EQ(info->outbound_streams, 1024);
        EXPECT_EQ(p.net.ep(s).association_count(), 1u);
    }
    // Four packets: INIT, INIT-ACK, COOKIE-ECHO, COOKIE-ACK.
    EXPECT_EQ(p.net.packets_sent, 4u);
    // connect() again to the same peer gives the same association.
    Address peer = p.net.node(1 - client).address;
    EXPECT_EQ(p.net.ep(client).connect(std::span<const Address>(&peer, 1), 5000, p.net.now), id);
}

INSTANTIATE_TEST_SUITE_P(Engine, Handshake, ::testing::Values(0, 1));

// RFC 5061 §4.2.6 (RFC 5043's DDP announcement): each side's indication reaches the other with
// assoc_up, whichever side connects (the passive side learns it from its cookie); a side that
// announces none is reported as such.
TEST_P(Handshake, AdaptationLayerIndicationReachesThePeer) {
    const int client = GetParam();
    Config announcing = sim_config(), silent = sim_config();
    announcing.adaptation_indication = 1;
    for (bool both : {true, false}) {
        Pair p(9, {}, announcing, both ? announcing : silent);
        ASSERT_NE(p.connect(client), kNoAssoc);
        ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] == 1 && p.ups[1] == 1; }, 5'000'000));
        const Event* up0 = p.find(0, EventType::assoc_up);
        const Event* up1 = p.find(1, EventType::assoc_up);
        ASSERT_TRUE(up0 && up1);
        EXPECT_EQ(up1->peer_adaptation, std::optional<uint32_t>(1)) << "client " << client;
        EXPECT_EQ(up0->peer_adaptation, both ? std::optional<uint32_t>(1) : std::nullopt) << "client " << client;
    }
}

TEST(EngineSim, SimultaneousOpenMakesOneAssociation) {
    Pair p(11);
    AssocId a = p.connect(0);
    AssocId b = p.connect(1);
    ASSERT_NE(a, kNoAssoc);
    ASSERT_NE(b, kNoAssoc);
    p.traffic.set_messages(0, {{0, 100}, {1, 5000}});
    p.traffic.set_messages(1, {{0, 1}, {2, 70000}});
    ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] >= 1 && p.ups[1] >= 1; }, 5'000'000));
    ASSERT_TRUE(p.run_traffic(60'000'000)) << p.traffic.error();
    EXPECT_EQ(p.ups[0], 1);
    EXPECT_EQ(p.ups[1], 1);
    EXPECT_EQ(p.traffic.assoc(0), a);
    EXPECT_EQ(p.traffic.assoc(1), b);
    EXPECT_EQ(p.net.ep(0).association_count(), 1u);
    EXPECT_EQ(p.net.ep(1).association_count(), 1u);
}

TEST(EngineSim, SimultaneousOpenUnderLossOnManySeeds) {
    uint64_t only = env_u64("ENGINE_SEED", 0);
    uint64_t n = env_u64("ENGINE_SEEDS", 100);
    for (uint64_t seed = only ? only : 1; seed <= (only ? only : n); ++seed) {
        Rng r(seed);
        Faults f;
        f.loss_per_mille = r.below(250);
        f.dup_per_mille = r.below(100);
        f.reorder_per_mille = r.below(300);
        Pair p(seed, f);
        p.connect(0);
        p.net.now += r.below(300); // the second INIT leaves a little later, or not
        p.connect(1);
        p.traffic.set_messages(0, {{0, 10}, {3, 3000}});
        p.traffic.set_messages(1, {{1, 20}});
        bool ok = p.net.run_until([&] { return p.ups[0] >= 1 && p.ups[1] >= 1; }, 120'000'000) &&
                  p.run_traffic(300'000'000);
        ASSERT_TRUE(ok) << where(seed, p);
        ASSERT_EQ(p.ups[0], 1) << where(seed, p);
        ASSERT_EQ(p.ups[1], 1) << where(seed, p);
        ASSERT_EQ(p.net.ep(0).association_count(), 1u) << where(seed, p);
        ASSERT_EQ(p.net.ep(1).association_count(), 1u) << where(seed, p);
    }
}

TEST(EngineSim, MessagesOfEverySizeBothWays) {
    Pair p(3);
    std::vector<Msg> m;
    for (uint32_t len : {1u, 1000u, 65536u, 1u << 20, 1u, 1473u, 1444u, 1445u, 2888u, 4000u})
        m.push_back({static_cast<uint16_t>(len % 7), len});
    p.traffic.set_messages(0, m);
    p.traffic.set_messages(1, m);
    p.connect(0);
    ASSERT_TRUE(p.run_traffic(120'000'000)) << p.traffic.error();
    EXPECT_TRUE(p.traffic.done());
    // The last SACKs arrive a little after the last delivery.
    ASSERT_TRUE(p.net.run_until(
        [&] { return p.net.ep(0).info(p.traffic.assoc(0))->send_queued == 0 &&
                     p.net.ep(1).info(p.traffic.assoc(1))->send_queued == 0; },
        p.net.now + 10'000'000));
    // Nothing was lost, so nothing was retransmitted.
    auto i0 = p.net.ep(0).info(p.traffic.assoc(0));
    ASSERT_TRUE(i0);
    EXPECT_EQ(i0->retransmitted_chunks, 0u);
    EXPECT_EQ(i0->send_queued, 0u);
}

// Endpoint::take_data hands a message's own buffer over (a small one copied): the bytes are the
// message's, a second take finds nothing, no other event has any, and traffic of every size still
// checks out with the buffers the caller gives back.
TEST(EngineSim, TakeDataHandsTheMessageOver) {
    Pair p(21);
    auto check = p.net.on_event;
    size_t taken = 0, wrong = 0, again = 0;
    std::vector<uint8_t> out(3, 0xee); // what the caller gives back each time
    p.net.on_event = [&](Node& n, const Event& e, const std::vector<uint8_t>& data) {
        if (e.type == EventType::data) {
            if (n.ep->take_data(out) && out == data)
                ++taken;
            else
                ++wrong;
        }
        again += n.ep->take_data(out);
        check(n, e, data);
    };
    ASSERT_NE(p.connect(0), kNoAssoc);
    p.traffic.set_messages(0, {{0, 1}, {0, 64}, {0, 65}, {1, 5000}, {2, 200000}});
    p.traffic.set_messages(1, {{0, 3}, {1, 70000}});
    ASSERT_TRUE(p.run_traffic(60'000'000)) << p.traffic.error();
    EXPECT_EQ(taken, 7u);
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(again, 0u);
}

TEST(EngineSim, EmptyMessageAndBadStreamAreRefused) {
    Pair p(5);
    AssocId id = p.connect(0);
    ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] == 1 && p.ups[1] == 1; }, 5'000'000));
    uint8_t b = 1;
    iovec iov{&b, 0};
    EXPECT_EQ(p.net.ep(0).send(id, 0, &iov, 1, false, p.net.now), -EINVAL);
    iov.iov_len = 1;
    EXPECT_EQ(p.net.ep(0).send(id, 1024, &iov, 1, false, p.net.now), -EINVAL);
    EXPECT_EQ(p.net.ep(0).send(id + 12345, 0, &iov, 1, false, p.net.now), -ENOTCONN);
    std::vector<uint8_t> big((4u << 20) + 1);
    iovec bigv{big.data(), big.size()};
    EXPECT_EQ(p.net.ep(0).send(id, 0, &bigv, 1, false, p.net.now), -EMSGSIZE);
}

TEST(EngineSim, SendBufferFullThenSendSpace) {
    Config c = sim_config();
    c.send_buffer = 100'000;
    Pair p(9, {}, c, c);
    AssocId id = p.connect(0);
    ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] == 1 && p.ups[1] == 1; }, 5'000'000));
    std::vector<uint8_t> m(60'000, 7);
    iovec iov{m.data(), m.size()};
    EXPECT_EQ(p.net.ep(0).send(id, 0, &iov, 1, false, p.net.now), 0);
    EXPECT_EQ(p.net.ep(0).send(id, 0, &iov, 1, false, p.net.now), -EWOULDBLOCK);
    ASSERT_TRUE(p.net.run_until([&] { return p.has(0, EventType::send_space); }, 10'000'000));
    EXPECT_EQ(p.net.ep(0).send(id, 0, &iov, 1, false, p.net.now), 0);
}

TEST(EngineSim, StreamsKeepTheirOrder) {
    Faults f;
    f.reorder_per_mille = 300;
    Pair p(21, f);
    std::vector<Msg> m;
    Rng r(21);
    for (int i = 0; i < 2000; ++i)
        m.push_back({static_cast<uint16_t>(r.below(8)), 1 + r.below(3000)});
    p.traffic.set_messages(0, m);
    p.traffic.set_messages(1, m);
    p.connect(1);
    ASSERT_TRUE(p.run_traffic(300'000'000)) << p.traffic.error();
}

// The heart of it: every message exactly once, in order per stream, intact, whatever the
// network does (within reason), on many seeds.
TEST(EngineSim, LossDuplicationReorderingOnManySeeds) {
    uint64_t only = env_u64("ENGINE_SEED", 0);
    uint64_t n = env_u64("ENGINE_SEEDS", 300);
    uint64_t lost = 0, fast = 0, t3 = 0, rtx = 0;
    for (uint64_t seed = only ? only : 1; seed <= (only ? only : n); ++seed) {
        Rng r(seed);
        Faults f;
        f.loss_per_mille = r.below(150);
        f.dup_per_mille = r.below(100);
        f.reorder_per_mille = r.below(400);
        f.delay = 50 + r.below(2000);
        f.reorder_extra = 1 + r.below(5000);
        Config c = sim_config();
        if (r.below(2))
            c.sack_per_read = true;
        c.sack_every = 1 + r.below(3);
        c.sack_full_packets = r.below(2);
        Pair p(seed, f, c, c);
        std::vector<Msg> m[2];
        for (int s = 0; s < 2; ++s) {
            size_t count = 1 + r.below(60);
            for (size_t i = 0; i < count; ++i) {
                uint32_t kind = r.below(10);
                uint32_t len = kind < 5 ? 1 + r.below(100) : kind < 9 ? 1 + r.below(5000) : 1 + r.below(200'000);
                m[s].push_back({static_cast<uint16_t>(r.below(4)), len});
            }
            p.traffic.set_messages(s, m[s]);
        }
        p.connect(static_cast<int>(r.below(2)));
        bool ok = p.run_traffic(600'000'000);
        ASSERT_TRUE(ok) << where(seed, p);
        lost += p.net.packets_lost;
        for (int s = 0; s < 2; ++s)
            if (auto i = p.net.ep(s).info(p.traffic.assoc(s))) {
                fast += i->fast_retransmits;
                t3 += i->t3_expiries;
                rtx += i->retransmitted_chunks;
            }
    }
    // The schedule did exercise the recovery paths (on the default seed range).
    if (!only && n >= 100) {
        EXPECT_GT(lost, 100u);
        EXPECT_GT(fast, 10u);
        EXPECT_GT(t3, 10u);
        EXPECT_GT(rtx, 100u);
    }
    std::printf("[ info     ] %llu packets lost, %llu chunks retransmitted (%llu fast retransmits, %llu T3 expiries)\n",
                static_cast<unsigned long long>(lost), static_cast<unsigned long long>(rtx),
                static_cast<unsigned long long>(fast), static_cast<unsigned long long>(t3));
}

TEST(EngineSim, ShutdownIsReportedOnBothSides) {
    Pair p(13);
    p.traffic.set_messages(0, {{0, 50'000}, {1, 10}});
    p.traffic.set_messages(1, {{0, 7}});
    AssocId id = p.connect(0);
    ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] == 1 && p.ups[1] == 1; }, 5'000'000));
    p.traffic.pump();
    ASSERT_EQ(p.net.ep(0).shutdown(id, p.net.now), 0);
    uint8_t b = 1;
    iovec iov{&b, 1};
    EXPECT_EQ(p.net.ep(0).send(id, 0, &iov, 1, false, p.net.now), -ESHUTDOWN);
    ASSERT_TRUE(p.net.run_until(
        [&] { return p.has(0, EventType::shutdown_complete) && p.has(1, EventType::shutdown_complete); },
        30'000'000));
    // Data queued before the shutdown was delivered first.
    EXPECT_TRUE(p.traffic.done()) << p.traffic.error();
    EXPECT_EQ(p.net.ep(0).association_count(), 0u);
    EXPECT_EQ(p.net.ep(1).association_count(), 0u);
    EXPECT_EQ(p.net.ep(0).send(id, 0, &iov, 1, false, p.net.now), -ENOTCONN);
    // Nothing is left behind: no timer, nothing to send.
    EXPECT_FALSE(p.net.ep(0).next_deadline());
    EXPECT_FALSE(p.net.ep(1).next_deadline());
    std::vector<uint8_t> buf(65536);
    EXPECT_FALSE(p.net.ep(0).poll_transmit(buf.data(), buf.size(), 64, p.net.now));
}

// RFC 9260 §9.2 T5-shutdown-guard: a shutdown that cannot finish, because the peer answers
// heartbeats and SACKs but never takes its data (its window stays shut), ends in an ABORT after
// 5 x RTO.Max (at least 30 s) instead of never (T3's limit does not end it: answered heartbeats
// reset it).
TEST(EngineSim, ShutdownGuardEndsAShutdownThatCannotFinish) {
    Config c = sim_config();
    c.rwnd = 64 * 1024;
    c.max_retransmits = 100000; // only the guard may end it
    c.heartbeat_interval = 500'000;
    Pair p(5, {}, c, c);
    p.net.auto_drain_events = false; // node 1 never takes what arrives
    const AssocId id = p.connect(0);
    ASSERT_TRUE(p.net.run_until([&] { return p.net.ep(1).association_count() == 1 && p.net.ep(0).info(id) &&
                                              p.net.ep(0).info(id)->state == AssocState::established; },
                                5'000'000));
    std::vector<uint8_t> msg(4096, 0x5a); // whole messages count against the window (a
    iovec iov{msg.data(), msg.size()};       // message in reassembly would not)
    for (int i = 0; i < 64; ++i)
        ASSERT_EQ(p.net.ep(0).send(id, 0, &iov, 1, false, p.net.now), 0);
    ASSERT_EQ(p.net.ep(0).shutdown(id, p.net.now), 0);
    const Time begun = p.net.now;
    ASSERT_TRUE(p.net.run_until([&] { return !p.net.ep(0).info(id); }, begun + 60'000'000));
    EXPECT_GE(p.net.now - begun, std::max<Time>(5 * c.rto_max, 30'000'000));
    std::string reason;
    Event ev;
    while (p.net.ep(0).poll_event(ev))
        if (ev.type == EventType::assoc_lost)
            reason = ev.reason;
    EXPECT_NE(reason.find("T5-shutdown-guard"), std::string::npos) << reason;
    // The peer hears why (its data events, never taken, come first).
    const Time until = p.net.now + 1'000'000;
    p.net.run_until([&] { return p.net.now >= until; }, until);
    std::string peer_reason;
    while (p.net.ep(1).poll_event(ev))
        if (ev.type == EventType::assoc_lost)
            peer_reason = ev.reason;
    EXPECT_NE(peer_reason.find("T5-shutdown-guard"), std::string::npos) << "peer: " << peer_reason;
}

TEST(EngineSim, AnIdleAssociationWithoutHeartbeatsHasNoTimers) {
    Config c = sim_config();
    c.heartbeat_interval = 0; // heartbeats off: nothing else may keep a timer running
    Pair p(37, {}, c, c);
    p.traffic.set_messages(0, {{0, 5000}, {1, 1}});
    p.traffic.set_messages(1, {{0, 3}});
    p.connect(0);
    ASSERT_TRUE(p.run_traffic(30'000'000)) << p.traffic.error();
    // Once the last SACKs are out, the network goes quiet (heartbeats are off).
    Time before = p.net.now;
    while (p.net.step())
        ASSERT_LT(p.net.now, before + 10'000'000) << "timers still running on an idle association";
    EXPECT_FALSE(p.net.ep(0).next_deadline());
    EXPECT_FALSE(p.net.ep(1).next_deadline());
    EXPECT_EQ(p.net.ep(0).info(p.traffic.assoc(0))->send_queued, 0u);
    EXPECT_EQ(p.net.ep(0).info(p.traffic.assoc(0))->flight_size, 0u);
}

TEST(EngineSim, ShutdownUnderLossOnManySeeds) {
    uint64_t only = env_u64("ENGINE_SEED", 0);
    uint64_t n = env_u64("ENGINE_SEEDS", 100);
    for (uint64_t seed = only ? only : 1; seed <= (only ? only : n); ++seed) {
        Rng r(seed + 5000);
        Faults f;
        f.loss_per_mille = r.below(200);
        f.dup_per_mille = r.below(100);
        f.reorder_per_mille = r.below(300);
        Pair p(seed, f);
        p.traffic.set_messages(0, {{0, 1 + r.below(20000)}, {1, 5}});
        p.traffic.set_messages(1, {{0, 1 + r.below(20000)}});
        p.connect(0);
        bool ok = p.run_traffic(300'000'000);
        ASSERT_TRUE(ok) << where(seed, p);
        int closer = static_cast<int>(r.below(2));
        ASSERT_EQ(p.net.ep(closer).shutdown(p.traffic.assoc(closer), p.net.now), 0);
        ok = p.net.run_until(
            [&] {
                return p.has(closer, EventType::shutdown_complete) &&
                       (p.has(1 - closer, EventType::shutdown_complete) || p.net.ep(1 - closer).association_count() == 0);
            },
            p.net.now + 600'000'000);
        ASSERT_TRUE(ok) << where(seed, p);
        // The side that began it always sees shutdown_complete; the other sees it too unless
        // every SHUTDOWN-COMPLETE was lost (then its T2 gives up: assoc_lost).
        EXPECT_TRUE(p.has(1 - closer, EventType::shutdown_complete) || p.has(1 - closer, EventType::assoc_lost))
            << where(seed, p);
    }
}

TEST(EngineSim, AbortIsReportedToThePeerWithItsReason) {
    Pair p(17);
    AssocId id = p.connect(1);
    ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] == 1 && p.ups[1] == 1; }, 5'000'000));
    ASSERT_EQ(p.net.ep(1).abort(id, "rank 3 exits", p.net.now), 0);
    ASSERT_TRUE(p.net.run_until([&] { return p.has(0, EventType::assoc_lost); }, 5'000'000));
    const Event* e = p.find(0, EventType::assoc_lost);
    EXPECT_NE(e->reason.find("User-Initiated Abort"), std::string::npos) << e->reason;
    EXPECT_NE(e->reason.find("rank 3 exits"), std::string::npos) << e->reason;
    const Event* mine = p.find(1, EventType::assoc_lost);
    ASSERT_NE(mine, nullptr);
    EXPECT_NE(mine->reason.find("aborted locally"), std::string::npos);
    EXPECT_EQ(p.net.ep(0).association_count(), 0u);
    EXPECT_EQ(p.net.ep(1).association_count(), 0u);
}

TEST(EngineSim, ConnectToNobodyCannotStart) {
    Pair p(19);
    Address nobody = addr(99, 9099);
    AssocId id = p.net.ep(0).connect(std::span<const Address>(&nobody, 1), 5000, p.net.now);
    ASSERT_NE(id, kNoAssoc);
    ASSERT_TRUE(p.net.run_until([&] { return p.has(0, EventType::cant_start); }, 3'600'000'000));
    EXPECT_NE(p.find(0, EventType::cant_start)->reason.find("INIT sent 9 times"), std::string::npos)
        << p.find(0, EventType::cant_start)->reason;
    EXPECT_EQ(p.net.ep(0).association_count(), 0u);
    EXPECT_FALSE(p.net.ep(0).next_deadline());
}

TEST(EngineSim, PeerRestartIsReported) {
    Pair p(23);
    p.connect(0);
    ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] == 1 && p.ups[1] == 1; }, 5'000'000));
    // Node 1 forgets everything (a new process on the same address) and connects again.
    Net& net = p.net;
    Config c = sim_config();
    net.node(1).ep = std::make_unique<Endpoint>(c, seeded_random(999));
    Address peer = net.node(0).address;
    AssocId fresh = net.ep(1).connect(std::span<const Address>(&peer, 1), 5000, net.now);
    ASSERT_NE(fresh, kNoAssoc);
    ASSERT_TRUE(net.run_until([&] { return p.has(0, EventType::assoc_restart) && p.ups[1] == 2; }, 10'000'000));
    // The restarted association carries data.
    p.traffic.set_assoc(1, fresh);
    p.traffic.set_messages(0, {{0, 3000}});
    p.traffic.set_messages(1, {{1, 10}});
    ASSERT_TRUE(p.run_traffic(20'000'000)) << p.traffic.error();
}

TEST(EngineSim, BulkDataLeavesInEqualSizedBurstsForGso) {
    Pair p(29);
    AssocId id = p.connect(0);
    ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] == 1 && p.ups[1] == 1; }, 5'000'000));
    // Open the window first: a few round trips of bulk data.
    p.traffic.set_messages(0, {{0, 1u << 20}});
    ASSERT_TRUE(p.run_traffic(30'000'000)) << p.traffic.error();
    ASSERT_TRUE(p.net.run_until([&] { return p.net.ep(0).info(id)->flight_size == 0; }, p.net.now + 5'000'000));
    std::vector<uint8_t> m(1 << 20, 3);
    iovec iov{m.data(), m.size()};
    ASSERT_EQ(p.net.ep(0).send(id, 0, &iov, 1, false, p.net.now), 0);
    std::vector<uint8_t> buf(65536);
    auto t = p.net.ep(0).poll_transmit(buf.data(), buf.size(), 64, p.net.now);
    ASSERT_TRUE(t);
    EXPECT_GT(t->count, 1u);
    EXPECT_EQ(t->segment_size, p.net.ep(0).config().mtu); // full packets
    EXPECT_EQ(t->bytes, t->count * t->segment_size);
    EXPECT_EQ(t->to, p.net.node(1).address);
    // Every segment is a valid packet on its own.
    for (size_t k = 0; k < t->count; ++k) {
        Address from = p.net.node(0).address;
        p.net.ep(1).receive(from, p.net.node(1).address, buf.data() + k * t->segment_size, t->segment_size, p.net.now);
    }
    EXPECT_EQ(p.net.ep(1).stats().bad_checksum + p.net.ep(1).stats().malformed, 0u);
}

TEST(EngineSim, SmallReceiveWindowAndAStalledReader) {
    Config small = sim_config();
    small.rwnd = 3000;
    Pair p(31, {}, sim_config(), small);
    std::vector<Msg> m;
    for (uint32_t len : {200'000u, 1u, 5000u, 64u * 1024, 3u})
        m.push_back({1, len});
    p.traffic.set_messages(0, m);
    p.traffic.set_messages(1, {{0, 10}});
    p.connect(0);
    ASSERT_TRUE(p.net.run_until([&] { return p.ups[0] == 1 && p.ups[1] == 1; }, 5'000'000));
    p.traffic.pump();
    // The reader stops taking messages for a while: the window closes, the sender waits.
    p.net.auto_drain_events = false;
    p.net.run_until([] { return false; }, p.net.now + 3'000'000);
    auto held = p.net.ep(1).info(p.traffic.assoc(1))->recv_held;
    // The first message (larger than the window) completes anyway (the message being reassembled
    // does not count against the window); after it, the window closes at 3000 bytes, plus at most
    // a probe.
    EXPECT_GE(held, 200'000u);
    EXPECT_LE(held, 200'000u + 3000u + 2 * 1472u);
    p.net.auto_drain_events = true;
    p.net.drain_events(); // the reader is back: the window opens (a window update goes out)
    bool ok = p.run_traffic(p.net.now + 300'000'000);
    auto i0 = p.net.ep(0).info(p.traffic.assoc(0));
    auto i1 = p.net.ep(1).info(p.traffic.assoc(1));
    ASSERT_TRUE(ok) << p.traffic.error() << " delivered " << p.traffic.delivered(0) << " now " << p.net.now
                    << " sender: queued " << (i0 ? i0->send_queued : 0) << " flight " << (i0 ? i0->flight_size : 0)
                    << " peer_rwnd " << (i0 ? i0->peer_rwnd : 0) << " cwnd " << (i0 ? i0->cwnd : 0) << " t3 "
                    << (i0 ? i0->t3_expiries : 0) << " receiver held " << (i1 ? i1->recv_held : 0)
                    << " deadline0 " << p.net.ep(0).next_deadline().value_or(-1)
                    << " deadline1 " << p.net.ep(1).next_deadline().value_or(-1);
}

// One endpoint, many associations (the one-to-many socket MPI uses): every pair of five nodes
// connects (some from both sides at once), each pair exchanges checked messages both ways under
// loss and reordering; every message arrives once, intact, on the right association.
TEST(EngineSim, ManyAssociationsPerEndpoint) {
    constexpr int kNodes = 5;
    Faults f;
    f.loss_per_mille = 30;
    f.reorder_per_mille = 100;
    Net net(41, f);
    for (int i = 0; i < kNodes; ++i)
        net.add(sim_config(), static_cast<uint8_t>(i + 1), 100 + i);
    // Per node: peer node -> association id, and per (sender, receiver) the next message index.
    std::map<std::pair<int, int>, AssocId> id;
    std::map<std::pair<int, int>, uint32_t> next_rx;             // messages received per pair
    std::map<std::tuple<int, int, int>, uint32_t> next_rx_stream; // ... and per stream
    std::map<AssocId, int> peer_of[kNodes];
    std::string error;
    constexpr uint32_t kMsgs = 40;
    auto len_of = [](int from, int to, uint32_t k) { return 1 + (from * 7919 + to * 104729 + k * 31337) % 3000; };
    net.on_event = [&](Node& n, const Event& e, const std::vector<uint8_t>& data) {
        int me = net.node_of(n.address);
        if (e.type == EventType::assoc_up) {
            int peer = net.node_of(e.peer);
            if (peer < 0 || peer_of[me].count(e.assoc)) {
                error = "unexpected assoc_up";
                return;
            }
            peer_of[me][e.assoc] = peer;
            id[{me, peer}] = e.assoc;
        } else if (e.type == EventType::data) {
            auto it = peer_of[me].find(e.assoc);
            if (it == peer_of[me].end()) {
                error = "data on an unknown association";
                return;
            }
            // Message k goes on stream k % 3: per stream, k grows by 3 (order is per stream).
            int from = it->second;
            uint32_t& seen = next_rx_stream[{from, me, e.stream}];
            uint32_t k = e.stream + 3 * seen++;
            ++next_rx[{from, me}];
            if (data.size() != len_of(from, me, k) || data[0] != static_cast<uint8_t>(k) ||
                data.back() != static_cast<uint8_t>(from))
                error = "message " + std::to_string(k) + " from node " + std::to_string(from) + " to " +
                        std::to_string(me) + " is wrong";
        } else if (e.type != EventType::send_space && e.type != EventType::path_change) {
            error = std::string("unexpected event ") + to_string(e.type) + ": " + e.reason;
        }
    };
    for (int i = 0; i < kNodes; ++i)
        for (int j = 0; j < kNodes; ++j)
            if (i != j && (i < j || (i + j) % 3 == 0)) { // some pairs from both sides at once
                Address peer = net.node(j).address;
                ASSERT_NE(net.ep(i).connect(std::span<const Address>(&peer, 1), 5000, net.now), kNoAssoc);
            }
    std::map<std::pair<int, int>, uint32_t> next_tx;
    auto pump = [&] {
        for (auto& [pair, aid] : id) {
            auto [from, to] = pair;
            for (uint32_t& k = next_tx[pair]; k < kMsgs;) {
                std::vector<uint8_t> m(len_of(from, to, k), 0x33);
                m[0] = static_cast<uint8_t>(k);
                m.back() = static_cast<uint8_t>(from);
                iovec iov{m.data(), m.size()};
                int rc = net.ep(from).send(aid, static_cast<uint16_t>(k % 3), &iov, 1, false, net.now);
                if (rc == -EWOULDBLOCK)
                    break;
                if (rc != 0) {
                    error = "send failed: " + std::to_string(rc);
                    return;
                }
                ++k;
            }
        }
    };
    auto done = [&] {
        if (!error.empty())
            return true;
        pump();
        for (int i = 0; i < kNodes; ++i)
            for (int j = 0; j < kNodes; ++j)
                if (i != j && next_rx[{i, j}] < kMsgs)
                    return false;
        return true;
    };
    ASSERT_TRUE(net.run_until(done, 600'000'000)) << "virtual time " << net.now;
    ASSERT_EQ(error, "");
    for (int i = 0; i < kNodes; ++i)
        EXPECT_EQ(net.ep(i).association_count(), static_cast<size_t>(kNodes - 1));
}
