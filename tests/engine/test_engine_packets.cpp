// SPDX-License-Identifier: BSD-3-Clause
// The engine's answers to single packets from a scripted peer (scripted_peer.hpp): the stateless
// handshake, DATA and the SACK it earns (gaps, duplicates, window), unknown chunks by their upper
// two bits, out-of-the-blue packets, bad checksums and tags, stale and forged cookies,
// HEARTBEAT, and the RFC's answers to a DATA chunk without data.
#include <gtest/gtest.h>

#include "scripted_peer.hpp"

using namespace scripted;

namespace {

bool has_chunk(const std::vector<ChunkSpec>& v, uint8_t type) {
    for (auto& c : v)
        if (std::get<0>(c) == type)
            return true;
    return false;
}

const ChunkSpec* get_chunk(const std::vector<ChunkSpec>& v, uint8_t type) {
    for (auto& c : v)
        if (std::get<0>(c) == type)
            return &c;
    return nullptr;
}

SackChunk sack_of(const ChunkSpec& c, Bytes& keep) {
    keep = std::get<2>(c);
    Chunk ch{kSack, 0, static_cast<uint16_t>(4 + keep.size()), keep.data(), keep.size()};
    SackChunk s;
    EXPECT_EQ(parse_sack(ch, s), nullptr);
    return s;
}

std::vector<Bytes> data_payloads(const Peer& p) {
    std::vector<Bytes> r;
    for (size_t i = 0; i < p.events.size(); ++i)
        if (p.events[i].type == EventType::data)
            r.push_back(p.payloads[i]);
    return r;
}

size_t data_events(const Peer& p) {
    size_t n = 0;
    for (auto& e : p.events)
        n += e.type == EventType::data;
    return n;
}

} // namespace

TEST(EnginePackets, HandshakeThenDataAndSack) {
    Peer p;
    p.handshake();
    ASSERT_FALSE(HasFailure());
    size_t mark = p.out.size();
    p.send_chunks({{kData, kDataBegin | kDataEnd, data_value(p.my_tsn, 3, 0, {'h', 'i'}, 77)}});
    ASSERT_EQ(data_events(p), 1u);
    EXPECT_EQ(p.events.back().stream, 3);
    EXPECT_EQ(p.events.back().ppid, 77u);
    EXPECT_EQ(p.payloads.back(), (Bytes{'h', 'i'}));
    EXPECT_EQ(p.out.size(), mark); // one packet: the SACK waits (delayed)
    ASSERT_TRUE(p.ep->next_deadline());
    p.send_chunks({{kData, kDataBegin | kDataEnd, data_value(p.my_tsn + 1, 3, 1, {'!'})}});
    auto r = p.chunks_since(mark); // the second packet: SACK at once (every 2nd)
    const ChunkSpec* s = get_chunk(r, kSack);
    ASSERT_NE(s, nullptr);
    Bytes keep;
    SackChunk sk = sack_of(*s, keep);
    EXPECT_EQ(sk.cum_tsn, p.my_tsn + 1);
    EXPECT_EQ(sk.gap_count, 0);
    EXPECT_EQ(sk.dup_count, 0);
    // The SACK left before the second message was taken by poll_event (collect() polls output
    // first): its byte still counted.
    EXPECT_EQ(sk.a_rwnd, p.cfg.rwnd - 1);
}

TEST(EnginePackets, DelayedSackTimer) {
    Peer p;
    p.handshake();
    size_t mark = p.out.size();
    p.send_chunks({{kData, kDataBegin | kDataEnd, data_value(p.my_tsn, 0, 0, {1})}});
    EXPECT_EQ(p.out.size(), mark);
    p.advance(p.cfg.delayed_sack - 1);
    EXPECT_EQ(p.out.size(), mark);
    p.advance(1);
    EXPECT_TRUE(has_chunk(p.chunks_since(mark), kSack));
}

TEST(EnginePackets, SackPerReadAtEndOfBatch) {
    Config c = Peer::default_config();
    c.sack_per_read = true;
    Peer p(c);
    p.handshake();
    size_t mark = p.out.size();
    Bytes pk = build(p.my_port, 5000, p.their_tag, {{kData, 3, data_value(p.my_tsn, 0, 0, {1})}});
    p.ep->receive(p.me, p.them, pk.data(), pk.size(), p.now);
    p.collect();
    EXPECT_EQ(p.out.size(), mark); // not yet: the batch is not over
    p.ep->end_of_batch(p.now);
    p.collect();
    EXPECT_TRUE(has_chunk(p.chunks_since(mark), kSack));
}

