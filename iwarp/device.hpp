// SPDX-License-Identifier: BSD-3-Clause
// The simulated RNIC: one DDP endpoint, the STag table, the QPs and CQs, connection management,
// and the progress engine (a device thread, or the caller's loop). Behind the C handles of
// iwarp_verbs.h; verbs.cpp is the thin C layer on top.
//
// Locking: one mutex per device (Device::mu) taken by every verbs call; progress runs under it.
// usrsctp's threads never take it: their upcall only writes the device's eventfd. On our own
// engine (stack=own) there are no upcalls: progress reads the endpoint's UDP socket itself, and
// the device's fd is an epoll set of its eventfd, that socket and a timer at the engine's next
// deadline; a standby thread serves the endpoint when nobody else has for a while (device.cpp).
#pragma once
#include "adaptation.hpp"
#include "cq.hpp"
#include "iwarp_verbs.h"
#include "memory.hpp"
#include "own_adaptation.hpp"
#include "qp.hpp"
#include "requests.hpp"
#include "session.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace iwarp {
class Device;
}

struct iwv_device {
    std::unique_ptr<iwarp::Device> impl;
};
struct iwv_pd {
    iwv_device* dev;
    iwarp::PdHandle handle;
    int users; // MRs and QPs
};
struct iwv_cq {
    iwv_device* dev;
    std::unique_ptr<iwarp::CompletionQueue> q;
};
struct iwv_qp {
    iwv_device* dev;
    iwv_pd* pd;
    iwv_cq* send_cq;
    iwv_cq* recv_cq;
    void* context;
    std::unique_ptr<iwarp::QueuePair> q;
};
namespace iwarp {

// The upcall of every socket of a device; `target` is the device's (never freed). usrsctp may call
// it with a null target while the socket is closed (device.cpp): it then does nothing.
void device_upcall(struct socket* so, void* target, int flags);

class Device {
public:
    Device(const iwv_device_attr& attr, iwv_device* handle);
    ~Device();

    std::mutex mu;
    std::condition_variable changed; // CQ entries or connection events appeared
    StagTable stags;
    std::string last_error;
    int pds = 0, cqs = 0, qps = 0;

    uint16_t sctp_port() const { return own_ ? own_->port() : endpoint_->port(); }
    uint16_t udp_port() const { return own_ ? own_->port() : udp_port_; }
    iwv_progress_mode mode() const { return mode_; }
    bool owner_drives() const { return mode_ != IWV_PROGRESS_THREAD; } // caller and standby modes
    uint64_t early_bytes() const { return early_bytes_; } // each new QP's bound (iwv_device_attr)
    int fd();
    void owner_present(); // standby mode: the owner drives progress (lock-free)
    void owner_back();    // ... and no standby service runs from now on (waits for one under way)
    void owner_waiting(bool waiting); // standby mode: the owner blocks on our fd (lock-free)
    void owner_inside(bool inside);   // standby mode: the owner enters (leaves) its progress engine or a long call (lock-free, nests)
    uint64_t activity() const; // upcalls so far (lock-free: for a caller's spin loop) // from then on every upcall writes it (the owner polls it)

    // All below: with mu held.
    int progress_locked(bool queue_pairs = true); // false: the endpoint only (stack=own's standby)
    int poll_locked();      // progress_locked, unless nothing happened since the last round
    // Caller mode: block until an upcall reports activity (or timeout_ms, -1 = 100 ms), unless
    // there is work already.
    void wait_for_work(std::unique_lock<std::mutex>& lock, int timeout_ms);
    void after_user_call(); // collect QP events; wake the device thread and waiters
    void add_qp(iwv_qp* qp) { qps_.insert(qp); }
    void remove_qp(iwv_qp* qp);
    bool any_tx_blocked() const;

