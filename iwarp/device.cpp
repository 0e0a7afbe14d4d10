// SPDX-License-Identifier: BSD-3-Clause
// The simulated RNIC; see device.hpp.
#include "device.hpp"

#include "error.hpp"
#include "progress.hpp"
#include "settings.hpp"
#include "stack.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

namespace iwarp {

// usrsctp may call an upcall with the argument it was given even after the socket was closed
// (its upcall pointer is read without a lock, field notes §1.6), so the target outlives every
// socket: it is never freed, and its eventfd never closed (one per device opened). It may also
// call it with a null argument (device_upcall).
//
// As in the core's progress engine (src/progress.cpp): every upcall counts activity, and only a
// waiter that sleeps (or an owner polling the fd itself) costs a write; a spinning caller looks
// at the counter and runs the RNIC only when something happened.
struct UpcallTarget {
    int fd;
    std::atomic<uint64_t> activity{0};
    std::atomic<int> sleepers{0};
    std::atomic<bool> external{false}; // iwv_device_fd was handed out: always write
    std::atomic<bool> written{false};  // fd was written (stack=own: progress drains it)
    // Standby mode: the standby thread's own wake-up (so that it never drains what wakes the
    // owner), written only while the owner is away: upcalls run on the owner's thread while it is
    // in MPI (it holds the UDP socket), on usrsctp's receive thread once it is not.
    int standby_fd = -1;
    std::atomic<bool> standby_sleeping{false};
    std::atomic<int64_t> owner_polled_us{0}; // when the owner last drove progress
    std::atomic<bool> owner_waiting{false};  // the owner blocks where the device's fd wakes it
    std::atomic<int> owner_inside{0};        // the owner's calls under way in its progress engine or a post
    std::atomic<bool> standby_serving{false}; // the standby thread may be serving (owner_back waits)
    int64_t after_us = IWV_STANDBY_AFTER_US;  // the absence after which the standby thread serves
    // Microseconds until the owner counts as away: 0 once it is, -1 while it is in its progress
    // engine or blocks in its wait (its absence has not begun). Sequentially consistent:
    // owner_back's counterpart (Dekker's pattern).
    int64_t away_in_us() const {
        if (owner_waiting.load(std::memory_order_relaxed) || owner_inside.load() > 0) return -1;
        return std::max<int64_t>(0, owner_polled_us.load() + after_us - sctpm::now_us());
    }
    bool owner_away() const { return away_in_us() == 0; }
};

namespace {

// Standby mode: datagrams read per round while the owner is away, and how long each read keeps
// usrsctp's receive thread off the socket (past the next look: the thread and we would otherwise
// both wake for each packet). An owner back in MPI reads the socket itself (ch3's progress
// engine); one that never does (a verbs program in standby mode) can wait up to this long after
// an absence before the receive thread reads again.
constexpr int kStandbyReads = 16;
constexpr uint32_t kStandbyHoldUs = 20000;

// stack=own: the standby thread serves the endpoint once nobody has run the device for this long
// (the owner is in MPI without RDMA under way, or a verbs program in caller mode does not call
// in): the associations' SACKs, heartbeats and handshakes are then answered within this time,
// far inside the protocol's timers (RTO.Min, HB.interval: 100 ms and more).
constexpr int64_t kOwnNeglectUs = 20000;

// "a,b,c" -> {a, b, c}, empty items dropped.
std::vector<std::string> split_list(const std::string& list) {
    std::vector<std::string> out;
    for (size_t at = 0; at <= list.size();) {
        const size_t end = std::min(list.find(',', at), list.size());
        if (end > at) out.push_back(list.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

std::vector<UpcallTarget*>& upcall_targets() { // keeps them reachable (leak checkers) forever
    static std::vector<UpcallTarget*> v;
    return v;
}

const sctpm::Settings& stack_settings() {
    static const sctpm::Settings s = sctpm::load_settings_from_environment();
    return s;
}

void drain(int fd) {
    uint64_t v;
    while (read(fd, &v, sizeof v) > 0) {
    }
}

// The engine's clock (CLOCK_MONOTONIC, microseconds), which its deadlines and timer_fd_ use.
int64_t sctp_now() { return int64_t(sctpm::sctp::monotonic_us()); }

} // namespace

// usrsctp reads a socket's upcall and its argument one after the other without a lock: a
// reader that loaded the function just before SctpLlp::close (or ~DdpEndpoint) cleared both
// loads the argument just after, and calls us with null. That socket is being closed: nothing
// to signal.
void device_upcall(struct socket*, void* arg, int) {
    auto* t = static_cast<UpcallTarget*>(arg);
    if (!t) return;
    t->activity.fetch_add(1);
    if (t->sleepers.load() > 0 || t->external.load(std::memory_order_relaxed)) {
        uint64_t one = 1;
        (void)!write(t->fd, &one, sizeof one);
        t->written.store(true, std::memory_order_release);
    }
    if (t->standby_sleeping.load() && t->owner_away()) {
        uint64_t one = 1;
        (void)!write(t->standby_fd, &one, sizeof one);
    }
}

Device::Device(const iwv_device_attr& attr, iwv_device* handle)
    : handle_(handle), mode_(attr.progress), spin_us_(stack_settings().spin_us),
      requests_(std::chrono::milliseconds(attr.initiate_timeout_ms ? attr.initiate_timeout_ms : IWV_INITIATE_TIMEOUT_MS),
                attr.max_pending_requests ? attr.max_pending_requests : IWV_MAX_PENDING_REQUESTS),
      early_bytes_(attr.early_bytes ? attr.early_bytes : IWV_EARLY_BYTES) {
    const bool own = stack_settings().stack == sctpm::StackChoice::own;
    // On our own engine caller mode needs the standby thread too: nothing else answers peers.
    const bool standby_thread = mode_ == IWV_PROGRESS_STANDBY || (own && mode_ == IWV_PROGRESS_CALLER);
    if (!own) udp_port_ = sctpm::start_stack(stack_settings()).udp_port;
    static std::mutex targets_mu;
    {
        std::lock_guard<std::mutex> g(targets_mu);
        int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) throw sctpm::Error(std::string("iwarp: eventfd for the device: ") + std::strerror(errno));
        target_ = new UpcallTarget;
        target_->fd = fd;
        if (standby_thread) {
            if (attr.standby_after_us) target_->after_us = attr.standby_after_us;
            target_->standby_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
            if (target_->standby_fd < 0)
                throw sctpm::Error(std::string("iwarp: eventfd for the standby thread: ") + std::strerror(errno));
        }
        upcall_targets().push_back(target_);
    }
    AdapterConfig cfg;
    if (attr.bind_address) cfg.bind_addresses = split_list(attr.bind_address);
    cfg.sctp_port = attr.sctp_port;
    cfg.path_mtu = attr.path_mtu ? attr.path_mtu : stack_settings().path_mtu;
    cfg.max_segment = attr.max_segment;
    cfg.heartbeat_ms = stack_settings().heartbeat_ms; // the same path settings as the MPI socket's
    cfg.path_max_retrans = stack_settings().path_max_retrans;
    if (own) {
        own_ = std::make_unique<OwnDdpEndpoint>(cfg, stack_settings());
        timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        wait_fd_ = epoll_create1(EPOLL_CLOEXEC);
        if (timer_fd_ < 0 || wait_fd_ < 0)
            throw sctpm::Error(std::string("iwarp: timerfd or epoll for the device: ") + std::strerror(errno));
        for (int fd : {target_->fd, own_->fd(), timer_fd_}) {
            epoll_event e{};
            e.events = EPOLLIN;
            e.data.fd = fd;
            if (epoll_ctl(wait_fd_, EPOLL_CTL_ADD, fd, &e) != 0)
                throw sctpm::Error(std::string("iwarp: epoll_ctl for the device: ") + std::strerror(errno));
        }
        progressed_us_.store(sctpm::now_us());
    } else {
        endpoint_ = std::make_unique<DdpEndpoint>(cfg, device_upcall, target_);
    }
    if (mode_ == IWV_PROGRESS_THREAD) thread_ = std::thread([this] { thread_main(); });
    if (standby_thread) {
        target_->owner_polled_us.store(sctpm::now_us());
        thread_ = own ? std::thread([this] { own_standby_main(); }) : std::thread([this] { standby_main(); });
    }
}

Device::~Device() {
    {
        std::lock_guard<std::mutex> g(mu);
        stop_ = true;
    }
    if (target_->standby_fd >= 0) {
        uint64_t one = 1; // the standby thread sleeps on its own fd
        (void)!write(target_->standby_fd, &one, sizeof one);
    }
    signal();
    if (thread_.joinable()) thread_.join();
    requests_.clear();
    endpoint_.reset();
    own_.reset(); // ABORTs what is left
    if (wait_fd_ >= 0) close(wait_fd_);
    if (timer_fd_ >= 0) close(timer_fd_);
}

// stack=own has no upcalls: activity is counted when a look finds something for the device.
uint64_t Device::activity() const {
    if (own_ && own_news()) return target_->activity.fetch_add(1) + 1;
    return target_->activity.load();
}

bool Device::own_news() const {
    if (sctp_now() >= own_deadline_us_.load(std::memory_order_relaxed)) return true;
    pollfd p{own_->fd(), POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

int Device::fd() {
    target_->external.store(true);
    return own_ ? wait_fd_ : target_->fd;
}

void Device::signal() { device_upcall(nullptr, target_, 0); }

int Device::wait_fd(std::unique_lock<std::mutex>& lock, int timeout_ms) {
    const uint64_t seen = seen_activity_;
    lock.unlock();
    // Announce the sleep, then look once more: an upcall either sees a sleeper and writes, or
    // counted before, and then we do not sleep (both sides sequentially consistent).
    // First spin a little, as the core's progress does (spin_us): an answer is often that close.
    const auto spin_end = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
    while (activity() == seen && std::chrono::steady_clock::now() < spin_end) sched_yield();
    target_->sleepers.fetch_add(1);
    int rc = 1;
    if (activity() == seen) {
        pollfd p{own_ ? wait_fd_ : target_->fd, POLLIN, 0};
        rc = ::poll(&p, 1, timeout_ms);
    }
    target_->sleepers.fetch_sub(1);
    drain(target_->fd);
    lock.lock();
    return rc;
}

bool Device::idle_locked() {
    if (force_ || last_work_ > 0 || activity() != seen_activity_) return false;
    if (!any_tx_blocked()) return true;
    // A blocked sender is retried now and then: SCTP's window opening is not always signalled.
    const auto now = std::chrono::steady_clock::now();
    return now - last_progress_ < std::chrono::microseconds(20);
}

void Device::owner_present() {
    // Release: what the owner wrote before (CH3's accumulates, after owner_back) happens before a
    // standby service that starts because this mark grew old. Never earlier than a mark that
    // owner_back dated ahead (only the owner writes it).
    if (mode_ != IWV_PROGRESS_STANDBY) return;
    const int64_t mark = std::max(sctpm::now_us(), target_->owner_polled_us.load(std::memory_order_relaxed));
    target_->owner_polled_us.store(mark, std::memory_order_release);
}

void Device::owner_back() {
    if (mode_ != IWV_PROGRESS_STANDBY) return;
    // Dated ahead, so that no service starts for IWV_OWNER_BACK_GUARD_US (or after_us if longer).
    target_->owner_polled_us.store(sctpm::now_us() + std::max<int64_t>(0, IWV_OWNER_BACK_GUARD_US - target_->after_us));
    // A service under way ends before we go on; the next one sees us present and does not start.
    if (target_->standby_serving.load()) std::lock_guard<std::mutex> wait_for_it(mu);
}

void Device::owner_waiting(bool waiting) {
    owner_present();
    target_->owner_waiting.store(waiting, std::memory_order_relaxed);
}

void Device::owner_inside(bool inside) {
    if (mode_ != IWV_PROGRESS_STANDBY) return;
    if (!inside) owner_present(); // its absence starts now, not at its last round's start
    target_->owner_inside.fetch_add(inside ? 1 : -1);
}

int Device::poll_locked() { return idle_locked() ? 0 : progress_locked(); }

void Device::wait_for_work(std::unique_lock<std::mutex>& lock, int timeout_ms) {
    if (!idle_locked()) return;
    wait_fd(lock, timeout_ms < 0 ? 100 : any_tx_blocked() ? std::min(timeout_ms, 1) : timeout_ms);
}

void Device::thread_main() {
    std::unique_lock<std::mutex> lock(mu);
    int work = 0;
    while (!stop_) {
        // Block only when idle; a blocked sender is retried every millisecond as well, since
        // SCTP's window opening is not always followed by an upcall.
        if (work == 0) wait_fd(lock, any_tx_blocked() ? 1 : 50);
        if (stop_) break;
        work = progress_locked();
    }
}

// Standby mode. While the owner is in MPI (in its progress engine or a post, blocked in its wait,
// or out of them for less than after_us), the thread only looks now and then whether it left
// (standby_wait). Once the owner is away (it computes), the thread reads the stack's UDP socket
// itself and holds it (usrsctp's receive thread would read only when the owner's own hold on it
// has run out, a millisecond after its last read), then places and answers what arrived, and
// sleeps until a packet or an upcall comes; it never spins (the computation needs the core).
// Reading the socket needs no lock of ours; the RNIC's work runs under mu, with standby_serving
// raised for owner_back.
void Device::standby_main() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stop_) {
        int reads = 0;
        if (target_->owner_away()) {
            lock.unlock();
            reads = sctpm::udp_input(kStandbyReads, kStandbyHoldUs);
            lock.lock();
            if (stop_) break;
        }
        target_->standby_serving.store(true);
        const bool served = target_->owner_away() && progress_locked() > 0;
        target_->standby_serving.store(false);
        if (!served && reads <= 0) standby_wait(lock);
    }
}

// Until an upcall or a packet on the UDP socket while the owner is away (we read it then), or
// the moment its absence begins. Announce the sleep, then look once more, as wait_fd does. The
// looks that watch for the owner leaving (every after_us while it runs in MPI) are taken only
// while the RNIC is keen (it had traffic within kStandbyKeenUs): each takes a core from a process
// that runs in MPI for a moment (8-byte osu_put_latency, which leaves the RNIC idle, was 1.10x
// with them every 250 us). Otherwise it looks every kStandbyLookUs, and an upcall from usrsctp's
// receive thread (which reads once the owner's hold runs out, a millisecond after it leaves)
// wakes it for traffic that comes while the owner is away.
void Device::standby_wait(std::unique_lock<std::mutex>& lock) {
    constexpr int64_t kStandbyLookUs = 10000;
    constexpr int64_t kStandbyKeenUs = 100000;
    const uint64_t seen = seen_activity_;
    lock.unlock();
    target_->standby_sleeping.store(true);
    for (bool woken = false; !woken;) { // the destructor writes standby_fd
        const int64_t now = sctpm::now_us();
        const uint64_t activity = target_->activity.load();
        if (activity != standby_activity_) {
            standby_activity_ = activity;
            standby_active_us_ = now;
        }
        const int64_t away_in = target_->away_in_us();
        if (away_in == 0 && activity != seen) break;
        const bool keen = now - standby_active_us_ < kStandbyKeenUs;
        const int64_t us = away_in == 0 || !keen || target_->owner_waiting.load(std::memory_order_relaxed) ? kStandbyLookUs
                           : away_in > 0                                                               ? away_in
                                                                                                       : target_->after_us;
        pollfd p[2] = {{target_->standby_fd, POLLIN, 0}, {sctpm::udp_input_fd(), POLLIN, 0}};
        const timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
        const int ready = ::ppoll(p, away_in == 0 && p[1].fd >= 0 ? 2 : 1, &ts, nullptr);
        // Back to the device's lock only for a reason: a wake-up, a look while the owner is away,
        // or its absence begun; a look that finds it in MPI costs no lock and no read.
        woken = ready != 0 || away_in == 0 || target_->owner_away();
    }
    target_->standby_sleeping.store(false);
    drain(target_->standby_fd);
    lock.lock();
}

// stack=own. What progress (or a user call) queued leaves now; then the timer in the device's
// epoll set is moved to the engine's next deadline, so that whoever waits on it (ch3's progress
// engine, the standby thread) wakes when a protocol timer is due. It is set again only when it
// must fire earlier or has fired: a timer that fires early costs one idle round, a system call
// per round would cost every round.
void Device::own_after_progress() {
    own_->flush();
    const auto next = own_->next_deadline();
    const int64_t deadline = next ? *next : INT64_MAX;
    own_deadline_us_.store(deadline, std::memory_order_relaxed);
    const bool fired = armed_us_ <= sctp_now();
    if (deadline >= armed_us_ && !fired) return;
    if (fired) drain(timer_fd_);
    itimerspec when{}; // all zero: disarmed
    if (deadline != INT64_MAX) {
        const int64_t at = std::max<int64_t>(deadline, 1);
        when.it_value.tv_sec = time_t(at / 1000000);
        when.it_value.tv_nsec = long(at % 1000000) * 1000;
    }
    (void)timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &when, nullptr);
    armed_us_ = deadline;
}

bool Device::own_neglected(int64_t now) const {
    // Not while owner_back's guard holds (it dates the owner's presence ahead): the owner is about
    // to apply an accumulate to its own window with plain loads and stores.
    return now - progressed_us_.load(std::memory_order_relaxed) >= kOwnNeglectUs &&
           now >= target_->owner_polled_us.load();
}

// stack=own, progress=standby or caller. Nothing reads the endpoint's socket unless the device
// runs: the owner runs it from its progress engine (ch3:hybrid, while it has windows or transfers
// under way) or by iwv_progress. This thread serves it in full when the owner is away
// (progress=standby: it computes outside MPI; as standby_main does on usrsctp). When nobody has
// run the device for kOwnNeglectUs it does only what usrsctp's threads would do: SCTP (SACKs,
// heartbeats, handshakes), with messages queued on their associations and the owner told; the
// queue pairs, and so the windows' memory, stay the owner's (caller mode, and an owner in MPI
// that may be applying an accumulate to its own window).
void Device::own_standby_main() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stop_) {
        const bool away = mode_ == IWV_PROGRESS_STANDBY && target_->owner_away();
        int work = 0;
        if (away) {
            target_->standby_serving.store(true);
            work = progress_locked();
            target_->standby_serving.store(false);
        } else if (own_neglected(sctpm::now_us())) {
            work = progress_locked(false);
            if (work) signal(); // the owner's next look finds news
        }
        if (work == 0) own_standby_wait(lock);
    }
}

