// SPDX-License-Identifier: BSD-3-Clause
// The progress engine: a pipeline of named stages run in order, plus the wait that spins for a
// while and then blocks on an eventfd fed by usrsctp's upcall. With a packet input set, the
// engine reads the stack's packets itself whenever it runs (the upcall then runs on our thread);
// otherwise usrsctp's receive thread reads them and the upcall wakes us.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <poll.h>
#include <string>
#include <vector>

#include "spin_budget.hpp"

namespace sctpm {

int64_t now_us(); // steady clock, microseconds

class Progress {
public:
    using Stage = std::function<int()>; // returns work done

    Progress();
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    void add_stage(std::string name, Stage stage);
    // A further fd whose readability counts as activity (polled while spinning, waited on while
    // blocked): for work that an upcall does not announce, such as an iWARP completion queue. May be
    // called by another thread while wait() is blocked (under the lock on_block releases): the
    // waiter wakes and sleeps again on the new set.
    void watch(int fd);
    // A cheap test that stands for the watched fds while spinning (a poll system call on every
    // spin round slowed small-message round trips by ~15%): once one is added, spinning waits
    // ask the probes instead of polling the fds; blocked waits still poll the fds.
    void add_spin_probe(std::function<bool()> probe) { probes_.push_back(std::move(probe)); }
    // Packets the engine reads itself: `input(max_reads, hold_us)` inputs what waits, without
    // blocking, and keeps the source to this thread for hold_us (usrsctp_udp_input); `fd` becomes
    // readable when packets wait. Called on every run and every spin round, and before blocking
    // with a hold that covers the sleep.
    using Input = std::function<int(int max_reads, uint32_t hold_us)>;
    void set_input(Input input, int fd);
    // For an input whose stack has timers of its own and no thread to run them (stack=own): how
    // many microseconds until the input must run without a packet (-1: no timer). A blocked wait
    // ends then.
    void set_input_timer(std::function<int64_t()> next_timer_us) { timer_ = std::move(next_timer_us); }
    // The input goes (before the stack behind it): no later call reaches it.
    void drop_input() {
        input_ = nullptr;
        timer_ = nullptr;
    }
    int run_once();

    // Whether waits adapt their spin to the waits seen (spin_budget.hpp); on by default.
    void set_spin_adapt(bool adapt) { spin_ = SpinBudget(adapt); }

    // timeout_us == 0: run_once. Otherwise run the stages; if idle, spin for up to spin_us (spin_budget.hpp; reading
    // packets after each yield, running the stages only when the activity counter moved or `busy` says there is work
    // to retry), then block up to timeout_us
    // (-1 = no limit; `busy` work is retried every retry_us while blocked). on_idle runs after
    // every blocked round that found no work (at least every 200 ms while blocked).
    int wait(int64_t timeout_us, uint32_t spin_us, const std::function<bool()>& busy, uint32_t retry_us,
             const std::function<void(bool)>& on_block = {}, const std::function<void()>& on_idle = {});

    // Called from any thread: something happened (upcall) / wake a blocked waiter.
    void signal();
    void wake(); // make a blocked wait() return even without work
    uint64_t activity() const { return activity_.load(std::memory_order_acquire); }
    int fd() const { return efd_; }

private:
    struct Named {
        std::string name;
        Stage fn;
    };
    bool watched_ready(); // a watched fd is readable now
    std::vector<Named> stages_;
    int input(int max_reads, uint32_t hold_us); // input_, if set: datagrams read
    int run_stages();                             // the stages only (run_once reads packets first)
    std::vector<pollfd> polled_; // the eventfd, the input's fd if any, then the watched fds (what a blocked wait polls)
    // The copy of polled_ a blocked wait hands to ppoll: the caller's lock is released meanwhile
    // (on_block), and another thread's watch() may grow polled_ (and move it) under that lock.
    std::vector<pollfd> polling_;
    size_t first_watched_ = 1;   // index of the first watched fd in polled_
    Input input_;
    std::function<int64_t()> timer_;
    std::vector<std::function<bool()>> probes_;
    int efd_ = -1;
    std::atomic<uint64_t> activity_{0};
    std::atomic<bool> sleeping_{false};
    std::atomic<bool> woken_{false};
    SpinBudget spin_;
};

} // namespace sctpm
