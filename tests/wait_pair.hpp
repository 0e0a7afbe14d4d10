// Shared by the two-process test harnesses (tests/integration, tests/iwarp): wait for both forked
// sides, and kill both once the time limit is over, so a hung side fails the test instead of
// hanging it.
#pragma once
#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

struct PairExit {
    int a = -1, b = -1; // wait statuses; -1 if that side was never collected
    bool timed_out = false;
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
