// SPDX-License-Identifier: BSD-3-Clause
// Wire formats of RFC 5040/5041/5043/6581: exact bytes, round trips, truncation naming the field.
#include "error.hpp"
#include "wire.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace iwarp;

namespace {

std::vector<uint8_t> bytes(std::initializer_list<int> v) { return std::vector<uint8_t>(v.begin(), v.end()); }

std::vector<uint8_t> encoded(const DdpHeader& h) {
    std::vector<uint8_t> out(h.size());
    EXPECT_EQ(encode(h, out), h.size());
    return out;
}

} // namespace

TEST(WireConstants, AdaptationValuesOfRfc5043) {
    EXPECT_EQ(kAdaptationParamType, 0xC006);
    EXPECT_EQ(kAdaptationIndicationDdp, 0x00000001u);
    EXPECT_EQ(kPpidDdpSegment, 16u);
    EXPECT_EQ(kPpidSessionControl, 17u);
    EXPECT_EQ(kMinSegmentLimit, kSsnSize + 2 + kMaxPrivateData);
    EXPECT_EQ(kTerminateHeaderMaxSize, 52u);
}

// RFC 5040 §4.1 Fig. 4: the control bytes of single-segment messages (T, L, DV=1, RV=1, opcode).
TEST(WireDdpHeader, ControlBytesPerOpcode) {
    struct Row {
        Opcode op;
        uint8_t b0, b1;
    } rows[] = {
        {Opcode::rdma_write, 0xC1, 0x40},  {Opcode::read_request, 0x41, 0x41}, {Opcode::read_response, 0xC1, 0x42},
        {Opcode::send, 0x41, 0x43},        {Opcode::send_inv, 0x41, 0x44},     {Opcode::send_se, 0x41, 0x45},
        {Opcode::send_se_inv, 0x41, 0x46}, {Opcode::terminate, 0x41, 0x47},
        {Opcode::atomic_request, 0x41, 0x4A}, {Opcode::atomic_response, 0x41, 0x4B}, // RFC 7306 Fig. 2
    };
    for (const Row& r : rows) {
        SCOPED_TRACE(opcode_name(uint8_t(r.op)));
        DdpHeader h = opcode_tagged(r.op) ? make_tagged_header(r.op, 0, 0, true) : make_untagged_header(r.op, 1, 0, true);
        auto b = encoded(h);
        EXPECT_EQ(b[0], r.b0);
        EXPECT_EQ(b[1], r.b1);
        h.last = false;
        EXPECT_EQ(encoded(h)[0], r.b0 & ~0x40); // L cleared on non-last segments
    }
}

TEST(WireDdpHeader, OpcodeTable) {
    EXPECT_EQ(opcode_queue(Opcode::send), kQnSend);
    EXPECT_EQ(opcode_queue(Opcode::send_se_inv), kQnSend);
    EXPECT_EQ(opcode_queue(Opcode::read_request), kQnReadRequest);
    EXPECT_EQ(opcode_queue(Opcode::terminate), kQnTerminate);
    EXPECT_TRUE(opcode_invalidates(Opcode::send_inv));
    EXPECT_TRUE(opcode_invalidates(Opcode::send_se_inv));
    EXPECT_FALSE(opcode_invalidates(Opcode::send_se));
    EXPECT_EQ(opcode_queue(Opcode::atomic_request), kQnReadRequest); // RFC 7306 §5.2: with the Reads
    EXPECT_EQ(opcode_queue(Opcode::atomic_response), kQnAtomicResponse);
    for (int op = 0; op < 16; ++op) EXPECT_EQ(opcode_known(uint8_t(op)), op < 8 || op == 0xA || op == 0xB) << op;
    EXPECT_EQ(opcode_name(9), "reserved"); // Immediate Data with SE: not implemented
    EXPECT_EQ(opcode_name(0xA), "Atomic Request");
}

