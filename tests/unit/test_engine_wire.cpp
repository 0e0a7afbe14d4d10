// SPDX-License-Identifier: BSD-3-Clause
// The engine's CRC32c (RFC 3720 B.4 vectors, both implementations) and its wire format:
// valid packets round-trip through the builder and the readers; malformed ones (truncated, bad
// lengths, bad checksum) are refused with their documented reason; unknown chunk and parameter
// types follow their upper two bits (RFC 9260 §3.2, §3.2.1).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sctp/cookie.hpp"
#include "sctp/crc32c.hpp"
#include "sctp/wire.hpp"

using namespace sctpm::sctp;
using namespace sctpm::sctp::wire;

namespace {

std::vector<uint8_t> bytes(size_t n, uint8_t v) { return std::vector<uint8_t>(n, v); }

// A packet with the given chunks (each: type, flags, value), checksum set.
std::vector<uint8_t> packet(uint32_t vtag, std::vector<std::tuple<uint8_t, uint8_t, std::vector<uint8_t>>> chunks) {
    std::vector<uint8_t> buf(4096);
    PacketBuilder b(buf.data(), buf.size());
    b.header(5000, 5001, vtag);
    for (auto& [type, flags, value] : chunks) {
        b.open_chunk(type, flags);
        b.put_bytes(value.data(), value.size());
        b.close_chunk();
    }
    buf.resize(b.finish());
    return buf;
}

} // namespace

TEST(EngineCrc32c, Rfc3720Vectors) {
    struct V {
        std::vector<uint8_t> in;
        uint32_t crc;
    };
    std::vector<uint8_t> inc(32), dec(32);
    for (int i = 0; i < 32; ++i) {
        inc[i] = static_cast<uint8_t>(i);
        dec[i] = static_cast<uint8_t>(31 - i);
    }
    // B.4: an iSCSI SCSI Read (10) command PDU.
    std::vector<uint8_t> pdu = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    std::vector<V> vs = {{bytes(32, 0), 0x8a9136aa},
                         {bytes(32, 0xff), 0x62a8ab43},
                         {inc, 0x46dd794e},
                         {dec, 0x113fdb5c},
                         {pdu, 0xd9963a56},
                         {{'1', '2', '3', '4', '5', '6', '7', '8', '9'}, 0xe3069283}};
    for (auto& v : vs) {
        EXPECT_EQ(crc32c_table(v.in.data(), v.in.size()), v.crc);
        EXPECT_EQ(crc32c(v.in.data(), v.in.size()), v.crc);
        if (crc32c_hw_available()) {
            EXPECT_EQ(crc32c_hw(v.in.data(), v.in.size()), v.crc);
        }
    }
}

TEST(EngineCrc32c, HardwareMatchesTableOnEveryLength) {
    // Lengths around the 3-way blocks (3 x 480 bytes) included.
    std::vector<uint8_t> d(5000);
    for (size_t i = 0; i < d.size(); ++i)
        d[i] = static_cast<uint8_t>(i * 37 + 11 + (i >> 8));
    for (size_t off = 0; off < 8; ++off)
        for (size_t n = 0; n + off <= d.size(); n += (n < 300 || (n > 1400 && n < 1500) ? 1 : 97))
            EXPECT_EQ(crc32c(d.data() + off, n), crc32c_table(d.data() + off, n)) << off << " " << n;
    // And whole packets: the checksum over a packet with its field zeroed.
    for (size_t n : {12u, 13u, 1472u, 1473u, 2892u, 4332u, 4999u}) {
        std::vector<uint8_t> z(d.begin(), d.begin() + n);
        std::memset(z.data() + 8, 0, 4);
        EXPECT_EQ(sctp_checksum(d.data(), n), crc32c_table(z.data(), n)) << n;
    }
}

