// SPDX-License-Identifier: BSD-3-Clause
// auth=packet (packet_auth.hpp): every packet carries an SCTP-AUTH HMAC under a key that the link's
// proof derived; the null key stops being accepted after the switch. Data flows intact (one link,
// several, both sides opening at once: transport_pair.cpp's TransportLinks tests run with it too),
// a packet under the null key is dropped once the switch is done, and a process with another
// auth setting is refused with a message naming the setting.
#include <gtest/gtest.h>

#include <cstring>

#include "packet_auth.hpp"
#include "packet_auth_check.hpp"
#include "raw_peer.hpp"

using namespace pair_test;

namespace {

void packet(sctpm_config* c) { set(c, "auth", "packet"); }

// Sizes from 4 bytes to 31 fragments (fragment_size 64 KiB here).
std::vector<std::string> messages(uint32_t base, uint32_t n) {
    const size_t sizes[] = {4, 100, 4096, 65535, 65536, 65537, 300000, 2000000};
    std::vector<std::string> v;
    for (uint32_t i = 0; i < n; ++i)
        v.push_back(make_message(base + i, sizes[i % (sizeof sizes / sizeof sizes[0])]));
    return v;
}

void send_each(Side& s, sctpm_peer to, const std::vector<std::string>& msgs) {
    for (size_t i = 0; i < msgs.size(); ++i) {
        sctpm_key key{0, static_cast<int32_t>(i % 3), 0};
        iovec v{const_cast<char*>(msgs[i].data()), msgs[i].size()};
        const uintptr_t cookie = 1000 + s.sent.size();
        const int rc = sctpm_send(s.t, to, &key, &v, 1, reinterpret_cast<void*>(cookie));
        CHILD_CHECK(rc == 0 || rc == 1, "send %zu returned %d", i, rc);
        if (rc == 1)
            s.sent[cookie] = 1;
    }
}

void expect_in_order(Side& s, uint32_t base, uint32_t n) {
    CHILD_CHECK(s.progress_until([&] {
        for (auto& [c, st] : s.sent)
            if (st == 1) return false;
        return s.completed >= n;
    }, 60), "%zu of %u messages received", s.completed, n);
    for (uint32_t i = 0; i < n; ++i)
        CHILD_CHECK(message_ok(s.messages[i]) && message_id(s.messages[i]) == base + i, "message %u corrupted or out of order", i);
}

} // namespace

TEST(PacketAuth, DataFlowsUnderTheDerivedKey) {
    const uint32_t n = 40;
    auto role = [&](uint32_t mine, uint32_t theirs) {
        return [=](Side& s) {
            const uint32_t drops = auth_drops();
            const auto out = messages(mine, n); // the transport sends from these buffers until on_sent
            send_each(s, s.other, out);
            expect_in_order(s, theirs, n);
            expect_packet_auth(s, s.other);
            CHILD_CHECK(auth_chunks_received() > 0, "no AUTH chunk arrived");
            CHILD_CHECK(auth_drops() <= drops + kAuthDropsAtSwitch, "%u packets dropped for their AUTH chunk", auth_drops() - drops);
            s.progress_until([] { return false; }, 0.5);
        };
    };
    auto o = run_pair(role(0, 100), role(100, 0), [](sctpm_config* c) {
        packet(c);
        set(c, "fragment_size", "65536");
    });
    EXPECT_TRUE(o.ok()) << o.describe();
}

