// SPDX-License-Identifier: BSD-3-Clause
// Kernel UDP as a benchmark channel; see udp_channel.hpp.
#include "udp_channel.hpp"
#include "tcp_channel.hpp" // ipv4_address, bind_any_port

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace perf {

UdpChannel::UdpChannel(const std::string& addr) : sink_(kUdpMaxMessage + 1) {
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    port_ = bind_any_port(fd_, addr);
}

UdpChannel::~UdpChannel() { close(fd_); }

void UdpChannel::connect(const std::string& addr, uint16_t port) {
    peer_ = ipv4_address(addr, port);
    const char hello = 'h';
    send(&hello, 1);
}

void UdpChannel::accept() {
    sockaddr_in from{};
    socklen_t n = sizeof from;
    const ssize_t r = recvfrom(fd_, sink_.data(), sink_.size(), 0, reinterpret_cast<sockaddr*>(&from), &n);
    if (r != 1 || from.sin_family != AF_INET)
        die("udp: expected the peer's 1-byte hello, got " + std::to_string(r) + " bytes");
    peer_ = from;
}

void UdpChannel::send(const char* data, size_t len) {
    if (len > kUdpMaxMessage)
        die("udp: a " + std::to_string(len) + "-byte message does not fit one datagram");
    if (sendto(fd_, data, len, 0, reinterpret_cast<const sockaddr*>(&peer_), sizeof peer_) !=
        static_cast<ssize_t>(len))
        die("udp send: " + std::string(std::strerror(errno)));
}

void UdpChannel::recv(size_t len) {
    const ssize_t r = ::recv(fd_, sink_.data(), sink_.size(), 0);
    if (r < 0)
        die("udp recv: " + std::string(std::strerror(errno)));
    if (static_cast<size_t>(r) != len)
        die("udp: a datagram of " + std::to_string(r) + " bytes, expected " + std::to_string(len) +
            " (lost or reordered: this channel has no reliability)");
}

} // namespace perf
