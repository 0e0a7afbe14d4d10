// SPDX-License-Identifier: BSD-3-Clause
// Frame header codec and the per-stream fragment sequencer.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "frame.hpp"
#include "hello_auth.hpp"

using namespace sctpm;

namespace {

using Bytes = std::array<uint8_t, kFrameHeaderSize>;
constexpr uint16_t kDomains = 1024; // decode accepts domain < 1024

Bytes encode(const FrameHeader& h) {
    Bytes b{};
    encode_frame_header(h, b.data());
    return b;
}

FrameHeader data(uint32_t seq, uint8_t flags, uint64_t offset, uint32_t frag_len, uint64_t total,
                 uint16_t domain = 0) {
    FrameHeader h;
    h.kind = FrameKind::data;
    h.flags = flags;
    h.domain = domain;
    h.seq = seq;
    h.frag_len = frag_len;
    h.total = total;
    h.offset = offset;
    return h;
}

FrameHeader whole(uint32_t seq, uint32_t len, uint16_t domain = 0) {
    return data(seq, kFrameFirst | kFrameLast, 0, len, len, domain);
}

FrameHeader hello(uint32_t len) {
    FrameHeader h = whole(0, len);
    h.kind = FrameKind::hello;
    return h;
}

void expect_same(const FrameHeader& a, const FrameHeader& b) {
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.flags, b.flags);
    EXPECT_EQ(a.link, b.link);
    EXPECT_EQ(a.domain, b.domain);
    EXPECT_EQ(a.seq, b.seq);
    EXPECT_EQ(a.frag_len, b.frag_len);
    EXPECT_EQ(a.total, b.total);
    EXPECT_EQ(a.offset, b.offset);
}

} // namespace

// ---- codec ----

TEST(FrameCodec, LayoutIsBigEndianAtDocumentedOffsets) {
    FrameHeader h = data(0x01020304, kFrameLast, 0x1112131415161718ull - 5, 5, 0x1112131415161718ull, 0x0203);
    h.link = 0x85;
    const Bytes b = encode(h);
    const Bytes want = {0x53, 0x43, 1, 0, 2, 0x85, 0x02, 0x03, 0x01, 0x02, 0x03, 0x04, 0, 0, 0, 5,
                        0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
                        0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x13};
    EXPECT_EQ(b, want);
}

TEST(FrameCodec, RoundTripOfManyHeaders) {
    std::mt19937_64 rng(12345);
    FrameLimits limits;
    limits.max_fragment = UINT32_MAX;
    limits.max_message = UINT64_MAX;
    for (int i = 0; i < 20000; ++i) {
        // A valid header: pick total, then a fragment inside it, then the flags it implies.
        const uint64_t total = (i % 3 == 0) ? rng() % 100 : rng() >> (1 + rng() % 63);
        const uint64_t offset = (i % 4 == 0) ? 0 : rng() % (total + 1);
        const uint64_t room = std::min<uint64_t>(total - offset, UINT32_MAX);
        const uint32_t frag_len = uint32_t((i % 2) ? room : rng() % (room + 1));
        uint8_t flags = (offset == 0 ? kFrameFirst : 0) | (offset + frag_len == total ? kFrameLast : 0);
        FrameHeader h = data(uint32_t(rng()), flags, offset, frag_len, total, uint16_t(rng() % kDomains));
        if (i % 10 == 0)
            h = hello(uint32_t(rng() % (kMaxHelloBytes + 1)));
        h.link = uint8_t(rng());
        const Bytes b = encode(h);
        std::string why;
        auto got = decode_frame_header(b.data(), b.size(), limits, &why);
        ASSERT_TRUE(got) << why << " (case " << i << ")";
        expect_same(*got, h);
        EXPECT_EQ(encode(*got), b);
    }
}

