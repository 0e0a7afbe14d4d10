// SPDX-License-Identifier: BSD-3-Clause
// Receiver checks: one row per check with the exact Terminate (layer/type/code, M/D/R), then the
// segments that must be accepted and where they are placed.
#include "validate.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

using namespace iwarp;

namespace {

constexpr uint64_t kTop = std::numeric_limits<uint64_t>::max();

struct Rx {
    StagTable t{99};
    PdHandle pd = t.alloc_pd();
    PdHandle other_pd = t.alloc_pd();
    uint32_t sink = t.register_region(pd, 0x10000, 0x1000, kLocalWrite | kRemoteWrite);  // RDMA Write target
    uint32_t source = t.register_region(pd, 0x20000, 0x1000, kRemoteRead);               // Read source
    uint32_t local = t.register_region(pd, 0x30000, 0x1000, kLocalWrite);                // our Read sink
    uint32_t foreign = t.register_region(other_pd, 0x40000, 0x1000, kLocalWrite | kRemoteWrite | kRemoteRead);
    uint32_t inv_target = t.register_region(pd, 0x50000, 0x100, kLocalWrite | kRemoteWrite);
    uint32_t counter = t.register_region(pd, 0x60000, 0x100, kLocalWrite | kRemoteAtomic); // atomics' target
    ReceiverState st;

