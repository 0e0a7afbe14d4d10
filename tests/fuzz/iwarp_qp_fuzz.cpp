// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: one queue pair of the software RNIC driven by a scripted peer over the
// in-memory LLP of the engine tests (tests/iwarp/unit/mem_llp.hpp), from connection to error.
//
// The input is a header (role, early-message limit, segment size, IRD/ORD) and then a script of
// operations, each one byte followed by its arguments (see `step`): the peer's messages built from
// fields (session control Initiate/Accept/Reject/Terminate with private data; RDMA Write, Read
// Request, Read Response, Send, Terminate, RFC 7306 Atomic Request and Response segments) or raw bytes; DDP-SSNs in order, ahead (holes)
// or verbatim; holding messages and releasing them shuffled; the local verbs (post_recv,
// post_send of every opcode, atomics included, modify); more associations that may never finish their Initiate, and a clock that
// moves on (the device's ConnRequests, iwarp/requests.hpp). Small selector values name the
// registered regions so that the placement paths are reached.
//
// Checked after every operation, besides "no crash, no sanitizer report":
//  - memory: only bytes inside a region the peer may write (remote write, this QP's PD), a posted
//    receive buffer or the sink of a posted RDMA Read may change; canaries around every region
//    stay intact;
//  - early messages held by the QP never exceed its limit;
//  - the CQs never overflow (sized for the WRs the script may post) and every completion is of a
//    WR posted and not yet completed, exactly once, a receive never longer than its buffer;
//  - an error event names its reason; a "sent Terminate" error puts a DDP Terminate with a known
//    code on the wire, a session error a session Terminate (now or before); all we send decodes;
//  - connection requests: never more than IWV_MAX_PENDING_REQUESTS waiting, none past its
//    timeout, every one dropped is aborted.
//
// Seeds: tests/fuzz/iwarp_qp_corpus, written by tests/fuzz/gen_iwarp_qp_corpus.py (a passive and an
// active handshake, an RDMA Write, a reordered Send, a Read Request and Read Response, a Terminate,
// a request flood, a timeout); findings are kept there as regression cases.
#include "byte_order.hpp"
#include "cq.hpp"
#include "error.hpp"
#include "memory.hpp"
#include "qp.hpp"
#include "requests.hpp"
#include "session.hpp"
#include "wire.hpp"

#include "../iwarp/unit/mem_llp.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <vector>

using namespace iwarp;
namespace be = sctpm::be;

namespace {

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) __builtin_trap();                                                                                    \
    } while (0)

// Reads the input front to back; zeros once it runs out.
struct In {
    const uint8_t* p;
    size_t n;
    bool empty() const { return n == 0; }
    uint8_t u8() {
        if (!n) return 0;
        --n;
        return *p++;
    }
    uint16_t u16() { return uint16_t(u8() << 8 | u8()); }
    uint32_t u32() { return uint32_t(u16()) << 16 | u16(); }
    uint64_t u64() {
        const uint64_t high = u32(); // read first: the operands of | are unsequenced
        return high << 32 | u32();
    }
    std::vector<uint8_t> bytes(size_t len) {
        len = std::min(len, n);
        std::vector<uint8_t> v(p, p + len);
        p += len;
        n -= len;
        return v;
    }
};

// IWARP_QP_FUZZ_TRACE=1: print what happens (to see what a seed reaches).
const bool trace = std::getenv("IWARP_QP_FUZZ_TRACE") != nullptr;

constexpr size_t kGuard = 64;
constexpr uint8_t kCanary = 0xA5;
constexpr uint32_t kWrs = 8; // max_send_wr = max_recv_wr = CQ capacity

struct RegionSpec {
    size_t size;
    uint32_t access;
    bool other_pd, zero_based, invalidated;
};
// 0 peer-writable, 1 read-only, 2 local-write only (receive buffers, Read sinks), 3 another PD's,
// 4 zero-based peer-writable, 5 peer-writable but invalidated, 6 the target of the peer's atomics.
constexpr RegionSpec kRegions[] = {
    {512, kLocalWrite | kRemoteWrite | kRemoteRead, false, false, false},
    {256, kRemoteRead, false, false, false},
    {1024, kLocalWrite, false, false, false},
    {256, kLocalWrite | kRemoteWrite | kRemoteRead, true, false, false},
    {256, kLocalWrite | kRemoteWrite | kRemoteRead, false, true, false},
    {128, kLocalWrite | kRemoteWrite, false, false, true},
    {64, kLocalWrite | kRemoteAtomic, false, false, false},
};
constexpr size_t kNumRegions = sizeof kRegions / sizeof kRegions[0];

