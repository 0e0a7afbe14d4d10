// SPDX-License-Identifier: BSD-3-Clause
// iwarp-perf's control connection (TCP, beside the measured transports): the client's plan goes
// to the server, and both sides meet at a barrier before and after every pass, so that buffers
// are prepared and receives posted before traffic starts, and no send is still in flight when a
// buffer is refilled.
#pragma once
#include <string>

namespace iwperf {

class Control {
public:
    explicit Control(int fd); // takes the connected socket
    ~Control();
    Control(const Control&) = delete;
    Control& operator=(const Control&) = delete;

    void barrier();      // returns once the other side called it too
    bool arrived() const; // the other side reached the barrier (a byte is waiting); does not block
    void send_line(const std::string& line);
    std::string recv_line();

private:
    int fd_;
};

} // namespace iwperf
