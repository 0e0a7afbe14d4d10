// SPDX-License-Identifier: BSD-3-Clause
// ch3:hybrid's ordering rules (ch3_hybrid/include/hy_order.h), without MPICH: each rule on its
// own, then a model of the protocol around them. In the model a sender issues CH3 packets to one
// peer, control packets on SCTP and PUT headers on the queue pair, under the sender's rules; the
// two paths deliver in random interleavings; the receiver must handle every packet exactly once,
// in issue order. Counters start just below 2^32, so every run also crosses the wrap.
#include <gtest/gtest.h>

#include "hy_order.h"

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

namespace {

constexpr uint32_t kNearWrap = 0xfffffff0u;

TEST(HyOrder, CountersCompareAcrossTheWrap)
{
    EXPECT_TRUE(hy_reached(5, 5));
    EXPECT_TRUE(hy_reached(6, 5));
    EXPECT_FALSE(hy_reached(5, 6));
    EXPECT_TRUE(hy_reached(2, 0xfffffffeu)); // 2 is 4 past 2^32 - 2
    EXPECT_FALSE(hy_reached(0xfffffffeu, 2));
}

TEST(HyOrder, QueuePairMachineHasOnlyItsTransitions)
{
    using S = MPIDI_CH3I_Hy_qp_state;
    const S all[] = {MPIDI_CH3I_HY_QP_NO_CONTACT, MPIDI_CH3I_HY_QP_IDLE,        MPIDI_CH3I_HY_QP_CONNECTING,
                     MPIDI_CH3I_HY_QP_READY,      MPIDI_CH3I_HY_QP_FAILED,      MPIDI_CH3I_HY_QP_SYNC_ASKED,
                     MPIDI_CH3I_HY_QP_SYNC_ANSWERED};
    const std::vector<std::pair<S, S>> allowed = {
        {MPIDI_CH3I_HY_QP_NO_CONTACT, MPIDI_CH3I_HY_QP_IDLE},        // a window told us the contact
        {MPIDI_CH3I_HY_QP_NO_CONTACT, MPIDI_CH3I_HY_QP_READY},       // the peer connected first
        {MPIDI_CH3I_HY_QP_NO_CONTACT, MPIDI_CH3I_HY_QP_FAILED},
        {MPIDI_CH3I_HY_QP_IDLE, MPIDI_CH3I_HY_QP_CONNECTING},
        {MPIDI_CH3I_HY_QP_IDLE, MPIDI_CH3I_HY_QP_READY},
        {MPIDI_CH3I_HY_QP_IDLE, MPIDI_CH3I_HY_QP_FAILED},
        {MPIDI_CH3I_HY_QP_CONNECTING, MPIDI_CH3I_HY_QP_READY},
        {MPIDI_CH3I_HY_QP_CONNECTING, MPIDI_CH3I_HY_QP_FAILED},
        {MPIDI_CH3I_HY_QP_READY, MPIDI_CH3I_HY_QP_FAILED},
        {MPIDI_CH3I_HY_QP_FAILED, MPIDI_CH3I_HY_QP_SYNC_ASKED},
        {MPIDI_CH3I_HY_QP_SYNC_ASKED, MPIDI_CH3I_HY_QP_SYNC_ANSWERED},
    };
    int yes = 0;
    for (S from : all)
        for (S to : all) {
            bool listed = false;
            for (const auto& t : allowed)
                listed = listed || (t.first == from && t.second == to);
            EXPECT_EQ(hy_qp_may_go(from, to) != 0, listed) << from << " -> " << to;
            yes += listed;
        }
    EXPECT_EQ(yes, 11);
    EXPECT_FALSE(hy_qp_may_go(MPIDI_CH3I_HY_QP_FAILED, MPIDI_CH3I_HY_QP_READY)); // a broken QP stays broken
    EXPECT_FALSE(hy_qp_may_go(static_cast<S>(7), MPIDI_CH3I_HY_QP_IDLE));
}

TEST(HyOrder, HeaderRunsOnceItsControlPacketsAreHandled)
{
    EXPECT_FALSE(hy_header_may_run(2, 3));
    EXPECT_TRUE(hy_header_may_run(3, 3));
    EXPECT_TRUE(hy_header_may_run(4, 3)); // later control packets do not hold it back
    EXPECT_FALSE(hy_header_may_run(0xffffffffu, 0));
    EXPECT_TRUE(hy_header_may_run(0, 0xffffffffu));
}

TEST(HyOrder, MessageOnTheQpIsAHeaderThatRunsWaitsOrEndsTheQp)
{
    const size_t len = 64;
    EXPECT_EQ(hy_header_arrival(len, len, 1, 0, 4, 3, 3), HY_ARRIVAL_RUN);
    EXPECT_EQ(hy_header_arrival(len, len, 1, 0, 4, 2, 3), HY_ARRIVAL_DEFER);
    EXPECT_EQ(hy_header_arrival(len, len, 1, 1, 4, 3, 3), HY_ARRIVAL_DEFER); // behind one that waits
    EXPECT_EQ(hy_header_arrival(len, len, 1, 4, 4, 2, 3), HY_ARRIVAL_TOO_MANY);
    EXPECT_EQ(hy_header_arrival(len, len, 1, 4, 4, 3, 3), HY_ARRIVAL_TOO_MANY); // would wait too
    EXPECT_EQ(hy_header_arrival(len - 1, len, 1, 0, 4, 3, 3), HY_ARRIVAL_BAD_LENGTH);
    EXPECT_EQ(hy_header_arrival(len + 1, len, 1, 0, 4, 3, 3), HY_ARRIVAL_BAD_LENGTH);
    EXPECT_EQ(hy_header_arrival(len, len, 0, 0, 4, 3, 3), HY_ARRIVAL_BAD_TYPE);
}

TEST(HyOrder, CreditCountsFreeReceivesAndNeverGoesBack)
{
    EXPECT_FALSE(hy_credit_left(10, 10)); // every receive the peer posted is taken
    EXPECT_TRUE(hy_credit_left(11, 10));
    EXPECT_TRUE(hy_credit_left(1, 0xffffffffu));
    EXPECT_EQ(hy_credit_after_read(10, 12), 12u);
    EXPECT_EQ(hy_credit_after_read(12, 10), 12u); // a Read that fetched an older count
    EXPECT_EQ(hy_credit_after_read(0xfffffffeu, 3), 3u);
}

TEST(HyOrder, HeaderTakesTheQpOnlyWhenNothingEarlierWaitsForSctp)
{
    EXPECT_TRUE(hy_header_may_use_qp(1, 0, 0, 5, 4));
    EXPECT_FALSE(hy_header_may_use_qp(0, 0, 0, 5, 4)); // the peer's receive count is unknown
    EXPECT_FALSE(hy_header_may_use_qp(1, 1, 0, 5, 4)); // the QP failed, or is syncing after that
    EXPECT_FALSE(hy_header_may_use_qp(1, 0, 1, 5, 4)); // it would pass a held SCTP packet
    EXPECT_FALSE(hy_header_may_use_qp(1, 0, 0, 4, 4)); // no credit
}

TEST(HyOrder, HeadEntryWaitsForCompletionsThenAsksOnceAboutALostHeader)
{
    EXPECT_EQ(hy_head_next(1, 1, 1, 0, 0), HY_HEAD_WAIT);   // completions still to come
    EXPECT_EQ(hy_head_next(0, 0, 0, 0, 0), HY_HEAD_LEAVES); // a copy or a request
    EXPECT_EQ(hy_head_next(0, 0, 1, 0, 0), HY_HEAD_LEAVES); // failed, header never on the QP
    EXPECT_EQ(hy_head_next(0, 1, 0, 0, 0), HY_HEAD_LEAVES); // its Read completed
    EXPECT_EQ(hy_head_next(0, 1, 1, 0, 0), HY_HEAD_ASK);
    EXPECT_EQ(hy_head_next(0, 1, 1, 1, 0), HY_HEAD_WAIT); // asked: no second question
    EXPECT_EQ(hy_head_next(0, 1, 1, 0, 1), HY_HEAD_LEAVES);
}

TEST(HyOrder, WriteEntryLeavesDeliveredWithItsHeaderOrResent)
{
    EXPECT_EQ(hy_write_leaves(0, 0, 0, 0), HY_WRITE_HEADER);
    EXPECT_EQ(hy_write_leaves(0, 1, 0, 0), HY_WRITE_RESEND);
    EXPECT_EQ(hy_write_leaves(1, 0, 0, 7), HY_WRITE_DELIVERED);
    EXPECT_EQ(hy_write_leaves(1, 1, 7, 7), HY_WRITE_DELIVERED); // the peer handled header 7
    EXPECT_EQ(hy_write_leaves(1, 1, 6, 7), HY_WRITE_RESEND);
}

// ---- the model ----

struct Packet {
    int id;        // issue order
    bool header;   // a PUT header on the QP, else a control packet on SCTP
    uint32_t after_ctl;
};

// One random run: `ops` packets, each a header with probability 1/3. With `rule` false the
// receiver handles headers as they come, ignoring after_ctl. Returns the receiver's handling order.
std::vector<int> run_model(unsigned seed, int ops, bool rule)
{
    std::mt19937 rng(seed);
    std::vector<Packet> issue;
    for (int i = 0; i < ops; i++)
        issue.push_back({i, rng() % 3 == 0, 0});

    // Sender: packets leave in issue order; a control packet also waits until every header
    // issued before it has arrived (the Read behind the header completed).
    size_t next = 0;
    uint32_t ctl_sent = kNearWrap;
    std::deque<Packet> on_sctp, on_qp;
    std::vector<bool> arrived(ops, false);
    // Receiver: headers that arrived wait in the CQ until polled; ctl_done counts what it handled.
    std::deque<Packet> cq, deferred;
    uint32_t ctl_done = kNearWrap;
    std::vector<int> handled;

    auto may_send = [&] {
        if (next >= issue.size())
            return false;
        if (issue[next].header)
            return true;
        for (size_t i = 0; i < next; i++)
            if (issue[i].header && !arrived[i])
                return false;
        return true;
    };
    auto run_header = [&](const Packet &p) {
        const hy_arrival a = hy_header_arrival(64, 64, 1, (unsigned)deferred.size(), 1u << 20, ctl_done, p.after_ctl);
        ASSERT_TRUE(a == HY_ARRIVAL_RUN || a == HY_ARRIVAL_DEFER);
        if (!rule || a == HY_ARRIVAL_RUN)
            handled.push_back(p.id);
        else
            deferred.push_back(p);
    };
    auto poll_cq = [&] {
        while (!cq.empty()) {
            run_header(cq.front());
            cq.pop_front();
        }
    };
    auto run_deferred = [&] {
        while (!deferred.empty() && hy_header_may_run(ctl_done, deferred.front().after_ctl)) {
            handled.push_back(deferred.front().id);
            deferred.pop_front();
        }
    };

    for (;;) {
        std::vector<int> choices;
        if (may_send())
            choices.push_back(0);
        if (!on_sctp.empty())
            choices.push_back(1);
        if (!on_qp.empty())
            choices.push_back(2);
        if (!cq.empty())
            choices.push_back(3);
        if (choices.empty())
            break;
        switch (choices[rng() % choices.size()]) {
        case 0: {
            Packet p = issue[next++];
            if (p.header) {
                p.after_ctl = ctl_sent;
                on_qp.push_back(p);
            } else {
                ctl_sent++;
                on_sctp.push_back(p);
            }
            break;
        }
        case 1: // a control packet arrives: the CQ is polled before it is handled
            poll_cq();
            handled.push_back(on_sctp.front().id);
            on_sctp.pop_front();
            ctl_done++;
            run_deferred();
            break;
        case 2: // a header lands in the receiver's CQ
            arrived[on_qp.front().id] = true;
            cq.push_back(on_qp.front());
            on_qp.pop_front();
            break;
        case 3: // the progress engine polls the CQ
            poll_cq();
            break;
        }
    }
    EXPECT_TRUE(deferred.empty()) << "seed " << seed;
    return handled;
}

TEST(HyOrderModel, ReceiverHandlesEveryPacketOnceInIssueOrder)
{
    for (unsigned seed = 1; seed <= 2000; seed++) {
        std::vector<int> handled = run_model(seed, 40, true);
        ASSERT_EQ(handled.size(), 40u) << "seed " << seed;
        for (int i = 0; i < 40; i++)
            ASSERT_EQ(handled[i], i) << "seed " << seed << ": position " << i;
    }
}

// The model can fail: without the after_ctl rule some interleavings reorder (a header issued
// after a control packet overtakes it on the faster path).
TEST(HyOrderModel, WithoutTheRuleSomeRunReorders)
{
    int reordered = 0;
    for (unsigned seed = 1; seed <= 2000; seed++) {
        std::vector<int> handled = run_model(seed, 40, false);
        for (int i = 0; i < (int) handled.size(); i++)
            if (handled[i] != i) {
                reordered++;
                break;
            }
    }
    EXPECT_GT(reordered, 0);
}

// A QP breaks with headers in flight: the peer handled the first `done` of them. Each header
// must reach the peer exactly once: delivered by the QP, or resent on SCTP.
TEST(HyOrderModel, BrokenQpResendsExactlyTheHeadersThePeerDidNotHandle)
{
    const uint32_t first = kNearWrap; // headers numbered first+1 .. first+n, across the wrap
    const int n = 30;
    for (int done = 0; done <= n; done++) {
        const uint32_t peer_headers_done = first + (uint32_t) done;
        bool asked = false, answered = false;
        int via_qp = 0, resent = 0;
        for (int k = 1; k <= n; k++) {
            const uint32_t seq = first + (uint32_t) k;
            // Every entry's transfer failed (flushed); the first one asks, then all wait.
            hy_head_action a = hy_head_next(0, 1, 1, asked, answered);
            if (a == HY_HEAD_ASK) {
                ASSERT_EQ(k, 1);
                asked = true;
                a = hy_head_next(0, 1, 1, asked, answered);
                ASSERT_EQ(a, HY_HEAD_WAIT);
                answered = true; // the QP_SYNC_ACK arrives
                a = hy_head_next(0, 1, 1, asked, answered);
            }
            ASSERT_EQ(a, HY_HEAD_LEAVES);
            hy_write_exit e = hy_write_leaves(1, 1, peer_headers_done, seq);
            ASSERT_NE(e, HY_WRITE_HEADER);
            (e == HY_WRITE_DELIVERED ? via_qp : resent)++;
            EXPECT_EQ(e == HY_WRITE_DELIVERED, k <= done) << "header " << k << ", done " << done;
        }
        EXPECT_EQ(via_qp, done);
        EXPECT_EQ(resent, n - done);
    }
}

} // namespace
