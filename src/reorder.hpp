// SPDX-License-Identifier: BSD-3-Clause
// Restores per-sender order from sequence numbers (README.md, "Message order"): messages of one ordering
// domain may arrive on different SCTP streams; the one whose seq is next is delivered at once
// (placed straight into its destination), the others are held until their turn.
// Sequence numbers are uint32 and wrap (serial-number arithmetic).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "error.hpp"

namespace sctpm {

template <class T>
class ReorderWindow {
public:
    // first: the seq expected first (the sender's initial seq). The window is capped below half the
    // sequence space, where serial arithmetic could no longer tell ahead from behind.
    explicit ReorderWindow(uint32_t max_held = 1u << 16, uint32_t first = 0)
        : expected_(first), max_held_(max_held < kHalf ? max_held : kHalf - 1) {}

    uint32_t expected() const { return expected_; }
    size_t held() const { return held_.size(); }
    bool is_next(uint32_t seq) const { return seq == expected_; }

    // Keep an out-of-order item. Throws Error if seq was already delivered or held, or lies beyond
    // the window (max_held ahead of expected).
    void hold(uint32_t seq, T item) {
        const uint32_t ahead = seq - expected_; // wraps
        if (ahead == 0)
            throw Error("reorder: seq " + std::to_string(seq) + " is the next one and must be delivered, not held");
        if (ahead >= kHalf) // behind expected, in serial arithmetic
            throw Error("reorder: seq " + std::to_string(seq) + " was already delivered (expected " +
                        std::to_string(expected_) + ")");
        if (ahead > max_held_)
            throw Error("reorder: seq " + std::to_string(seq) + " is " + std::to_string(ahead) +
                        " ahead of expected " + std::to_string(expected_) + ", beyond the window of " +
                        std::to_string(max_held_));
        if (!held_.emplace(ahead_key(seq), std::move(item)).second)
            throw Error("reorder: duplicate seq " + std::to_string(seq));
    }

    // The next message was delivered.
    void advance() { ++expected_; }

    // The held item whose turn it is now, if any (removed; the caller delivers it, then advance()).
    std::optional<T> take_next() {
        auto it = held_.find(ahead_key(expected_));
        if (it == held_.end())
            return std::nullopt;
        T item = std::move(it->second);
        held_.erase(it);
        return item;
    }

private:
    static constexpr uint32_t kHalf = 0x80000000u;

    // Held items are keyed by absolute seq; lookups are exact so wrap needs no ordering.
    static uint32_t ahead_key(uint32_t seq) { return seq; }

    uint32_t expected_ = 0;
    uint32_t max_held_;
    std::map<uint32_t, T> held_;
};

} // namespace sctpm