// Until there is something to serve (a packet, a due timer: the device's epoll set) while the
// owner is away or the device neglected, or until one of those begins; the destructor's write to
// standby_fd ends it too. While the owner runs the device the thread only looks, at the moment
// the device would count as neglected.
void Device::own_standby_wait(std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    target_->standby_sleeping.store(true);
    for (;;) {
        const int64_t now = sctpm::now_us();
        const int64_t away_in = mode_ == IWV_PROGRESS_STANDBY ? target_->away_in_us() : -1;
        const bool watch = away_in == 0 || own_neglected(now);
        int64_t us = kOwnNeglectUs;
        if (!watch) {
            us = std::max<int64_t>(1, progressed_us_.load(std::memory_order_relaxed) + kOwnNeglectUs - now);
            if (away_in > 0) us = std::min(us, away_in);
        }
        pollfd p[2] = {{target_->standby_fd, POLLIN, 0}, {wait_fd_, POLLIN, 0}};
        const timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
        if (::ppoll(p, watch ? 2 : 1, &ts, nullptr) > 0) break;
    }
    target_->standby_sleeping.store(false);
    drain(target_->standby_fd);
    lock.lock();
}

bool Device::any_tx_blocked() const {
    for (iwv_qp* qp : qps_)
        if (qp->q->tx_blocked()) return true;
    return false;
}

