// SPDX-License-Identifier: BSD-3-Clause
// A new link's hello, challenge and proof (hello_auth.hpp). The side that receives a hello keeps
// the link anonymous, its frames held within pre_hello_bytes, until the proof arrives; only then
// does the channel hear of the hello (on_hello), so a stranger never gets a peer or a VC made for
// it. The side that opened the link sends nothing but its hello until it has checked the answer.
#include <algorithm>
#include <cstring>

#include "card.hpp"
#include "error.hpp"
#include "hello_auth.hpp"
#include "packet_auth.hpp"
#include "transport.hpp"

namespace sctpm {
namespace {

std::string bytes_of(const uint8_t* p, size_t n) { return std::string(reinterpret_cast<const char*>(p), n); }

// What a challenge held for an anonymous link counts against pre_hello_bytes.
uint64_t challenge_cost(const AssocEntry::Challenge& c) {
    return kHeldItemOverhead + c.nonce_opener.size() + c.nonce_acceptor.size() + c.blob.size() + c.card.size();
}

} // namespace

void Transport::handle_hello(AssocId assoc, LinkKey link, const uint8_t* payload, size_t len) {
    if (link.opened_by_me) {
        protocol_error(assoc, nullptr, "hello on " + link.describe() + ": only the side that opens a link says hello");
        return;
    }
    AssocEntry& a = peers_.assoc(assoc);
    if (sctpm_peer known = a.peer_on(link); known >= 0 || a.challenges.count(link.incoming_byte())) {
        protocol_error(assoc, peers_.get(known), "second hello on " + link.describe());
        return;
    }
    std::optional<HelloParts> hello = parse_hello(payload, len);
    if (!hello) {
        protocol_error(assoc, nullptr, "malformed hello of " + std::to_string(len) + " bytes on " + link.describe());
        return;
    }
    AssocEntry::Challenge c;
    c.nonce_opener = std::move(hello->nonce);
    c.blob = std::move(hello->blob);
    c.card = std::move(hello->card);
    if (s_.auth == AuthMode::off) {
        accept_link(assoc, link, c.blob, c.card);
        return;
    }
    c.cost = challenge_cost(c);
    if (!pre_hello_bound_.allows(a.pending_bytes, c.cost)) {
        bound_exceeded(assoc, nullptr, pre_hello_bound_, "hellos waiting for their proof", a.pending_bytes + c.cost);
        return;
    }
    c.nonce_acceptor = random_bytes(kNonceBytes);
    // auth=packet: the opener may send under the link's key as soon as it checked the challenge.
    if (s_.auth == AuthMode::packet &&
        !add_link_key(assoc, link, packet_auth_key(key_, c.nonce_opener, c.nonce_acceptor)))
        return;
    pre_hello_bound_.charge(a.pending_bytes, c.cost);
    const Digest mac = link_mac(AuthRole::acceptor, key_, c.nonce_opener, c.nonce_acceptor, c.blob);
    std::string answer = c.nonce_acceptor + bytes_of(mac.data(), mac.size());
    a.challenges[link.incoming_byte()] = std::move(c);
    send_control(assoc, control_frame(FrameKind::challenge, link.outgoing_byte(), answer));
}

// On a link we opened: the remote shows that it holds the key of the card we reached it by.
void Transport::handle_challenge(AssocId assoc, LinkKey link, const uint8_t* payload, size_t len) {
    AssocEntry& a = peers_.assoc(assoc);
    Peer* p = peers_.get(a.peer_on(link));
    if (len != kChallengeBytes) { // decode_frame_header already holds it to this size
        protocol_error(assoc, p, "challenge of " + std::to_string(len) + " bytes on " + link.describe());
        return;
    }
    if (!link.opened_by_me || !p) {
        protocol_error(assoc, p, "challenge on " + link.describe() + ", which has no hello of ours");
        return;
    }
    if (p->state == Peer::State::failed)
        return;
    if (!p->awaiting_challenge || p->assoc != assoc) {
        protocol_error(assoc, p,
                       s_.auth == AuthMode::off
                           ? "the peer asks for a proof of membership on " + link.describe() +
                                 " but auth is off here (every process of a job must use the same auth setting)"
                           : "second challenge on " + link.describe());
        return;
    }
    const std::string nonce_acceptor = bytes_of(payload, kNonceBytes);
    const std::string& blob = p->hello.empty() ? hello_ : p->hello;
    const Digest want = link_mac(AuthRole::acceptor, p->card.key, p->hello_nonce, nonce_acceptor, blob);
    if (!same_digest(want.data(), payload + kNonceBytes, kMacBytes)) {
        auth_failed(assoc, p,
                    "the answer on " + link.describe() + " does not prove that the peer holds the key of its card: "
                    "it is not the process that card names");
        return;
    }
    // auth=packet: the acceptor installed the key before its challenge, so the proof already goes under it.
    if (s_.auth == AuthMode::packet &&
        !(add_link_key(assoc, link, packet_auth_key(p->card.key, p->hello_nonce, nonce_acceptor)) &&
          use_link_key(assoc, link)))
        return;
    const Digest proof = link_mac(AuthRole::opener, p->card.key, p->hello_nonce, nonce_acceptor, blob);
    queue_control(*p, FrameKind::proof, bytes_of(proof.data(), proof.size())); // ahead of the held data
    p->awaiting_challenge = false;
    if (std::find(tx_ready_.begin(), tx_ready_.end(), p->id) == tx_ready_.end())
        tx_ready_.push_back(p->id);
}

// On a link the remote opened and we challenged: the proof that it read our card.
void Transport::handle_proof(AssocId assoc, LinkKey link, const uint8_t* payload, size_t len) {
    AssocEntry& a = peers_.assoc(assoc);
    auto it = link.opened_by_me ? a.challenges.end() : a.challenges.find(link.incoming_byte());
    if (it == a.challenges.end()) {
        protocol_error(assoc, peers_.get(a.peer_on(link)), "proof on " + link.describe() + ", which has no challenge of ours");
        return;
    }
    AssocEntry::Challenge c = std::move(it->second);
    a.challenges.erase(it);
    HeldBytesBound::release(a.pending_bytes, c.cost);
    const Digest want = link_mac(AuthRole::opener, key_, c.nonce_opener, c.nonce_acceptor, c.blob);
    if (len != kProofBytes || !same_digest(want.data(), payload, kMacBytes)) {
        auth_failed(assoc, nullptr,
                    "the proof on " + link.describe() + " does not match: the process that opened it does not hold "
                    "this process's business card (hello '" + printable_text(c.blob) + "' refused)");
        return;
    }
    if (s_.auth == AuthMode::packet && !use_link_key(assoc, link)) // the opener holds it since the challenge
        return;
    accept_link(assoc, link, c.blob, c.card);
}

// The link's opener is who its hello says (proved, or auth off): the channel names the peer.
void Transport::accept_link(AssocId assoc, LinkKey link, const std::string& blob, const std::string& card) {
    sctpm_peer id = cb_.on_hello ? cb_.on_hello(cb_.ctx, blob.data(), blob.size(), card.c_str()) : -1;
    Peer* p = peers_.get(id);
    if (!p) {
        protocol_error(assoc, nullptr,
                       "the peer's hello on " + link.describe() + " was rejected (unknown identity '" +
                           printable_text(blob) + "', card '" + printable_text(redact_key(card)) + "')");
        return;
    }
    AssocEntry* a = peers_.find_assoc(assoc);
    if (!a || a->ended) // the callback's own calls ended it
        return;
    if (p->state != Peer::State::failed && p->assoc && p->assoc != assoc) {
        const AssocEntry* other = peers_.find_assoc(p->assoc);
        if (other && !other->ended) {
            protocol_error(assoc, nullptr,
                           "the hello on " + link.describe() + " names peer " + std::to_string(id) +
                               ", which is linked on association " + std::to_string(p->assoc) + " already");
            return;
        }
    }
    a->links[link.incoming_byte()] = id; // a failed peer keeps the link so that its data is dropped
    if (p->state == Peer::State::failed) {
        take_pending(*a, link.incoming_byte());
        return;
    }
    if (p->state == Peer::State::idle)
        adopt_link(*p, assoc, link);
    replay_pending(*p, assoc, link);
}

std::vector<std::string> Transport::unproven_hellos(const AssocEntry& a) {
    std::vector<std::string> blobs;
    for (const auto& [link, c] : a.challenges)
        blobs.push_back(c.blob);
    return blobs;
}

// The process a hello named may have died before it could prove itself, and it may hold messages
// for us (its link's data waits for the proof): the association's end failed no peer, so only an
// association of our own to it tells. The channel names the peer by its own card, so a stranger's
// hello can make us reach only a process of the job, and only one we have no association with.
void Transport::check_unproven(const std::vector<std::string>& hellos) {
    if (!cb_.on_unproven_end || closing_)
        return;
    for (const std::string& blob : hellos)
        if (Peer* p = peers_.get(cb_.on_unproven_end(cb_.ctx, blob.data(), blob.size()));
            p && p->state == Peer::State::idle)
            connect_peer(*p);
}

void Transport::auth_failed(AssocId assoc, const Peer* culprit, const std::string& why) {
    const AssocEntry* a = peers_.find_assoc(assoc);
    if (a && a->ended)
        return;
    ++auth_failures_;
    refuse(assoc, culprit, why, EACCES, auth_failures_);
}

std::optional<Digest> Transport::link_key_mac(sctpm_peer id, const iovec* parts, int n) const {
    const Peer* p = id < 0 ? nullptr : peers_.get(id);
    if (id >= 0 && !p)
        return std::nullopt;
    const std::string& key = p ? p->card.key : key_;
    if (key.empty() || n < 0 || (n > 0 && !parts))
        return std::nullopt;
    std::vector<std::string_view> data;
    for (int i = 0; i < n; ++i)
        data.emplace_back(static_cast<const char*>(parts[i].iov_base), parts[i].iov_len);
    return hmac_sha256(key, data);
}

void Transport::send_control(AssocId assoc, std::string frame) {
    AssocEntry& a = peers_.assoc(assoc);
    if (a.control_out.empty())
        control_ready_.push_back(assoc);
    a.control_out.push_back(std::move(frame));
    flush_control();
}

// Control frames of associations that have no peer of ours yet, in order per association.
int Transport::flush_control() {
    int sent = 0;
    for (size_t i = 0; i < control_ready_.size();) {
        const AssocId assoc = control_ready_[i];
        AssocEntry* a = peers_.find_assoc(assoc);
        while (a && !a->ended && !a->control_out.empty()) {
            const std::string& f = a->control_out.front();
            const long n = ep_->send(assoc, 0, f.data(), f.size());
            if (n == -EWOULDBLOCK)
                break;
            if (n != long(f.size())) {
                protocol_error(assoc, nullptr,
                               std::string("cannot answer a hello: ") + (n < 0 ? std::strerror(int(-n)) : "short send"));
                break;
            }
            a->control_out.pop_front();
            ++sent;
        }
        a = peers_.find_assoc(assoc);
        if (!a || a->ended || a->control_out.empty()) {
            if (a)
                a->control_out.clear();
            control_ready_[i] = control_ready_.back();
            control_ready_.pop_back();
        } else {
            ++i;
        }
    }
    return sent;
}

} // namespace sctpm
