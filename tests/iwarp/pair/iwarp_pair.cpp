// SPDX-License-Identifier: BSD-3-Clause
// Two processes, two usrsctp stacks on 127.0.0.1, one iWARP connection through the C verbs API:
// every operation at sizes 0 B .. 4 MiB with the data checked byte for byte, chained WRs with
// SGLs, Send with Invalidate and with Solicited Event, both progress modes, a rejected connection,
// and a protection error end to end (Terminate, both QPs in ERR, flush completions).
//
// The harness (forked children, pipes, one device each) is pair_harness.hpp.
#include "pair_harness.hpp"
#include "path_params.hpp"
#include "settings.hpp"
#include "stack.hpp"

#include "adaptation.hpp"
#include "device.hpp"
#include "wire.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <usrsctp.h>

using namespace iwtest;

namespace {

const size_t kSizes[] = {0, 1, 7, 1442, 4096, 16001, 65536, 1u << 20, 4u << 20};

// a drives: for each size, RDMA Write + Send to b; b checks both, RDMA-Reads the same size from a
// and sends back an acknowledgement.
void all_ops_active(Side& s) {
    ConnParam p;
    p.private_data = "hello rnic";
    connect_active(s, p);
    exchange_regions(s);
    uint64_t id = 1;
    for (size_t size : kSizes) {
        const uint32_t seed = uint32_t(size) + 1;
        s.post_recv(id, {s.sge(kBuf - 64, 64)}); // for b's acknowledgement
        fill(s.buf.data(), size, seed);             // the Write's source
        fill(s.buf.data() + (kBuf / 2), size, seed + 7); // what b will read
        s.post(id + 1, IWV_WR_RDMA_WRITE, {s.sge(0, size)}, IWV_SEND_SIGNALED, s.peer.addr, s.peer.rkey);
        s.wc_ok(id + 1, IWV_WC_RDMA_WRITE);
        // The Send follows the Write (RDMAP keeps their order) and carries a copy of the data.
        s.post(id + 2, IWV_WR_SEND, {s.sge(0, size)});
        s.wc_ok(id + 2, IWV_WC_SEND);
        iwv_wc ack = s.wc_ok(id, IWV_WC_RECV);
        CHILD_CHECK(ack.byte_len == 8, "ack of %u bytes", ack.byte_len);
        id += 3;
    }
    // Chained WRs with SGLs: two Writes of three and two pieces, then a Send of two pieces.
    fill(s.buf.data(), 300000, 99);
    std::vector<iwv_sge> w1{s.sge(0, 1000), s.sge(5000, 70000), s.sge(100000, 1)};
    std::vector<iwv_sge> w2{s.sge(200000, 65536), s.sge(1000, 4000)};
    std::vector<iwv_sge> sd{s.sge(75000, 25000), s.sge(270000, 30000)};
    iwv_send_wr chain[3]{};
    chain[0] = {500, &chain[1], w1.data(), 3, IWV_WR_RDMA_WRITE, 0, 0, {s.peer.addr + 1000000, s.peer.rkey}};
    chain[1] = {501, &chain[2], w2.data(), 2, IWV_WR_RDMA_WRITE, 0, 0, {s.peer.addr + 2000000, s.peer.rkey}};
    chain[2] = {502, nullptr, sd.data(), 2, IWV_WR_SEND, IWV_SEND_SIGNALED, 0, {0, 0}};
    s.post_recv(600, {s.sge(kBuf - 64, 64)});
    iwv_send_wr* bad = nullptr;
    CHILD_CHECK(iwv_post_send(s.qp, chain, &bad) == 0, "%s", iwv_last_error(s.dev));
    s.wc_ok(502, IWV_WC_SEND); // the unsignalled Writes give no completion
    s.wc_ok(600, IWV_WC_RECV);
    // Send with Invalidate of b's second region, then a plain Send and a Send with SE.
    s.post(700, IWV_WR_SEND_WITH_INV, {s.sge(0, 100)}, IWV_SEND_SIGNALED, 0, 0, s.peer.extra_rkey);
    s.wc_ok(700, IWV_WC_SEND);
    s.post(701, IWV_WR_SEND, {s.sge(0, 10)});
    s.wc_ok(701, IWV_WC_SEND);
    CHILD_CHECK(s.link.get<char>() == 'g', "go");
    s.post(702, IWV_WR_SEND, {s.sge(0, 10)}, IWV_SEND_SIGNALED | IWV_SEND_SOLICITED);
    s.wc_ok(702, IWV_WC_SEND);
    CHILD_CHECK(s.link.get<char>() == 'd', "done");
    s.close();
}

// Waits for an fd while keeping the RNIC moving (in caller mode nothing else would).
bool wait_readable(Side& s, int fd) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    pollfd pf{fd, POLLIN, 0};
    while (std::chrono::steady_clock::now() < end) {
        if (poll(&pf, 1, 0) == 1) return true;
        iwv_progress(s.dev, 10);
    }
    return false;
}