TEST(EngineCrc32c, PacketChecksumIsLittleEndianOverZeroedField) {
    auto p = packet(0x11223344, {{kCookieAck, 0, {}}});
    ASSERT_EQ(p.size(), 16u);
    EXPECT_TRUE(sctp_checksum_ok(p.data(), p.size()));
    std::vector<uint8_t> z = p;
    std::memset(z.data() + 8, 0, 4);
    uint32_t c = crc32c(z.data(), z.size());
    EXPECT_EQ(p[8], static_cast<uint8_t>(c));
    EXPECT_EQ(p[11], static_cast<uint8_t>(c >> 24));
    p[15] ^= 1;
    EXPECT_FALSE(sctp_checksum_ok(p.data(), p.size()));
}

TEST(EngineWire, CheckPacketAcceptsValidAndTilesChunks) {
    auto p = packet(7, {{kCookieAck, 0, {}}, {kData, 3, std::vector<uint8_t>(13, 1)}, {kShutdownAck, 0, {}}});
    CommonHeader h;
    ASSERT_EQ(check_packet(p.data(), p.size(), true, h), nullptr);
    EXPECT_EQ(h.src_port, 5000);
    EXPECT_EQ(h.dst_port, 5001);
    EXPECT_EQ(h.vtag, 7u);
    ChunkIter it(p.data(), p.size());
    Chunk c;
    std::vector<uint8_t> types;
    while (it.next(c))
        types.push_back(c.type);
    EXPECT_EQ(types, (std::vector<uint8_t>{kCookieAck, kData, kShutdownAck}));
    // The last chunk's padding may be missing.
    auto q = packet(7, {{kData, 3, std::vector<uint8_t>(13, 1)}});
    ASSERT_EQ(q.size(), 12u + 20u); // 17-byte chunk + 3 bytes of padding
    q.resize(q.size() - 3);
    sctp_set_checksum(q.data(), q.size());
    EXPECT_EQ(check_packet(q.data(), q.size(), true, h), nullptr);
}

TEST(EngineWire, CheckPacketRefusesMalformed) {
    CommonHeader h;
    auto good = packet(7, {{kCookieAck, 0, {}}, {kShutdownAck, 0, {}}});
    EXPECT_STREQ(check_packet(good.data(), 11, false, h), "packet shorter than the 12-byte common header");
    EXPECT_STREQ(check_packet(good.data(), 12, false, h), "packet without a chunk");
    auto bad = good;
    bad[13] ^= 0xff; // a chunk's flags
    EXPECT_STREQ(check_packet(bad.data(), bad.size(), true, h), "bad CRC32c checksum");
    bad = good;
    put16(bad.data() + 14, 3); // first chunk length 3
    EXPECT_STREQ(check_packet(bad.data(), bad.size(), false, h), "chunk length below 4");
    bad = good;
    put16(bad.data() + 18, 200); // second chunk runs past the end
    EXPECT_STREQ(check_packet(bad.data(), bad.size(), false, h), "chunk length past the end of the packet");
    bad = good;
    bad.push_back(0);
    bad.push_back(0);
    EXPECT_STREQ(check_packet(bad.data(), bad.size(), false, h),
                 "trailing bytes after the last chunk (shorter than a chunk header)");
    // Every truncation of a valid packet is either refused or tiles (never read past the end).
    auto big = packet(9, {{kData, 3, std::vector<uint8_t>(21, 2)}, {kSack, 0, std::vector<uint8_t>(12, 0)}});
    for (size_t n = 0; n < big.size(); ++n) {
        std::vector<uint8_t> t(big.begin(), big.begin() + n);
        const char* why = check_packet(t.data(), t.size(), false, h);
        if (why == nullptr) {
            ChunkIter it(t.data(), t.size());
            Chunk c;
            while (it.next(c))
                EXPECT_LE(c.value + c.value_len, t.data() + t.size());
        }
    }
}