struct Range {
    uint64_t lo, hi; // [lo, hi)
};

// One association the peer speaks on: the pipe, and the DDP-SSNs it has sent (the QP's view of
// "next" advances over every SSN sent, holes filled later included).
struct Assoc {
    memllp::Pair pipe;
    uint16_t next = 0;
    std::set<uint16_t> ahead;
    uint32_t send_msn = 1, read_msn = 1; // the peer's MSNs of its Sends and Read (and Atomic) Requests
    uint32_t atomic_msn = 1, atomic_id = 1; // the peer's Atomic Responses: MSN, and the id it expects
    void sent(uint16_t ssn) {
        if (ssn == next) {
            ++next;
            while (ahead.erase(next)) ++next;
        } else if (uint16_t(ssn - next) <= kSsnWindow) {
            ahead.insert(ssn);
        }
    }
};

struct Harness {
    StagTable stags{77};
    PdHandle pd = stags.alloc_pd(), other = stags.alloc_pd();
    CompletionQueue scq{kWrs}, rcq{kWrs};
    std::vector<uint8_t> mem;
    std::vector<uint8_t> shadow;
    uint64_t base[kNumRegions] = {};   // local address of each region
    uint64_t to_base[kNumRegions] = {};
    uint32_t stag[kNumRegions] = {};
    std::unique_ptr<QueuePair> qp;
    size_t early_limit = QueuePair::kDefaultEarlyLimit;
    size_t seg = kMinSegmentLimit;
    IrdOrdPair mine;

    std::vector<std::unique_ptr<Assoc>> assocs;
    Assoc* qp_assoc = nullptr; // the one the QP runs on
    size_t cur = 0;            // the one the script speaks on
    ConnRequests requests{std::chrono::milliseconds(IWV_INITIATE_TIMEOUT_MS)};
    std::deque<iwv_event> req_events;
    std::vector<iwv_conn_request*> announced;
    ConnRequests::Clock::time_point now{std::chrono::hours(1)};

    struct Posted {
        uint64_t length;
        std::vector<iwv_sge> sges;
        bool read;
    };
    std::map<uint64_t, Posted> recvs, sends; // by wr_id, outstanding
    uint64_t next_wr = 1;
    uint8_t fill = 1; // payload pattern

    Harness() {
        size_t total = kGuard;
        for (auto& r : kRegions) total += r.size + kGuard;
        mem.assign(total, kCanary);
        size_t at = kGuard;
        for (size_t i = 0; i < kNumRegions; ++i) {
            base[i] = reinterpret_cast<uintptr_t>(mem.data() + at);
            std::memset(mem.data() + at, 0, kRegions[i].size);
            stag[i] = stags.register_region(kRegions[i].other_pd ? other : pd, base[i], kRegions[i].size,
                                            kRegions[i].access, kRegions[i].zero_based);
            to_base[i] = stags.find(stag[i])->to_base;
            if (kRegions[i].invalidated) stags.invalidate(stag[i]);
            at += kRegions[i].size + kGuard;
        }
        shadow = mem;
        qp = std::make_unique<QueuePair>(1, stags, pd, scq, rcq, iwv_qp_cap{kWrs, kWrs, 3, 3, 0}, false);
    }

    Assoc& a() { return *assocs[cur]; }

    uint32_t pick_stag(In& in) {
        const uint8_t s = in.u8();
        if (s & 0x80) return in.u32();
        const uint32_t t = stag[(s & 0x7F) % kNumRegions];
        return s & 0x40 ? t ^ 1 : t; // wrong key
    }
    uint64_t pick_to(In& in, uint32_t st) {
        const int16_t off = int16_t(in.u16());
        for (size_t i = 0; i < kNumRegions; ++i)
            if (stag[i] == st) return to_base[i] + uint64_t(int64_t(off));
        return uint64_t(int64_t(off));
    }