    Rx() {
        st.stags = &t;
        st.pd = pd;
        st.recv_msn = 1;
        st.recv = {{0x70000, 100}, {0x71000, 100}, {0x72000, 100}}; // MSN 1, 2, 3
        st.ird = 2;
        st.orq = {{local, 0x30000, 0x100}};
        st.atomics = {{77}}; // one Atomic Request of ours outstanding, answered by MSN 1 on QN 3
    }
};

std::vector<uint8_t> seg(const DdpHeader& h, size_t payload_len) {
    return encode_segment(7, h, std::vector<uint8_t>(payload_len, 0xAB));
}

std::vector<uint8_t> send(uint32_t msn, uint32_t mo, size_t len, bool last = true) {
    return seg(make_untagged_header(Opcode::send, msn, mo, last), len);
}

std::vector<uint8_t> write(uint32_t stag, uint64_t to, size_t len) {
    return seg(make_tagged_header(Opcode::rdma_write, stag, to, true), len);
}

std::vector<uint8_t> read_response(uint32_t stag, uint64_t to, size_t len, bool last = true) {
    return seg(make_tagged_header(Opcode::read_response, stag, to, last), len);
}

std::vector<uint8_t> read_request(uint32_t msn, const ReadRequestHeader& rr, DdpHeader h = {}) {
    if (h.opcode == 0) h = make_untagged_header(Opcode::read_request, msn, 0, true);
    std::vector<uint8_t> payload(kReadRequestHeaderSize);
    encode(rr, payload);
    return encode_segment(7, h, payload);
}

AtomicRequestHeader fetch_add(uint32_t stag, uint64_t to, uint8_t aopcode = uint8_t(AtomicOp::fetch_add)) {
    AtomicRequestHeader a;
    a.aopcode = aopcode;
    a.request_id = 5;
    a.stag = stag;
    a.to = to;
    a.add_swap = 1;
    return a;
}

std::vector<uint8_t> atomic_request(uint32_t msn, const AtomicRequestHeader& ar, DdpHeader h = {}) {
    if (h.opcode == 0) h = make_untagged_header(Opcode::atomic_request, msn, 0, true);
    std::vector<uint8_t> payload(kAtomicRequestHeaderSize);
    encode(ar, payload);
    return encode_segment(7, h, payload);
}

std::vector<uint8_t> atomic_response(uint32_t msn, uint32_t request_id, DdpHeader h = {}) {
    if (h.opcode == 0) h = make_untagged_header(Opcode::atomic_response, msn, 0, true);
    std::vector<uint8_t> payload(kAtomicResponseHeaderSize);
    encode(AtomicResponseHeader{request_id, 42}, payload);
    return encode_segment(7, h, payload);
}

std::vector<uint8_t> terminate_msg(uint32_t msn, const TerminateHeader& t, uint32_t mo = 0, bool last = true) {
    std::vector<uint8_t> payload(t.size());
    encode(t, payload);
    return encode_segment(7, make_untagged_header(Opcode::terminate, msn, mo, last), payload);
}

TerminateHeader some_terminate() {
    TerminateHeader t;
    t.code = term::ddp_untagged_no_buffer;
    t.segment_length_valid = true;
    t.ddp_segment_length = 20;
    t.ddp = make_untagged_header(Opcode::send, 9, 0, true);
    return t;
}

DdpHeader with(DdpHeader h, const std::function<void(DdpHeader&)>& change) {
    change(h);
    return h;
}

struct Row {
    const char* name;
    std::function<std::vector<uint8_t>(Rx&)> message; // may adjust the receiver state first
    TermCode code;
    bool ddp_header;  // D: the offending DDP header is copied
    bool rdma_header; // R: the offending Read Request header is copied
};

const Row kRows[] = {
    // Framing (RFC 5043 §5.2, §9): no RFC names a code, so RDMAP remote operation / unspecified.
    {"empty_message", [](Rx&) { return std::vector<uint8_t>{}; }, term::rdmap_operation_unspecified, false, false},
    {"ssn_only", [](Rx&) { return std::vector<uint8_t>{0, 1}; }, term::rdmap_operation_unspecified, false, false},
    {"truncated_untagged_header", [](Rx&) { auto m = send(1, 0, 0); m.resize(12); return m; },
     term::rdmap_operation_unspecified, false, false},
    {"truncated_tagged_header", [](Rx& r) { auto m = write(r.sink, 0x10000, 0); m.resize(15); return m; },
     term::rdmap_operation_unspecified, false, false},
    {"larger_than_max_segment", [](Rx& r) { r.st.max_message = 100; return send(1, 0, 81); },
     term::rdmap_operation_unspecified, true, false},
    // Versions (RFC 5041 §4.1, RFC 5040 §4.1).
    {"ddp_version_0_tagged",
     [](Rx& r) { return seg(with(make_tagged_header(Opcode::rdma_write, r.sink, 0x10000, true), [](auto& h) { h.ddp_version = 0; }), 4); },
     term::ddp_tagged_invalid_version, true, false},
    {"ddp_version_2_untagged",
     [](Rx&) { return seg(with(make_untagged_header(Opcode::send, 1, 0, true), [](auto& h) { h.ddp_version = 2; }), 4); },
     term::ddp_untagged_invalid_version, true, false},
    {"rdmap_version_0",
     [](Rx&) { return seg(with(make_untagged_header(Opcode::send, 1, 0, true), [](auto& h) { h.rdmap_version = 0; }), 4); },
     term::rdmap_invalid_version, true, false},
    {"rdmap_version_3_on_read_request",
     [](Rx& r) {
         return read_request(1, {r.local, 0x30000, 8, r.source, 0x20000},
                             with(make_untagged_header(Opcode::read_request, 1, 0, true), [](auto& h) { h.rdmap_version = 3; }));
     },
     term::rdmap_invalid_version, true, true},
    // Opcodes (RFC 5040 Fig. 4, §7.2 2).
    {"reserved_opcode_8",
     [](Rx&) { return seg(with(make_untagged_header(Opcode::send, 1, 0, true), [](auto& h) { h.opcode = 8; }), 4); },
     term::rdmap_unexpected_opcode, true, false},
    {"reserved_opcode_15_tagged",
     [](Rx& r) { return seg(with(make_tagged_header(Opcode::rdma_write, r.sink, 0x10000, true), [](auto& h) { h.opcode = 15; }), 4); },
     term::rdmap_unexpected_opcode, true, false},
    {"send_marked_tagged",
     [](Rx& r) { return seg(with(make_tagged_header(Opcode::rdma_write, r.sink, 0x10000, true), [](auto& h) { h.opcode = 3; }), 4); },
     term::rdmap_unexpected_opcode, true, false},
    {"write_marked_untagged", [](Rx&) { return seg(make_untagged_header(Opcode::rdma_write, 1, 0, true), 4); },
     term::rdmap_unexpected_opcode, true, false},
    // RDMA Write: RFC 5041 §7.1 tagged checks, DDP codes.
    {"write_unknown_stag", [](Rx& r) { return write(r.sink ^ 0x01000000, 0x10000, 4); }, term::ddp_tagged_invalid_stag, true, false},
    {"write_wrong_key", [](Rx& r) { return write(r.sink ^ 0x1, 0x10000, 4); }, term::ddp_tagged_invalid_stag, true, false},
    {"write_invalidated_stag", [](Rx& r) { r.t.invalidate(r.sink); return write(r.sink, 0x10000, 4); },
     term::ddp_tagged_invalid_stag, true, false},
    {"write_other_pd", [](Rx& r) { return write(r.foreign, 0x40000, 4); }, term::ddp_tagged_stag_not_associated, true, false},
    {"write_without_remote_write", [](Rx& r) { return write(r.source, 0x20000, 4); }, term::ddp_tagged_invalid_stag, true, false},
    {"write_below_base", [](Rx& r) { return write(r.sink, 0xFFFF, 4); }, term::ddp_tagged_base_bounds, true, false},
    {"write_beyond_bound", [](Rx& r) { return write(r.sink, 0x10FFD, 4); }, term::ddp_tagged_base_bounds, true, false},
    {"write_to_wrap", [](Rx& r) { return write(r.sink, kTop - 5, 10); }, term::ddp_tagged_to_wrap, true, false},
    // RDMA Read Response at the data sink (RFC 5040 §5.2.2).
    {"read_response_nothing_outstanding", [](Rx& r) { r.st.orq.clear(); return read_response(r.local, 0x30000, 4); },
     term::rdmap_unexpected_opcode, true, false},
    {"read_response_wrong_stag", [](Rx& r) { return read_response(r.sink, 0x10000, 4); }, term::ddp_tagged_invalid_stag, true, false},
    {"read_response_outside_request", [](Rx& r) { return read_response(r.local, 0x300F0, 0x20); },
     term::ddp_tagged_base_bounds, true, false},
    {"read_response_sink_without_local_write",
     [](Rx& r) { r.st.orq = {{r.source, 0x20000, 0x100}}; return read_response(r.source, 0x20000, 4); },
     term::ddp_tagged_invalid_stag, true, false},
    // Untagged: RFC 5041 §7.1 untagged checks, DDP codes.
    {"qn_3", [](Rx&) { return seg(with(make_untagged_header(Opcode::send, 1, 0, true), [](auto& h) { h.qn = 3; }), 4); },
     term::ddp_untagged_invalid_qn, true, false},
    {"send_on_read_queue",
     [](Rx&) { return seg(with(make_untagged_header(Opcode::send, 1, 0, true), [](auto& h) { h.qn = kQnReadRequest; }), 4); },
     term::ddp_untagged_invalid_qn, true, false},
    {"read_request_on_send_queue",
     [](Rx& r) {
         return read_request(1, {r.local, 0x30000, 8, r.source, 0x20000},
                             with(make_untagged_header(Opcode::read_request, 1, 0, true), [](auto& h) { h.qn = kQnSend; }));
     },
     term::ddp_untagged_invalid_qn, true, false},
    {"no_receive_posted", [](Rx& r) { r.st.recv.clear(); return send(1, 0, 4); }, term::ddp_untagged_no_buffer, true, false},
    {"zero_length_send_no_receive", [](Rx& r) { r.st.recv.clear(); return send(1, 0, 0); }, term::ddp_untagged_no_buffer, true, false},
    {"msn_too_low", [](Rx&) { return send(0, 0, 4); }, term::ddp_untagged_msn_range, true, false},
    {"msn_too_high", [](Rx&) { return send(4, 0, 4); }, term::ddp_untagged_msn_range, true, false},
    {"msn_half_window_away", [](Rx&) { return send(0x80000001u, 0, 4); }, term::ddp_untagged_msn_range, true, false},
    {"msn_range_across_wrap", [](Rx& r) { r.st.recv_msn = 0xFFFFFFFF; return send(2, 0, 4); }, term::ddp_untagged_msn_range, true, false},
    {"mo_reaches_2_pow_32", [](Rx&) { return send(1, 0xFFFFFFF0u, 0x10, false); }, term::ddp_untagged_invalid_mo, true, false},
    {"send_too_long_first_segment", [](Rx&) { return send(1, 0, 101); }, term::ddp_untagged_too_long, true, false},
    {"send_too_long_later_segment", [](Rx&) { return send(2, 100, 1, false); }, term::ddp_untagged_too_long, true, false},
    // Send with Invalidate (RFC 5040 §5.3, §7.2 4-5): RDMAP remote protection, no RDMA header.
    {"send_inv_invalid_stag",
     [](Rx& r) { return seg(make_untagged_header(Opcode::send_inv, 1, 0, true, r.inv_target ^ 0x1), 4); },
     term::rdmap_invalid_stag, true, false},
    {"send_se_inv_other_pd",
     [](Rx& r) { return seg(make_untagged_header(Opcode::send_se_inv, 1, 0, true, r.foreign), 4); },
     term::rdmap_protection_cannot_invalidate, true, false},
    // Read Request at the data source: DDP checks on QN 1 (IRD slots), then RFC 5040 §7.2 4a-e.
    {"read_request_beyond_ird", [](Rx& r) { r.st.reads_active = 2; return read_request(1, {r.local, 0, 8, r.source, 0x20000}); },
     term::ddp_untagged_no_buffer, true, false},
    {"read_request_ird_0", [](Rx& r) { r.st.ird = 0; return read_request(1, {r.local, 0, 8, r.source, 0x20000}); },
     term::ddp_untagged_no_buffer, true, false},
    {"read_request_msn_past_ird", [](Rx& r) { return read_request(3, {r.local, 0, 8, r.source, 0x20000}); },
     term::ddp_untagged_msn_range, true, false},
    {"read_request_at_mo_4",
     [](Rx& r) {
         return read_request(1, {r.local, 0, 8, r.source, 0x20000}, make_untagged_header(Opcode::read_request, 1, 4, true));
     },
     term::ddp_untagged_invalid_mo, true, false},
    {"read_request_29_bytes",
     [](Rx&) { return seg(make_untagged_header(Opcode::read_request, 1, 0, true), kReadRequestHeaderSize + 1); },
     term::ddp_untagged_too_long, true, false},
    {"read_request_more_to_follow",
     [](Rx& r) {
         return read_request(1, {r.local, 0, 8, r.source, 0x20000}, make_untagged_header(Opcode::read_request, 1, 0, false));
     },
     term::ddp_untagged_too_long, true, false},
    {"read_request_27_bytes",
     [](Rx&) { return seg(make_untagged_header(Opcode::read_request, 1, 0, true), kReadRequestHeaderSize - 1); },
     term::rdmap_operation_unspecified, true, false},
    {"read_source_invalid_stag", [](Rx& r) { return read_request(1, {r.local, 0, 8, r.source ^ 0x1, 0x20000}); },
     term::rdmap_invalid_stag, true, true},
    {"read_source_other_pd", [](Rx& r) { return read_request(2, {r.local, 0, 8, r.foreign, 0x40000}); },
     term::rdmap_stag_not_associated, true, true},
    {"read_source_without_remote_read", [](Rx& r) { return read_request(1, {r.local, 0, 8, r.sink, 0x10000}); },
     term::rdmap_access_rights, true, true},
    {"read_source_below_base", [](Rx& r) { return read_request(1, {r.local, 0, 8, r.source, 0x1FFFF}); },
     term::rdmap_base_bounds, true, true},
    {"read_source_beyond_bound", [](Rx& r) { return read_request(1, {r.local, 0, 0x1001, r.source, 0x20000}); },
     term::rdmap_base_bounds, true, true},
    {"read_source_to_wrap", [](Rx& r) { return read_request(1, {r.local, 0, 0xFFFFFFFF, r.source, kTop - 0x10}); },
     term::rdmap_to_wrap, true, true},
    // Terminate (RFC 5040 §4.8, §5.4): one per stream, single segment.
    {"second_terminate", [](Rx& r) { r.st.terminate_seen = true; return terminate_msg(1, some_terminate()); },
     term::ddp_untagged_no_buffer, true, false},
    {"terminate_msn_2", [](Rx&) { return terminate_msg(2, some_terminate()); }, term::ddp_untagged_msn_range, true, false},
    {"terminate_at_mo_1", [](Rx&) { return terminate_msg(1, some_terminate(), 1); }, term::ddp_untagged_invalid_mo, true, false},
    {"terminate_too_long", [](Rx&) { return seg(make_untagged_header(Opcode::terminate, 1, 0, true), 53); },
     term::ddp_untagged_too_long, true, false},
    {"terminate_not_last", [](Rx&) { return terminate_msg(1, some_terminate(), 0, false); },
     term::rdmap_operation_unspecified, true, false},
    {"terminate_malformed", [](Rx&) { return seg(make_untagged_header(Opcode::terminate, 1, 0, true), 2); },
     term::rdmap_operation_unspecified, true, false},
    {"qn_4", [](Rx&) { return seg(with(make_untagged_header(Opcode::send, 1, 0, true), [](auto& h) { h.qn = 4; }), 4); },
     term::ddp_untagged_invalid_qn, true, false},
    // Atomic Request (RFC 7306 §5.2.1, §8.2): QN 1 with the Read Requests, then its target.
    {"atomic_request_beyond_ird", [](Rx& r) { r.st.reads_active = 2; return atomic_request(1, fetch_add(r.counter, 0x60000)); },
     term::ddp_untagged_no_buffer, true, false},
    {"atomic_request_msn_past_ird", [](Rx& r) { return atomic_request(3, fetch_add(r.counter, 0x60000)); },
     term::ddp_untagged_msn_range, true, false},
    {"atomic_request_on_qn_3",
     [](Rx& r) {
         return atomic_request(1, fetch_add(r.counter, 0x60000),
                               with(make_untagged_header(Opcode::atomic_request, 1, 0, true), [](auto& h) { h.qn = 3; }));
     },
     term::ddp_untagged_invalid_qn, true, false},
    {"atomic_request_at_mo_8",
     [](Rx& r) { return atomic_request(1, fetch_add(r.counter, 0x60000), make_untagged_header(Opcode::atomic_request, 1, 8, true)); },
     term::ddp_untagged_invalid_mo, true, false},
    {"atomic_request_53_bytes",
     [](Rx&) { return seg(make_untagged_header(Opcode::atomic_request, 1, 0, true), kAtomicRequestHeaderSize + 1); },
     term::ddp_untagged_too_long, true, false},
    {"atomic_request_more_to_follow",
     [](Rx& r) { return atomic_request(1, fetch_add(r.counter, 0x60000), make_untagged_header(Opcode::atomic_request, 1, 0, false)); },
     term::ddp_untagged_too_long, true, false},
    {"atomic_request_51_bytes",
     [](Rx&) { return seg(make_untagged_header(Opcode::atomic_request, 1, 0, true), kAtomicRequestHeaderSize - 1); },
     term::rdmap_operation_unspecified, true, false},
    {"atomic_request_aopcode_1", [](Rx& r) { return atomic_request(1, fetch_add(r.counter, 0x60000, 1)); },
     term::rdmap_operation_unspecified, true, false},
    {"atomic_invalid_stag", [](Rx& r) { return atomic_request(1, fetch_add(r.counter ^ 0x1, 0x60000)); },
     term::rdmap_invalid_stag, true, false},
    {"atomic_other_pd", [](Rx& r) { return atomic_request(1, fetch_add(r.foreign, 0x40000)); },
     term::rdmap_stag_not_associated, true, false},
    {"atomic_without_remote_atomic", [](Rx& r) { return atomic_request(1, fetch_add(r.sink, 0x10000)); },
     term::rdmap_access_rights, true, false},
    {"atomic_beyond_bound", [](Rx& r) { return atomic_request(1, fetch_add(r.counter, 0x600FC)); },
     term::rdmap_base_bounds, true, false},
    {"atomic_misaligned", [](Rx& r) { return atomic_request(1, fetch_add(r.counter, 0x60004)); },
     term::rdmap_catastrophic_stream, true, false},
    // Atomic Response at the requester (RFC 7306 §5.2.2): QN 3, whose buffers are our requests.
    {"atomic_response_nothing_outstanding", [](Rx& r) { r.st.atomics.clear(); return atomic_response(1, 77); },
     term::ddp_untagged_no_buffer, true, false},
    {"atomic_response_msn_2", [](Rx&) { return atomic_response(2, 77); }, term::ddp_untagged_msn_range, true, false},
    {"atomic_response_other_request", [](Rx&) { return atomic_response(1, 78); }, term::rdmap_operation_unspecified, true,
     false},
    {"atomic_response_13_bytes",
     [](Rx&) { return seg(make_untagged_header(Opcode::atomic_response, 1, 0, true), kAtomicResponseHeaderSize + 1); },
     term::ddp_untagged_too_long, true, false},
    {"atomic_response_on_qn_1",
     [](Rx&) { return atomic_response(1, 77, with(make_untagged_header(Opcode::atomic_response, 1, 0, true), [](auto& h) { h.qn = 1; })); },
     term::ddp_untagged_invalid_qn, true, false},
    {"immediate_data_opcode_8_is_unexpected",
     [](Rx&) { return seg(with(make_untagged_header(Opcode::send, 1, 0, true), [](auto& h) { h.opcode = 8; }), 8); },
     term::rdmap_unexpected_opcode, true, false},
    {"terminate_on_send_queue",
     [](Rx&) { return seg(with(make_untagged_header(Opcode::terminate, 1, 0, true), [](auto& h) { h.qn = 0; }), 4); },
     term::ddp_untagged_invalid_qn, true, false},
};

class ReceiverChecks : public ::testing::TestWithParam<Row> {};

} // namespace

