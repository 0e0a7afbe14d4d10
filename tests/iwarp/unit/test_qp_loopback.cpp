// SPDX-License-Identifier: BSD-3-Clause
// The RDMAP/DDP engine of two queue pairs joined by an in-memory LLP: every operation with data
// checked byte for byte, segmentation at a small segment size, scrambled (unordered) delivery,
// flow control, and the error paths (Terminate sent and received, both QPs in ERR, flushes).
#include <gtest/gtest.h>

#include "mem_llp.hpp"

#include <algorithm>
#include "qp.hpp"

#include <cstring>
#include <numeric>

using namespace iwarp;

namespace {

constexpr size_t kSeg = 600; // small segments: multi-segment messages stay cheap to test

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    uint32_t x = seed * 2654435761u + 1;
    for (auto& b : v) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b = uint8_t(x);
    }
    return v;
}

uint64_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

struct Side {
    explicit Side(uint64_t seed) : stags(seed) {}
    StagTable stags;
    PdHandle pd = stags.alloc_pd();
    CompletionQueue scq{4096}, rcq{4096};
    std::unique_ptr<QueuePair> qp =
        std::make_unique<QueuePair>(uint32_t(stags.size() + 1), stags, pd, scq, rcq, iwv_qp_cap{256, 256, 4, 4, 0}, false);
    std::vector<uint8_t> mem = std::vector<uint8_t>(1 << 16);
    uint32_t stag = stags.register_region(pd, addr(mem.data()), mem.size(), kLocalWrite | kRemoteWrite | kRemoteRead);

    std::vector<iwv_wc> drain(CompletionQueue& cq) {
        std::vector<iwv_wc> out(4096);
        int n = cq.poll(int(out.size()), out.data());
        out.resize(size_t(std::max(n, 0)));
        return out;
    }
    void post_recv(uint64_t id, std::vector<iwv_sge> sges) {
        iwv_recv_wr wr{id, nullptr, sges.data(), int(sges.size())};
        const iwv_recv_wr* bad = nullptr;
        std::string err;
        ASSERT_EQ(qp->post_recv(&wr, &bad, err), 0) << err;
    }
    int post(iwv_send_wr wr, std::vector<iwv_sge> sges, std::string* err_out = nullptr) {
        wr.sg_list = sges.data();
        wr.num_sge = int(sges.size());
        const iwv_send_wr* bad = nullptr;
        std::string err;
        int rc = qp->post_send(&wr, &bad, err);
        if (err_out) *err_out = err;
        return rc;
    }
    iwv_sge sge(size_t off, uint32_t len) { return iwv_sge{addr(mem.data() + off), len, stag}; }
};

iwv_send_wr wr_of(uint64_t id, iwv_wr_opcode op, unsigned flags = IWV_SEND_SIGNALED) {
    iwv_send_wr w{};
    w.wr_id = id;
    w.opcode = op;
    w.send_flags = flags;
    return w;
}

struct Loop {
    memllp::Pair pipe;
    Side a{1}, b{2};

    explicit Loop(size_t seg = kSeg, IrdOrdPair ia = {4, 4}, IrdOrdPair ib = {4, 4}) {
        std::string err;
        EXPECT_EQ(a.qp->modify(IWV_QPS_INIT, err), 0);
        EXPECT_EQ(b.qp->modify(IWV_QPS_INIT, err), 0);
        a.qp->connecting();
        EXPECT_EQ(a.qp->state(), IWV_QPS_RTR);
        a.qp->start_active(pipe.a(seg), ia, std::vector<uint8_t>{1, 2});
        // The device's part on the passive side: read the Initiate, then accept.
        auto lb = pipe.b(seg);
        std::vector<uint8_t> init(1024);
        LlpRead r = lb->read(init.data(), init.size());
        EXPECT_TRUE(r.eor);
        EXPECT_EQ(r.ppid, kPpidSessionControl);
        init.resize(size_t(r.n));
        Session s(SessionRole::passive);
        EXPECT_EQ(s.on_control(init).event, Session::Event::request);
        b.qp->start_passive(std::move(lb), std::move(s), ib, {});
        EXPECT_EQ(b.qp->state(), IWV_QPS_RTS);
        run([&] { return a.qp->state() == IWV_QPS_RTS; });
        auto ev = a.qp->take_events();
        EXPECT_EQ(ev.size(), 1u);
        if (!ev.empty()) {
            EXPECT_EQ(ev[0].type, IWV_EVENT_ESTABLISHED);
        }
    }
    bool run(const std::function<bool()>& pred, int rounds = 20000) {
        for (int i = 0; i < rounds && !pred(); ++i) {
            a.qp->progress();
            b.qp->progress();
        }
        return pred();
    }
    void settle() {
        run([] { return false; }, 50);
    }
};

iwv_qp_attr query(QueuePair& qp) {
    iwv_qp_attr at;
    qp.query(&at);
    return at;
}

} // namespace

TEST(QpLoopback, IrdOrdAreNegotiatedAtConnect) {
    Loop l(kSeg, {8, 2}, {1, 16});
    EXPECT_EQ(l.a.qp->negotiated().ird, 8);  // min(8, b's ORD 16)
    EXPECT_EQ(l.a.qp->negotiated().ord, 1);  // min(2, b's IRD 1)
    EXPECT_EQ(l.b.qp->negotiated().ird, 1);  // min(1, a's ORD 2)
    EXPECT_EQ(l.b.qp->negotiated().ord, 8);  // min(16, a's IRD 8)
}

