// SPDX-License-Identifier: BSD-3-Clause
// Proof of membership on new links (setting auth, hello_auth.hpp): b attacks a through raw
// sockets of its stack. A stranger without a's card, a replayed exchange, and a second association
// for an identity already linked are each refused and counted; nothing of theirs is delivered, and
// a still serves b's transport, a well-behaved peer on an association of its own.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "raw_peer.hpp"

using namespace pair_test;

namespace {

// Waits for `refusals` counted failures of proof, checks the first one was reported naming why,
// then serves the well-behaved peer.
void victim(Side& s, uint64_t refusals, const char* reason) {
    sctpm_held_stats h{};
    CHILD_CHECK(s.progress_until([&] {
        sctpm_held_stats_get(s.t, &h);
        return h.auth_failures >= refusals;
    }), "%llu of %llu refusals", (unsigned long long)h.auth_failures, (unsigned long long)refusals);
    bool named = false;
    for (const auto& e : s.events)
        named |= e.type == SCTPM_EV_PROTOCOL_ERROR && std::strstr(e.detail, reason) != nullptr;
    CHILD_CHECK(named, "no event names '%s'", reason);
    exchange_checked(s, true);
    sctpm_held_stats_get(s.t, &h);
    CHILD_CHECK(h.auth_failures == refusals, "%llu refusals, expected %llu", (unsigned long long)h.auth_failures,
                (unsigned long long)refusals);
    CHILD_CHECK(h.pre_hello_bytes == 0, "still holds %llu bytes of refused links", (unsigned long long)h.pre_hello_bytes);
}

// Data an attacker sends right after its hello, before any proof: held, never delivered.
std::vector<std::string> early_data() {
    std::vector<std::string> frames;
    for (uint32_t i = 0; i < 4; ++i)
        frames.push_back(frame(frame_header(sctpm::FrameKind::data, sctpm::kFrameFirst | sctpm::kFrameLast, i, 100, 100, 0),
                               std::string(100, 'x')));
    return frames;
}

} // namespace

