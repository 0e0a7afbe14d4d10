// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the frame codec and the per-stream sequencer.
//
// Input: one mode byte, then pseudo-SCTP messages, each [stream u8][length u16 big endian][bytes].
// Mode bit 0 picks small limits; mode bit 1 feeds every 32-byte header to the sequencer raw, without
// the decoder's checks, to test that the sequencer is sound on its own.
// Invariants: a decoded header re-encodes to the same 32 bytes and satisfies every documented rule;
// a rejection has a reason; the sequencer never accepts a fragment beyond its message's total, counts
// exactly the accepted bytes, and leaves its state unchanged when it rejects.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "frame.hpp"
#include "hello_auth.hpp"
#include "packet_auth.hpp" // kRetireBytes

using namespace sctpm;

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "frame_fuzz invariant violated: %s\n", what);
        std::abort();
    }
}

uint64_t load_be(const uint8_t* p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
        v = (v << 8) | p[i];
    return v;
}

// The fields as they are on the wire, with no checks at all.
FrameHeader parse_raw(const uint8_t* b) {
    FrameHeader h;
    h.kind = FrameKind(b[3]);
    h.flags = b[4];
    h.link = b[5];
    h.domain = uint16_t(load_be(b + 6, 2));
    h.seq = uint32_t(load_be(b + 8, 4));
    h.frag_len = uint32_t(load_be(b + 12, 4));
    h.total = load_be(b + 16, 8);
    h.offset = load_be(b + 24, 8);
    return h;
}

void check_decoded(const FrameHeader& h, const uint8_t* bytes, const FrameLimits& limits) {
    uint8_t again[kFrameHeaderSize];
    encode_frame_header(h, again);
    check(std::memcmp(again, bytes, kFrameHeaderSize) == 0, "re-encoding differs");
    check(h.kind <= FrameKind::unlink, "kind");
    check((h.flags & ~(kFrameFirst | kFrameLast)) == 0, "flags");
    check(h.frag_len <= limits.max_fragment && h.total <= limits.max_message, "limits");
    check(h.offset <= h.total && h.frag_len <= h.total - h.offset, "fragment beyond total");
    check(h.first() == (h.offset == 0), "first iff offset 0");
    check(h.last() == (h.offset + h.frag_len == h.total), "last iff end");
    if (h.kind == FrameKind::hello)
        check(h.first() && h.last() && h.frag_len <= kMaxHelloBytes, "hello shape");
    if (h.kind == FrameKind::challenge)
        check(h.first() && h.last() && h.frag_len == kChallengeBytes, "challenge shape");
    if (h.kind == FrameKind::proof)
        check(h.first() && h.last() && h.frag_len == kProofBytes, "proof shape");
    if (h.kind == FrameKind::retire)
        check(h.first() && h.last() && h.frag_len == kRetireBytes, "retire shape");
    if (h.kind == FrameKind::unlink)
        check(h.first() && h.last() && h.frag_len == 0, "unlink shape");
}

struct Shadow {
    uint64_t accepted = 0; // payload bytes accepted since the message's first fragment
};

void feed(FrameSequencer& s, Shadow& shadow, const FrameHeader& h) {
    const FrameSequencer before = s;
    const std::string err = s.accept(h);
    if (!err.empty()) {
        check(err.rfind("frame: ", 0) == 0, "sequencer reason prefix");
        check(s.in_message() == before.in_message() && s.seq() == before.seq() &&
                  s.next_offset() == before.next_offset() && s.total() == before.total() &&
                  s.domain() == before.domain(),
              "state changed on rejection");
        return;
    }
    if (h.control()) {
        check(!before.in_message() && !s.in_message(), "control frame inside a message");
        check(s.next_offset() == before.next_offset() && s.total() == before.total(), "control frame changed state");
        return;
    }
    check(h.first() != before.in_message(), "first iff idle");
    shadow.accepted = (h.first() ? 0 : shadow.accepted) + h.frag_len;
    check(s.next_offset() <= s.total(), "accepted offset beyond total");
    check(s.next_offset() == shadow.accepted, "accepted bytes differ from next_offset");
    check(s.in_message() == (s.next_offset() < s.total()), "open iff short of total");
    check(s.in_message() != h.last(), "last closes the message");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    const uint8_t mode = data[0];
    FrameLimits limits;
    if (mode & 1)
        limits = FrameLimits{4096, 1u << 16};
    const bool raw = mode & 2;

    std::array<FrameSequencer, 256> seqs;
    std::array<Shadow, 256> shadows;
    size_t pos = 1;
    while (pos + 3 <= size) {
        const uint8_t stream = data[pos];
        const size_t want = size_t(load_be(data + pos + 1, 2));
        pos += 3;
        const size_t len = want < size - pos ? want : size - pos;
        const uint8_t* msg = data + pos;
        pos += len;

        std::string why;
        const auto h = decode_frame_header(msg, len, limits, &why);
        if (h) {
            check(why.empty(), "reason set on success");
            check_decoded(*h, msg, limits);
            const auto h32 = decode_frame_header(msg, kFrameHeaderSize, limits, nullptr);
            check(h32.has_value(), "decode depends on bytes after the header");
            if (!raw)
                feed(seqs[stream], shadows[stream], *h);
        } else {
            check(why.rfind("frame: ", 0) == 0 && why.size() > 7, "rejection without a reason");
        }
        if (raw && len >= kFrameHeaderSize)
            feed(seqs[stream], shadows[stream], parse_raw(msg));
    }
    return 0;
}
