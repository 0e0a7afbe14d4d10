// SPDX-License-Identifier: BSD-3-Clause
// Completion queue; see cq.hpp.
#include "cq.hpp"

#include "error.hpp"

#include <cerrno>
#include <cstring>
#include <sys/eventfd.h>
#include <unistd.h>

namespace iwarp {

CompletionQueue::CompletionQueue(size_t capacity) : capacity_(capacity) {
    fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd_ < 0) throw sctpm::Error(std::string("iwarp: eventfd for a CQ: ") + std::strerror(errno));
}

CompletionQueue::~CompletionQueue() { close(fd_); }

void CompletionQueue::push(const iwv_wc& wc, bool solicited) {
    if (entries_.size() >= capacity_) {
        overflow_ = true;
        return;
    }
    entries_.push_back(wc);
    count_.store(entries_.size(), std::memory_order_release);
    if (armed_ && (!solicited_only_ || solicited || wc.status != IWV_WC_SUCCESS)) {
        armed_ = false;
        uint64_t one = 1;
        (void)!write(fd_, &one, sizeof one);
    }
}

int CompletionQueue::poll(int max, iwv_wc* out) {
    if (overflow_) return -1;
    int n = 0;
    while (n < max && !entries_.empty()) {
        out[n++] = entries_.front();
        entries_.pop_front();
    }
    count_.store(entries_.size(), std::memory_order_release);
    return n;
}

void CompletionQueue::arm(bool solicited_only) {
    armed_ = true;
    solicited_only_ = solicited_only;
}

void CompletionQueue::ack_event() {
    uint64_t v;
    (void)!read(fd_, &v, sizeof v);
}

} // namespace iwarp
