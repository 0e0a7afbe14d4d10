// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: decode + validate of one incoming iWARP SCTP message (RFC 5040/5041/5043).
//
// Input: a 10-byte prefix that shapes the receiver state, then the SCTP message. Small STag values
// (0..7) in the message are swapped for real STags of a fixed table so the fuzzer reaches the
// placement paths. Besides "no crash, no sanitizer report" it checks invariants:
//  - decoders round-trip exactly (encode(decode(bytes)) == bytes);
//  - an accepted placement lies inside the registered region or posted buffer it was checked
//    against, and covers exactly the payload;
//  - a rejection carries a named code and a Terminate that encodes and decodes to itself, with
//    the offending DDP header copied verbatim.
#include "byte_order.hpp"
#include "memory.hpp"
#include "validate.hpp"
#include "wire.hpp"

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace iwarp;
namespace be = sctpm::be;

namespace {

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            __builtin_trap();                                                                                          \
        }                                                                                                              \
    } while (0)

struct World {
    StagTable t{1234};
    PdHandle pd = t.alloc_pd();
    PdHandle other = t.alloc_pd();
    uint32_t stags[8];
    std::vector<RecvBuffer> buffers = {{0x70000, 100}, {0x71000, 0}, {0x72000, 4096}};

    World() {
        const uint32_t all = kLocalWrite | kRemoteWrite | kRemoteRead;
        const uint64_t top = ~0ull;
        stags[0] = t.register_region(pd, 0x10000, 0x1000, all);
        stags[1] = t.register_region(pd, 0x20000, 0x1000, kRemoteRead);
        stags[2] = t.register_region(pd, 0x30000, 0x1000, kLocalWrite);
        stags[3] = t.register_region(other, 0x40000, 0x1000, all);
        stags[4] = t.register_region(pd, top - 0x1000, 0x1000, all);
        stags[5] = t.register_region(pd, 0x60000, 0x1000, all, true);
        stags[6] = t.register_region(pd, 0x80000, 0, all);
        stags[7] = t.register_region(pd, 0x90000, 0x1000, all);
        t.invalidate(stags[7]);
    }
};

World& world() {
    static World w;
    return w;
}

void map_stag(std::vector<uint8_t>& m, size_t at) {
    if (m.size() < at + 4) return;
    const uint32_t v = be::load32(&m[at]);
    if (v < 8) be::store32(&m[at], world().stags[v]);
}

void check_session_control(std::span<const uint8_t> msg) {
    auto d = decode_session_control(msg);
    if (!d) {
        CHECK(!d.error().field.empty());
        return;
    }
    auto again = encode_session_control(*d);
    CHECK(again.size() == msg.size());
    auto d2 = decode_session_control(again);
    CHECK(d2 && *d2 == *d);
    // Byte-exact unless RFC 6581 §9.2 made us drop B/C/D sent with A = 0.
    if (!d->ird_ord || d->ird_ord->peer_to_peer) CHECK(std::memcmp(again.data(), msg.data(), msg.size()) == 0);
}

void check_decoders(std::span<const uint8_t> msg) {
    auto s = decode_segment(msg);
    if (!s) return;
    std::vector<uint8_t> h(s->hdr.size());
    encode(s->hdr, h);
    CHECK(std::memcmp(h.data(), msg.data() + kSsnSize, h.size()) == 0);
    if (auto rr = decode_read_request(s->payload)) {
        std::vector<uint8_t> b(kReadRequestHeaderSize);
        encode(*rr, b);
        CHECK(std::memcmp(b.data(), s->payload.data(), b.size()) == 0);
    }
    if (auto t = decode_terminate(s->payload)) {
        std::vector<uint8_t> b(t->size());
        CHECK(encode(*t, b) == b.size() && b.size() <= s->payload.size());
        CHECK(std::memcmp(b.data(), s->payload.data(), b.size()) == 0);
    }
}