// RFC 7306 Fig. 4 and 6, field by field.
TEST(WireAtomic, RequestAndResponseLayout) {
    AtomicRequestHeader a;
    a.aopcode = uint8_t(AtomicOp::cmp_swap);
    a.request_id = 0x01020304;
    a.stag = 0x11223344;
    a.to = 0x1011121314151617ull;
    a.add_swap = 0x2021222324252627ull;
    a.add_swap_mask = 0x3031323334353637ull;
    a.compare = 0x4041424344454647ull;
    a.compare_mask = 0x5051525354555657ull;
    std::vector<uint8_t> b(kAtomicRequestHeaderSize);
    ASSERT_EQ(encode(a, b), 52u);
    EXPECT_EQ(std::vector<uint8_t>(b.begin(), b.begin() + 12), bytes({0, 0, 0, 2, 1, 2, 3, 4, 0x11, 0x22, 0x33, 0x44}));
    EXPECT_EQ(b[12], 0x10);
    EXPECT_EQ(b[20], 0x20);
    EXPECT_EQ(b[28], 0x30);
    EXPECT_EQ(b[36], 0x40);
    EXPECT_EQ(b[51], 0x57);
    auto d = decode_atomic_request(b);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(*d, a);
    b[0] = 0xAB; // reserved bits survive decoding, so encode(decode(bytes)) == bytes
    std::vector<uint8_t> again(kAtomicRequestHeaderSize);
    encode(*decode_atomic_request(b), again);
    EXPECT_EQ(again, b);
    for (size_t n = 0; n < kAtomicRequestHeaderSize; ++n)
        EXPECT_FALSE(decode_atomic_request(std::span(b.data(), n)).ok()) << n;
    EXPECT_EQ(decode_atomic_request(std::span(b.data(), 51)).error().field, "compare_mask");

    AtomicResponseHeader r{0xA1A2A3A4, 0x0102030405060708ull};
    std::vector<uint8_t> rb(kAtomicResponseHeaderSize);
    ASSERT_EQ(encode(r, rb), 12u);
    EXPECT_EQ(rb, bytes({0xA1, 0xA2, 0xA3, 0xA4, 1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(*decode_atomic_response(rb), r);
    EXPECT_EQ(decode_atomic_response(std::span(rb.data(), 11)).error().field, "original_remote_data");
}

namespace {
// RFC 7306 §5.1.1's FetchAdd pseudocode, bit by bit, as the reference.
uint64_t rfc_fetch_add(uint64_t original, uint64_t add, uint64_t mask) {
    uint64_t carry = 0, result = 0;
    for (unsigned bit = 0; bit < 64; ++bit) {
        const uint64_t loc = 1ull << bit;
        const uint64_t sum = carry + ((original & loc) >> bit) + ((add & loc) >> bit);
        carry = (sum & 2) >> 1;
        if (sum & 1) result |= loc;
        carry = carry && !(mask & loc);
    }
    return result;
}
} // namespace

TEST(WireAtomic, ResultFollowsTheRfcPseudocode) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    auto next = [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    AtomicRequestHeader fa; // FetchAdd
    for (int i = 0; i < 20000; ++i) {
        const uint64_t original = next(), add = next();
        const uint64_t masks[] = {0, ~0ull, next(), next() & next(), 1ull << (next() % 64), 0x8000000080000000ull};
        for (uint64_t mask : masks) {
            fa.add_swap = add;
            fa.add_swap_mask = mask;
            ASSERT_EQ(atomic_result(fa, original), rfc_fetch_add(original, add, mask))
                << std::hex << original << " + " << add << " mask " << mask;
        }
    }
    fa.add_swap = 1;
    fa.add_swap_mask = 0;
    EXPECT_EQ(atomic_result(fa, ~0ull), 0u); // one 64-bit field: wraps
    fa.add_swap_mask = 0x8000000080000000ull; // two 32-bit fields: the low carry is dropped
    EXPECT_EQ(atomic_result(fa, 0x00000001FFFFFFFFull), 0x0000000100000000ull);

    AtomicRequestHeader cs; // CmpSwap
    cs.aopcode = uint8_t(AtomicOp::cmp_swap);
    cs.compare = 5;
    cs.add_swap = 9;
    cs.add_swap_mask = ~0ull;
    EXPECT_EQ(atomic_result(cs, 5), 9u);
    EXPECT_EQ(atomic_result(cs, 6), 6u);
    cs.compare_mask = 0xFF; // compare the low byte only, swap the high half only
    cs.add_swap_mask = 0xFFFFFFFF00000000ull;
    cs.add_swap = 0x1234567800000000ull;
    EXPECT_EQ(atomic_result(cs, 0xAAAAAAAAAAAAAA05ull), 0x12345678AAAAAA05ull);
    EXPECT_EQ(atomic_result(cs, 0xAAAAAAAAAAAAAA06ull), 0xAAAAAAAAAAAAAA06ull);
    cs.aopcode = 1; // no such AOpCode: the validator refuses it before
    EXPECT_THROW(atomic_result(cs, 0), sctpm::Error);
}

TEST(WireDdpHeader, TaggedLayout) {
    auto b = encoded(make_tagged_header(Opcode::rdma_write, 0x11223344, 0x0102030405060708ull, true));
    EXPECT_EQ(b, bytes({0xC1, 0x40, 0x11, 0x22, 0x33, 0x44, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(WireDdpHeader, UntaggedLayout) {
    auto b = encoded(make_untagged_header(Opcode::send_inv, 0xA0B0C0D0, 0x01020304, false, 0xDEADBEEF));
    EXPECT_EQ(b, bytes({0x01, 0x44, 0xDE, 0xAD, 0xBE, 0xEF, 0, 0, 0, 0, 0xA0, 0xB0, 0xC0, 0xD0, 1, 2, 3, 4}));
}

// Every value of the two control bytes survives decode + encode, reserved bits included.
TEST(WireDdpHeader, EveryControlPairRoundTrips) {
    for (int b0 = 0; b0 < 256; ++b0)
        for (int b1 = 0; b1 < 256; ++b1) {
            std::vector<uint8_t> in(18);
            for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(0x5A + 7 * i);
            in[0] = uint8_t(b0);
            in[1] = uint8_t(b1);
            auto h = decode_ddp_header(in);
            ASSERT_TRUE(h) << b0 << "," << b1;
            auto out = encoded(*h);
            ASSERT_EQ(0, std::memcmp(out.data(), in.data(), out.size())) << b0 << "," << b1;
        }
}

TEST(WireDdpHeader, FieldsRoundTrip) {
    DdpHeader h = make_untagged_header(Opcode::terminate, 0xFFFFFFFF, 0x80000000, true);
    h.ddp_reserved = 0xF;
    h.rdmap_reserved = 0x3;
    h.ddp_version = 2;
    h.rdmap_version = 0;
    auto d = decode_ddp_header(encoded(h));
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, h);
    DdpHeader t = make_tagged_header(Opcode::read_response, 0xFFFFFFFF, ~0ull, false);
    auto dt = decode_ddp_header(encoded(t));
    ASSERT_TRUE(dt);
    EXPECT_EQ(*dt, t);
}

// A short buffer names the first field that does not fit.
TEST(WireDdpHeader, TruncationNamesTheField) {
    const auto tagged = encoded(make_tagged_header(Opcode::rdma_write, 1, 2, true));
    const auto untagged = encoded(make_untagged_header(Opcode::send, 1, 0, true));
    struct Row {
        const std::vector<uint8_t>* b;
        size_t len;
        const char* field;
    } rows[] = {
        {&tagged, 0, "ddp_control"},   {&tagged, 1, "rdmap_control"}, {&tagged, 2, "stag"},
        {&tagged, 5, "stag"},          {&tagged, 6, "to"},            {&tagged, 13, "to"},
        {&untagged, 2, "inval_stag"},  {&untagged, 6, "qn"},          {&untagged, 9, "qn"},
        {&untagged, 10, "msn"},        {&untagged, 14, "mo"},         {&untagged, 17, "mo"},
    };
    for (const Row& r : rows) {
        auto d = decode_ddp_header(std::span(r.b->data(), r.len));
        ASSERT_FALSE(d) << r.len;
        EXPECT_EQ(d.error().field, r.field) << r.len;
        EXPECT_EQ(d.error().problem, "truncated");
    }
    EXPECT_TRUE(decode_ddp_header(tagged));
    EXPECT_TRUE(decode_ddp_header(untagged));
}

TEST(WireDdpHeader, EncodeIntoSmallBufferThrows) {
    std::vector<uint8_t> out(13);
    EXPECT_THROW(encode(make_tagged_header(Opcode::rdma_write, 1, 2, true), out), sctpm::Error);
}

TEST(WireSegment, SsnLeadsAndPayloadFollows) {
    const std::vector<uint8_t> payload = {9, 8, 7};
    auto m = encode_segment(0xBEEF, make_untagged_header(Opcode::send, 5, 0, true), payload);
    ASSERT_EQ(m.size(), 2 + 18 + 3u);
    EXPECT_EQ(m[0], 0xBE);
    EXPECT_EQ(m[1], 0xEF);
    EXPECT_EQ(m[2], 0x41);
    auto s = decode_segment(m);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->ssn, 0xBEEF);
    EXPECT_EQ(s->hdr.msn, 5u);
    EXPECT_EQ(std::vector<uint8_t>(s->payload.begin(), s->payload.end()), payload);
}

TEST(WireSegment, Truncation) {
    EXPECT_EQ(decode_segment(bytes({})).error().field, "ddp_ssn");
    EXPECT_EQ(decode_segment(bytes({0})).error().field, "ddp_ssn");
    EXPECT_EQ(decode_segment(bytes({0, 0})).error().field, "ddp_control");
    EXPECT_EQ(decode_segment(bytes({0, 0, 0xC1, 0x40, 0, 0, 0, 1})).error().field, "to");
    auto empty = decode_segment(encode_segment(1, make_tagged_header(Opcode::rdma_write, 1, 0, true), {}));
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->payload.empty());
}

// RFC 5041 §5.2's example: 2048 bytes at TO 16384 with MULPDU 1500 make segments of 1486 and 562
// bytes at TO 16384 and 17870; the untagged one makes 1482 and 566 at MO 0 and 1482.
TEST(WireSegment, Rfc5041SegmentationExample) {
    EXPECT_EQ(1500 - kTaggedHeaderSize, 1486u);
    EXPECT_EQ(16384 + 1486, 17870);
    EXPECT_EQ(1500 - kUntaggedHeaderSize, 1482u);
    EXPECT_EQ(2048 - 1482, 566);
}

TEST(WireReadRequest, LayoutAndRoundTrip) {
    ReadRequestHeader rr{0x01020304, 0x1112131415161718ull, 0x21222324, 0x31323334, 0x4142434445464748ull};
    std::vector<uint8_t> b(kReadRequestHeaderSize);
    EXPECT_EQ(encode(rr, b), 28u);
    EXPECT_EQ(b, bytes({1, 2, 3, 4, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x21, 0x22,
                        0x23, 0x24, 0x31, 0x32, 0x33, 0x34, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48}));
    auto d = decode_read_request(b);
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, rr);
    struct Row {
        size_t len;
        const char* field;
    } rows[] = {{0, "sink_stag"},       {3, "sink_stag"}, {4, "sink_to"},  {11, "sink_to"},
                {12, "rdma_read_size"}, {16, "src_stag"}, {20, "src_to"}, {27, "src_to"}};
    for (const Row& r : rows) EXPECT_EQ(decode_read_request(std::span(b.data(), r.len)).error().field, r.field);
}

// ---- Terminate ----------------------------------------------------------------------------------

TEST(WireTerminate, ControlOnly) {
    TerminateHeader t;
    t.code = term::rdmap_local_catastrophic;
    std::vector<uint8_t> b(t.size());
    EXPECT_EQ(encode(t, b), 4u);
    EXPECT_EQ(b, bytes({0x00, 0x00, 0x00, 0x00}));
}

// Layer | EType | code | M D R: DDP untagged "no buffer" with the DDP header and segment length.
TEST(WireTerminate, DdpErrorLayout) {
    TerminateHeader t;
    t.code = term::ddp_untagged_no_buffer;
    t.segment_length_valid = true;
    t.ddp_segment_length = 0x0123;
    t.ddp = make_untagged_header(Opcode::send, 7, 0, true);
    ASSERT_EQ(t.size(), 4 + 2 + 18u);
    std::vector<uint8_t> b(t.size());
    encode(t, b);
    EXPECT_EQ(b[0], 0x12);
    EXPECT_EQ(b[1], 0x02);
    EXPECT_EQ(b[2], 0xC0); // M and D
    EXPECT_EQ(b[3], 0x00);
    EXPECT_EQ(b[4], 0x01);
    EXPECT_EQ(b[5], 0x23);
    EXPECT_EQ(b[6], 0x41);
    EXPECT_EQ(b[7], 0x43);
    auto d = decode_terminate(b);
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, t);
}

TEST(WireTerminate, ReadRequestErrorCarriesBothHeaders) {
    TerminateHeader t;
    t.code = term::rdmap_to_wrap;
    t.segment_length_valid = true;
    t.ddp_segment_length = 46;
    t.ddp = make_untagged_header(Opcode::read_request, 3, 0, true);
    t.rdma = ReadRequestHeader{1, 2, 3, 4, ~0ull};
    ASSERT_EQ(t.size(), kTerminateHeaderMaxSize);
    std::vector<uint8_t> b(t.size());
    encode(t, b);
    EXPECT_EQ(b[0], 0x01);
    EXPECT_EQ(b[1], 0x04);
    EXPECT_EQ(b[2], 0xE0); // M, D, R
    auto d = decode_terminate(b);
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, t);
}

TEST(WireTerminate, TaggedDdpHeaderIs14Bytes) {
    TerminateHeader t;
    t.code = term::ddp_tagged_base_bounds;
    t.ddp = make_tagged_header(Opcode::rdma_write, 0xAABBCCDD, 99, true);
    EXPECT_EQ(t.size(), 4 + 2 + 14u);
    std::vector<uint8_t> b(t.size());
    encode(t, b);
    EXPECT_EQ(b[2], 0x40); // D without M: length present but not valid
    auto d = decode_terminate(b);
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, t);
}