TEST(EngineWire, DataRoundTripAndLimits) {
    std::vector<uint8_t> buf(256);
    PacketBuilder b(buf.data(), buf.size());
    b.header(1, 2, 3);
    const uint8_t payload[5] = {1, 2, 3, 4, 5};
    ASSERT_TRUE(b.put_data(kDataBegin | kDataEnd | kDataUnordered, 0xfffffffe, 9, 77, 0xabcdef01, payload, 5));
    size_t n = b.finish();
    ASSERT_EQ(n, 12u + 24u);
    CommonHeader h;
    ASSERT_EQ(check_packet(buf.data(), n, true, h), nullptr);
    ChunkIter it(buf.data(), n);
    Chunk c;
    ASSERT_TRUE(it.next(c));
    DataChunk d;
    ASSERT_EQ(parse_data(c, d), nullptr);
    EXPECT_EQ(d.tsn, 0xfffffffeu);
    EXPECT_EQ(d.stream, 9);
    EXPECT_EQ(d.ssn, 77);
    EXPECT_EQ(d.ppid, 0xabcdef01u);
    EXPECT_TRUE(d.begin() && d.end() && d.unordered());
    ASSERT_EQ(d.len, 5u);
    EXPECT_EQ(std::memcmp(d.payload, payload, 5), 0);

    Chunk shortc{kData, 0, 15, buf.data(), 11};
    EXPECT_STREQ(parse_data(shortc, d), "DATA chunk shorter than its 16-byte header");
    Chunk empty{kData, 3, 16, buf.data(), 12};
    EXPECT_EQ(parse_data(empty, d), kNoUserDataReason);

    // The builder never writes past its buffer.
    PacketBuilder small(buf.data(), 20);
    small.header(1, 2, 3);
    EXPECT_FALSE(small.put_data(3, 1, 0, 0, 0, payload, 5));
    small.open_chunk(kAbort, 0);
    small.put_tlv(kUserInitiatedAbort, payload, 5);
    EXPECT_TRUE(small.overflowed());
    EXPECT_EQ(small.finish(), 0u);
}

TEST(EngineWire, SackRoundTripAndLengthCheck) {
    std::vector<uint8_t> v(12 + 8 + 4);
    put32(v.data(), 1000);
    put32(v.data() + 4, 65536);
    put16(v.data() + 8, 2);
    put16(v.data() + 10, 1);
    put16(v.data() + 12, 2);
    put16(v.data() + 14, 3);
    put16(v.data() + 16, 5);
    put16(v.data() + 18, 9);
    put32(v.data() + 20, 998);
    auto p = packet(1, {{kSack, 0, v}});
    ChunkIter it(p.data(), p.size());
    Chunk c;
    ASSERT_TRUE(it.next(c));
    SackChunk s;
    ASSERT_EQ(parse_sack(c, s), nullptr);
    EXPECT_EQ(s.cum_tsn, 1000u);
    EXPECT_EQ(s.a_rwnd, 65536u);
    ASSERT_EQ(s.gap_count, 2);
    EXPECT_EQ(s.gap_start(0), 2);
    EXPECT_EQ(s.gap_end(0), 3);
    EXPECT_EQ(s.gap_start(1), 5);
    EXPECT_EQ(s.gap_end(1), 9);
    ASSERT_EQ(s.dup_count, 1);
    EXPECT_EQ(s.dup(0), 998u);
    put16(v.data() + 10, 2); // claims two duplicates, carries one
    auto q = packet(1, {{kSack, 0, v}});
    ChunkIter it2(q.data(), q.size());
    ASSERT_TRUE(it2.next(c));
    EXPECT_STREQ(parse_sack(c, s), "SACK length does not match its gap and duplicate counts");
}