    // The peer's message on the current association: DDP-SSN per `mode` (see header comment).
    void deliver(uint32_t ppid, uint8_t mode, std::vector<uint8_t> body) {
        Assoc& as = a();
        if (!(mode & 0x80)) {
            const uint16_t ssn = uint16_t(as.next + (mode & 0x3F));
            body.insert(body.begin(), {uint8_t(ssn >> 8), uint8_t(ssn)});
            as.sent(ssn);
        }
        memllp::MemLlp peer(as.pipe.ab, as.pipe.ba, seg); // the peer writes into ba
        peer.send(ppid, body.data(), body.size());
    }

    std::vector<uint8_t> payload(size_t len) {
        std::vector<uint8_t> v(len);
        for (auto& b : v) b = fill++;
        return v;
    }

    std::vector<uint8_t> segment(const DdpHeader& h, std::span<const uint8_t> rest) {
        std::vector<uint8_t> m(h.size());
        encode(h, m);
        m.insert(m.end(), rest.begin(), rest.end());
        return m;
    }

    void control(In& in) {
        const uint8_t f = in.u8();
        const uint8_t mode = in.u8();
        SessionControl c;
        c.function = SessionFunction(f % 7 + 1);
        if (session_function_enhanced(c.function)) c.ird_ord = IrdOrd{bool(f & 0x80), false, false, false,
                                                                           uint16_t(in.u8() & 15), uint16_t(in.u8() & 15)};
        c.private_data = in.bytes(in.u16() % 600);
        std::vector<uint8_t> m;
        try {
            m = encode_session_control(c); // DDP-SSN 0 in front: replaced by deliver's
            m.erase(m.begin(), m.begin() + kSsnSize);
        } catch (const sctpm::Error&) { // what the encoder refuses to send: the code, then the bytes
            m = {uint8_t(uint16_t(c.function) >> 8), uint8_t(c.function)};
            m.insert(m.end(), c.private_data.begin(), c.private_data.end());
        }
        deliver(kPpidSessionControl, mode, std::move(m));
    }

