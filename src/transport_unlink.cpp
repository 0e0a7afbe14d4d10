// SPDX-License-Identifier: BSD-3-Clause
// Link release: a peer the caller gives back (its VC destroyed, e.g. the temporary VC of every
// MPI_Comm_connect/accept) frees its memory, and its link is forgotten on both sides, so that the
// link number can be opened again: one association carries at most kMaxLinks links opened by each
// side, and processes that connect and disconnect again and again would otherwise run out of them.
//
// The protocol, per link:
//   1. Each side, once it released its peer on the link, sends an unlink frame on it, but only
//      when the association holds no data of ours unacknowledged: everything we sent on that link
//      is then in the remote's receive queue ahead of the unlink, so nothing of the link can
//      arrive after it (SCTP delivers complete messages in the order they became deliverable,
//      across streams, and our stacks read them in that order).
//   2. A side that has sent its unlink and received the other's forgets the link; frames on it
//      are then those of a new link again (its hello comes first).
//   3. The opener opens the number again only after step 2 on its side, so after the remote's
//      unlink came; its own unlink went out on stream 0 before that, and so reached the remote
//      before the new hello, which also takes stream 0: the remote has forgotten the old link by
//      the time the new one says hello.
// With auth=packet a link's SCTP-AUTH key id is a function of its number (packet_auth.hpp), and the
// stack will not replace a key still in use, so numbers are not opened again there.

#include "transport.hpp"

namespace sctpm {
void Transport::release_peer(sctpm_peer id) {
    const FlushAtEnd flush{*ep_};
    Peer* p = peers_.get(id);
    if (!p || p->released)
        return;
    p->released = true;
    if (p->state != Peer::State::failed) {
        p->state = Peer::State::failed; // no event: the caller asked for it
        p->failure = "peer " + std::to_string(id) + " was released";
    }
    // The caller destroys a VC once its close handshake is done, so nothing should be queued; if
    // anything is, it completes with an error rather than never.
    fail_queued_sends(*p);
    // Whole containers go, not only their contents (an empty std::deque still holds a node: 7 KiB
    // per peer with its streams). A failed peer's queues are never indexed again.
    decltype(p->tx_queues)().swap(p->tx_queues);
    decltype(p->tx_seq)().swap(p->tx_seq);
    if (cont_.peer == p && cont_.mode != ContMode::none)
        cont_.mode = ContMode::discard; // the rest of the message in the socket is dropped
    decltype(p->rx)().swap(p->rx);
    decltype(p->order)().swap(p->order);
    p->held_bytes = 0;
    decltype(p->paths)().swap(p->paths);

    // Every link that names it: its own, and one the remote opened for the same pair of processes
    // at the same time (accept_link maps that one to it too).
    AssocEntry* a = p->assoc ? peers_.find_assoc(p->assoc) : nullptr;
    if (!a || a->ended)
        return;
    // Not a link it opened whose proof is still missing: nothing but the hello and the proof may
    // go out on that one, and the remote knows of no peer on it yet (an unlink there would be a
    // protocol error). Its number stays taken.
    const uint8_t unproved = p->awaiting_challenge ? uint8_t(p->link ^ kLinkOpenedByReceiver) : 0;
    for (const auto& [byte, linked] : a->links)
        if (linked == id && !(p->awaiting_challenge && byte == unproved))
            unlinks_due_.emplace_back(p->assoc, byte);
    send_due_unlinks();
    flush_completions();
}

// An association that ends takes its due unlinks with it. A restart keeps the association's id
// for the new process on the old one's port: an unlink still due for the old process's link
// (held back while our data to it, which it never acknowledged, was in flight) went to the new
// process, which has no peer on that link and aborted the association as a protocol error
// (MPICH's spawn/taskmanager: a spawned worker could not connect back to its parent).
void Transport::forget_assoc(AssocId id) {
    std::erase_if(unlinks_due_, [id](const auto& due) { return due.first == id; });
    peers_.forget_assoc(id);
}

void Transport::send_due_unlinks() {
    // Every round while one is due (two socket options each): in a ping-pong, our data is all
    // acknowledged only between reading the peer's message and sending the answer, in this
    // round's write stage, and a check every millisecond missed that window for hundreds of rounds.
    for (size_t i = 0; i < unlinks_due_.size();) {
        if (send_unlink(unlinks_due_[i].first, unlinks_due_[i].second)) {
            unlinks_due_[i] = unlinks_due_.back();
            unlinks_due_.pop_back();
        } else {
            ++i;
        }
    }
}

bool Transport::send_unlink(AssocId assoc, uint8_t incoming_byte) {
    AssocEntry* a = peers_.find_assoc(assoc);
    if (!a || a->ended)
        return true;
    const AssocStatus st = ep_->status(assoc);
    if (!st.known)
        return true;
    if (st.unacked != 0 || st.queued_out != 0)
        return false;
    const std::string f = control_frame(FrameKind::unlink, uint8_t(incoming_byte ^ kLinkOpenedByReceiver), "");
    const long n = ep_->send(assoc, 0, f.data(), f.size());
    if (n == -EWOULDBLOCK)
        return false;
    // Any other failure: the association is ending (the remote closed its socket or exited, and
    // the stack has not told us yet), and the link ends with it. Not a protocol error, which would
    // abort the association first. A control frame is never sent in part (SEQPACKET).
    if (n != long(f.size()))
        return true;
    a->unlinked_here.insert(incoming_byte);
    forget_link_if_unlinked(*a, incoming_byte);
    return true;
}

void Transport::handle_unlink(AssocId assoc, LinkKey link) {
    AssocEntry& a = peers_.assoc(assoc);
    const uint8_t byte = link.incoming_byte();
    const sctpm_peer id = a.peer_on(link);
    if (id < 0) {
        protocol_error(assoc, nullptr, "unlink on " + link.describe() + ", which carries no peer");
        return;
    }
    if (!a.unlinked_there.insert(byte).second) {
        protocol_error(assoc, peers_.get(id), "a second unlink on " + link.describe());
        return;
    }
    forget_link_if_unlinked(a, byte);
}

void Transport::forget_link_if_unlinked(AssocEntry& a, uint8_t incoming_byte) {
    if (!a.unlinked_here.count(incoming_byte) || !a.unlinked_there.count(incoming_byte))
        return;
    a.unlinked_here.erase(incoming_byte);
    a.unlinked_there.erase(incoming_byte);
    a.links.erase(incoming_byte);
    const LinkKey link = LinkKey::of_received(incoming_byte);
    if (link.opened_by_me && s_.auth != AuthMode::packet)
        a.free_links.push_back(link.number);
}

} // namespace sctpm