TEST(FrameCodec, AcceptsBoundaryValues) {
    FrameLimits limits;
    limits.max_fragment = 100;
    limits.max_message = 1000;
    for (const FrameHeader& h : {whole(0, 0), whole(UINT32_MAX, 100, kDomains - 1),
                                 data(1, kFrameLast, 900, 100, 1000), data(1, 0, 1, 0, 1000),
                                 hello(kMaxHelloBytes), hello(0)}) {
        FrameLimits l = limits;
        if (h.kind == FrameKind::hello)
            l.max_fragment = uint32_t(l.max_message = kMaxHelloBytes);
        const Bytes b = encode(h);
        std::string why;
        EXPECT_TRUE(decode_frame_header(b.data(), b.size(), l, &why)) << why;
    }
}

// Byte 5 names the link: every value is a valid link (number 0..127, bit 0x80 = the receiver
// opened it), for data and hello frames alike.
TEST(FrameCodec, EveryLinkByteDecodes) {
    for (unsigned link = 0; link < 256; ++link)
        for (FrameHeader h : {whole(9, 10), hello(10)}) {
            h.link = uint8_t(link);
            const Bytes b = encode(h);
            ASSERT_EQ(b[5], link);
            std::string why;
            auto got = decode_frame_header(b.data(), b.size(), FrameLimits{}, &why);
            ASSERT_TRUE(got) << why << " (link " << link << ")";
            EXPECT_EQ(got->link, link);
        }
}

TEST(FrameCodec, UnlinkIsAnEmptyControlFrame) {
    const std::string f = control_frame(FrameKind::unlink, 0x83, "");
    ASSERT_EQ(f.size(), kFrameHeaderSize);
    std::string why;
    auto h = decode_frame_header(reinterpret_cast<const uint8_t*>(f.data()), f.size(), FrameLimits{}, &why);
    ASSERT_TRUE(h) << why;
    EXPECT_EQ(h->kind, FrameKind::unlink);
    EXPECT_TRUE(h->control());
    EXPECT_EQ(h->link, 0x83);
    EXPECT_EQ(h->frag_len, 0u);
}

TEST(FrameCodec, DecodeIgnoresBytesAfterTheHeaderAndToleratesNullWhy) {
    std::vector<uint8_t> buf(100, 0xee);
    encode_frame_header(whole(3, 68), buf.data());
    EXPECT_TRUE(decode_frame_header(buf.data(), buf.size(), FrameLimits{}, nullptr));
    buf[0] = 0;
    EXPECT_FALSE(decode_frame_header(buf.data(), buf.size(), FrameLimits{}, nullptr));
}

// One row per rejection reason: the bytes to decode (a header plus one corruption) and the message.
struct RejectCase {
    const char* name;
    FrameHeader header;
    void (*corrupt)(Bytes&); // applied after encoding; may be null
    size_t len;
    const char* message;
};

const FrameLimits kTestLimits{1000, 100000};

