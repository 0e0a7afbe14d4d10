// SPDX-License-Identifier: BSD-3-Clause
// Two-process test harness: usrsctp can be initialised once per process, so every test forks two
// fresh children (a and b) that each open a transport, swap business cards through pipes and run
// their role. The parent fails the test on a non-zero exit, a crash, or a hang (timeout). Forking,
// waiting and CHILD_CHECK: ../wait_pair.hpp.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "sctpmpi.h"
#include "../wait_pair.hpp"

namespace pair_test {

// A message whose bytes are a function of (id, size): the receiver can verify every byte.
inline std::string make_message(uint32_t id, size_t size) {
    std::string m(size, '\0');
    uint32_t x = id * 2654435761u + 1;
    for (size_t i = 0; i < size; ++i) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        m[i] = static_cast<char>(x);
    }
    if (size >= 4)
        std::memcpy(m.data(), &id, 4);
    return m;
}
inline uint32_t message_id(const std::string& m) {
    uint32_t id = 0;
    if (m.size() >= 4)
        std::memcpy(&id, m.data(), 4);
    return id;
}
inline bool message_ok(const std::string& m) { return m == make_message(message_id(m), m.size()); }

// One side of a pair: its transport, the other side's peer id, and what arrived.
struct Side {
    sctpm_transport* t = nullptr;
    sctpm_peer other = -1;
    std::vector<std::string> messages; // complete messages, in delivery order
    std::vector<sctpm_peer> senders;
    std::vector<sctpm_event> events;
    std::map<uintptr_t, int> sent;     // cookie -> status of queued sends
    size_t head_limit = SIZE_MAX;      // consume at most this much of a head (exercises placement)
    size_t piece = 100000;             // iov piece size handed out by on_dest
    bool accept_hello = true;
    std::string peer_card;             // the other side's card text
    size_t completed = 0;              // messages fully placed (messages[] is in delivery order)
    // If set, decides every hello (blob as text, the sender's card); else the hello maps to `other`.
    std::function<sctpm_peer(Side&, const std::string& hello, const char* card)> on_hello;
    std::map<std::string, sctpm_peer> accepted; // for the hook's use: peers it created, by hello
    std::function<void(int entering)> on_block;  // if set: called around a blocked progress wait
    std::function<void(void* cookie, int status)> after_sent; // if set: called after a queued send completed
    // If set: names the peer to check for a hello whose association ended before its proof.
    std::function<sctpm_peer(Side&, const std::string& hello)> on_unproven_end;
    int stalls = 0; // on_stall calls (after each stall report)
    static bool is_failure(const sctpm_event& e) {
        return e.type == SCTPM_EV_ASSOC_LOST || e.type == SCTPM_EV_CANT_START || e.type == SCTPM_EV_PROTOCOL_ERROR ||
               e.type == SCTPM_EV_SEND_FAILED;
    }
    bool failed_event() const {
        for (const auto& e : events)
            if (is_failure(e))
                return true;
        return false;
    }
    const sctpm_event* failure_of(sctpm_peer p) const {
        for (const auto& e : events)
            if (is_failure(e) && e.peer == p)
                return &e;
        return nullptr;
    }
    // Progress until pred() or the deadline (seconds); returns pred().
    bool progress_until(const std::function<bool()>& pred, double seconds = 30) {
        auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (!pred() && std::chrono::steady_clock::now() < end)
            sctpm_progress(t, 10000);
        return pred();
    }
};

// A message being placed: several can be in flight at once (their bodies interleave across
// streams while their heads were delivered in order).
struct Incoming {
    Side* side;
    size_t slot;
    std::string buf;
    size_t pos = 0, given = 0;
};

inline size_t cb_message(void* ctx, sctpm_peer peer, uint64_t total, const void* head, size_t head_len, void** msg) {
    Side* s = static_cast<Side*>(ctx);
    size_t take = std::min(head_len, s->head_limit);
    s->messages.emplace_back();
    s->senders.push_back(peer);
    auto* in = new Incoming{s, s->messages.size() - 1, std::string(total, '\0')};
    std::memcpy(in->buf.data(), head, take);
    in->pos = in->given = take;
    if (take == total) {
        s->messages[in->slot] = std::move(in->buf);
        ++s->completed;
        delete in;
        *msg = nullptr;
    } else {
        *msg = in;
    }
    return take;
}

