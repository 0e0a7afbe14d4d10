// SPDX-License-Identifier: BSD-3-Clause
// Receiver checks on one DDP segment; see validate.hpp. Order of checks: the adaptation's size
// limit, DDP version, RDMAP version, opcode, then the buffer model's checks (RFC 5041 §7.1), then
// RDMAP's own (RFC 5040 §7.2). Opcode comes before placement so that a segment whose T flag
// contradicts its opcode is never placed.
#include "validate.hpp"

#include "error.hpp"

#include <limits>
#include <string>

namespace iwarp {

namespace {

constexpr uint64_t kMaxMessageLength = std::numeric_limits<uint32_t>::max(); // RFC 5041 §5.2: < 2^32

// The Terminate for an error found in `seg` (null if not even a DDP header could be read).
// What it carries follows RFC 5040 §4.8 Fig. 10 and §7.1:
//  - the DDP header and segment length for every error but local catastrophic ones;
//  - the Read Request header for RDMAP-layer errors on a Read Request whose 28 bytes arrived.
//    Fig. 10 lists it for Remote Protection errors and "No" for Remote Operation ones, but §7.1
//    rule 3 (a MUST) includes it for any error on an incoming Read Request, so we follow §7.1.
//    DDP-layer errors (e.g. a Read Request beyond IRD) are found before RDMAP sees the message:
//    Fig. 10 gives them no RDMA header.
Rejected reject(TermCode code, std::string_view reason, const Segment* seg, size_t message_size) {
    Rejected r;
    r.reason = reason;
    TerminateHeader& t = r.terminate;
    t.code = code;
    const bool local_catastrophic = code.etype == 0 && code.layer != Layer::llp;
    if (local_catastrophic) return r;
    if (message_size >= kSsnSize && message_size - kSsnSize <= 0xFFFF) {
        t.segment_length_valid = true;
        t.ddp_segment_length = uint16_t(message_size - kSsnSize);
    }
    if (!seg) return r;
    t.ddp = seg->hdr;
    const DdpHeader& h = seg->hdr;
    if (code.layer == Layer::rdmap && !h.tagged && h.opcode == uint8_t(Opcode::read_request)) {
        auto rr = decode_read_request(seg->payload);
        if (rr) t.rdma = *rr;
    }
    return r;
}

// [to, to + len) inside [base, base + size), without overflow.
bool within(uint64_t base, uint64_t size, uint64_t to, uint64_t len) {
    return to >= base && to - base <= size && len <= size - (to - base);
}

std::string_view tagged_reason(TagFault f) {
    switch (f) {
    case TagFault::invalid_stag: return "STag unknown, key mismatch or invalidated (RFC 5041 §7.1 tagged 1)";
    case TagFault::not_associated: return "STag of another PD than the stream's (RFC 5041 §7.1 tagged 1)";
    case TagFault::access: return "region does not allow this placement (RFC 5041 §7.1 tagged 2)";
    case TagFault::below_base: return "TO below the region's base (RFC 5041 §7.1 tagged 3)";
    case TagFault::beyond_bound: return "TO + length beyond the region's bound (RFC 5041 §7.1 tagged 4)";
    case TagFault::to_wrap: return "TO + length wraps 64 bits (RFC 5041 §7.1 tagged 5)";
    case TagFault::none: break;
    }
    return "";
}

std::string_view source_reason(TagFault f) {
    switch (f) {
    case TagFault::invalid_stag: return "Read Request source STag invalid (RFC 5040 §7.2 4a)";
    case TagFault::not_associated: return "Read Request source STag of another PD (RFC 5040 §7.2 4b)";
    case TagFault::access: return "Read Request source region lacks remote read (RFC 5040 §4.8)";
    case TagFault::below_base: return "Read Request source TO below base (RFC 5040 §7.2 4c)";
    case TagFault::beyond_bound: return "Read Request source TO + size beyond bound (RFC 5040 §7.2 4d)";
    case TagFault::to_wrap: return "Read Request source TO + size wraps 64 bits (RFC 5040 §7.2 4e)";
    case TagFault::none: break;
    }
    return "";
}

std::string_view atomic_reason(TagFault f) {
    switch (f) {
    case TagFault::invalid_stag: return "Atomic Request STag invalid (RFC 7306 §5.2.1, RFC 5040 §7.2)";
    case TagFault::not_associated: return "Atomic Request STag of another PD (RFC 7306 §5.2.1, RFC 5040 §7.2)";
    case TagFault::access: return "Atomic Request target region lacks remote atomic access (RFC 7306 §5)";
    case TagFault::below_base: return "Atomic Request TO below base (RFC 5040 §7.2)";
    case TagFault::beyond_bound: return "Atomic Request TO + 8 beyond bound (RFC 5040 §7.2)";
    case TagFault::to_wrap: return "Atomic Request TO + 8 wraps 64 bits (RFC 5040 §7.2)";
    case TagFault::none: break;
    }
    return "";
}

Verdict check_write(const ReceiverState& st, const Segment& s, size_t size, uint64_t len) {
    Accepted a;
    a.segment = s;
    TagCheck c = check_tagged_sink(*st.stags, st.pd, s.hdr.stag, s.hdr.to, len, kRemoteWrite);
    if (!c.ok()) return reject(*c.error, tagged_reason(c.fault), &s, size);
    if (len) a.placement = Placement{c.address, uint32_t(len)};
    return a;
}

// The sink side of our own RDMA Read: the Response must fall inside one outstanding request's
// sink range (RFC 5040 §5.2.2 lets the sink validate STag, TO and length), and the sink region
// needs local write, as for any buffer the local ULP gave for an operation it started.
Verdict check_read_response(const ReceiverState& st, const Segment& s, size_t size, uint64_t len) {
    if (st.orq.empty())
        return reject(term::rdmap_unexpected_opcode, "Read Response with no RDMA Read outstanding (RFC 5040 §5.2.2)",
                      &s, size);
    Accepted a;
    a.segment = s;
    if (len == 0) return a; // RFC 5041 §5.2: STag and TO are not checked; pairs by delivery order
    bool stag_known = false;
    for (size_t i = 0; i < st.orq.size(); ++i) {
        const OutstandingRead& e = st.orq[i];
        if (e.sink_stag != s.hdr.stag) continue;
        stag_known = true;
        if (!within(e.sink_to, e.size, s.hdr.to, len)) continue;
        TagCheck c = check_tagged_sink(*st.stags, st.pd, s.hdr.stag, s.hdr.to, len, kLocalWrite);
        if (!c.ok()) return reject(*c.error, tagged_reason(c.fault), &s, size);
        a.placement = Placement{c.address, uint32_t(len)};
        a.orq_index = i;
        a.message_offset = uint32_t(s.hdr.to - e.sink_to);
        return a;
    }
    if (!stag_known)
        return reject(term::ddp_tagged_invalid_stag,
                      "Read Response STag is no outstanding Read's sink STag (RFC 5040 §5.2.2)", &s, size);
    return reject(term::ddp_tagged_base_bounds,
                  "Read Response outside the sink range its Read asked for (RFC 5040 §5.2.2)", &s, size);
}

// The untagged queue a message lands in: MSNs [first, first + available) have a buffer.
struct Window {
    uint32_t first;
    uint64_t available;
};

Window window_of(const ReceiverState& st, uint32_t qn) {
    switch (qn) {
    case kQnSend: return {st.recv_msn, st.recv.size()};
    case kQnReadRequest: return {st.read_msn, st.ird > st.reads_active ? st.ird - st.reads_active : 0u};
    case kQnTerminate: return {st.terminate_msn, st.terminate_seen ? 0u : 1u};
    default: return {st.atomic_msn, st.atomics.size()};
    }
}

Verdict check_send(const ReceiverState& st, const Segment& s, size_t size, uint32_t index, uint64_t len) {
    const DdpHeader& h = s.hdr;
    const uint64_t end = uint64_t(h.mo) + len;
    const RecvBuffer& b = st.recv[index];
    if (end > b.length)
        return reject(term::ddp_untagged_too_long,
                      "Send longer than the posted receive buffer (RFC 5041 §7.1 untagged 4, RFC 5040 §5.3)", &s, size);
    // RFC 5040 §5.3 / §7.2 items 4-5: checked when the message is complete; the caller
    // invalidates at delivery.
    if (h.last && opcode_invalidates(Opcode(h.opcode)))
        if (auto e = check_remote_invalidate(*st.stags, st.pd, h.inval_stag))
            return reject(*e,
                          *e == term::rdmap_invalid_stag
                              ? "Invalidate STag invalid (RFC 5040 §7.2 4)"
                              : "Invalidate STag not associated with this stream (RFC 5040 §5.3, §7.2 5)",
                          &s, size);
    Accepted a;
    a.segment = s;
    a.buffer_index = index;
    a.message_offset = h.mo;
    if (len) a.placement = Placement{b.addr + h.mo, uint32_t(len)};
    if (h.last) a.message_length = uint32_t(end);
    if (h.last && opcode_invalidates(Opcode(h.opcode))) a.invalidate_stag = h.inval_stag;
    return a;
}

// Read Requests, Atomic Requests and Atomic Responses are one segment at MO 0 holding exactly
// their header (RFC 5040 §4.4, RFC 7306 Fig. 4 and 6); what to say when one is not.
struct HeaderOnly {
    size_t size;
    std::string_view wrong_mo, too_long, incomplete;
};
constexpr HeaderOnly kReadRequestShape{kReadRequestHeaderSize,
                                      "Read Request segment at MO != 0 (RFC 5041 §7.1 untagged 3)",
                                      "Read Request longer than its 28-byte header (RFC 5040 §4.4)",
                                      "Read Request header incomplete (RFC 5040 §4.4)"};
constexpr HeaderOnly kAtomicRequestShape{kAtomicRequestHeaderSize,
                                         "Atomic Request segment at MO != 0 (RFC 5041 §7.1 untagged 3)",
                                         "Atomic Request longer than its 52-byte header (RFC 7306 §5.2.1)",
                                         "Atomic Request header incomplete (RFC 7306 §5.2.1)"};
constexpr HeaderOnly kAtomicResponseShape{kAtomicResponseHeaderSize,
                                          "Atomic Response segment at MO != 0 (RFC 5041 §7.1 untagged 3)",
                                          "Atomic Response longer than its 12-byte header (RFC 7306 §5.2.2)",
                                          "Atomic Response header incomplete (RFC 7306 §5.2.2)"};

std::optional<Rejected> check_shape(const Segment& s, size_t size, const HeaderOnly& shape) {
    const size_t len = s.payload.size();
    if (s.hdr.mo != 0) return reject(term::ddp_untagged_invalid_mo, shape.wrong_mo, &s, size);
    if (len > shape.size || (len == shape.size && !s.hdr.last))
        return reject(term::ddp_untagged_too_long, shape.too_long, &s, size);
    if (len < shape.size) return reject(term::rdmap_operation_unspecified, shape.incomplete, &s, size);
    return std::nullopt;
}

// Read Requests, atomics and Terminates are a single segment at MO 0 from any conforming sender:
// their headers (28; 52 and 12; at most 52 bytes) fit the 516-byte minimum segment of RFC 5043 §9.
Verdict check_read_request(const ReceiverState& st, const Segment& s, size_t size, uint32_t index) {
    if (auto r = check_shape(s, size, kReadRequestShape)) return *r;
    ReadRequestHeader rr = *decode_read_request(s.payload);
    TagCheck c = check_read_source(*st.stags, st.pd, rr);
    if (!c.ok()) return reject(*c.error, source_reason(c.fault), &s, size);
    Accepted a;
    a.segment = s;
    a.buffer_index = index;
    a.message_length = uint32_t(kReadRequestHeaderSize);
    a.read_request = rr;
    return a;
}

Verdict check_atomic_request(const ReceiverState& st, const Segment& s, size_t size, uint32_t index) {
    if (auto r = check_shape(s, size, kAtomicRequestShape)) return *r;
    const AtomicRequestHeader ar = *decode_atomic_request(s.payload);
    if (ar.aopcode != uint8_t(AtomicOp::fetch_add) && ar.aopcode != uint8_t(AtomicOp::cmp_swap))
        return reject(term::rdmap_operation_unspecified, "Atomic Request with an unsupported AOpCode (RFC 7306 §5.2.1 4)",
                      &s, size);
    TagCheck c = check_atomic_target(*st.stags, st.pd, ar);
    if (!c.ok())
        return reject(*c.error,
                      c.fault == TagFault::none ? "Atomic Request target not 64-bit aligned (RFC 7306 §8.2)"
                                                : atomic_reason(c.fault),
                      &s, size);
    Accepted a;
    a.segment = s;
    a.buffer_index = index;
    a.message_length = uint32_t(kAtomicRequestHeaderSize);
    a.atomic_request = ar;
    return a;
}

Verdict check_atomic_response(const ReceiverState& st, const Segment& s, size_t size, uint32_t index) {
    if (auto r = check_shape(s, size, kAtomicResponseShape)) return *r;
    const AtomicResponseHeader resp = *decode_atomic_response(s.payload);
    if (resp.request_id != st.atomics[index].request_id)
        return reject(term::rdmap_operation_unspecified,
                      "Atomic Response names another request than the one its MSN answers (RFC 7306 §5.2.2 7)", &s,
                      size);
    Accepted a;
    a.segment = s;
    a.buffer_index = index;
    a.message_length = uint32_t(kAtomicResponseHeaderSize);
    a.atomic_response = resp;
    return a;
}

Verdict check_terminate(const Segment& s, size_t size, uint32_t index) {
    const DdpHeader& h = s.hdr;
    if (h.mo != 0)
        return reject(term::ddp_untagged_invalid_mo, "Terminate segment at MO != 0 (RFC 5041 §7.1 untagged 3)", &s,
                      size);
    if (s.payload.size() > kTerminateHeaderMaxSize)
        return reject(term::ddp_untagged_too_long, "Terminate longer than its largest header (RFC 5040 §4.8)", &s, size);
    if (!h.last)
        return reject(term::rdmap_operation_unspecified, "Terminate split over segments (RFC 5040 §4.8)", &s, size);
    auto t = decode_terminate(s.payload);
    if (!t) return reject(term::rdmap_operation_unspecified, "Terminate header malformed (RFC 5040 §4.8)", &s, size);
    Accepted a;
    a.segment = s;
    a.buffer_index = index;
    a.message_length = uint32_t(s.payload.size());
    a.terminate = *t;
    return a;
}

Verdict check_untagged(const ReceiverState& st, const Segment& s, size_t size, uint64_t len) {
    const DdpHeader& h = s.hdr;
    const Opcode op = Opcode(h.opcode);
    // RFC 5041 §7.1 untagged 1; RFC 5040 Fig. 4 fixes one queue per opcode.
    if (h.qn > kQnAtomicResponse)
        return reject(term::ddp_untagged_invalid_qn,
                      "QN is none of RDMAP's queues 0-3 (RFC 5041 §7.1 untagged 1, RFC 7306 Fig. 2)", &s, size);
    if (h.qn != opcode_queue(op))
        return reject(term::ddp_untagged_invalid_qn, "QN is not the opcode's queue (RFC 5040 Fig. 4, RFC 7306 Fig. 2)",
                      &s, size);

    // RFC 5041 §7.1 untagged 2 and 5, also for zero-length messages (RFC 5040 §5.3: a zero-length
    // Send still consumes a buffer). Check 2 ("no buffer available") fails when the queue has no
    // buffer at all; check 5 when it has some but the MSN lies outside [first, last] of them.
    const Window w = window_of(st, h.qn);
    if (w.available == 0)
        return reject(term::ddp_untagged_no_buffer, "no buffer available on the queue (RFC 5041 §7.1 untagged 2)", &s,
                      size);
    const uint32_t index = h.msn - w.first; // modulo 2^32: MSNs wrap (RFC 5041 §4.3)
    if (index >= w.available)
        return reject(term::ddp_untagged_msn_range,
                      index >= 0x80000000u ? "MSN below the first available buffer (RFC 5041 §7.1 untagged 5)"
                                           : "MSN beyond the last available buffer (RFC 5041 §7.1 untagged 5)",
                      &s, size);

    // RFC 5041 §7.1 untagged 3. An MO is invalid in itself when no DDP message could reach it;
    // running past the posted buffer is "too long" (check 4), whichever segment shows it first.
    if (uint64_t(h.mo) + len > kMaxMessageLength)
        return reject(term::ddp_untagged_invalid_mo, "MO + payload reaches 2^32 (RFC 5041 §5.2, §7.1 untagged 3)", &s,
                      size);

    switch (op) {
    case Opcode::read_request: return check_read_request(st, s, size, index);
    case Opcode::terminate: return check_terminate(s, size, index);
    case Opcode::atomic_request: return check_atomic_request(st, s, size, index);
    case Opcode::atomic_response: return check_atomic_response(st, s, size, index);
    default: return check_send(st, s, size, index, len);
    }
}

// The checks common to both entry points; `len` is the payload length, which for data opcodes
// may be known before the payload itself has been read.
Verdict check_segment(const ReceiverState& st, const Segment& s, size_t size, uint64_t len) {
    const DdpHeader& h = s.hdr;
    // RFC 5043 §9 MUST reject oversized segments; no RFC names a code for it.
    if (size > st.max_message)
        return reject(term::rdmap_operation_unspecified, "segment larger than the adaptation's maximum (RFC 5043 §9)",
                      &s, size);
    if (h.ddp_version != kDdpVersion)
        return reject(h.tagged ? term::ddp_tagged_invalid_version : term::ddp_untagged_invalid_version,
                      "DDP version is not 1 (RFC 5041 §4.1)", &s, size);
    if (h.rdmap_version != kRdmapVersion)
        return reject(term::rdmap_invalid_version, "RDMAP version is not 1 (RFC 5040 §4.1, §7.2 3)", &s, size);
    if (!opcode_known(h.opcode))
        return reject(term::rdmap_unexpected_opcode, "reserved opcode (RFC 5040 Fig. 4, §7.2 2)", &s, size);
    const Opcode op = Opcode(h.opcode);
    if (opcode_tagged(op) != h.tagged)
        return reject(term::rdmap_unexpected_opcode, "T flag contradicts the opcode (RFC 5040 Fig. 4)", &s, size);
    switch (op) {
    case Opcode::rdma_write: return check_write(st, s, size, len);
    case Opcode::read_response: return check_read_response(st, s, size, len);
    default: return check_untagged(st, s, size, len);
    }
}

} // namespace

Verdict validate_segment(const ReceiverState& st, std::span<const uint8_t> message) {
    auto decoded = decode_segment(message);
    if (!decoded)
        return reject(term::rdmap_operation_unspecified, "message shorter than DDP-SSN + DDP header (RFC 5043 §5.2.2)",
                      nullptr, message.size());
    return check_segment(st, *decoded, message.size(), decoded->payload.size());
}

bool payload_is_data(const DdpHeader& h) {
    return opcode_known(h.opcode) && h.opcode != uint8_t(Opcode::read_request) &&
           h.opcode != uint8_t(Opcode::terminate) && h.opcode != uint8_t(Opcode::atomic_request) &&
           h.opcode != uint8_t(Opcode::atomic_response);
}

TagCheck check_atomic_target(const StagTable& t, PdHandle stream_pd, const AtomicRequestHeader& h) {
    TagCheck c = t.classify(stream_pd, h.stag, h.to, 8, kRemoteAtomic);
    if (c.fault != TagFault::none)
        c.error = rdmap_protection_code(c.fault);
    else if (c.address % 8 != 0)
        c.error = term::rdmap_catastrophic_stream;
    return c;
}

Verdict validate_segment_head(const ReceiverState& st, const Segment& head, uint64_t payload_length) {
    if (!payload_is_data(head.hdr))
        throw sctpm::Error("iwarp: validate_segment_head needs the whole message for " +
                           std::string(opcode_name(head.hdr.opcode)));
    const uint64_t size = kSsnSize + head.hdr.size() + payload_length;
    Segment s = head;
    s.payload = {};
    return check_segment(st, s, size_t(size), payload_length);
}

} // namespace iwarp
