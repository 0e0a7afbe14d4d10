// SPDX-License-Identifier: BSD-3-Clause
// Encode/decode of the RFC 5040/5041/5043/6581 headers; see wire.hpp for the layouts.
#include "wire.hpp"

#include "byte_order.hpp"
#include "error.hpp"

#include <algorithm>
#include <cstdio>

namespace iwarp {
namespace be = sctpm::be;

namespace {

// Bit positions of byte 0 (RFC 5041 Fig. 3) and byte 1 (RFC 5040 Fig. 3).
constexpr uint8_t kT = 0x80, kL = 0x40;
// Terminate control word (RFC 5040 Fig. 8): Layer 31..28, EType 27..24, code 23..16, M D R 15..13.
constexpr uint32_t kTermM = 1u << 15, kTermD = 1u << 14, kTermR = 1u << 13;
constexpr uint32_t kTermReservedMask = (1u << 13) - 1;

void need(std::span<uint8_t> out, size_t n, const char* what) {
    if (out.size() < n)
        throw sctpm::Error(std::string("iwarp encode: buffer of ") + std::to_string(out.size()) +
                           " bytes too small for " + what + " (" + std::to_string(n) + ")");
}

constexpr WireError truncated(std::string_view field) { return {field, "truncated"}; }

} // namespace

// ---- opcodes -----------------------------------------------------------------------------------

bool opcode_known(uint8_t opcode) {
    return opcode <= uint8_t(Opcode::terminate) || opcode == uint8_t(Opcode::atomic_request) ||
           opcode == uint8_t(Opcode::atomic_response);
}

bool opcode_tagged(Opcode op) { return op == Opcode::rdma_write || op == Opcode::read_response; }

uint32_t opcode_queue(Opcode op) {
    switch (op) {
    case Opcode::read_request: return kQnReadRequest;
    case Opcode::terminate: return kQnTerminate;
    case Opcode::atomic_request: return kQnReadRequest;
    case Opcode::atomic_response: return kQnAtomicResponse;
    default: return kQnSend;
    }
}

bool opcode_invalidates(Opcode op) { return op == Opcode::send_inv || op == Opcode::send_se_inv; }

std::string_view opcode_name(uint8_t opcode) {
    static constexpr std::string_view names[] = {
        "RDMA Write", "RDMA Read Request", "RDMA Read Response", "Send",
        "Send with Invalidate", "Send with SE", "Send with SE and Invalidate", "Terminate"};
    if (opcode == uint8_t(Opcode::atomic_request)) return "Atomic Request";
    if (opcode == uint8_t(Opcode::atomic_response)) return "Atomic Response";
    return opcode <= uint8_t(Opcode::terminate) ? names[opcode] : "reserved";
}

DdpHeader make_tagged_header(Opcode op, uint32_t stag, uint64_t to, bool last) {
    DdpHeader h;
    h.tagged = true;
    h.last = last;
    h.opcode = uint8_t(op);
    h.stag = stag;
    h.to = to;
    return h;
}

DdpHeader make_untagged_header(Opcode op, uint32_t msn, uint32_t mo, bool last, uint32_t inval_stag) {
    DdpHeader h;
    h.tagged = false;
    h.last = last;
    h.opcode = uint8_t(op);
    h.qn = opcode_queue(op);
    h.msn = msn;
    h.mo = mo;
    h.inval_stag = inval_stag;
    return h;
}

// ---- error codes ---------------------------------------------------------------------------------

std::string describe(const TermCode& c) {
    struct Name {
        TermCode code;
        const char* text;
    };
    static constexpr Name names[] = {
        {term::rdmap_local_catastrophic, "RDMAP/local catastrophic"},
        {term::rdmap_invalid_stag, "RDMAP/remote protection/invalid STag"},
        {term::rdmap_base_bounds, "RDMAP/remote protection/base or bounds violation"},
        {term::rdmap_access_rights, "RDMAP/remote protection/access rights violation"},
        {term::rdmap_stag_not_associated, "RDMAP/remote protection/STag not associated with RDMAP stream"},
        {term::rdmap_to_wrap, "RDMAP/remote protection/TO wrap"},
        {term::rdmap_protection_cannot_invalidate, "RDMAP/remote protection/STag cannot be invalidated"},
        {term::rdmap_protection_unspecified, "RDMAP/remote protection/unspecified"},
        {term::rdmap_invalid_version, "RDMAP/remote operation/invalid RDMAP version"},
        {term::rdmap_unexpected_opcode, "RDMAP/remote operation/unexpected opcode"},
        {term::rdmap_catastrophic_stream, "RDMAP/remote operation/catastrophic, localized to stream"},
        {term::rdmap_catastrophic_global, "RDMAP/remote operation/catastrophic, global"},
        {term::rdmap_operation_cannot_invalidate, "RDMAP/remote operation/STag cannot be invalidated"},
        {term::rdmap_operation_unspecified, "RDMAP/remote operation/unspecified"},
        {term::ddp_local_catastrophic, "DDP/local catastrophic"},
        {term::ddp_tagged_invalid_stag, "DDP/tagged/invalid STag"},
        {term::ddp_tagged_base_bounds, "DDP/tagged/base or bounds violation"},
        {term::ddp_tagged_stag_not_associated, "DDP/tagged/STag not associated with DDP stream"},
        {term::ddp_tagged_to_wrap, "DDP/tagged/TO wrap"},
        {term::ddp_tagged_invalid_version, "DDP/tagged/invalid DDP version"},
        {term::ddp_untagged_invalid_qn, "DDP/untagged/invalid QN"},
        {term::ddp_untagged_no_buffer, "DDP/untagged/invalid MSN - no buffer available"},
        {term::ddp_untagged_msn_range, "DDP/untagged/invalid MSN - MSN range is not valid"},
        {term::ddp_untagged_invalid_mo, "DDP/untagged/invalid MO"},
        {term::ddp_untagged_too_long, "DDP/untagged/DDP message too long for available buffer"},
        {term::ddp_untagged_invalid_version, "DDP/untagged/invalid DDP version"},
        {term::mpa_tcp_closed, "LLP/MPA/TCP connection closed"},
        {term::mpa_crc_error, "LLP/MPA/CRC error"},
        {term::mpa_marker_mismatch, "LLP/MPA/marker and ULPDU length mismatch"},
        {term::mpa_invalid_request_reply, "LLP/MPA/invalid request or reply frame"},
        {term::mpa_local_catastrophic, "LLP/MPA/local catastrophic"},
        {term::mpa_insufficient_ird, "LLP/MPA/insufficient IRD resources"},
        {term::mpa_no_matching_rtr, "LLP/MPA/no matching RTR option"},
    };
    char numbers[32];
    std::snprintf(numbers, sizeof numbers, " (%u/%u/0x%02x)", unsigned(c.layer), unsigned(c.etype),
                  unsigned(c.code));
    // Local catastrophic errors have no code: any value names the same error.
    for (const Name& n : names)
        if (n.code == c || (n.code.layer == c.layer && n.code.etype == c.etype && c.etype == 0 &&
                            c.layer != Layer::llp))
            return n.text + std::string(numbers);
    return "unknown" + std::string(numbers);
}

std::string WireError::text() const { return std::string(field) + ": " + std::string(problem); }

// ---- DDP header ----------------------------------------------------------------------------------

size_t encode(const DdpHeader& h, std::span<uint8_t> out) {
    need(out, h.size(), "DDP header");
    uint8_t* p = out.data();
    p[0] = uint8_t((h.tagged ? kT : 0) | (h.last ? kL : 0) | (h.ddp_reserved & 0xF) << 2 | (h.ddp_version & 0x3));
    p[1] = uint8_t((h.rdmap_version & 0x3) << 6 | (h.rdmap_reserved & 0x3) << 4 | (h.opcode & 0xF));
    if (h.tagged) {
        be::store32(p + 2, h.stag);
        be::store64(p + 6, h.to);
    } else {
        be::store32(p + 2, h.inval_stag);
        be::store32(p + 6, h.qn);
        be::store32(p + 10, h.msn);
        be::store32(p + 14, h.mo);
    }
    return h.size();
}

Decoded<DdpHeader> decode_ddp_header(std::span<const uint8_t> in) {
    if (in.size() < 1) return truncated("ddp_control");
    if (in.size() < 2) return truncated("rdmap_control");
    const uint8_t* p = in.data();
    DdpHeader h;
    h.tagged = p[0] & kT;
    h.last = p[0] & kL;
    h.ddp_reserved = (p[0] >> 2) & 0xF;
    h.ddp_version = p[0] & 0x3;
    h.rdmap_version = p[1] >> 6;
    h.rdmap_reserved = (p[1] >> 4) & 0x3;
    h.opcode = p[1] & 0xF;
    if (h.tagged) {
        if (in.size() < 6) return truncated("stag");
        if (in.size() < 14) return truncated("to");
        h.stag = be::load32(p + 2);
        h.to = be::load64(p + 6);
    } else {
        if (in.size() < 6) return truncated("inval_stag");
        if (in.size() < 10) return truncated("qn");
        if (in.size() < 14) return truncated("msn");
        if (in.size() < 18) return truncated("mo");
        h.inval_stag = be::load32(p + 2);
        h.qn = be::load32(p + 6);
        h.msn = be::load32(p + 10);
        h.mo = be::load32(p + 14);
    }
    return h;
}

// ---- Read Request header -------------------------------------------------------------------------

size_t encode(const ReadRequestHeader& h, std::span<uint8_t> out) {
    need(out, kReadRequestHeaderSize, "Read Request header");
    uint8_t* p = out.data();
    be::store32(p, h.sink_stag);
    be::store64(p + 4, h.sink_to);
    be::store32(p + 12, h.size);
    be::store32(p + 16, h.src_stag);
    be::store64(p + 20, h.src_to);
    return kReadRequestHeaderSize;
}

Decoded<ReadRequestHeader> decode_read_request(std::span<const uint8_t> in) {
    if (in.size() < 4) return truncated("sink_stag");
    if (in.size() < 12) return truncated("sink_to");
    if (in.size() < 16) return truncated("rdma_read_size");
    if (in.size() < 20) return truncated("src_stag");
    if (in.size() < 28) return truncated("src_to");
    const uint8_t* p = in.data();
    ReadRequestHeader h;
    h.sink_stag = be::load32(p);
    h.sink_to = be::load64(p + 4);
    h.size = be::load32(p + 12);
    h.src_stag = be::load32(p + 16);
    h.src_to = be::load64(p + 20);
    return h;
}

// ---- Atomic Operation headers (RFC 7306 §5.2) ----------------------------------------------------

uint64_t atomic_result(const AtomicRequestHeader& h, uint64_t original) {
    if (h.aopcode == uint8_t(AtomicOp::cmp_swap)) {
        if ((h.compare ^ original) & h.compare_mask) return original;
        return (original & ~h.add_swap_mask) | (h.add_swap & h.add_swap_mask);
    }
    if (h.aopcode != uint8_t(AtomicOp::fetch_add))
        throw sctpm::Error("iwarp: atomic_result of AOpCode " + std::to_string(h.aopcode));
    // Each field runs from just above the previous mask bit up to and including the next one: add
    // it alone, so that its carry out is lost. A mask of 0 is one 64-bit field.
    uint64_t result = 0;
    unsigned low = 0;
    for (unsigned bit = 0; bit < 64; ++bit) {
        if (bit != 63 && !(h.add_swap_mask >> bit & 1)) continue;
        const uint64_t field = bit - low == 63 ? ~0ull : ((1ull << (bit - low + 1)) - 1) << low;
        result |= ((original & field) + (h.add_swap & field)) & field;
        low = bit + 1;
    }
    return result;
}

size_t encode(const AtomicRequestHeader& h, std::span<uint8_t> out) {
    need(out, kAtomicRequestHeaderSize, "Atomic Request header");
    uint8_t* p = out.data();
    be::store32(p, (h.reserved & 0x0FFFFFFFu) << 4 | (h.aopcode & 0xFu));
    be::store32(p + 4, h.request_id);
    be::store32(p + 8, h.stag);
    be::store64(p + 12, h.to);
    be::store64(p + 20, h.add_swap);
    be::store64(p + 28, h.add_swap_mask);
    be::store64(p + 36, h.compare);
    be::store64(p + 44, h.compare_mask);
    return kAtomicRequestHeaderSize;
}

Decoded<AtomicRequestHeader> decode_atomic_request(std::span<const uint8_t> in) {
    if (in.size() < 4) return truncated("aopcode");
    if (in.size() < 8) return truncated("request_id");
    if (in.size() < 12) return truncated("remote_stag");
    if (in.size() < 20) return truncated("remote_to");
    if (in.size() < 28) return truncated("add_swap_data");
    if (in.size() < 36) return truncated("add_swap_mask");
    if (in.size() < 44) return truncated("compare_data");
    if (in.size() < 52) return truncated("compare_mask");
    const uint8_t* p = in.data();
    AtomicRequestHeader h;
    const uint32_t w0 = be::load32(p);
    h.reserved = w0 >> 4;
    h.aopcode = uint8_t(w0 & 0xF);
    h.request_id = be::load32(p + 4);
    h.stag = be::load32(p + 8);
    h.to = be::load64(p + 12);
    h.add_swap = be::load64(p + 20);
    h.add_swap_mask = be::load64(p + 28);
    h.compare = be::load64(p + 36);
    h.compare_mask = be::load64(p + 44);
    return h;
}

size_t encode(const AtomicResponseHeader& h, std::span<uint8_t> out) {
    need(out, kAtomicResponseHeaderSize, "Atomic Response header");
    be::store32(out.data(), h.request_id);
    be::store64(out.data() + 4, h.original);
    return kAtomicResponseHeaderSize;
}

Decoded<AtomicResponseHeader> decode_atomic_response(std::span<const uint8_t> in) {
    if (in.size() < 4) return truncated("original_request_id");
    if (in.size() < 12) return truncated("original_remote_data");
    AtomicResponseHeader h;
    h.request_id = be::load32(in.data());
    h.original = be::load64(in.data() + 4);
    return h;
}

// ---- Terminate header ----------------------------------------------------------------------------

size_t TerminateHeader::size() const {
    size_t n = kTerminateControlSize;
    if (segment_length_valid || ddp) n += 2;
    if (ddp) n += ddp->size();
    if (rdma) n += kReadRequestHeaderSize;
    return n;
}

size_t encode(const TerminateHeader& h, std::span<uint8_t> out) {
    const size_t n = h.size();
    need(out, n, "Terminate header");
    uint32_t control = uint32_t(uint8_t(h.code.layer) & 0xF) << 28 | uint32_t(h.code.etype & 0xF) << 24 |
                       uint32_t(h.code.code) << 16 | (h.segment_length_valid ? kTermM : 0) |
                       (h.ddp ? kTermD : 0) | (h.rdma ? kTermR : 0) | (h.reserved & kTermReservedMask);
    uint8_t* p = out.data();
    be::store32(p, control);
    size_t at = kTerminateControlSize;
    if (h.segment_length_valid || h.ddp) {
        be::store16(p + at, h.ddp_segment_length);
        at += 2;
    }
    if (h.ddp) at += encode(*h.ddp, out.subspan(at));
    if (h.rdma) at += encode(*h.rdma, out.subspan(at));
    return at;
}

Decoded<TerminateHeader> decode_terminate(std::span<const uint8_t> in) {
    if (in.size() < kTerminateControlSize) return truncated("terminate_control");
    const uint32_t control = be::load32(in.data());
    TerminateHeader h;
    h.code.layer = Layer(control >> 28);
    h.code.etype = (control >> 24) & 0xF;
    h.code.code = uint8_t(control >> 16);
    h.segment_length_valid = control & kTermM;
    h.reserved = uint16_t(control & kTermReservedMask);
    const bool d = control & kTermD, r = control & kTermR;
    size_t at = kTerminateControlSize;
    if (h.segment_length_valid || d) {
        if (in.size() < at + 2) return truncated("ddp_segment_length");
        h.ddp_segment_length = be::load16(in.data() + at);
        at += 2;
    }
    if (d) {
        // The copied header's own T bit says whether 14 or 18 bytes follow (§4.8).
        auto ddp = decode_ddp_header(in.subspan(at));
        if (!ddp) return truncated("terminated_ddp_header");
        h.ddp = *ddp;
        at += ddp->size();
    }
    if (r) {
        auto rdma = decode_read_request(in.subspan(at));
        if (!rdma) return truncated("terminated_rdma_header");
        h.rdma = *rdma;
    }
    return h;
}

// ---- RFC 6581 IRD/ORD word -------------------------------------------------------------------------

uint32_t encode_ird_ord(const IrdOrd& v) {
    if (v.ird > kIrdOrdMax || v.ord > kIrdOrdMax)
        throw sctpm::Error("iwarp encode: IRD " + std::to_string(v.ird) + " / ORD " + std::to_string(v.ord) +
                           " exceeds 14 bits (max 16383)");
    // §9.2: with A = 0 the RTR flags B, C, D MUST be sent as 0.
    const bool p2p = v.peer_to_peer;
    return uint32_t(p2p) << 31 | uint32_t(p2p && v.rtr_send) << 30 | uint32_t(v.ird) << 16 |
           uint32_t(p2p && v.rtr_write) << 15 | uint32_t(p2p && v.rtr_read) << 14 | v.ord;
}

IrdOrd decode_ird_ord(uint32_t word) {
    IrdOrd v;
    v.peer_to_peer = word >> 31;
    // §9.2: with A = 0, B, C and D MUST be ignored on reception.
    v.rtr_send = v.peer_to_peer && (word >> 30 & 1);
    v.rtr_write = v.peer_to_peer && (word >> 15 & 1);
    v.rtr_read = v.peer_to_peer && (word >> 14 & 1);
    v.ird = (word >> 16) & kIrdOrdMax;
    v.ord = word & kIrdOrdMax;
    return v;
}

// ---- whole messages ------------------------------------------------------------------------------

std::vector<uint8_t> encode_segment(uint16_t ssn, const DdpHeader& h, std::span<const uint8_t> payload) {
    std::vector<uint8_t> m(kSsnSize + h.size() + payload.size());
    be::store16(m.data(), ssn);
    encode(h, std::span(m).subspan(kSsnSize));
    std::copy(payload.begin(), payload.end(), m.begin() + ptrdiff_t(kSsnSize + h.size()));
    return m;
}

Decoded<Segment> decode_segment(std::span<const uint8_t> message) {
    if (message.size() < kSsnSize) return truncated("ddp_ssn");
    auto hdr = decode_ddp_header(message.subspan(kSsnSize));
    if (!hdr) return hdr.error();
    Segment s;
    s.ssn = be::load16(message.data());
    s.hdr = *hdr;
    s.payload = message.subspan(kSsnSize + hdr->size());
    return s;
}

bool session_function_enhanced(SessionFunction f) {
    return f == SessionFunction::enhanced_initiate || f == SessionFunction::enhanced_accept ||
           f == SessionFunction::enhanced_reject;
}

std::vector<uint8_t> encode_session_control(const SessionControl& m) {
    const uint16_t fc = uint16_t(m.function);
    if (fc < 1 || fc > 7) throw sctpm::Error("iwarp encode: unknown session function code " + std::to_string(fc));
    if (session_function_enhanced(m.function) != m.ird_ord.has_value())
        throw sctpm::Error("iwarp encode: the IRD/ORD word goes with exactly the enhanced function codes 5-7 "
                           "(function code " + std::to_string(fc) + ")");
    if (m.function == SessionFunction::terminate && !m.private_data.empty())
        throw sctpm::Error("iwarp encode: DDP Stream Session Terminate carries no private data (RFC 5043 §5.2.3)");
    const size_t word = m.ird_ord ? kIrdOrdSize : 0;
    if (word + m.private_data.size() > kMaxPrivateData)
        throw sctpm::Error("iwarp encode: private data of " + std::to_string(word + m.private_data.size()) +
                           " bytes exceeds 512 (RFC 5043 §5.2.3)");
    std::vector<uint8_t> out(kSessionControlHeaderSize + word + m.private_data.size());
    be::store16(out.data(), m.ssn);
    be::store16(out.data() + 2, fc);
    if (m.ird_ord) be::store32(out.data() + kSessionControlHeaderSize, encode_ird_ord(*m.ird_ord));
    std::copy(m.private_data.begin(), m.private_data.end(), out.begin() + ptrdiff_t(kSessionControlHeaderSize + word));
    return out;
}

Decoded<SessionControl> decode_session_control(std::span<const uint8_t> message) {
    if (message.size() < kSsnSize) return truncated("ddp_ssn");
    if (message.size() < kSessionControlHeaderSize) return truncated("function_code");
    SessionControl m;
    m.ssn = be::load16(message.data());
    const uint16_t fc = be::load16(message.data() + 2);
    if (fc < 1 || fc > 7) return WireError{"function_code", "unknown value"};
    m.function = SessionFunction(fc);
    std::span<const uint8_t> data = message.subspan(kSessionControlHeaderSize);
    if (data.size() > kMaxPrivateData) return WireError{"private_data", "longer than 512 bytes"};
    if (m.function == SessionFunction::terminate && !data.empty())
        return WireError{"private_data", "not allowed on Terminate"};
    if (session_function_enhanced(m.function)) {
        if (data.size() < kIrdOrdSize) return truncated("ird_ord");
        m.ird_ord = decode_ird_ord(be::load32(data.data()));
        data = data.subspan(kIrdOrdSize);
    }
    m.private_data.assign(data.begin(), data.end());
    return m;
}

} // namespace iwarp
