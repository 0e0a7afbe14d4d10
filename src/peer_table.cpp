// SPDX-License-Identifier: BSD-3-Clause
#include "peer_table.hpp"

#include <algorithm>

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

void PeerTable::forget_assoc(AssocId id) {
    auto it = assocs_.find(id);
    if (it == assocs_.end())
        return;
    const AssocEntry& a = it->second;
    for (sctpm_peer p : a.peers())
        if (Peer* peer = get(p))
            peer->auth_at_end = {a.stack_active_key, a.peer_auth_key, a.null_deleted};
    assocs_.erase(it);
}

std::vector<sctpm_peer> AssocEntry::peers() const {
    std::vector<sctpm_peer> out;
    for (const auto& [byte, id] : links)
        if (std::find(out.begin(), out.end(), id) == out.end())
            out.push_back(id);
    return out;
}

uint64_t PeerTable::pending_bytes() const {
    uint64_t sum = 0;
    for (const auto& [id, a] : assocs_)
        sum += a.pending_bytes;
    return sum;
}

uint64_t PeerTable::held_bytes() const {
    uint64_t sum = 0;
    for (const auto& p : peers_)
        sum += p->held_bytes;
    return sum;
}

namespace {
bool same_endpoint(const Card& a, const Card& b) {
    return a.sctp_port == b.sctp_port && a.udp_port == b.udp_port && a.addresses == b.addresses;
}
} // namespace

AssocId PeerTable::live_assoc_to(const Card& card, sctpm_peer except) const {
    for (const auto& p : peers_) {
        const bool live = p->state == Peer::State::connecting || p->state == Peer::State::up;
        if (p->id == except || !live || !p->assoc || !same_endpoint(p->card, card))
            continue;
        auto it = assocs_.find(p->assoc);
        if (it != assocs_.end() && !it->second.ended)
            return p->assoc;
    }
    return 0;
}

bool PeerTable::has_live_peer(AssocId id) {
    const AssocEntry* a = find_assoc(id);
    if (!a)
        return false;
    for (sctpm_peer pid : a->peers())
        if (const Peer* p = get(pid); p && p->state != Peer::State::failed)
            return true;
    return false;
}

} // namespace sctpm
