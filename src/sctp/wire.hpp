// SPDX-License-Identifier: BSD-3-Clause
// SCTP wire format (RFC 9260 §3): pure functions that check and read the common header, chunks,
// parameters and error causes of one packet, and a builder that writes them. Nothing here keeps
// state or allocates; every read is bounded by a length checked first, and a malformed field
// gives a reason string (static storage) instead of a result.
//
// Network byte order everywhere except the checksum (crc32c.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "byte_order.hpp"

namespace sctpm::sctp::wire {

// ---- constants (RFC 9260 §3.2, §3.3.10; RFC 6951 nothing extra on the wire) ----------------
enum ChunkType : uint8_t {
    kData = 0,
    kInit = 1,
    kInitAck = 2,
    kSack = 3,
    kHeartbeat = 4,
    kHeartbeatAck = 5,
    kAbort = 6,
    kShutdown = 7,
    kShutdownAck = 8,
    kError = 9,
    kCookieEcho = 10,
    kCookieAck = 11,
    kEcne = 12,
    kCwr = 13,
    kShutdownComplete = 14,
};

enum ParamType : uint16_t {
    kHeartbeatInfo = 1,
    kIPv4Address = 5,
    kIPv6Address = 6,
    kStateCookie = 7,
    kUnrecognizedParam = 8,
    kCookiePreservative = 9,
    kHostNameAddress = 11,
    kSupportedAddressTypes = 12,
    kAdaptationLayerIndication = 0xC006, // RFC 5061 §4.2.6 (RFC 5043 announces DDP with it)
};

enum CauseCode : uint16_t {
    kInvalidStream = 1,
    kMissingMandatoryParam = 2,
    kStaleCookie = 3,
    kOutOfResource = 4,
    kUnresolvableAddress = 5,
    kUnrecognizedChunk = 6,
    kInvalidMandatoryParam = 7,
    kUnrecognizedParams = 8,
    kNoUserData = 9,
    kCookieWhileShuttingDown = 10,
    kRestartWithNewAddresses = 11,
    kUserInitiatedAbort = 12,
    kProtocolViolation = 13,
};

// Chunk flags.
constexpr uint8_t kDataEnd = 0x01;       // E: last fragment
constexpr uint8_t kDataBegin = 0x02;     // B: first fragment
constexpr uint8_t kDataUnordered = 0x04; // U
constexpr uint8_t kDataImmediate = 0x08; // I (RFC 7053), read and ignored
constexpr uint8_t kFlagT = 0x01;         // ABORT / SHUTDOWN-COMPLETE: verification tag reflected

constexpr size_t kCommonHeaderSize = 12;
constexpr size_t kChunkHeaderSize = 4;
constexpr size_t kDataHeaderSize = 16; // chunk header + TSN, stream, SSN, PPID
constexpr size_t kInitFixedSize = 20;  // chunk header + tag, a_rwnd, OS, MIS, initial TSN
constexpr size_t kSackFixedSize = 16;

inline size_t pad4(size_t n) { return (n + 3) & ~size_t{3}; }

inline uint16_t get16(const uint8_t* p) { return be::load16(p); }
inline uint32_t get32(const uint8_t* p) { return be::load32(p); }
inline void put16(uint8_t* p, uint16_t v) { be::store16(p, v); }
inline void put32(uint8_t* p, uint32_t v) { be::store32(p, v); }

// ---- reading ---------------------------------------------------------------------------------
struct CommonHeader {
    uint16_t src_port = 0;
    uint16_t dst_port = 0;
    uint32_t vtag = 0;
};

struct Chunk {
    uint8_t type = 0;
    uint8_t flags = 0;
    uint16_t length = 0;            // the chunk's Length field (header included, padding not)
    const uint8_t* value = nullptr; // the bytes after the 4-byte header
    size_t value_len = 0;           // length - 4
};

// Checks a whole packet: at least the common header and one chunk, the checksum (when
// verify_crc), and that the chunks tile the packet: each length >= 4 and within the packet, each
// chunk padded to 4 bytes (only the last chunk's padding may be missing), nothing after the last
// chunk's padding. Fills `h`. Returns nullptr, or why the packet is bad.
const char* check_packet(const uint8_t* p, size_t n, bool verify_crc, CommonHeader& h);

// Walks the chunks of a packet that passed check_packet().
class ChunkIter {
public:
    ChunkIter(const uint8_t* p, size_t n) : p_(p), n_(n), off_(kCommonHeaderSize) {}
    bool next(Chunk& c) {
        if (off_ >= n_ || n_ - off_ < kChunkHeaderSize)
            return false;
        const uint8_t* q = p_ + off_;
        uint16_t len = get16(q + 2);
        if (len < kChunkHeaderSize || len > n_ - off_)
            return false; // check_packet() rejected such packets; never read past the end anyway
        c.type = q[0];
        c.flags = q[1];
        c.length = len;
        c.value = q + kChunkHeaderSize;
        c.value_len = len - kChunkHeaderSize;
        size_t padded = pad4(len);
        off_ = padded >= n_ - off_ ? n_ : off_ + padded;
        return true;
    }

private:
    const uint8_t* p_;
    size_t n_;
    size_t off_;
};

// What the upper two bits of an unknown chunk or parameter type ask for (RFC 9260 §3.2, §3.2.1):
// 00 stop (the packet's remaining chunks / the chunk's remaining parameters are ignored),
// 01 stop and report, 10 skip, 11 skip and report.
enum class UnknownAction : uint8_t { stop = 0, stop_report = 1, skip = 2, skip_report = 3 };
inline UnknownAction unknown_chunk_action(uint8_t type) { return static_cast<UnknownAction>(type >> 6); }
inline UnknownAction unknown_param_action(uint16_t type) { return static_cast<UnknownAction>(type >> 14); }
inline bool reports(UnknownAction a) { return a == UnknownAction::stop_report || a == UnknownAction::skip_report; }
inline bool stops(UnknownAction a) { return a == UnknownAction::stop || a == UnknownAction::stop_report; }

struct DataChunk {
    uint8_t flags = 0;
    uint32_t tsn = 0;
    uint16_t stream = 0;
    uint16_t ssn = 0;
    uint32_t ppid = 0;
    const uint8_t* payload = nullptr;
    size_t len = 0;
    bool begin() const { return flags & kDataBegin; }
    bool end() const { return flags & kDataEnd; }
    bool unordered() const { return flags & kDataUnordered; }
};
// "DATA chunk shorter than its 16-byte header", "DATA chunk without user data" (RFC 9260 §6.2:
// answered by an ABORT with No User Data).
inline constexpr const char* kNoUserDataReason = "DATA chunk without user data";
inline const char* parse_data(const Chunk& c, DataChunk& d) {
    if (c.length < kDataHeaderSize)
        return "DATA chunk shorter than its 16-byte header";
    d.flags = c.flags;
    d.tsn = get32(c.value);
    d.stream = get16(c.value + 4);
    d.ssn = get16(c.value + 6);
    d.ppid = get32(c.value + 8);
    d.payload = c.value + 12;
    d.len = c.value_len - 12;
    if (d.len == 0)
        return kNoUserDataReason;
    return nullptr;
}

// A bounded span into the packet.
struct Span {
    const uint8_t* p = nullptr;
    size_t n = 0;
};

// INIT and INIT-ACK (same layout, §3.3.2 / §3.3.3).
struct InitChunk {
    uint32_t tag = 0;
    uint32_t a_rwnd = 0;
    uint16_t outbound_streams = 0;
    uint16_t inbound_streams = 0;
    uint32_t initial_tsn = 0;
    Span cookie;                      // State Cookie (INIT-ACK); p == nullptr when absent
    uint32_t cookie_preservative = 0; // Suggested Cookie Life-Span Increment (ms), 0 if absent
    bool host_name = false;           // a Host Name Address parameter (unsupported by RFC 9260)
    bool has_adaptation = false;      // an Adaptation Layer Indication parameter (RFC 5061 §4.2.6)
    uint32_t adaptation = 0;          // ... its value
    uint16_t ipv4_addresses = 0, ipv6_addresses = 0;
    // The first kMaxAddresses IPv4 Address parameters' addresses (network order).
    static constexpr size_t kMaxAddresses = 8;
    uint8_t ipv4[kMaxAddresses][4] = {};
    // Unknown parameters whose type asks for a report (whole TLVs, at most kMaxReports).
    static constexpr size_t kMaxReports = 8;
    Span unrecognized[kMaxReports];
    size_t unrecognized_count = 0;
    bool stopped = false; // an unknown parameter with upper bits 0x stopped parameter processing
};
// Checks the fixed part and every parameter's length (>= 4, within the chunk, padding within
// the chunk except after the last). Values are checked by the caller (tag 0, streams 0).
const char* parse_init(const Chunk& c, InitChunk& out);

struct SackChunk {
    uint32_t cum_tsn = 0;
    uint32_t a_rwnd = 0;
    uint16_t gap_count = 0;
    uint16_t dup_count = 0;
    const uint8_t* gaps = nullptr; // gap_count pairs of u16 (start, end offsets from cum_tsn)
    const uint8_t* dups = nullptr; // dup_count u32 TSNs
    uint16_t gap_start(size_t i) const { return get16(gaps + 4 * i); }
    uint16_t gap_end(size_t i) const { return get16(gaps + 4 * i + 2); }
    uint32_t dup(size_t i) const { return get32(dups + 4 * i); }
};
// The length must be exactly 16 + 4 * (gaps + dups).
inline const char* parse_sack(const Chunk& c, SackChunk& s) {
    if (c.length < kSackFixedSize)
        return "SACK shorter than its 16-byte fixed part";
    s.cum_tsn = get32(c.value);
    s.a_rwnd = get32(c.value + 4);
    s.gap_count = get16(c.value + 8);
    s.dup_count = get16(c.value + 10);
    size_t want = kSackFixedSize + 4 * (static_cast<size_t>(s.gap_count) + s.dup_count);
    if (c.length != want)
        return "SACK length does not match its gap and duplicate counts";
    s.gaps = c.value + 12;
    s.dups = s.gaps + 4 * static_cast<size_t>(s.gap_count);
    return nullptr;
}

// HEARTBEAT / HEARTBEAT-ACK: the Heartbeat Info TLV (the whole parameter, to echo).
const char* parse_heartbeat(const Chunk& c, Span& info);

// SHUTDOWN: the Cumulative TSN Ack.
const char* parse_shutdown(const Chunk& c, uint32_t& cum_tsn);

// Error causes of ABORT and ERROR chunks (§3.3.10): code, the cause's value (after its header).
struct Cause {
    uint16_t code = 0;
    Span value;
};
class CauseIter {
public:
    CauseIter(const uint8_t* p, size_t n) : p_(p), n_(n) {}
    // False at the end or on a malformed cause (then error() says why).
    bool next(Cause& c);
    const char* error() const { return err_; }

private:
    const uint8_t* p_;
    size_t n_;
    size_t off_ = 0;
    const char* err_ = nullptr;
};
const char* cause_name(uint16_t code);
// "User-Initiated Abort: \"bye\"; Protocol Violation" — the causes of an ABORT/ERROR, for a person.
std::string describe_causes(const uint8_t* p, size_t n);

// ---- writing ---------------------------------------------------------------------------------
// Writes one packet into a caller buffer. Writes never pass `cap`: one that would sets
// overflowed() and writes nothing (the engine checks room() first; this is the safety net).
class PacketBuilder {
public:
    PacketBuilder(uint8_t* buf, size_t cap) : buf_(buf), cap_(cap) {}
    void header(uint16_t src_port, uint16_t dst_port, uint32_t vtag) {
        len_ = 0;
        overflow_ = false;
        if (!fits(kCommonHeaderSize))
            return;
        wire::put16(buf_, src_port);
        wire::put16(buf_ + 2, dst_port);
        wire::put32(buf_ + 4, vtag);
        wire::put32(buf_ + 8, 0);
        len_ = kCommonHeaderSize;
    }
    size_t size() const { return len_; }
    size_t room() const { return cap_ - len_; }
    bool overflowed() const { return overflow_; }
    bool has_chunks() const { return len_ > kCommonHeaderSize; }