TEST(EnginePackets, GapAndDuplicateAreReportedAtOnce) {
    Peer p;
    p.handshake();
    size_t mark = p.out.size();
    p.send_chunks({{kData, 3, data_value(p.my_tsn + 2, 0, 2, {3})}}); // TSN +0 and +1 missing
    auto r = p.chunks_since(mark);
    ASSERT_TRUE(has_chunk(r, kSack));
    Bytes keep;
    SackChunk s = sack_of(*get_chunk(r, kSack), keep);
    EXPECT_EQ(s.cum_tsn, p.my_tsn - 1);
    ASSERT_EQ(s.gap_count, 1);
    EXPECT_EQ(s.gap_start(0), 3);
    EXPECT_EQ(s.gap_end(0), 3);
    EXPECT_EQ(data_events(p), 0u); // held behind the gap
    mark = p.out.size();
    p.send_chunks({{kData, 3, data_value(p.my_tsn, 0, 0, {1})}, {kData, 3, data_value(p.my_tsn + 1, 0, 1, {2})}});
    ASSERT_EQ(data_events(p), 3u);
    EXPECT_EQ(data_payloads(p), (std::vector<Bytes>{{1}, {2}, {3}}));
    r = p.chunks_since(mark);
    s = sack_of(*get_chunk(r, kSack), keep);
    EXPECT_EQ(s.cum_tsn, p.my_tsn + 2);
    EXPECT_EQ(s.gap_count, 0);
    mark = p.out.size();
    p.send_chunks({{kData, 3, data_value(p.my_tsn + 1, 0, 1, {2})}}); // a duplicate
    EXPECT_EQ(data_events(p), 3u);
    r = p.chunks_since(mark);
    s = sack_of(*get_chunk(r, kSack), keep);
    ASSERT_EQ(s.dup_count, 1);
    EXPECT_EQ(s.dup(0), p.my_tsn + 1);
}

TEST(EnginePackets, FragmentsAreReassembled) {
    Peer p;
    p.handshake();
    p.send_chunks({{kData, kDataBegin, data_value(p.my_tsn, 1, 0, {1, 2})},
                   {kData, 0, data_value(p.my_tsn + 1, 1, 0, {3})},
                   {kData, kDataEnd, data_value(p.my_tsn + 2, 1, 0, {4, 5, 6})}});
    ASSERT_EQ(data_events(p), 1u);
    EXPECT_EQ(p.payloads.back(), (Bytes{1, 2, 3, 4, 5, 6}));
    // A middle fragment without its beginning is a protocol violation: ABORT.
    size_t mark = p.out.size();
    p.send_chunks({{kData, 0, data_value(p.my_tsn + 3, 1, 1, {9})}});
    EXPECT_TRUE(has_chunk(p.chunks_since(mark), kAbort));
    EXPECT_EQ(p.events.back().type, EventType::assoc_lost);
}

TEST(EnginePackets, ReceiveWindowShrinksUntilDataIsTaken) {
    Config c = Peer::default_config();
    c.rwnd = 10000;
    Peer p(c);
    p.handshake();
    // Two packets received, no event polled: the SACK (due on the 2nd packet) offers what is left.
    Bytes big(4000, 7);
    Bytes pk1 = build(p.my_port, 5000, p.their_tag,
                      {{kData, 3, data_value(p.my_tsn, 0, 0, big)}, {kData, 3, data_value(p.my_tsn + 1, 0, 1, big)}});
    Bytes pk2 = build(p.my_port, 5000, p.their_tag, {{kData, 3, data_value(p.my_tsn + 2, 0, 2, {1})}});
    p.ep->receive(p.me, p.them, pk1.data(), pk1.size(), p.now);
    p.ep->receive(p.me, p.them, pk2.data(), pk2.size(), p.now);
    auto sack_now = [&]() -> std::optional<SackChunk> {
        static Bytes buf(65536);
        auto t = p.ep->poll_transmit(buf.data(), buf.size(), 1, p.now);
        if (!t)
            return std::nullopt;
        ChunkIter it(buf.data(), t->bytes);
        Chunk ch;
        while (it.next(ch)) {
            SackChunk s;
            if (ch.type == kSack && parse_sack(ch, s) == nullptr)
                return s;
        }
        return std::nullopt;
    };
    auto s = sack_now();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->cum_tsn, p.my_tsn + 2);
    EXPECT_EQ(s->a_rwnd, 10000u - 8001u);
    EXPECT_EQ(p.ep->info(p.id)->recv_held, 8001u);
    // Taking the messages opens the window, and the engine says so (window update).
    Event ev;
    int n = 0;
    while (p.ep->poll_event(ev))
        ++n;
    EXPECT_EQ(n, 3);
    s = sack_now();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->a_rwnd, 10000u);
}