TEST(QpLoopback, SendScattersAcrossSgeAndSegments) {
    Loop l;
    auto data = pattern(5000, 1);
    std::copy(data.begin(), data.end(), l.a.mem.begin());
    // Receive into three pieces of b's memory, in a different order than addresses.
    l.b.post_recv(7, {l.b.sge(20000, 1000), l.b.sge(100, 3000), l.b.sge(9000, 1500)});
    ASSERT_EQ(l.a.post(wr_of(1, IWV_WR_SEND), {l.a.sge(0, 2000), l.a.sge(2000, 3000)}), 0);
    ASSERT_TRUE(l.run([&] { return l.b.rcq.size() == 1 && l.a.scq.size() == 1; }));
    auto rc = l.b.drain(l.b.rcq);
    EXPECT_EQ(rc[0].wr_id, 7u);
    EXPECT_EQ(rc[0].status, IWV_WC_SUCCESS);
    EXPECT_EQ(rc[0].opcode, IWV_WC_RECV);
    EXPECT_EQ(rc[0].byte_len, 5000u);
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + 1000, l.b.mem.begin() + 20000));
    EXPECT_TRUE(std::equal(data.begin() + 1000, data.begin() + 4000, l.b.mem.begin() + 100));
    EXPECT_TRUE(std::equal(data.begin() + 4000, data.end(), l.b.mem.begin() + 9000));
    auto sc = l.a.drain(l.a.scq);
    EXPECT_EQ(sc[0].wr_id, 1u);
    EXPECT_EQ(sc[0].opcode, IWV_WC_SEND);
}

TEST(QpLoopback, ZeroLengthSendConsumesAReceive) {
    Loop l;
    l.b.post_recv(1, {l.b.sge(0, 64)});
    ASSERT_EQ(l.a.post(wr_of(9, IWV_WR_SEND), {}), 0);
    ASSERT_TRUE(l.run([&] { return l.b.rcq.size() == 1; }));
    auto rc = l.b.drain(l.b.rcq);
    EXPECT_EQ(rc[0].byte_len, 0u);
    EXPECT_EQ(rc[0].status, IWV_WC_SUCCESS);
}

TEST(QpLoopback, WriteThenSendIsVisibleWhenTheSendArrives) {
    Loop l;
    auto data = pattern(20000, 2);
    std::copy(data.begin(), data.end(), l.a.mem.begin());
    l.b.post_recv(1, {l.b.sge(60000, 16)});
    iwv_send_wr w = wr_of(1, IWV_WR_RDMA_WRITE, 0); // unsignaled: no completion on success
    w.rdma.remote_addr = addr(l.b.mem.data() + 1234);
    w.rdma.rkey = l.b.stag;
    ASSERT_EQ(l.a.post(w, {l.a.sge(0, 20000)}), 0);
    ASSERT_EQ(l.a.post(wr_of(2, IWV_WR_SEND), {l.a.sge(0, 16)}), 0);
    ASSERT_TRUE(l.run([&] { return l.b.rcq.size() == 1; }));
    EXPECT_TRUE(std::equal(data.begin(), data.end(), l.b.mem.begin() + 1234));
    l.settle();
    auto sc = l.a.drain(l.a.scq);
    ASSERT_EQ(sc.size(), 1u); // only the signalled Send
    EXPECT_EQ(sc[0].wr_id, 2u);
}

TEST(QpLoopback, ReadFetchesRemoteMemoryAndCompletesBeforeALaterSend) {
    Loop l;
    auto data = pattern(7000, 3);
    std::copy(data.begin(), data.end(), l.b.mem.begin() + 30000);
    iwv_send_wr r = wr_of(10, IWV_WR_RDMA_READ);
    r.rdma.remote_addr = addr(l.b.mem.data() + 30000);
    r.rdma.rkey = l.b.stag;
    l.b.post_recv(1, {l.b.sge(0, 8)});
    ASSERT_EQ(l.a.post(r, {l.a.sge(500, 7000)}), 0);
    ASSERT_EQ(l.a.post(wr_of(11, IWV_WR_SEND), {l.a.sge(0, 8)}), 0);
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 2; }));
    auto sc = l.a.drain(l.a.scq);
    EXPECT_EQ(sc[0].wr_id, 10u); // RFC 5040 §5.5: local completion in submission order
    EXPECT_EQ(sc[0].opcode, IWV_WC_RDMA_READ);
    EXPECT_EQ(sc[0].byte_len, 7000u);
    EXPECT_EQ(sc[1].wr_id, 11u);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), l.a.mem.begin() + 500));
}

TEST(QpLoopback, ZeroLengthReadCompletes) {
    Loop l;
    iwv_send_wr r = wr_of(4, IWV_WR_RDMA_READ);
    r.rdma.rkey = 0x12345678; // RFC 5040 §5.2.1: not validated for size 0
    ASSERT_EQ(l.a.post(r, {}), 0);
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 1; }));
    auto sc = l.a.drain(l.a.scq);
    EXPECT_EQ(sc[0].status, IWV_WC_SUCCESS);
    EXPECT_EQ(sc[0].byte_len, 0u);
}

TEST(QpLoopback, ReadsBeyondOrdWaitForCredits) {
    Loop l(kSeg, {4, 1}, {1, 4}); // a's ORD = 1
    std::vector<std::vector<uint8_t>> chunks;
    for (int i = 0; i < 5; ++i) {
        chunks.push_back(pattern(1500, uint8_t(10 + i)));
        std::copy(chunks[i].begin(), chunks[i].end(), l.b.mem.begin() + i * 2000);
        iwv_send_wr r = wr_of(uint64_t(i), IWV_WR_RDMA_READ);
        r.rdma.remote_addr = addr(l.b.mem.data() + i * 2000);
        r.rdma.rkey = l.b.stag;
        ASSERT_EQ(l.a.post(r, {l.a.sge(size_t(i) * 2000, 1500)}), 0);
    }
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 5; }));
    auto sc = l.a.drain(l.a.scq);
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(sc[size_t(i)].wr_id, uint64_t(i));
        EXPECT_EQ(sc[size_t(i)].status, IWV_WC_SUCCESS);
        EXPECT_TRUE(std::equal(chunks[i].begin(), chunks[i].end(), l.a.mem.begin() + i * 2000)) << i;
    }
    EXPECT_EQ(query(*l.b.qp).state, IWV_QPS_RTS); // b never saw more Read Requests than its IRD
}