void all_ops_passive(Side& s) {
    connect_passive(s);
    const size_t n = sizeof kSizes / sizeof kSizes[0];
    // Every receive is posted, and every target zeroed, before the message that lets a go on.
    std::memset(s.buf.data(), 0, kSizes[0] + 1);
    s.post_recv(1, {s.sge(kBuf / 2, kBuf / 2)});
    exchange_regions(s);
    uint64_t id = 1;
    for (size_t i = 0; i < n; ++i) {
        const size_t size = kSizes[i];
        const uint32_t seed = uint32_t(size) + 1;
        iwv_wc r = s.wc_ok(id, IWV_WC_RECV);
        CHILD_CHECK(r.byte_len == size, "Send of %u bytes, wanted %zu", r.byte_len, size);
        CHILD_CHECK(same(s.buf.data(), size, seed), "RDMA Write of %zu bytes corrupted", size);
        CHILD_CHECK(same(s.buf.data() + kBuf / 2, size, seed), "Send of %zu bytes corrupted", size);
        // RDMA Read the same size from a's second half.
        std::memset(s.buf.data(), 0, size + 1);
        s.post(id + 1, IWV_WR_RDMA_READ, {s.sge(0, size)}, IWV_SEND_SIGNALED, s.peer.addr + kBuf / 2, s.peer.rkey);
        iwv_wc rd = s.wc_ok(id + 1, IWV_WC_RDMA_READ);
        CHILD_CHECK(rd.byte_len == size, "Read of %u bytes", rd.byte_len);
        CHILD_CHECK(same(s.buf.data(), size, seed + 7), "RDMA Read of %zu bytes corrupted", size);
        if (i + 1 < n) {
            std::memset(s.buf.data(), 0, kSizes[i + 1] + 1);
            s.post_recv(id + 3, {s.sge(kBuf / 2, kBuf / 2)});
        } else {
            s.post_recv(502, {s.sge(kBuf / 2, 20000), s.sge(kBuf / 2 + 100000, 40000)});
        }
        s.post(id + 2, IWV_WR_SEND, {s.sge(kBuf - 8, 8)});
        s.wc_ok(id + 2, IWV_WC_SEND);
        id += 3;
    }
    // Chained WRs: check where every piece landed.
    iwv_wc r = s.wc_ok(502, IWV_WC_RECV);
    CHILD_CHECK(r.byte_len == 55000, "chained Send of %u bytes", r.byte_len);
    std::vector<uint8_t> src(300000);
    fill(src.data(), src.size(), 99);
    std::vector<uint8_t> w1, w2, sd;
    w1.insert(w1.end(), src.begin(), src.begin() + 1000);
    w1.insert(w1.end(), src.begin() + 5000, src.begin() + 75000);
    w1.push_back(src[100000]);
    w2.insert(w2.end(), src.begin() + 200000, src.begin() + 265536);
    w2.insert(w2.end(), src.begin() + 1000, src.begin() + 5000);
    sd.insert(sd.end(), src.begin() + 75000, src.begin() + 100000);
    sd.insert(sd.end(), src.begin() + 270000, src.begin() + 300000);
    CHILD_CHECK(std::memcmp(s.buf.data() + 1000000, w1.data(), w1.size()) == 0, "first chained Write");
    CHILD_CHECK(std::memcmp(s.buf.data() + 2000000, w2.data(), w2.size()) == 0, "second chained Write");
    CHILD_CHECK(std::memcmp(s.buf.data() + kBuf / 2, sd.data(), 20000) == 0, "chained Send, first SGE");
    CHILD_CHECK(std::memcmp(s.buf.data() + kBuf / 2 + 100000, sd.data() + 20000, 35000) == 0,
                "chained Send, second SGE");
    s.post_recv(700, {s.sge(0, 4096)});
    s.post_recv(701, {s.sge(0, 4096)});
    s.post_recv(702, {s.sge(0, 4096)});
    CHILD_CHECK(iwv_mr_valid(s.extra_mr) == 1, "extra region valid before");
    s.post(503, IWV_WR_SEND, {s.sge(kBuf - 8, 8)}, 0);
    // Send with Invalidate.
    iwv_wc inv = s.wc_ok(700, IWV_WC_RECV);
    CHILD_CHECK(inv.wc_flags & IWV_WC_WITH_INV, "no WITH_INV flag (flags 0x%x)", inv.wc_flags);
    CHILD_CHECK(inv.invalidated_rkey == s.extra_mr->rkey, "invalidated 0x%x", inv.invalidated_rkey);
    CHILD_CHECK(iwv_mr_valid(s.extra_mr) == 0, "extra region still valid after Send with Invalidate");
    // Solicited Event: only the solicited Send fires the armed event fd.
    CHILD_CHECK(iwv_req_notify_cq(s.cq, 1) == 0, "arm");
    iwv_wc plain = s.wc_ok(701, IWV_WC_RECV);
    CHILD_CHECK(!(plain.wc_flags & IWV_WC_SOLICITED), "plain Send flagged solicited");
    pollfd pf{iwv_cq_fd(s.cq), POLLIN, 0};
    CHILD_CHECK(poll(&pf, 1, 0) == 0, "event fd fired for an unsolicited Send");
    s.link.put('g');
    CHILD_CHECK(wait_readable(s, iwv_cq_fd(s.cq)), "no event for the solicited Send");
    iwv_wc se = s.wc_ok(702, IWV_WC_RECV);
    CHILD_CHECK(se.wc_flags & IWV_WC_SOLICITED, "Send with SE not flagged (0x%x)", se.wc_flags);
    iwv_cq_ack_event(s.cq);
    s.link.put('d');
    s.close();
}