// A member that proves its link properly, then sends one message under the null key, as an
// on-path injector can (the null key's HMAC only needs the RANDOMs of the INIT and INIT-ACK), and
// one under the link's key: the first is dropped by the victim's stack, the second delivered.
TEST(PacketAuth, NullKeyPacketIsDroppedAfterTheSwitch) {
    constexpr uint32_t kGo = 1, kGenuine = 2, kInjected = 3;
    auto o = run_pair(
        [](Side& s) {
            accept_every_link(s);
            CHILD_CHECK(s.progress_until([&] { return s.accepted.count("evil") == 1; }), "no hello 'evil'");
            const sctpm_peer evil = s.accepted["evil"];
            sctpm_packet_auth pa{};
            CHILD_CHECK(s.progress_until([&] { return sctpm_packet_auth_get(s.t, evil, &pa) == 0 && pa.null_key_deleted; }),
                        "the null key was never deleted");
            const uint32_t drops = auth_drops();
            const std::vector<std::string> go{make_message(kGo, 100)};
            send_each(s, evil, go);
            auto from_evil = [&](uint32_t id) {
                for (size_t i = 0; i < s.completed && i < s.messages.size(); ++i)
                    if (s.senders[i] == evil && message_id(s.messages[i]) == id)
                        return &s.messages[i];
                return static_cast<std::string*>(nullptr);
            };
            CHILD_CHECK(s.progress_until([&] { return from_evil(kGenuine) != nullptr; }), "the genuine message never came");
            CHILD_CHECK(message_ok(*from_evil(kGenuine)), "the genuine message is corrupted");
            CHILD_CHECK(s.progress_until([&] { return auth_drops() > drops; }, 5), "the stack dropped no packet");
            s.progress_until([] { return false; }, 1); // retransmissions of the injected one come and go
            CHILD_CHECK(from_evil(kInjected) == nullptr, "the message under the null key was delivered");
            exchange_checked(s, true);
        },
        [](Side& s) {
            sctpm::Settings st;
            st.auth = sctpm::AuthMode::packet;
            RawPeer raw(s.peer_card, st);
            sctpm::SctpSocket& ep = raw.endpoint();
            uint16_t id = 0;
            std::string key;
            const auto sent = raw.hello("evil", nullptr, [&](const std::string& nonce_o, const std::string& nonce_a) {
                key = sctpm::packet_auth_key(raw.victim_key(), nonce_o, nonce_a);
                const auto tags = ep.tags(raw.assoc());
                CHILD_CHECK(tags, "no verification tags");
                id = sctpm::packet_key_id(0, tags->first, tags->second);
                CHILD_CHECK(ep.add_auth_key(raw.assoc(), id, key) == 0 && ep.activate_auth_key(raw.assoc(), id) == 0,
                            "cannot install key %u", id);
            });
            CHILD_CHECK(sent.size() == 2, "the hello was not challenged");
            // Says it no longer uses the null key (but keeps it, to inject with it below).
            raw.send({sctpm::control_frame(sctpm::FrameKind::retire, 0, sctpm::format_retire(id, key, sctpm::AuthRole::opener))});
            CHILD_CHECK(!raw.receive(sctpm::FrameKind::data).empty(), "the victim never sent its go");
            auto data = [](uint32_t msg_id, uint16_t domain) {
                const std::string m = make_message(msg_id, 1000);
                sctpm::FrameHeader h = frame_header(sctpm::FrameKind::data, sctpm::kFrameFirst | sctpm::kFrameLast, 0,
                                                    uint32_t(m.size()), m.size(), 0);
                h.domain = domain; // its own ordering domain: the genuine one does not wait for it
                return frame(h, m);
            };
            CHILD_CHECK(ep.activate_auth_key(raw.assoc(), sctpm::kNullKeyId) == 0, "cannot go back to the null key");
            CHILD_CHECK(raw.send({data(kInjected, 1)}, 1) == 1, "the injected message was not sent");
            CHILD_CHECK(ep.activate_auth_key(raw.assoc(), id) == 0, "cannot use key %u again", id);
            CHILD_CHECK(raw.send({data(kGenuine, 0)}, 0) == 1, "the genuine message was not sent");
            exchange_checked(s, false);
        },
        packet);
    EXPECT_TRUE(o.ok()) << o.describe();
}

// auth=packet against hello, either way round: the process that opens the link fails it, saying
// that the setting differs; the other delivers nothing.
TEST(PacketAuth, MismatchedSettingIsNamed) {
    for (bool a_packet : {true, false}) {
        auto opener = [](Side& s) {
            std::string m = make_message(1, 100);
            sctpm_key key{0, 0, 0};
            iovec v{m.data(), m.size()};
            const int rc = sctpm_send(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(1));
            CHILD_CHECK(rc == 0 || rc == 1, "send returned %d", rc);
            CHILD_CHECK(s.progress_until([&] { return s.failure_of(s.other) != nullptr; }), "no failure");
            CHILD_CHECK(std::strstr(s.failure_of(s.other)->detail, "auth=packet on one side only"), "%s",
                        s.failure_of(s.other)->detail);
        };
        auto acceptor = [](Side& s) {
            s.progress_until([] { return false; }, 2);
            CHILD_CHECK(s.completed == 0, "a message was delivered");
        };
        auto setup = [](bool is_packet) { return [=](sctpm_config* c) { set(c, "auth", is_packet ? "packet" : "hello"); }; };
        auto o = run_pair_configured(opener, setup(a_packet), acceptor, setup(!a_packet));
        EXPECT_TRUE(o.ok()) << (a_packet ? "a packet, b hello: " : "a hello, b packet: ") << o.describe();
    }
}
