// SPDX-License-Identifier: BSD-3-Clause
// DDP Stream Session sequencing (RFC 5043 §6), DDP-SSN windows (§10), IRD/ORD negotiation
// (RFC 6581), header-first validation, and the CQ's notification rules.
#include <gtest/gtest.h>

#include "cq.hpp"
#include "error.hpp"
#include "session.hpp"
#include "validate.hpp"

#include <poll.h>

using namespace iwarp;

namespace {

std::vector<uint8_t> bytes(std::initializer_list<uint8_t> b) { return b; }

} // namespace

TEST(SsnOrder, NextAheadAndInvalidModulo65536) {
    EXPECT_EQ(classify_ssn(0, 0), SsnOrder::next);
    EXPECT_EQ(classify_ssn(0, 1), SsnOrder::ahead);
    EXPECT_EQ(classify_ssn(0, 32767), SsnOrder::ahead);
    EXPECT_EQ(classify_ssn(0, 32768), SsnOrder::invalid);
    EXPECT_EQ(classify_ssn(5, 4), SsnOrder::invalid); // behind: a duplicate or a replay
    EXPECT_EQ(classify_ssn(65535, 0), SsnOrder::ahead); // wraps
    EXPECT_EQ(classify_ssn(65535, 65535), SsnOrder::next);
}

TEST(IrdOrd, EachSideLowersToWhatThePeerCanMatch) {
    IrdOrdPair n = negotiate_ird_ord({8, 4}, {2, 16});
    EXPECT_EQ(n.ird, 8); // min(our IRD 8, their ORD 16)
    EXPECT_EQ(n.ord, 2); // min(our ORD 4, their IRD 2)
    IrdOrdPair z = negotiate_ird_ord({8, 4}, {0, 0});
    EXPECT_EQ(z.ird, 0);
    EXPECT_EQ(z.ord, 0);
}

TEST(Session, AcceptedSequenceCountsControlMessagesInTheDdpSsn) {
    Session a(SessionRole::active), p(SessionRole::passive);
    auto init = a.initiate({4, 2}, bytes({1, 2, 3}));
    EXPECT_EQ(a.state(), SessionState::initiate_sent);
    EXPECT_THROW(a.take_data_ssn(), sctpm::Error); // §6.6: no segment before the Accept

    auto req = p.on_control(init);
    ASSERT_EQ(req.event, Session::Event::request);
    EXPECT_EQ(req.message.private_data, bytes({1, 2, 3}));
    ASSERT_TRUE(p.peer_ird_ord());
    EXPECT_EQ(p.peer_ird_ord()->ird, 4);
    EXPECT_EQ(p.peer_ird_ord()->ord, 2);

    auto acc = p.accept({1, 8}, bytes({9}));
    EXPECT_EQ(p.negotiated().ird, 1); // min(1, initiator ORD 2)
    EXPECT_EQ(p.negotiated().ord, 4); // min(8, initiator IRD 4)
    EXPECT_EQ(p.take_data_ssn(), 1);  // the Accept took DDP-SSN 0

    auto out = a.on_control(acc);
    ASSERT_EQ(out.event, Session::Event::accepted);
    EXPECT_EQ(a.state(), SessionState::established);
    EXPECT_EQ(a.negotiated().ird, 4); // min(4, responder ORD 4)
    EXPECT_EQ(a.negotiated().ord, 1); // min(2, responder IRD 1)
    EXPECT_EQ(a.take_data_ssn(), 1);
    EXPECT_EQ(a.expected_ssn(), 1);
    EXPECT_FALSE(a.on_segment(1));
    EXPECT_EQ(a.expected_ssn(), 2);

    auto term = a.terminate();
    EXPECT_THROW(a.terminate(), sctpm::Error); // one Terminate per session
    EXPECT_FALSE(p.on_segment(1));
    EXPECT_EQ(p.on_control(term).event, Session::Event::terminated);
    EXPECT_EQ(p.state(), SessionState::terminated);
    EXPECT_TRUE(p.can_terminate()); // the passive side may still answer with its own
}