// The owner away (it computes, no verbs call): a writes 1 MiB into b's buffer and reads another
// 1 MiB from it. With a standby thread on b both complete and the data is checked on both sides;
// without one (caller mode, the control) a's Read must still be waiting after two seconds. An
// owner that said it is inside its progress engine counts as present however long it stays
// there without a verbs call: the standby thread leaves the Read waiting until it says it left.
constexpr size_t kAwayBytes = 1u << 20;

enum class Away { Served, NeverServed, InsideThenLeaves };

void away_active(Side& s, Away how) {
    ConnParam p;
    p.private_data = "hello rnic";
    connect_active(s, p);
    exchange_regions(s);
    CHILD_CHECK(s.link.get<char>() == 'a', "b away");
    fill(s.buf.data(), kAwayBytes, 11);
    std::memset(s.buf.data() + kBuf / 2, 0, kAwayBytes);
    s.post(1, IWV_WR_RDMA_WRITE, {s.sge(0, kAwayBytes)}, IWV_SEND_SIGNALED, s.peer.addr, s.peer.rkey);
    s.post(2, IWV_WR_RDMA_READ, {s.sge(kBuf / 2, kAwayBytes)}, IWV_SEND_SIGNALED, s.peer.addr + kBuf / 2,
           s.peer.rkey);
    bool write_done = false;
    if (how != Away::Served) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (std::chrono::steady_clock::now() < until) {
            iwv_wc w;
            int n = iwv_poll_cq(s.cq, 1, &w);
            CHILD_CHECK(n == 0 || (n == 1 && w.wr_id == 1), "wr %llu completed while its target was %s",
                        (unsigned long long)w.wr_id, how == Away::NeverServed ? "away" : "inside its progress engine");
            if (n == 1) {
                CHILD_CHECK(w.status == IWV_WC_SUCCESS, "the Write failed (status %d)", int(w.status));
                write_done = true;
            }
            iwv_cq_wait(s.cq, 100);
        }
    }
    if (how == Away::InsideThenLeaves) s.link.put('l');
    if (how != Away::NeverServed) {
        if (!write_done) s.wc_ok(1, IWV_WC_RDMA_WRITE);
        s.wc_ok(2, IWV_WC_RDMA_READ);
        CHILD_CHECK(same(s.buf.data() + kBuf / 2, kAwayBytes, 22), "the Read brought other bytes");
    }
    s.link.put('d');
    if (how != Away::NeverServed) s.close();
}