// RFC 7306: the 8 bytes of a region registered for remote atomics, and an atomic WR aimed at them.
struct Counter {
    uint64_t* word;
    uint32_t stag;
    Counter(Side& s, size_t off, uint64_t value)
        : word(reinterpret_cast<uint64_t*>(s.mem.data() + off)),
          stag(s.stags.register_region(s.pd, addr(s.mem.data() + off), 64, kLocalWrite | kRemoteAtomic)) {
        *word = value;
    }
    iwv_send_wr wr(uint64_t id, iwv_wr_opcode op, uint64_t compare_add, uint64_t swap = 0) const {
        iwv_send_wr w = wr_of(id, op);
        w.atomic.remote_addr = addr(word);
        w.atomic.rkey = stag;
        w.atomic.compare_add = compare_add;
        w.atomic.swap = swap;
        return w;
    }
};

uint64_t word_at(Side& s, size_t off) {
    uint64_t v;
    std::memcpy(&v, s.mem.data() + off, sizeof v);
    return v;
}

TEST(QpLoopback, AtomicsReturnTheOriginalAndChangeTheTarget) {
    Loop l;
    Counter c(l.b, 4096, 100);
    ASSERT_EQ(l.a.post(c.wr(1, IWV_WR_ATOMIC_FETCH_AND_ADD, 5), {l.a.sge(0, 8)}), 0);
    ASSERT_EQ(l.a.post(c.wr(2, IWV_WR_ATOMIC_CMP_AND_SWP, 105, 7), {l.a.sge(8, 8)}), 0);   // matches: swaps
    ASSERT_EQ(l.a.post(c.wr(3, IWV_WR_ATOMIC_CMP_AND_SWP, 999, 1234), {l.a.sge(16, 8)}), 0); // does not
    ASSERT_EQ(l.a.post(c.wr(4, IWV_WR_ATOMIC_FETCH_AND_ADD, ~0ull), {l.a.sge(24, 8)}), 0);  // adds -1
    ASSERT_EQ(l.a.post(c.wr(5, IWV_WR_ATOMIC_SWAP, 999, 42), {l.a.sge(32, 8)}), 0);         // always swaps
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 5; }));
    auto sc = l.a.drain(l.a.scq);
    const iwv_wc_opcode want[] = {IWV_WC_FETCH_ADD, IWV_WC_COMP_SWAP, IWV_WC_COMP_SWAP, IWV_WC_FETCH_ADD,
                                  IWV_WC_COMP_SWAP};
    for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(sc[i].wr_id, i + 1);
        EXPECT_EQ(sc[i].status, IWV_WC_SUCCESS);
        EXPECT_EQ(sc[i].opcode, want[i]);
        EXPECT_EQ(sc[i].byte_len, 8u);
    }
    EXPECT_EQ(word_at(l.a, 0), 100u);
    EXPECT_EQ(word_at(l.a, 8), 105u);
    EXPECT_EQ(word_at(l.a, 16), 7u);
    EXPECT_EQ(word_at(l.a, 24), 7u);
    EXPECT_EQ(word_at(l.a, 32), 6u);
    EXPECT_EQ(*c.word, 42u);
    EXPECT_EQ(query(*l.b.qp).state, IWV_QPS_RTS);
}

// A QP that enters ERR flushes every outstanding WR; those that never went to the LLP say so
// (IWV_WC_NOT_SENT), since an atomic the peer never saw may be posted again elsewhere while one
// that went out may have run there.
TEST(QpLoopback, FlushedWorkRequestsSayWhetherTheyEverLeft) {
    Loop l(kSeg, {1, 1}, {1, 1}); // ORD 1: the second atomic waits for the first one's response
    Counter c(l.b, 4096, 100);
    for (uint64_t i = 0; i < 3; ++i)
        ASSERT_EQ(l.a.post(c.wr(i, IWV_WR_ATOMIC_FETCH_AND_ADD, 1), {l.a.sge(8 * i, 8)}), 0);
    ASSERT_TRUE(l.run([&] { return *c.word == 101; })); // the first ran; the second waits for its credit
    std::string err;
    ASSERT_EQ(l.a.qp->modify(IWV_QPS_ERR, err), 0);
    l.settle();
    auto sc = l.a.drain(l.a.scq);
    ASSERT_EQ(sc.size(), 3u);
    int not_sent = 0;
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(sc[i].wr_id, i);
        if (sc[i].status != IWV_WC_SUCCESS) {
            EXPECT_EQ(sc[i].status, IWV_WC_WR_FLUSH_ERR);
        }
        not_sent += (sc[i].wc_flags & IWV_WC_NOT_SENT) != 0;
    }
    EXPECT_FALSE(sc[0].wc_flags & IWV_WC_NOT_SENT); // it went out (and ran)
    EXPECT_TRUE(sc[2].wc_flags & IWV_WC_NOT_SENT);  // behind the credit the first one held
    EXPECT_EQ(*c.word, 100u + 3u - uint64_t(not_sent)); // every one not marked went out and ran
    // The target's log says the same, with each original value (what a lost Response carried).
    const uint64_t ran = 3u - uint64_t(not_sent);
    ASSERT_EQ(l.b.qp->atomics_done(), ran);
    for (uint64_t i = 0; i < ran; ++i) {
        uint64_t original = 0;
        ASSERT_TRUE(l.b.qp->atomic_original(i, &original));
        EXPECT_EQ(original, 100u + i);
    }
    uint64_t none = 0;
    EXPECT_FALSE(l.b.qp->atomic_original(ran, &none));
}

TEST(QpLoopback, AtomicLogKeepsTheLastOriginals) {
    Loop l;
    Counter c(l.b, 4096, 0);
    const uint64_t n = IWV_ATOMIC_LOG + 10;
    for (uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(l.a.post(c.wr(i, IWV_WR_ATOMIC_FETCH_AND_ADD, 1), {l.a.sge(0, 8)}), 0);
        ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 1; }));
        l.a.drain(l.a.scq);
    }
    ASSERT_EQ(l.b.qp->atomics_done(), n);
    uint64_t original = 0;
    EXPECT_FALSE(l.b.qp->atomic_original(n - IWV_ATOMIC_LOG - 1, &original)); // dropped from the log
    for (uint64_t i = n - IWV_ATOMIC_LOG; i < n; ++i) {
        ASSERT_TRUE(l.b.qp->atomic_original(i, &original));
        EXPECT_EQ(original, i);
    }
}