TEST_P(ReceiverChecks, TerminateMatchesTheRfc) {
    const Row& row = GetParam();
    Rx rx;
    const std::vector<uint8_t> m = row.message(rx);
    Verdict v = validate_segment(rx.st, m);
    ASSERT_TRUE(std::holds_alternative<Rejected>(v)) << "accepted";
    const Rejected& r = std::get<Rejected>(v);
    const TerminateHeader& t = r.terminate;
    EXPECT_EQ(t.code, row.code) << describe(t.code) << " — " << r.reason;
    EXPECT_FALSE(r.reason.empty());
    EXPECT_EQ(t.ddp.has_value(), row.ddp_header);
    EXPECT_EQ(t.rdma.has_value(), row.rdma_header);
    if (m.size() >= kSsnSize) {
        EXPECT_TRUE(t.segment_length_valid); // M: the length handed up is known
        EXPECT_EQ(t.ddp_segment_length, m.size() - kSsnSize);
    }
    auto s = decode_segment(m);
    if (t.ddp) {
        ASSERT_TRUE(s);
        EXPECT_EQ(*t.ddp, s->hdr);
    }
    if (t.rdma) {
        EXPECT_EQ(*t.rdma, *decode_read_request(s->payload));
    }
    // What we would send decodes back to itself.
    std::vector<uint8_t> bytes(t.size());
    encode(t, bytes);
    auto back = decode_terminate(bytes);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, t);
}

