// Two-process tests of the transport: data verified byte for byte, ordering, failures.
#include <gtest/gtest.h>

#include "pair_harness.hpp"

using namespace pair_test;

namespace {

void send_all(Side& s, const std::vector<std::string>& msgs, sctpm_key key = {0, 0, 0}) {
    for (size_t i = 0; i < msgs.size(); ++i) {
        iovec v{const_cast<char*>(msgs[i].data()), msgs[i].size()};
        int rc = sctpm_send(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(i + 1));
        CHILD_CHECK(rc == 0 || rc == 1, "send %zu returned %d", i, rc);
        if (rc == 1)
            s.sent[i + 1] = 1; // pending
    }
    CHILD_CHECK(s.progress_until([&] {
        for (auto& [c, st] : s.sent)
            if (st == 1) return false;
        return true;
    }), "queued sends did not complete");
    for (auto& [c, st] : s.sent)
        CHILD_CHECK(st == 0, "send %zu completed with %d", size_t(c), st);
}

std::vector<std::string> mixed_messages(uint32_t n, uint32_t seed) {
    std::vector<std::string> v;
    uint32_t x = seed;
    const size_t sizes[] = {0, 1, 7, 100, 4096, 4097, 65536, 262144, 262145, 700000, 2000000};
    for (uint32_t i = 0; i < n; ++i) {
        x = x * 1103515245 + 12345;
        size_t sz = sizes[(x >> 8) % (sizeof sizes / sizeof sizes[0])];
        v.push_back(make_message(i, std::max<size_t>(sz, 4)));
    }
    return v;
}

void expect_messages(Side& s, size_t n) {
    CHILD_CHECK(s.progress_until([&] { return s.completed >= n; }), "got %zu of %zu messages",
                s.completed, n);
    for (size_t i = 0; i < n; ++i) {
        CHILD_CHECK(message_ok(s.messages[i]), "message %zu (%zu bytes) corrupted", i, s.messages[i].size());
        CHILD_CHECK(message_id(s.messages[i]) == i, "message %zu arrived in position of %u", i, message_id(s.messages[i]));
    }
}

} // namespace

