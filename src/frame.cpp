// SPDX-License-Identifier: BSD-3-Clause
// Fragment header codec and the per-stream fragment sequencer (see frame.hpp for the layout).
#include "frame.hpp"
#include "hello_auth.hpp"
#include "packet_auth.hpp" // kRetireBytes

#include <cstdio>

namespace sctpm {

namespace {

constexpr uint32_t kMaxDomains = 1024; // ordering domains < streams per association <= 1024

void put_be(uint8_t* p, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) {
        p[i] = uint8_t(v);
        v >>= 8;
    }
}

uint64_t get_be(const uint8_t* p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
        v = (v << 8) | p[i];
    return v;
}

std::string dec(uint64_t v) { return std::to_string(v); }

std::string hex(uint64_t v, int digits) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
    return buf;
}

FrameHeader parse(const uint8_t* b) {
    FrameHeader h;
    h.kind = FrameKind(b[3]);
    h.flags = b[4];
    h.link = b[5];
    h.domain = uint16_t(get_be(b + 6, 2));
    h.seq = uint32_t(get_be(b + 8, 4));
    h.frag_len = uint32_t(get_be(b + 12, 4));
    h.total = get_be(b + 16, 8);
    h.offset = get_be(b + 24, 8);
    return h;
}

// The fields whose values do not depend on each other.
std::string check_fields(const uint8_t* b) {
    const uint64_t magic = get_be(b, 2);
    if (magic != kFrameMagic)
        return "frame: bad magic " + hex(magic, 4);
    if (b[2] != kFrameVersion)
        return "frame: unsupported version " + dec(b[2]);
    if (b[3] > uint8_t(FrameKind::unlink))
        return "frame: bad kind " + dec(b[3]);
    if (b[4] & ~(kFrameFirst | kFrameLast))
        return "frame: bad flags " + hex(b[4], 2) + " (only first 0x01 and last 0x02 exist)";
    const uint64_t domain = get_be(b + 6, 2);
    if (domain >= kMaxDomains)
        return "frame: domain " + dec(domain) + " out of range (< " + dec(kMaxDomains) + ")";
    return "";
}

// Lengths against the limits and the fragment's place inside the message.
std::string check_extent(const FrameHeader& h, const FrameLimits& limits) {
    if (h.frag_len > limits.max_fragment)
        return "frame: frag_len " + dec(h.frag_len) + " exceeds limit " + dec(limits.max_fragment);
    if (h.total > limits.max_message)
        return "frame: total " + dec(h.total) + " exceeds limit " + dec(limits.max_message);
    if (h.offset > UINT64_MAX - h.frag_len)
        return "frame: offset " + dec(h.offset) + " + frag_len " + dec(h.frag_len) + " overflows";
    if (h.offset + h.frag_len > h.total)
        return "frame: offset " + dec(h.offset) + " + frag_len " + dec(h.frag_len) + " exceeds total " +
               dec(h.total);
    return "";
}

// FIRST iff the fragment starts the message, LAST iff it ends it. This also forces an empty message
// to be one FIRST|LAST fragment.
std::string check_flags(const FrameHeader& h) {
    const uint64_t end = h.offset + h.frag_len;
    if (h.first() && h.offset != 0)
        return "frame: flag first set at offset " + dec(h.offset);
    if (!h.first() && h.offset == 0)
        return "frame: flag first missing at offset 0";
    if (h.last() && end != h.total)
        return "frame: flag last set but fragment ends at " + dec(end) + " of total " + dec(h.total);
    if (!h.last() && end == h.total)
        return "frame: flag last missing on fragment ending at total " + dec(h.total);
    return "";
}

std::string check_control(const FrameHeader& h) {
    if (!h.control())
        return "";
    const char* name = h.kind == FrameKind::hello       ? "hello"
                       : h.kind == FrameKind::challenge ? "challenge"
                       : h.kind == FrameKind::proof     ? "proof"
                       : h.kind == FrameKind::retire    ? "retire"
                                                        : "unlink";
    if (h.flags != (kFrameFirst | kFrameLast))
        return std::string("frame: ") + name + " must be one fragment, flags " + hex(h.flags, 2);
    if (h.kind == FrameKind::hello && h.frag_len > kMaxHelloBytes)
        return "frame: hello of " + dec(h.frag_len) + " bytes exceeds " + dec(kMaxHelloBytes);
    const size_t size = h.kind == FrameKind::challenge ? kChallengeBytes
                        : h.kind == FrameKind::proof   ? kProofBytes
                        : h.kind == FrameKind::retire  ? kRetireBytes
                                                       : 0;
    if (h.kind != FrameKind::hello && h.frag_len != size)
        return std::string("frame: ") + name + " of " + dec(h.frag_len) + " bytes, it has " + dec(size);
    return "";
}