    // ---- the script's operations ----
    void step(In& in) {
        switch (in.u8() % 23) {
        case 0: { // raw message
            const uint8_t p = in.u8();
            const uint8_t mode = in.u8();
            deliver(p == 0 ? kPpidDdpSegment : p == 1 ? kPpidSessionControl : p, mode, in.bytes(in.u16() % 4096));
            break;
        }
        case 1: { // RDMA Write
            const uint32_t st = pick_stag(in);
            const uint64_t to = pick_to(in, st);
            const uint16_t len = in.u16() % 2048;
            const uint8_t flags = in.u8();
            deliver(kPpidDdpSegment, in.u8(), segment(make_tagged_header(Opcode::rdma_write, st, to, flags & 1), payload(len)));
            break;
        }
        case 2: { // Send (all four kinds)
            const uint8_t kind = in.u8();
            static constexpr Opcode ops[] = {Opcode::send, Opcode::send_inv, Opcode::send_se, Opcode::send_se_inv};
            const Opcode op = ops[kind & 3];
            Assoc& as = a();
            const uint32_t msn = as.send_msn + (kind >> 2 & 3);
            const uint32_t mo = in.u16();
            const uint16_t len = in.u16() % 2048;
            const bool last = !(kind & 0x10);
            const uint32_t inval = opcode_invalidates(op) ? pick_stag(in) : 0;
            if (last && !(kind & 0xC)) ++as.send_msn;
            deliver(kPpidDdpSegment, in.u8(), segment(make_untagged_header(op, msn, mo, last, inval), payload(len)));
            break;
        }
        case 3: { // Read Request
            Assoc& as = a();
            ReadRequestHeader rr;
            rr.sink_stag = in.u32();
            rr.sink_to = in.u32();
            rr.size = in.u16();
            rr.src_stag = pick_stag(in);
            rr.src_to = pick_to(in, rr.src_stag);
            const uint8_t d = in.u8();
            const uint32_t msn = as.read_msn + (d & 3);
            if (!(d & 3)) ++as.read_msn;
            std::vector<uint8_t> b(kReadRequestHeaderSize);
            encode(rr, b);
            deliver(kPpidDdpSegment, in.u8(), segment(make_untagged_header(Opcode::read_request, msn, 0, true), b));
            break;
        }
        case 4: { // Read Response
            const uint32_t st = pick_stag(in);
            const uint64_t to = pick_to(in, st);
            const uint16_t len = in.u16() % 2048;
            const uint8_t flags = in.u8();
            deliver(kPpidDdpSegment, in.u8(), segment(make_tagged_header(Opcode::read_response, st, to, flags & 1), payload(len)));
            break;
        }
        case 5: { // Terminate
            TerminateHeader t;
            t.code = TermCode{Layer(in.u8() % 3), uint8_t(in.u8() & 15), in.u8()};
            std::vector<uint8_t> b(t.size());
            encode(t, b);
            deliver(kPpidDdpSegment, in.u8(), segment(make_untagged_header(Opcode::terminate, 1, 0, true), b));
            break;
        }
        case 6: control(in); break;
        case 7: a().pipe.ba->hold = !a().pipe.ba->hold; break;
        case 8: a().pipe.ba->release(in.u8()); break;
        case 9: post_recv(in); break;
        case 10: post_send(in); break;
        case 11:
            for (int i = in.u8() % 8; i >= 0; --i) qp->progress();
            break;
        case 12: {
            static constexpr iwv_qp_state to[] = {IWV_QPS_ERR, IWV_QPS_RESET, IWV_QPS_INIT, IWV_QPS_RTR, IWV_QPS_RTS};
            std::string err;
            const iwv_qp_state s = to[in.u8() % 5];
            if (qp->modify(s, err) == 0 && s == IWV_QPS_RESET) { // dropped without completions
                recvs.clear();
                sends.clear();
            }
            break;
        }
        case 13: a().pipe.ba->closed = true; break; // the association is gone
        case 14: new_request(); break;
        case 15: cur = in.u8() % assocs.size(); break;
        case 16: now += std::chrono::milliseconds(in.u16() * 4); break;
        case 17: answer(in); break;
        case 18: // a test knob, not a verb: the bound holds from a point where nothing is held
            if (const uint8_t sel = in.u8(); qp->early_bytes() == 0) set_early(sel);
            break;
        case 20: { // Atomic Request (RFC 7306), any AOpCode, on QN 1 with the Read Requests
            Assoc& as = a();
            AtomicRequestHeader ar;
            ar.aopcode = in.u8() & 0xF;
            ar.request_id = in.u32();
            ar.stag = pick_stag(in);
            ar.to = pick_to(in, ar.stag);
            ar.add_swap = in.u64();
            ar.add_swap_mask = in.u64();
            ar.compare = in.u64();
            ar.compare_mask = in.u8() & 1 ? ~0ull : in.u64();
            const uint8_t d = in.u8();
            const uint32_t msn = as.read_msn + (d & 3);
            if (!(d & 3)) ++as.read_msn;
            std::vector<uint8_t> b(kAtomicRequestHeaderSize);
            encode(ar, b);
            deliver(kPpidDdpSegment, in.u8(), segment(make_untagged_header(Opcode::atomic_request, msn, 0, true), b));
            break;
        }
        case 21: { // Atomic Response on QN 3, naming the expected request or any
            Assoc& as = a();
            const uint8_t d = in.u8();
            AtomicResponseHeader r{d & 4 ? in.u32() : as.atomic_id, in.u64()};
            const uint32_t msn = as.atomic_msn + (d & 3);
            if (!(d & 3)) {
                ++as.atomic_msn;
                ++as.atomic_id;
            }
            std::vector<uint8_t> b(kAtomicResponseHeaderSize);
            encode(r, b);
            deliver(kPpidDdpSegment, in.u8(), segment(make_untagged_header(Opcode::atomic_response, msn, 0, true), b));
            break;
        }
        case 22: post_atomic(in); break;
        case 19: { // a Send that spans several segments, delivered in one go
            Assoc& as = a();
            const uint16_t total = in.u16() % 4096;
            const size_t per = std::max<size_t>(1, in.u8()) * 8;
            const auto data = payload(total);
            for (size_t off = 0; off < total || off == 0; off += per) {
                const size_t n = std::min(per, total - off);
                const bool last = off + n >= total;
                deliver(kPpidDdpSegment, 0,
                        segment(make_untagged_header(Opcode::send, as.send_msn, uint32_t(off), last),
                                std::span<const uint8_t>(data).subspan(off, n)));
                if (last) break;
            }
            ++as.send_msn;
            break;
        }
        }
    }