const RejectCase kRejects[] = {
    {"truncated", whole(0, 10), nullptr, 31, "frame: truncated header (31 bytes, need 32)"},
    {"empty", whole(0, 10), nullptr, 0, "frame: truncated header (0 bytes, need 32)"},
    {"magic", whole(0, 10), [](Bytes& b) { b[0] = 0x12, b[1] = 0x34; }, 32, "frame: bad magic 0x1234"},
    {"version", whole(0, 10), [](Bytes& b) { b[2] = 2; }, 32, "frame: unsupported version 2"},
    {"kind", whole(0, 10), [](Bytes& b) { b[3] = 7; }, 32, "frame: bad kind 7"},
    {"flags", whole(0, 10), [](Bytes& b) { b[4] = 0x07; }, 32,
     "frame: bad flags 0x07 (only first 0x01 and last 0x02 exist)"},
    {"domain", whole(0, 10, kDomains), nullptr, 32, "frame: domain 1024 out of range (< 1024)"},
    {"frag_len limit", whole(0, 1001), nullptr, 32, "frame: frag_len 1001 exceeds limit 1000"},
    {"total limit", data(0, kFrameFirst, 0, 10, 100001), nullptr, 32, "frame: total 100001 exceeds limit 100000"},
    {"overflow", data(0, kFrameLast, UINT64_MAX - 5, 10, 100), nullptr, 32,
     "frame: offset 18446744073709551610 + frag_len 10 overflows"},
    {"beyond total", data(0, kFrameLast, 100, 50, 120), nullptr, 32, "frame: offset 100 + frag_len 50 exceeds total 120"},
    {"first not at 0", data(0, kFrameFirst, 10, 10, 100), nullptr, 32, "frame: flag first set at offset 10"},
    {"no first at 0", data(0, 0, 0, 10, 100), nullptr, 32, "frame: flag first missing at offset 0"},
    {"last not at end", data(0, kFrameFirst | kFrameLast, 0, 10, 100), nullptr, 32,
     "frame: flag last set but fragment ends at 10 of total 100"},
    {"no last at end", data(0, 0, 90, 10, 100), nullptr, 32, "frame: flag last missing on fragment ending at total 100"},
    {"empty not single", data(0, kFrameFirst, 0, 0, 0), nullptr, 32,
     "frame: flag last missing on fragment ending at total 0"},
    {"hello fragmented", data(0, kFrameFirst, 0, 10, 20), [](Bytes& b) { b[3] = 1; }, 32,
     "frame: hello must be one fragment, flags 0x01"},
    {"hello too big", whole(0, kMaxHelloBytes + 1), [](Bytes& b) { b[3] = 1; }, 32,
     "frame: hello of 4097 bytes exceeds 4096"},
    {"challenge short", whole(0, kChallengeBytes - 1), [](Bytes& b) { b[3] = 2; }, 32,
     "frame: challenge of 47 bytes, it has 48"},
    {"proof long", whole(0, kProofBytes + 1), [](Bytes& b) { b[3] = 3; }, 32, "frame: proof of 33 bytes, it has 32"},
    {"proof fragmented", data(0, kFrameFirst, 0, 10, 20), [](Bytes& b) { b[3] = 3; }, 32,
     "frame: proof must be one fragment, flags 0x01"},
    {"unlink with payload", whole(0, 1), [](Bytes& b) { b[3] = 5; }, 32, "frame: unlink of 1 bytes, it has 0"},
    {"unlink fragmented", data(0, kFrameFirst, 0, 0, 1), [](Bytes& b) { b[3] = 5; }, 32,
     "frame: unlink must be one fragment, flags 0x01"},
    {"kind 6", whole(0, 10), [](Bytes& b) { b[3] = 6; }, 32, "frame: bad kind 6"},
};

class FrameReject : public testing::TestWithParam<RejectCase> {};

TEST_P(FrameReject, NamesFieldAndValue) {
    const RejectCase& c = GetParam();
    Bytes b = encode(c.header);
    if (c.corrupt)
        c.corrupt(b);
    FrameLimits limits = kTestLimits;
    if (std::string(c.name) == "hello too big")
        limits.max_fragment = 1u << 20; // so the hello rule, not the fragment limit, rejects it
    std::string why;
    EXPECT_FALSE(decode_frame_header(b.data(), c.len, limits, &why));
    EXPECT_EQ(why, c.message);
}

INSTANTIATE_TEST_SUITE_P(Frame, FrameReject, testing::ValuesIn(kRejects),
                         [](const testing::TestParamInfo<RejectCase>& info) {
                             std::string n = info.param.name;
                             for (char& ch : n)
                                 if (!isalnum(static_cast<unsigned char>(ch)))
                                     ch = '_';
                             return n;
                         });

// ---- sequencer ----

namespace {

// Fragments of one message of `total` bytes in pieces of `piece`.
std::vector<FrameHeader> fragments(uint32_t seq, uint64_t total, uint32_t piece, uint16_t domain = 0) {
    std::vector<FrameHeader> out;
    uint64_t off = 0;
    do {
        const uint32_t len = uint32_t(std::min<uint64_t>(piece, total - off));
        uint8_t flags = (off == 0 ? kFrameFirst : 0) | (off + len == total ? kFrameLast : 0);
        out.push_back(data(seq, flags, off, len, total, domain));
        off += len;
    } while (off < total);
    return out;
}

} // namespace