TEST(EnginePackets, UnknownChunkTypesFollowTheirUpperBits) {
    struct Case {
        uint8_t type;
        bool delivered; // the DATA after it
        bool reported;  // an ERROR with Unrecognized Chunk Type
    };
    for (Case k : {Case{0x3f, false, false}, Case{0x7f, false, true}, Case{0xbf, true, false}, Case{0xff, true, true}}) {
        Peer p;
        p.handshake();
        size_t mark = p.out.size();
        p.send_chunks({{k.type, 0, {1, 2, 3, 4}}, {kData, 3, data_value(p.my_tsn, 0, 0, {5})}});
        EXPECT_EQ(data_events(p), k.delivered ? 1u : 0u) << std::hex << int(k.type);
        auto r = p.chunks_since(mark);
        const ChunkSpec* e = get_chunk(r, kError);
        EXPECT_EQ(e != nullptr, k.reported) << std::hex << int(k.type);
        if (e) {
            const Bytes& v = std::get<2>(*e);
            ASSERT_GE(v.size(), 8u);
            EXPECT_EQ(get16(v.data()), kUnrecognizedChunk);
            EXPECT_EQ(v[4], k.type); // the chunk itself is in the cause
        }
        EXPECT_EQ(p.ep->association_count(), 1u);
    }
}

TEST(EnginePackets, InitWithParametersToReport) {
    Peer p;
    p.handshake({{0xC123, {9, 9}}, {0x8001, {1}}});
    ASSERT_FALSE(HasFailure());
    Chunk c{kInitAck, 0, static_cast<uint16_t>(4 + p.init_ack.size()), p.init_ack.data(), p.init_ack.size()};
    InitChunk ia;
    ASSERT_EQ(parse_init(c, ia), nullptr);
    // Our own INIT-ACK carries parameter type 8 (Unrecognized Parameter), which has upper bits
    // 00: a reader stops at it, so it comes after the cookie, and it wraps the 0xC123 TLV.
    bool found = false;
    for (size_t off = 16; off + 4 <= p.init_ack.size();) {
        uint16_t t = get16(p.init_ack.data() + off), len = get16(p.init_ack.data() + off + 2);
        if (t == kUnrecognizedParam) {
            found = true;
            EXPECT_EQ(get16(p.init_ack.data() + off + 4), 0xC123);
        }
        off += pad4(len);
    }
    EXPECT_TRUE(found);
}

TEST(EnginePackets, OutOfTheBlue) {
    Peer p;
    size_t mark = p.out.size();
    p.send_chunks({{kData, 3, data_value(1, 0, 0, {1})}}, 0x12345678);
    uint32_t vtag = 0;
    auto r = p.chunks_since(mark, &vtag);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(std::get<0>(r[0]), kAbort);
    EXPECT_EQ(std::get<1>(r[0]) & kFlagT, kFlagT);
    EXPECT_EQ(vtag, 0x12345678u);
    // SHUTDOWN-ACK: SHUTDOWN-COMPLETE with T; ABORT, COOKIE-ACK, SHUTDOWN-COMPLETE: nothing.
    mark = p.out.size();
    p.send_chunks({{kShutdownAck, 0, {}}}, 0x55);
    r = p.chunks_since(mark, &vtag);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(std::get<0>(r[0]), kShutdownComplete);
    EXPECT_EQ(std::get<1>(r[0]) & kFlagT, kFlagT);
    EXPECT_EQ(vtag, 0x55u);
    mark = p.out.size();
    p.send_chunks({{kAbort, 0, {}}}, 0x55);
    p.send_chunks({{kCookieAck, 0, {}}}, 0x55);
    p.send_chunks({{kShutdownComplete, 0, {}}}, 0x55);
    EXPECT_EQ(p.out.size(), mark);
    EXPECT_EQ(p.ep->stats().ootb, 5u);
}