    void set_early(uint8_t sel) {
        static constexpr size_t limits[] = {QueuePair::kDefaultEarlyLimit, 0, 64, 200, 600, 2000, 10000, 100000};
        early_limit = limits[sel & 7];
        qp->set_early_limit(early_limit);
    }

    iwv_sge pick_sge(In& in) {
        const size_t r = in.u8() % kNumRegions;
        const uint16_t off = in.u16() % (kRegions[r].size + 8);
        const uint16_t len = in.u16() % (kRegions[r].size + 8);
        return iwv_sge{base[r] + off, len, stag[r]};
    }

    void post_recv(In& in) {
        iwv_recv_wr wr[3];
        std::vector<iwv_sge> sg[3];
        const int n = in.u8() % 3 + 1;
        for (int i = 0; i < n; ++i) {
            const int k = in.u8() % 4;
            for (int j = 0; j < k; ++j) sg[i].push_back(pick_sge(in));
            wr[i] = iwv_recv_wr{next_wr + uint64_t(i), i + 1 < n ? &wr[i + 1] : nullptr, sg[i].data(), int(sg[i].size())};
        }
        const iwv_recv_wr* bad = nullptr;
        std::string err;
        qp->post_recv(&wr[0], &bad, err);
        for (int i = 0; i < n && &wr[i] != bad; ++i) {
            uint64_t len = 0;
            for (auto& s : sg[i]) len += s.length;
            recvs[wr[i].wr_id] = {len, sg[i], false};
        }
        next_wr += uint64_t(n);
    }

    void post_send(In& in) {
        static constexpr iwv_wr_opcode ops[] = {IWV_WR_SEND, IWV_WR_SEND_WITH_INV, IWV_WR_RDMA_WRITE, IWV_WR_RDMA_READ};
        iwv_send_wr wr{};
        wr.wr_id = next_wr++;
        const uint8_t k = in.u8();
        wr.opcode = ops[k & 3];
        wr.send_flags = (k & 4 ? IWV_SEND_SIGNALED : 0) | (k & 8 ? IWV_SEND_FENCE : 0);
        std::vector<iwv_sge> sg;
        for (int j = (k >> 4) % 3; j > 0; --j) sg.push_back(pick_sge(in));
        wr.sg_list = sg.data();
        wr.num_sge = int(sg.size());
        wr.invalidate_rkey = in.u32();
        wr.rdma.rkey = in.u32();
        wr.rdma.remote_addr = in.u32();
        const iwv_send_wr* bad = nullptr;
        std::string err;
        if (qp->post_send(&wr, &bad, err) == 0) {
            uint64_t len = 0;
            for (auto& s : sg) len += s.length;
            sends[wr.wr_id] = {len, sg, wr.opcode == IWV_WR_RDMA_READ};
        }
    }

    void post_atomic(In& in) {
        iwv_send_wr wr{};
        wr.wr_id = next_wr++;
        const uint8_t k = in.u8();
        wr.opcode = k & 1 ? (k & 16 ? IWV_WR_ATOMIC_SWAP : IWV_WR_ATOMIC_CMP_AND_SWP) : IWV_WR_ATOMIC_FETCH_AND_ADD;
        wr.send_flags = (k & 4 ? IWV_SEND_SIGNALED : 0) | (k & 8 ? IWV_SEND_FENCE : 0);
        std::vector<iwv_sge> sg{pick_sge(in)};
        if (k & 2) sg[0].length = 8;
        wr.sg_list = sg.data();
        wr.num_sge = 1;
        wr.atomic.rkey = in.u32();
        wr.atomic.remote_addr = in.u32();
        wr.atomic.compare_add = in.u32();
        wr.atomic.swap = in.u32();
        const iwv_send_wr* bad = nullptr;
        std::string err;
        if (qp->post_send(&wr, &bad, err) == 0) sends[wr.wr_id] = {8, sg, true}; // the original lands in the SGE
    }

