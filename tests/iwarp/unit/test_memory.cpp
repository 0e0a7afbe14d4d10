// SPDX-License-Identifier: BSD-3-Clause
// PD, memory regions, STag table and the tagged-buffer checks with their exact Terminate codes.
#include "error.hpp"
#include "memory.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <set>

using namespace iwarp;

namespace {

constexpr uint64_t kTop = std::numeric_limits<uint64_t>::max();

} // namespace

TEST(StagTable, StagsAreNonZeroUniqueAndRandomized) {
    StagTable a(1), b(2);
    PdHandle pa = a.alloc_pd(), pb = b.alloc_pd();
    std::set<uint32_t> seen;
    for (int i = 0; i < 1000; ++i) {
        uint32_t s = a.register_region(pa, 0x1000 * uint64_t(i + 1), 64, kLocalWrite);
        EXPECT_NE(stag_index(s), 0u);
        EXPECT_LT(stag_index(s), kStagIndexLimit);
        EXPECT_TRUE(seen.insert(stag_index(s)).second);
    }
    EXPECT_EQ(a.size(), 1000u);
    // Different seeds, different STags: not a counter.
    EXPECT_NE(a.register_region(pa, 1, 1, 0), b.register_region(pb, 1, 1, 0));
}

TEST(StagTable, SameSeedSameStags) {
    StagTable a(7), b(7);
    EXPECT_EQ(a.register_region(a.alloc_pd(), 64, 64, 0), b.register_region(b.alloc_pd(), 64, 64, 0));
}

TEST(StagTable, FindNeedsTheKey) {
    StagTable t(3);
    PdHandle pd = t.alloc_pd();
    uint32_t s = t.register_region(pd, 0x5000, 100, kLocalWrite | kRemoteWrite);
    const MemoryRegion* mr = t.find(s);
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(mr->stag, s);
    EXPECT_EQ(mr->pd, pd);
    EXPECT_EQ(mr->addr, 0x5000u);
    EXPECT_EQ(mr->to_base, 0x5000u);
    EXPECT_EQ(mr->length, 100u);
    EXPECT_TRUE(mr->valid);
    EXPECT_EQ(t.find(make_stag(stag_index(s), uint8_t(stag_key(s) + 1))), nullptr);
    EXPECT_EQ(t.find(0), nullptr);
}

TEST(StagTable, InvalidateAndDeregister) {
    StagTable t(4);
    PdHandle pd = t.alloc_pd();
    uint32_t s = t.register_region(pd, 0x5000, 100, kLocalWrite);
    EXPECT_FALSE(t.invalidate(s ^ 1)); // wrong key
    EXPECT_TRUE(t.invalidate(s));
    EXPECT_FALSE(t.invalidate(s)); // already invalid
    ASSERT_NE(t.find(s), nullptr);
    EXPECT_FALSE(t.find(s)->valid);
    t.deregister(s);
    EXPECT_EQ(t.find(s), nullptr);
    EXPECT_THROW(t.deregister(s), sctpm::Error);
}

TEST(StagTable, MisuseThrows) {
    StagTable t(5);
    PdHandle pd = t.alloc_pd();
    EXPECT_THROW(t.register_region(pd + 1, 0, 1, 0), sctpm::Error);               // unknown PD
    EXPECT_THROW(t.register_region(pd, 0, 1, 8), sctpm::Error);                   // unknown access bit
    EXPECT_THROW(t.register_region(pd, 0, 1, kRemoteWrite), sctpm::Error);        // verbs: needs local write
    EXPECT_THROW(t.register_region(pd, kTop - 9, 11, 0), sctpm::Error);          // past 2^64 - 1
    EXPECT_NO_THROW(t.register_region(pd, kTop - 10, 10, 0));                     // ends at 2^64 - 1
    EXPECT_THROW(t.dealloc_pd(pd), sctpm::Error);                                 // regions remain
    EXPECT_THROW(t.dealloc_pd(pd + 1), sctpm::Error);                             // unknown
    PdHandle empty = t.alloc_pd();
    EXPECT_NE(empty, pd);
    EXPECT_NO_THROW(t.dealloc_pd(empty));
    EXPECT_FALSE(t.has_pd(empty));
}

