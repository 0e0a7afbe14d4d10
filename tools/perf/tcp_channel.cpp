// SPDX-License-Identifier: BSD-3-Clause
// Kernel TCP as a benchmark channel; see tcp_channel.hpp.
#include "tcp_channel.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace perf {

TcpChannel::TcpChannel(int fd) : fd_(fd), sink_(4u << 20) {
    int on = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

TcpChannel::~TcpChannel() { close(fd_); }

void TcpChannel::send(const char* data, size_t len) {
    uint32_t n = static_cast<uint32_t>(len);
    iovec v[2] = {{&n, 4}, {const_cast<char*>(data), len}};
    msghdr mh{};
    mh.msg_iov = v;
    mh.msg_iovlen = 2;
    size_t left = len + 4;
    while (left > 0) {
        ssize_t w = sendmsg(fd_, &mh, MSG_NOSIGNAL);
        if (w <= 0)
            die("tcp send: " + std::string(std::strerror(errno)));
        left -= w;
        while (w > 0) { // advance the iov
            size_t k = std::min<size_t>(w, mh.msg_iov->iov_len);
            mh.msg_iov->iov_base = static_cast<char*>(mh.msg_iov->iov_base) + k;
            mh.msg_iov->iov_len -= k;
            w -= k;
            if (mh.msg_iov->iov_len == 0) {
                ++mh.msg_iov;
                --mh.msg_iovlen;
            }
        }
    }
}

void TcpChannel::recv(size_t len) {
    uint32_t n = 0;
    read_exact(fd_, &n, 4);
    if (n != len)
        die("tcp: message of " + std::to_string(n) + " bytes, expected " + std::to_string(len));
    read_exact(fd_, sink_.data(), n);
}

void read_exact(int fd, void* p, size_t len) {
    char* c = static_cast<char*>(p);
    while (len > 0) {
        ssize_t r = ::recv(fd, c, len, 0);
        if (r <= 0)
            die("tcp recv: " + std::string(r == 0 ? "peer closed" : std::strerror(errno)));
        c += r;
        len -= r;
    }
}

void write_exact(int fd, const void* p, size_t len) {
    const char* c = static_cast<const char*>(p);
    while (len > 0) {
        ssize_t w = ::send(fd, c, len, MSG_NOSIGNAL);
        if (w <= 0)
            die("tcp send: " + std::string(std::strerror(errno)));
        c += w;
        len -= w;
    }
}

sockaddr_in ipv4_address(const std::string& addr, uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (inet_pton(AF_INET, addr.c_str(), &a.sin_addr) != 1)
        die("not an IPv4 address: '" + addr + "'");
    return a;
}

uint16_t bind_any_port(int fd, const std::string& addr) {
    sockaddr_in a = ipv4_address(addr, 0);
    socklen_t l = sizeof a;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &l) != 0)
        die("bind to " + addr + ": " + std::strerror(errno));
    return ntohs(a.sin_port);
}

int tcp_listen(const std::string& addr, uint16_t* port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    *port = bind_any_port(fd, addr);
    if (listen(fd, 1) != 0)
        die("tcp listen on " + addr + ": " + std::strerror(errno));
    return fd;
}

int tcp_connect(const std::string& addr, uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = ipv4_address(addr, port);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
        die("tcp connect to " + addr + ":" + std::to_string(port) + ": " + std::strerror(errno));
    return fd;
}

std::string first_address(const std::string& list) { return list.empty() ? "127.0.0.1" : list.substr(0, list.find(',')); }

} // namespace perf