    void new_request() {
        if (assocs.size() >= 100) return;
        assocs.push_back(std::make_unique<Assoc>());
        cur = assocs.size() - 1;
        auto llp = a().pipe.a(seg);
        llp_origin[llp.get()] = &a();
        pending[&a()] = now;
        requests.add(std::move(llp), nullptr, now);
    }

    // Accept or reject an announced request (the ULP's answer).
    void answer(In& in) {
        const uint8_t k = in.u8();
        if (announced.empty()) return;
        iwv_conn_request* req = announced[k % announced.size()];
        if (!requests.find_announced(req)) return;
        const auto pd_bytes = in.bytes(in.u8() % 40);
        if (k & 0x80 || qp_assoc || qp->state() != IWV_QPS_INIT) { // the device's reject
            auto m = req->session.reject(pd_bytes);
            req->llp->send(kPpidSessionControl, m.data(), m.size());
            req->llp->close(false);
            requests.take(req);
            return;
        }
        auto owned = requests.take(req);
        qp_assoc = llp_origin.at(owned->llp.get());
        pending.erase(qp_assoc);
        qp->start_passive(std::move(owned->llp), std::move(owned->session), mine, pd_bytes);
    }

    std::map<const Llp*, Assoc*> llp_origin; // which association a request's LLP reads
    std::map<Assoc*, ConnRequests::Clock::time_point> pending; // handed to `requests`, and when

    // ---- after every operation: progress, then the invariants ----
    // What the peer may have changed in our memory during the operation (computed before it).
    std::vector<Range> writable() const {
        std::vector<Range> out;
        for (size_t i = 0; i < kNumRegions; ++i)
            if ((kRegions[i].access & (kRemoteWrite | kRemoteAtomic)) && !kRegions[i].other_pd && !kRegions[i].invalidated)
                out.push_back({base[i], base[i] + kRegions[i].size});
        for (auto* m : {&recvs, &sends})
            for (auto& [id, p] : *m)
                if (m == &recvs || p.read)
                    for (auto& s : p.sges) out.push_back({s.addr, s.addr + s.length});
        return out;
    }

    void settle(const std::vector<Range>& allowed) {
        const int n = requests.progress(now, req_events);
        CHECK(size_t(n) <= req_events.size());
        for (; !req_events.empty(); req_events.pop_front()) {
            const iwv_event& e = req_events.front();
            CHECK(e.type == IWV_EVENT_CONNECT_REQUEST && e.request && e.request->announced);
            CHECK(e.private_data_len <= IWV_MAX_PRIVATE_DATA);
            if (trace) std::fprintf(stderr, "connect request, %u bytes of private data\n", e.private_data_len);
            announced.push_back(e.request);
        }
        std::erase_if(announced, [&](iwv_conn_request* r) { return !requests.find_announced(r); });
        CHECK(requests.waiting() <= IWV_MAX_PENDING_REQUESTS);
        qp->progress();
        check_requests();
        check_memory(allowed);
        CHECK(qp->early_bytes() <= early_limit);
        check_completions();
        check_events();
        check_wire();
    }

    // Requests: each association handed to them is either still listed or closed by them (dropped
    // or rejected, the peer told by the abort); one still waiting is never past its timeout.
    void check_requests() {
        size_t listed = 0;
        for (auto it = pending.begin(); it != pending.end();) {
            if (it->first->pipe.ab->closed) {
                it = pending.erase(it);
                continue;
            }
            ++listed;
            const bool is_announced = std::any_of(announced.begin(), announced.end(), [&](iwv_conn_request* r) {
                return llp_origin.at(r->llp.get()) == it->first;
            });
            if (!is_announced) CHECK(now - it->second <= std::chrono::milliseconds(IWV_INITIATE_TIMEOUT_MS));
            ++it;
        }
        CHECK(listed == requests.size());
    }

    void check_memory(const std::vector<Range>& allowed) {
        for (size_t i = 0; i < mem.size(); ++i) {
            if (mem[i] == shadow[i]) continue;
            const uint64_t at = reinterpret_cast<uintptr_t>(mem.data() + i);
            bool ok = false;
            for (const Range& r : allowed) ok |= at >= r.lo && at < r.hi;
            CHECK(ok);
        }
        shadow = mem;
    }

