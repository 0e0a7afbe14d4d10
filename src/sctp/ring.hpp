// SPDX-License-Identifier: BSD-3-Clause
// Ring<T>: a growable circular queue (power-of-two capacity) with O(1) push/pop at both ends and
// random access from the front. The engine's queues (messages, chunks in flight, events) live in
// these so that steady-state traffic allocates nothing.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace sctpm::sctp {

template <class T> class Ring {
public:
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T& front() { return v_[head_]; }
    T& back() { return v_[(head_ + size_ - 1) & mask_]; }
    T& operator[](size_t i) { return v_[(head_ + i) & mask_]; }
    const T& operator[](size_t i) const { return v_[(head_ + i) & mask_]; }

    T& push_back(T&& x) {
        if (size_ == v_.size())
            grow();
        T& slot = v_[(head_ + size_) & mask_];
        slot = std::move(x);
        ++size_;
        return slot;
    }
    T& push_back(const T& x) {
        T copy = x;
        return push_back(std::move(copy));
    }
    // A slot at the back, reused as it was left (callers reset what they use).
    T& emplace_back_reuse() {
        if (size_ == v_.size())
            grow();
        ++size_;
        return back();
    }
    void pop_front() {
        head_ = (head_ + 1) & mask_;
        --size_;
    }
    void pop_back() { --size_; }
    void clear() {
        head_ = 0;
        size_ = 0;
    }

private:
    void grow() {
        size_t n = v_.empty() ? 16 : v_.size() * 2;
        std::vector<T> w(n);
        for (size_t i = 0; i < size_; ++i)
            w[i] = std::move(v_[(head_ + i) & mask_]);
        v_.swap(w);
        head_ = 0;
        mask_ = n - 1;
    }
    std::vector<T> v_;
    size_t head_ = 0;
    size_t size_ = 0;
    size_t mask_ = 0;
};

} // namespace sctpm::sctp