    int connect(iwv_qp* qp, const std::string& address, uint16_t sctp_port, uint16_t udp_port,
                IrdOrdPair mine, std::vector<uint8_t> private_data);
    int adopt(iwv_qp* qp, std::unique_ptr<Llp> llp, bool active, IrdOrdPair mine, std::vector<uint8_t> private_data);
    std::unique_ptr<SctpLlp> adopt_socket(struct socket* so, bool one_to_many, uint32_t assoc); // usrsctp only
    int accept(iwv_conn_request* req, iwv_qp* qp, IrdOrdPair mine, std::span<const uint8_t> private_data);
    int reject(iwv_conn_request* req, std::span<const uint8_t> private_data);
    std::optional<iwv_event> next_event();
    bool events_waiting() const { return event_count_.load(std::memory_order_acquire) != 0; } // no lock needed

    // Wait (mu held through `lock`) until pred or timeout; drives progress in caller mode.
    template <class Pred>
    bool wait(std::unique_lock<std::mutex>& lock, int timeout_ms, Pred pred);

private:
    void collect_events();
    void signal();
    bool idle_locked();
    void thread_main();
    void standby_main();
    void standby_wait(std::unique_lock<std::mutex>& lock);
    int wait_fd(std::unique_lock<std::mutex>& lock, int timeout_ms);
    // Our own engine (stack=own):
    bool own_news() const;          // a packet waits or a timer is due (no lock)
    void own_after_progress();      // sends, and sets the timer to the engine's next deadline
    void own_standby_main();        // serves the endpoint when nobody has for kOwnNeglectUs
    void own_standby_wait(std::unique_lock<std::mutex>& lock);
    bool own_neglected(int64_t now) const; // nobody ran the device for a while, and no guard holds

    iwv_device* handle_;
    iwv_progress_mode mode_;
    uint32_t spin_us_; // busy-poll before sleeping (the stack's spin_us setting)
    uint16_t udp_port_ = 0;
    struct UpcallTarget* target_ = nullptr;
    std::unique_ptr<DdpEndpoint> endpoint_;   // stack=usrsctp
    std::unique_ptr<OwnDdpEndpoint> own_;     // stack=own
    int wait_fd_ = -1;                        // own: epoll of target_->fd, the UDP socket, timer_fd_
    int timer_fd_ = -1;                       // own: a timerfd at the engine's next deadline
    int64_t armed_us_ = INT64_MAX;            // own: when timer_fd_ fires (monotonic us)
    std::atomic<int64_t> progressed_us_{0};   // own: when a progress round last ran
    std::atomic<int64_t> own_deadline_us_{INT64_MAX}; // own: the engine's next deadline, for own_news
    struct Connecting {
        iwv_qp* qp;
        IrdOrdPair mine;
        std::vector<uint8_t> private_data;
    };
    std::map<uint32_t, Connecting> connecting_; // active connects by association id
    ConnRequests requests_; // passive associations until accepted or rejected
    uint64_t early_bytes_;  // each new QP's bound on messages held ahead of a hole
    std::set<iwv_qp*> qps_;
    std::deque<iwv_event> events_;
    std::atomic<size_t> event_count_{0}; // events_.size(), for events_waiting()
    void events_changed() { event_count_.store(events_.size(), std::memory_order_release); }
    std::thread thread_;
    bool stop_ = false;
    uint64_t standby_activity_ = 0; // standby thread only: the upcall count it last saw move,
    int64_t standby_active_us_ = 0; // ... and when
    uint64_t seen_activity_ = 0; // upcall count when the last progress round began
    int last_work_ = 0;          // work that round did
    bool force_ = false;         // a user call changed state: the next round must run
    std::chrono::steady_clock::time_point last_progress_{};
};

template <class Pred>
bool Device::wait(std::unique_lock<std::mutex>& lock, int timeout_ms, Pred pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
    for (;;) {
        if (owner_drives()) {
            owner_present();
            poll_locked(); // a full round only if something happened
        }
        if (pred()) return true;
        const auto now = std::chrono::steady_clock::now();
        if (timeout_ms >= 0 && now >= deadline) return false;
        const int left = timeout_ms < 0 ? 100
                                        : int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1;
        if (owner_drives())
            wait_fd(lock, any_tx_blocked() ? 1 : std::min(left, 100));
        else
            changed.wait_for(lock, std::chrono::milliseconds(std::min(left, 100)));
    }
}

} // namespace iwarp
