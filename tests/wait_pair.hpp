// SPDX-License-Identifier: BSD-3-Clause
// Shared by the two-process test harnesses (tests/integration, tests/iwarp/pair): usrsctp can be
// started once per process, so each test forks two children joined by two pipes. A check that
// fails in a child ends it with a message; the parent waits for both sides, and kills both once
// the time limit is over, so a hung side fails the test instead of hanging it.
#pragma once
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

// In a forked child (where a gtest assertion would not reach the parent): unless cond holds, print
// the pid, where, the condition and a printf-style message, and end the child with exit status 1.
#define CHILD_CHECK(cond, ...)                                                                              \
    do {                                                                                                    \
        if (!(cond)) {                                                                                      \
            std::fprintf(stderr, "[pid %d] %s:%d: check failed: %s: ", getpid(), __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                                              \
            std::fprintf(stderr, "\n");                                                                     \
            std::_Exit(1);                                                                                  \
        }                                                                                                   \
    } while (0)

// How the two sides of a test ended.
struct PairExit {
    int a = -1, b = -1; // wait statuses; -1 if that side was never collected
    bool timed_out = false;
    bool ok() const { return !timed_out && WIFEXITED(a) && !WEXITSTATUS(a) && WIFEXITED(b) && !WEXITSTATUS(b); }
    std::string describe() const {
        auto d = [](int st) {
            return WIFEXITED(st) ? "exit " + std::to_string(WEXITSTATUS(st))
                                 : WIFSIGNALED(st) ? "signal " + std::to_string(WTERMSIG(st)) : std::string("?");
        };
        return "a: " + d(a) + ", b: " + d(b) + (timed_out ? " (killed after the timeout: hang)" : "");
    }
};

inline PairExit wait_pair(pid_t pa, pid_t pb, int timeout_s) {
    PairExit o;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int done = 0;
    while (done < 2) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p == pa) { o.a = st; ++done; continue; }
        if (p == pb) { o.b = st; ++done; continue; }
        if (std::chrono::steady_clock::now() > end) {
            o.timed_out = true;
            kill(pa, SIGKILL);
            kill(pb, SIGKILL);
            waitpid(pa, o.a == -1 ? &o.a : &st, 0);
            waitpid(pb, o.b == -1 ? &o.b : &st, 0);
            break;
        }
        usleep(10000);
    }
    return o;
}

// One side's body, run in its own child with its ends of the pipes: what a writes to wr, b reads
// from rd, and the other way round. A body ends its child itself (std::_Exit: no destructor must
// run while a stack may still use the memory); one that returns all the same ends it with 0.
using PairChild = std::function<void(int rd, int wr)>;

// Forks a and b, then waits for both (wait_pair).
inline PairExit fork_pair(const PairChild& a, const PairChild& b, int timeout_s) {
    int ab[2], ba[2];
    if (pipe(ab) != 0 || pipe(ba) != 0)
        return {};
    std::fflush(nullptr); // or the children print what the parent had buffered
    pid_t pa = fork();
    if (pa == 0) {
        a(ba[0], ab[1]);
        std::_Exit(0);
    }
    pid_t pb = fork();
    if (pb == 0) {
        b(ab[0], ba[1]);
        std::_Exit(0);
    }
    for (int fd : {ab[0], ab[1], ba[0], ba[1]})
        close(fd);
    return wait_pair(pa, pb, timeout_s);
}