void away_passive(Side& s, Away how) {
    // Buffers first: the verbs calls after them order them before the device's threads.
    fill(s.buf.data() + kBuf / 2, kAwayBytes, 22); // what a reads
    std::memset(s.buf.data(), 0, kAwayBytes);      // where a writes
    connect_passive(s);
    exchange_regions(s);
    if (how == Away::InsideThenLeaves) iwv_device_owner_inside(s.dev, 1);
    s.link.put('a');
    if (how == Away::InsideThenLeaves) {
        CHILD_CHECK(s.link.get<char>() == 'l', "a saw the Read wait"); // inside, no verbs call
        iwv_device_owner_inside(s.dev, 0);
    }
    CHILD_CHECK(s.link.get<char>() == 'd', "a done"); // away: blocked here, no verbs call
    iwv_progress(s.dev, 0); // takes the device's lock: orders the placement before our reads
    if (how != Away::NeverServed) {
        CHILD_CHECK(same(s.buf.data(), kAwayBytes, 11), "the Write was not placed while the owner was away");
        s.close();
    }
}

// RFC 7306 atomics between two processes. a adds 1 to b's counter kAtomics times by FetchAdd while
// b's own CPU adds 1000 to the same word as often (the RNIC's atomics are atomic against the local
// process's too); b moves a's counter from i to i + 1 by CmpSwap, each compare the previous swap,
// plus one that must fail. Every returned original value is checked, and both counters at the end.
constexpr int kAtomics = 300;

struct Counter {
    alignas(8) uint64_t word = 0;
    iwv_mr* mr = nullptr;
};

struct RemoteCounter {
    uint64_t addr;
    uint32_t rkey;
};

void register_counter(Side& s, Counter& c) {
    c.mr = iwv_reg_mr(s.pd, &c.word, sizeof c.word, IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_ATOMIC);
    CHILD_CHECK(c.mr, "%s", iwv_last_error(s.dev));
}

void post_atomic(Side& s, uint64_t id, iwv_wr_opcode op, const RemoteCounter& to, uint64_t compare_add, uint64_t swap,
                 size_t sink) {
    iwv_sge sg = s.sge(sink, 8);
    iwv_send_wr wr{};
    wr.wr_id = id;
    wr.opcode = op;
    wr.sg_list = &sg;
    wr.num_sge = 1;
    wr.send_flags = IWV_SEND_SIGNALED;
    wr.atomic.remote_addr = to.addr;
    wr.atomic.rkey = to.rkey;
    wr.atomic.compare_add = compare_add;
    wr.atomic.swap = swap;
    iwv_send_wr* bad = nullptr;
    CHILD_CHECK(iwv_post_send(s.qp, &wr, &bad) == 0, "%s", iwv_last_error(s.dev));
}

uint64_t sink_value(Side& s, size_t sink) {
    uint64_t v;
    std::memcpy(&v, s.buf.data() + sink, sizeof v);
    return v;
}

// Keeps this side's RNIC answering (caller mode needs its owner) until the peer says it is done.
void serve_until_peer_done(Side& s) {
    pollfd pf{s.link.rd, POLLIN, 0};
    while (poll(&pf, 1, 0) == 0) iwv_progress(s.dev, 1);
    CHILD_CHECK(s.link.get<char>() == 'd', "peer done");
}