// Many atomics in flight beyond ORD, mixed with Reads on the same credits, from both sides at
// once: every original value is the one before it (responses in request order, RFC 7306 §5.2.2),
// the counters end exact, and each side's completions come in submission order.
TEST(QpLoopback, AtomicsShareOrdWithReadsAndCountExactlyFromBothSides) {
    Loop l(kSeg, {2, 2}, {2, 2});
    Counter on_b(l.b, 8192, 1000), on_a(l.a, 8192, 0);
    auto data = pattern(900, 7);
    std::copy(data.begin(), data.end(), l.b.mem.begin() + 20000);
    constexpr int kOps = 60;
    for (int i = 0; i < kOps; ++i) {
        ASSERT_EQ(l.a.post(on_b.wr(uint64_t(i), IWV_WR_ATOMIC_FETCH_AND_ADD, 3), {l.a.sge(size_t(i) * 8, 8)}), 0);
        ASSERT_EQ(l.b.post(on_a.wr(uint64_t(i), IWV_WR_ATOMIC_CMP_AND_SWP, uint64_t(i), uint64_t(i + 1)),
                           {l.b.sge(size_t(i) * 8, 8)}),
                  0);
        if (i % 10 == 5) {
            iwv_send_wr r = wr_of(1000 + uint64_t(i), IWV_WR_RDMA_READ);
            r.rdma.remote_addr = addr(l.b.mem.data() + 20000);
            r.rdma.rkey = l.b.stag;
            ASSERT_EQ(l.a.post(r, {l.a.sge(30000 + size_t(i / 10) * 1000, 900)}), 0);
        }
    }
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == kOps + 6 && l.b.scq.size() == kOps; }));
    auto sa = l.a.drain(l.a.scq), sb = l.b.drain(l.b.scq);
    int atomic_seen = 0;
    for (const iwv_wc& wc : sa) {
        ASSERT_EQ(wc.status, IWV_WC_SUCCESS);
        if (wc.wr_id >= 1000) {
            EXPECT_EQ(wc.opcode, IWV_WC_RDMA_READ);
            EXPECT_TRUE(std::equal(data.begin(), data.end(), l.a.mem.begin() + 30000 + (wc.wr_id - 1000) / 10 * 1000));
            continue;
        }
        EXPECT_EQ(wc.wr_id, uint64_t(atomic_seen++)); // in submission order
    }
    for (int i = 0; i < kOps; ++i) {
        EXPECT_EQ(word_at(l.a, size_t(i) * 8), 1000u + 3u * uint64_t(i)) << i;
        EXPECT_EQ(sb[size_t(i)].wr_id, uint64_t(i));
        EXPECT_EQ(word_at(l.b, size_t(i) * 8), uint64_t(i)) << i; // each compare saw the previous swap
    }
    EXPECT_EQ(*on_b.word, 1000u + 3u * kOps);
    EXPECT_EQ(*on_a.word, uint64_t(kOps));
}

TEST(QpLoopback, AtomicOnUnalignedTargetTerminatesAndLeavesMemoryAlone) {
    Loop l;
    Counter c(l.b, 4096, 0x1111111111111111ull);
    iwv_send_wr w = c.wr(1, IWV_WR_ATOMIC_FETCH_AND_ADD, 1);
    w.atomic.remote_addr += 4;
    ASSERT_EQ(l.a.post(w, {l.a.sge(0, 8)}), 0);
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 1; }));
    auto sc = l.a.drain(l.a.scq);
    EXPECT_NE(sc[0].status, IWV_WC_SUCCESS);
    EXPECT_EQ(sc[0].vendor_err, vendor_code(term::rdmap_catastrophic_stream));
    EXPECT_EQ(query(*l.b.qp).terminate_code, vendor_code(term::rdmap_catastrophic_stream));
    EXPECT_EQ(*c.word, 0x1111111111111111ull);
    EXPECT_EQ(word_at(l.b, 4096 + 8), 0u);
}

TEST(QpLoopback, AtomicWithoutRemoteAtomicAccessFailsWithRemoteAccessError) {
    Loop l;
    *reinterpret_cast<uint64_t*>(l.b.mem.data() + 64) = 9;
    iwv_send_wr w = wr_of(1, IWV_WR_ATOMIC_CMP_AND_SWP);
    w.atomic.remote_addr = addr(l.b.mem.data() + 64);
    w.atomic.rkey = l.b.stag; // remote write and read, not atomic
    w.atomic.compare_add = 9;
    w.atomic.swap = 10;
    ASSERT_EQ(l.a.post(w, {l.a.sge(0, 8)}), 0);
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 1; }));
    auto sc = l.a.drain(l.a.scq);
    EXPECT_EQ(sc[0].status, IWV_WC_REM_ACCESS_ERR);
    EXPECT_EQ(sc[0].vendor_err, vendor_code(term::rdmap_access_rights));
    EXPECT_EQ(word_at(l.b, 64), 9u);
}

TEST(QpLoopback, AtomicPostNeedsOneEightByteSinkAndCredits) {
    Loop l;
    Counter c(l.b, 4096, 0);
    std::string err;
    EXPECT_EQ(l.a.post(c.wr(1, IWV_WR_ATOMIC_FETCH_AND_ADD, 1), {l.a.sge(0, 4)}, &err), EINVAL);
    EXPECT_NE(err.find("8 bytes"), std::string::npos) << err;
    EXPECT_EQ(l.a.post(c.wr(1, IWV_WR_ATOMIC_FETCH_AND_ADD, 1), {l.a.sge(0, 8), l.a.sge(8, 8)}, &err), EINVAL);
    uint32_t read_only = l.a.stags.register_region(l.a.pd, addr(l.a.mem.data()), 64, kRemoteRead);
    EXPECT_EQ(l.a.post(c.wr(1, IWV_WR_ATOMIC_FETCH_AND_ADD, 1), {iwv_sge{addr(l.a.mem.data()), 8, read_only}}, &err),
              EINVAL); // the original value is written into the sink: local write
    Loop no_credit(kSeg, {4, 0}, {0, 4});
    Counter c2(no_credit.b, 4096, 0);
    EXPECT_EQ(no_credit.a.post(c2.wr(1, IWV_WR_ATOMIC_CMP_AND_SWP, 0, 1), {no_credit.a.sge(0, 8)}, &err), EINVAL);
    EXPECT_NE(err.find("ORD"), std::string::npos) << err;
}

