// SPDX-License-Identifier: BSD-3-Clause
// STag table and tagged-buffer checks; see memory.hpp.
#include "memory.hpp"

#include "error.hpp"

#include <cstdio>
#include <limits>
#include <string>

namespace iwarp {

namespace {

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

std::string_view tag_fault_name(TagFault f) {
    switch (f) {
    case TagFault::none: return "none";
    case TagFault::invalid_stag: return "invalid STag";
    case TagFault::not_associated: return "STag not associated with the stream's PD";
    case TagFault::access: return "access rights";
    case TagFault::below_base: return "TO below base";
    case TagFault::to_wrap: return "TO + length wraps 64 bits";
    case TagFault::beyond_bound: return "TO + length beyond bound";
    }
    return "?";
}

TermCode ddp_tagged_code(TagFault f) {
    switch (f) {
    case TagFault::invalid_stag:
    case TagFault::access: return term::ddp_tagged_invalid_stag;
    case TagFault::not_associated: return term::ddp_tagged_stag_not_associated;
    case TagFault::below_base:
    case TagFault::beyond_bound: return term::ddp_tagged_base_bounds;
    case TagFault::to_wrap: return term::ddp_tagged_to_wrap;
    case TagFault::none: break;
    }
    throw sctpm::Error("iwarp: no Terminate code for TagFault::none");
}

TermCode rdmap_protection_code(TagFault f) {
    switch (f) {
    case TagFault::invalid_stag: return term::rdmap_invalid_stag;
    case TagFault::access: return term::rdmap_access_rights;
    case TagFault::not_associated: return term::rdmap_stag_not_associated;
    case TagFault::below_base:
    case TagFault::beyond_bound: return term::rdmap_base_bounds;
    case TagFault::to_wrap: return term::rdmap_to_wrap;
    case TagFault::none: break;
    }
    throw sctpm::Error("iwarp: no Terminate code for TagFault::none");
}

// ---- table -----------------------------------------------------------------------------------

StagTable::StagTable() : rng_(std::random_device{}()) {}

StagTable::StagTable(uint64_t seed) : rng_(seed) {}

PdHandle StagTable::alloc_pd() {
    if (next_pd_ == 0) throw sctpm::Error("iwarp: protection domain handles exhausted");
    pds_.insert(next_pd_);
    return next_pd_++;
}

void StagTable::dealloc_pd(PdHandle pd) {
    if (!has_pd(pd)) throw sctpm::Error("iwarp: dealloc_pd of unknown PD " + std::to_string(pd));
    for (const auto& [index, mr] : regions_)
        if (mr.pd == pd)
            throw sctpm::Error("iwarp: dealloc_pd " + std::to_string(pd) + " while STag " + hex(mr.stag) +
                               " is still registered in it");
    pds_.erase(pd);
}

// A random free index in [1, 2^24): random start, then the next free one.
uint32_t StagTable::fresh_index() {
    if (regions_.size() >= kStagIndexLimit - 1) throw sctpm::Error("iwarp: STag table full (2^24 - 1 regions)");
    uint32_t index = uint32_t(rng_() % (kStagIndexLimit - 1)) + 1;
    while (regions_.count(index)) index = index + 1 < kStagIndexLimit ? index + 1 : 1;
    return index;
}

uint32_t StagTable::register_region(PdHandle pd, uint64_t addr, uint64_t length, uint32_t access, bool zero_based) {
    if (!has_pd(pd)) throw sctpm::Error("iwarp: register_region in unknown PD " + std::to_string(pd));
    if (access & ~kAccessMask) throw sctpm::Error("iwarp: register_region with unknown access bits " + hex(access));
    if ((access & (kRemoteWrite | kRemoteAtomic)) && !(access & kLocalWrite))
        throw sctpm::Error("iwarp: register_region: remote write and remote atomic need local write too (as in verbs)");
    if (length > kMax64 - addr)
        throw sctpm::Error("iwarp: register_region: addr " + hex(addr) + " + length " + hex(length) +
                           " runs past 2^64 - 1");
    MemoryRegion mr;
    mr.stag = make_stag(fresh_index(), uint8_t(rng_()));
    mr.pd = pd;
    mr.addr = addr;
    mr.to_base = zero_based ? 0 : addr;
    mr.length = length;
    mr.access = access;
    regions_.emplace(stag_index(mr.stag), mr);
    return mr.stag;
}

void StagTable::deregister(uint32_t stag) {
    if (!find(stag)) throw sctpm::Error("iwarp: deregister of unknown STag " + hex(stag));
    regions_.erase(stag_index(stag));
}

const MemoryRegion* StagTable::find(uint32_t stag) const {
    auto it = regions_.find(stag_index(stag));
    return it != regions_.end() && it->second.stag == stag ? &it->second : nullptr;
}

bool StagTable::invalidate(uint32_t stag) {
    auto it = regions_.find(stag_index(stag));
    if (it == regions_.end() || it->second.stag != stag || !it->second.valid) return false;
    it->second.valid = false;
    return true;
}

TagCheck StagTable::classify(PdHandle stream_pd, uint32_t stag, uint64_t to, uint64_t len, uint32_t access) const {
    TagCheck c;
    const MemoryRegion* mr = find(stag);
    if (!mr || !mr->valid)
        c.fault = TagFault::invalid_stag;
    else if (mr->pd != stream_pd)
        c.fault = TagFault::not_associated;
    else if ((mr->access & access) != access)
        c.fault = TagFault::access;
    else if (to < mr->to_base)
        c.fault = TagFault::below_base;
    // Wrap before the upper bound: a wrapping sum is also out of bounds, and checking it first is
    // what lets the more specific "TO wrap" code be reported at all.
    else if (len > kMax64 - to)
        c.fault = TagFault::to_wrap;
    // offset + len <= length, written so nothing can overflow.
    else if (len > mr->length || to - mr->to_base > mr->length - len)
        c.fault = TagFault::beyond_bound;
    else
        c.address = mr->addr + (to - mr->to_base);
    return c;
}

// ---- receiver checks -------------------------------------------------------------------------

TagCheck check_tagged_sink(const StagTable& t, PdHandle stream_pd, uint32_t stag, uint64_t to, uint64_t len,
                           uint32_t access) {
    if (len == 0) return {}; // RFC 5041 §5.2
    TagCheck c = t.classify(stream_pd, stag, to, len, access);
    if (c.fault != TagFault::none) c.error = ddp_tagged_code(c.fault);
    return c;
}

TagCheck check_read_source(const StagTable& t, PdHandle stream_pd, const ReadRequestHeader& rr) {
    if (rr.size == 0) return {}; // RFC 5040 §5.2.1
    TagCheck c = t.classify(stream_pd, rr.src_stag, rr.src_to, rr.size, kRemoteRead);
    if (c.fault != TagFault::none) c.error = rdmap_protection_code(c.fault);
    return c;
}

std::optional<TermCode> check_remote_invalidate(const StagTable& t, PdHandle stream_pd, uint32_t stag) {
    const MemoryRegion* mr = t.find(stag);
    if (!mr || !mr->valid) return term::rdmap_invalid_stag;
    if (mr->pd != stream_pd) return term::rdmap_protection_cannot_invalidate;
    return std::nullopt;
}

} // namespace iwarp
