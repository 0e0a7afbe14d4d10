// SPDX-License-Identifier: BSD-3-Clause
// Peers and associations: which peers are linked on each association (links multiplex several
// peers to the same remote process on its one association), per-peer send queues, receive state
// per stream, reorder windows per ordering domain, and counters.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unordered_map>
#include <vector>

#include "card.hpp"
#include "endpoint.hpp"
#include "frame.hpp"
#include "reorder.hpp"
#include "sctpmpi.h"

namespace sctpm {

// A message being sent: the caller's iov (the data stays in the caller's buffers) and progress.
struct TxMessage {
    std::vector<iovec> iov;
    std::string owned;      // internal messages (hello) keep their bytes here
    FrameHeader header;     // kind, seq, domain, total; offset/flags per fragment
    uint16_t stream = 0;
    uint64_t sent = 0;      // payload bytes handed to the stack
    void* cookie = nullptr;
    bool notify = false;    // call on_sent when done (it was queued)
    bool next_batch = false; // a further batch of the message before it: nothing goes between
};

// A message being received. Until its turn in the reorder window it is held in `buffered`;
// once delivered (on_message called), the rest is placed straight into the caller's iovs.
struct RxMessage {
    uint64_t total = 0;
    uint64_t received = 0;   // payload bytes that arrived from the network
    bool delivered = false;  // on_message called
    bool complete = false;   // all bytes arrived
    void* handle = nullptr;  // the caller's message handle
    std::string buffered;    // bytes held before delivery
    // Placement cursor into the caller's iovs.
    iovec dest[16];
    int dest_count = 0, dest_index = 0;
    size_t dest_offset = 0, dest_filled = 0;
    uint64_t placed = 0;     // bytes given to the caller (consumed head + placed)
};

struct StreamRx {
    FrameSequencer sequencer;
    std::shared_ptr<RxMessage> current;
};

struct PathCounter {
    sockaddr_storage address{};
    uint64_t rx_bytes = 0;
};

struct Peer {
    enum class State { idle, connecting, up, failed };
    sctpm_peer id = -1;
    Card card;
    State state = State::idle;
    bool released = false; // the caller gave it back (release_peer): failed, without an event
    AssocId assoc = 0;
    uint8_t link = 0;    // the link byte on the frames this peer sends on `assoc` (see frame.hpp)
    bool hello_sent = false;
    // The remote knows our link: it opened it, or sent on it after our hello. Until then all our
    // messages take the hello's stream, behind it, so that none overtakes it on another stream
    // (the remote holds only pre_hello_bytes for a link it cannot name yet).
    bool link_known = false;
    std::string hello;   // our introduction on this association if not the transport's default
    // Our link's proof of membership (hello_auth.hpp): the nonce our hello carried, and whether we
    // still wait for the remote's challenge (until it is answered only the hello goes out).
    std::string hello_nonce;
    bool awaiting_challenge = false;
    std::string failure; // why the peer failed

    std::vector<uint32_t> tx_seq;                           // per domain
    std::vector<std::deque<TxMessage>> tx_queues;           // per stream
    size_t queued = 0;                                      // messages in tx_queues
    // A message sent in batches (sctpm_send_batch's `more`): the receiver appends each batch to the
    // one before, so nothing else may come between them. While the batch before the next is still
    // queued (`batch_queued`, until its on_sent has run), other sends to this peer wait in
    // `deferred`, without a sequence number, and follow the last batch (transport_tx.cpp).
    void* batch_cookie = nullptr;
    bool batch_queued = false;
    std::deque<TxMessage> deferred;
    uint64_t frames_sent = 0;                               // SCTP messages the stack accepted (stall report)
    std::vector<ReorderWindow<std::shared_ptr<RxMessage>>> order; // per domain
    uint64_t held_bytes = 0;                                // what `order` holds, against reorder_bytes
    std::unordered_map<uint16_t, StreamRx> rx;              // per stream

    std::vector<PathCounter> paths;
    sctpm_peer_stats stats{};
    sctpm_packet_auth auth_at_end{-1, -1, 0}; // its last association's SCTP-AUTH state when that ended
};

// A link of one association as this side sees it: who opened it and the opener's number for it.
struct LinkKey {
    bool opened_by_me = false;
    uint8_t number = 0; // < kMaxLinks