TEST(EnginePackets, BadChecksumTagAndPortAreDropped) {
    Peer p;
    p.handshake();
    Bytes pk = build(p.my_port, 5000, p.their_tag, {{kData, 3, data_value(p.my_tsn, 0, 0, {1})}});
    pk[pk.size() - 4] ^= 1;
    p.send(pk);
    EXPECT_EQ(p.ep->stats().bad_checksum, 1u);
    p.send(build(p.my_port, 5000, p.their_tag ^ 1, {{kData, 3, data_value(p.my_tsn, 0, 0, {1})}}));
    EXPECT_EQ(p.ep->stats().bad_vtag, 1u);
    p.send(build(p.my_port, 5001, p.their_tag, {{kData, 3, data_value(p.my_tsn, 0, 0, {1})}}));
    EXPECT_EQ(p.ep->stats().malformed, 1u);
    EXPECT_EQ(data_events(p), 0u);
    // INIT bundled with another chunk, INIT with a nonzero tag: dropped.
    p.send(build(p.my_port, 5000, 0, {{kInit, 0, init_value(1, 5000, 1, 1, 1)}, {kCookieAck, 0, {}}}));
    p.send(build(p.my_port, 5000, 7, {{kInit, 0, init_value(1, 5000, 1, 1, 1)}}));
    EXPECT_EQ(p.ep->stats().malformed, 2u);
    EXPECT_EQ(p.ep->stats().bad_vtag, 2u);
    p.send_chunks({{kData, 3, data_value(p.my_tsn, 0, 0, {1})}});
    EXPECT_EQ(data_events(p), 1u);
}

TEST(EnginePackets, StaleAndForgedCookies) {
    Config c = Peer::default_config();
    c.cookie_lifetime = 1'000'000;
    Peer p(c);
    size_t mark = p.out.size();
    p.send(build(p.my_port, 5000, 0, {{kInit, 0, init_value(p.my_tag, 1 << 20, 16, 16, p.my_tsn)}}));
    auto r = p.chunks_since(mark);
    Bytes v = std::get<2>(r[0]);
    Chunk ch{kInitAck, 0, static_cast<uint16_t>(4 + v.size()), v.data(), v.size()};
    InitChunk ia;
    ASSERT_EQ(parse_init(ch, ia), nullptr);
    Bytes cookie(ia.cookie.p, ia.cookie.p + ia.cookie.n);
    Bytes forged = cookie;
    forged[10] ^= 1;
    p.send_chunks({{kCookieEcho, 0, forged}}, ia.tag);
    EXPECT_EQ(p.ep->stats().bad_cookie, 1u);
    EXPECT_EQ(p.ep->association_count(), 0u);
    p.now += 2'000'000;
    mark = p.out.size();
    p.send_chunks({{kCookieEcho, 0, cookie}}, ia.tag);
    EXPECT_EQ(p.ep->association_count(), 0u);
    r = p.chunks_since(mark);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(std::get<0>(r[0]), kError);
    EXPECT_EQ(get16(std::get<2>(r[0]).data()), kStaleCookie);
    EXPECT_EQ(get32(std::get<2>(r[0]).data() + 4), 1'000'000u); // staleness in µs
}

namespace {

// The INIT-ACK's cookie and tag for an INIT with Initiate Tag `tag`.
std::pair<Bytes, uint32_t> cookie_for_init(Peer& p, uint32_t tag) {
    const size_t mark = p.out.size();
    p.send(build(p.my_port, 5000, 0, {{kInit, 0, init_value(tag, 1 << 20, 16, 16, p.my_tsn)}}));
    auto r = p.chunks_since(mark);
    EXPECT_EQ(r.size(), 1u);
    if (r.empty())
        return {};
    Bytes v = std::get<2>(r[0]);
    Chunk ch{kInitAck, 0, static_cast<uint16_t>(4 + v.size()), v.data(), v.size()};
    InitChunk ia;
    EXPECT_EQ(parse_init(ch, ia), nullptr);
    return {Bytes(ia.cookie.p, ia.cookie.p + ia.cookie.n), ia.tag};
}

} // namespace