TEST(WireTerminate, ReservedBitsAndUnknownCodesSurvive) {
    const auto b = bytes({0xF7, 0xAB, 0x1F, 0xFF});
    auto d = decode_terminate(b);
    ASSERT_TRUE(d);
    EXPECT_EQ(uint8_t(d->code.layer), 0xF);
    EXPECT_EQ(d->code.etype, 0x7);
    EXPECT_EQ(d->code.code, 0xAB);
    EXPECT_EQ(d->reserved, 0x1FFF);
    std::vector<uint8_t> out(d->size());
    encode(*d, out);
    EXPECT_EQ(out, b);
    EXPECT_NE(describe(d->code).find("unknown (15/7/0xab)"), std::string::npos);
}

// RFC 5040 §7.1 rule 1 speaks of absent headers "set to zero": trailing bytes are accepted.
TEST(WireTerminate, TrailingBytesIgnored) {
    std::vector<uint8_t> b(52, 0);
    b[0] = 0x00; // RDMAP local catastrophic, no flags
    auto d = decode_terminate(b);
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->ddp);
    EXPECT_FALSE(d->rdma);
}

TEST(WireTerminate, TruncationNamesTheField) {
    TerminateHeader t;
    t.code = term::rdmap_base_bounds;
    t.segment_length_valid = true;
    t.ddp = make_untagged_header(Opcode::read_request, 1, 0, true);
    t.rdma = ReadRequestHeader{};
    std::vector<uint8_t> b(t.size());
    encode(t, b);
    struct Row {
        size_t len;
        const char* field;
    } rows[] = {{0, "terminate_control"},      {3, "terminate_control"},      {4, "ddp_segment_length"},
                {5, "ddp_segment_length"},     {6, "terminated_ddp_header"},  {23, "terminated_ddp_header"},
                {24, "terminated_rdma_header"}, {51, "terminated_rdma_header"}};
    for (const Row& r : rows) {
        auto d = decode_terminate(std::span(b.data(), r.len));
        ASSERT_FALSE(d) << r.len;
        EXPECT_EQ(d.error().field, r.field) << r.len;
    }
    // The copied header's T bit decides its length: a tagged one needs only 14 bytes.
    b[6] |= 0x80;
    auto d = decode_terminate(std::span(b.data(), 4 + 2 + 14 + 28));
    ASSERT_TRUE(d);
    EXPECT_TRUE(d->ddp->tagged);
}

