// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for our own SCTP engine's packet parser (src/sctp/wire.cpp) and the
// Endpoint's handling of one packet.
//
// Input: one mode byte, then the bytes of an SCTP packet (common header first).
//   - always: the pure readers run on the bytes as they are (check_packet with and without the
//     checksum, every chunk through its parser, causes described, cookie read);
//   - mode bit 0: the bytes, with their checksum fixed, go to a fresh Endpoint (no association:
//     the INIT / COOKIE-ECHO / out-of-the-blue paths);
//   - mode bit 1: the same to an Endpoint with an established association with a scripted peer,
//     the verification tag replaced by the association's (the chunk handlers: DATA, SACK,
//     SHUTDOWN, ABORT, ...), then its timers run;
//   - mode bit 2: the packet is sent twice (duplicates, state after the first);
//   - mode bit 3: the bytes are a script instead of one packet: records of [ms u8][length u8]
//     [packet], each delivered `ms` milliseconds after the previous one (timers run in between),
//     so one input drives an association through a sequence of packets and timeouts;
//   - mode bit 4: the Endpoint runs CMT (the association has two paths);
//   - mode bit 5: the Endpoint is the RNIC's (one stream each way, the Adaptation Layer
//     Indication in its INIT-ACK and its State Cookie carrying the peer's).
// Invariants: no read outside the input (ASan), every span a parser returns lies inside its
// chunk, a packet accepted by check_packet is tiled by its chunks, and every packet the Endpoint
// sends back passes check_packet with a correct checksum. Deterministic: a seeded random source
// and a fixed clock.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sctp/cookie.hpp"
#include "sctp/crc32c.hpp"
#include "sctp/engine.hpp"
#include "sctp/wire.hpp"

using namespace sctpm::sctp;
using namespace sctpm::sctp::wire;

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "sctp_packet_fuzz invariant violated: %s\n", what);
        std::abort();
    }
}

void inside(const uint8_t* p, size_t n, const uint8_t* lo, const uint8_t* hi, const char* what) {
    check(p == nullptr ? n == 0 : (p >= lo && p + n <= hi), what);
}

void readers(const uint8_t* p, size_t n) {
    CommonHeader h;
    check_packet(p, n, true, h);
    if (check_packet(p, n, false, h) != nullptr)
        return;
    ChunkIter it(p, n);
    Chunk c;
    size_t covered = kCommonHeaderSize;
    while (it.next(c)) {
        const uint8_t* end = c.value + c.value_len;
        inside(c.value - kChunkHeaderSize, c.length, p, p + n, "chunk outside the packet");
        covered = static_cast<size_t>(end - p);
        switch (c.type) {
        case kData: {
            DataChunk d;
            if (!parse_data(c, d))
                inside(d.payload, d.len, c.value, end, "DATA payload outside its chunk");
            break;
        }
        case kInit:
        case kInitAck: {
            InitChunk in;
            if (!parse_init(c, in)) {
                inside(in.cookie.p, in.cookie.n, c.value, end, "cookie outside its chunk");
                for (size_t i = 0; i < in.unrecognized_count; ++i)
                    inside(in.unrecognized[i].p, in.unrecognized[i].n, c.value, end, "parameter outside its chunk");
                if (in.cookie.p) {
                    uint8_t key[kCookieKeySize] = {1, 2, 3};
                    CookieData cd;
                    read_cookie(in.cookie.p, in.cookie.n, key, cd);
                }
            }
            break;
        }
        case kSack: {
            SackChunk s;
            if (!parse_sack(c, s)) {
                for (size_t i = 0; i < s.gap_count; ++i)
                    check(s.gap_start(i) + s.gap_end(i) >= 0, "gap");
                for (size_t i = 0; i < s.dup_count; ++i)
                    (void)s.dup(i);
                inside(s.gaps, 4u * (s.gap_count + s.dup_count), c.value, end, "SACK blocks outside the chunk");
            }
            break;
        }
        case kHeartbeat:
        case kHeartbeatAck: {
            Span info;
            if (!parse_heartbeat(c, info))
                inside(info.p, info.n, c.value, end, "Heartbeat Info outside its chunk");
            break;
        }
        case kShutdown: {
            uint32_t cum;
            parse_shutdown(c, cum);
            break;
        }
        case kAbort:
        case kError: {
            std::string s = describe_causes(c.value, c.value_len);
            check(!s.empty(), "empty cause description");
            break;
        }
        default:
            break;
        }
    }
    check(covered <= n && n - covered < 4, "chunks do not tile the packet");
}

Config config(bool cmt, bool ddp) {
    Config c;
    c.local_port = 5000;
    c.rwnd = 64 * 1024;
    c.send_buffer = 64 * 1024;
    c.cmt = cmt; // the association is multihomed (established()): CMT's sender runs on both paths
    if (ddp) { // as iwarp/own_adaptation.cpp configures it
        c.outbound_streams = c.inbound_streams = 1;
        c.adaptation_indication = 1;
    }
    return c;
}

Address addr(uint8_t last, uint16_t port) {
    Address a;
    a.family = AF_INET;
    a.port = port;
    a.ip[0] = 10;
    a.ip[3] = last;
    return a;
}