// A stranger claims to be b's transport ("test"): it knows everything but a's key.
TEST(HelloAuth, ImpersonationWithoutTheKeyIsRefused) {
    auto o = run_pair(
        [](Side& s) {
            victim(s, 1, "does not hold this process's business card");
            CHILD_CHECK(s.completed == 8, "%zu messages delivered, the exchange's 8 expected", s.completed);
        },
        [](Side& s) {
            RawPeer raw(s.peer_card);
            const std::string stranger_key = sctpm::random_bytes(sctpm::kAuthKeyBytes);
            CHILD_CHECK(!raw.hello("test", &stranger_key).empty(), "no challenge to the hello");
            raw.send(early_data());
            exchange_checked(s, false);
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// A member's hello and proof, recorded on one association, replayed on another: the victim's
// fresh nonce makes the recorded proof worthless.
TEST(HelloAuth, ReplayedExchangeIsRefused) {
    auto o = run_pair(
        [](Side& s) {
            accept_every_link(s);
            victim(s, 1, "does not match");
            CHILD_CHECK(s.accepted.size() == 1, "%zu hellos accepted, only the member's expected", s.accepted.size());
        },
        [](Side& s) {
            RawPeer member(s.peer_card);
            const std::vector<std::string> recorded = member.hello("evil");
            CHILD_CHECK(recorded.size() == 2, "the member's hello was not challenged");
            RawPeer replayer(s.peer_card);
            replayer.send(recorded);
            replayer.send(early_data());
            exchange_checked(s, false);
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// Two associations proving the same identity: the second is refused, the first keeps the peer.
TEST(HelloAuth, SecondAssociationForALinkedIdentityIsRefused) {
    auto o = run_pair(
        [](Side& s) {
            sctpm_peer evil = -1;
            int hellos = 0;
            s.on_hello = [&](Side& side, const std::string& hello, const char* card) {
                if (hello == "test")
                    return side.other;
                ++hellos;
                if (evil < 0)
                    evil = sctpm_peer_add(side.t, card);
                return evil;
            };
            CHILD_CHECK(s.progress_until([&] {
                for (const auto& e : s.events)
                    if (e.type == SCTPM_EV_PROTOCOL_ERROR && std::strstr(e.detail, "is linked on association"))
                        return true;
                return false;
            }), "the second association was not refused");
            CHILD_CHECK(hellos == 2, "%d hellos reached the channel", hellos);
            CHILD_CHECK(s.failure_of(evil) == nullptr, "the first association's peer failed: %s", s.failure_of(evil)->detail);
            exchange_checked(s, true);
        },
        [](Side& s) {
            RawPeer first(s.peer_card), second(s.peer_card);
            CHILD_CHECK(first.hello("evil").size() == 2, "first hello not challenged");
            CHILD_CHECK(second.hello("evil").size() == 2, "second hello not challenged");
            exchange_checked(s, false);
        });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// A card without a key (as a hello carries it) cannot be used to open a link: a clear error at
// once, not a hello the remote would refuse.
TEST(HelloAuth, KeylessCardCannotOpenALink) {
    auto o = run_pair(
        [](Side& s) {
            const sctpm_peer keyless = sctpm_peer_add(s.t, "sctpm1;udp=9;sctp=9;addr=127.0.0.1");
            CHILD_CHECK(keyless >= 0, "%s", sctpm_last_error(s.t));
            sctpm_key key{0, 0, 0};
            std::string m = "hello";
            iovec v{m.data(), m.size()};
            const int rc = sctpm_send(s.t, keyless, &key, &v, 1, reinterpret_cast<void*>(1));
            CHILD_CHECK(rc == -EHOSTUNREACH, "send returned %d", rc);
            const sctpm_event* e = s.failure_of(keyless);
            CHILD_CHECK(e && e->type == SCTPM_EV_CANT_START && std::strstr(e->detail, "its card has no key"),
                        "no event names the missing key");
        },
        [](Side&) {});
    EXPECT_TRUE(o.ok()) << o.describe();
}

// A process that said hello and died before its proof (its data still at home) is found out: when
// that association ends, the channel names the peer the hello claimed to be (by its own card for it,
// here one of a process that is gone) and the transport connects it, which fails (CANT_START).
TEST(HelloAuth, UnprovenHelloOfADeadProcessIsChecked) {
    auto o = run_pair_configured(
        [](Side& s) {
            std::vector<std::string> named;
            sctpm_peer dead = -1;
            // The dead process's port: bound, never read, so nothing answers there.
            const int silent = socket(AF_INET, SOCK_DGRAM, 0);
            sockaddr_in addr{};
            addr.sin_family = AF_INET;
            addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            socklen_t addr_len = sizeof addr;
            CHILD_CHECK(silent >= 0 && bind(silent, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                            getsockname(silent, reinterpret_cast<sockaddr*>(&addr), &addr_len) == 0,
                        "no UDP port for the dead process");
            s.on_unproven_end = [&](Side& side, const std::string& hello) {
                named.push_back(hello);
                if (hello != "gone")
                    return sctpm_peer(-1);
                sctpm::Card card;
                card.udp_port = ntohs(addr.sin_port);
                card.sctp_port = 9;
                card.addresses = {"127.0.0.1"};
                card.key = sctpm::random_bytes(sctpm::kAuthKeyBytes);
                dead = sctpm_peer_add(side.t, sctpm::format_card(card).c_str());
                return dead;
            };
            CHILD_CHECK(s.progress_until([&] { return dead >= 0 && s.failure_of(dead) != nullptr; }),
                        "%zu unproven hellos named, the dead one's peer %s", named.size(),
                        dead < 0 ? "never added" : "never failed");
            CHILD_CHECK(s.failure_of(dead)->type == SCTPM_EV_CANT_START, "%s", s.failure_of(dead)->detail);
            CHILD_CHECK(named.size() == 1 && s.accepted.empty(), "%zu hellos named", named.size());
            close(silent);
            exchange_checked(s, true); // the well-behaved peer is still served
        },
        [](sctpm_config* cfg) {
            set(cfg, "init_max_attempts", "1");
            set(cfg, "rto_initial_ms", "100");
            set(cfg, "rto_min_ms", "100");
        },
        [](Side& s) {
            {
                RawPeer dying(s.peer_card);
                CHILD_CHECK(dying.send({hello_frame("gone", dying.card())}) == 1, "hello not sent");
                CHILD_CHECK(!dying.receive(sctpm::FrameKind::challenge).empty(), "the hello was not challenged");
                dying.endpoint().abort(dying.assoc()); // dies without its proof
                dying.endpoint().flush();
            }
            exchange_checked(s, false);
        },
        {});
    EXPECT_TRUE(o.ok()) << o.describe();
}

// Processes of one job with different auth settings: the one that opens the link with auth off
// gets a challenge it cannot answer, and says why; the other delivers nothing.
TEST(HelloAuth, MismatchedSettingIsNamed) {
    auto o = run_pair_configured(
        [](Side& s) {
            sctpm_key key{0, 0, 0};
            std::string m = make_message(1, 100);
            iovec v{m.data(), m.size()};
            const int rc = sctpm_send(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(1));
            CHILD_CHECK(rc == 0 || rc == 1, "send returned %d", rc);
            CHILD_CHECK(s.progress_until([&] { return s.failure_of(s.other) != nullptr; }), "no failure");
            CHILD_CHECK(std::strstr(s.failure_of(s.other)->detail, "auth is off here"), "%s",
                        s.failure_of(s.other)->detail);
        },
        [](sctpm_config* cfg) { set(cfg, "auth", "off"); },
        [](Side& s) { // holds a's link for its proof, and lets go when a aborts the association
            sctpm_held_stats h{};
            auto stats = [&] {
                sctpm_held_stats_get(s.t, &h);
                return h;
            };
            // The peak, not what is held now: a slow run (TSan) may see the hello held and a's abort
            // release it within one progress call, so "held now" can be missed.
            CHILD_CHECK(s.progress_until([&] { return stats().pre_hello_peak > 0; }), "a's hello was never challenged");
            CHILD_CHECK(s.progress_until([&] { return stats().pre_hello_bytes == 0; }), "a's link is still held");
            CHILD_CHECK(s.completed == 0, "a message was delivered without a proof");
        },
        {});
    EXPECT_TRUE(o.ok()) << o.describe();
}