TEST(EngineWire, InitParametersFollowTheirUpperBits) {
    auto init_with = [](std::vector<std::pair<uint16_t, std::vector<uint8_t>>> params) {
        std::vector<uint8_t> buf(2048);
        PacketBuilder b(buf.data(), buf.size());
        b.header(1, 2, 0);
        b.open_chunk(kInit, 0);
        b.put32(0x01020304);
        b.put32(100000);
        b.put16(10);
        b.put16(20);
        b.put32(42);
        for (auto& [t, v] : params)
            b.put_tlv(t, v.data(), v.size());
        b.close_chunk();
        buf.resize(b.finish());
        return buf;
    };
    std::vector<std::vector<uint8_t>> keep; // the spans parse_init returns point into these
    auto parse = [&keep](std::vector<uint8_t> p, InitChunk& in) {
        keep.push_back(std::move(p));
        const std::vector<uint8_t>& pk = keep.back();
        CommonHeader h;
        EXPECT_EQ(check_packet(pk.data(), pk.size(), true, h), nullptr);
        ChunkIter it(pk.data(), pk.size());
        Chunk c;
        EXPECT_TRUE(it.next(c));
        return parse_init(c, in);
    };
    InitChunk in;
    std::vector<uint8_t> cookie(40, 9), pres(4, 0);
    put32(pres.data(), 5000);
    auto p = init_with({{kCookiePreservative, pres}, {kStateCookie, cookie}, {kSupportedAddressTypes, {0, 5}}});
    ASSERT_EQ(parse(p, in), nullptr);
    EXPECT_EQ(in.tag, 0x01020304u);
    EXPECT_EQ(in.a_rwnd, 100000u);
    EXPECT_EQ(in.outbound_streams, 10);
    EXPECT_EQ(in.inbound_streams, 20);
    EXPECT_EQ(in.initial_tsn, 42u);
    EXPECT_EQ(in.cookie_preservative, 5000u);
    ASSERT_EQ(in.cookie.n, 40u);
    EXPECT_EQ(in.cookie.p[0], 9);

    // 10: skip silently; 11: skip and report; 01: stop and report; 00: stop.
    ASSERT_EQ(parse(init_with({{0x8123, {1}}, {kStateCookie, cookie}}), in), nullptr);
    EXPECT_EQ(in.unrecognized_count, 0u);
    EXPECT_FALSE(in.stopped);
    EXPECT_EQ(in.cookie.n, 40u);
    ASSERT_EQ(parse(init_with({{0xC123, {1, 2}}, {kStateCookie, cookie}}), in), nullptr);
    ASSERT_EQ(in.unrecognized_count, 1u);
    EXPECT_EQ(get16(in.unrecognized[0].p), 0xC123);
    EXPECT_EQ(in.unrecognized[0].n, 6u);
    EXPECT_EQ(in.cookie.n, 40u);
    ASSERT_EQ(parse(init_with({{0x4123, {1}}, {kStateCookie, cookie}}), in), nullptr);
    EXPECT_EQ(in.unrecognized_count, 1u);
    EXPECT_TRUE(in.stopped);
    EXPECT_EQ(in.cookie.p, nullptr); // not processed: it came after the stop
    ASSERT_EQ(parse(init_with({{0x0123, {1}}, {kStateCookie, cookie}}), in), nullptr);
    EXPECT_EQ(in.unrecognized_count, 0u);
    EXPECT_TRUE(in.stopped);
    EXPECT_EQ(in.cookie.p, nullptr);

    // IPv4 Address parameters (§5.1.2): the addresses, in order.
    ASSERT_EQ(parse(init_with({{kIPv4Address, {10, 0, 0, 2}}, {kIPv4Address, {10, 1, 0, 2}}}), in), nullptr);
    ASSERT_EQ(in.ipv4_addresses, 2u);
    EXPECT_EQ(std::memcmp(in.ipv4[0], "\x0a\x00\x00\x02", 4), 0);
    EXPECT_EQ(std::memcmp(in.ipv4[1], "\x0a\x01\x00\x02", 4), 0);

    // Malformed parameters.
    auto bad = init_with({{kStateCookie, cookie}});
    put16(bad.data() + 12 + 20 + 2, 2); // parameter length 2
    sctp_set_checksum(bad.data(), bad.size());
    EXPECT_STREQ(parse(bad, in), "parameter length below 4");
    bad = init_with({{kStateCookie, cookie}});
    put16(bad.data() + 12 + 20 + 2, 400);
    sctp_set_checksum(bad.data(), bad.size());
    EXPECT_STREQ(parse(bad, in), "parameter length past the end of its chunk");
    EXPECT_STREQ(parse(init_with({{kIPv4Address, {1, 2, 3}}}), in), "IPv4 Address parameter not 8 bytes long");
    Chunk c{kInit, 0, 19, p.data(), 15};
    EXPECT_STREQ(parse_init(c, in), "INIT/INIT-ACK shorter than its 20-byte fixed part");
}

