#include "peer_table.hpp"

namespace sctpm {

Peer& PeerTable::add(const Card& card, uint16_t streams) {
    auto p = std::make_unique<Peer>();
    p->id = static_cast<sctpm_peer>(peers_.size());
    p->card = card;
    p->tx_seq.assign(streams, 0);
    p->tx_queues.resize(streams);
    p->order.resize(streams);
    peers_.push_back(std::move(p));
    return *peers_.back();
}

AssocEntry* PeerTable::find_assoc(AssocId id) {
    auto it = assocs_.find(id);
    return it == assocs_.end() ? nullptr : &it->second;
}

Peer* PeerTable::peer_of(AssocId id) {
    AssocEntry* a = find_assoc(id);
    return a ? get(a->peer) : nullptr;
}

} // namespace sctpm
