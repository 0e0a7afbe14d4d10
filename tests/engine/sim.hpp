// SPDX-License-Identifier: BSD-3-Clause
// A tiny deterministic network for engine tests: Endpoints joined in memory, datagrams delayed,
// lost, duplicated and reordered by a seeded PRNG, virtual time advanced by the test (no clock,
// no sockets). The same seed replays the same run exactly. A node may have several addresses
// (one per "rail": 10.<rail>.0.<n>, one UDP port); a packet leaves from the sender's address on
// the destination's rail, and the link between two addresses can be cut and healed.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sctp/engine.hpp"

namespace sim {

using namespace sctpm::sctp;

struct Faults {
    uint32_t loss_per_mille = 0;    // each packet lost with this probability
    uint32_t dup_per_mille = 0;     // each packet delivered twice
    uint32_t reorder_per_mille = 0; // each packet delayed by an extra random amount
    Time delay = 100;               // one-way delay (µs)
    Time reorder_extra = 2000;      // up to this much more for reordered packets
    Time rail_extra[4] = {};        // added to the delay of every packet to that rail
};

// xorshift-style PRNG with a fixed algorithm (std distributions differ between libraries).
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(next() % n) : 0; }
};

inline Address addr(uint8_t last, uint16_t udp_port) {
    Address a;
    a.family = AF_INET;
    a.port = udp_port;
    a.ip[0] = 10;
    a.ip[3] = last;
    return a;
}

// The address of node `last` on another rail (rail 0 is addr()).
inline Address rail_addr(uint8_t rail, uint8_t last, uint16_t udp_port) {
    Address a = addr(last, udp_port);
    a.ip[1] = rail;
    return a;
}

struct Node {
    std::unique_ptr<Endpoint> ep;
    Address address;                 // the first address (rail 0)
    std::vector<Address> addresses;  // every address, the first one first
    std::vector<Event> events; // copied out (data owned by `payloads`)
    std::vector<std::vector<uint8_t>> payloads;
};

class Net {
public:
    explicit Net(uint64_t seed, Faults f = {}) : rng_(seed), faults_(f) {}

    Time now = 0;
    uint64_t packets_sent = 0, packets_lost = 0;
    // Optional tap: every datagram handed out by an engine (before faults), for tests that look
    // at the wire.
    std::function<void(int from_node, const uint8_t*, size_t)> tap;
    bool auto_drain_events = true;

    int add(const Config& cfg, uint8_t last_octet, uint64_t seed) {
        auto n = std::make_unique<Node>();
        n->ep = std::make_unique<Endpoint>(cfg, seeded_random(seed));
        n->address = addr(last_octet, static_cast<uint16_t>(9000 + last_octet));
        n->addresses.push_back(n->address);
        nodes_.push_back(std::move(n));
        return static_cast<int>(nodes_.size() - 1);
    }
    // Gives node i an address on `rail` (same last octet and UDP port); returns it.
    Address add_address(int i, uint8_t rail) {
        Node& n = *nodes_[i];
        Address a = rail_addr(rail, n.address.ip[3], n.address.port);
        n.addresses.push_back(a);
        return a;
    }
    // Cuts (drops every packet both ways) or heals the link between two addresses.
    void cut(const Address& a, const Address& b) { cuts_.insert(link(a, b)); }
    void heal(const Address& a, const Address& b) { cuts_.erase(link(a, b)); }
    bool is_cut(const Address& a, const Address& b) const { return cuts_.count(link(a, b)) != 0; }
    uint64_t packets_cut = 0;
    // Bytes each node handed to the network per rail of the destination: bytes_to_rail[node][rail].
    uint64_t bytes_to_rail[4][4] = {};

    Node& node(int i) { return *nodes_[i]; }
    Endpoint& ep(int i) { return *nodes_[i]->ep; }
    void set_faults(const Faults& f) { faults_ = f; }

    // Injects raw bytes as if `from` sent them to node `to`.
    void inject(int to, const Address& from, const uint8_t* p, size_t n, Time delay = 0) {
        Packet pk;
        pk.at = now + delay;
        pk.seq = seq_++;
        pk.to = to;
        pk.from = from;
        pk.dst = nodes_[to]->address;
        pk.bytes.assign(p, p + n);
        queue_.emplace(std::make_pair(pk.at, pk.seq), std::move(pk));
    }

    // Collects every engine's output into the network.
    void flush() {
        std::vector<uint8_t> buf(65536);
        for (size_t i = 0; i < nodes_.size(); ++i) {
            Endpoint& e = *nodes_[i]->ep;
            while (auto t = e.poll_transmit(buf.data(), buf.size(), 64, now)) {
                size_t off = 0;
                for (size_t k = 0; k < t->count; ++k) {
                    size_t len = k + 1 < t->count ? t->segment_size : t->bytes - off;
                    route(static_cast<int>(i), t->to, buf.data() + off, len);
                    off += len;
                }
            }
        }
    }

