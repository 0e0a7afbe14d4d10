// SPDX-License-Identifier: BSD-3-Clause
// Incoming associations on their way to a connection request (RFC 5043 §6.2): each must open with
// an Initiate, which is read here and announced as IWV_EVENT_CONNECT_REQUEST; the ULP then accepts
// or rejects it. Bounded in number (a new one aborts the oldest still waiting) and in time (one
// whose Initiate has not arrived whole is aborted), so that strangers cannot pile them up.
// Kept apart from the device (which owns the sockets) so that these rules run on an in-memory LLP
// with a clock of the caller's (tests/fuzz/iwarp_qp_fuzz.cpp).
#pragma once
#include "iwarp_verbs.h"
#include "llp.hpp"
#include "session.hpp"

#include <chrono>
#include <deque>
#include <memory>
#include <vector>

namespace iwarp {
class Device;
}

struct iwv_conn_request {
    iwarp::Device* device = nullptr;
    std::unique_ptr<iwarp::Llp> llp;
    iwarp::Session session{iwarp::SessionRole::passive};
    bool announced = false; // its Initiate was delivered as an event
    std::vector<uint8_t> partial; // the Initiate being read
    std::chrono::steady_clock::time_point since; // when its association came up
};

namespace iwarp {

class ConnRequests {
public:
    using Clock = std::chrono::steady_clock;
    explicit ConnRequests(std::chrono::milliseconds initiate_timeout, size_t max_waiting = IWV_MAX_PENDING_REQUESTS)
        : timeout_(initiate_timeout), max_waiting_(max_waiting) {}

    // A new passive association, waiting for its Initiate from `now` on.
    void add(std::unique_ptr<Llp> llp, Device* device, Clock::time_point now);
    // Reads the Initiates of the waiting ones; each arrived whole is appended to `events`. Data
    // first, a bad or oversized Initiate, a closed association or the timeout aborts it.
    // Returns how many were announced.
    int progress(Clock::time_point now, std::deque<iwv_event>& events);
    // An announced request (the ULP's answer is due); nullptr if unknown or not announced.
    iwv_conn_request* find_announced(iwv_conn_request* req) const;
    std::unique_ptr<iwv_conn_request> take(iwv_conn_request* req); // out of the list; nullptr if absent
    size_t waiting() const; // not yet announced
    size_t size() const { return list_.size(); }
    void clear() { list_.clear(); }

private:
    void drop_oldest_beyond(size_t keep);

    std::chrono::milliseconds timeout_;
    size_t max_waiting_;
    std::vector<std::unique_ptr<iwv_conn_request>> list_; // oldest first
};

} // namespace iwarp
