// SPDX-License-Identifier: BSD-3-Clause
// A second socket in a test process's stack that speaks raw frames to the other side: a stranger
// or a broken peer. Its association is its own, so the process's transport (the well-behaved peer)
// can check afterwards that the victim still serves it (exchange_checked). It knows the victim's
// card, key included, as a member of the job would: hello() passes the proof of membership, so
// the attacks behind it test what an insider could do.
#pragma once
#include <cerrno>
#include <functional>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "card.hpp"
#include "endpoint.hpp"
#include "own_socket.hpp"
#include "frame.hpp"
#include "hello_auth.hpp"
#include "pair_harness.hpp"
#include "settings.hpp"
#include "stack.hpp"

namespace pair_test {

inline sctpm::FrameHeader frame_header(sctpm::FrameKind kind, uint8_t flags, uint32_t seq, uint32_t frag,
                                       uint64_t total, uint64_t off) {
    sctpm::FrameHeader h;
    h.kind = kind;
    h.flags = flags;
    h.seq = seq;
    h.frag_len = frag;
    h.total = total;
    h.offset = off;
    return h;
}

inline std::string frame(const sctpm::FrameHeader& h, const std::string& payload) {
    uint8_t hdr[sctpm::kFrameHeaderSize];
    sctpm::encode_frame_header(h, hdr);
    return std::string(reinterpret_cast<char*>(hdr), sizeof hdr) + payload;
}

// A hello frame on link 0 introducing itself as `blob` with `card` (hello_auth.hpp).
inline std::string hello_frame(const std::string& blob, const std::string& card,
                               const std::string& nonce = std::string(sctpm::kNonceBytes, 'n')) {
    const std::string p = sctpm::format_hello({nonce, blob, card});
    return frame(frame_header(sctpm::FrameKind::hello, sctpm::kFrameFirst | sctpm::kFrameLast, 0, uint32_t(p.size()),
                              p.size(), 0),
                 p);
}

inline std::string proof_frame(const sctpm::Digest& mac) {
    const std::string p(reinterpret_cast<const char*>(mac.data()), mac.size());
    return frame(frame_header(sctpm::FrameKind::proof, sctpm::kFrameFirst | sctpm::kFrameLast, 0, uint32_t(p.size()),
                              p.size(), 0),
                 p);
}

class RawPeer {
public:
    // Opens an association to the transport whose card is `target_card` (with settings `st`:
    // auth=packet asks for authenticated chunks in the INIT).
    // On the stack the environment chooses for the transports of the test (stack=own: our own
    // engine, whose standby thread serves the socket between this peer's calls).
    explicit RawPeer(const std::string& target_card, const sctpm::Settings& st = {})
        : st_(with_stack_of_environment(st)), ep_(open_socket(st_)) {
        const sctpm::Card target = sctpm::parse_card(target_card);
        key_ = target.key;
        assoc_ = ep_->connect(target.addresses, target.sctp_port, target.udp_port);
    }

    // Opens link 0 as `blob`: the hello, then the proof answering the victim's challenge, under
    // the key of the victim's card (a member of the job) or, with a stranger's `key`, under that.
    // Returns the two frames sent (a recording to replay), or nothing if no challenge came.
    // before_proof(nonce_o, nonce_a) runs once the challenge is checked, before the proof leaves.
    using BeforeProof = std::function<void(const std::string&, const std::string&)>;
    std::vector<std::string> hello(const std::string& blob, const std::string* key = nullptr,
                                   const BeforeProof& before_proof = {}) {
        const std::string nonce = sctpm::random_bytes(sctpm::kNonceBytes);
        std::vector<std::string> sent{hello_frame(blob, card(), nonce)};
        if (send(sent) != 1)
            return {};
        const std::string challenge = receive(sctpm::FrameKind::challenge);
        if (challenge.size() != sctpm::kChallengeBytes)
            return {};
        const std::string nonce_acceptor = challenge.substr(0, sctpm::kNonceBytes);
        if (before_proof)
            before_proof(nonce, nonce_acceptor);
        sent.push_back(proof_frame(sctpm::link_mac(sctpm::AuthRole::opener, key ? *key : key_, nonce, nonce_acceptor, blob)));
        send({sent.back()});
        return sent;
    }

    // A card to put in a hello (the victim only records it).
    std::string card() const {
        sctpm::Settings st;
        sctpm::Card mine;
        mine.udp_port = st_.stack == sctpm::StackChoice::own ? own_port_ : sctpm::start_stack(st).udp_port;
        mine.sctp_port = 1;
        mine.addresses = {"127.0.0.1"};
        return sctpm::format_card(mine);
    }

    // Sends every frame as one SCTP message, until the first refusal: a victim that aborts the
    // association makes the rest fail, as it should. Returns how many were sent.
    size_t send(const std::vector<std::string>& frames, uint16_t stream = 0) {
        size_t sent = 0;
        for (const auto& f : frames) {
            long rc;
            while ((rc = ep_->send(assoc_, stream, f.data(), f.size())) == -EWOULDBLOCK)
                usleep(1000);
            ep_->flush();
            if (rc != long(f.size()))
                break;
            ++sent;
        }
        return sent;
    }

