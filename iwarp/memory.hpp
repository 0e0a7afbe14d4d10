// SPDX-License-Identifier: BSD-3-Clause
// Protection domains, memory regions and the STag table of the software RNIC, with the tagged
// buffer checks of RFC 5041 §7.1 and RFC 5040 §7.2, each giving the exact Terminate code.
//
// An STag is a 24-bit index and an 8-bit key (RFC 5040 §2.4 / RDMAC verbs): the index finds the
// region, and the whole 32 bits must match. Both are chosen at random so that STags are hard to
// predict (RFC 5040 §8.1.1 item 8); 0 is never handed out.
//
// A region maps a range of Tagged Offsets [to_base, to_base + length) onto local memory at addr:
// like verbs, TO is the virtual address for an ordinary region (to_base = addr) and starts at 0
// for a zero-based one. Not thread-safe: the device that owns the table serializes access.
#pragma once
#include "wire.hpp"

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace iwarp {

// Same values as libibverbs' ibv_access_flags.
enum Access : uint32_t { kLocalWrite = 1, kRemoteWrite = 2, kRemoteRead = 4, kRemoteAtomic = 8 };
constexpr uint32_t kAccessMask = kLocalWrite | kRemoteWrite | kRemoteRead | kRemoteAtomic;

using PdHandle = uint32_t; // 0 never names a PD

constexpr uint32_t kStagIndexLimit = 1u << 24;
constexpr uint32_t stag_index(uint32_t stag) { return stag >> 8; }
constexpr uint8_t stag_key(uint32_t stag) { return uint8_t(stag); }
constexpr uint32_t make_stag(uint32_t index, uint8_t key) { return index << 8 | key; }

struct MemoryRegion {
    uint32_t stag = 0;
    PdHandle pd = 0;
    uint64_t addr = 0;    // local address of the region's first byte
    uint64_t to_base = 0; // the TO that names that byte
    uint64_t length = 0;  // to_base + length never exceeds 2^64 - 1
    uint32_t access = 0;
    bool valid = true; // false once invalidated; the STag stays taken until deregistered
};

// Why a tagged access is refused, before deciding which layer reports it.
enum class TagFault {
    none,
    invalid_stag,   // unknown index, wrong key, or invalidated
    not_associated, // region belongs to another PD than the stream's
    access,         // region lacks the needed access right
    below_base,     // TO < base
    to_wrap,        // TO + length does not fit in 64 bits
    beyond_bound,   // TO + length past the region's end
};
std::string_view tag_fault_name(TagFault f);

// RFC 5041 §7.2, Tagged Buffer Error: DDP has no access-rights code; its check 2 ("the STag has an
// associated buffer that allows Placement") fails as Invalid STag.
TermCode ddp_tagged_code(TagFault f);
// RFC 5040 §4.8 Fig. 9, Remote Protection Error.
TermCode rdmap_protection_code(TagFault f);

struct TagCheck {
    TagFault fault = TagFault::none;
    std::optional<TermCode> error; // the Terminate code; empty when the access is allowed
    uint64_t address = 0;          // local address of TO when allowed
    bool ok() const { return !error; }
};

class StagTable {
public:
    StagTable();                       // STags seeded from std::random_device
    explicit StagTable(uint64_t seed); // reproducible STags (tests, fuzzing)

    PdHandle alloc_pd();
    void dealloc_pd(PdHandle pd); // sctpm::Error if unknown or regions still use it
    bool has_pd(PdHandle pd) const { return pds_.count(pd) != 0; }

    // sctpm::Error on misuse: unknown PD, unknown access bits, remote write without local write
    // (the verbs rule), or a range that runs past 2^64 - 1.
    uint32_t register_region(PdHandle pd, uint64_t addr, uint64_t length, uint32_t access,
                             bool zero_based = false);
    void deregister(uint32_t stag); // sctpm::Error if unknown
    const MemoryRegion* find(uint32_t stag) const; // exact match, valid or not; nullptr if none
    bool invalidate(uint32_t stag); // false if unknown or already invalid
    size_t size() const { return regions_.size(); }

    // The RFC 5041 §7.1 / RFC 5040 §7.2 checks in their order (STag valid, associated with the
    // stream's PD, access, TO >= base, no wrap, TO + len <= end), all overflow-safe.
    TagCheck classify(PdHandle stream_pd, uint32_t stag, uint64_t to, uint64_t len, uint32_t access) const;

private:
    uint32_t fresh_index();

    std::mt19937_64 rng_;
    PdHandle next_pd_ = 1;
    std::unordered_set<PdHandle> pds_;
    std::unordered_map<uint32_t, MemoryRegion> regions_; // by STag index
};

// Incoming RDMA Write or Read Response segment (RFC 5041 §7.1, tagged): DDP codes. A zero-length
// segment is accepted unchecked (RFC 5041 §5.2: STag and TO MUST NOT be checked).
TagCheck check_tagged_sink(const StagTable& t, PdHandle stream_pd, uint32_t stag, uint64_t to, uint64_t len,
                           uint32_t access);

// Data Source of an incoming Read Request (RFC 5040 §7.2 items 4a-e, plus the access-rights code):
// RDMAP Remote Protection codes; needs remote read. Size 0 is accepted unchecked (§5.2.1).
TagCheck check_read_source(const StagTable& t, PdHandle stream_pd, const ReadRequestHeader& rr);

// Invalidate STag of a Send with Invalidate (RFC 5040 §5.3, §7.2 items 4-5): an invalid STag is
// Remote Protection / Invalid STag; a valid one of another PD "cannot be invalidated" (0x09).
std::optional<TermCode> check_remote_invalidate(const StagTable& t, PdHandle stream_pd, uint32_t stag);

} // namespace iwarp