    // A chunk: open, put its value (fields, parameters, causes), close (sets the length and pads).
    void open_chunk(uint8_t type, uint8_t flags) {
        chunk_start_ = len_;
        if (!fits(kChunkHeaderSize))
            return;
        uint8_t* q = buf_ + len_;
        q[0] = type;
        q[1] = flags;
        q[2] = q[3] = 0;
        len_ += kChunkHeaderSize;
        unpadded_end_ = len_;
    }
    void put8(uint8_t v) {
        if (!fits(1))
            return;
        buf_[len_++] = v;
        unpadded_end_ = len_;
    }
    void put16(uint16_t v) {
        if (!fits(2))
            return;
        wire::put16(buf_ + len_, v);
        len_ += 2;
        unpadded_end_ = len_;
    }
    void put32(uint32_t v) {
        if (!fits(4))
            return;
        wire::put32(buf_ + len_, v);
        len_ += 4;
        unpadded_end_ = len_;
    }
    void put_bytes(const void* p, size_t n);
    // n bytes at the end of the packet for the caller to fill (a whole chunk, 4-byte aligned
    // length), or nullptr when they do not fit.
    uint8_t* append(size_t n) {
        if (!fits(n))
            return nullptr;
        uint8_t* q = buf_ + len_;
        len_ += n;
        unpadded_end_ = len_;
        return q;
    }
    // A TLV (parameter or error cause) padded to 4; the chunk's length leaves out the last pad.
    void put_tlv(uint16_t type, const void* value, size_t n);
    void close_chunk() {
        if (overflow_)
            return;
        size_t clen = unpadded_end_ - chunk_start_;
        if (clen > 0xffff) {
            overflow_ = true;
            return;
        }
        wire::put16(buf_ + chunk_start_ + 2, static_cast<uint16_t>(clen));
        len_ = unpadded_end_;
        size_t padded = pad4(len_);
        if (!fits(padded - len_))
            return;
        while (len_ < padded)
            buf_[len_++] = 0;
    }