TEST(WireTerminate, Describe) {
    EXPECT_EQ(describe(term::ddp_untagged_no_buffer), "DDP/untagged/invalid MSN - no buffer available (1/2/0x02)");
    EXPECT_EQ(describe(term::rdmap_to_wrap), "RDMAP/remote protection/TO wrap (0/1/0x04)");
    // Local catastrophic has no code: any value names it.
    EXPECT_EQ(describe(TermCode{Layer::rdmap, 0, 0x42}), "RDMAP/local catastrophic (0/0/0x42)");
    EXPECT_EQ(describe(term::mpa_insufficient_ird), "LLP/MPA/insufficient IRD resources (2/0/0x06)");
}

// Every named code is distinct and has a name.
TEST(WireTerminate, CodeTableIsConsistent) {
    const TermCode all[] = {
        term::rdmap_invalid_stag, term::rdmap_base_bounds, term::rdmap_access_rights, term::rdmap_stag_not_associated,
        term::rdmap_to_wrap, term::rdmap_protection_cannot_invalidate, term::rdmap_protection_unspecified,
        term::rdmap_invalid_version, term::rdmap_unexpected_opcode, term::rdmap_catastrophic_stream,
        term::rdmap_catastrophic_global, term::rdmap_operation_cannot_invalidate, term::rdmap_operation_unspecified,
        term::ddp_local_catastrophic, term::ddp_tagged_invalid_stag, term::ddp_tagged_base_bounds,
        term::ddp_tagged_stag_not_associated, term::ddp_tagged_to_wrap, term::ddp_tagged_invalid_version,
        term::ddp_untagged_invalid_qn, term::ddp_untagged_no_buffer, term::ddp_untagged_msn_range,
        term::ddp_untagged_invalid_mo, term::ddp_untagged_too_long, term::ddp_untagged_invalid_version,
        term::mpa_tcp_closed, term::mpa_crc_error, term::mpa_marker_mismatch, term::mpa_invalid_request_reply,
        term::mpa_local_catastrophic, term::mpa_insufficient_ird, term::mpa_no_matching_rtr};
    for (size_t i = 0; i < std::size(all); ++i) {
        EXPECT_EQ(describe(all[i]).find("unknown"), std::string::npos) << i;
        for (size_t j = i + 1; j < std::size(all); ++j) EXPECT_FALSE(all[i] == all[j]) << i << " " << j;
    }
}