// The cookie secret changes once every Valid.Cookie.Life (at the first INIT after it): a cookie
// made just before a change is still accepted after it, while its lifetime lasts; after a second
// change its secret is gone (refused as forged, not reported stale).
TEST(EnginePackets, CookieSecretChangesAndTheLastOneStillCounts) {
    Config c = Peer::default_config();
    c.cookie_lifetime = 1'000'000;
    Peer p(c);
    cookie_for_init(p, p.my_tag); // the first secret starts its life
    p.now += 900'000;
    auto [before, before_tag] = cookie_for_init(p, p.my_tag); // 0.1 s before the change
    p.now += 200'000;
    cookie_for_init(p, p.my_tag + 1); // the change: a new secret
    p.send_chunks({{kCookieEcho, 0, before}}, before_tag);
    EXPECT_EQ(p.ep->stats().bad_cookie, 0u);
    EXPECT_EQ(p.ep->association_count(), 1u) << "a valid cookie from before the change was refused";

    Peer q(c);
    auto [old_cookie, old_tag] = cookie_for_init(q, q.my_tag);
    for (uint32_t change = 1; change <= 2; ++change) { // two changes of q's secret
        q.now += 1'100'000;
        cookie_for_init(q, q.my_tag + change);
    }
    const size_t mark = q.out.size();
    q.send_chunks({{kCookieEcho, 0, old_cookie}}, old_tag);
    EXPECT_EQ(q.ep->stats().bad_cookie, 1u) << "a cookie of a secret two changes ago verified";
    EXPECT_TRUE(q.chunks_since(mark).empty()) << "no Stale Cookie error for a cookie whose secret is gone";
    EXPECT_EQ(q.ep->association_count(), 0u);
}

TEST(EnginePackets, HeartbeatIsAnswered) {
    Peer p;
    p.handshake();
    size_t mark = p.out.size();
    Bytes info = {0, 1, 0, 9, 'p', 'i', 'n', 'g', '!'};
    p.send_chunks({{kHeartbeat, 0, info}});
    auto r = p.chunks_since(mark);
    const ChunkSpec* a = get_chunk(r, kHeartbeatAck);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(std::get<2>(*a), info);
}

TEST(EnginePackets, DataWithoutUserDataAborts) {
    Peer p;
    p.handshake();
    size_t mark = p.out.size();
    p.send_chunks({{kData, 3, data_value(p.my_tsn, 0, 0, {})}});
    auto r = p.chunks_since(mark);
    const ChunkSpec* a = get_chunk(r, kAbort);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(get16(std::get<2>(*a).data()), kNoUserData);
    EXPECT_EQ(p.events.back().type, EventType::assoc_lost);
    EXPECT_EQ(p.ep->association_count(), 0u);
}

TEST(EnginePackets, PeerAbortEndsTheAssociation) {
    Peer p;
    p.handshake();
    Bytes cause = {0, 12, 0, 7, 'b', 'y', 'e', 0};
    p.send_chunks({{kAbort, 0, cause}});
    ASSERT_EQ(p.events.back().type, EventType::assoc_lost);
    EXPECT_EQ(p.events.back().reason, "the peer sent ABORT: User-Initiated Abort: \"bye\"");
    EXPECT_EQ(p.ep->association_count(), 0u);
}

// ---- the engine as the sender; the scripted peer acknowledges by hand ----------------------------