// All decoder checks in order; fills h once the fixed fields are known to be sane.
std::string header_error(const uint8_t* b, size_t len, const FrameLimits& limits, FrameHeader& h) {
    if (len < kFrameHeaderSize)
        return "frame: truncated header (" + dec(len) + " bytes, need " + dec(kFrameHeaderSize) + ")";
    if (auto err = check_fields(b); !err.empty())
        return err;
    h = parse(b);
    if (auto err = check_extent(h, limits); !err.empty())
        return err;
    if (auto err = check_flags(h); !err.empty())
        return err;
    return check_control(h);
}

// Sequencer checks. They repeat the decoder's where the sequencer's own soundness depends on them
// (fragment within total, flags matching the position), so it also holds for headers from elsewhere.

std::string open_message(const FrameSequencer& s) {
    return " (seq " + dec(s.seq()) + " open at offset " + dec(s.next_offset()) + " of " + dec(s.total()) + ")";
}

std::string start_error(const FrameSequencer& s, const FrameHeader& h) {
    if (s.in_message())
        return "frame: first fragment of seq " + dec(h.seq) + " inside a message" + open_message(s);
    if (h.offset != 0)
        return "frame: first fragment of seq " + dec(h.seq) + " at offset " + dec(h.offset);
    return "";
}

std::string continuation_error(const FrameSequencer& s, const FrameHeader& h) {
    if (!s.in_message())
        return "frame: continuation of seq " + dec(h.seq) + " at offset " + dec(h.offset) +
               " without a first fragment";
    if (h.seq != s.seq())
        return "frame: fragment of seq " + dec(h.seq) + " inside a message" + open_message(s);
    if (h.domain != s.domain())
        return "frame: domain " + dec(h.domain) + " differs from the message's domain " + dec(s.domain()) +
               open_message(s);
    if (h.total != s.total())
        return "frame: total " + dec(h.total) + " differs from the message's total" + open_message(s);
    if (h.offset != s.next_offset())
        return "frame: offset " + dec(h.offset) + " out of sequence" + open_message(s);
    return "";
}

// The fragment [at, at + frag_len) must fit in total, and LAST must mark exactly the one reaching it.
std::string placement_error(const FrameHeader& h, uint64_t at, uint64_t total) {
    if (h.frag_len > total - at)
        return "frame: offset " + dec(at) + " + frag_len " + dec(h.frag_len) + " exceeds total " + dec(total);
    const uint64_t end = at + h.frag_len;
    if (h.last() != (end == total))
        return "frame: flag last " + std::string(h.last() ? "set" : "missing") + " on fragment ending at " +
               dec(end) + " of total " + dec(total);
    return "";
}

} // namespace

void encode_frame_header(const FrameHeader& h, uint8_t out[kFrameHeaderSize]) {
    put_be(out, kFrameMagic, 2);
    out[2] = kFrameVersion;
    out[3] = uint8_t(h.kind);
    out[4] = h.flags;
    out[5] = h.link;
    put_be(out + 6, h.domain, 2);
    put_be(out + 8, h.seq, 4);
    put_be(out + 12, h.frag_len, 4);
    put_be(out + 16, h.total, 8);
    put_be(out + 24, h.offset, 8);
}

std::string control_frame(FrameKind kind, uint8_t link_byte, const std::string& payload) {
    FrameHeader h;
    h.kind = kind;
    h.flags = kFrameFirst | kFrameLast;
    h.link = link_byte;
    h.frag_len = static_cast<uint32_t>(payload.size());
    h.total = payload.size();
    uint8_t hdr[kFrameHeaderSize];
    encode_frame_header(h, hdr);
    return std::string(reinterpret_cast<const char*>(hdr), sizeof hdr) + payload;
}

std::optional<FrameHeader> decode_frame_header(const uint8_t* bytes, size_t len,
                                               const FrameLimits& limits, std::string* why) {
    FrameHeader h;
    std::string err = header_error(bytes, len, limits, h);
    if (err.empty())
        return h;
    if (why)
        *why = std::move(err);
    return std::nullopt;
}

std::string FrameSequencer::accept(const FrameHeader& h) {
    if (h.control())
        return in_message_ ? "frame: control frame inside a message" + open_message(*this) : "";
    std::string err = h.first() ? start_error(*this, h) : continuation_error(*this, h);
    if (!err.empty())
        return err;
    const uint64_t total = h.first() ? h.total : total_;
    const uint64_t at = h.first() ? 0 : next_offset_;
    err = placement_error(h, at, total);
    if (!err.empty())
        return err;
    if (h.first()) {
        seq_ = h.seq;
        domain_ = h.domain;
        total_ = total;
    }
    next_offset_ = at + h.frag_len;
    in_message_ = !h.last();
    return "";
}

} // namespace sctpm
