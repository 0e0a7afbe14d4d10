// SPDX-License-Identifier: BSD-3-Clause
// Bounds on the bytes a remote can make this process hold before they reach the receiver: an
// association's frames waiting for their link's hello (setting pre_hello_bytes), a peer's messages
// held out of order (reorder_bytes). Each holder counts its own bytes; a charge that would pass
// the bound is refused, and the caller aborts the association with the message describe() gives.
#pragma once
#include <cstdint>
#include <string>

namespace sctpm {

// Held items cost their bytes plus this much, so that a flood of empty messages counts too
// (container node, RxMessage or string header, shared_ptr control block).
constexpr uint64_t kHeldItemOverhead = 256;

class HeldBytesBound {
public:
    HeldBytesBound(const char* setting, uint64_t limit) : setting_(setting), limit_(limit) {}

    // Would holding n more bytes on top of `held` stay within the bound?
    bool allows(uint64_t held, uint64_t n) const { return n <= limit_ && held <= limit_ - n; }
    // Count n more bytes held by a holder whose count is `held` (the caller checked allows()).
    void charge(uint64_t& held, uint64_t n) {
        held += n;
        if (held > peak_)
            peak_ = held;
    }
    static void release(uint64_t& held, uint64_t n) { held -= n < held ? n : held; }

    // "reorder_bytes bound (65536) exceeded: <what> would hold 70000 bytes"
    std::string describe(const std::string& what, uint64_t would_hold) const {
        return std::string(setting_) + " bound (" + std::to_string(limit_) + ") exceeded: " + what + " would hold " +
               std::to_string(would_hold) + " bytes";
    }
    uint64_t limit() const { return limit_; }
    uint64_t peak() const { return peak_; } // the most one holder ever held

private:
    const char* setting_;
    uint64_t limit_;
    uint64_t peak_ = 0;
};

} // namespace sctpm