namespace {

struct SentData {
    uint32_t tsn;
    uint16_t len;
};

// DATA chunks in the packets sent since `mark`.
std::vector<SentData> data_since(const Peer& p, size_t mark) {
    std::vector<SentData> r;
    for (auto& c : p.chunks_since(mark))
        if (std::get<0>(c) == kData) {
            const Bytes& v = std::get<2>(c);
            r.push_back({get32(v.data()), static_cast<uint16_t>(v.size() - 12)});
        }
    return r;
}

Bytes sack_value(uint32_t cum, uint32_t rwnd, std::vector<std::pair<uint16_t, uint16_t>> gaps = {}) {
    Bytes v(12 + 4 * gaps.size());
    put32(v.data(), cum);
    put32(v.data() + 4, rwnd);
    put16(v.data() + 8, static_cast<uint16_t>(gaps.size()));
    put16(v.data() + 10, 0);
    for (size_t i = 0; i < gaps.size(); ++i) {
        put16(v.data() + 12 + 4 * i, gaps[i].first);
        put16(v.data() + 14 + 4 * i, gaps[i].second);
    }
    return v;
}

// A handshake, then `count` messages of `len` bytes queued at the engine; returns the mark
// before they were sent.
size_t sender_setup(Peer& p, int count, size_t len) {
    p.handshake();
    size_t mark = p.out.size();
    Bytes m(len, 0x5a);
    iovec iov{m.data(), m.size()};
    for (int i = 0; i < count; ++i)
        EXPECT_EQ(p.ep->send(p.id, 0, &iov, 1, false, p.now), 0);
    p.collect();
    return mark;
}

} // namespace

TEST(EngineSender, InitialWindowAndMaxBurst) {
    Peer p;
    size_t mark = sender_setup(p, 10, 1000);
    auto sent = data_since(p, mark);
    // Initial cwnd 4380 (§7.2.1) would let 5 chunks of 1000 go; Max.Burst 4 stops at 4 packets.
    ASSERT_EQ(sent.size(), 4u);
    EXPECT_EQ(sent[0].tsn, p.their_tsn);
    EXPECT_EQ(sent[3].tsn, p.their_tsn + 3);
    auto i = p.ep->info(p.id);
    EXPECT_EQ(i->cwnd, 4380u);
    EXPECT_EQ(i->flight_size, 4000u);
}

TEST(EngineSender, SlowStartGrowsByAtMostOneMtuPerSack) {
    Peer p;
    sender_setup(p, 20, 1000);
    p.now += 10'000;
    size_t mark = p.out.size();
    p.send_chunks({{kSack, 0, sack_value(p.their_tsn + 1, 1 << 20)}}); // acks two chunks (2000 bytes)
    auto i = p.ep->info(p.id);
    EXPECT_EQ(i->cwnd, 4380u + 1472u); // min(bytes acked, MTU)
    EXPECT_EQ(i->srtt, 10'000);        // one RTT measured (the first chunk's)
    EXPECT_FALSE(data_since(p, mark).empty());
}

// Max.Burst (4 here), not cwnd, stops the sender after each SACK: the window still counts as in
// use, so slow start goes on (it stopped at one burst above the flight: 4380 + 1472).
TEST(EngineSender, SlowStartGoesOnWhenMaxBurstStopsTheSender) {
    Peer p;
    size_t mark = sender_setup(p, 60, 1000);
    for (int round = 0; round < 5; ++round) {
        auto sent = data_since(p, mark);
        ASSERT_EQ(sent.size(), 4u) << "round " << round;
        mark = p.out.size();
        p.now += 1'000;
        p.send_chunks({{kSack, 0, sack_value(sent.back().tsn, 1 << 20)}});
    }
    EXPECT_EQ(p.ep->info(p.id)->cwnd, 4380u + 5 * 1472u);
}

TEST(EngineSender, FastRetransmitOnTheThirdMissIndication) {
    Peer p;
    sender_setup(p, 10, 1000);
    uint32_t t0 = p.their_tsn;
    size_t mark = p.out.size();
    // TSN t0 missing, t0+1.. arriving: three SACKs with a growing gap block.
    p.send_chunks({{kSack, 0, sack_value(t0 - 1, 1 << 20, {{2, 2}})}});
    p.send_chunks({{kSack, 0, sack_value(t0 - 1, 1 << 20, {{2, 3}})}});
    for (auto& d : data_since(p, mark))
        EXPECT_NE(d.tsn, t0) << "retransmitted before the third miss indication";
    p.send_chunks({{kSack, 0, sack_value(t0 - 1, 1 << 20, {{2, 4}})}});
    auto sent = data_since(p, mark);
    ASSERT_FALSE(sent.empty());
    bool again = false;
    for (auto& d : sent)
        again |= d.tsn == t0;
    EXPECT_TRUE(again);
    auto i = p.ep->info(p.id);
    EXPECT_EQ(i->fast_retransmits, 1u);
    EXPECT_EQ(i->ssthresh, 4u * 1472u); // max(cwnd/2, 4 MTU)
    EXPECT_EQ(i->cwnd, 4u * 1472u);
    EXPECT_EQ(i->t3_expiries, 0u);
}

