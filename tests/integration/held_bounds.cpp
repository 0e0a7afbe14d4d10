// SPDX-License-Identifier: BSD-3-Clause
// What a remote can make a process hold is bounded (settings pre_hello_bytes, reorder_bytes): b
// attacks a through a raw socket of its stack; a must abort that association with an error naming
// the bound, never hold more than the bound (its byte counts, sctpm_held_stats_get), and still
// serve b's transport, a well-behaved peer on an association of its own.
#include <gtest/gtest.h>

#include <cstring>

#include "raw_peer.hpp"

using namespace pair_test;

namespace {

constexpr uint64_t kBound = 64 * 1024; // both bounds in these tests
constexpr uint32_t kPiece = 4096;      // payload per attacking frame (beyond the first read: continued reads)
constexpr int kFrames = 64;            // 256 KiB in all: four times the bound

void set_bounds(sctpm_config* cfg) {
    set(cfg, "pre_hello_bytes", "64K");
    set(cfg, "reorder_bytes", "64K");
}

// The victim: waits for the protocol error naming `bound`, checks the counts against it, then serves
// the well-behaved peer.
void victim(Side& s, const char* bound, uint64_t sctpm_held_stats::*held, uint64_t sctpm_held_stats::*peak) {
    accept_every_link(s);
    const sctpm_event* error = nullptr;
    CHILD_CHECK(s.progress_until([&] {
        for (const auto& e : s.events)
            if (e.type == SCTPM_EV_PROTOCOL_ERROR)
                error = &e;
        return error != nullptr;
    }), "no protocol error for the %s attack", bound);
    const std::string want = std::string(bound) + " bound (" + std::to_string(kBound) + ") exceeded";
    CHILD_CHECK(std::strstr(error->detail, want.c_str()), "the error does not name '%s': %s", want.c_str(), error->detail);
    sctpm_held_stats h{};
    sctpm_held_stats_get(s.t, &h);
    // It held up to the bound (so the bound, not something else, stopped the attack), never more,
    // and let go of it all with the association.
    CHILD_CHECK(h.*peak <= kBound, "held %llu bytes, over the bound of %llu", (unsigned long long)(h.*peak),
                (unsigned long long)kBound);
    CHILD_CHECK(h.*peak > kBound - 2 * kPiece, "held only %llu bytes before the abort", (unsigned long long)(h.*peak));
    CHILD_CHECK(h.*held == 0, "still holds %llu bytes after the abort", (unsigned long long)(h.*held));
    CHILD_CHECK(h.bound_aborts == 1, "%llu associations aborted for a bound", (unsigned long long)h.bound_aborts);
    CHILD_CHECK(s.completed == 0, "an attacking message was delivered");
    exchange_checked(s, true);
}

} // namespace

// A stranger opens an association and sends data frames without ever saying hello.
TEST(HeldBounds, DataBeforeAnyHelloStopsAtPreHelloBytes) {
    auto o = run_pair(
        [](Side& s) { victim(s, "pre_hello_bytes", &sctpm_held_stats::pre_hello_bytes, &sctpm_held_stats::pre_hello_peak); },
        [](Side& s) {
            RawPeer raw(s.peer_card);
            std::vector<std::string> frames;
            for (int i = 0; i < kFrames; ++i)
                frames.push_back(frame(frame_header(sctpm::FrameKind::data, sctpm::kFrameFirst | sctpm::kFrameLast,
                                                    uint32_t(i), kPiece, kPiece, 0),
                                       std::string(kPiece, 'x')));
            raw.send(frames);
            exchange_checked(s, false);
        },
        set_bounds);
    EXPECT_TRUE(o.ok()) << o.describe();
}

// A peer that said hello sends whole messages that all come ahead of their turn (seq 0 never comes).
TEST(HeldBounds, MessagesAheadOfTheirTurnStopAtReorderBytes) {
    auto o = run_pair(
        [](Side& s) { victim(s, "reorder_bytes", &sctpm_held_stats::reorder_bytes, &sctpm_held_stats::reorder_peak); },
        [](Side& s) {
            RawPeer raw(s.peer_card);
            CHILD_CHECK(!raw.hello("evil").empty(), "no challenge to the hello");
            std::vector<std::string> frames;
            for (int i = 0; i < kFrames; ++i)
                frames.push_back(frame(frame_header(sctpm::FrameKind::data, sctpm::kFrameFirst | sctpm::kFrameLast,
                                                    uint32_t(i + 1), kPiece, kPiece, 0),
                                       std::string(kPiece, 'x')));
            raw.send(frames);
            exchange_checked(s, false);
        },
        set_bounds);
    EXPECT_TRUE(o.ok()) << o.describe();
}

// The same with one large message ahead of its turn, fragment after fragment.
TEST(HeldBounds, OneLargeMessageAheadOfItsTurnStopsAtReorderBytes) {
    auto o = run_pair(
        [](Side& s) { victim(s, "reorder_bytes", &sctpm_held_stats::reorder_bytes, &sctpm_held_stats::reorder_peak); },
        [](Side& s) {
            RawPeer raw(s.peer_card);
            CHILD_CHECK(!raw.hello("evil").empty(), "no challenge to the hello");
            std::vector<std::string> frames;
            const uint64_t total = uint64_t(kFrames) * kPiece;
            for (int i = 0; i < kFrames; ++i) {
                const uint8_t flags = (i == 0 ? sctpm::kFrameFirst : 0) | (i == kFrames - 1 ? sctpm::kFrameLast : 0);
                frames.push_back(frame(frame_header(sctpm::FrameKind::data, flags, 1, kPiece, total, uint64_t(i) * kPiece),
                                       std::string(kPiece, 'x')));
            }
            raw.send(frames);
            exchange_checked(s, false);
        },
        set_bounds);
    EXPECT_TRUE(o.ok()) << o.describe();
}