TEST(Session, RejectEndsTheSessionOnBothSides) {
    Session a(SessionRole::active), p(SessionRole::passive);
    ASSERT_EQ(p.on_control(a.initiate({1, 1}, {})).event, Session::Event::request);
    auto rej = p.reject(bytes({7, 7}));
    EXPECT_EQ(p.state(), SessionState::rejected);
    EXPECT_THROW(p.terminate(), sctpm::Error);
    auto out = a.on_control(rej);
    EXPECT_EQ(out.event, Session::Event::rejected);
    EXPECT_EQ(out.message.private_data, bytes({7, 7}));
    EXPECT_TRUE(a.finished());
}

TEST(Session, NonUlpRejectIsATerminateAnsweringTheInitiate) {
    Session a(SessionRole::active), p(SessionRole::passive);
    ASSERT_EQ(p.on_control(a.initiate({1, 1}, {})).event, Session::Event::request);
    EXPECT_EQ(a.on_control(p.terminate()).event, Session::Event::terminated); // §6.4
}

TEST(Session, IllegalSequencesAreSequenceErrors) {
    { // passive side: a DDP segment before any Initiate (§6.2)
        Session p(SessionRole::passive);
        auto e = p.on_segment(0);
        ASSERT_TRUE(e);
        EXPECT_NE(e->find("before the session was established"), std::string::npos) << *e;
        EXPECT_EQ(p.state(), SessionState::terminated);
    }
    { // an Accept arriving at the passive side
        Session a(SessionRole::active), p(SessionRole::passive), p2(SessionRole::passive);
        ASSERT_EQ(p.on_control(a.initiate({1, 1}, {})).event, Session::Event::request);
        auto out = p2.on_control(p.accept({1, 1}, {}));
        EXPECT_EQ(out.event, Session::Event::sequence_error);
        EXPECT_NE(out.error.find("Accept"), std::string::npos) << out.error;
    }
    { // a second Initiate
        Session a(SessionRole::active), p(SessionRole::passive);
        auto init = a.initiate({1, 1}, {});
        ASSERT_EQ(p.on_control(init).event, Session::Event::request);
        auto again = init;
        again[1] = 1; // DDP-SSN 1, in order, but Initiate is only legal first
        EXPECT_EQ(p.on_control(again).event, Session::Event::sequence_error);
    }
    { // out of DDP-SSN order and malformed messages
        Session p(SessionRole::passive);
        EXPECT_EQ(p.on_control(bytes({0, 5, 0, 1})).event, Session::Event::sequence_error);
        Session q(SessionRole::passive);
        auto out = q.on_control(bytes({0, 0, 0}));
        EXPECT_EQ(out.event, Session::Event::sequence_error);
        EXPECT_NE(out.error.find("malformed"), std::string::npos) << out.error;
    }
}

TEST(Session, PrivateDataLimitIsCheckedBeforeAnythingIsSent) {
    Session a(SessionRole::active);
    std::vector<uint8_t> big(kMaxPrivateData - kIrdOrdSize + 1);
    EXPECT_THROW(a.initiate({1, 1}, big), sctpm::Error);
    EXPECT_EQ(a.state(), SessionState::idle);
    big.pop_back();
    EXPECT_NO_THROW(a.initiate({1, 1}, big)); // 508 + the IRD/ORD word = 512 (RFC 5043 §5.2.3)
}

// ---- header-first validation -----------------------------------------------------------------

namespace {

struct Fixture {
    StagTable stags{7};
    PdHandle pd = stags.alloc_pd();
    std::vector<uint8_t> mem = std::vector<uint8_t>(4096);
    uint32_t stag = stags.register_region(pd, reinterpret_cast<uintptr_t>(mem.data()), mem.size(),
                                          kLocalWrite | kRemoteWrite);
    ReceiverState st;
    Fixture() {
        st.stags = &stags;
        st.pd = pd;
        st.max_message = 1000;
        st.recv.push_back({0, 300});
    }
};

} // namespace