// Drains an endpoint, checking every packet it sends.
void drain(Endpoint& ep, Time now, std::vector<uint8_t>* last = nullptr) {
    static std::vector<uint8_t> buf(65536);
    for (int guard = 0; guard < 1000; ++guard) {
        auto t = ep.poll_transmit(buf.data(), buf.size(), 64, now);
        if (!t)
            break;
        size_t off = 0;
        for (size_t k = 0; k < t->count; ++k) {
            size_t len = k + 1 < t->count ? t->segment_size : t->bytes - off;
            check(len <= ep.config().mtu, "packet larger than the MTU");
            CommonHeader h;
            check(check_packet(buf.data() + off, len, true, h) == nullptr, "the engine sent a malformed packet");
            if (last)
                last->assign(buf.begin() + off, buf.begin() + off + len);
            off += len;
        }
        check(off == t->bytes, "burst length");
    }
    Event ev;
    for (int guard = 0; guard < 100000 && ep.poll_event(ev); ++guard)
        ;
}

// An endpoint with one established association to a scripted peer (tag 0x01020304, TSN 1000)
// with two addresses (10.0.0.2, where its packets come from, and 10.1.0.2).
// Returns the association's tag (the vtag the peer's packets carry).
uint32_t established(Endpoint& ep, const Address& peer, Time now) {
    std::vector<uint8_t> buf(2048);
    PacketBuilder b(buf.data(), buf.size());
    b.header(6000, 5000, 0);
    b.open_chunk(kInit, 0);
    b.put32(0x01020304);
    b.put32(1 << 20);
    b.put16(4);
    b.put16(4);
    b.put32(1000);
    // Two addresses: the association is multihomed, so heartbeats, path states and failover run.
    const uint8_t a0[4] = {10, 0, 0, 2}, a1[4] = {10, 1, 0, 2};
    b.put_tlv(kIPv4Address, a0, 4);
    b.put_tlv(kIPv4Address, a1, 4);
    const uint8_t ddp[4] = {0, 0, 0, 1}; // RFC 5043's DDP announcement (kept in the cookie)
    b.put_tlv(kAdaptationLayerIndication, ddp, 4);
    b.close_chunk();
    size_t n = b.finish();
    ep.receive(peer, addr(1, 9001), buf.data(), n, now);
    std::vector<uint8_t> ack;
    drain(ep, now, &ack);
    check(!ack.empty(), "no INIT-ACK");
    ChunkIter it(ack.data(), ack.size());
    Chunk c;
    check(it.next(c) && c.type == kInitAck, "not an INIT-ACK");
    InitChunk ia;
    check(parse_init(c, ia) == nullptr && ia.cookie.p != nullptr, "bad INIT-ACK");
    check(ia.has_adaptation == ep.config().adaptation_indication.has_value(), "adaptation indication not as configured");
    PacketBuilder e(buf.data(), buf.size());
    e.header(6000, 5000, ia.tag);
    e.open_chunk(kCookieEcho, 0);
    e.put_bytes(ia.cookie.p, ia.cookie.n);
    e.close_chunk();
    n = e.finish();
    ep.receive(peer, addr(1, 9001), buf.data(), n, now);
    drain(ep, now);
    check(ep.association_count() == 1, "handshake failed");
    return ia.tag;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    std::vector<uint8_t> pkt(data + 1, data + size);
    readers(pkt.data(), pkt.size());
    if (!(mode & 3) || (!(mode & 8) && pkt.size() < kCommonHeaderSize))
        return 0;
    Endpoint ep(config((mode & 16) != 0, (mode & 32) != 0), seeded_random(1));
    Address peer = addr(2, 9002);
    Time now = 1'000'000;
    uint32_t tag = 0;
    if (mode & 2) {
        tag = established(ep, peer, now);
        // Queue a few messages so SACKs and retransmissions have data to work on.
        AssocId id = kNoAssoc;
        for (AssocId probe = 1; probe < 4 && id == kNoAssoc; ++probe)
            if (ep.info(probe))
                id = probe;
        uint8_t msg[3000] = {};
        iovec iov{msg, sizeof msg};
        if (id != kNoAssoc) {
            ep.send(id, 0, &iov, 1, false, now);
            iov.iov_len = 1;
            ep.send(id, 1, &iov, 1, false, now);
        }
        drain(ep, now);
    }
    auto deliver = [&](std::vector<uint8_t>& q) {
        if (q.size() < kCommonHeaderSize)
            return;
        if (mode & 2) {
            put16(q.data(), 6000);
            put16(q.data() + 2, 5000);
            put32(q.data() + 4, tag);
        }
        sctp_set_checksum(q.data(), q.size());
        ep.receive(peer, addr(1, 9001), q.data(), q.size(), now);
        ep.end_of_batch(now);
        drain(ep, now);
    };
    if (mode & 8) {
        const uint8_t* p = data + 1;
        size_t left = size - 1;
        while (left >= 2) {
            Time dt = static_cast<Time>(p[0]) * 1000;
            size_t len = std::min<size_t>(p[1], left - 2);
            std::vector<uint8_t> q(p + 2, p + 2 + len);
            p += 2 + len;
            left -= 2 + len;
            Time until = now + dt;
            int guard = 0;
            for (auto d = ep.next_deadline(); d && *d <= until && guard < 64; d = ep.next_deadline(), ++guard) {
                now = std::max(now, *d);
                ep.handle_timeout(now);
                drain(ep, now);
            }
            now = until;
            deliver(q);
        }
    } else {
        int times = (mode & 4) ? 2 : 1;
        for (int i = 0; i < times; ++i)
            deliver(pkt);
    }
    // Let the timers run a few times (retransmissions, delayed SACK, shutdown guard).
    for (int i = 0; i < 4; ++i) {
        auto d = ep.next_deadline();
        if (!d)
            break;
        now = std::max(now, *d);
        ep.handle_timeout(now);
        drain(ep, now);
    }
    return 0;
}
