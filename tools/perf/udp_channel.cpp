// Kernel UDP as a benchmark channel; see udp_channel.hpp.
#include "udp_channel.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace perf {
namespace {

sockaddr_in ipv4(const std::string& addr, uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (inet_pton(AF_INET, addr.c_str(), &a.sin_addr) != 1)
        die("udp: not an IPv4 address: '" + addr + "'");
    return a;
}

} // namespace

UdpChannel::UdpChannel(const std::string& addr) : sink_(kUdpMaxMessage + 1) {
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0)
        die("udp socket: " + std::string(std::strerror(errno)));
    sockaddr_in a = ipv4(addr, 0);
    socklen_t n = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n) != 0)
        die("udp bind to " + addr + ": " + std::strerror(errno));
    port_ = ntohs(a.sin_port);
}

UdpChannel::~UdpChannel() { close(fd_); }

void UdpChannel::connect(const std::string& addr, uint16_t port) {
    peer_ = ipv4(addr, port);
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
