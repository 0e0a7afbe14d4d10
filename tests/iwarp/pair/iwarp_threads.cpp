// SPDX-License-Identifier: BSD-3-Clause
// One device driven from several threads at once (the verbs API promises that every call may come
// from any thread), in both progress modes, between two processes: on each side one thread posts
// receives, one posts Sends (every tenth behind an RDMA Write), two poll the shared CQ, and in
// caller mode one more drives progress. Each side tells the other through its pipe how many
// receives it has posted, so no Send ever meets an empty receive queue. Every message and every
// Write is checked where it lands. Run under -fsanitize=thread, this is the race detector's test.
#include "pair_harness.hpp"

#include <atomic>
#include <thread>

using namespace iwtest;

namespace {

constexpr uint32_t kMessages = 2000;
constexpr size_t kSlot = 256;                 // one receive buffer (and one Send source) per message
constexpr size_t kWriteSize = 4096;           // every tenth message follows an RDMA Write of this size
constexpr size_t kRecvArea = 0;               // kMessages receive slots
constexpr size_t kWriteArea = 1u << 20;       // the peer's Writes, one slot per tenth message
constexpr size_t kSendArea = 4u << 20;        // our Send sources
constexpr size_t kWriteSrcArea = 6u << 20;    // our Write sources
constexpr uint32_t kRecvAhead = 256;          // receives posted beyond those consumed
constexpr uint32_t kWriteSeed = 100000;

size_t message_size(uint32_t i) { return 8 + i % 200; }

void run_side(Side& s, bool active) {
    if (active) {
        ConnParam p;
        p.private_data = "hello rnic";
        connect_active(s, p);
    } else {
        connect_passive(s);
    }
    exchange_regions(s);
    std::atomic<uint32_t> received{0}, send_done{0};
    std::atomic<bool> stop{false};

    // Receives, ahead of consumption, announced to the peer as cumulative counts.
    std::thread recv_poster([&] {
        uint32_t posted = 0;
        while (posted < kMessages) {
            while (posted >= received.load() + kRecvAhead) std::this_thread::yield();
            const uint32_t batch = std::min<uint32_t>(50, kMessages - posted);
            for (uint32_t k = 0; k < batch; ++k, ++posted)
                s.post_recv(posted, {s.sge(kRecvArea + posted * kSlot, kSlot)});
            s.link.put(posted);
        }
    });

    // Sends within the peer's announced receives; every tenth behind a Write (RDMAP keeps the order,
    // so the Write has landed when its Send's receive completes).
    std::thread sender([&] {
        uint32_t allowed = 0;
        for (uint32_t i = 0; i < kMessages; ++i) {
            while (i >= allowed) allowed = s.link.get<uint32_t>();
            if (i % 10 == 0) {
                uint8_t* w = s.buf.data() + kWriteSrcArea + (i / 10) * kWriteSize;
                fill(w, kWriteSize, kWriteSeed + i);
                s.post(kMessages + i, IWV_WR_RDMA_WRITE, {s.sge(kWriteSrcArea + (i / 10) * kWriteSize, kWriteSize)}, 0,
                       s.peer.addr + kWriteArea + (i / 10) * kWriteSize, s.peer.rkey);
            }
            fill(s.buf.data() + kSendArea + i * kSlot, message_size(i), i);
            s.post(i, IWV_WR_SEND, {s.sge(kSendArea + i * kSlot, message_size(i))});
        }
    });

    // Two pollers share the CQ; each completion is handled by exactly one of them.
    auto poller = [&] {
        iwv_wc wc[8];
        while (received.load() < kMessages || send_done.load() < kMessages) {
            const int n = iwv_poll_cq(s.cq, 8, wc);
            CHILD_CHECK(n >= 0, "CQ overflow");
            if (n == 0) {
                iwv_cq_wait(s.cq, 5);
                continue;
            }
            for (int k = 0; k < n; ++k) {
                CHILD_CHECK(wc[k].status == IWV_WC_SUCCESS, "wr %llu status %d vendor 0x%x",
                            (unsigned long long)wc[k].wr_id, int(wc[k].status), wc[k].vendor_err);
                const uint32_t i = uint32_t(wc[k].wr_id);
                if (wc[k].opcode == IWV_WC_SEND) {
                    send_done.fetch_add(1);
                    continue;
                }
                CHILD_CHECK(wc[k].opcode == IWV_WC_RECV, "opcode %d", int(wc[k].opcode));
                CHILD_CHECK(wc[k].byte_len == message_size(i), "message %u: %u bytes", i, wc[k].byte_len);
                CHILD_CHECK(same(s.buf.data() + kRecvArea + i * kSlot, message_size(i), i), "message %u corrupted", i);
                if (i % 10 == 0)
                    CHILD_CHECK(same(s.buf.data() + kWriteArea + (i / 10) * kWriteSize, kWriteSize, kWriteSeed + i),
                                "Write before message %u corrupted", i);
                received.fetch_add(1);
            }
        }
    };
    std::thread poll_a(poller), poll_b(poller);

    // Caller mode: nothing moves unless someone drives it; here a thread of its own (besides the
    // pollers' iwv_cq_wait, which drives it too).
    std::thread progress([&] {
        while (!stop.load()) iwv_progress(s.dev, 2);
    });

    recv_poster.join();
    sender.join();
    poll_a.join();
    poll_b.join();
    stop.store(true);
    progress.join();
    s.link.put('d'); // the peer got everything we sent before either side closes
    CHILD_CHECK(s.link.get<char>() == 'd', "peer done");
    s.close();
}

class IwarpThreads : public ::testing::TestWithParam<iwv_progress_mode> {};

TEST_P(IwarpThreads, SeveralThreadsPostAndPollOneDevice) {
    auto o = run_pair(GetParam(), [](Side& s) { run_side(s, true); }, [](Side& s) { run_side(s, false); });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// Control-path calls from four threads over two devices of one process: QPs created and
// destroyed, and calls that fail with the error text read back, all at once. (QP numbers are
// handed out across devices, and each device has one error text for all threads.)
TEST_P(IwarpThreads, ControlCallsOnTwoDevicesFromFourThreads) {
    auto o = run_pair(
        GetParam(),
        [](Side& s) {
            iwv_device_attr attr;
            iwv_device_attr_init(&attr);
            attr.progress = s.mode;
            attr.bind_address = "127.0.0.1";
            char err[256];
            iwv_device* second = iwv_open_device(&attr, err, sizeof err);
            CHILD_CHECK(second, "%s", err);
            iwv_pd* pd2 = iwv_alloc_pd(second);
            iwv_cq* cq2 = iwv_create_cq(second, 64);
            CHILD_CHECK(pd2 && cq2, "%s", iwv_last_error(second));
            struct Target {
                iwv_device* dev;
                iwv_pd* pd;
                iwv_cq* cq;
            };
            const Target targets[2] = {{s.dev, s.pd, s.cq}, {second, pd2, cq2}};
            std::vector<std::thread> threads;
            for (int t = 0; t < 4; ++t)
                threads.emplace_back([&, t] {
                    const Target& d = targets[t % 2];
                    for (int k = 0; k < 200; ++k) {
                        iwv_qp_init_attr qa{};
                        qa.send_cq = d.cq;
                        qa.recv_cq = d.cq;
                        qa.cap = {16, 16, 1, 1, 0};
                        iwv_qp* qp = iwv_create_qp(d.pd, &qa);
                        CHILD_CHECK(qp, "%s", iwv_last_error(d.dev));
                        iwv_recv_wr wr{1, nullptr, nullptr, 0};
                        iwv_recv_wr* bad = nullptr;
                        CHILD_CHECK(iwv_post_recv(qp, &wr, &bad) == EINVAL, "post_recv on a QP in RESET");
                        CHILD_CHECK(std::strstr(iwv_last_error(d.dev), "iwv_post_recv") != nullptr, "error text '%s'",
                                    iwv_last_error(d.dev));
                        CHILD_CHECK(iwv_destroy_qp(qp) == 0, "%s", iwv_last_error(d.dev));
                    }
                });
            for (auto& th : threads) th.join();
            CHILD_CHECK(iwv_destroy_cq(cq2) == 0 && iwv_dealloc_pd(pd2) == 0, "%s", iwv_last_error(second));
            CHILD_CHECK(iwv_close_device(second) == 0, "%s", iwv_last_error(second));
            s.close();
        },
        [](Side& s) { s.close(); });
    EXPECT_TRUE(o.ok()) << o.describe();
}

} // namespace

INSTANTIATE_TEST_SUITE_P(Modes, IwarpThreads,
                         ::testing::Values(IWV_PROGRESS_THREAD, IWV_PROGRESS_CALLER, IWV_PROGRESS_STANDBY),
                         [](const auto& info) { return mode_name(info.param); });
