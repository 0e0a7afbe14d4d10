// SPDX-License-Identifier: BSD-3-Clause
#include "progress.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "error.hpp"

namespace sctpm {
namespace {
constexpr int64_t kLookAnywayUs = 200000;
// How long the packet input stays ours after the engine last ran: long enough that a caller
// polling MPI_Test in a loop keeps it, short enough that a process gone computing answers its
// peers (SACKs, heartbeats) through usrsctp's thread about a millisecond later.
constexpr uint32_t kInputHoldUs = 1000;
constexpr int kInputReadsPerRun = 16; // a read carries up to 64 KiB of packets (UDP GRO)
} // namespace

int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Progress::Progress() {
    efd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd_ < 0)
        throw Error(std::string("eventfd failed: ") + std::strerror(errno));
    polled_.push_back({efd_, POLLIN, 0});
}

Progress::~Progress() {
    if (input_)
        input(0, 0); // give the socket back to usrsctp's thread (within 10 ms), not when the hold runs out
    if (efd_ >= 0)
        close(efd_);
}

void Progress::add_stage(std::string name, Stage stage) {
    stages_.push_back({std::move(name), std::move(stage)});
}

void Progress::set_input(Input input, int fd) {
    input_ = std::move(input);
    if (fd >= 0 && first_watched_ == 1) {
        polled_.insert(polled_.begin() + 1, pollfd{fd, POLLIN, 0});
        first_watched_ = 2;
    }
}

int Progress::input(int max_reads, uint32_t hold_us) {
    return input_ ? input_(max_reads, hold_us) : 0;
}

int Progress::run_stages() {
    int work = 0;
    for (auto& s : stages_)
        work += s.fn();
    return work;
}

int Progress::run_once() {
    input(kInputReadsPerRun, kInputHoldUs); // what it inputs reaches the stages through the upcall
    return run_stages();
}

void Progress::watch(int fd) {
    polled_.push_back({fd, POLLIN, 0});
    if (sleeping_.load(std::memory_order_acquire)) {
        uint64_t one = 1; // a waiter asleep on the old set goes round again with the new one
        ssize_t r = write(efd_, &one, sizeof one);
        (void)r;
    }
}

bool Progress::watched_ready() {
    if (!probes_.empty()) {
        for (const auto& probe : probes_)
            if (probe())
                return true;
        return false;
    }
    return polled_.size() > first_watched_ &&
           poll(polled_.data() + first_watched_, polled_.size() - first_watched_, 0) > 0;
}

void Progress::signal() {
    activity_.fetch_add(1, std::memory_order_acq_rel);
    // Only a sleeping waiter needs the system call.
    if (sleeping_.load(std::memory_order_acquire)) {
        uint64_t one = 1;
        ssize_t r = write(efd_, &one, sizeof one);
        (void)r;
    }
}

void Progress::wake() {
    // Not rare: CH3 wakes the blocked thread on every completion, and that thread is most often
    // the caller itself, completing requests in its own stages. Only a sleeping waiter needs the
    // system call (a write per message, then a ppoll that returned at once and two reads, was a
    // third of the system calls of a 4-rank 8-byte ping-pong). A waiter not yet asleep sees
    // woken_ before it sleeps: both sides order their store and load seq_cst.
    woken_.store(true, std::memory_order_seq_cst);
    activity_.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst)) {
        uint64_t one = 1;
        ssize_t r = write(efd_, &one, sizeof one);
        (void)r;
    }
}