// ---- RFC 6581 IRD/ORD word ----------------------------------------------------------------------

TEST(WireIrdOrd, BitLayout) {
    IrdOrd v{true, true, false, true, 0x1234, 0x0ABC};
    const uint32_t w = encode_ird_ord(v);
    EXPECT_EQ(w, 0x80000000u | 0x40000000u | 0x1234u << 16 | 0x4000u | 0x0ABCu);
    EXPECT_EQ(decode_ird_ord(w), v);
    EXPECT_EQ(encode_ird_ord(IrdOrd{false, false, false, false, kIrdOrdMax, kIrdOrdMax}), 0x3FFF3FFFu);
}

TEST(WireIrdOrd, ClientServerClearsAndIgnoresRtrFlags) {
    IrdOrd v{false, true, true, true, 4, 4};
    EXPECT_EQ(encode_ird_ord(v), 0x00040004u); // §9.2: B, C, D MUST be 0 when A is 0
    IrdOrd d = decode_ird_ord(0x40048004u | 0x4000u);
    EXPECT_FALSE(d.rtr_send);
    EXPECT_FALSE(d.rtr_write);
    EXPECT_FALSE(d.rtr_read);
    EXPECT_EQ(d.ird, 4);
    EXPECT_EQ(d.ord, 4);
}