TEST(ValidateHead, AgreesWithTheWholeMessageCheck) {
    Fixture f;
    const uint64_t base = reinterpret_cast<uintptr_t>(f.mem.data());
    for (uint64_t len : {0ull, 1ull, 100ull, 984ull, 985ull}) {
        for (uint64_t to : {base, base + 4000, base + 4096, base - 1}) {
            DdpHeader h = make_tagged_header(Opcode::rdma_write, f.stag, to, true);
            std::vector<uint8_t> payload(len, 0xAB);
            auto msg = encode_segment(3, h, payload);
            Verdict whole = validate_segment(f.st, msg);
            Segment head{3, h, {}};
            Verdict early = validate_segment_head(f.st, head, len);
            ASSERT_EQ(whole.index(), early.index()) << "len " << len << " to " << to - base;
            if (auto* r = std::get_if<Rejected>(&whole)) {
                EXPECT_EQ(r->terminate, std::get<Rejected>(early).terminate);
            } else {
                EXPECT_EQ(std::get<Accepted>(whole).placement.has_value(),
                          std::get<Accepted>(early).placement.has_value());
            }
        }
    }
    for (uint64_t len : {0ull, 300ull, 301ull}) {
        DdpHeader h = make_untagged_header(Opcode::send, 1, 0, true);
        std::vector<uint8_t> payload(len);
        Verdict whole = validate_segment(f.st, encode_segment(1, h, payload));
        Verdict early = validate_segment_head(f.st, Segment{1, h, {}}, len);
        ASSERT_EQ(whole.index(), early.index()) << len;
        if (auto* a = std::get_if<Accepted>(&early)) {
            EXPECT_EQ(*a->message_length, len);
        }
    }
}

TEST(ValidateHead, RefusesHeadersWhosePayloadIsAnRdmapHeader) {
    Fixture f;
    EXPECT_THROW(validate_segment_head(f.st, Segment{0, make_untagged_header(Opcode::read_request, 1, 0, true), {}}, 28),
                 sctpm::Error);
    EXPECT_FALSE(payload_is_data(make_untagged_header(Opcode::terminate, 1, 0, true)));
    EXPECT_TRUE(payload_is_data(make_tagged_header(Opcode::read_response, 1, 0, true)));
}

// ---- completion queue --------------------------------------------------------------------------

TEST(CompletionQueue, FifoBatchPollAndOverflow) {
    CompletionQueue cq(3);
    for (uint64_t i = 0; i < 3; ++i) cq.push(iwv_wc{i, IWV_WC_SUCCESS, IWV_WC_SEND, 0, 0, 0, 0, 0}, false);
    iwv_wc wc[4];
    ASSERT_EQ(cq.poll(2, wc), 2);
    EXPECT_EQ(wc[0].wr_id, 0u);
    EXPECT_EQ(wc[1].wr_id, 1u);
    ASSERT_EQ(cq.poll(4, wc), 1);
    EXPECT_EQ(wc[0].wr_id, 2u);
    for (uint64_t i = 0; i < 4; ++i) cq.push(iwv_wc{i, IWV_WC_SUCCESS, IWV_WC_SEND, 0, 0, 0, 0, 0}, false);
    EXPECT_TRUE(cq.overflowed());
    EXPECT_EQ(cq.poll(4, wc), -1);
}

TEST(CompletionQueue, SolicitedOnlyNotificationFiresOnSolicitedOrError) {
    CompletionQueue cq(16);
    pollfd p{cq.fd(), POLLIN, 0};
    cq.arm(true);
    cq.push(iwv_wc{1, IWV_WC_SUCCESS, IWV_WC_RECV, 0, 0, 0, 0, 0}, false);
    EXPECT_EQ(poll(&p, 1, 0), 0); // unsolicited success: no event
    cq.push(iwv_wc{2, IWV_WC_SUCCESS, IWV_WC_RECV, 0, 0, 0, 0, 0}, true);
    EXPECT_EQ(poll(&p, 1, 0), 1);
    cq.ack_event();
    EXPECT_EQ(poll(&p, 1, 0), 0);
    cq.push(iwv_wc{3, IWV_WC_SUCCESS, IWV_WC_RECV, 0, 0, 0, 0, 0}, true);
    EXPECT_EQ(poll(&p, 1, 0), 0); // not re-armed
    cq.arm(true);
    cq.push(iwv_wc{4, IWV_WC_WR_FLUSH_ERR, IWV_WC_RECV, 0, 0, 0, 0, 0}, false);
    EXPECT_EQ(poll(&p, 1, 0), 1); // errors always notify
}