inline int cb_dest(void*, void* msg, struct iovec* iov, int max) {
    auto* in = static_cast<Incoming*>(msg);
    int n = 0;
    while (n < std::min(max, 3) && in->given < in->buf.size()) {
        size_t len = std::min(in->side->piece, in->buf.size() - in->given);
        iov[n].iov_base = in->buf.data() + in->given;
        iov[n].iov_len = len;
        in->given += len;
        ++n;
    }
    return n;
}

inline void cb_placed(void*, void* msg, size_t filled, int last) {
    auto* in = static_cast<Incoming*>(msg);
    in->pos += filled;
    if (last) {
        CHILD_CHECK(in->pos == in->buf.size(), "placed %zu of %zu bytes at the end of a message", in->pos, in->buf.size());
        in->side->messages[in->slot] = std::move(in->buf);
        ++in->side->completed;
        delete in;
    }
}

inline void cb_sent(void* ctx, void* cookie, int status) {
    Side* s = static_cast<Side*>(ctx);
    s->sent[reinterpret_cast<uintptr_t>(cookie)] = status;
    if (s->after_sent)
        s->after_sent(cookie, status);
}

inline void cb_event(void* ctx, const sctpm_event* ev) {
    static_cast<Side*>(ctx)->events.push_back(*ev);
    if (std::getenv("PAIR_TEST_VERBOSE"))
        std::fprintf(stderr, "[pid %d, %.3f s] event %d: %s\n", getpid(),
                     std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(),
                     ev->type, ev->detail);
}

inline sctpm_peer cb_hello(void* ctx, const void* hello, size_t len, const char* card) {
    Side* s = static_cast<Side*>(ctx);
    if (!s->accept_hello)
        return -1;
    if (s->on_hello)
        return s->on_hello(*s, std::string(static_cast<const char*>(hello), len), card);
    if (s->other < 0)
        s->other = sctpm_peer_add(s->t, card);
    return s->other;
}

inline sctpm_peer cb_unproven_end(void* ctx, const void* hello, size_t len) {
    Side* s = static_cast<Side*>(ctx);
    return s->on_unproven_end ? s->on_unproven_end(*s, std::string(static_cast<const char*>(hello), len)) : -1;
}

inline void cb_stall(void* ctx) {
    ++static_cast<Side*>(ctx)->stalls;
}

inline void cb_block(void* ctx, int entering) {
    Side* s = static_cast<Side*>(ctx);
    if (s->on_block)
        s->on_block(entering);
}

// Send msgs to the other side and wait until every queued send completed.
inline void send_all(Side& s, const std::vector<std::string>& msgs, sctpm_key key = {0, 0, 0}) {
    for (size_t i = 0; i < msgs.size(); ++i) {
        iovec v{const_cast<char*>(msgs[i].data()), msgs[i].size()};
        int rc = sctpm_send(s.t, s.other, &key, &v, 1, reinterpret_cast<void*>(i + 1));
        CHILD_CHECK(rc == 0 || rc == 1, "send %zu returned %d", i, rc);
        if (rc == 1)
            s.sent[i + 1] = 1; // pending
    }
    CHILD_CHECK(s.progress_until([&] {
        for (auto& [c, st] : s.sent)
            if (st == 1) return false;
        return true;
    }), "queued sends did not complete");
    for (auto& [c, st] : s.sent)
        CHILD_CHECK(st == 0, "send %zu completed with %d", size_t(c), st);
}

// Wait for n messages and check each one's bytes and position.
inline void expect_messages(Side& s, size_t n) {
    CHILD_CHECK(s.progress_until([&] { return s.completed >= n; }), "got %zu of %zu messages",
                s.completed, n);
    for (size_t i = 0; i < n; ++i) {
        CHILD_CHECK(message_ok(s.messages[i]), "message %zu (%zu bytes) corrupted", i, s.messages[i].size());
        CHILD_CHECK(message_id(s.messages[i]) == i, "message %zu arrived in position of %u", i, message_id(s.messages[i]));
    }
}

