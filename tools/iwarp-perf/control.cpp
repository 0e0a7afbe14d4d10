// SPDX-License-Identifier: BSD-3-Clause
// The control connection; see control.hpp.
#include "control.hpp"

#include "tcp_channel.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

namespace iwperf {

Control::Control(int fd) : fd_(fd) {
    int on = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

Control::~Control() { close(fd_); }

void Control::barrier() {
    const char b = 'b';
    perf::write_exact(fd_, &b, 1);
    char got = 0;
    perf::read_exact(fd_, &got, 1);
    if (got != 'b')
        perf::die("control connection out of step");
}

bool Control::arrived() const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

void Control::send_line(const std::string& line) { perf::write_exact(fd_, (line + "\n").data(), line.size() + 1); }

std::string Control::recv_line() {
    std::string line;
    for (char c = 0;;) {
        perf::read_exact(fd_, &c, 1);
        if (c == '\n')
            return line;
        line += c;
    }
}

} // namespace iwperf