INSTANTIATE_TEST_SUITE_P(Rfc5040And5041, ReceiverChecks, ::testing::ValuesIn(kRows),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- accepted segments ------------------------------------------------------------------------

namespace {

Accepted accepted(const Rx& rx, const std::vector<uint8_t>& m) {
    Verdict v = validate_segment(rx.st, m);
    if (auto* r = std::get_if<Rejected>(&v)) {
        ADD_FAILURE() << "rejected: " << describe(r->terminate.code) << " — " << r->reason;
        return {};
    }
    return std::get<Accepted>(v);
}

} // namespace

TEST(ReceiverAccepts, WritePlacesAtTheRegionAddress) {
    Rx rx;
    Accepted a = accepted(rx, write(rx.sink, 0x10010, 32));
    ASSERT_TRUE(a.placement);
    EXPECT_EQ(a.placement->address, 0x10010u);
    EXPECT_EQ(a.placement->length, 32u);
    EXPECT_EQ(a.segment.payload.size(), 32u);
}

TEST(ReceiverAccepts, WriteFillsTheRegionExactly) {
    Rx rx;
    Accepted a = accepted(rx, write(rx.sink, 0x10000, 0x1000));
    ASSERT_TRUE(a.placement);
    EXPECT_EQ(a.placement->length, 0x1000u);
}

// RFC 5041 §5.2: a zero-length tagged segment's STag and TO MUST NOT be checked.
TEST(ReceiverAccepts, ZeroLengthWriteIsNotChecked) {
    Rx rx;
    Accepted a = accepted(rx, write(0xDEADBEEF, kTop, 0));
    EXPECT_FALSE(a.placement);
}

// RFC 5041 §5.2's example: 2048 bytes at TO 16384 over MULPDU 1500 (zero-based region).
TEST(ReceiverAccepts, Rfc5041TaggedSegmentationExample) {
    Rx rx;
    uint32_t zb = rx.t.register_region(rx.pd, 0x900000, 0x8000, kLocalWrite | kRemoteWrite, true);
    Accepted a = accepted(rx, encode_segment(1, make_tagged_header(Opcode::rdma_write, zb, 16384, false),
                                             std::vector<uint8_t>(1486)));
    Accepted b = accepted(rx, encode_segment(2, make_tagged_header(Opcode::rdma_write, zb, 17870, true),
                                             std::vector<uint8_t>(562)));
    EXPECT_EQ(a.placement->address, 0x900000u + 16384);
    EXPECT_EQ(b.placement->address, 0x900000u + 17870);
    EXPECT_EQ(b.placement->length, 562u);
}

TEST(ReceiverAccepts, SendPlacesIntoItsBuffer) {
    Rx rx;
    Accepted a = accepted(rx, send(1, 0, 60, false));
    EXPECT_EQ(a.buffer_index, 0u);
    EXPECT_EQ(a.placement->address, 0x70000u);
    EXPECT_FALSE(a.message_length);
    Accepted b = accepted(rx, send(1, 60, 40));
    EXPECT_EQ(b.placement->address, 0x70000u + 60);
    EXPECT_EQ(b.message_offset, 60u);
    EXPECT_EQ(b.message_length, 100u); // RFC 5041 §5.4: MO + payload of the last segment
}

// Segments may arrive ahead of earlier messages: any MSN in the posted window is placed.
TEST(ReceiverAccepts, MsnInsideTheWindow) {
    Rx rx;
    Accepted a = accepted(rx, send(3, 0, 10));
    EXPECT_EQ(a.buffer_index, 2u);
    EXPECT_EQ(a.placement->address, 0x72000u);
}

TEST(ReceiverAccepts, MsnWindowAcrossTheWrap) {
    Rx rx;
    rx.st.recv_msn = 0xFFFFFFFF; // buffers for MSN 0xFFFFFFFF, 0, 1 (RFC 5041 §4.3 wraps to 0)
    EXPECT_EQ(accepted(rx, send(0xFFFFFFFF, 0, 1)).buffer_index, 0u);
    EXPECT_EQ(accepted(rx, send(0, 0, 1)).buffer_index, 1u);
    EXPECT_EQ(accepted(rx, send(1, 0, 1)).buffer_index, 2u);
}

// RFC 5040 §5.3: a zero-length Send consumes a buffer and delivers length 0.
TEST(ReceiverAccepts, ZeroLengthSend) {
    Rx rx;
    Accepted a = accepted(rx, send(1, 0, 0));
    EXPECT_FALSE(a.placement);
    EXPECT_EQ(a.message_length, 0u);
}

TEST(ReceiverAccepts, SendFillsItsBufferExactly) {
    Rx rx;
    EXPECT_EQ(accepted(rx, send(2, 0, 100)).message_length, 100u);
}

TEST(ReceiverAccepts, SendWithInvalidateNamesTheStagOnItsLastSegment) {
    Rx rx;
    Accepted first = accepted(rx, seg(make_untagged_header(Opcode::send_inv, 1, 0, false, rx.inv_target), 10));
    EXPECT_FALSE(first.invalidate_stag);
    Accepted last = accepted(rx, seg(make_untagged_header(Opcode::send_inv, 1, 10, true, rx.inv_target), 10));
    EXPECT_EQ(last.invalidate_stag, rx.inv_target);
    EXPECT_TRUE(rx.t.find(rx.inv_target)->valid); // pure: the caller invalidates at delivery
}

TEST(ReceiverAccepts, ReadRequestGoesToRdmap) {
    Rx rx;
    const ReadRequestHeader rr{rx.local, 0x30000, 0x1000, rx.source, 0x20000};
    Accepted a = accepted(rx, read_request(2, rr));
    ASSERT_TRUE(a.read_request);
    EXPECT_EQ(*a.read_request, rr);
    EXPECT_EQ(a.buffer_index, 1u);
    EXPECT_FALSE(a.placement);
}

// RFC 5040 §5.2.1: a zero-size Read Request's source is not validated.
TEST(ReceiverAccepts, AtomicRequestGoesToRdmap) {
    Rx r;
    AtomicRequestHeader ar = fetch_add(r.counter, 0x600F8, uint8_t(AtomicOp::cmp_swap)); // the region's last word
    auto v = validate_segment(r.st, atomic_request(2, ar));
    ASSERT_TRUE(std::holds_alternative<Accepted>(v)) << std::get<Rejected>(v).reason;
    const Accepted& a = std::get<Accepted>(v);
    ASSERT_TRUE(a.atomic_request);
    EXPECT_EQ(*a.atomic_request, ar);
    EXPECT_EQ(a.buffer_index, 1u);
    EXPECT_FALSE(a.placement);
}

TEST(ReceiverAccepts, AtomicResponseAnswersItsRequest) {
    Rx r;
    r.st.atomics.push_back({78});
    auto v = validate_segment(r.st, atomic_response(2, 78));
    ASSERT_TRUE(std::holds_alternative<Accepted>(v)) << std::get<Rejected>(v).reason;
    const Accepted& a = std::get<Accepted>(v);
    ASSERT_TRUE(a.atomic_response);
    EXPECT_EQ(a.atomic_response->original, 42u);
    EXPECT_EQ(a.buffer_index, 1u);
}

TEST(ReceiverAccepts, ZeroSizeReadRequestIsNotChecked) {
    Rx rx;
    Accepted a = accepted(rx, read_request(1, {0, 0, 0, 0xDEADBEEF, kTop}));
    EXPECT_EQ(a.read_request->size, 0u);
}

TEST(ReceiverAccepts, ReadResponseMatchesItsRequest) {
    Rx rx;
    rx.st.orq.push_back({rx.local, 0x30800, 0x200});
    Accepted a = accepted(rx, read_response(rx.local, 0x30810, 0x10, false));
    EXPECT_EQ(a.orq_index, 1u);
    EXPECT_EQ(a.message_offset, 0x10u);
    EXPECT_EQ(a.placement->address, 0x30810u);
    Accepted b = accepted(rx, read_response(rx.local, 0x30000, 0x100));
    EXPECT_EQ(b.orq_index, 0u);
}

TEST(ReceiverAccepts, ZeroLengthReadResponse) {
    Rx rx;
    Accepted a = accepted(rx, read_response(0, 0, 0));
    EXPECT_FALSE(a.placement);
    EXPECT_FALSE(a.orq_index); // paired by delivery order
}

// A Terminate this receiver builds passes the peer's receiver checks.
TEST(ReceiverAccepts, OurTerminateIsValidAtThePeer) {
    Rx rx;
    rx.st.recv.clear();
    Verdict v = validate_segment(rx.st, send(1, 0, 4));
    const TerminateHeader t = std::get<Rejected>(v).terminate;
    Rx peer;
    Accepted a = accepted(peer, terminate_msg(1, t));
    ASSERT_TRUE(a.terminate);
    EXPECT_EQ(*a.terminate, t);
    EXPECT_EQ(a.terminate->code, term::ddp_untagged_no_buffer);
}

TEST(ReceiverAccepts, LargestTerminate) {
    Rx rx;
    Verdict v = validate_segment(rx.st, read_request(1, {rx.local, 0, 8, rx.source, 0x1FFFF}));
    const TerminateHeader t = std::get<Rejected>(v).terminate;
    EXPECT_EQ(t.size(), kTerminateHeaderMaxSize);
    Rx peer;
    EXPECT_EQ(*accepted(peer, terminate_msg(1, t)).terminate, t);
}

TEST(ReceiverAccepts, MaxMessageBoundary) {
    Rx rx;
    rx.st.max_message = 2 + 18 + 80;
    EXPECT_TRUE(std::holds_alternative<Accepted>(validate_segment(rx.st, send(1, 0, 80))));
    EXPECT_TRUE(std::holds_alternative<Rejected>(validate_segment(rx.st, send(1, 0, 81))));
}