    // DATA in one go (the hot path).
    bool put_data(uint8_t flags, uint32_t tsn, uint16_t stream, uint16_t ssn, uint32_t ppid,
                  const uint8_t* payload, size_t n) {
        size_t clen = kDataHeaderSize + n;
        size_t padded = pad4(clen);
        if (clen > 0xffff || !fits(padded))
            return false;
        uint8_t* q = buf_ + len_;
        // Zero the last word first: it holds the padding, the header and payload overwrite the rest.
        std::memset(q + padded - 4, 0, 4);
        q[0] = kData;
        q[1] = flags;
        wire::put16(q + 2, static_cast<uint16_t>(clen));
        wire::put32(q + 4, tsn);
        wire::put16(q + 8, stream);
        wire::put16(q + 10, ssn);
        wire::put32(q + 12, ppid);
        if (n)
            std::memcpy(q + 16, payload, n);
        len_ += padded;
        return true;
    }

    // Sets the checksum; returns the packet's length.
    size_t finish();

private:
    bool fits(size_t n) {
        if (overflow_ || n > cap_ - len_) {
            overflow_ = true;
            return false;
        }
        return true;
    }
    uint8_t* buf_;
    size_t cap_;
    size_t len_ = 0;
    size_t chunk_start_ = 0;
    size_t unpadded_end_ = 0; // end of the last TLV without its padding
    bool overflow_ = false;
};

} // namespace sctpm::sctp::wire