void atomics_active(Side& s) {
    Counter mine;
    mine.word = 0;
    register_counter(s, mine);
    ConnParam p;
    p.private_data = "hello rnic";
    connect_active(s, p);
    s.link.put(RemoteCounter{uint64_t(uintptr_t(&mine.word)), mine.mr->rkey});
    const auto theirs = s.link.get<RemoteCounter>();
    for (int i = 0; i < kAtomics; ++i)
        post_atomic(s, uint64_t(i), IWV_WR_ATOMIC_FETCH_AND_ADD, theirs, 1, 0, size_t(i) * 8);
    uint64_t last = 0;
    for (int i = 0; i < kAtomics; ++i) {
        s.wc_ok(uint64_t(i), IWV_WC_FETCH_ADD);
        const uint64_t v = sink_value(s, size_t(i) * 8);
        // b's own adds interleave: between two of ours the word grew by 1 plus some thousands.
        CHILD_CHECK(i == 0 || (v > last && (v - last) % 1000 == 1), "fetch-add %d returned %llu after %llu", i,
                    (unsigned long long)v, (unsigned long long)last);
        last = v;
    }
    s.link.put('d');
    serve_until_peer_done(s);
    const uint64_t a_end = __atomic_load_n(&mine.word, __ATOMIC_ACQUIRE); // the RNIC's thread wrote it
    CHILD_CHECK(a_end == uint64_t(kAtomics), "a's counter is %llu, b swapped it %d times", (unsigned long long)a_end,
                kAtomics);
    s.link.put(char('e'));
    iwv_dereg_mr(mine.mr);
    s.close();
}

void atomics_passive(Side& s) {
    Counter mine;
    mine.word = 5000000;
    register_counter(s, mine);
    connect_passive(s);
    const auto theirs = s.link.get<RemoteCounter>();
    s.link.put(RemoteCounter{uint64_t(uintptr_t(&mine.word)), mine.mr->rkey});
    for (int i = 0; i < kAtomics; ++i) { // a's FetchAdds arrive meanwhile
        __atomic_fetch_add(&mine.word, 1000, __ATOMIC_ACQ_REL);
        iwv_progress(s.dev, 0);
    }
    for (int i = 0; i < kAtomics; ++i)
        post_atomic(s, uint64_t(i), IWV_WR_ATOMIC_CMP_AND_SWP, theirs, uint64_t(i), uint64_t(i + 1), size_t(i) * 8);
    post_atomic(s, kAtomics, IWV_WR_ATOMIC_CMP_AND_SWP, theirs, 0, 777, size_t(kAtomics) * 8); // compare fails
    for (int i = 0; i <= kAtomics; ++i) {
        s.wc_ok(uint64_t(i), IWV_WC_COMP_SWAP);
        const uint64_t v = sink_value(s, size_t(i) * 8);
        CHILD_CHECK(v == uint64_t(i < kAtomics ? i : kAtomics), "compare-and-swap %d returned %llu", i,
                    (unsigned long long)v);
    }
    serve_until_peer_done(s);
    s.link.put('d');
    CHILD_CHECK(s.link.get<char>() == 'e', "a checked its counter");
    const uint64_t b_end = __atomic_load_n(&mine.word, __ATOMIC_ACQUIRE);
    CHILD_CHECK(b_end == 5000000u + 1001u * kAtomics, "b's counter is %llu", (unsigned long long)b_end);
    iwv_dereg_mr(mine.mr);
    s.close();
}

} // namespace

class IwarpPair : public ::testing::TestWithParam<iwv_progress_mode> {};

