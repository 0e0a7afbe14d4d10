// SPDX-License-Identifier: BSD-3-Clause
// Kernel TCP as a benchmark channel (length-prefixed messages, TCP_NODELAY), and the socket
// helpers the benchmarks use for it and for their control connections.
#pragma once
#include "channel.hpp"

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <vector>

namespace perf {

class TcpChannel : public Channel {
public:
    explicit TcpChannel(int fd); // takes the connected socket
    ~TcpChannel() override;
    TcpChannel(const TcpChannel&) = delete;
    TcpChannel& operator=(const TcpChannel&) = delete;
    void send(const char* data, size_t len) override;
    void recv(size_t len) override;
    const char* received() const override { return sink_.data(); }

private:
    int fd_;
    std::vector<char> sink_;
};

sockaddr_in ipv4_address(const std::string& addr, uint16_t port); // dies if addr is not IPv4
uint16_t bind_any_port(int fd, const std::string& addr);           // the port the kernel chose; dies on failure
int tcp_listen(const std::string& addr, uint16_t* port); // dies on failure
int tcp_connect(const std::string& addr, uint16_t port);  // dies on failure
void read_exact(int fd, void* p, size_t len);             // dies if the peer closed
void write_exact(int fd, const void* p, size_t len);
// "A[,B...]" -> A, or 127.0.0.1 for an empty list.
std::string first_address(const std::string& list);

} // namespace perf
