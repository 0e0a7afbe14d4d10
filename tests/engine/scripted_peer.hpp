// SPDX-License-Identifier: BSD-3-Clause
// A scripted SCTP peer for engine tests: it writes packets by hand with the wire builder, hands
// them to one Endpoint, and collects what the Endpoint sends back (split into packets), so a
// test can check the engine's answer to any packet, valid or not.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include "sctp/crc32c.hpp"
#include "sctp/engine.hpp"
#include "sctp/wire.hpp"

namespace scripted {

using namespace sctpm::sctp;
using namespace sctpm::sctp::wire;
using Bytes = std::vector<uint8_t>;
using ChunkSpec = std::tuple<uint8_t, uint8_t, Bytes>; // type, flags, value

inline Address v4(uint8_t last, uint16_t port) {
    Address a;
    a.family = AF_INET;
    a.port = port;
    a.ip[0] = 10;
    a.ip[3] = last;
    return a;
}

inline Bytes build(uint16_t src, uint16_t dst, uint32_t vtag, const std::vector<ChunkSpec>& chunks) {
    Bytes buf(65536);
    PacketBuilder b(buf.data(), buf.size());
    b.header(src, dst, vtag);
    for (auto& [type, flags, value] : chunks) {
        b.open_chunk(type, flags);
        b.put_bytes(value.data(), value.size());
        b.close_chunk();
    }
    buf.resize(b.finish());
    return buf;
}

inline Bytes data_value(uint32_t tsn, uint16_t stream, uint16_t ssn, const Bytes& payload, uint32_t ppid = 0) {
    Bytes v(12 + payload.size());
    put32(v.data(), tsn);
    put16(v.data() + 4, stream);
    put16(v.data() + 6, ssn);
    put32(v.data() + 8, ppid);
    std::copy(payload.begin(), payload.end(), v.begin() + 12);
    return v;
}

inline Bytes init_value(uint32_t tag, uint32_t rwnd, uint16_t os, uint16_t mis, uint32_t tsn,
                        const std::vector<std::pair<uint16_t, Bytes>>& params = {}) {
    Bytes v(16);
    put32(v.data(), tag);
    put32(v.data() + 4, rwnd);
    put16(v.data() + 8, os);
    put16(v.data() + 10, mis);
    put32(v.data() + 12, tsn);
    for (auto& [t, pv] : params) {
        size_t at = v.size();
        v.resize(at + pad4(4 + pv.size()));
        put16(v.data() + at, t);
        put16(v.data() + at + 2, static_cast<uint16_t>(4 + pv.size()));
        std::copy(pv.begin(), pv.end(), v.begin() + at + 4);
    }
    return v;
}

struct Peer {
    Config cfg;
    std::unique_ptr<Endpoint> ep;
    Address me = v4(2, 9002), them = v4(1, 9001);
    uint16_t my_port = 6000;
    uint32_t my_tag = 0xA1B2C3D4, their_tag = 0;
    uint32_t my_tsn = 1000; // next TSN this peer sends
    uint32_t their_tsn = 0; // the endpoint's initial TSN
    AssocId id = kNoAssoc;
    Time now = 1'000'000;
    std::vector<Bytes> out; // packets the endpoint sent, in order
    std::vector<Event> events;
    std::vector<Bytes> payloads;

    explicit Peer(Config c = default_config()) : cfg(c), ep(std::make_unique<Endpoint>(c, seeded_random(42))) {}

    static Config default_config() {
        Config c;
        c.local_port = 5000;
        return c;
    }

    void collect() {
        Bytes buf(65536);
        while (auto t = ep->poll_transmit(buf.data(), buf.size(), 64, now)) {
            EXPECT_EQ(t->to, me);
            size_t off = 0;
            for (size_t k = 0; k < t->count; ++k) {
                size_t len = k + 1 < t->count ? t->segment_size : t->bytes - off;
                out.emplace_back(buf.begin() + off, buf.begin() + off + len);
                off += len;
            }
        }
        Event ev;
        while (ep->poll_event(ev)) {
            payloads.emplace_back(ev.data.begin(), ev.data.end());
            Event copy = ev;
            copy.data = {};
            events.push_back(copy);
        }
    }
    void send(const Bytes& p) {
        ep->receive(me, them, p.data(), p.size(), now);
        ep->end_of_batch(now);
        collect();
    }
    void send_chunks(const std::vector<ChunkSpec>& chunks, std::optional<uint32_t> vtag = std::nullopt) {
        send(build(my_port, cfg.local_port, vtag ? *vtag : their_tag, chunks));
    }
    void advance(Time dt) {
        now += dt;
        if (auto d = ep->next_deadline(); d && *d <= now)
            ep->handle_timeout(now);
        collect();
    }

    // The chunks of the packets sent since `from` (type, flags, value copy), checked first.
    std::vector<ChunkSpec> chunks_since(size_t from, uint32_t* vtag = nullptr) const {
        std::vector<ChunkSpec> r;
        for (size_t i = from; i < out.size(); ++i) {
            CommonHeader h;
            EXPECT_EQ(check_packet(out[i].data(), out[i].size(), true, h), nullptr);
            EXPECT_EQ(h.dst_port, my_port);
            if (vtag)
                *vtag = h.vtag;
            ChunkIter it(out[i].data(), out[i].size());
            Chunk c;
            while (it.next(c))
                r.emplace_back(c.type, c.flags, Bytes(c.value, c.value + c.value_len));
        }
        return r;
    }

    // INIT -> INIT-ACK -> COOKIE-ECHO -> COOKIE-ACK, checking each answer.
    void handshake(const std::vector<std::pair<uint16_t, Bytes>>& init_params = {}) {
        size_t mark = out.size();
        send(build(my_port, cfg.local_port, 0, {{kInit, 0, init_value(my_tag, 1 << 20, 16, 16, my_tsn, init_params)}}));
        uint32_t vtag = 0;
        auto r = chunks_since(mark, &vtag);
        ASSERT_EQ(r.size(), 1u);
        ASSERT_EQ(std::get<0>(r[0]), kInitAck);
        ASSERT_EQ(vtag, my_tag);
        Bytes v = std::get<2>(r[0]);
        Chunk c{kInitAck, 0, static_cast<uint16_t>(4 + v.size()), v.data(), v.size()};
        InitChunk ia;
        ASSERT_EQ(parse_init(c, ia), nullptr);
        ASSERT_NE(ia.cookie.p, nullptr);
        their_tag = ia.tag;
        their_tsn = ia.initial_tsn;
        init_ack = v;
        cookie.assign(ia.cookie.p, ia.cookie.p + ia.cookie.n);
        EXPECT_EQ(ep->association_count(), 0u); // no state before COOKIE-ECHO
        mark = out.size();
        send_chunks({{kCookieEcho, 0, cookie}});
        r = chunks_since(mark, &vtag);
        ASSERT_GE(r.size(), 1u);
        ASSERT_EQ(std::get<0>(r[0]), kCookieAck);
        ASSERT_EQ(vtag, my_tag);
        ASSERT_FALSE(events.empty());
        ASSERT_EQ(events.back().type, EventType::assoc_up);
        id = events.back().assoc;
    }
    Bytes cookie, init_ack;
};

} // namespace scripted
