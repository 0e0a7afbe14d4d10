// SPDX-License-Identifier: BSD-3-Clause
// auth=packet: the SCTP-AUTH keys a link's proof derives, the switch away from the null key and its
// deletion (the sequence and why it loses nothing: packet_auth.hpp). usrsctp checks every packet;
// this file only decides which keys it holds and which one it sends with.
#include <cstring>
#include <usrsctp.h>

#include "packet_auth.hpp"
#include "transport.hpp"

namespace sctpm {

// Both sides compute the id alike: the opener's tag is the local one on the side that opened the link.
bool Transport::add_link_key(AssocId assoc, LinkKey link, const std::string& key) {
    const auto tags = ep_->tags(assoc);
    if (!tags) {
        protocol_error(assoc, nullptr, "the association ended before its SCTP-AUTH key could be installed");
        return false;
    }
    const auto [local, remote] = *tags;
    const uint16_t id = link.opened_by_me ? packet_key_id(link.number, local, remote) : packet_key_id(link.number, remote, local);
    if (int e = ep_->add_auth_key(assoc, id, key)) {
        protocol_error(assoc, peers_.get(peers_.assoc(assoc).peer_on(link)),
                       "cannot install SCTP-AUTH key " + std::to_string(id) + " for " + link.describe() + ": " + std::strerror(e));
        return false;
    }
    peers_.assoc(assoc).auth_keys[id] = {key, link.opened_by_me, link.outgoing_byte()};
    return true;
}

// Send with the link's key from now on (the remote holds it: packet_auth.hpp, steps 2 and 3).
bool Transport::use_link_key(AssocId assoc, LinkKey link) {
    AssocEntry& a = peers_.assoc(assoc);
    const Peer* culprit = peers_.get(a.peer_on(link));
    for (const auto& [id, k] : a.auth_keys) {
        if (k.link_byte != link.outgoing_byte())
            continue;
        if (int e = ep_->activate_auth_key(assoc, id)) {
            protocol_error(assoc, culprit, "cannot send with SCTP-AUTH key " + std::to_string(id) + ": " + std::strerror(e));
            return false;
        }
        a.auth_active = id;
        a.stack_active_key = ep_->active_auth_key(assoc); // what the stack says, for sctpm_packet_auth_get
        // New chunks no longer take the null key; the stack says when the last one that did is
        // acknowledged (SCTP_AUTH_FREE_KEY, handle_auth_event).
        if (!a.null_deactivated) {
            if (int e = ep_->deactivate_auth_key(assoc, kNullKeyId)) {
                protocol_error(assoc, culprit, std::string("cannot deactivate the null SCTP-AUTH key: ") + std::strerror(e));
                return false;
            }
            a.null_deactivated = true;
        }
        return true;
    }
    protocol_error(assoc, culprit, "no SCTP-AUTH key was installed for " + link.describe());
    return false;
}

void Transport::handle_auth_event(const sctp_authkey_event& e) {
    AssocEntry* a = peers_.find_assoc(e.auth_assoc_id);
    if (!a || a->ended)
        return;
    if (e.auth_indication == SCTP_AUTH_NEW_KEY) {
        a->peer_auth_key = e.auth_keynumber; // (the stack reports it before it checks the packet's MAC)
        return;
    }
    if (e.auth_indication != SCTP_AUTH_FREE_KEY || e.auth_keynumber != kNullKeyId || !a->null_deactivated || a->null_freed)
        return;
    a->null_freed = true;
    const AssocEntry::LinkAuthKey& k = a->auth_keys.at(a->auth_active);
    const AuthRole me = k.opened_by_me ? AuthRole::opener : AuthRole::acceptor;
    send_control(e.auth_assoc_id, control_frame(FrameKind::retire, k.link_byte, format_retire(a->auth_active, k.key, me)));
    delete_null_key_when_done(e.auth_assoc_id);
}

// The peer no longer sends anything under the null key, and never will again.
void Transport::handle_retire(AssocId assoc, LinkKey link, const uint8_t* payload, size_t len) {
    AssocEntry& a = peers_.assoc(assoc);
    const Peer* culprit = peers_.get(a.peer_on(link));
    if (s_.auth != AuthMode::packet) {
        protocol_error(assoc, culprit,
                       std::string("the peer retires its null SCTP-AUTH key on ") + link.describe() + " but auth is " +
                           to_string(s_.auth) + " here (every process of a job must use the same auth setting)");
        return;
    }
    const uint16_t id = len == kRetireBytes ? retire_key_id(payload) : kNullKeyId; // decode_frame_header holds the size
    auto it = a.auth_keys.find(id);
    if (it == a.auth_keys.end()) {
        protocol_error(assoc, culprit, "retire on " + link.describe() + " names SCTP-AUTH key " + std::to_string(id) +
                                           ", which no proof on this association installed");
        return;
    }
    const AuthRole sender = it->second.opened_by_me ? AuthRole::acceptor : AuthRole::opener;
    if (!check_retire(payload, it->second.key, sender)) {
        auth_failed(assoc, culprit, "the retire on " + link.describe() + " is not MACed under SCTP-AUTH key " + std::to_string(id));
        return;
    }
    a.peer_retired = true;
    delete_null_key_when_done(assoc);
}

void Transport::delete_null_key_when_done(AssocId assoc) {
    AssocEntry& a = peers_.assoc(assoc);
    if (!a.null_freed || !a.peer_retired || a.null_deleted)
        return;
    if (int e = ep_->delete_auth_key(assoc, kNullKeyId)) {
        protocol_error(assoc, nullptr, std::string("cannot delete the null SCTP-AUTH key: ") + std::strerror(e));
        return;
    }
    a.null_deleted = true;
}

// The peer's INIT or INIT-ACK says whether it asks for authenticated DATA, i.e. runs auth=packet.
// The side that opened the association refuses it, naming why, in its own error and in the ABORT.
// The other side only ignores it: were both to abort, the opener could find the association gone
// before it looked, and fail with a bare "data could not be delivered".
bool Transport::auth_mode_matches(AssocId assoc) {
    const std::optional<bool> peer_packet = ep_->peer_requires_data_auth(assoc);
    const bool here = s_.auth == AuthMode::packet;
    if (!peer_packet || *peer_packet == here)
        return true;
    const std::string mismatch = "auth=packet on one side only (every process of a job must use the same auth setting)";
    AssocEntry& a = peers_.assoc(assoc);
    if (a.links.empty()) {
        a.auth_mismatch = true; // start_data drops what arrives on it
        return false;
    }
    ep_->abort(assoc, mismatch);
    protocol_error(assoc, nullptr,
                   here ? "the peer does not authenticate its packets, but auth is packet here: " + mismatch
                        : std::string("the peer authenticates every packet, but auth is ") + to_string(s_.auth) +
                              " here: " + mismatch);
    return false;
}

} // namespace sctpm