TEST(EngineSender, T3ExpiryRetransmitsOnePacketAndBacksOff) {
    Peer p;
    sender_setup(p, 10, 1000);
    auto before = p.ep->info(p.id);
    EXPECT_EQ(before->rto, p.cfg.rto_initial);
    size_t mark = p.out.size();
    p.advance(p.cfg.rto_initial - 1);
    EXPECT_TRUE(data_since(p, mark).empty());
    p.advance(1);
    auto sent = data_since(p, mark);
    ASSERT_EQ(sent.size(), 1u); // cwnd is one MTU: one packet, the lowest TSN
    EXPECT_EQ(sent[0].tsn, p.their_tsn);
    auto i = p.ep->info(p.id);
    EXPECT_EQ(i->t3_expiries, 1u);
    EXPECT_EQ(i->cwnd, 1472u);
    EXPECT_EQ(i->ssthresh, 4u * 1472u);
    EXPECT_EQ(i->rto, 2 * p.cfg.rto_initial);
    // A SACK for everything sent restores progress.
    p.send_chunks({{kSack, 0, sack_value(p.their_tsn + 3, 1 << 20)}});
    EXPECT_EQ(p.ep->info(p.id)->send_queued, 6000u);
}

TEST(EngineSender, AssociationLostAfterMaxRetransmits) {
    Config c = Peer::default_config();
    c.max_retransmits = 2;
    Peer p(c);
    sender_setup(p, 1, 10);
    for (int k = 0; k < 10 && p.ep->association_count() == 1; ++k)
        p.advance(p.cfg.rto_max);
    ASSERT_EQ(p.ep->association_count(), 0u);
    EXPECT_EQ(p.events.back().type, EventType::assoc_lost);
    EXPECT_NE(p.events.back().reason.find("T3-rtx expired 3 times"), std::string::npos) << p.events.back().reason;
}

TEST(EngineSender, PeerWindowLimitsNewData) {
    Peer p;
    sender_setup(p, 1, 10);
    p.send_chunks({{kSack, 0, sack_value(p.their_tsn, 2500)}}); // window 2500
    size_t mark = p.out.size();
    Bytes m(1000, 1);
    iovec iov{m.data(), m.size()};
    for (int i = 0; i < 5; ++i)
        ASSERT_EQ(p.ep->send(p.id, 0, &iov, 1, false, p.now), 0);
    p.collect();
    EXPECT_EQ(data_since(p, mark).size(), 2u); // 2000 of 2500; a third would pass the window
}

TEST(EngineSender, SackOfUnsentTsnIsAProtocolViolation) {
    Peer p;
    sender_setup(p, 1, 10);
    size_t mark = p.out.size();
    p.send_chunks({{kSack, 0, sack_value(p.their_tsn + 5, 1 << 20)}});
    EXPECT_TRUE(has_chunk(p.chunks_since(mark), kAbort));
    EXPECT_EQ(p.events.back().type, EventType::assoc_lost);
}

TEST(EnginePackets, SackFullPacketsCountsBytes) {
    Config c = Peer::default_config();
    c.sack_full_packets = true;
    Peer p(c);
    p.handshake();
    size_t mark = p.out.size();
    // Two small packets: no SACK yet (together far below one full packet).
    p.send_chunks({{kData, 3, data_value(p.my_tsn, 0, 0, {1})}});
    p.send_chunks({{kData, 3, data_value(p.my_tsn + 1, 0, 1, {2})}});
    EXPECT_FALSE(has_chunk(p.chunks_since(mark), kSack));
    // A full-sized one makes the bytes since the last SACK exceed a path MTU: SACK at once.
    Bytes big(1400, 3);
    p.send_chunks({{kData, 3, data_value(p.my_tsn + 2, 0, 2, big)}});
    auto r = p.chunks_since(mark);
    ASSERT_TRUE(has_chunk(r, kSack));
    Bytes keep;
    EXPECT_EQ(sack_of(*get_chunk(r, kSack), keep).cum_tsn, p.my_tsn + 2);
}