void check_verdict(const ReceiverState& st, std::span<const uint8_t> msg, const Verdict& v) {
    if (const auto* r = std::get_if<Rejected>(&v)) {
        CHECK(!r->reason.empty());
        CHECK(describe(r->terminate.code).rfind("unknown", 0) != 0);
        std::vector<uint8_t> b(r->terminate.size());
        encode(r->terminate, b);
        auto back = decode_terminate(b);
        CHECK(back && *back == r->terminate);
        if (r->terminate.ddp) {
            auto s = decode_segment(msg);
            CHECK(s && s->hdr == *r->terminate.ddp);
        }
        return;
    }
    const Accepted& a = std::get<Accepted>(v);
    const DdpHeader& h = a.segment.hdr;
    CHECK(h.ddp_version == kDdpVersion && h.rdmap_version == kRdmapVersion && opcode_known(h.opcode));
    CHECK(msg.size() <= st.max_message);
    if (!a.placement) return;
    const Placement& p = *a.placement;
    CHECK(p.length == a.segment.payload.size() && p.length > 0);
    if (h.tagged) {
        const MemoryRegion* mr = st.stags->find(h.stag);
        CHECK(mr && mr->valid && mr->pd == st.pd);
        CHECK(p.address >= mr->addr);
        CHECK(p.address - mr->addr <= mr->length && p.length <= mr->length - (p.address - mr->addr));
        CHECK(h.to >= mr->to_base && h.to - mr->to_base == p.address - mr->addr);
        if (Opcode(h.opcode) == Opcode::read_response) {
            CHECK(a.orq_index && *a.orq_index < st.orq.size());
            const OutstandingRead& e = st.orq[*a.orq_index];
            CHECK(e.sink_stag == h.stag && h.to >= e.sink_to && h.to - e.sink_to + p.length <= e.size);
        }
    } else {
        CHECK(Opcode(h.opcode) != Opcode::read_request && Opcode(h.opcode) != Opcode::terminate);
        CHECK(a.buffer_index < st.recv.size());
        const RecvBuffer& b = st.recv[a.buffer_index];
        CHECK(uint32_t(h.msn - st.recv_msn) == a.buffer_index);
        CHECK(p.address == b.addr + h.mo && uint64_t(h.mo) + p.length <= b.length);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    constexpr size_t kPrefix = 10;
    if (size < kPrefix) return 0;
    World& w = world();
    const uint8_t flags = data[0];
    std::vector<uint8_t> msg(data + kPrefix, data + size);

    if (flags & 1) { // PPID 17
        check_session_control(msg);
        return 0;
    }

    ReceiverState st;
    st.stags = &w.t;
    st.pd = w.pd;
    st.recv_msn = be::load32(data + 1);
    st.read_msn = be::load32(data + 5);
    st.terminate_msn = 1 + (data[9] >> 6);
    for (int i = 0; i < ((flags >> 1) & 3); ++i) st.recv.push_back(w.buffers[size_t(i)]);
    st.terminate_seen = flags & 8;
    st.ird = (flags >> 4) & 3;
    st.reads_active = flags >> 6;
    const OutstandingRead orq[] = {{w.stags[2], 0x30000, 0x100}, {w.stags[4], ~0ull - 0x1000, 0x1000},
                                   {w.stags[5], 0x10, 0x20}, {w.stags[1], 0x20000, 0x10}};
    for (int i = 0; i < (data[9] & 3); ++i) st.orq.push_back(orq[i]);
    if (data[9] & 4) st.max_message = 100;

    // Swap small STags for real ones: tagged STag / Invalidate STag, Read Request sink and source.
    map_stag(msg, kSsnSize + 2);
    map_stag(msg, kSsnSize + kUntaggedHeaderSize);
    map_stag(msg, kSsnSize + kUntaggedHeaderSize + 16);

    check_decoders(msg);
    check_verdict(st, msg, validate_segment(st, msg));
    return 0;
}