// ---- the checks, one row each -------------------------------------------------------------------

namespace {

struct Fixture {
    StagTable t{42};
    PdHandle pd = t.alloc_pd();
    PdHandle other_pd = t.alloc_pd();
    // Region at TO [0x10000, 0x11000) of a VA-based registration.
    uint32_t rw = t.register_region(pd, 0x10000, 0x1000, kLocalWrite | kRemoteWrite | kRemoteRead);
    uint32_t local_only = t.register_region(pd, 0x20000, 0x1000, kLocalWrite);
    uint32_t read_only = t.register_region(pd, 0x30000, 0x1000, kRemoteRead);
    uint32_t foreign = t.register_region(other_pd, 0x40000, 0x1000, kLocalWrite | kRemoteWrite | kRemoteRead);
    uint32_t invalidated = t.register_region(pd, 0x50000, 0x1000, kLocalWrite | kRemoteWrite | kRemoteRead);
    // The top of the 64-bit TO space: [2^64 - 0x1001, 2^64 - 1).
    uint32_t top = t.register_region(pd, kTop - 0x1000, 0x1000, kLocalWrite | kRemoteWrite | kRemoteRead);
    // Zero-based: TO [0, 0x1000) names local memory at 0x60000.
    uint32_t zero_based = t.register_region(pd, 0x60000, 0x1000, kLocalWrite | kRemoteWrite | kRemoteRead, true);
    Fixture() { t.invalidate(invalidated); }
};

enum class Which { rw, local_only, read_only, foreign, invalidated, top, zero_based, unknown, wrong_key };

uint32_t pick(const Fixture& f, Which w) {
    switch (w) {
    case Which::rw: return f.rw;
    case Which::local_only: return f.local_only;
    case Which::read_only: return f.read_only;
    case Which::foreign: return f.foreign;
    case Which::invalidated: return f.invalidated;
    case Which::top: return f.top;
    case Which::zero_based: return f.zero_based;
    case Which::unknown: return make_stag(stag_index(f.rw) ^ 0x800000, 0);
    case Which::wrong_key: return make_stag(stag_index(f.rw), uint8_t(stag_key(f.rw) + 1));
    }
    return 0;
}

struct CheckRow {
    const char* name;
    Which stag;
    uint64_t to;
    uint64_t len;
    TagFault fault;
    TermCode ddp;   // as a DDP tagged error (Write / Read Response sink, needing remote write)
    TermCode rdmap; // as an RDMAP remote protection error (Read Request source, needing remote read)
};

constexpr TermCode kOk{};

const CheckRow kRows[] = {
    {"whole_region", Which::rw, 0x10000, 0x1000, TagFault::none, kOk, kOk},
    {"last_byte", Which::rw, 0x10FFF, 1, TagFault::none, kOk, kOk},
    {"unknown_index", Which::unknown, 0x10000, 1, TagFault::invalid_stag, term::ddp_tagged_invalid_stag,
     term::rdmap_invalid_stag},
    {"wrong_key", Which::wrong_key, 0x10000, 1, TagFault::invalid_stag, term::ddp_tagged_invalid_stag,
     term::rdmap_invalid_stag},
    {"invalidated", Which::invalidated, 0x50000, 1, TagFault::invalid_stag, term::ddp_tagged_invalid_stag,
     term::rdmap_invalid_stag},
    {"other_pd", Which::foreign, 0x40000, 1, TagFault::not_associated, term::ddp_tagged_stag_not_associated,
     term::rdmap_stag_not_associated},
    {"below_base", Which::rw, 0xFFFF, 1, TagFault::below_base, term::ddp_tagged_base_bounds, term::rdmap_base_bounds},
    {"start_past_end", Which::rw, 0x11000, 1, TagFault::beyond_bound, term::ddp_tagged_base_bounds,
     term::rdmap_base_bounds},
    {"one_past_end", Which::rw, 0x10001, 0x1000, TagFault::beyond_bound, term::ddp_tagged_base_bounds,
     term::rdmap_base_bounds},
    {"longer_than_region", Which::rw, 0x10000, 0x1001, TagFault::beyond_bound, term::ddp_tagged_base_bounds,
     term::rdmap_base_bounds},
    {"huge_len_no_wrap", Which::rw, 0x10000, kTop - 0x10000, TagFault::beyond_bound, term::ddp_tagged_base_bounds,
     term::rdmap_base_bounds},
    // Wrap-around near 2^64: a naive to + len <= end would pass these.
    {"wrap_from_region", Which::rw, 0x10000, kTop - 0xFFFF + 0x10, TagFault::to_wrap, term::ddp_tagged_to_wrap,
     term::rdmap_to_wrap},
    {"wrap_at_top", Which::top, kTop - 0x10, 0x20, TagFault::to_wrap, term::ddp_tagged_to_wrap, term::rdmap_to_wrap},
    {"sum_exactly_2_pow_64", Which::top, kTop - 0x10, 0x11, TagFault::to_wrap, term::ddp_tagged_to_wrap,
     term::rdmap_to_wrap},
    {"to_max_len_1", Which::top, kTop, 1, TagFault::to_wrap, term::ddp_tagged_to_wrap, term::rdmap_to_wrap},
    {"top_region_fits", Which::top, kTop - 0x1000, 0x1000, TagFault::none, kOk, kOk},
    // The top region ends at 2^64 - 1, so every access past its end wraps.
    {"top_region_past_end", Which::top, kTop - 0x1000, 0x1001, TagFault::to_wrap, term::ddp_tagged_to_wrap,
     term::rdmap_to_wrap},
    {"zero_based_fits", Which::zero_based, 0, 0x1000, TagFault::none, kOk, kOk},
    {"zero_based_beyond", Which::zero_based, 0xFFF, 2, TagFault::beyond_bound, term::ddp_tagged_base_bounds,
     term::rdmap_base_bounds},
    {"zero_based_by_va", Which::zero_based, 0x60000, 1, TagFault::beyond_bound, term::ddp_tagged_base_bounds,
     term::rdmap_base_bounds},
};

class TagChecks : public ::testing::TestWithParam<CheckRow> {};

} // namespace

