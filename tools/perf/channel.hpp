// SPDX-License-Identifier: BSD-3-Clause
// A message channel between the two benchmark processes, and the ping-pong / streaming schedule
// both sides follow on it (sctp-perf's measurement, shared with iwarp-perf).
#pragma once
#include "perf_util.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace perf {

class Channel {
public:
    virtual ~Channel() = default;
    virtual void send(const char* data, size_t len) = 0;
    virtual void recv(size_t len) = 0; // one message of len bytes
    virtual void flush() {}
    virtual const char* received() const = 0; // the bytes of the last message received
    // True when send() only queues (progress happens in recv/flush): both directions can then run
    // from one thread. False for a blocking send, which the bidirectional test runs on a thread of
    // its own while this one receives.
    virtual bool sends_queue() const { return false; }
};

struct Schedule {
    std::vector<size_t> latency_sizes, bandwidth_sizes;
    std::function<int(size_t)> latency_iters, bandwidth_iters;
    int window = 64; // messages in flight per bandwidth round (then one 4-byte acknowledgement)
    bool bidirectional = false; // also the bidirectional test: both sides send a window each round
    bool median = false; // latency from the median round trip instead of the mean (RoundTrips)
};

// Latency: ping-pong, one-way = round trip / 2. Bandwidth: rounds of `window` messages, each
// acknowledged. Bidirectional (MB/s of both directions together): rounds in which each side sends
// `window` messages while it receives the other side's, the sizes of the bandwidth test. The client records results under `name`; the receiving side checks the last
// message of every size against the pattern (perf_util.hpp).
void run_schedule(Channel& ch, bool client, const Schedule& s, const std::string& name, std::vector<Result>* out);

} // namespace perf