TEST(EngineWire, UnknownChunkActions) {
    EXPECT_EQ(unknown_chunk_action(0x3f), UnknownAction::stop);
    EXPECT_EQ(unknown_chunk_action(0x7f), UnknownAction::stop_report);
    EXPECT_EQ(unknown_chunk_action(0xbf), UnknownAction::skip);
    EXPECT_EQ(unknown_chunk_action(0xff), UnknownAction::skip_report);
    EXPECT_EQ(unknown_param_action(0x0001), UnknownAction::stop);
    EXPECT_EQ(unknown_param_action(0x4001), UnknownAction::stop_report);
    EXPECT_EQ(unknown_param_action(0x8001), UnknownAction::skip);
    EXPECT_EQ(unknown_param_action(0xc001), UnknownAction::skip_report);
}

TEST(EngineWire, CausesAreDescribed) {
    std::vector<uint8_t> buf(256);
    PacketBuilder b(buf.data(), buf.size());
    b.header(1, 2, 3);
    b.open_chunk(kAbort, 0);
    b.put_tlv(kUserInitiatedAbort, "bye", 3);
    b.put_tlv(kProtocolViolation, nullptr, 0);
    b.put_tlv(999, "x", 1);
    b.close_chunk();
    size_t n = b.finish();
    ChunkIter it(buf.data(), n);
    Chunk c;
    ASSERT_TRUE(it.next(c));
    EXPECT_EQ(describe_causes(c.value, c.value_len), "User-Initiated Abort: \"bye\"; Protocol Violation; cause 999");
    uint8_t truncated[6] = {0, 12, 0, 9, 'a', 'b'};
    EXPECT_EQ(describe_causes(truncated, sizeof truncated), "error cause length past the end of its chunk");
    Span info;
    Chunk hb{kHeartbeat, 0, 4, buf.data(), 0};
    EXPECT_STREQ(parse_heartbeat(hb, info), "HEARTBEAT without its Heartbeat Info parameter");
}

TEST(EngineCookie, SignedAndChecked) {
    uint8_t key[kCookieKeySize];
    for (size_t i = 0; i < sizeof key; ++i)
        key[i] = static_cast<uint8_t>(i);
    CookieData c;
    c.created = 123456789;
    c.lifetime = 60'000'000;
    c.local_tag = 1;
    c.peer_tag = 2;
    c.local_tie_tag = 3;
    c.peer_tie_tag = 4;
    c.local_tsn = 5;
    c.peer_tsn = 6;
    c.peer_rwnd = 7;
    c.outbound_streams = 8;
    c.inbound_streams = 9;
    c.local_port = 10;
    c.peer_port = 11;
    c.addr_count = 2;
    const uint8_t a1[4] = {10, 1, 0, 2};
    std::memcpy(c.addrs[1], a1, 4);
    uint8_t out[kCookieSize];
    write_cookie(c, key, out);
    CookieData r;
    ASSERT_EQ(read_cookie(out, sizeof out, key, r), nullptr);
    EXPECT_EQ(r.created, c.created);
    EXPECT_EQ(r.lifetime, c.lifetime);
    EXPECT_EQ(r.peer_tie_tag, 4u);
    EXPECT_EQ(r.peer_port, 11);
    EXPECT_EQ(r.addr_count, 2);
    EXPECT_EQ(std::memcmp(r.addrs[1], a1, 4), 0); // the INIT's addresses ride in the cookie
    out[30] ^= 1;
    EXPECT_STREQ(read_cookie(out, sizeof out, key, r), "State Cookie signature mismatch");
    EXPECT_STREQ(read_cookie(out, sizeof out - 1, key, r), "State Cookie of the wrong size");
}
