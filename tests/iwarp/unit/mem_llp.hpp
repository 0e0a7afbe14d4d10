// SPDX-License-Identifier: BSD-3-Clause
// An in-memory LLP pair for engine tests: whole messages with a PPID, read in pieces like
// usrsctp's SOCK_SEQPACKET, optionally held back and released in a scrambled order (what
// unordered SCTP delivery may do after loss), or with a hook that edits a message in flight.
#pragma once
#include "llp.hpp"
#include "wire.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <vector>

namespace memllp {

struct Message {
    uint32_t ppid;
    std::vector<uint8_t> bytes;
};

struct Queue {
    std::deque<Message> ready;
    std::vector<Message> held;
    bool hold = false;
    bool closed = false;
    std::function<void(Message&)> tamper; // edits each message as it is sent
    size_t max_queued = SIZE_MAX;         // refuse sends beyond this many ready messages (EWOULDBLOCK)

    // Release held messages in a scrambled order.
    void release(uint32_t seed) {
        std::mt19937 rng(seed);
        std::shuffle(held.begin(), held.end(), rng);
        for (auto& m : held) ready.push_back(std::move(m));
        held.clear();
    }
};

class MemLlp : public iwarp::Llp {
public:
    MemLlp(std::shared_ptr<Queue> in, std::shared_ptr<Queue> out, size_t max_message)
        : in_(std::move(in)), out_(std::move(out)), max_(max_message) {}

    long send(uint32_t ppid, const void* data, size_t len) override {
        if (out_->closed) return -EPIPE;
        if (out_->ready.size() >= out_->max_queued) return -EWOULDBLOCK;
        Message m{ppid, std::vector<uint8_t>(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + len)};
        if (out_->tamper) out_->tamper(m);
        (out_->hold ? out_->held.push_back(std::move(m)) : out_->ready.push_back(std::move(m)));
        ++sent;
        return long(len);
    }

    iwarp::LlpRead read(void* buf, size_t len) override {
        iwarp::LlpRead r;
        if (in_->ready.empty()) {
            if (in_->closed) {
                r.closed = true;
                r.why = "closed";
            } else {
                r.n = -EWOULDBLOCK;
            }
            return r;
        }
        Message& m = in_->ready.front();
        const bool first = offset_ == 0;
        const size_t take = std::min(len, m.bytes.size() - offset_);
        if (take) std::memcpy(buf, m.bytes.data() + offset_, take); // an empty message has no data()
        offset_ += take;
        r.n = long(take);
        if (first) r.ppid = m.ppid;
        if (offset_ == m.bytes.size()) {
            r.eor = true;
            offset_ = 0;
            in_->ready.pop_front();
        }
        return r;
    }

    size_t max_message() const override { return max_; }
    void close(bool) override {
        out_->closed = true;
        in_->closed = true;
    }
    size_t sent = 0;

private:
    std::shared_ptr<Queue> in_, out_;
    size_t max_;
    size_t offset_ = 0;
};

// Two connected ends: a writes into ab, b into ba.
struct Pair {
    std::shared_ptr<Queue> ab = std::make_shared<Queue>(), ba = std::make_shared<Queue>();
    std::unique_ptr<MemLlp> a(size_t max) { return std::make_unique<MemLlp>(ba, ab, max); }
    std::unique_ptr<MemLlp> b(size_t max) { return std::make_unique<MemLlp>(ab, ba, max); }
};

} // namespace memllp