TEST(TransportPair, MixedSizesBothWaysVerified) {
    const uint32_t n = 120;
    auto o = run_pair(
        [&](Side& s) {
            send_all(s, mixed_messages(n, 1));
            expect_messages(s, n);
        },
        [&](Side& s) {
            s.head_limit = 10; // take little of each head: most bytes go through placement
            expect_messages(s, n);
            send_all(s, mixed_messages(n, 2));
            s.progress_until([] { return false; }, 0.5); // let the last data drain before close
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST(TransportPair, LargeMessage64MiB) {
    auto o = run_pair(
        [](Side& s) {
            std::string big = make_message(0, 64u << 20);
            send_all(s, {big});
            expect_messages(s, 1); // the echo
        },
        [](Side& s) {
            expect_messages(s, 1);
            CHILD_CHECK(s.messages[0].size() == 64u << 20, "size %zu", s.messages[0].size());
            send_all(s, {make_message(0, 8)});
            s.progress_until([] { return false; }, 0.5);
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// The thesis' Figure 3.5: tags 1, 3, 5 on different streams must still reach three MPI_ANY_TAG
// receives as 1, 3, 5. Delivery order to the callback is the matching order.
TEST(TransportPair, WildcardOrderAcrossStreams) {
    for (const char* policy : {"single", "context", "context_tag"}) {
        auto o = run_pair(
            [](Side& s) {
                std::vector<std::string> msgs;
                for (uint32_t i = 0; i < 300; ++i) {
                    std::string m = make_message(i, i % 3 == 0 ? 300000 : 64);
                    sctpm_key key{7, int32_t(1 + 2 * (i % 3)), 0};
                    iovec v{m.data(), m.size()};
                    msgs.push_back(m);
                    int rc = sctpm_send(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(uintptr_t(i + 1)));
                    CHILD_CHECK(rc >= 0, "send %d", rc);
                    if (rc == 1) s.sent[i + 1] = 1;
                    // Keep buffers alive until sent: msgs holds copies; the iov points into m,
                    // so progress until this one is out before m goes away.
                    CHILD_CHECK(s.progress_until([&] { return s.sent.count(i + 1) == 0 || s.sent[i + 1] != 1; }), "stuck");
                }
                expect_messages(s, 1);
            },
            [](Side& s) {
                expect_messages(s, 300);
                send_all(s, {make_message(0, 4)});
                s.progress_until([] { return false; }, 0.5);
            },
            [policy](sctpm_config* c) { set(c, "stream_policy", policy); });
        EXPECT_TRUE(o.ok()) << policy << ": " << o.describe();
    }
}

TEST(TransportPair, PeerDeathFailsSendsWithoutHanging) {
    auto o = run_pair(
        [](Side& s) {
            send_all(s, {make_message(0, 1000)});
            expect_messages(s, 1); // b says it is about to die
            std::string m = make_message(1, 100000);
            sctpm_key key{0, 0, 0};
            iovec v{m.data(), m.size()};
            int rc = 0;
            CHILD_CHECK(s.progress_until([&] {
                rc = sctpm_send(s.t, s.other, &key, &v, 1, nullptr);
                return rc < 0 || s.failed_event();
            }, 60), "no failure reported within 60 s after the peer died");
            CHILD_CHECK(sctpm_peer_failed(s.t, s.other) == 1, "peer not marked failed");
            rc = sctpm_send(s.t, s.other, &key, &v, 1, nullptr);
            CHILD_CHECK(rc == -ECONNRESET, "send to a failed peer returned %d", rc);
        },
        [](Side& s) {
            expect_messages(s, 1);
            send_all(s, {make_message(0, 8)});
            s.progress_until([] { return false; }, 0.3);
            kill(getpid(), SIGKILL); // die without closing anything
        });
    // b is killed by design; a must succeed.
    EXPECT_TRUE(WIFEXITED(o.status_a) && WEXITSTATUS(o.status_a) == 0 && !o.timed_out) << o.describe();
}

TEST(TransportPair, UnreachablePeerReportsCantStart) {
    auto o = run_pair(
        [](Side& s) {
            // A card for a port nobody listens on.
            sctpm_peer ghost = sctpm_peer_add(s.t, "sctpm1;udp=9;sctp=9;addr=127.0.0.1");
            CHILD_CHECK(ghost >= 0, "%s", sctpm_last_error(s.t));
            sctpm_key key{0, 0, 0};
            std::string m = "hello";
            iovec v{m.data(), m.size()};
            int rc = sctpm_send(s.t, ghost, &key, &v, 1, reinterpret_cast<void*>(1));
            CHILD_CHECK(rc >= 0, "first send %d", rc);
            CHILD_CHECK(s.progress_until([&] { return sctpm_peer_failed(s.t, ghost) == 1; }, 60),
                        "unreachable peer not reported within 60 s");
            bool named = false;
            for (auto& e : s.events)
                named |= (e.type == SCTPM_EV_CANT_START || e.type == SCTPM_EV_ASSOC_LOST) && e.peer == ghost &&
                         std::strstr(e.detail, "127.0.0.1") != nullptr;
            CHILD_CHECK(named || s.failed_event(), "no event names the unreachable address");
        },
        [](Side&) {}, {}, 120);
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST(TransportPair, BadCardIsRejectedWithReason) {
    auto o = run_pair(
        [](Side& s) {
            CHILD_CHECK(sctpm_peer_add(s.t, "sctpm1;udp=x;sctp=9;addr=127.0.0.1") < 0, "bad card accepted");
            CHILD_CHECK(std::strstr(sctpm_last_error(s.t), "udp") != nullptr, "error does not name the field: %s",
                        sctpm_last_error(s.t));
        },
        [](Side&) {});
    EXPECT_TRUE(o.ok()) << o.describe();
}

// ---- malformed bytes from the network -------------------------------------------------------------
// b speaks raw SCTP to a through a second socket of its stack and sends broken frames; a must
// report a protocol error naming the problem, keep running, and still serve a well-behaved peer.
#include "card.hpp"
#include "endpoint.hpp"
#include "frame.hpp"
#include "settings.hpp"
#include "stack.hpp"

namespace {

std::string hello_payload(const std::string& card) {
    std::string p = std::string("\0\4", 2) + "evil" + card;
    return p;
}

std::string frame(const sctpm::FrameHeader& h, const std::string& payload) {
    uint8_t hdr[sctpm::kFrameHeaderSize];
    sctpm::encode_frame_header(h, hdr);
    return std::string(reinterpret_cast<char*>(hdr), sizeof hdr) + payload;
}

struct RawCase {
    const char* name;
    std::function<std::vector<std::string>(const std::string& my_card)> frames;
    const char* expect; // substring of the event detail
};

void raw_attack(Side& s, const RawCase& c) {
    // The other side's card came through the pipe; a second socket in this process's stack.
    sctpm::Settings st;
    sctpm::StackInfo info = sctpm::start_stack(st);
    (void)info;
    char other_card[SCTPM_CARD_MAX];
    (void)other_card;
    sctpm::Card target = sctpm::parse_card(s.peer_card);
    sctpm::Endpoint raw(st, 0, {"127.0.0.1"});
    sctpm::AssocId a = raw.connect(target.addresses, target.sctp_port, target.udp_port);
    sctpm::Card mine;
    mine.udp_port = sctpm::start_stack(st).udp_port;
    mine.sctp_port = 1;
    mine.addresses = {"127.0.0.1"};
    for (const auto& f : c.frames(sctpm::format_card(mine))) {
        long rc;
        for (int i = 0; i < 2000 && (rc = raw.send(a, 0, f.data(), f.size())) == -EWOULDBLOCK; ++i)
            usleep(1000);
        CHILD_CHECK(rc == long(f.size()), "raw send returned %ld", rc);
    }
    sleep(1);
}

sctpm::FrameHeader hdr(sctpm::FrameKind kind, uint8_t flags, uint32_t seq, uint32_t frag, uint64_t total, uint64_t off) {
    sctpm::FrameHeader h;
    h.kind = kind;
    h.flags = flags;
    h.seq = seq;
    h.frag_len = frag;
    h.total = total;
    h.offset = off;
    return h;
}

} // namespace

TEST(TransportPair, MalformedFramesAreReportedNotFatal) {
    using sctpm::FrameKind;
    const std::vector<RawCase> cases = {
        {"garbage", [](const std::string&) { return std::vector<std::string>{std::string(40, 'Z')}; }, "bad magic"},
        {"short", [](const std::string&) { return std::vector<std::string>{"abc"}; }, "truncated"},
        {"length mismatch",
         [](const std::string& card) {
             auto hello = hello_payload(card);
             return std::vector<std::string>{
                 frame(hdr(FrameKind::hello, 3, 0, uint32_t(hello.size()), hello.size(), 0), hello),
                 frame(hdr(FrameKind::data, 3, 0, 100, 100, 0), std::string(50, 'x'))};
         },
         "length mismatch"},
        {"continuation first",
         [](const std::string& card) {
             auto hello = hello_payload(card);
             return std::vector<std::string>{
                 frame(hdr(FrameKind::hello, 3, 0, uint32_t(hello.size()), hello.size(), 0), hello),
                 frame(hdr(FrameKind::data, 0, 0, 10, 100, 10), std::string(10, 'x'))};
         },
         "stream"},
    };
    for (const auto& c : cases) {
        auto o = run_pair(
            [&](Side& s) {
                CHILD_CHECK(s.progress_until([&] {
                    for (auto& e : s.events)
                        if (e.type == SCTPM_EV_PROTOCOL_ERROR) return true;
                    return false;
                }, 30), "%s: no protocol error reported", c.name);
                bool named = false;
                for (auto& e : s.events)
                    named |= e.type == SCTPM_EV_PROTOCOL_ERROR && std::strstr(e.detail, c.expect);
                CHILD_CHECK(named, "%s: no event names '%s' (first: %s)", c.name, c.expect, s.events.back().detail);
                CHILD_CHECK(s.completed == 0, "%s: a malformed message was delivered", c.name);
            },
            [&](Side& s) { raw_attack(s, c); }, {}, 60, true);
        EXPECT_TRUE(o.ok()) << c.name << ": " << o.describe();
    }
}