TEST_P(TagChecks, ClassifyAndCodes) {
    const CheckRow& r = GetParam();
    Fixture f;
    const uint32_t stag = pick(f, r.stag);
    const uint32_t all = kLocalWrite | kRemoteWrite | kRemoteRead;
    TagCheck c = f.t.classify(f.pd, stag, r.to, r.len, all);
    EXPECT_EQ(c.fault, r.fault) << tag_fault_name(c.fault);

    TagCheck sink = check_tagged_sink(f.t, f.pd, stag, r.to, r.len, kRemoteWrite);
    TagCheck source = check_read_source(f.t, f.pd, ReadRequestHeader{0, 0, uint32_t(r.len), stag, r.to});
    if (r.fault == TagFault::none) {
        EXPECT_TRUE(sink.ok());
        ASSERT_TRUE(r.len <= 0xFFFFFFFF);
        EXPECT_TRUE(source.ok());
        const MemoryRegion* mr = f.t.find(stag);
        EXPECT_EQ(sink.address, mr->addr + (r.to - mr->to_base));
        EXPECT_EQ(source.address, sink.address);
    } else {
        ASSERT_FALSE(sink.ok());
        EXPECT_EQ(*sink.error, r.ddp) << describe(*sink.error);
        if (r.len <= 0xFFFFFFFF) { // a Read Request's size is 32 bits
            ASSERT_FALSE(source.ok());
            EXPECT_EQ(*source.error, r.rdmap) << describe(*source.error);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Rfc5041And5040, TagChecks, ::testing::ValuesIn(kRows),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(TagChecksAccess, EachOperationNeedsItsRight) {
    Fixture f;
    // RDMA Write into a region without remote write: DDP has no access code, so Invalid STag.
    TagCheck w = check_tagged_sink(f.t, f.pd, f.local_only, 0x20000, 1, kRemoteWrite);
    EXPECT_EQ(w.fault, TagFault::access);
    EXPECT_EQ(*w.error, term::ddp_tagged_invalid_stag);
    // Read Request from a region without remote read: RDMAP access rights violation.
    TagCheck r = check_read_source(f.t, f.pd, ReadRequestHeader{0, 0, 1, f.local_only, 0x20000});
    EXPECT_EQ(*r.error, term::rdmap_access_rights);
    // A remote-read-only region accepts reads, refuses writes.
    EXPECT_TRUE(check_read_source(f.t, f.pd, ReadRequestHeader{0, 0, 1, f.read_only, 0x30000}).ok());
    EXPECT_FALSE(check_tagged_sink(f.t, f.pd, f.read_only, 0x30000, 1, kRemoteWrite).ok());
    // Read Response sinks are checked for local write.
    EXPECT_TRUE(check_tagged_sink(f.t, f.pd, f.local_only, 0x20000, 1, kLocalWrite).ok());
    EXPECT_FALSE(check_tagged_sink(f.t, f.pd, f.read_only, 0x30000, 1, kLocalWrite).ok());
}

// RFC 5041 §5.2 / RFC 5040 §5.2.1: zero-length transfers check nothing.
TEST(TagChecksAccess, ZeroLengthIsNotChecked) {
    Fixture f;
    EXPECT_TRUE(check_tagged_sink(f.t, f.pd, 0xDEADBEEF, kTop, 0, kRemoteWrite).ok());
    EXPECT_TRUE(check_read_source(f.t, f.pd, ReadRequestHeader{0, 0, 0, 0xDEADBEEF, kTop}).ok());
    // classify itself (used for local checks) still checks a zero-length access.
    EXPECT_EQ(f.t.classify(f.pd, 0xDEADBEEF, 0, 0, 0).fault, TagFault::invalid_stag);
}

// Faults are checked in RFC order: STag, PD, access, base, wrap, bound.
TEST(TagChecksAccess, FirstFaultWins) {
    Fixture f;
    EXPECT_EQ(f.t.classify(f.other_pd, f.invalidated, 0, kTop, kRemoteWrite).fault, TagFault::invalid_stag);
    EXPECT_EQ(f.t.classify(f.other_pd, f.read_only, 0, kTop, kRemoteWrite).fault, TagFault::not_associated);
    EXPECT_EQ(f.t.classify(f.pd, f.read_only, 0, kTop, kRemoteWrite).fault, TagFault::access);
    EXPECT_EQ(f.t.classify(f.pd, f.rw, 0, kTop, kRemoteWrite).fault, TagFault::below_base);
}

TEST(RemoteInvalidate, Codes) {
    Fixture f;
    EXPECT_FALSE(check_remote_invalidate(f.t, f.pd, f.rw));
    EXPECT_EQ(*check_remote_invalidate(f.t, f.pd, f.invalidated), term::rdmap_invalid_stag);
    EXPECT_EQ(*check_remote_invalidate(f.t, f.pd, pick(f, Which::wrong_key)), term::rdmap_invalid_stag);
    EXPECT_EQ(*check_remote_invalidate(f.t, f.pd, f.foreign), term::rdmap_protection_cannot_invalidate);
}

TEST(TagFaultCodes, NoneHasNoCode) {
    EXPECT_THROW(ddp_tagged_code(TagFault::none), sctpm::Error);
    EXPECT_THROW(rdmap_protection_code(TagFault::none), sctpm::Error);
}