// §6.6: a gap holds back only its own stream. TSN +0 (stream 0, SSN 0) is missing; the others
// arrive: stream 1's message and an unordered one go out at once, stream 0's SSN 1 waits for
// SSN 0, a fragmented stream 2 message goes out when whole.
TEST(EnginePackets, AGapHoldsBackOnlyItsStream) {
    Peer p;
    p.handshake();
    uint32_t t = p.my_tsn;
    p.send_chunks({{kData, 3, data_value(t + 1, 1, 0, {11})}});
    EXPECT_EQ(data_payloads(p), (std::vector<Bytes>{{11}}));
    p.send_chunks({{kData, 3, data_value(t + 2, 0, 1, {2})}}); // stream 0, SSN 1: waits
    p.send_chunks({{kData, 3 | kDataUnordered, data_value(t + 3, 0, 0, {99})}});
    EXPECT_EQ(data_payloads(p), (std::vector<Bytes>{{11}, {99}}));
    p.send_chunks({{kData, kDataBegin, data_value(t + 5, 2, 0, {7})}}); // t + 4 missing too
    p.send_chunks({{kData, kDataEnd, data_value(t + 6, 2, 0, {8})}});
    EXPECT_EQ(data_payloads(p), (std::vector<Bytes>{{11}, {99}, {7, 8}}));
    // The stream 0 gap fills: SSN 0 then SSN 1, in order; the rest is not delivered twice.
    size_t mark = p.out.size();
    p.send_chunks({{kData, 3, data_value(t, 0, 0, {1})}});
    EXPECT_EQ(data_payloads(p), (std::vector<Bytes>{{11}, {99}, {7, 8}, {1}, {2}}));
    Bytes keep;
    SackChunk s = sack_of(*get_chunk(p.chunks_since(mark), kSack), keep);
    EXPECT_EQ(s.cum_tsn, t + 3);
    ASSERT_EQ(s.gap_count, 1);
    EXPECT_EQ(s.gap_start(0), 2);
    EXPECT_EQ(s.gap_end(0), 3);
    p.send_chunks({{kData, 3, data_value(t + 4, 3, 0, {4})}});
    EXPECT_EQ(data_payloads(p), (std::vector<Bytes>{{11}, {99}, {7, 8}, {1}, {2}, {4}}));
    // Retransmitted copies of early-delivered chunks are duplicates, not new messages.
    p.send_chunks({{kData, 3, data_value(t + 1, 1, 0, {11})}});
    EXPECT_EQ(data_payloads(p).size(), 6u);
    EXPECT_EQ(p.ep->info(p.id)->recv_held, 0u);
}

TEST(EngineSender, GapAckedChunksAreResentWhenThePeerReneges) {
    Config c = Peer::default_config();
    c.heartbeat_interval = 0; // no heartbeat timer: the last check is that T3 stopped
    Peer p(c);
    sender_setup(p, 3, 1000);
    uint32_t t0 = p.their_tsn;
    // The peer gap-acknowledges all three but never the cumulative TSN (it reneged on them).
    p.send_chunks({{kSack, 0, sack_value(t0 - 1, 1 << 20, {{1, 3}})}});
    EXPECT_EQ(p.ep->info(p.id)->flight_size, 0u);
    ASSERT_TRUE(p.ep->next_deadline()); // T3 still runs
    size_t mark = p.out.size();
    p.advance(p.ep->info(p.id)->rto);
    auto sent = data_since(p, mark);
    ASSERT_FALSE(sent.empty());
    EXPECT_EQ(sent[0].tsn, t0);
    p.send_chunks({{kSack, 0, sack_value(t0 + 2, 1 << 20)}});
    EXPECT_EQ(p.ep->info(p.id)->send_queued, 0u);
    // T3 stopped: at most one early wake-up is left (next_deadline may be early), then none.
    if (auto d = p.ep->next_deadline())
        p.advance(*d - p.now);
    EXPECT_FALSE(p.ep->next_deadline());
}
