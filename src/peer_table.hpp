// Peers and associations: who is behind each association, per-peer send queues, receive state
// per stream, reorder windows per ordering domain, and counters.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
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
    AssocId assoc = 0;
    bool hello_sent = false;
    std::string hello;   // our introduction on this association if not the transport's default
    std::string failure; // why the peer failed

    std::vector<uint32_t> tx_seq;                           // per domain
    std::vector<std::deque<TxMessage>> tx_queues;           // per stream
    size_t queued = 0;                                      // messages in tx_queues
    std::vector<ReorderWindow<std::shared_ptr<RxMessage>>> order; // per domain
    std::unordered_map<uint16_t, StreamRx> rx;              // per stream

    std::vector<PathCounter> paths;
    sctpm_peer_stats stats{};
};

// An association we know of. Associations opened by a peer are anonymous until its hello
// arrives; their messages wait (copied) in `pending` until then.
struct AssocEntry {
    sctpm_peer peer = -1;
    std::vector<std::pair<uint16_t, std::string>> pending; // (stream, whole SCTP message)
};

class PeerTable {
public:
    Peer& add(const Card& card, uint16_t streams);
    Peer* get(sctpm_peer id) { return id >= 0 && size_t(id) < peers_.size() ? peers_[id].get() : nullptr; }
    const Peer* get(sctpm_peer id) const { return id >= 0 && size_t(id) < peers_.size() ? peers_[id].get() : nullptr; }
    size_t size() const { return peers_.size(); }

    AssocEntry& assoc(AssocId id) { return assocs_[id]; }
    AssocEntry* find_assoc(AssocId id);
    void forget_assoc(AssocId id) { assocs_.erase(id); }
    Peer* peer_of(AssocId id);

private:
    std::vector<std::unique_ptr<Peer>> peers_; // stable addresses: callbacks may add peers
    std::unordered_map<AssocId, AssocEntry> assocs_;
};

} // namespace sctpm