TEST(QpLoopback, SendWithInvalidateAndSolicitedEvent) {
    Loop l;
    uint32_t victim = l.b.stags.register_region(l.b.pd, addr(l.b.mem.data()), 64, kLocalWrite | kRemoteWrite);
    l.b.post_recv(1, {l.b.sge(1000, 100)});
    l.b.post_recv(2, {l.b.sge(2000, 100)});
    iwv_send_wr s = wr_of(1, IWV_WR_SEND_WITH_INV, IWV_SEND_SIGNALED | IWV_SEND_SOLICITED);
    s.invalidate_rkey = victim;
    ASSERT_EQ(l.a.post(s, {l.a.sge(0, 10)}), 0);
    ASSERT_EQ(l.a.post(wr_of(2, IWV_WR_SEND, IWV_SEND_SIGNALED | IWV_SEND_SOLICITED), {l.a.sge(0, 10)}), 0);
    ASSERT_TRUE(l.run([&] { return l.b.rcq.size() == 2; }));
    auto rc = l.b.drain(l.b.rcq);
    EXPECT_EQ(rc[0].wc_flags, unsigned(IWV_WC_WITH_INV | IWV_WC_SOLICITED));
    EXPECT_EQ(rc[0].invalidated_rkey, victim);
    EXPECT_EQ(rc[1].wc_flags, unsigned(IWV_WC_SOLICITED));
    EXPECT_FALSE(l.b.stags.find(victim)->valid);
    EXPECT_TRUE(l.b.stags.find(l.b.stag)->valid);
}

TEST(QpLoopback, ScrambledDeliveryIsPutBackInDdpSsnOrder) {
    Loop l;
    l.pipe.ab->hold = true; // everything a sends waits, then arrives shuffled
    std::vector<std::vector<uint8_t>> msgs;
    for (int i = 0; i < 6; ++i) {
        msgs.push_back(pattern(900 + size_t(i) * 700, uint8_t(40 + i)));
        std::copy(msgs[i].begin(), msgs[i].end(), l.a.mem.begin() + i * 6000);
        l.b.post_recv(uint64_t(100 + i), {l.b.sge(size_t(i) * 6000, 5000)});
        iwv_send_wr w = wr_of(uint64_t(i), IWV_WR_RDMA_WRITE, 0);
        w.rdma.remote_addr = addr(l.b.mem.data() + 40000 + i * 4000);
        w.rdma.rkey = l.b.stag;
        ASSERT_EQ(l.a.post(w, {l.a.sge(size_t(i) * 6000, uint32_t(msgs[i].size()))}), 0);
        ASSERT_EQ(l.a.post(wr_of(uint64_t(i), IWV_WR_SEND), {l.a.sge(size_t(i) * 6000, uint32_t(msgs[i].size()))}), 0);
    }
    l.settle();
    ASSERT_GT(l.pipe.ab->held.size(), 20u);
    l.pipe.ab->release(12345);
    ASSERT_TRUE(l.run([&] { return l.b.rcq.size() == 6; }));
    auto rc = l.b.drain(l.b.rcq);
    for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(rc[size_t(i)].wr_id, uint64_t(100 + i));
        EXPECT_EQ(rc[size_t(i)].byte_len, msgs[i].size());
        EXPECT_TRUE(std::equal(msgs[i].begin(), msgs[i].end(), l.b.mem.begin() + i * 6000)) << i;
        EXPECT_TRUE(std::equal(msgs[i].begin(), msgs[i].end(), l.b.mem.begin() + 40000 + i * 4000)) << i;
    }
    EXPECT_EQ(query(*l.b.qp).state, IWV_QPS_RTS);
}

// Messages ahead of a missing one are held only up to the QP's early limit: past it, the session
// ends with an error naming the bound, instead of holding whatever the peer sends.
TEST(QpLoopback, MessagesAheadOfAHoleAreBounded) {
    Loop l;
    l.b.qp->set_early_limit(3000);
    l.pipe.ab->hold = true;
    for (int i = 0; i < 6; ++i) {
        iwv_send_wr w = wr_of(uint64_t(i), IWV_WR_RDMA_WRITE, 0);
        w.rdma.remote_addr = addr(l.b.mem.data() + i * 2000);
        w.rdma.rkey = l.b.stag;
        ASSERT_EQ(l.a.post(w, {l.a.sge(size_t(i) * 2000, 1000)}), 0);
    }
    l.settle();
    auto& q = *l.pipe.ab;
    ASSERT_GE(q.held.size(), 6u);
    std::reverse(q.held.begin(), q.held.end()); // the first arrives last: the rest are ahead of it
    for (auto& m : q.held) q.ready.push_back(std::move(m));
    q.held.clear();
    ASSERT_TRUE(l.run([&] { return l.b.qp->state() == IWV_QPS_ERR; }));
    auto eb = l.b.qp->take_events();
    ASSERT_FALSE(eb.empty());
    EXPECT_NE(eb[0].detail.find("over the bound of 3000"), std::string::npos) << eb[0].detail;
}

// ---- a peer that ends a later MSN first ------------------------------------------------------
// RFC 5041 §5.3: the Data Sink may place in any order but Delivers messages in the order they were
// sent, on an untagged queue MSN order (§4.3). The peer below sends the second message of a queue
// first: the two held messages swap their contents but keep their DDP-SSNs, so the receiver takes
// MSN 2 before MSN 1. Each message must be Delivered to its own buffer, in MSN order.