    void check_completions() {
        CHECK(!scq.overflowed() && !rcq.overflowed());
        iwv_wc wc[kWrs];
        for (auto* cq : {&scq, &rcq}) {
            const int n = cq->poll(int(kWrs), wc);
            CHECK(n >= 0);
            for (int i = 0; i < n; ++i) {
                auto& m = cq == &rcq ? recvs : sends;
                auto it = m.find(wc[i].wr_id);
                CHECK(it != m.end()); // posted, and not completed before
                CHECK(wc[i].qp_num == qp->num());
                if (trace)
                    std::fprintf(stderr, "completion wr %llu status %d len %u\n", (unsigned long long)wc[i].wr_id,
                                 int(wc[i].status), wc[i].byte_len);
                if (wc[i].status == IWV_WC_SUCCESS) CHECK(wc[i].byte_len <= it->second.length);
                m.erase(it);
            }
        }
    }

    void check_events() {
        for (QpEvent& e : qp->take_events()) {
            if (trace) std::fprintf(stderr, "event %d: %s\n", int(e.type), e.detail.c_str());
            if (e.type == IWV_EVENT_QP_ERROR || e.type == IWV_EVENT_DISCONNECTED) CHECK(!e.detail.empty());
            if (e.type == IWV_EVENT_QP_ERROR && e.detail.rfind("sent Terminate: ", 0) == 0) expect_ddp_terminate = true;
            if (e.type == IWV_EVENT_QP_ERROR && e.detail.rfind("session protocol error: ", 0) == 0)
                expect_session_terminate = true;
        }
    }

    bool expect_ddp_terminate = false;
    bool expect_session_terminate = false;
    bool session_terminate_sent = false; // ever, on the QP's association (one per session)

    // What the QP sent to the peer: every Terminate decodes with a known code; an error that
    // says "sent Terminate" sent one.
    void check_wire() {
        if (!qp_assoc) return;
        bool saw = false;
        for (auto& m : qp_assoc->pipe.ab->ready) {
            if (m.ppid == kPpidSessionControl) {
                auto c = decode_session_control(m.bytes);
                CHECK(c);
                session_terminate_sent |= c->function == SessionFunction::terminate;
            }
            if (m.ppid != kPpidDdpSegment) continue;
            auto s = decode_segment(m.bytes);
            CHECK(s);
            if (s->hdr.tagged || Opcode(s->hdr.opcode) != Opcode::terminate) continue;
            auto t = decode_terminate(s->payload);
            CHECK(t && describe(t->code).rfind("unknown", 0) != 0);
            if (trace) std::fprintf(stderr, "sent Terminate %s\n", describe(t->code).c_str());
            saw = true;
        }
        if (expect_ddp_terminate) CHECK(saw);
        if (expect_session_terminate) CHECK(session_terminate_sent);
        expect_session_terminate = false;
        qp_assoc->pipe.ab->ready.clear(); // the peer has read it
        expect_ddp_terminate = false;
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    In in{data, size};
    Harness h;
    const uint8_t b0 = in.u8();
    static constexpr size_t segs[] = {kMinSegmentLimit, 600, 1024, 9000};
    h.seg = segs[b0 >> 4 & 3];
    h.mine = {uint16_t(in.u8() & 15), uint16_t(in.u8() & 15)};
    h.set_early(uint8_t(b0 >> 1));
    std::string err;
    h.qp->modify(IWV_QPS_INIT, err);
    if (b0 & 1) { // passive: the QP waits for a request to accept
        h.new_request();
    } else {
        h.assocs.push_back(std::make_unique<Assoc>());
        h.qp_assoc = h.assocs[0].get();
        h.qp->connecting();
        h.qp->start_active(h.qp_assoc->pipe.a(h.seg), h.mine, in.bytes(in.u8() % 16));
    }
    h.settle(h.writable());
    for (int ops = 0; !in.empty() && ops < 200; ++ops) {
        const auto allowed = h.writable();
        h.step(in);
        h.settle(allowed);
    }
    return 0;
}