TEST_P(IwarpPair, AtomicsFromBothSidesAndTheLocalCpuCountExactly) {
    auto o = run_pair(GetParam(), atomics_active, atomics_passive);
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST_P(IwarpPair, EveryOperationEverySizeVerified) {
    auto o = run_pair(GetParam(), all_ops_active, all_ops_passive);
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST_P(IwarpPair, WriteToBadStagTerminatesBothSidesAndFlushes) {
    auto o = run_pair(
        GetParam(),
        [](Side& s) {
            ConnParam p;
            p.private_data = "hello rnic";
            connect_active(s, p);
            exchange_regions(s);
            s.post_recv(1, {s.sge(0, 100)});
            s.post_recv(2, {s.sge(100, 100)});
            s.post(10, IWV_WR_RDMA_WRITE, {s.sge(0, 5000)}, IWV_SEND_SIGNALED, s.peer.addr, s.peer.rkey + 1);
            iwv_event ev = s.event(IWV_EVENT_QP_ERROR);
            CHILD_CHECK(std::strstr(ev.detail, "Terminate"), "%s", ev.detail);
            iwv_qp_attr at;
            iwv_query_qp(s.qp, &at);
            CHILD_CHECK(at.state == IWV_QPS_ERR, "state %d", int(at.state));
            CHILD_CHECK(at.terminate_received, "no Terminate recorded");
            CHILD_CHECK(at.terminate_code == (1u << 16 | 1u << 8 | 0x00), "code 0x%x: %s", at.terminate_code,
                        at.terminate_text);
            // The Write completed when it left; both receives are flushed.
            int flushed = 0;
            for (int i = 0; i < 3; ++i) {
                iwv_wc w = s.wc();
                if (w.wr_id == 10) {
                    CHILD_CHECK(w.status == IWV_WC_SUCCESS, "Write status %d", int(w.status));
                } else {
                    CHILD_CHECK(w.status == IWV_WC_WR_FLUSH_ERR && w.opcode == IWV_WC_RECV, "wr %llu status %d",
                                (unsigned long long)w.wr_id, int(w.status));
                    ++flushed;
                }
            }
            CHILD_CHECK(flushed == 2, "%d flushed", flushed);
            s.link.put('x');
            s.close();
        },
        [](Side& s) {
            connect_passive(s);
            exchange_regions(s);
            s.post_recv(3, {s.sge(0, 100)});
            iwv_event ev = s.event(IWV_EVENT_QP_ERROR);
            CHILD_CHECK(std::strstr(ev.detail, "DDP/tagged/invalid STag"), "%s", ev.detail);
            iwv_qp_attr at;
            iwv_query_qp(s.qp, &at);
            CHILD_CHECK(at.state == IWV_QPS_ERR && at.terminate_sent, "state %d sent %d", int(at.state),
                        at.terminate_sent);
            iwv_wc w = s.wc();
            CHILD_CHECK(w.wr_id == 3 && w.status == IWV_WC_WR_FLUSH_ERR, "wr %llu status %d",
                        (unsigned long long)w.wr_id, int(w.status));
            CHILD_CHECK(s.link.get<char>() == 'x', "peer done");
            s.close();
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST_P(IwarpPair, RejectCarriesPrivateData) {
    auto o = run_pair(
        GetParam(),
        [](Side& s) {
            const auto ports = s.link.get<std::pair<uint16_t, uint16_t>>();
            iwv_conn_param cp{"may I", 5, 4, 4};
            CHILD_CHECK(iwv_connect(s.qp, "127.0.0.1", ports.first, ports.second, &cp) == 0, "%s",
                        iwv_last_error(s.dev));
            iwv_event ev = s.event(IWV_EVENT_REJECTED);
            CHILD_CHECK(std::string(reinterpret_cast<char*>(ev.private_data), ev.private_data_len) == "no thanks",
                        "reject data");
            iwv_qp_attr at;
            iwv_query_qp(s.qp, &at);
            CHILD_CHECK(at.state == IWV_QPS_ERR, "state %d after reject", int(at.state));
            s.close();
        },
        [](Side& s) {
            s.link.put(std::make_pair(iwv_device_sctp_port(s.dev), iwv_device_udp_port(s.dev)));
            iwv_event ev = s.event(IWV_EVENT_CONNECT_REQUEST);
            CHILD_CHECK(iwv_reject(ev.request, "no thanks", 9) == 0, "%s", iwv_last_error(s.dev));
            iwv_progress(s.dev, 200); // let the Reject leave in caller mode
            s.close();
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// usrsctp sizes DATA chunks when an association starts: the DDP socket must hand the path MTU to
// associations before they exist, or every segment stays at 1444 bytes. A link MTU of 9000 on
// IPv4 leaves 8960 bytes for SCTP chunks (20 IP, 8 UDP, 12 SCTP common header), so 8944-byte
// segments (one DATA chunk each); a 1 MiB Write in them arrives intact.
TEST_P(IwarpPair, SegmentSizeFollowsPathMtu) {
    constexpr uint32_t kMtu = 9000, kSegment = 8944;
    ASSERT_EQ(iwarp::DdpEndpoint::segment_limit(sctpm::sctp_path_mtu(kMtu, AF_INET)), kSegment); // the library's fallback rule
    auto check = [](Side& s) {
        iwv_qp_attr at;
        iwv_query_qp(s.qp, &at);
        CHILD_CHECK(at.max_segment == kSegment, "segment limit %u for path MTU %u, wanted %u", at.max_segment, kMtu,
                    kSegment);
    };
    auto o = run_pair(
        GetParam(),
        [&](Side& s) {
            ConnParam p;
            p.private_data = "hello rnic";
            connect_active(s, p);
            check(s);
            exchange_regions(s);
            fill(s.buf.data(), 1u << 20, 5);
            s.post(1, IWV_WR_RDMA_WRITE, {s.sge(0, 1u << 20)}, 0, s.peer.addr, s.peer.rkey);
            s.post(2, IWV_WR_SEND, {s.sge(0, 0)});
            s.wc_ok(2, IWV_WC_SEND);
            CHILD_CHECK(s.link.get<char>() == 'd', "done");
            s.close();
        },
        [&](Side& s) {
            connect_passive(s);
            check(s);
            s.post_recv(1, {s.sge(kBuf - 64, 64)});
            exchange_regions(s);
            s.wc_ok(1, IWV_WC_RECV);
            CHILD_CHECK(same(s.buf.data(), 1u << 20, 5), "1 MiB Write in %u-byte segments corrupted", kSegment);
            s.link.put('d');
            s.close();
        },
        120, kMtu);
    EXPECT_TRUE(o.ok()) << o.describe();
}

// A DDP endpoint can be bound to several addresses (a multihomed RNIC: ch3:hybrid binds every
// rail; tests/vcluster/failover's rdma scenario checks that end to end, as this host has one
// loopback address). A bad address list is refused with a message naming the culprit.
TEST_P(IwarpPair, BindListErrors) {
    auto o = run_pair(
        GetParam(),
        [&](Side& s) {
            const char* bad[][2] = {{"127.0.0.1,not-an-address", "'not-an-address'"},
                                    {"127.0.0.1,::1", "mix IPv4 and IPv6"}};
            for (auto& b : bad) {
                iwv_device_attr attr;
                iwv_device_attr_init(&attr);
                attr.bind_address = b[0];
                char err[256] = "";
                iwv_device* d = iwv_open_device(&attr, err, sizeof err);
                CHILD_CHECK(!d && std::strstr(err, b[1]), "bind list '%s' gave %s ('%s')", b[0],
                            d ? "a device" : "no device", err);
            }
            s.link.put('d');
            s.close();
        },
        [&](Side& s) {
            CHILD_CHECK(s.link.get<char>() == 'd', "done");
            s.close();
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// An association that comes up as DDP but never sends its Initiate (RFC 5043 §6.2) is not kept:
// after initiate_timeout_ms it is aborted, and a device keeps at most max_pending_requests such
// associations (one more aborts the oldest, whatever the timeout).
namespace {

constexpr int kPending = 8; // the bounded device's max_pending_requests

// A raw SCTP association that announces DDP and then says nothing: returns its socket.
struct socket* silent_ddp_association(uint16_t sctp_port, uint16_t udp_port) {
    // On stack=own the device did not start usrsctp: the attacker is then a usrsctp peer of our
    // own engine (the adaptation indication and the ABORT cross the two stacks), and must then
    // checksum its packets on loopback too (the engine checks every one; a usrsctp device would
    // drop what it sends back without one).
    const sctpm::Settings settings = sctpm::load_settings_from_environment();
    sctpm::start_stack(settings);
    if (settings.stack == sctpm::StackChoice::own) usrsctp_sysctl_set_sctp_no_csum_on_loopback(0);
    struct socket* so = usrsctp_socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP, nullptr, nullptr, 0, nullptr);
    CHILD_CHECK(so, "usrsctp_socket: %s", std::strerror(errno));
    sctp_setadaptation ali{};
    ali.ssb_adaptation_ind = iwarp::kAdaptationIndicationDdp;
    CHILD_CHECK(usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, &ali, sizeof ali) == 0, "adaptation");
    sctp_udpencaps enc{};
    enc.sue_address.ss_family = AF_INET;
    enc.sue_port = htons(udp_port);
    CHILD_CHECK(usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &enc, sizeof enc) == 0, "encaps");
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(sctp_port);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    CHILD_CHECK(usrsctp_connect(so, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0, "connect: %s", std::strerror(errno));
    return so;
}

// Blocks until the association of `so` ends (the device's ABORT): true if it did.
bool aborted(struct socket* so) {
    char buf[64];
    return usrsctp_recvv(so, buf, sizeof buf, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) <= 0;
}

} // namespace

TEST_P(IwarpPair, AssociationsWithoutInitiateAreAbortedAndBounded) {
    auto o = run_pair(
        GetParam(),
        [](Side& s) { // the attacker
            const auto timed = s.link.get<std::pair<uint16_t, uint16_t>>();
            const auto bounded = s.link.get<std::pair<uint16_t, uint16_t>>();
            struct socket* lone = silent_ddp_association(timed.first, timed.second);
            CHILD_CHECK(aborted(lone), "an association without Initiate outlived the 300 ms timeout");
            usrsctp_close(lone);
            std::vector<struct socket*> crowd;
            for (int i = 0; i <= kPending; ++i)
                crowd.push_back(silent_ddp_association(bounded.first, bounded.second));
            CHILD_CHECK(aborted(crowd.front()), "the oldest of %d silent associations was kept", kPending + 1);
            for (struct socket* so : crowd)
                usrsctp_close(so);
            s.link.put('d');
            s.close();
        },
        [](Side& s) { // two devices: a short timeout, and the default one (so only the bound acts)
            iwv_device_attr attr;
            iwv_device_attr_init(&attr);
            attr.progress = s.mode;
            attr.bind_address = "127.0.0.1";
            attr.initiate_timeout_ms = 300;
            char err[256];
            iwv_device* timed = iwv_open_device(&attr, err, sizeof err);
            attr.initiate_timeout_ms = 0;
            attr.max_pending_requests = kPending;
            iwv_device* bounded = iwv_open_device(&attr, err, sizeof err);
            CHILD_CHECK(timed && bounded, "%s", err);
            s.link.put(std::make_pair(iwv_device_sctp_port(timed), iwv_device_udp_port(timed)));
            s.link.put(std::make_pair(iwv_device_sctp_port(bounded), iwv_device_udp_port(bounded)));
            pollfd done{s.link.rd, POLLIN, 0};
            while (poll(&done, 1, 0) == 0) {
                iwv_progress(timed, 20);
                iwv_progress(bounded, 20);
            }
            CHILD_CHECK(s.link.get<char>() == 'd', "done");
            CHILD_CHECK(iwv_close_device(timed) == 0 && iwv_close_device(bounded) == 0, "close");
            s.close();
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// usrsctp's input loads a socket's upcall, then its argument, without a lock. When a device aborts
// the socket's association (SctpLlp::close clears both) between the two loads of another thread,
// the device's upcall runs with a null argument: the Standby case above crashed so (the standby
// thread of a device nobody drives read the UDP socket while another device's standby thread
// aborted an association waiting for its Initiate). That call, made directly:
TEST(IwarpUpcallDeathTest, ANullArgumentFromASocketBeingClosedIsIgnored) {
    EXPECT_EXIT(
        {
            iwarp::device_upcall(nullptr, nullptr, 0);
            std::_Exit(0);
        },
        ::testing::ExitedWithCode(0), "");
}

INSTANTIATE_TEST_SUITE_P(Modes, IwarpPair,
                         ::testing::Values(IWV_PROGRESS_THREAD, IWV_PROGRESS_CALLER, IWV_PROGRESS_STANDBY),
                         [](const auto& info) { return mode_name(info.param); });

TEST(IwarpStandby, WritesAndReadsCompleteWhileTheOwnerIsAway) {
    auto o = run_pair(IWV_PROGRESS_STANDBY, [](Side& s) { away_active(s, Away::Served); },
                      [](Side& s) { away_passive(s, Away::Served); });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// The control: the test above can tell a device that serves from one that does not.
TEST(IwarpStandby, CallerModeLeavesAReadWaitingWhileTheOwnerIsAway) {
    auto o = run_pair(IWV_PROGRESS_CALLER, [](Side& s) { away_active(s, Away::NeverServed); },
                      [](Side& s) { away_passive(s, Away::NeverServed); });
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST(IwarpStandby, AnOwnerInsideItsProgressEngineIsNotStoodIn) {
    auto o = run_pair(IWV_PROGRESS_STANDBY, [](Side& s) { away_active(s, Away::InsideThenLeaves); },
                      [](Side& s) { away_passive(s, Away::InsideThenLeaves); });
    EXPECT_TRUE(o.ok()) << o.describe();
}