namespace {

// The held DDP segments of `op` on `q`, in the order sent.
std::vector<memllp::Message*> held_segments(memllp::Queue& q, Opcode op) {
    std::vector<memllp::Message*> out;
    for (auto& m : q.held) {
        auto s = decode_segment(m.bytes);
        if (m.ppid == kPpidDdpSegment && s && !s->hdr.tagged && Opcode(s->hdr.opcode) == op) out.push_back(&m);
    }
    return out;
}

void swap_behind_ssn(memllp::Message& x, memllp::Message& y) {
    std::swap(x.bytes, y.bytes);
    std::swap_ranges(x.bytes.begin(), x.bytes.begin() + kSsnSize, y.bytes.begin()); // SSNs stay put
}

// Releases the first `n` held messages (all by default) in the order sent.
void release_in_order(memllp::Queue& q, size_t n = SIZE_MAX) {
    n = std::min(n, q.held.size());
    for (size_t i = 0; i < n; ++i) q.ready.push_back(std::move(q.held[i]));
    q.held.erase(q.held.begin(), q.held.begin() + long(n));
}

} // namespace

TEST(QpLoopback, SendOfALaterMsnWaitsForTheEarlierOne) {
    Loop l;
    const auto first = pattern(10, 61), second = pattern(30, 62);
    std::copy(first.begin(), first.end(), l.a.mem.begin());
    std::copy(second.begin(), second.end(), l.a.mem.begin() + 100);
    l.b.post_recv(1, {l.b.sge(0, 100)});
    l.b.post_recv(2, {l.b.sge(1000, 100)});
    l.pipe.ab->hold = true;
    ASSERT_EQ(l.a.post(wr_of(1, IWV_WR_SEND), {l.a.sge(0, 10)}), 0);
    ASSERT_EQ(l.a.post(wr_of(2, IWV_WR_SEND), {l.a.sge(100, 30)}), 0);
    auto sends = held_segments(*l.pipe.ab, Opcode::send);
    ASSERT_EQ(sends.size(), 2u);
    swap_behind_ssn(*sends[0], *sends[1]);
    release_in_order(*l.pipe.ab, 1); // MSN 2 alone: complete, but MSN 1 is not Delivered yet
    l.settle();
    EXPECT_EQ(l.b.rcq.size(), 0u);
    release_in_order(*l.pipe.ab);
    ASSERT_TRUE(l.run([&] { return l.b.rcq.size() == 2; }));
    auto rc = l.b.drain(l.b.rcq);
    EXPECT_EQ(rc[0].wr_id, 1u);
    EXPECT_EQ(rc[0].status, IWV_WC_SUCCESS);
    EXPECT_EQ(rc[0].byte_len, 10u);
    EXPECT_EQ(rc[1].wr_id, 2u);
    EXPECT_EQ(rc[1].status, IWV_WC_SUCCESS);
    EXPECT_EQ(rc[1].byte_len, 30u);
    EXPECT_TRUE(std::equal(first.begin(), first.end(), l.b.mem.begin()));
    EXPECT_TRUE(std::equal(second.begin(), second.end(), l.b.mem.begin() + 1000));
    EXPECT_EQ(query(*l.b.qp).state, IWV_QPS_RTS);
}

TEST(QpLoopback, ReadRequestOfALaterMsnWaitsForTheEarlierOne) {
    Loop l;
    const auto one = pattern(700, 63), two = pattern(900, 64);
    std::copy(one.begin(), one.end(), l.b.mem.begin() + 30000);
    std::copy(two.begin(), two.end(), l.b.mem.begin() + 40000);
    l.pipe.ab->hold = true;
    for (uint64_t i = 0; i < 2; ++i) {
        iwv_send_wr r = wr_of(i + 1, IWV_WR_RDMA_READ);
        r.rdma.remote_addr = addr(l.b.mem.data() + 30000 + i * 10000);
        r.rdma.rkey = l.b.stag;
        ASSERT_EQ(l.a.post(r, {l.a.sge(i * 2000, i ? 900 : 700)}), 0);
    }
    auto requests = held_segments(*l.pipe.ab, Opcode::read_request);
    ASSERT_EQ(requests.size(), 2u);
    swap_behind_ssn(*requests[0], *requests[1]);
    release_in_order(*l.pipe.ab);
    l.pipe.ab->hold = false;
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 2; }));
    auto sc = l.a.drain(l.a.scq);
    EXPECT_EQ(sc[0].status, IWV_WC_SUCCESS);
    EXPECT_EQ(sc[1].status, IWV_WC_SUCCESS);
    EXPECT_TRUE(std::equal(one.begin(), one.end(), l.a.mem.begin()));
    EXPECT_TRUE(std::equal(two.begin(), two.end(), l.a.mem.begin() + 2000));
    EXPECT_EQ(query(*l.b.qp).state, IWV_QPS_RTS);
}

TEST(QpLoopback, AtomicResponseOfALaterMsnWaitsForTheEarlierOne) {
    Loop l;
    Counter c(l.b, 4096, 100);
    l.pipe.ba->hold = true;
    ASSERT_EQ(l.a.post(c.wr(1, IWV_WR_ATOMIC_FETCH_AND_ADD, 5), {l.a.sge(0, 8)}), 0);
    ASSERT_EQ(l.a.post(c.wr(2, IWV_WR_ATOMIC_FETCH_AND_ADD, 1), {l.a.sge(8, 8)}), 0);
    ASSERT_TRUE(l.run([&] { return held_segments(*l.pipe.ba, Opcode::atomic_response).size() == 2; }));
    auto responses = held_segments(*l.pipe.ba, Opcode::atomic_response);
    swap_behind_ssn(*responses[0], *responses[1]);
    release_in_order(*l.pipe.ba);
    l.pipe.ba->hold = false;
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 2; }));
    auto sc = l.a.drain(l.a.scq);
    EXPECT_EQ(sc[0].wr_id, 1u);
    EXPECT_EQ(sc[0].status, IWV_WC_SUCCESS);
    EXPECT_EQ(sc[1].wr_id, 2u);
    EXPECT_EQ(sc[1].status, IWV_WC_SUCCESS);
    EXPECT_EQ(word_at(l.a, 0), 100u); // each original in the sink of its own WR
    EXPECT_EQ(word_at(l.a, 8), 105u);
    EXPECT_EQ(query(*l.a.qp).state, IWV_QPS_RTS);
}