TEST(FrameSequencer, AcceptsWholeAndMultiFragmentMessages) {
    FrameSequencer s;
    EXPECT_FALSE(s.in_message());
    EXPECT_EQ(s.accept(whole(0, 0)), "");
    EXPECT_EQ(s.accept(whole(1, 100)), "");
    EXPECT_FALSE(s.in_message());
    const auto frags = fragments(2, 1000, 300, 5);
    ASSERT_EQ(frags.size(), 4u);
    for (size_t i = 0; i < frags.size(); ++i) {
        EXPECT_EQ(s.accept(frags[i]), "") << "fragment " << i;
        EXPECT_EQ(s.in_message(), i + 1 < frags.size());
        EXPECT_EQ(s.seq(), 2u);
        EXPECT_EQ(s.domain(), 5);
        EXPECT_EQ(s.total(), 1000u);
        EXPECT_EQ(s.next_offset(), std::min<uint64_t>(300 * (i + 1), 1000));
    }
    // Sequence numbers of successive messages need not be consecutive on one stream.
    for (const auto& f : fragments(70, 10, 1))
        EXPECT_EQ(s.accept(f), "");
    EXPECT_FALSE(s.in_message());
}

TEST(FrameSequencer, AcceptsEmptyContinuationFragments) {
    FrameSequencer s;
    EXPECT_EQ(s.accept(data(1, kFrameFirst, 0, 4, 8)), "");
    EXPECT_EQ(s.accept(data(1, 0, 4, 0, 8)), "");
    EXPECT_EQ(s.accept(data(1, kFrameLast, 4, 4, 8)), "");
}

TEST(FrameSequencer, HelloOnlyWhileIdleAndStateless) {
    FrameSequencer s;
    EXPECT_EQ(s.accept(hello(64)), "");
    EXPECT_FALSE(s.in_message());
    EXPECT_EQ(s.accept(data(4, kFrameFirst, 0, 10, 30)), "");
    EXPECT_EQ(s.accept(hello(64)), "frame: control frame inside a message (seq 4 open at offset 10 of 30)");
    EXPECT_EQ(s.accept(data(4, 0, 10, 10, 30)), "");
    EXPECT_EQ(s.accept(data(4, kFrameLast, 20, 10, 30)), "");
    EXPECT_EQ(s.accept(hello(64)), "");
    EXPECT_EQ(s.accept(whole(5, 1)), "");
}

// One row per invalid transition: the fragments accepted first, then the rejected one.
struct BadTransition {
    const char* name;
    std::vector<FrameHeader> before;
    FrameHeader bad;
    const char* message;
};

class FrameSequencerReject : public testing::TestWithParam<BadTransition> {};

TEST_P(FrameSequencerReject, RejectsAndKeepsState) {
    const BadTransition& t = GetParam();
    FrameSequencer s;
    for (const auto& h : t.before)
        ASSERT_EQ(s.accept(h), "");
    const FrameSequencer saved = s;
    EXPECT_EQ(s.accept(t.bad), t.message);
    EXPECT_EQ(s.in_message(), saved.in_message());
    EXPECT_EQ(s.seq(), saved.seq());
    EXPECT_EQ(s.domain(), saved.domain());
    EXPECT_EQ(s.total(), saved.total());
    EXPECT_EQ(s.next_offset(), saved.next_offset());
}

const FrameHeader kOpen = data(4, kFrameFirst, 0, 10, 30, 2); // leaves seq 4 open at 10 of 30