int Progress::wait(int64_t timeout_us, uint32_t spin_us, const std::function<bool()>& busy, uint32_t retry_us,
                   const std::function<void(bool)>& on_block, const std::function<void()>& on_idle) {
    uint64_t seen = activity();
    int work;
    if (timeout_us == 0) {
        if ((work = run_once()))
            return work;
        // A caller that polls in a loop (MPI_Test, MPICH 4.0.2's MPI_Waitany, which never blocks)
        // would otherwise hold the core that usrsctp's receive thread needs to deliver what it
        // polls for: with two ranks on two cores, MPI_Waitany on a 4-byte message averaged 1.8 ms.
        sched_yield();
        return 0;
    }
    // A wait reads no packets before its first spin round (after a yield) or, if it does not
    // spin, before ppoll says they are there: a wait mostly begins just after its rank sent, and
    // a read then found nothing (a system call per message of a ping-pong, for nothing).
    input(0, kInputHoldUs);
    if ((work = run_stages()))
        return work;

    const int64_t start = now_us();
    const int64_t spin_end = start + std::min<int64_t>(spin_.next(spin_us), timeout_us < 0 ? INT64_MAX : timeout_us);
    int64_t next_retry = start + retry_us;
    bool got_packets = false; // the last round read some
    for (int64_t t = start; t < spin_end; t = now_us()) {
        // Run the stages when the upcall reported activity; blocked sends only get a retry now and
        // then (one-to-many sockets never signal free send space). Packets are read once per round,
        // after a yield: on a 2-core machine the awaited rank or usrsctp's own threads need this
        // core as much as we do. Not after a round that read packets: the rest of a message is
        // most likely on its way (a 64 KiB message on loopback is two packets, and a yield between
        // them gave the core to another rank for its whole turn).
        uint64_t a = activity();
        bool retry = t >= next_retry && busy();
        if (a != seen || retry || watched_ready()) {
            seen = a;
            if (retry)
                next_retry = t + retry_us;
            if ((work = run_stages())) {
                spin_.waited(t - start, spin_us); // this round's clock: no second read
                return work;
            }
            if (woken_.exchange(false, std::memory_order_acq_rel))
                return 0;
        }
        if (!got_packets)
            sched_yield();
        got_packets = input(kInputReadsPerRun, kInputHoldUs) > 0;
    }

    for (;;) {
        int64_t left = timeout_us < 0 ? INT64_MAX : start + timeout_us - now_us();
        if (left <= 0)
            return 0;
        sleeping_.store(true, std::memory_order_seq_cst);
        int64_t wait_us = woken_.load(std::memory_order_seq_cst) || activity() != seen ? 0
                          : busy()                                               ? std::min<int64_t>(left, retry_us)
                                                                                 : left;
        // Never sleep longer than kLookAnywayUs: usrsctp does not always call the upcall (seen:
        // the notifications of an association it aborted after all paths failed never woke a
        // waiter, and the MPI job hung), so an idle waiter looks at the socket now and then.
        const bool capped = wait_us > kLookAnywayUs;
        if (capped)
            wait_us = kLookAnywayUs;
        if (timer_) // the input's stack has a timer due before: wake for it (the run below runs it)
            if (const int64_t t = timer_(); t >= 0 && t < wait_us)
                wait_us = t;
        // Keep the socket ours while we sleep on it (no reads: we would not sleep then). Leaving it
        // to usrsctp's thread while blocked instead was measured: one 10 Gbit/s rail at MTU 1500
        // fell from 0.58x to 0.17x of ch3:sock (every packet is a hand-off again, and the thread
        // and the spinning rank fight over the cores).
        input(0, static_cast<uint32_t>(wait_us) + kInputHoldUs);
        timespec ts{static_cast<time_t>(wait_us / 1000000), static_cast<long>(wait_us % 1000000) * 1000};
        polling_ = polled_; // still under the caller's lock; reuses polling_'s memory
        if (on_block)
            on_block(true);
        const int ready = ppoll(polling_.data(), polling_.size(), &ts, nullptr);
        if (on_block)
            on_block(false);
        sleeping_.store(false, std::memory_order_release);
        // Drain the eventfd only when it woke us: most wakes are packets on the input's socket.
        uint64_t drained;
        if (ready < 0 || (polling_[0].revents & POLLIN))
            while (read(efd_, &drained, sizeof drained) > 0) {
            }
        if (ready == 0 && capped)
            activity_.fetch_add(1, std::memory_order_acq_rel); // makes the read stage look
        seen = activity();
        work = run_once();
        if (work)
            spin_.waited(now_us() - start, spin_us);
        if (work || woken_.exchange(false, std::memory_order_acq_rel))
            return work;
        if (on_idle)
            on_idle();
    }
}

} // namespace sctpm