TEST(QpLoopback, BlockedLlpIsRetried) {
    Loop l;
    l.pipe.ab->max_queued = 2; // the "send buffer" takes two messages at a time
    auto data = pattern(30000, 5);
    std::copy(data.begin(), data.end(), l.a.mem.begin());
    l.b.post_recv(1, {l.b.sge(0, 30000)});
    ASSERT_EQ(l.a.post(wr_of(1, IWV_WR_SEND), {l.a.sge(0, 30000)}), 0);
    EXPECT_TRUE(l.a.qp->tx_blocked());
    ASSERT_TRUE(l.run([&] { return l.b.rcq.size() == 1; }));
    EXPECT_TRUE(std::equal(data.begin(), data.end(), l.b.mem.begin()));
}

// ---- errors ------------------------------------------------------------------------------------

TEST(QpLoopback, WriteToBadStagTerminatesAndFlushesBothSides) {
    Loop l;
    l.b.post_recv(1, {l.b.sge(0, 100)});
    l.b.post_recv(2, {l.b.sge(100, 100)});
    l.a.post_recv(3, {l.a.sge(0, 100)});
    iwv_send_wr w = wr_of(1, IWV_WR_RDMA_WRITE);
    w.rdma.remote_addr = addr(l.b.mem.data());
    w.rdma.rkey = l.b.stag ^ 0x1; // wrong key byte
    ASSERT_EQ(l.a.post(w, {l.a.sge(0, 100)}), 0);
    ASSERT_TRUE(l.run([&] {
        return l.a.qp->state() == IWV_QPS_ERR && l.b.qp->state() == IWV_QPS_ERR;
    }));
    l.settle();
    iwv_qp_attr qa = query(*l.a.qp), qb = query(*l.b.qp);
    EXPECT_TRUE(qb.terminate_sent);
    EXPECT_TRUE(qa.terminate_received);
    EXPECT_EQ(qb.terminate_code, vendor_code(term::ddp_tagged_invalid_stag)) << qb.terminate_text;
    EXPECT_EQ(qa.terminate_code, qb.terminate_code) << qa.terminate_text;
    auto rb = l.b.drain(l.b.rcq);
    ASSERT_EQ(rb.size(), 2u);
    EXPECT_EQ(rb[0].status, IWV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(rb[1].wr_id, 2u);
    auto ra = l.a.drain(l.a.rcq);
    ASSERT_EQ(ra.size(), 1u);
    EXPECT_EQ(ra[0].status, IWV_WC_WR_FLUSH_ERR);
    // Posting after the error completes at once with a flush error (verbs).
    ASSERT_EQ(l.a.post(wr_of(5, IWV_WR_SEND), {}), 0);
    auto sc = l.a.drain(l.a.scq);
    ASSERT_FALSE(sc.empty());
    EXPECT_EQ(sc.back().wr_id, 5u);
    EXPECT_EQ(sc.back().status, IWV_WC_WR_FLUSH_ERR);
}

TEST(QpLoopback, ReadOfProtectedMemoryFailsTheReadWithRemoteAccessError) {
    Loop l;
    uint32_t no_read = l.b.stags.register_region(l.b.pd, addr(l.b.mem.data()), 4096, kLocalWrite | kRemoteWrite);
    iwv_send_wr r = wr_of(8, IWV_WR_RDMA_READ);
    r.rdma.remote_addr = addr(l.b.mem.data());
    r.rdma.rkey = no_read;
    ASSERT_EQ(l.a.post(r, {l.a.sge(0, 100)}), 0);
    ASSERT_EQ(l.a.post(wr_of(9, IWV_WR_SEND), {}), 0);
    ASSERT_TRUE(l.run([&] { return l.a.scq.size() == 2; }));
    auto sc = l.a.drain(l.a.scq);
    EXPECT_EQ(sc[0].wr_id, 8u);
    EXPECT_EQ(sc[0].status, IWV_WC_REM_ACCESS_ERR);
    EXPECT_EQ(sc[0].vendor_err, vendor_code(term::rdmap_access_rights));
    EXPECT_EQ(sc[1].status, IWV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(query(*l.b.qp).terminate_code, vendor_code(term::rdmap_access_rights));
}

TEST(QpLoopback, SendWithoutPostedReceiveIsNoBufferError) {
    Loop l;
    ASSERT_EQ(l.a.post(wr_of(1, IWV_WR_SEND), {l.a.sge(0, 10)}), 0);
    ASSERT_TRUE(l.run([&] { return l.a.qp->state() == IWV_QPS_ERR; }));
    EXPECT_EQ(query(*l.b.qp).terminate_code, vendor_code(term::ddp_untagged_no_buffer));
}

TEST(QpLoopback, SendLongerThanTheBufferIsRefusedWithoutOverrun) {
    Loop l;
    std::fill(l.b.mem.begin(), l.b.mem.end(), 0xEE);
    l.b.post_recv(1, {l.b.sge(0, 700)}); // the first segment (582 bytes) fits, the second does not
    ASSERT_EQ(l.a.post(wr_of(1, IWV_WR_SEND), {l.a.sge(0, 2000)}), 0);
    ASSERT_TRUE(l.run([&] { return l.b.qp->state() == IWV_QPS_ERR && l.a.qp->state() == IWV_QPS_ERR; }));
    EXPECT_EQ(query(*l.b.qp).terminate_code, vendor_code(term::ddp_untagged_too_long));
    EXPECT_TRUE(std::all_of(l.b.mem.begin() + 700, l.b.mem.end(), [](uint8_t c) { return c == 0xEE; }));
    auto rb = l.b.drain(l.b.rcq);
    ASSERT_EQ(rb.size(), 1u);
    EXPECT_EQ(rb[0].status, IWV_WC_WR_FLUSH_ERR);
}

TEST(QpLoopback, ReplayedDdpSsnEndsTheSession) {
    Loop l;
    l.b.post_recv(1, {l.b.sge(0, 100)});
    l.b.post_recv(2, {l.b.sge(0, 100)});
    l.pipe.ab->tamper = [](memllp::Message& m) {
        if (m.ppid == kPpidDdpSegment) m.bytes[1] = 0; // DDP-SSN 0 again: behind the window
    };
    ASSERT_EQ(l.a.post(wr_of(1, IWV_WR_SEND), {l.a.sge(0, 10)}), 0);
    ASSERT_TRUE(l.run([&] { return l.b.qp->state() == IWV_QPS_ERR && l.a.qp->state() == IWV_QPS_ERR; }));
    auto eb = l.b.qp->take_events();
    ASSERT_FALSE(eb.empty());
    EXPECT_NE(eb[0].detail.find("DDP-SSN"), std::string::npos) << eb[0].detail;
}

TEST(QpLoopback, OversizedSegmentIsRejected) {
    // a cuts segments at 1200 bytes, b accepts at most 600 (RFC 5043 §9: MUST reject).
    memllp::Pair pipe;
    Side a{1}, b{2};
    std::string err;
    a.qp->modify(IWV_QPS_INIT, err);
    b.qp->modify(IWV_QPS_INIT, err);
    a.qp->connecting();
    a.qp->start_active(pipe.a(1200), {1, 1}, {});
    auto lb = pipe.b(600);
    std::vector<uint8_t> init(1024);
    init.resize(size_t(lb->read(init.data(), init.size()).n));
    Session s(SessionRole::passive);
    s.on_control(init);
    b.qp->start_passive(std::move(lb), std::move(s), {1, 1}, {});
    for (int i = 0; i < 100; ++i) a.qp->progress();
    b.post_recv(1, {b.sge(0, 5000)});
    ASSERT_EQ(a.post(wr_of(1, IWV_WR_SEND), {a.sge(0, 1100)}), 0);
    for (int i = 0; i < 100; ++i) {
        a.qp->progress();
        b.qp->progress();
    }
    EXPECT_EQ(b.qp->state(), IWV_QPS_ERR);
    EXPECT_EQ(a.qp->state(), IWV_QPS_ERR);
    EXPECT_EQ(query(*b.qp).terminate_code, vendor_code(term::rdmap_operation_unspecified));
}

// ---- verbs state machine ---------------------------------------------------------------------

TEST(QpStateMachine, LegalAndIllegalTransitions) {
    Side s{3};
    std::string err;
    EXPECT_EQ(s.qp->modify(IWV_QPS_RTS, err), EINVAL);
    EXPECT_NE(err.find("RESET -> RTS"), std::string::npos) << err;
    iwv_recv_wr rwr{1, nullptr, nullptr, 0};
    const iwv_recv_wr* bad = nullptr;
    EXPECT_EQ(s.qp->post_recv(&rwr, &bad, err), EINVAL); // not in RESET
    EXPECT_EQ(s.qp->modify(IWV_QPS_INIT, err), 0);
    EXPECT_EQ(s.qp->post_recv(&rwr, &bad, err), 0);
    EXPECT_EQ(s.post(wr_of(1, IWV_WR_SEND), {}), EINVAL); // not RTS
    EXPECT_EQ(s.qp->modify(IWV_QPS_RTR, err), 0);
    EXPECT_EQ(s.qp->modify(IWV_QPS_RTS, err), 0);
    EXPECT_EQ(s.post(wr_of(1, IWV_WR_SEND), {}), ENOTCONN); // RTS by hand, no connection
    EXPECT_EQ(s.qp->modify(IWV_QPS_ERR, err), 0);
    auto rc = s.drain(s.rcq);
    ASSERT_EQ(rc.size(), 1u); // the posted receive, flushed
    EXPECT_EQ(rc[0].status, IWV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(s.qp->modify(IWV_QPS_INIT, err), EINVAL);
    EXPECT_EQ(s.qp->modify(IWV_QPS_RESET, err), 0);
    EXPECT_EQ(s.qp->modify(IWV_QPS_INIT, err), 0);
}

TEST(QpStateMachine, PostChecksKeysSgeCountAndQueueDepth) {
    Loop l;
    std::string err;
    iwv_sge bad_key{addr(l.a.mem.data()), 10, l.a.stag + 0x100};
    EXPECT_EQ(l.a.post(wr_of(1, IWV_WR_SEND), {bad_key}, &err), EINVAL);
    EXPECT_NE(err.find("lkey"), std::string::npos) << err;
    iwv_sge out_of_range{addr(l.a.mem.data()) + l.a.mem.size() - 5, 10, l.a.stag};
    EXPECT_EQ(l.a.post(wr_of(1, IWV_WR_SEND), {out_of_range}, &err), EINVAL);
    EXPECT_EQ(l.a.post(wr_of(1, IWV_WR_SEND), std::vector<iwv_sge>(5, l.a.sge(0, 1)), &err), EINVAL);
    iwv_send_wr r = wr_of(1, IWV_WR_RDMA_READ);
    EXPECT_EQ(l.a.post(r, {l.a.sge(0, 1), l.a.sge(1, 1)}, &err), EINVAL);
    EXPECT_NE(err.find("one SGE"), std::string::npos) << err;
    // A chain stops at its first bad WR; the ones before it are posted.
    l.b.post_recv(1, {l.b.sge(0, 16)});
    std::vector<iwv_sge> g{l.a.sge(0, 4)};
    iwv_send_wr second = wr_of(2, IWV_WR_SEND);
    second.sg_list = &bad_key;
    second.num_sge = 1;
    iwv_send_wr first = wr_of(1, IWV_WR_SEND);
    first.sg_list = g.data();
    first.num_sge = 1;
    first.next = &second;
    const iwv_send_wr* bad = nullptr;
    EXPECT_EQ(l.a.qp->post_send(&first, &bad, err), EINVAL);
    EXPECT_EQ(bad, &second);
    ASSERT_TRUE(l.run([&] { return l.b.rcq.size() == 1; }));
}