TEST(WireIrdOrd, FourteenBitsOnly) {
    EXPECT_THROW(encode_ird_ord(IrdOrd{false, false, false, false, 0x4000, 0}), sctpm::Error);
    EXPECT_THROW(encode_ird_ord(IrdOrd{false, false, false, false, 0, 0x4000}), sctpm::Error);
}

// ---- RFC 5043 session control -------------------------------------------------------------------

TEST(WireSessionControl, PlainInitiateLayout) {
    SessionControl m;
    m.ssn = 0;
    m.function = SessionFunction::initiate;
    m.private_data = {0xAA, 0xBB};
    auto b = encode_session_control(m);
    EXPECT_EQ(b, bytes({0, 0, 0, 1, 0xAA, 0xBB}));
    auto d = decode_session_control(b);
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, m);
}

TEST(WireSessionControl, EveryFunctionRoundTrips) {
    for (uint16_t fc = 1; fc <= 7; ++fc) {
        SessionControl m;
        m.ssn = uint16_t(fc * 1000);
        m.function = SessionFunction(fc);
        if (session_function_enhanced(m.function)) m.ird_ord = IrdOrd{true, false, true, false, 16, 8};
        if (m.function != SessionFunction::terminate) m.private_data.assign(fc * 10, uint8_t(fc));
        auto b = encode_session_control(m);
        EXPECT_EQ(b.size(), 4 + (m.ird_ord ? 4u : 0u) + m.private_data.size());
        auto d = decode_session_control(b);
        ASSERT_TRUE(d) << fc << " " << d.error().text();
        EXPECT_EQ(*d, m) << fc;
    }
}

