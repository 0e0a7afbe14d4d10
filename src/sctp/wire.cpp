// SPDX-License-Identifier: BSD-3-Clause
// SCTP wire format: checks and readers of one packet's chunks, parameters and causes, and the
// packet builder (see wire.hpp). Every offset is compared with the length it was read from
// before any byte at it is read.
#include <cstring>

#include "sctp/wire.hpp"

#include "sctp/crc32c.hpp"

namespace sctpm::sctp::wire {


const char* check_packet(const uint8_t* p, size_t n, bool verify_crc, CommonHeader& h) {
    if (n < kCommonHeaderSize)
        return "packet shorter than the 12-byte common header";
    if (n < kCommonHeaderSize + kChunkHeaderSize)
        return "packet without a chunk";
    if (verify_crc && !sctp_checksum_ok(p, n))
        return "bad CRC32c checksum";
    h.src_port = get16(p);
    h.dst_port = get16(p + 2);
    h.vtag = get32(p + 4);
    size_t off = kCommonHeaderSize;
    while (off < n) {
        if (n - off < kChunkHeaderSize)
            return "trailing bytes after the last chunk (shorter than a chunk header)";
        uint16_t len = get16(p + off + 2);
        if (len < kChunkHeaderSize)
            return "chunk length below 4";
        if (len > n - off)
            return "chunk length past the end of the packet";
        size_t padded = pad4(len);
        if (padded >= n - off) // the last chunk, with or without its padding
            return nullptr;
        off += padded;
    }
    return nullptr;
}

namespace {

// Walks the TLVs in p[0..n): calls f(type, whole TLV span, value span) for each; returns a reason
// when one is malformed (length < 4 or past the end; padding past the end only for the last).
template <class F> const char* walk_tlvs(const uint8_t* p, size_t n, F&& f) {
    size_t off = 0;
    while (off < n) {
        if (n - off < 4)
            return "parameter header truncated";
        uint16_t type = get16(p + off);
        uint16_t len = get16(p + off + 2);
        if (len < 4)
            return "parameter length below 4";
        if (len > n - off)
            return "parameter length past the end of its chunk";
        if (!f(type, Span{p + off, len}, Span{p + off + 4, static_cast<size_t>(len - 4)}))
            return nullptr; // the callback stopped the walk
        size_t padded = pad4(len);
        if (padded >= n - off)
            return nullptr;
        off += padded;
    }
    return nullptr;
}

} // namespace

const char* parse_init(const Chunk& c, InitChunk& out) {
    if (c.length < kInitFixedSize)
        return "INIT/INIT-ACK shorter than its 20-byte fixed part";
    out = InitChunk{};
    out.tag = get32(c.value);
    out.a_rwnd = get32(c.value + 4);
    out.outbound_streams = get16(c.value + 8);
    out.inbound_streams = get16(c.value + 10);
    out.initial_tsn = get32(c.value + 12);
    const char* bad = nullptr;
    const char* err = walk_tlvs(c.value + 16, c.value_len - 16, [&](uint16_t type, Span tlv, Span v) {
        switch (type) {
        case kStateCookie:
            if (out.cookie.p != nullptr) {
                bad = "two State Cookie parameters";
                return false;
            }
            out.cookie = v;
            return true;
        case kCookiePreservative:
            if (v.n != 4) {
                bad = "Cookie Preservative parameter not 8 bytes long";
                return false;
            }
            out.cookie_preservative = get32(v.p);
            return true;
        case kIPv4Address:
            if (v.n != 4) {
                bad = "IPv4 Address parameter not 8 bytes long";
                return false;
            }
            if (out.ipv4_addresses < InitChunk::kMaxAddresses)
                std::memcpy(out.ipv4[out.ipv4_addresses], v.p, 4);
            ++out.ipv4_addresses;
            return true;
        case kIPv6Address:
            if (v.n != 16) {
                bad = "IPv6 Address parameter not 20 bytes long";
                return false;
            }
            ++out.ipv6_addresses;
            return true;
        case kHostNameAddress:
            out.host_name = true;
            return true;
        case kSupportedAddressTypes:
            return true; // the slice speaks the address family the packet came in
        case kAdaptationLayerIndication:
            if (v.n != 4) {
                bad = "Adaptation Layer Indication parameter not 8 bytes long";
                return false;
            }
            out.has_adaptation = true;
            out.adaptation = get32(v.p);
            return true;
        default: {
            UnknownAction a = unknown_param_action(type);
            if (reports(a) && out.unrecognized_count < InitChunk::kMaxReports)
                out.unrecognized[out.unrecognized_count++] = tlv;
            if (stops(a)) {
                out.stopped = true;
                return false;
            }
            return true;
        }
        }
    });
    return err ? err : bad;
}

const char* parse_heartbeat(const Chunk& c, Span& info) {
    if (c.value_len < 4)
        return "HEARTBEAT without its Heartbeat Info parameter";
    uint16_t type = get16(c.value);
    uint16_t len = get16(c.value + 2);
    if (type != kHeartbeatInfo)
        return "HEARTBEAT whose parameter is not Heartbeat Info";
    if (len < 4 || len > c.value_len)
        return "Heartbeat Info length out of its chunk";
    info = Span{c.value, len};
    return nullptr;
}

const char* parse_shutdown(const Chunk& c, uint32_t& cum_tsn) {
    if (c.length != 8)
        return "SHUTDOWN length not 8";
    cum_tsn = get32(c.value);
    return nullptr;
}

bool CauseIter::next(Cause& c) {
    if (err_ != nullptr || off_ >= n_)
        return false;
    if (n_ - off_ < 4) {
        err_ = "error cause header truncated";
        return false;
    }
    uint16_t code = get16(p_ + off_);
    uint16_t len = get16(p_ + off_ + 2);
    if (len < 4 || len > n_ - off_) {
        err_ = len < 4 ? "error cause length below 4" : "error cause length past the end of its chunk";
        return false;
    }
    c.code = code;
    c.value = Span{p_ + off_ + 4, static_cast<size_t>(len - 4)};
    size_t padded = pad4(len);
    off_ = padded >= n_ - off_ ? n_ : off_ + padded;
    return true;
}

const char* cause_name(uint16_t code) {
    switch (code) {
    case kInvalidStream: return "Invalid Stream Identifier";
    case kMissingMandatoryParam: return "Missing Mandatory Parameter";
    case kStaleCookie: return "Stale Cookie Error";
    case kOutOfResource: return "Out of Resource";
    case kUnresolvableAddress: return "Unresolvable Address";
    case kUnrecognizedChunk: return "Unrecognized Chunk Type";
    case kInvalidMandatoryParam: return "Invalid Mandatory Parameter";
    case kUnrecognizedParams: return "Unrecognized Parameters";
    case kNoUserData: return "No User Data";
    case kCookieWhileShuttingDown: return "Cookie Received While Shutting Down";
    case kRestartWithNewAddresses: return "Restart of an Association with New Addresses";
    case kUserInitiatedAbort: return "User-Initiated Abort";
    case kProtocolViolation: return "Protocol Violation";
    default: return nullptr;
    }
}

std::string describe_causes(const uint8_t* p, size_t n) {
    std::string out;
    CauseIter it(p, n);
    Cause c;
    while (it.next(c)) {
        if (!out.empty())
            out += "; ";
        const char* name = cause_name(c.code);
        out += name ? name : "cause " + std::to_string(c.code);
        if (c.code == kUserInitiatedAbort || c.code == kProtocolViolation) {
            if (c.value.n > 0) {
                out += ": \"";
                for (size_t i = 0; i < c.value.n && i < 200; ++i) {
                    char ch = static_cast<char>(c.value.p[i]);
                    out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
                }
                out += '"';
            }
        }
    }
    if (it.error()) {
        out += out.empty() ? "" : "; ";
        out += it.error();
    }
    if (out.empty())
        out = "no cause given";
    return out;
}

// ---- builder -----------------------------------------------------------------------------------
void PacketBuilder::put_bytes(const void* p, size_t n) {
    if (!fits(n))
        return;
    if (n)
        std::memcpy(buf_ + len_, p, n);
    len_ += n;
    unpadded_end_ = len_;
}

void PacketBuilder::put_tlv(uint16_t type, const void* value, size_t n) {
    if (n > 0xffff - 4 || !fits(pad4(4 + n))) {
        overflow_ = true;
        return;
    }
    wire::put16(buf_ + len_, type);
    wire::put16(buf_ + len_ + 2, static_cast<uint16_t>(4 + n));
    if (n)
        std::memcpy(buf_ + len_ + 4, value, n);
    unpadded_end_ = len_ + 4 + n;
    size_t padded = pad4(4 + n);
    std::memset(buf_ + unpadded_end_, 0, padded - 4 - n);
    len_ += padded;
}

size_t PacketBuilder::finish() {
    if (overflow_ || len_ < kCommonHeaderSize)
        return 0;
    sctp_set_checksum(buf_, len_);
    return len_;
}

} // namespace sctpm::sctp::wire
