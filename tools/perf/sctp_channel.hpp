// SPDX-License-Identifier: BSD-3-Clause
// The transport core (src/, through its C ABI) as a benchmark channel: one peer, messages placed
// into one sink buffer (the head copied, the rest placed directly).
#pragma once
#include "channel.hpp"

#include <string>
#include <utility>
#include <vector>

#include "sctpmpi.h"

namespace perf {

struct SctpOptions {
    std::string addr; // "A[,B...]": bind these (through a multihome file); empty: the defaults
    std::vector<std::pair<std::string, std::string>> settings; // key=value on top of the environment
};

class SctpChannel : public Channel {
public:
    explicit SctpChannel(const SctpOptions& o); // opens the process's transport
    ~SctpChannel() override;                    // flushes and closes it
    SctpChannel(const SctpChannel&) = delete;
    SctpChannel& operator=(const SctpChannel&) = delete;

    const char* card() const { return sctpm_card(t_); }
    void connect(const std::string& card); // client side; the server learns its peer by the hello

    void send(const char* data, size_t len) override;
    void recv(size_t len) override;
    void flush() override;
    // The last message recv() waited for: number expected_ (1-based), so index expected_ - 1.
    const char* received() const override { return sinks_[(expected_ - 1) % 2].data(); }
    bool sends_queue() const override { return true; }

    // Transport callbacks (C ABI), on this object.
    struct Callbacks;

private:
    void progress(); // one blocking sctpm_progress; dies on a transport error
    sctpm_transport* t_ = nullptr;
    sctpm_peer peer_ = -1;
    // Message k (0-based, in arrival order) goes to sinks_[k % 2]: one progress call may deliver
    // the message recv() waited for and the next one, which must not overwrite it before
    // received() is read.
    std::vector<char> sinks_[2];
    char* sink_ = nullptr; // the current message's sink
    size_t at_ = 0;       // where the current message's next bytes go in sink_
    size_t done_ = 0;     // messages fully received
    size_t expected_ = 0; // messages recv() waited for
    int pending_ = 0;     // queued sends
};

} // namespace perf
