// SPDX-License-Identifier: BSD-3-Clause
// Kernel UDP datagrams as a benchmark channel: one message per datagram, blocking reads. It has
// no reliability, so it only serves ping-pong latency on loopback, as a floor: a message over the
// transport crosses the same kernel UDP send and receive (usrsctp's UDP encapsulation), so what
// `sctp` takes above `udp` is the SCTP stack and the transport in user space. The socket stays
// unconnected and each send names its peer, as usrsctp's one socket for all peers does (a
// connected socket skips the route lookup of every send).
#pragma once
#include "channel.hpp"

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <vector>

namespace perf {

constexpr size_t kUdpMaxMessage = 65000; // one datagram, under IPv4's 65507-byte limit

class UdpChannel : public Channel {
public:
    // A socket bound to `addr` with a port of the kernel's choice; connect() names the peer.
    explicit UdpChannel(const std::string& addr);
    ~UdpChannel() override;
    UdpChannel(const UdpChannel&) = delete;
    UdpChannel& operator=(const UdpChannel&) = delete;
    uint16_t port() const { return port_; }
    void connect(const std::string& addr, uint16_t port); // the peer; then says hello
    void accept();                                        // takes the first hello's sender as the peer
    void send(const char* data, size_t len) override;
    void recv(size_t len) override;
    const char* received() const override { return sink_.data(); }

private:
    int fd_;
    uint16_t port_ = 0;
    sockaddr_in peer_{};
    std::vector<char> sink_;
};

} // namespace perf