void Device::remove_qp(iwv_qp* qp) {
    qps_.erase(qp);
    for (auto it = connecting_.begin(); it != connecting_.end();)
        it = it->second.qp == qp ? connecting_.erase(it) : std::next(it);
    for (auto it = events_.begin(); it != events_.end();)
        it = it->qp == qp ? events_.erase(it) : std::next(it);
    events_changed();
}

int Device::progress_locked(bool queue_pairs) {
    // Taken first: whatever an upcall (stack=own: a look that finds something) reports from now
    // on is new. The count only, not a look: this round reads the socket anyway.
    seen_activity_ = target_->activity.load();
    force_ = false;
    last_progress_ = std::chrono::steady_clock::now();
    int work = 0;
    std::vector<AssociationUp> up;
    std::vector<AssociationFailed> failed;
    if (own_) {
        // The eventfd is in the device's epoll set: a write to it must not keep the set readable.
        if (target_->written.exchange(false, std::memory_order_acq_rel)) drain(target_->fd);
        progressed_us_.store(sctpm::now_us(), std::memory_order_relaxed);
        work += int(own_->poll(up, failed));
    } else {
        endpoint_->poll(up, failed);
    }
    for (auto& u : up) {
        ++work;
        auto it = connecting_.find(u.assoc);
        if (it != connecting_.end()) {
            Connecting c = std::move(it->second);
            connecting_.erase(it);
            c.qp->q->start_active(std::move(u.llp), c.mine, c.private_data);
        } else {
            requests_.add(std::move(u.llp), this, std::chrono::steady_clock::now());
        }
    }
    for (auto& f : failed) {
        ++work;
        auto it = connecting_.find(f.assoc);
        if (it != connecting_.end()) {
            it->second.qp->q->fail_connect(f.why);
            connecting_.erase(it);
        }
    }
    if (requests_.progress(std::chrono::steady_clock::now(), events_) > 0) {
        events_changed();
        changed.notify_all();
    }
    if (queue_pairs)
        for (iwv_qp* qp : qps_) work += qp->q->progress();
    if (own_) own_after_progress();
    collect_events();
    if (work) changed.notify_all();
    last_work_ = work; // more may be waiting (receive() stops after a batch): run again
    return work;
}