INSTANTIATE_TEST_SUITE_P(
    Frame, FrameSequencerReject,
    testing::Values(
        BadTransition{"continuation_while_idle", {}, data(4, 0, 10, 10, 30),
                      "frame: continuation of seq 4 at offset 10 without a first fragment"},
        BadTransition{"last_while_idle", {whole(3, 5)}, data(4, kFrameLast, 20, 10, 30),
                      "frame: continuation of seq 4 at offset 20 without a first fragment"},
        BadTransition{"first_inside_message", {kOpen}, whole(5, 10, 2),
                      "frame: first fragment of seq 5 inside a message (seq 4 open at offset 10 of 30)"},
        BadTransition{"first_again_same_seq", {kOpen}, data(4, kFrameFirst, 0, 10, 30, 2),
                      "frame: first fragment of seq 4 inside a message (seq 4 open at offset 10 of 30)"},
        BadTransition{"other_seq", {kOpen}, data(5, 0, 10, 10, 30, 2),
                      "frame: fragment of seq 5 inside a message (seq 4 open at offset 10 of 30)"},
        BadTransition{"other_domain", {kOpen}, data(4, 0, 10, 10, 30, 3),
                      "frame: domain 3 differs from the message's domain 2 (seq 4 open at offset 10 of 30)"},
        BadTransition{"other_total", {kOpen}, data(4, 0, 10, 10, 40, 2),
                      "frame: total 40 differs from the message's total (seq 4 open at offset 10 of 30)"},
        BadTransition{"gap", {kOpen}, data(4, 0, 15, 10, 30, 2),
                      "frame: offset 15 out of sequence (seq 4 open at offset 10 of 30)"},
        BadTransition{"repeat", {kOpen}, data(4, 0, 0, 10, 30, 2),
                      "frame: offset 0 out of sequence (seq 4 open at offset 10 of 30)"},
        // The rows below cannot come out of decode_frame_header; the sequencer checks them anyway.
        BadTransition{"beyond_total", {kOpen}, data(4, kFrameLast, 10, 25, 30, 2),
                      "frame: offset 10 + frag_len 25 exceeds total 30"},
        BadTransition{"last_too_early", {kOpen}, data(4, kFrameLast, 10, 10, 30, 2),
                      "frame: flag last set on fragment ending at 20 of total 30"},
        BadTransition{"last_missing", {kOpen}, data(4, 0, 10, 20, 30, 2),
                      "frame: flag last missing on fragment ending at 30 of total 30"},
        BadTransition{"first_not_at_zero", {}, data(4, kFrameFirst, 5, 10, 30),
                      "frame: first fragment of seq 4 at offset 5"},
        BadTransition{"first_beyond_total", {}, data(4, kFrameFirst | kFrameLast, 0, 40, 30),
                      "frame: offset 0 + frag_len 40 exceeds total 30"}),
    [](const testing::TestParamInfo<BadTransition>& info) { return std::string(info.param.name); });

TEST(FrameSequencer, RandomInterleavingOfStreamsStaysConsistent) {
    // Several streams, each with its own sequencer, fed message fragments (and hellos) in a random
    // interleaving across streams but in order within each: every fragment must be accepted.
    std::mt19937 rng(7);
    constexpr int kStreams = 5;
    std::vector<std::vector<FrameHeader>> queues(kStreams);
    uint32_t seq = 0;
    for (int s = 0; s < kStreams; ++s)
        for (int m = 0; m < 30; ++m) {
            if (rng() % 5 == 0)
                queues[s].push_back(hello(rng() % 100));
            for (const auto& f : fragments(seq++, rng() % 2000, 1 + rng() % 700, uint16_t(s)))
                queues[s].push_back(f);
        }
    std::vector<FrameSequencer> seqs(kStreams);
    std::vector<size_t> pos(kStreams, 0);
    size_t left = 0;
    for (const auto& q : queues)
        left += q.size();
    for (; left > 0; --left) {
        int s;
        do
            s = int(rng() % kStreams);
        while (pos[s] == queues[s].size());
        const FrameHeader& h = queues[s][pos[s]++];
        const Bytes b = encode(h);
        std::string why;
        auto dec = decode_frame_header(b.data(), b.size(), FrameLimits{}, &why);
        ASSERT_TRUE(dec) << why;
        ASSERT_EQ(seqs[s].accept(*dec), "");
    }
    for (const auto& sq : seqs)
        EXPECT_FALSE(sq.in_message());
}
