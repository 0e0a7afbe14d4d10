// SPDX-License-Identifier: BSD-3-Clause
// udp_port as a range "A-B": processes of one host that start together take its ports in turn
// (first free first), and one more than the range holds gets an error naming the range; with
// udp_port 0 they never choose the same port. Each process has its own usrsctp stack, so each case
// runs in forked children.
#include <gtest/gtest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "error.hpp"
#include "settings.hpp"
#include "stack.hpp"

namespace {

bool bindable(uint16_t port) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(port);
    const bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

// Two neighbouring ports that are free now, away from the ephemeral range's usual start.
uint16_t free_pair() {
    for (uint32_t p = 20000 + static_cast<uint32_t>(getpid()) % 9000 * 2; p < 65000; p += 2)
        if (bindable(static_cast<uint16_t>(p)) && bindable(static_cast<uint16_t>(p + 1)))
            return static_cast<uint16_t>(p);
    return 0;
}

struct Child {
    pid_t pid = -1;
    int result = -1; // read end: the child's outcome
    int release = -1; // write end: closing it lets the child exit
};

// A child starts its stack with `range` and reports "port N" or "error <message>", then keeps
// the port until released.
Child start_child(const std::string& range) {
    int out[2], hold[2];
    if (pipe(out) != 0 || pipe(hold) != 0)
        return {};
    pid_t pid = fork();
    if (pid == 0) {
        // Only our two ends: an inherited end of an earlier child's pipe would keep it from exiting.
        for (int fd = 3; fd < 1024; ++fd)
            if (fd != out[1] && fd != hold[0])
                close(fd);
        std::string said;
        try {
            sctpm::Settings s;
            sctpm::set_setting(s, "udp_port", range);
            said = "port " + std::to_string(sctpm::start_stack(s).udp_port);
        } catch (const sctpm::Error& e) {
            said = std::string("error ") + e.what();
        }
        if (write(out[1], said.data(), said.size()) < 0)
            _exit(2);
        close(out[1]);
        char c;
        while (read(hold[0], &c, 1) > 0) {
        }
        _exit(0);
    }
    close(out[1]);
    close(hold[0]);
    return {pid, out[0], hold[1]};
}

std::string outcome(const Child& c) {
    std::string text;
    char buf[512];
    ssize_t n;
    while ((n = read(c.result, buf, sizeof buf)) > 0)
        text.append(buf, static_cast<size_t>(n));
    return text;
}

void finish(Child& c) {
    close(c.release);
    close(c.result);
    int status = 0;
    waitpid(c.pid, &status, 0);
}

} // namespace

TEST(UdpPortRange, ProcessesTakeThePortsInTurnAndOneTooManyIsToldTheRange) {
    const uint16_t base = free_pair();
    ASSERT_NE(base, 0) << "no two neighbouring free UDP ports";
    const std::string range = std::to_string(base) + "-" + std::to_string(base + 1);
    std::vector<Child> children;
    std::vector<std::string> said;
    for (int i = 0; i < 3; ++i) { // one after the other: each holds its port while the next starts
        children.push_back(start_child(range));
        ASSERT_GT(children.back().pid, 0);
        said.push_back(outcome(children.back()));
    }
    for (Child& c : children)
        finish(c);
    EXPECT_EQ(said[0], "port " + std::to_string(base));
    EXPECT_EQ(said[1], "port " + std::to_string(base + 1));
    EXPECT_EQ(said[2], "error no free UDP port in " + range +
                           " (udp_port / MPIR_CVAR_CH3_SCTP_UDP_PORT): all 2 are in use on this host; each "
                           "process needs one, so widen the range");
}

TEST(UdpPortRange, ProcessesStartingTogetherGetDistinctPorts) {
    const uint16_t base = free_pair();
    ASSERT_NE(base, 0) << "no two neighbouring free UDP ports";
    const std::string range = std::to_string(base) + "-" + std::to_string(base + 1);
    std::vector<Child> children;
    for (int i = 0; i < 2; ++i) // both start before either is read: the range lock orders them
        children.push_back(start_child(range));
    std::vector<std::string> said;
    for (Child& c : children)
        said.push_back(outcome(c));
    for (Child& c : children)
        finish(c);
    std::sort(said.begin(), said.end());
    EXPECT_EQ(said, (std::vector<std::string>{"port " + std::to_string(base), "port " + std::to_string(base + 1)}));
}

TEST(UdpPortRange, AnyFreePortIsNeverChosenTwiceByProcessesStartingTogether) {
    std::vector<Child> children;
    for (int i = 0; i < 8; ++i) // like the ranks of a job on one host
        children.push_back(start_child("0"));
    std::vector<std::string> said;
    for (Child& c : children)
        said.push_back(outcome(c));
    for (Child& c : children)
        finish(c);
    for (const std::string& s : said)
        EXPECT_EQ(s.rfind("port ", 0), 0u) << s;
    std::sort(said.begin(), said.end());
    EXPECT_EQ(std::adjacent_find(said.begin(), said.end()), said.end()) << "two processes chose the same port";
}