TEST(WireSessionControl, EnhancedWordLeadsPrivateData) {
    SessionControl m;
    m.function = SessionFunction::enhanced_accept;
    m.ird_ord = IrdOrd{false, false, false, false, 2, 3};
    m.private_data = {0x55};
    auto b = encode_session_control(m);
    EXPECT_EQ(b, bytes({0, 0, 0, 6, 0x00, 0x02, 0x00, 0x03, 0x55}));
}

// 512 bytes of private data at most, the RFC 6581 word included.
TEST(WireSessionControl, PrivateDataLimit) {
    SessionControl m;
    m.function = SessionFunction::accept;
    m.private_data.assign(512, 1);
    EXPECT_TRUE(decode_session_control(encode_session_control(m)));
    m.private_data.push_back(1);
    EXPECT_THROW(encode_session_control(m), sctpm::Error);
    m.function = SessionFunction::enhanced_initiate;
    m.ird_ord = IrdOrd{};
    m.private_data.assign(508, 1);
    auto b = encode_session_control(m);
    EXPECT_EQ(b.size(), kMinSegmentLimit);
    m.private_data.push_back(1);
    EXPECT_THROW(encode_session_control(m), sctpm::Error);
}

TEST(WireSessionControl, EncodeMisuseThrows) {
    SessionControl m;
    m.function = SessionFunction::terminate;
    m.private_data = {1};
    EXPECT_THROW(encode_session_control(m), sctpm::Error);
    m.private_data.clear();
    m.ird_ord = IrdOrd{};
    EXPECT_THROW(encode_session_control(m), sctpm::Error); // word without an enhanced code
    m.function = SessionFunction::enhanced_reject;
    m.ird_ord.reset();
    EXPECT_THROW(encode_session_control(m), sctpm::Error); // enhanced code without the word
    m.function = SessionFunction(8);
    EXPECT_THROW(encode_session_control(m), sctpm::Error);
}

TEST(WireSessionControl, DecodeErrorsNameTheField) {
    std::vector<uint8_t> too_long(4 + 513, 0);
    too_long[3] = 2;
    struct Row {
        std::vector<uint8_t> b;
        const char* field;
        const char* problem;
    } rows[] = {
        {bytes({}), "ddp_ssn", "truncated"},
        {bytes({0}), "ddp_ssn", "truncated"},
        {bytes({0, 0, 0}), "function_code", "truncated"},
        {bytes({0, 0, 0, 0}), "function_code", "unknown value"},
        {bytes({0, 0, 0, 8}), "function_code", "unknown value"},
        {bytes({0, 0, 1, 1}), "function_code", "unknown value"},
        {too_long, "private_data", "longer than 512 bytes"},
        {bytes({0, 0, 0, 4, 0}), "private_data", "not allowed on Terminate"},
        {bytes({0, 0, 0, 5}), "ird_ord", "truncated"},
        {bytes({0, 0, 0, 6, 0, 0, 0}), "ird_ord", "truncated"},
        {bytes({0, 0, 0, 7, 0}), "ird_ord", "truncated"},
    };
    for (const Row& r : rows) {
        auto d = decode_session_control(r.b);
        ASSERT_FALSE(d) << r.field;
        EXPECT_EQ(d.error().field, r.field);
        EXPECT_EQ(d.error().problem, r.problem);
    }
    EXPECT_TRUE(decode_session_control(bytes({0, 0, 0, 4})));         // Terminate: no private data
    EXPECT_TRUE(decode_session_control(bytes({0, 0, 0, 3})));         // Reject: private data may be empty
    EXPECT_TRUE(decode_session_control(bytes({0, 0, 0, 7, 0, 0, 0, 0}))); // Enhanced Reject: the word only
}