void Device::collect_events() {
    for (iwv_qp* qp : qps_)
        for (QpEvent& e : qp->q->take_events()) {
            iwv_event ev{};
            ev.type = e.type;
            ev.qp = qp;
            e.detail.copy(ev.detail, sizeof ev.detail - 1);
            if (e.control) {
                if (e.control->ird_ord) {
                    ev.ird = e.control->ird_ord->ird;
                    ev.ord = e.control->ird_ord->ord;
                }
                ev.private_data_len = uint16_t(std::min<size_t>(e.control->private_data.size(), IWV_MAX_PRIVATE_DATA));
                if (ev.private_data_len) // none: data() may be null, which memcpy must not get
                    std::memcpy(ev.private_data, e.control->private_data.data(), ev.private_data_len);
            }
            events_.push_back(ev);
            events_changed();
        }
}

void Device::after_user_call() {
    // The call may have run long (a post copies what it sends into the association): the owner
    // was there all along, not away since the call began.
    owner_present();
    if (own_) own_after_progress(); // what the call queued leaves now
    collect_events();
    changed.notify_all();
    force_ = true; // the call may have left work that no upcall will announce
    if (mode_ == IWV_PROGRESS_THREAD) signal();
}

std::optional<iwv_event> Device::next_event() {
    if (events_.empty()) return std::nullopt;
    iwv_event e = events_.front();
    events_.pop_front();
    events_changed();
    return e;
}

