// SPDX-License-Identifier: BSD-3-Clause
// Two-process tests of the transport: data verified byte for byte, ordering, failures.
#include <gtest/gtest.h>

#include "pair_harness.hpp"
#include "packet_auth_check.hpp"
#include "raw_peer.hpp"

using namespace pair_test;

namespace {

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

// After the association ended, the stack knows nothing of its paths: the transport still reports
// the address the data came from and its byte count (a job's path report at MPI_Finalize must not
// lose the ranks that finished first, and a counter must not fall back to zero).
void expect_ended_path(Side& s, uint64_t at_least) {
    sctpm_path_info paths[4];
    const int n = sctpm_peer_paths(s.t, s.other, paths, 4);
    CHILD_CHECK(n == 1, "%d paths reported after the association ended, expected 1", n);
    CHILD_CHECK(paths[0].state == SCTPM_PATH_ENDED, "state %d, expected ended", int(paths[0].state));
    CHILD_CHECK(std::string(paths[0].address) == "127.0.0.1", "address '%s'", paths[0].address);
    CHILD_CHECK(paths[0].rx_bytes >= at_least, "%llu bytes counted, at least %llu came",
                (unsigned long long) paths[0].rx_bytes, (unsigned long long) at_least);
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
// receives as 1, 3, 5. Delivery order to the callback is the matching order. b speaks first, so
// that a's messages take their own streams at once (before the other side has answered on a
// link, all of its messages take the hello's stream).
TEST(TransportPair, WildcardOrderAcrossStreams) {
    for (const char* policy : {"single", "context", "context_tag"}) {
        auto o = run_pair(
            [](Side& s) {
                expect_messages(s, 1); // b's first word
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
                expect_messages(s, 2); // the echo
            },
            [](Side& s) {
                send_all(s, {make_message(0, 4)});
                expect_messages(s, 300);
                s.sent.clear();
                send_all(s, {make_message(1, 4)});
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
            expect_ended_path(s, 8);
        },
        [](Side& s) {
            expect_messages(s, 1);
            send_all(s, {make_message(0, 8)});
            s.progress_until([] { return false; }, 0.3);
            kill(getpid(), SIGKILL); // die without closing anything
        });
    // b is killed by design; a must succeed.
    EXPECT_TRUE(WIFEXITED(o.a) && WEXITSTATUS(o.a) == 0 && !o.timed_out) << o.describe();
}

TEST(TransportPair, UnreachablePeerReportsCantStart) {
    auto o = run_pair(
        [](Side& s) {
            // A card for a port nobody listens on.
            sctpm_peer ghost = sctpm_peer_add(s.t, "sctpm1;udp=9;sctp=9;addr=127.0.0.1;key=00112233445566778899aabbccddeeff");
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
// report a protocol error naming the problem, keep running, and still serve a well-behaved peer
// (b's transport, on an association of its own).

TEST(TransportPair, MalformedFramesAreReportedNotFatal) {
    using sctpm::FrameKind;
    using Frames = std::vector<std::string>;
    struct RawCase {
        const char* name;
        bool hello; // the attacker first opens link 0 as "evil" (with the proof a member could give)
        std::function<Frames(const std::string& my_card)> frames;
        const char* expect; // substring of the event detail
    };
    const std::vector<RawCase> cases = {
        {"garbage", false, [](const std::string&) { return Frames{std::string(40, 'Z')}; }, "bad magic"},
        {"short", false, [](const std::string&) { return Frames{"abc"}; }, "truncated"},
        {"length mismatch", true,
         [](const std::string&) {
             return Frames{frame(frame_header(FrameKind::data, 3, 0, 100, 100, 0), std::string(50, 'x'))};
         },
         "length mismatch"},
        {"continuation first", true,
         [](const std::string&) {
             return Frames{frame(frame_header(FrameKind::data, 0, 0, 10, 100, 10), std::string(10, 'x'))};
         },
         "stream"},
        {"data on a link never opened", true,
         [](const std::string&) {
             auto data = frame_header(FrameKind::data, 3, 0, 10, 10, 0);
             data.link = 0x85; // "on link 5 that you opened": a opened none
             return Frames{frame(data, std::string(10, 'x'))};
         },
         "never opened"},
        {"second hello on a link", true, [](const std::string& card) { return Frames{hello_frame("evil", card)}; },
         "second hello on link 0"},
        {"proof without a challenge", false,
         [](const std::string&) { return Frames{proof_frame(sctpm::Digest{})}; }, "has no challenge of ours"},
        {"challenge on a link it opened", true,
         [](const std::string&) {
             auto h = frame_header(FrameKind::challenge, 3, 0, sctpm::kChallengeBytes, sctpm::kChallengeBytes, 0);
             return Frames{frame(h, std::string(sctpm::kChallengeBytes, 'c'))};
         },
         "which has no hello of ours"},
    };
    for (const auto& c : cases) {
        auto o = run_pair(
            [&](Side& s) {
                accept_every_link(s); // the attacker's hello gets a peer of its own
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
                exchange_checked(s, true);
            },
            [&](Side& s) {
                RawPeer raw(s.peer_card);
                CHILD_CHECK(!c.hello || !raw.hello("evil").empty(), "%s: no challenge to the hello", c.name);
                raw.send(c.frames(raw.card()));
                exchange_checked(s, false);
            },
            {}, 60, true);
        EXPECT_TRUE(o.ok()) << c.name << ": " << o.describe();
    }
}

// Both sides send bursts of large messages on many streams at once, neither waiting for the
// other: MPI's rendezvous and collectives produce exactly this.
TEST(TransportPair, SimultaneousLargeBurstsBothWays) {
    for (const char* policy : {"single", "context_tag"}) {
        auto role = [](Side& s) {
            const uint32_t n = 64;
            std::vector<std::string> msgs;
            for (uint32_t i = 0; i < n; ++i)
                msgs.push_back(make_message(i, i % 4 == 3 ? 3000 : (1u << 20) + i));
            for (uint32_t i = 0; i < n; ++i) {
                sctpm_key key{7, int32_t(i % 5), 0}; // one communicator: one ordering domain
                iovec v{msgs[i].data(), msgs[i].size()};
                int rc = sctpm_send(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(uintptr_t(i + 1)));
                CHILD_CHECK(rc == 0 || rc == 1, "send %u returned %d", i, rc);
                if (rc == 1)
                    s.sent[i + 1] = 1;
            }
            CHILD_CHECK(s.progress_until([&] {
                for (auto& [c, st] : s.sent)
                    if (st == 1) return false;
                return s.completed >= n;
            }, 60), "sends pending or %zu of %u messages received; failed=%d", s.completed, n, s.failed_event());
            for (auto& [c, st] : s.sent)
                CHILD_CHECK(st == 0, "send %zu completed with %d", size_t(c), st);
            expect_messages(s, n);
            s.progress_until([] { return false; }, 0.5);
        };
        auto o = run_pair(role, role, [policy](sctpm_config* c) { set(c, "stream_policy", policy); });
        EXPECT_TRUE(o.ok()) << policy << ": " << o.describe();
    }
}

// Thousands of small messages queued at once both ways: the stack bundles many chunks per packet.
TEST(TransportPair, ManySmallMessagesBundledBothWays) {
    auto role = [](Side& s) {
        const uint32_t n = 20000;
        std::vector<std::string> msgs;
        msgs.reserve(n);
        for (uint32_t i = 0; i < n; ++i)
            msgs.push_back(make_message(i, 4 + i % 61));
        for (uint32_t i = 0; i < n; ++i) {
            sctpm_key key{3, int32_t(i % 7), 0};
            iovec v{msgs[i].data(), msgs[i].size()};
            int rc = sctpm_send(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(uintptr_t(i + 1)));
            CHILD_CHECK(rc == 0 || rc == 1, "send %u returned %d", i, rc);
            if (rc == 1)
                s.sent[i + 1] = 1;
        }
        CHILD_CHECK(s.progress_until([&] {
            for (auto& [c, st] : s.sent)
                if (st == 1) return false;
            return s.completed >= n;
        }, 60), "sends pending or %zu of %u messages received; failed=%d", s.completed, n, s.failed_event());
        expect_messages(s, n);
        s.progress_until([] { return false; }, 0.5);
    };
    auto o = run_pair(role, role);
    EXPECT_TRUE(o.ok()) << o.describe();
}

// Messages handed over in many pieces (as CH3 gives a header, then its payload, or a datatype's
// blocks): each fragment goes to the stack as our frame header plus the pieces it covers, and one
// that covers more pieces than a send takes is gathered first. Pieces of odd sizes, empty ones
// among them, cross the fragment boundaries; both the zero-copy and the copying send are used.
TEST(TransportPair, MessagesInManyPiecesArriveWhole) {
    auto role = [](Side& s) {
        const size_t pieces_of[] = {1, 2, 3, 62, 63, 64, 65, 200, 3000};
        const size_t sizes[] = {4, 5, 4096, 262143, 262145, 700001};
        std::vector<std::string> msgs;
        msgs.reserve(std::size(pieces_of) * std::size(sizes)); // the iovs point into them: no reallocation
        std::vector<std::vector<iovec>> iovs;
        for (size_t pieces : pieces_of)
            for (size_t size : sizes) {
                msgs.push_back(make_message(uint32_t(msgs.size()), size));
                std::vector<iovec> v;
                char* at = msgs.back().data();
                size_t left = size;
                for (size_t k = 0; k < pieces; ++k) {
                    // uneven cuts, every seventh piece empty, the last piece takes the rest
                    size_t len = k + 1 == pieces ? left : k % 7 == 6 ? 0 : std::min(left, size / pieces + k % 3);
                    v.push_back(iovec{at, len});
                    at += len;
                    left -= len;
                }
                iovs.push_back(std::move(v));
            }
        for (size_t i = 0; i < msgs.size(); ++i) {
            sctpm_key key{1, int32_t(i % 3), 0};
            void* cookie = reinterpret_cast<void*>(uintptr_t(i + 1));
            const int n = int(iovs[i].size());
            if (i % 2) {
                int rc = sctpm_send_copy(s.t, s.other, &key, iovs[i].data(), n);
                CHILD_CHECK(rc == 0, "copying send %zu (%d pieces) returned %d", i, n, rc);
                std::fill(msgs[i].begin(), msgs[i].end(), 'X'); // the caller's buffers are free again
                continue;
            }
            int rc = sctpm_send(s.t, s.other, &key, iovs[i].data(), n, cookie);
            CHILD_CHECK(rc == 0 || rc == 1, "send %zu (%d pieces) returned %d", i, n, rc);
            if (rc == 1)
                s.sent[i + 1] = 1;
        }
        CHILD_CHECK(s.progress_until([&] {
            for (auto& [c, st] : s.sent)
                if (st == 1) return false;
            return s.completed >= msgs.size();
        }, 60), "sends pending or %zu of %zu messages received; failed=%d", s.completed, msgs.size(), s.failed_event());
        expect_messages(s, msgs.size());
        for (size_t i = 0; i < msgs.size(); ++i)
            CHILD_CHECK(s.messages[i].size() == msgs[i].size(), "message %zu: %zu bytes, sent %zu", i,
                        s.messages[i].size(), msgs[i].size());
        s.progress_until([] { return false; }, 0.5);
    };
    auto o = run_pair(role, role);
    EXPECT_TRUE(o.ok()) << o.describe();
}

// ---- several peers to one process: links on the one association usrsctp allows -------------------
// MPI needs them: MPI_Comm_connect's temporary connection to a root that is also a process-group
// peer. a adds b's card twice; b tells the two apart by their hellos.
namespace {

constexpr uint32_t kLinkStride = 1000000; // message ids: base of the link + index

// n messages with ids base + i, multi-fragment ones among odd small sizes.
std::vector<std::string> link_messages(uint32_t base, uint32_t n) {
    const size_t sizes[] = {(1u << 20) + 1, 5, 70001, (1u << 20) - 1, 4, 262147};
    std::vector<std::string> v;
    for (uint32_t i = 0; i < n; ++i)
        v.push_back(make_message(base + i, sizes[(base / kLinkStride + i) % (sizeof sizes / sizeof sizes[0])]));
    return v;
}

struct Batch {
    sctpm_peer to;
    const std::vector<std::string>* msgs;
    size_t from = 0;          // first index to send
    size_t until = SIZE_MAX;  // and the end
};

// Sends the batches interleaved message by message, all with one key (so on one stream per policy).
// Cookies are unique across calls; the messages must stay alive until sends_done().
void send_interleaved(Side& s, const std::vector<Batch>& batches) {
    static uintptr_t cookie = 0;
    const sctpm_key key{7, 3, 0};
    for (size_t i = 0;; ++i) {
        bool any = false;
        for (const Batch& b : batches) {
            if (b.from + i >= std::min(b.until, b.msgs->size()))
                continue;
            any = true;
            const std::string& m = (*b.msgs)[b.from + i];
            iovec v{const_cast<char*>(m.data()), m.size()};
            const int rc = sctpm_send(s.t, b.to, &key, &v, 1, reinterpret_cast<void*>(++cookie));
            CHILD_CHECK(rc == 0 || rc == 1, "send of message %u to peer %d returned %d", message_id(m), b.to, rc);
            if (rc == 1)
                s.sent[cookie] = 1;
        }
        if (!any)
            return;
    }
}

bool sends_done(const Side& s) {
    for (auto& [c, st] : s.sent)
        if (st == 1)
            return false;
    return true;
}

void check_sends_ok(const Side& s) {
    for (auto& [c, st] : s.sent)
        CHILD_CHECK(st == 0, "send %zu completed with %d", size_t(c), st);
}

// What arrived from `from` (once s.completed covers it) is exactly ids base..base+n-1 in order,
// every byte right: nothing lost, reordered, or delivered to the wrong peer.
void expect_from(const Side& s, sctpm_peer from, uint32_t base, uint32_t n) {
    uint32_t k = 0;
    for (size_t i = 0; i < s.messages.size(); ++i) {
        if (s.senders[i] != from)
            continue;
        const std::string& m = s.messages[i];
        CHILD_CHECK(message_ok(m), "message %zu from peer %d (%zu bytes, id %u) corrupted", i, from, m.size(), message_id(m));
        CHILD_CHECK(message_id(m) == base + k, "from peer %d: message id %u where %u was due", from, message_id(m), base + k);
        ++k;
    }
    CHILD_CHECK(k == n, "from peer %d: %u messages, expected %u", from, k, n);
}

void expect_no_failure(const Side& s) {
    for (const auto& e : s.events)
        CHILD_CHECK(!Side::is_failure(e), "failure event %d for peer %d: %s", e.type, e.peer, e.detail);
}

sctpm_peer second_peer(Side& s, const char* hello) {
    const sctpm_peer p = sctpm_peer_add(s.t, s.peer_card.c_str());
    CHILD_CHECK(p >= 0 && p != s.other, "second peer_add returned %d: %s", p, sctpm_last_error(s.t));
    const int rc = sctpm_peer_connect_as(s.t, p, hello, std::strlen(hello));
    CHILD_CHECK(rc == 0, "connect_as(%s) returned %d", hello, rc);
    return p;
}

uint32_t assoc_up_of(const Side& s, sctpm_peer p) {
    for (const auto& e : s.events)
        if (e.type == SCTPM_EV_ASSOC_UP && e.peer == p)
            return e.assoc_id;
    return 0;
}

} // namespace

// A message sent in batches (as CH3 sends a request whose iov it reloads) whose first batch had to
// queue: the sends made before its next batch, from on_sent, go after its last one, since the
// receiver appends each batch to the one before. Ids give the order the receiver must see.
TEST(TransportPair, BatchesOfOneMessageStayTogether) {
    auto a = [](Side& s) {
        const uint32_t fill = 12, batches = 3, others = 2;
        std::vector<std::string> msgs;
        for (uint32_t i = 0; i < fill + batches + others; ++i)
            msgs.push_back(make_message(i, i < fill ? (1u << 20) : i < fill + batches ? 300000 : 100));
        auto send = [&](uint32_t i, int more) {
            const sctpm_key key{7, 0, i + 1 == fill + batches + others ? 2 : 1};
            iovec v{msgs[i].data(), msgs[i].size()};
            const uintptr_t cookie = i < fill ? i + 1 : i < fill + batches ? 1000 : i + 1;
            const int rc = sctpm_send_batch(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(cookie), more);
            CHILD_CHECK(rc == 0 || rc == 1, "send of message %u returned %d", i, rc);
            if (rc == 1)
                s.sent[cookie] = 1;
            return rc;
        };
        for (uint32_t i = 0; i < fill; ++i)
            send(i, 0); // fills the send buffer: what follows queues
        uint32_t next = fill;
        CHILD_CHECK(send(next++, 1) == 1, "the first batch went at once; the test needs it queued");
        s.after_sent = [&](void* cookie, int status) {
            // As CH3 does: the next batch at once, and the one after it too while they go at once.
            if (reinterpret_cast<uintptr_t>(cookie) != 1000 || status != 0)
                return;
            while (next < fill + batches) {
                const uint32_t i = next++;
                if (send(i, i + 1 < fill + batches) == 1)
                    break;
            }
        };
        for (uint32_t i = fill + batches; i < fill + batches + others; ++i)
            send(i, 0); // between the batches in time, after them on the wire (a reply too)
        CHILD_CHECK(s.progress_until([&] { return next == fill + batches && sends_done(s); }, 60),
                    "%u batches sent, sends done %d", next - fill, int(sends_done(s)));
        check_sends_ok(s);
        s.progress_until([] { return false; }, 0.5);
    };
    auto b = [](Side& s) {
        expect_messages(s, 17);
        s.progress_until([] { return false; }, 0.3);
    };
    auto o = run_pair(a, b, [](sctpm_config* c) { set(c, "sndbuf", "1M"); });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// A reply (class 2, the channel's clear-to-send) goes ahead of the messages queued to its peer that
// have not started, and only of those: every other message keeps its order and its bytes.
TEST(TransportPair, ReplyOvertakesMessagesNotStarted) {
    auto a = [](Side& s) {
        const uint32_t fill = 12, queued = 3;
        std::vector<std::string> msgs;
        for (uint32_t i = 0; i < fill + queued + 1; ++i)
            msgs.push_back(make_message(i, i < fill ? (1u << 20) : i < fill + queued ? 200000 : 80));
        int last_rc = 0;
        for (uint32_t i = 0; i < fill + queued + 1; ++i) {
            const sctpm_key key{7, 0, i == fill + queued ? 2 : 1};
            iovec v{msgs[i].data(), msgs[i].size()};
            last_rc = sctpm_send(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(uintptr_t(i + 1)));
            CHILD_CHECK(last_rc == 0 || last_rc == 1, "send of message %u returned %d", i, last_rc);
            if (last_rc == 1)
                s.sent[i + 1] = 1;
        }
        CHILD_CHECK(s.sent.count(fill + queued) == 1, "message %u went at once; the test needs it queued", fill + queued - 1);
        CHILD_CHECK(s.progress_until([&] { return sends_done(s); }, 60), "sends still pending");
        check_sends_ok(s);
        s.progress_until([] { return false; }, 0.5);
    };
    auto b = [](Side& s) {
        const uint32_t fill = 12, queued = 3, n = fill + queued + 1;
        CHILD_CHECK(s.progress_until([&] { return s.completed >= n; }), "got %zu of %u messages", s.completed, n);
        size_t reply_at = n;
        uint32_t expect = 0;
        for (size_t i = 0; i < n; ++i) {
            CHILD_CHECK(message_ok(s.messages[i]), "message %zu corrupted", i);
            if (message_id(s.messages[i]) == n - 1) {
                reply_at = i;
                continue;
            }
            CHILD_CHECK(message_id(s.messages[i]) == expect, "position %zu: message %u where %u was due", i,
                        message_id(s.messages[i]), expect);
            ++expect;
        }
        CHILD_CHECK(reply_at < n - 1, "the reply came last (position %zu): it overtook nothing", reply_at);
        s.progress_until([] { return false; }, 0.3);
    };
    auto o = run_pair(a, b, [](sctpm_config* c) { set(c, "sndbuf", "1M"); });
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST(TransportLinks, TwoPeersToOneProcessShareTheAssociation) {
    const uint32_t n = 16;
    const std::pair<const char*, const char*> variants[] = {{"single", "hello"}, {"context_tag", "hello"}, {"single", "packet"}};
    for (const auto& [policy, auth] : variants) {
        const bool packet = std::strcmp(auth, "packet") == 0;
        if (packet && skip_packet_auth_variant("TwoPeersToOneProcessShareTheAssociation"))
            continue;
        auto o = run_pair(
            [&](Side& s) {
                CHILD_CHECK(sctpm_peer_connect(s.t, s.other) == 0, "connect");
                const sctpm_peer peer2 = second_peer(s, "T7"); // before any progress: COMM_UP finds both linked
                const auto m1 = link_messages(0, n), m2 = link_messages(kLinkStride, n);
                send_interleaved(s, {{s.other, &m1}, {peer2, &m2}});
                CHILD_CHECK(s.progress_until([&] { return sends_done(s) && s.completed >= 2 * n; }, 60),
                            "sends done %d, %zu of %u messages received", sends_done(s), s.completed, 2 * n);
                check_sends_ok(s);
                expect_from(s, s.other, 2 * kLinkStride, n);
                expect_from(s, peer2, 3 * kLinkStride, n);
                const uint32_t a1 = assoc_up_of(s, s.other), a2 = assoc_up_of(s, peer2);
                CHILD_CHECK(a1 != 0 && a1 == a2, "the peers are not on one association (%u, %u)", a1, a2);
                if (packet)
                    expect_packet_auth(s, peer2);
                expect_no_failure(s);
                s.progress_until([] { return false; }, 0.5);
            },
            [&](Side& s) {
                accept_every_link(s);
                CHILD_CHECK(s.progress_until([&] { return s.accepted.count("T7") == 1; }), "no hello T7");
                const sctpm_peer t7 = s.accepted["T7"];
                CHILD_CHECK(t7 != s.other, "both hellos mapped to peer %d", t7);
                const auto m1 = link_messages(2 * kLinkStride, n), m2 = link_messages(3 * kLinkStride, n);
                send_interleaved(s, {{t7, &m2}, {s.other, &m1}});
                CHILD_CHECK(s.progress_until([&] { return sends_done(s) && s.completed >= 2 * n; }, 60),
                            "sends done %d, %zu of %u messages received", sends_done(s), s.completed, 2 * n);
                check_sends_ok(s);
                expect_from(s, s.other, 0, n);
                expect_from(s, t7, kLinkStride, n);
                if (packet)
                    expect_packet_auth(s, t7);
                expect_no_failure(s);
                s.progress_until([] { return false; }, 0.5);
            },
            [policy, auth](sctpm_config* c) {
                set(c, "stream_policy", policy);
                set(c, "auth", auth);
            });
        EXPECT_TRUE(o.ok()) << policy << ", auth=" << auth << ": " << o.describe();
    }
}

TEST(TransportLinks, RemovingOnePeerKeepsTheOtherUntilTheLast) {
    auto o = run_pair(
        [](Side& s) {
            const sctpm_peer peer2 = second_peer(s, "T7");
            const auto m1 = link_messages(0, 2), m2 = link_messages(kLinkStride, 1);
            send_interleaved(s, {{s.other, &m1, 0, 1}, {peer2, &m2}}); // m1[1] waits for the removal below
            CHILD_CHECK(s.progress_until([&] { return sends_done(s) && s.completed >= 2; }), "no replies");
            sctpm_peer_remove(s.t, peer2);
            const sctpm_event* removed = s.failure_of(peer2);
            CHILD_CHECK(removed && std::strstr(removed->detail, "removed"), "no event names the removal");
            CHILD_CHECK(sctpm_peer_failed(s.t, peer2) == 1 && sctpm_peer_failed(s.t, s.other) == 0, "wrong peer failed");
            iovec v{const_cast<char*>(m2[0].data()), m2[0].size()};
            const sctpm_key key{7, 3, 0};
            CHILD_CHECK(sctpm_send(s.t, peer2, &key, &v, 1, nullptr) == -ECONNRESET, "a removed peer still sends");
            // The other link still works both ways; b's message to the removed peer is dropped.
            send_interleaved(s, {{s.other, &m1, 1}});
            CHILD_CHECK(s.progress_until([&] { return sends_done(s) && s.completed >= 3; }), "no reply after the removal");
            check_sends_ok(s);
            expect_from(s, s.other, 2 * kLinkStride, 2);
            expect_from(s, peer2, 3 * kLinkStride, 1);
            CHILD_CHECK(!s.failure_of(s.other), "the remaining peer failed: %s", s.failure_of(s.other)->detail);
            sctpm_peer_remove(s.t, s.other); // the last one takes the association down
            s.progress_until([] { return false; }, 0.5);
        },
        [](Side& s) {
            accept_every_link(s);
            CHILD_CHECK(s.progress_until([&] { return s.completed >= 2; }), "got %zu of 2 messages", s.completed);
            const sctpm_peer t7 = s.accepted["T7"];
            const auto r1 = link_messages(2 * kLinkStride, 2), r2 = link_messages(3 * kLinkStride, 2);
            send_interleaved(s, {{s.other, &r1, 0, 1}, {t7, &r2, 0, 1}});
            s.progress_until([&] { return sends_done(s); });
            CHILD_CHECK(s.progress_until([&] { return s.completed >= 3; }), "no message after the removal");
            // Same key, same stream: the dropped message reaches a before the reply it checks for.
            send_interleaved(s, {{t7, &r2, 1}});
            send_interleaved(s, {{s.other, &r1, 1}});
            CHILD_CHECK(s.progress_until([&] { return s.failure_of(s.other) && s.failure_of(t7); }, 60),
                        "removing a's last peer did not end the association for both of b's peers");
            check_sends_ok(s);
            expect_from(s, s.other, 0, 2);
            expect_from(s, t7, kLinkStride, 1);
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST(TransportLinks, PeerDeathFailsEveryLinkedPeer) {
    auto o = run_pair(
        [](Side& s) {
            const sctpm_peer peer2 = second_peer(s, "T7");
            const auto m1 = link_messages(0, 1), m2 = link_messages(kLinkStride, 1);
            send_interleaved(s, {{s.other, &m1}, {peer2, &m2}});
            CHILD_CHECK(s.progress_until([&] { return s.completed >= 2; }), "no replies"); // b dies now
            std::string m = make_message(9, 100000);
            sctpm_key key{0, 0, 0};
            iovec v{m.data(), m.size()};
            CHILD_CHECK(s.progress_until([&] {
                if (!sctpm_peer_failed(s.t, s.other))
                    sctpm_send(s.t, s.other, &key, &v, 1, nullptr);
                return s.failure_of(s.other) && s.failure_of(peer2);
            }, 60), "within 60 s of the peer's death: peer %d failed %d, peer %d failed %d", s.other,
                        sctpm_peer_failed(s.t, s.other), peer2, sctpm_peer_failed(s.t, peer2));
            CHILD_CHECK(sctpm_send(s.t, peer2, &key, &v, 1, nullptr) == -ECONNRESET, "send to a dead peer");
        },
        [](Side& s) {
            accept_every_link(s);
            CHILD_CHECK(s.progress_until([&] { return s.completed >= 2; }), "got %zu of 2 messages", s.completed);
            const auto r1 = link_messages(2 * kLinkStride, 1), r2 = link_messages(3 * kLinkStride, 1);
            send_interleaved(s, {{s.other, &r1}, {s.accepted["T7"], &r2}});
            CHILD_CHECK(s.progress_until([&] { return sends_done(s); }), "replies not sent");
            s.progress_until([] { return false; }, 0.3);
            kill(getpid(), SIGKILL); // die without closing anything
        });
    EXPECT_TRUE(WIFEXITED(o.a) && WEXITSTATUS(o.a) == 0 && !o.timed_out) << o.describe();
}

// Both sides open a second link at once: both number it 1, and the direction bit keeps them apart.
// Once while the association is being set up (both connect at the same time, too), once when it is up.
TEST(TransportLinks, BothSidesOpenASecondLinkAtOnce) {
    const uint32_t n = 12;
    for (int variant = 0; variant < 4; ++variant) {
        const bool when_up = variant & 1, packet = variant & 2; // packet: the links' keys must not collide
        if (packet && skip_packet_auth_variant("BothSidesOpenASecondLinkAtOnce"))
            continue;
        auto role = [&](const char* mine, const char* theirs) {
            return [=](Side& s) {
                const uint32_t drops = auth_drops();
                accept_every_link(s);
                const auto m_other = link_messages(0, n), m_second = link_messages(kLinkStride, n),
                           m_accepted = link_messages(2 * kLinkStride, n);
                size_t first = 0;
                if (when_up) { // one message each way first: then both open link 1 on a live association
                    send_interleaved(s, {{s.other, &m_other, 0, 1}});
                    CHILD_CHECK(s.progress_until([&] { return sends_done(s) && s.completed >= 1; }), "no first message");
                    first = 1;
                } else {
                    CHILD_CHECK(sctpm_peer_connect(s.t, s.other) == 0, "connect");
                }
                const sctpm_peer second = second_peer(s, mine);
                CHILD_CHECK(s.progress_until([&] { return s.accepted.count(theirs) == 1; }), "no hello %s", theirs);
                const sctpm_peer accepted = s.accepted[theirs];
                CHILD_CHECK(accepted != s.other && accepted != second, "hello %s mapped to peer %d", theirs, accepted);
                send_interleaved(s, {{s.other, &m_other, first}, {second, &m_second}, {accepted, &m_accepted}});
                CHILD_CHECK(s.progress_until([&] { return sends_done(s) && s.completed >= 3 * n; }, 60),
                            "sends done %d, %zu of %u messages received", sends_done(s), s.completed, 3 * n);
                check_sends_ok(s);
                expect_from(s, s.other, 0, n);
                expect_from(s, accepted, kLinkStride, n);   // from the other side's second peer
                expect_from(s, second, 2 * kLinkStride, n); // from the peer it made for our hello
                if (packet) {
                    expect_packet_auth(s, accepted);
                    CHILD_CHECK(auth_drops() <= drops + kAuthDropsAtSwitch, "%u packets dropped for their AUTH chunk", auth_drops() - drops);
                }
                expect_no_failure(s);
                s.progress_until([] { return false; }, 0.5);
            };
        };
        auto o = run_pair(role("TA", "TB"), role("TB", "TA"), [packet](sctpm_config* c) { set(c, "auth", packet ? "packet" : "hello"); });
        EXPECT_TRUE(o.ok()) << (when_up ? "association up" : "during setup") << (packet ? ", auth=packet: " : ": ")
                            << o.describe();
    }
}

// One side can open 128 links on an association (the link byte's 7 bits): the 129th peer fails
// with a reason instead of reusing a number; link 127 works both ways.
TEST(TransportLinks, The129thLinkFailsClearly) {
    auto o = run_pair(
        [](Side& s) {
            CHILD_CHECK(sctpm_peer_connect(s.t, s.other) == 0, "connect");
            sctpm_peer last = -1;
            for (int i = 1; i < 128; ++i)
                last = second_peer(s, ("T" + std::to_string(i)).c_str());
            const sctpm_peer extra = sctpm_peer_add(s.t, s.peer_card.c_str());
            CHILD_CHECK(sctpm_peer_connect_as(s.t, extra, "T128", 4) == -EHOSTUNREACH, "a 129th link was opened");
            const sctpm_event* e = s.failure_of(extra);
            CHILD_CHECK(e && e->type == SCTPM_EV_CANT_START && e->error == EMLINK && std::strstr(e->detail, "128 links"),
                        "the 129th peer's failure does not say why: %s", e ? e->detail : "no event");
            const auto m = link_messages(0, 1);
            send_interleaved(s, {{last, &m}});
            CHILD_CHECK(s.progress_until([&] { return sends_done(s) && s.completed >= 1; }), "no reply on link 127");
            expect_from(s, last, kLinkStride, 1);
            s.progress_until([] { return false; }, 0.5);
        },
        [](Side& s) {
            accept_every_link(s);
            CHILD_CHECK(s.progress_until([&] { return s.completed >= 1 && s.accepted.size() == 127; }),
                        "%zu messages, %zu links accepted", s.completed, s.accepted.size());
            CHILD_CHECK(s.accepted.count("T127") == 1, "no hello T127");
            expect_from(s, s.accepted["T127"], 0, 1);
            const auto r = link_messages(kLinkStride, 1);
            send_interleaved(s, {{s.accepted["T127"], &r}});
            CHILD_CHECK(s.progress_until([&] { return sends_done(s); }), "reply not sent");
            s.progress_until([] { return false; }, 0.5);
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// Released peers give their links back (transport_unlink.cpp): a opens 300 links to b one after the
// other, beside a link that stays, each carrying a message both ways before both sides release
// it. Without the numbers coming back the 129th would fail (The129thLinkFailsClearly).
TEST(TransportLinks, ReleasedLinksAreReopenedPastTheLimit) {
    constexpr int kCycles = 300;
    auto name = [](int i) { return "T" + std::to_string(i); };
    auto o = run_pair(
        [&](Side& s) {
            const auto first = link_messages(0, 1);
            send_interleaved(s, {{s.other, &first}});
            for (int i = 1; i <= kCycles; ++i) {
                const sctpm_peer p = second_peer(s, name(i).c_str());
                const std::vector<std::string> m{make_message(uint32_t(i), 64 + i)};
                send_interleaved(s, {{p, &m}});
                CHILD_CHECK(s.progress_until([&] { return sends_done(s) && s.completed >= size_t(i) + 1; }),
                            "cycle %d: no reply (%zu messages)", i, s.completed);
                const std::string& reply = s.messages.back();
                CHILD_CHECK(s.senders.back() == p && message_ok(reply) && message_id(reply) == uint32_t(kCycles + i),
                            "cycle %d: wrong reply (peer %d, id %u)", i, s.senders.back(), message_id(reply));
                sctpm_peer_release(s.t, p);
                const sctpm_key key{7, 3, 0};
                iovec v{const_cast<char*>(m[0].data()), m[0].size()};
                CHILD_CHECK(sctpm_send(s.t, p, &key, &v, 1, nullptr) == -ECONNRESET, "a released peer still sends");
            }
            expect_from(s, s.other, 2 * kLinkStride, 1); // the first link's reply came first
            check_sends_ok(s);
            expect_no_failure(s); // no event for a released peer either
            s.progress_until([] { return false; }, 0.3);
        },
        [&](Side& s) {
            accept_every_link(s);
            CHILD_CHECK(s.progress_until([&] { return s.completed >= 1; }), "no first message");
            const auto first = link_messages(2 * kLinkStride, 1);
            send_interleaved(s, {{s.other, &first}});
            for (int i = 1; i <= kCycles; ++i) {
                CHILD_CHECK(s.progress_until([&] { return s.accepted.count(name(i)) && s.completed >= size_t(i) + 1; }),
                            "cycle %d: no hello or message (%zu messages)", i, s.completed);
                const sctpm_peer p = s.accepted[name(i)];
                CHILD_CHECK(s.senders.back() == p && message_ok(s.messages.back()) && message_id(s.messages.back()) == uint32_t(i),
                            "cycle %d: wrong message (peer %d)", i, s.senders.back());
                const std::vector<std::string> r{make_message(uint32_t(kCycles + i), 32 + i)};
                send_interleaved(s, {{p, &r}});
                CHILD_CHECK(s.progress_until([&] { return sends_done(s); }), "cycle %d: reply not sent", i);
                sctpm_peer_release(s.t, p);
            }
            check_sends_ok(s);
            expect_no_failure(s);
            s.progress_until([] { return false; }, 0.3);
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// stall_report_s: a waiter that sees no progress for that long prints one report of every peer's
// state (what it sent, what is queued, the association as the stack sees it), and only one; then
// the caller's on_stall, once, for its own part (CH3's RMA state in the channel).
TEST(TransportPair, StallReportDescribesPeersOnce) {
    auto o = run_pair(
        [](Side& s) {
            char path[] = "/tmp/stall_report_XXXXXX";
            const int fd = mkstemp(path);
            CHILD_CHECK(fd >= 0, "mkstemp");
            send_all(s, {make_message(0, 5000), make_message(1, 70000)});
            std::fflush(stderr);
            const int saved = dup(2);
            dup2(fd, 2);
            s.progress_until([] { return false; }, 2.6); // idle: b sends nothing
            std::fflush(stderr);
            dup2(saved, 2);
            std::string report(65536, '\0');
            const ssize_t n = pread(fd, report.data(), report.size(), 0);
            close(fd);
            unlink(path);
            CHILD_CHECK(n > 0, "no stall report within 2.6 s (stall_report_s = 1)");
            report.resize(static_cast<size_t>(n));
            auto count = [&](const std::string& what) {
                size_t c = 0;
                for (size_t at = report.find(what); at != std::string::npos; at = report.find(what, at + 1))
                    ++c;
                return c;
            };
            CHILD_CHECK(count("stall: no transport progress for ") == 1, "expected one report:\n%s", report.c_str());
            CHILD_CHECK(s.stalls == 1, "on_stall was called %d times after one report", s.stalls);
            CHILD_CHECK(count("stall: peer 0 up assoc ") == 1 && count(": sent 2 msgs, received 0") == 1,
                        "the report misses the peer's state:\n%s", report.c_str());
            CHILD_CHECK(count("domain 0: next seq out 2, next seq in 0, held 0") == 1,
                        "the report misses the sequence numbers:\n%s", report.c_str());
            CHILD_CHECK(count(", peer rwnd ") == 1 && count("  path ") >= 1 && count(", bytes queued to send 0") == 1,
                        "the report misses the stack's view of the association:\n%s", report.c_str());
            // Its hello, its proof and the two messages: four SCTP messages, all accepted by the
            // stack; one read, b's challenge.
            CHILD_CHECK(count(": SCTP messages sent 4, read 1, held for a hello 0") == 1 &&
                            count("socket readable: no") == 1 &&
                            count(stack_is_own() ? "stall: stack: own engine: packets in " : "stall: stack: DATA chunks in ") == 1,
                        "the report misses the message counts:\n%s", report.c_str());
        },
        [](Side& s) {
            expect_messages(s, 2);
            s.progress_until([] { return false; }, 3);
        },
        [](sctpm_config* cfg) { set(cfg, "stall_report_s", "1"); });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// While a process computes outside the progress engine, its stack still takes packets in and
// acknowledges them (with caller_input, usrsctp's receive thread takes the socket back once the
// engine's hold runs out): a sender whose message exceeds its send buffer completes anyway.
TEST(TransportPair, StackAcknowledgesWhileTheReceiverComputes) {
    char marker[] = "/tmp/computes_XXXXXX";
    const int mfd = mkstemp(marker);
    ASSERT_GE(mfd, 0);
    close(mfd);
    unlink(marker); // a creates it once its send completed
    const std::string done = marker;
    auto o = run_pair(
        [&](Side& s) {
            send_all(s, {make_message(0, 100)});
            expect_messages(s, 1); // b is up and about to compute
            // 6 MiB against a 4 MiB send buffer: 2 MiB must be acknowledged while b computes.
            send_all(s, {make_message(1, 6u << 20)});
            FILE* f = std::fopen(done.c_str(), "w");
            CHILD_CHECK(f != nullptr, "cannot create %s", done.c_str());
            std::fclose(f);
            expect_messages(s, 2); // b's answer after it read everything
        },
        [&](Side& s) {
            expect_messages(s, 1);
            send_all(s, {make_message(0, 100)});
            // Compute: no transport call until a says its send completed (at most 60 s).
            for (int i = 0; i < 6000 && access(done.c_str(), F_OK) != 0; ++i)
                usleep(10000);
            CHILD_CHECK(access(done.c_str(), F_OK) == 0,
                        "the sender's 6 MiB did not complete in 60 s while this side computed");
            expect_messages(s, 2);
            CHILD_CHECK(s.messages[1].size() == 6u << 20, "size %zu", s.messages[1].size());
            send_all(s, {make_message(1, 100)});
            s.progress_until([] { return false; }, 0.5);
        },
        [](sctpm_config* c) {
            set(c, "sndbuf", "4M");
            set(c, "rcvbuf", "8M");
        });
    unlink(marker);
    EXPECT_TRUE(o.ok()) << o.describe();
}

// A graceful close delivers what the stack still holds even when the receiver reads it only
// seconds later: the stack's shutdown guard (5 x RTO.max by default, 1.5 s with ours) must not
// abort the association first and lose the rest of the message.
TEST(TransportPair, CloseDeliversToAReceiverThatReadsLate) {
    auto o = run_pair(
        [](Side& s) {
            send_all(s, {make_message(0, 100)});
            expect_messages(s, 1); // b is up and about to compute
            // Handed to the stack, most of it beyond b's receive window: the harness's
            // sctpm_close (5 s) must shut down gracefully behind it.
            send_all(s, {make_message(1, 3u << 20)});
        },
        [](Side& s) {
            expect_messages(s, 1);
            send_all(s, {make_message(0, 100)});
            sleep(3); // compute, no transport call, while a closes
            expect_messages(s, 2);
            CHILD_CHECK(s.messages[1].size() == 3u << 20, "size %zu", s.messages[1].size());
            auto shut_down = [&] {
                return std::any_of(s.events.begin(), s.events.end(), [](const sctpm_event& e) { return e.type == SCTPM_EV_SHUTDOWN; });
            };
            CHILD_CHECK(s.progress_until(shut_down, 10), "the association did not end gracefully");
            expect_no_failure(s);
            expect_ended_path(s, (3u << 20) + 100);
        },
        [](sctpm_config* c) {
            set(c, "sndbuf", "4M");
            set(c, "rcvbuf", "256K");
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}
