// SPDX-License-Identifier: BSD-3-Clause
// Wire format of one fragment: a fixed 32-byte header (network byte order) followed by
// frag_len payload bytes, sent as one SCTP message.
//
//   0 u16 magic 0x5343 ('SC')   2 u8 version (1)   3 u8 kind (0 data, 1 hello, 2 challenge, 3 proof, 4 retire, 5 unlink)
//   4 u8 flags (1 first, 2 last) 5 u8 link          6 u16 domain (ordering domain of seq)
//   8 u32 seq (per sender and ordering domain)      12 u32 frag_len
//  16 u64 total (message length)                   24 u64 offset (of this fragment's payload)
//
// Links: several logical connections share one association (usrsctp allows one per pair of
// endpoints). The side that opens a link numbers it 0..127 and says hello on it; its frames carry
// the number, the other side's frames on that link carry number | kLinkOpenedByReceiver.
// Hello, challenge and proof are control frames of one fragment each (hello_auth.hpp), and so is
// retire (auth=packet: the sender no longer uses the null SCTP-AUTH key; packet_auth.hpp), and so is
// unlink (empty: the sender released its peer on that link and will send nothing more on it; a link
// both sides unlinked is forgotten, and its number may be opened again: transport_unlink.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace sctpm {

constexpr size_t kFrameHeaderSize = 32;
constexpr uint16_t kFrameMagic = 0x5343;
constexpr uint8_t kFrameVersion = 1;
constexpr uint32_t kMaxHelloBytes = 4096;
constexpr uint8_t kLinkOpenedByReceiver = 0x80; // link byte bit: the receiver of the frame opened the link
constexpr unsigned kMaxLinks = 128;              // link numbers one side can open per association

enum class FrameKind : uint8_t { data = 0, hello = 1, challenge = 2, proof = 3, retire = 4, unlink = 5 };
enum FrameFlags : uint8_t { kFrameFirst = 1, kFrameLast = 2 };

struct FrameHeader {
    FrameKind kind = FrameKind::data;
    uint8_t flags = 0;
    uint8_t link = 0;    // the link the frame belongs to (see above); any value is valid
    uint16_t domain = 0; // ordering domain: seq counts per (sender, domain); < 1024
    uint32_t seq = 0;
    uint32_t frag_len = 0;
    uint64_t total = 0;
    uint64_t offset = 0;

    bool first() const { return flags & kFrameFirst; }
    bool control() const { return kind != FrameKind::data; }
    bool last() const { return flags & kFrameLast; }
};

struct FrameLimits {
    uint32_t max_fragment = 1u << 20; // largest frag_len accepted
    uint64_t max_message = 1ull << 40; // largest total accepted
};

void encode_frame_header(const FrameHeader& h, uint8_t out[kFrameHeaderSize]);
// A control frame (one fragment) on the link that `link_byte` names, as one SCTP message.
std::string control_frame(FrameKind kind, uint8_t link_byte, const std::string& payload);

// Decodes and checks one header on its own (magic, version, kind, flags consistent with
// offset/total, domain range, no 64-bit overflow, limits, control frames' shape; every link byte is valid).
// On failure returns nullopt and sets *why to a message naming the field and the value.
std::optional<FrameHeader> decode_frame_header(const uint8_t* bytes, size_t len,
                                               const FrameLimits& limits, std::string* why);

// Checks that the fragments arriving on one SCTP stream of one association form whole messages:
// a first fragment starts a message; later fragments continue it with the same seq at the next
// offset; the last one ends it. One instance per (association, stream) in each receiving peer:
// links demultiplex the frames of one association before they reach a sequencer.
class FrameSequencer {
public:
    // Returns an empty string if h is a valid next fragment (and advances), else the reason (and the
    // state is left unchanged). Continuations must repeat the first fragment's seq, domain and total.
    std::string accept(const FrameHeader& h);
    bool in_message() const { return in_message_; }
    uint32_t seq() const { return seq_; }
    uint64_t next_offset() const { return next_offset_; }
    uint64_t total() const { return total_; }
    uint16_t domain() const { return domain_; }

private:
    bool in_message_ = false;
    uint16_t domain_ = 0;
    uint32_t seq_ = 0;
    uint64_t next_offset_ = 0;
    uint64_t total_ = 0;
};

} // namespace sctpm