int Device::connect(iwv_qp* qp, const std::string& address, uint16_t sctp_port, uint16_t udp_port,
                    IrdOrdPair mine, std::vector<uint8_t> private_data) {
    if (qp->q->state() != IWV_QPS_INIT || qp->q->connected()) {
        last_error = "iwv_connect: the QP must be in INIT and unconnected";
        return EINVAL;
    }
    try {
        const uint32_t assoc = own_ ? own_->connect(address, sctp_port, udp_port)
                                    : endpoint_->connect(address, sctp_port, udp_port);
        connecting_[assoc] = Connecting{qp, mine, std::move(private_data)};
    } catch (const sctpm::Error& e) {
        last_error = e.what();
        return EHOSTUNREACH;
    }
    qp->q->connecting();
    return 0;
}

std::unique_ptr<SctpLlp> Device::adopt_socket(struct socket* so, bool one_to_many, uint32_t assoc) {
    if (own_) throw sctpm::Error("iwv_adopt: adopts usrsctp sockets, and this device runs on stack=own");
    return one_to_many ? endpoint_->adopt(so, assoc) : endpoint_->adopt(so);
}

int Device::adopt(iwv_qp* qp, std::unique_ptr<Llp> llp, bool active, IrdOrdPair mine, std::vector<uint8_t> private_data) {
    if (qp->q->state() != IWV_QPS_INIT || qp->q->connected()) {
        last_error = "iwv_adopt: the QP must be in INIT and unconnected";
        return EINVAL;
    }
    if (active) {
        qp->q->connecting();
        qp->q->start_active(std::move(llp), mine, private_data);
    } else {
        // Waits for its Initiate from now on, within the same bounds as an association accepted
        // by the endpoint (its time used to start at the clock's epoch: dropped at once).
        requests_.add(std::move(llp), this, std::chrono::steady_clock::now());
    }
    return 0;
}

