// SPDX-License-Identifier: BSD-3-Clause
// Checked traffic between two simulated endpoints: each side sends a list of messages (stream,
// length) whose bytes are a function of (seed, side, index); the receiver checks every message
// against the sender's list: each delivered exactly once, in order per stream, with every byte
// right, and nothing that was not sent.
#pragma once
#include <cerrno>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim.hpp"

namespace sim {

struct Msg {
    uint16_t stream;
    uint32_t len;
};

inline uint8_t msg_byte(uint64_t seed, int side, size_t index, size_t k) {
    uint64_t h = (seed * 1000003u + static_cast<uint64_t>(side) * 7919u + index) * 0x9E3779B97F4A7C15ull;
    return static_cast<uint8_t>((h >> 24) + k * 131 + (k >> 9));
}

class Traffic {
public:
    Traffic(Net& net, uint64_t seed) : net_(net), seed_(seed) {}

    // Side s (0 or 1) is node s; `msgs` what it will send to the other.
    void set_messages(int side, std::vector<Msg> msgs) {
        flow_[side].msgs = std::move(msgs);
        auto& exp = flow_[side].expected;
        exp.clear();
        for (size_t i = 0; i < flow_[side].msgs.size(); ++i)
            exp[flow_[side].msgs[i].stream].push_back(i);
    }
    void set_assoc(int side, AssocId id) { flow_[side].id = id; }
    AssocId assoc(int side) const { return flow_[side].id; }

    // Sends what fits now (both sides).
    void pump() {
        for (int s = 0; s < 2; ++s) {
            Flow& f = flow_[s];
            if (f.id == kNoAssoc)
                continue;
            while (f.next < f.msgs.size()) {
                const Msg& m = f.msgs[f.next];
                buf_.resize(m.len);
                for (size_t k = 0; k < m.len; ++k)
                    buf_[k] = msg_byte(seed_, s, f.next, k);
                iovec iov{buf_.data(), buf_.size()};
                int rc = net_.ep(s).send(f.id, m.stream, &iov, 1, false, net_.now);
                if (rc == -EWOULDBLOCK)
                    break;
                if (rc != 0) {
                    fail("send of message " + std::to_string(f.next) + " on side " + std::to_string(s) +
                         " failed: " + std::to_string(rc));
                    return;
                }
                ++f.next;
            }
        }
    }

    // A data event on node `side` (sent by the other side).
    void on_data(int side, const Event& ev, const std::vector<uint8_t>& data) {
        int from = 1 - side;
        Flow& f = flow_[from];
        auto it = f.expected.find(ev.stream);
        if (it == f.expected.end() || it->second.empty()) {
            fail("side " + std::to_string(side) + " got a message on stream " + std::to_string(ev.stream) +
                 " that was not sent (or twice)");
            return;
        }
        size_t idx = it->second.front();
        it->second.pop_front();
        const Msg& m = f.msgs[idx];
        if (data.size() != m.len) {
            fail("message " + std::to_string(idx) + " from side " + std::to_string(from) + " has " +
                 std::to_string(data.size()) + " bytes, sent " + std::to_string(m.len));
            return;
        }
        for (size_t k = 0; k < data.size(); ++k)
            if (data[k] != msg_byte(seed_, from, idx, k)) {
                fail("message " + std::to_string(idx) + " from side " + std::to_string(from) + " differs at byte " +
                     std::to_string(k));
                return;
            }
        ++f.delivered;
    }

    bool done() const {
        return flow_[0].delivered == flow_[0].msgs.size() && flow_[1].delivered == flow_[1].msgs.size();
    }
    size_t delivered(int side) const { return flow_[side].delivered; }
    const std::string& error() const { return error_; }
    void fail(const std::string& e) {
        if (error_.empty())
            error_ = e;
    }

private:
    struct Flow {
        AssocId id = kNoAssoc;
        std::vector<Msg> msgs;
        size_t next = 0;
        size_t delivered = 0;
        std::map<uint16_t, std::deque<size_t>> expected;
    };
    Net& net_;
    uint64_t seed_;
    Flow flow_[2];
    std::string error_;
    std::vector<uint8_t> buf_;
};

// Two nodes (ids 1 and 2) of a simulated network with checked traffic between them: every event
// but data is recorded per side (ev), and an assoc_up gives the traffic its association.
struct TrafficPair {
    Net net;
    Traffic traffic;
    std::vector<Event> ev[2];
    int ups[2] = {0, 0}; // assoc_up events per side

    TrafficPair(uint64_t seed, Faults f, const Config& c0, const Config& c1) : net(seed, f), traffic(net, seed) {
        net.add(c0, 1, seed * 2 + 1);
        net.add(c1, 2, seed * 2 + 2);
        net.on_event = [this](Node& n, const Event& e, const std::vector<uint8_t>& data) {
            int side = &n == &net.node(0) ? 0 : 1;
            if (e.type == EventType::data) {
                traffic.on_data(side, e, data);
                return;
            }
            ev[side].push_back(e);
            if (e.type == EventType::assoc_up) {
                ++ups[side];
                traffic.set_assoc(side, e.assoc);
            }
        };
    }
    TrafficPair(const TrafficPair&) = delete; // on_event holds `this`
    TrafficPair& operator=(const TrafficPair&) = delete;
};

} // namespace sim