// Whether the environment puts the transports of a test on our own engine (stack=own), and
// whether their stack has SCTP-AUTH (auth=packet). Tests that run a variant with auth=packet leave
// it out where it does not, and say so.
inline bool stack_is_own() {
    char err[SCTPM_ERRLEN], stack[32] = "";
    sctpm_config* cfg = sctpm_config_from_env(err, sizeof err);
    if (!cfg)
        return false; // the test's own open reports the bad setting
    sctpm_config_get(cfg, "stack", stack, sizeof stack);
    sctpm_config_free(cfg);
    return std::strcmp(stack, "own") == 0;
}
inline bool stack_has_packet_auth() { return !stack_is_own(); }
inline bool skip_packet_auth_variant(const char* test) {
    if (stack_has_packet_auth())
        return false;
    std::printf("%s: the auth=packet variant is not run: stack=own has no SCTP-AUTH yet\n", test);
    return true;
}

using Role = std::function<void(Side&)>;
using Setup = std::function<void(sctpm_config*)>;

inline void set(sctpm_config* cfg, const char* key, const char* value) {
    char err[SCTPM_ERRLEN];
    if (sctpm_config_set(cfg, key, value, err, sizeof err) != 0) {
        std::fprintf(stderr, "config: %s\n", err);
        std::_Exit(2);
    }
}

// Child body: open, exchange cards over the pipes, run the role, close.
inline void run_child(const Role& role, const Setup& setup, int wr, int rd, bool knows_peer) {
    char err[SCTPM_ERRLEN];
    sctpm_config* cfg = sctpm_config_from_env(err, sizeof err);
    CHILD_CHECK(cfg, "%s", err);
    if (setup)
        setup(cfg);
    static Side side;
    sctpm_callbacks cb{&side, cb_message, cb_dest, cb_placed, cb_sent, cb_event, cb_hello, cb_block, cb_unproven_end, cb_stall};
    side.t = sctpm_open(cfg, nullptr, "test", 4, &cb, err, sizeof err);
    CHILD_CHECK(side.t, "sctpm_open: %s", err);
    sctpm_config_free(cfg);
    std::string card = sctpm_card(side.t);
    uint32_t len = static_cast<uint32_t>(card.size());
    CHILD_CHECK(write(wr, &len, 4) == 4 && write(wr, card.data(), len) == ssize_t(len), "pipe write");
    CHILD_CHECK(read(rd, &len, 4) == 4, "pipe read");
    std::string other(len, '\0');
    CHILD_CHECK(read(rd, other.data(), len) == ssize_t(len), "pipe read");
    side.peer_card = other;
    if (knows_peer) {
        side.other = sctpm_peer_add(side.t, other.c_str());
        CHILD_CHECK(side.other >= 0, "peer_add(%s): %s", other.c_str(), sctpm_last_error(side.t));
    }
    role(side);
    sctpm_close(side.t, 5000);
    std::_Exit(0);
}

// b learns a's card only through a's hello unless b_knows_a.
inline PairExit run_pair(const Role& a, const Role& b, const Setup& setup = {}, int timeout_s = 120,
                         bool b_knows_a = true) {
    return fork_pair([&](int rd, int wr) { run_child(a, setup, wr, rd, true); },
                     [&](int rd, int wr) { run_child(b, setup, wr, rd, b_knows_a); }, timeout_s);
}

// The same with settings of each side's own.
inline PairExit run_pair_configured(const Role& a, const Setup& setup_a, const Role& b, const Setup& setup_b,
                                    int timeout_s = 120) {
    return fork_pair([&](int rd, int wr) { run_child(a, setup_a, wr, rd, true); },
                     [&](int rd, int wr) { run_child(b, setup_b, wr, rd, true); }, timeout_s);
}

} // namespace pair_test