int Device::accept(iwv_conn_request* req, iwv_qp* qp, IrdOrdPair mine, std::span<const uint8_t> private_data) {
    if (!requests_.find_announced(req)) {
        last_error = "iwv_accept: unknown or unannounced connection request";
        return EINVAL;
    }
    if (qp->q->state() != IWV_QPS_INIT || qp->q->connected()) {
        last_error = "iwv_accept: the QP must be in INIT and unconnected";
        return EINVAL;
    }
    std::unique_ptr<iwv_conn_request> owned = requests_.take(req);
    try {
        qp->q->start_passive(std::move(owned->llp), std::move(owned->session), mine, private_data);
    } catch (const sctpm::Error& e) {
        last_error = e.what();
        return EINVAL;
    }
    return 0;
}

int Device::reject(iwv_conn_request* req, std::span<const uint8_t> private_data) {
    if (!requests_.find_announced(req)) {
        last_error = "iwv_reject: unknown or unannounced connection request";
        return EINVAL;
    }
    try {
        auto m = req->session.reject(private_data);
        req->llp->send(kPpidSessionControl, m.data(), m.size());
    } catch (const sctpm::Error& e) {
        last_error = e.what();
        return EINVAL;
    }
    req->llp->close(false); // graceful: SHUTDOWN after the Reject
    requests_.take(req);
    return 0;
}

} // namespace iwarp