    void drain_events() {
        for (auto& n : nodes_) {
            Event ev;
            while (n->ep->poll_event(ev)) {
                Event copy = ev;
                n->payloads.emplace_back(ev.data.begin(), ev.data.end());
                copy.data = {};
                n->events.push_back(std::move(copy));
                on_event(*n, n->events.back(), n->payloads.back());
            }
        }
    }
    // Called for every event (after it was copied); tests may send from it.
    std::function<void(Node&, const Event&, const std::vector<uint8_t>&)> on_event = [](Node&, const Event&,
                                                                                        const std::vector<uint8_t>&) {};

    // One step: deliver every packet due at the next instant (one batch per node), or run the
    // timers due. False when nothing is left to happen.
    bool step() {
        flush();
        std::optional<Time> next;
        if (!queue_.empty())
            next = queue_.begin()->first.first;
        for (auto& n : nodes_)
            if (auto d = n->ep->next_deadline())
                if (!next || *d < *next)
                    next = *d;
        if (!next)
            return false;
        if (*next > now)
            now = *next;
        std::vector<bool> got(nodes_.size(), false);
        while (!queue_.empty() && queue_.begin()->first.first <= now) {
            Packet pk = std::move(queue_.begin()->second);
            queue_.erase(queue_.begin());
            Node& n = *nodes_[pk.to];
            n.ep->receive(pk.from, pk.dst, pk.bytes.data(), pk.bytes.size(), now);
            got[pk.to] = true;
        }
        for (size_t i = 0; i < nodes_.size(); ++i) {
            if (got[i])
                nodes_[i]->ep->end_of_batch(now);
            if (auto d = nodes_[i]->ep->next_deadline(); d && *d <= now)
                nodes_[i]->ep->handle_timeout(now);
        }
        if (auto_drain_events)
            drain_events();
        flush();
        return true;
    }

    // Steps until pred() holds or virtual time passes `limit`; returns pred().
    bool run_until(const std::function<bool()>& pred, Time limit) {
        while (!pred()) {
            if (now > limit || !step())
                return pred();
        }
        return true;
    }

    int node_of(const Address& a) const {
        for (size_t i = 0; i < nodes_.size(); ++i)
            for (const Address& x : nodes_[i]->addresses)
                if (x == a)
                    return static_cast<int>(i);
        return -1;
    }

private:
    struct Packet {
        Time at = 0;
        uint64_t seq = 0;
        int to = 0;
        Address from, dst;
        std::vector<uint8_t> bytes;
    };

    static std::pair<uint64_t, uint64_t> link(const Address& a, const Address& b) {
        auto key = [](const Address& x) {
            uint64_t k = 0;
            std::memcpy(&k, x.ip, 4);
            return k << 16 | x.port;
        };
        uint64_t x = key(a), y = key(b);
        return x < y ? std::make_pair(x, y) : std::make_pair(y, x);
    }

    // The sender's address on the destination's rail (its first address if it has none there).
    const Address& source_for(int node, const Address& to) const {
        for (const Address& x : nodes_[node]->addresses)
            if (x.ip[1] == to.ip[1])
                return x;
        return nodes_[node]->address;
    }

    void route(int from_node, const Address& to, const uint8_t* p, size_t n) {
        ++packets_sent;
        if (from_node < 4 && to.ip[1] < 4)
            bytes_to_rail[from_node][to.ip[1]] += n;
        if (tap)
            tap(from_node, p, n);
        int dst = node_of(to);
        if (dst < 0)
            return; // nobody there
        const Address& src = source_for(from_node, to);
        if (!cuts_.empty() && is_cut(src, to)) {
            ++packets_cut;
            return;
        }
        if (rng_.below(1000) < faults_.loss_per_mille) {
            ++packets_lost;
            return;
        }
        int copies = rng_.below(1000) < faults_.dup_per_mille ? 2 : 1;
        for (int c = 0; c < copies; ++c) {
            Time d = faults_.delay + (to.ip[1] < 4 ? faults_.rail_extra[to.ip[1]] : 0);
            if (rng_.below(1000) < faults_.reorder_per_mille)
                d += 1 + rng_.below(static_cast<uint32_t>(faults_.reorder_extra));
            Packet pk;
            pk.at = now + d;
            pk.seq = seq_++;
            pk.to = dst;
            pk.from = src;
            pk.dst = to;
            pk.bytes.assign(p, p + n);
            queue_.emplace(std::make_pair(pk.at, pk.seq), std::move(pk));
        }
    }

    Rng rng_;
    Faults faults_;
    std::vector<std::unique_ptr<Node>> nodes_;
    std::map<std::pair<Time, uint64_t>, Packet> queue_;
    std::set<std::pair<uint64_t, uint64_t>> cuts_;
    uint64_t seq_ = 0;
};

} // namespace sim