    // The link a received frame belongs to, from its link byte.
    static LinkKey of_received(uint8_t byte) {
        return {(byte & kLinkOpenedByReceiver) != 0, uint8_t(byte & ~kLinkOpenedByReceiver)};
    }
    // The byte our frames on this link carry.
    uint8_t outgoing_byte() const { return opened_by_me ? number : uint8_t(number | kLinkOpenedByReceiver); }
    // The byte the other side's frames on this link carry: unique per link, the map key.
    uint8_t incoming_byte() const { return uint8_t(outgoing_byte() ^ kLinkOpenedByReceiver); }
    std::string describe() const {
        return "link " + std::to_string(number) + (opened_by_me ? " (opened here)" : " (opened by the peer)");
    }
};

// An association we know of and the peers linked on it. A link the other side opened is anonymous
// until its hello arrives; its messages wait (copied) in `pending` until then. An ended association
// (aborted, or failed by the stack) keeps its entry, so that bytes still queued for it are dropped,
// until the stack's final notification about it.
struct AssocEntry {
    using Held = std::vector<std::pair<uint16_t, std::string>>; // (stream, whole SCTP message)
    // A link whose hello we answered with a challenge: it stays anonymous until its proof.
    struct Challenge {
        std::string nonce_opener, nonce_acceptor, blob, card;
        uint64_t cost = 0; // counted in pending_bytes
    };
    std::map<uint8_t, sctpm_peer> links; // by LinkKey::incoming_byte()
    std::map<uint8_t, Held> pending;     // messages of anonymous links, by LinkKey::incoming_byte()
    std::map<uint8_t, Challenge> challenges; // by LinkKey::incoming_byte()
    uint64_t pending_bytes = 0;          // what `pending` and `challenges` hold, against pre_hello_bytes
    std::deque<std::string> control_out; // challenge frames the stack has not taken yet
    unsigned next_link = 0;              // number of the next link this side opens
    // Link release (transport_unlink.cpp), by LinkKey::incoming_byte(): the links whose unlink frame
    // we sent and those whose unlink we received. A link in both is forgotten; a number this side
    // opened is then free to open again (free_links, used before next_link).
    std::set<uint8_t> unlinked_here, unlinked_there;
    std::vector<uint8_t> free_links;
    // auth=packet (packet_auth.hpp): the SCTP-AUTH keys our links' proofs installed, by key id, the
    // one we send with, and how far the null key's retirement got.
    struct LinkAuthKey {
        std::string key;
        bool opened_by_me = false; // on the link whose proof made it
        uint8_t link_byte = 0;     // what our frames on that link carry
    };
    std::map<uint16_t, LinkAuthKey> auth_keys;
    uint16_t auth_active = 0;
    int stack_active_key = 0;      // the stack's answer when we last changed it (-1: no answer)
    bool null_deactivated = false; // we no longer stamp new chunks with the null key
    bool null_freed = false;       // ... and none of ours stamped with it is unacknowledged
    bool peer_retired = false;     // the peer said the same (retire frame)
    bool null_deleted = false;     // packets under the null key are dropped now
    int peer_auth_key = -1;        // the key id the peer's packets last switched to (SCTP_AUTH_NEW_KEY)
    bool auth_mismatch = false;    // the peer opened it with another auth setting: ignored until it aborts
    bool up = false;                     // COMM_UP seen
    uint64_t messages_read = 0;          // SCTP data messages begun by a read (stall report)
    bool ended = false;
    bool end_reported = false; // an event named its end (an anonymous one can end unreported)

    sctpm_peer peer_on(LinkKey k) const {
        auto it = links.find(k.incoming_byte());
        return it == links.end() ? -1 : it->second;
    }
    std::vector<sctpm_peer> peers() const; // every peer linked here, once
};

class PeerTable {
public:
    Peer& add(const Card& card, uint16_t streams);
    Peer* get(sctpm_peer id) { return id >= 0 && size_t(id) < peers_.size() ? peers_[id].get() : nullptr; }
    const Peer* get(sctpm_peer id) const { return id >= 0 && size_t(id) < peers_.size() ? peers_[id].get() : nullptr; }
    size_t size() const { return peers_.size(); }

    AssocEntry& assoc(AssocId id) { return assocs_[id]; }
    AssocEntry* find_assoc(AssocId id);
    const AssocEntry* find_assoc(AssocId id) const {
        auto it = assocs_.find(id);
        return it == assocs_.end() ? nullptr : &it->second;
    }
    void forget_assoc(AssocId id); // its linked peers keep its SCTP-AUTH state (auth_at_end)
    uint64_t pending_bytes() const;    // every association's pending_bytes
    uint64_t held_bytes() const;       // every peer's held_bytes
    // The association of a live peer other than `except` with this card (the same remote endpoint),
    // or 0. usrsctp keeps one association per pair of endpoints: new peers link onto it.
    AssocId live_assoc_to(const Card& card, sctpm_peer except) const;
    bool has_live_peer(AssocId id);

private:
    std::vector<std::unique_ptr<Peer>> peers_; // stable addresses: callbacks may add peers
    std::unordered_map<AssocId, AssocEntry> assocs_;
};

} // namespace sctpm