    sctpm::SctpSocket& endpoint() { return *ep_; }
    sctpm::AssocId assoc() const { return assoc_; }
    const std::string& victim_key() const { return key_; }

    // The payload of the next frame of `kind` the victim sends on this association (10 s at most).
    std::string receive(sctpm::FrameKind kind) {
        std::vector<uint8_t> buf(65536);
        for (int i = 0; i < 10000; ++i) {
            const sctpm::RecvResult r = ep_->recv(buf.data(), buf.size());
            if (r.n == -EWOULDBLOCK) {
                usleep(1000);
                continue;
            }
            if (r.n < long(sctpm::kFrameHeaderSize) || r.notification || r.assoc != assoc_)
                continue;
            std::string why;
            auto h = sctpm::decode_frame_header(buf.data(), size_t(r.n), sctpm::FrameLimits{}, &why);
            if (h && h->kind == kind)
                return std::string(reinterpret_cast<char*>(buf.data()) + sctpm::kFrameHeaderSize, h->frag_len);
        }
        return "";
    }

private:
    static sctpm::Settings with_stack_of_environment(sctpm::Settings st) {
        st.stack = sctpm::load_settings_from_environment().stack;
        return st;
    }
    std::unique_ptr<sctpm::SctpSocket> open_socket(const sctpm::Settings& st) {
        if (st.stack != sctpm::StackChoice::own)
            return std::make_unique<sctpm::Endpoint>(st, 0, std::vector<std::string>{"127.0.0.1"});
        auto own = std::make_unique<sctpm::OwnSocket>(st, std::vector<std::string>{"127.0.0.1"});
        own_port_ = own->port();
        return own;
    }

    sctpm::Settings st_;
    uint16_t own_port_ = 0;
    std::unique_ptr<sctpm::SctpSocket> ep_;
    sctpm::AssocId assoc_ = 0;
    std::string key_; // the victim's, from its card
};

// The victim (victim = true) and the well-behaved peer swap checked messages over their own
// association once the attack is over: the victim sends first, when it has seen what it expects,
// and the peer keeps its raw socket open until then, so the attack's frames are all read.
inline void exchange_checked(Side& s, bool victim) {
    constexpr uint32_t kBase = 5000000, kCount = 8;
    std::vector<std::string> msgs;
    for (uint32_t i = 0; i < kCount; ++i)
        msgs.push_back(make_message((victim ? kBase : kBase + kCount) + i, 4 + i * 40000));
    auto from_other = [&] {
        std::vector<std::string> got;
        for (size_t i = 0; i < s.messages.size() && i < s.completed; ++i)
            if (s.senders[i] == s.other)
                got.push_back(s.messages[i]);
        return got;
    };
    auto receive = [&] {
        const uint32_t base = victim ? kBase + kCount : kBase;
        CHILD_CHECK(s.progress_until([&] { return from_other().size() >= kCount; }, 60),
                    "the well-behaved peer's exchange stalled: %zu of %u messages", from_other().size(), kCount);
        const auto got = from_other();
        for (uint32_t i = 0; i < kCount; ++i)
            CHILD_CHECK(message_ok(got[i]) && message_id(got[i]) == base + i, "exchange message %u corrupted or out of order", i);
    };
    auto send = [&] {
        for (size_t i = 0; i < msgs.size(); ++i) {
            sctpm_key key{0, 0, 0};
            iovec v{msgs[i].data(), msgs[i].size()};
            const int rc = sctpm_send(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(900000 + i));
            CHILD_CHECK(rc == 0 || rc == 1, "exchange send %zu returned %d", i, rc);
            if (rc == 1)
                s.sent[900000 + i] = 1;
        }
        CHILD_CHECK(s.progress_until([&] {
            for (auto& [c, st] : s.sent)
                if (st == 1) return false;
            return true;
        }), "exchange sends did not complete");
        for (auto& [c, st] : s.sent)
            CHILD_CHECK(st == 0, "exchange send completed with %d", st);
    };
    if (victim) {
        send();
        receive();
    } else {
        receive();
        send();
    }
    CHILD_CHECK(s.failure_of(s.other) == nullptr, "the well-behaved peer failed: %s", s.failure_of(s.other)->detail);
}

// Hellos other than the harness's own ("test", which is `other`) get a peer each: an attacker's
// hello must not take over the well-behaved peer.
inline void accept_every_link(Side& s) {
    s.on_hello = [](Side& side, const std::string& hello, const char* card) {
        if (hello == "test")
            return side.other;
        CHILD_CHECK(side.accepted.count(hello) == 0, "second hello '%s'", hello.c_str());
        const sctpm_peer p = sctpm_peer_add(side.t, card);
        CHILD_CHECK(p >= 0, "peer_add for hello '%s': %s", hello.c_str(), sctpm_last_error(side.t));
        side.accepted[hello] = p;
        return p;
    };
}

} // namespace pair_test
