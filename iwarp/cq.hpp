// SPDX-License-Identifier: BSD-3-Clause
// A completion queue: a bounded FIFO of work completions, with libibverbs' notification model
// (arm once, the event fd fires on the next matching completion). Not thread-safe by itself:
// the device lock covers it, except for seems_empty().
#pragma once
#include "iwarp_verbs.h"

#include <atomic>
#include <cstddef>
#include <deque>

namespace iwarp {

class CompletionQueue {
public:
    explicit CompletionQueue(size_t capacity);
    ~CompletionQueue();
    CompletionQueue(const CompletionQueue&) = delete;
    CompletionQueue& operator=(const CompletionQueue&) = delete;

    // Adds one completion. `solicited` marks a receive of a Send with Solicited Event; errors
    // always count as solicited (as in verbs). Past capacity the CQ overflows: it keeps what it
    // has and poll() reports -1 from then on.
    void push(const iwv_wc& wc, bool solicited);
    int poll(int max, iwv_wc* out); // number returned, or -1 after an overflow
    size_t size() const { return entries_.size(); }
    // Without the device lock: true if the CQ was empty a moment ago. A poller that finds it so
    // need not take the lock (which the device thread holds while it moves data).
    bool seems_empty() const { return count_.load(std::memory_order_acquire) == 0; }
    bool overflowed() const { return overflow_; }

    void arm(bool solicited_only);
    int fd() const { return fd_; }
    void ack_event(); // consume the fd's readiness

    int users = 0; // QPs that use it (destroy refuses while > 0)

private:
    std::deque<iwv_wc> entries_;
    std::atomic<size_t> count_{0}; // entries_.size(), for seems_empty()
    size_t capacity_;
    bool overflow_ = false;
    bool armed_ = false;
    bool solicited_only_ = false;
    int fd_ = -1;
};

} // namespace iwarp
