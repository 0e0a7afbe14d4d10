#include "progress.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "error.hpp"

namespace sctpm {
namespace {
int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
} // namespace

Progress::Progress() {
    efd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd_ < 0)
        throw Error(std::string("eventfd failed: ") + std::strerror(errno));
}

Progress::~Progress() {
    if (efd_ >= 0)
        close(efd_);
}

void Progress::add_stage(std::string name, Stage stage) {
    stages_.push_back({std::move(name), std::move(stage)});
}

int Progress::run_once() {
    int work = 0;
    for (auto& s : stages_)
        work += s.fn();
    return work;
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
    woken_.store(true, std::memory_order_release);
    activity_.fetch_add(1, std::memory_order_acq_rel);
    uint64_t one = 1;
    ssize_t r = write(efd_, &one, sizeof one); // unconditional: rare, and must not be missed
    (void)r;
}

int Progress::wait(int64_t timeout_us, uint32_t spin_us, const std::function<bool()>& busy, uint32_t retry_us) {
    uint64_t seen = activity();
    int work = run_once();
    if (work || timeout_us == 0)
        return work;

    const int64_t start = now_us();
    const int64_t spin_end = start + std::min<int64_t>(spin_us, timeout_us < 0 ? INT64_MAX : timeout_us);
    while (now_us() < spin_end) {
        uint64_t a = activity();
        if (a != seen || busy()) {
            seen = a;
            if ((work = run_once()))
                return work;
        }
    }

    for (;;) {
        int64_t left = timeout_us < 0 ? INT64_MAX : start + timeout_us - now_us();
        if (left <= 0)
            return 0;
        sleeping_.store(true, std::memory_order_seq_cst);
        int poll_ms;
        if (activity() != seen) {
            poll_ms = 0; // something arrived between the spin and now
        } else {
            int64_t wait_us = busy() ? std::min<int64_t>(left, retry_us) : left;
            poll_ms = wait_us >= INT32_MAX / 2 ? -1 : static_cast<int>((wait_us + 999) / 1000);
        }
        pollfd p{efd_, POLLIN, 0};
        poll(&p, 1, poll_ms);
        sleeping_.store(false, std::memory_order_release);
        uint64_t drained;
        while (read(efd_, &drained, sizeof drained) > 0) {
        }
        seen = activity();
        work = run_once();
        if (work || woken_.exchange(false, std::memory_order_acq_rel))
            return work;
    }
}

} // namespace sctpm
