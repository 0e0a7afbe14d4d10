// SPDX-License-Identifier: BSD-3-Clause
#include "transport.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <netdb.h>
#include <sched.h>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

#include "error.hpp"
#include "hello_auth.hpp"
#include "multihome.hpp"
#include "own_socket.hpp"
#include "rails.hpp"

namespace sctpm {

// usrsctp reads a socket's upcall and its argument without a lock, so it may still call the upcall
// (or call it with a null argument) after it was cleared and the socket closed (iwarp/device.cpp
// guards its own for the same reason). So the argument is never freed, and a transport going away
// detaches its Progress and waits out the upcalls already inside before the Progress goes.
struct UpcallTarget {
    std::atomic<Progress*> progress{nullptr};
    std::atomic<int> inside{0};
};

namespace {

void upcall(struct socket*, void* arg, int) {
    auto* t = static_cast<UpcallTarget*>(arg);
    if (!t)
        return;
    // Sequentially consistent, against detach_upcall's store and load: either that store comes
    // first and we see no Progress, or our count comes first and the detach waits for us.
    t->inside.fetch_add(1);
    if (Progress* p = t->progress.load())
        p->signal();
    t->inside.fetch_sub(1);
}

UpcallTarget* new_upcall_target(Progress* p) {
    static std::mutex mu;
    static auto* every = new std::vector<UpcallTarget*>; // reachable for leak checkers, for ever
    std::lock_guard<std::mutex> g(mu);
    every->push_back(new UpcallTarget);
    every->back()->progress.store(p);
    return every->back();
}

void detach_upcall(UpcallTarget* t) {
    t->progress.store(nullptr);
    while (t->inside.load() != 0)
        sched_yield();
}

std::vector<std::string> resolve(const std::string& name) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0)
        return {};
    std::vector<std::string> out;
    for (addrinfo* a = res; a; a = a->ai_next) {
        std::string t = address_text(a->ai_addr);
        if (std::find(out.begin(), out.end(), t) == out.end())
            out.push_back(t);
    }
    freeaddrinfo(res);
    return out;
}

std::string local_hostname() {
    char buf[256] = {};
    gethostname(buf, sizeof buf - 1);
    return buf;
}

} // namespace

std::vector<std::string> choose_bind_addresses(const Settings& s, const std::string& hostname) {
    const std::string host = hostname.empty() ? local_hostname() : hostname;
    if (!s.rails.empty()) {
        auto not_also = [&](const char* key, const std::string& other) {
            if (!other.empty())
                throw Error("rails ('" + s.rails + "') and " + key + " ('" + other +
                            "') are both set: they choose the addresses two ways, use one of them");
        };
        not_also("multihome_file", s.multihome_file);
        not_also("interface_hostname", s.interface_hostname);
        return rail_addresses(parse_rails("rails", s.rails), local_addresses(), host);
    }
    if (!s.interface_hostname.empty()) {
        auto addrs = resolve(s.interface_hostname);
        if (addrs.empty())
            throw Error("interface hostname '" + s.interface_hostname + "' does not resolve to an address");
        return addrs;
    }
    if (!s.multihome_file.empty())
        return load_multihome(s.multihome_file).addresses_for(host);
    if (s.bind_all)
        return {};
    // Default: the host name's addresses that exist here, else loopback (single-host runs).
    const auto local = interface_addresses();
    std::vector<std::string> chosen;
    for (const auto& a : resolve(host))
        if (std::find(local.begin(), local.end(), a) != local.end() && a.rfind("127.", 0) != 0 && a != "::1")
            chosen.push_back(a);
    if (chosen.empty())
        chosen.push_back("127.0.0.1");
    return chosen;
}

Transport::Transport(const Settings& s, std::string hello, const sctpm_callbacks& cb)
    : s_(s), map_(s.stream_policy, s.streams), cb_(cb), hello_(std::move(hello)),
      // Unset: room for one whole fragment. Our own peers hold a new link's messages behind its
      // hello (Peer::link_known), so only a stranger or another implementation sends more.
      pre_hello_bound_("pre_hello_bytes", s.pre_hello_bytes ? s.pre_hello_bytes
                                                            : uint64_t{s.fragment_size} + kFrameHeaderSize + kHeldItemOverhead),
      reorder_bound_("reorder_bytes", s.reorder_bytes) {
    if (kNonceBytes + 2 + hello_.size() + SCTPM_CARD_MAX > kMaxHelloBytes)
        throw Error("hello blob of " + std::to_string(hello_.size()) + " bytes is too large");
    limits_.max_fragment = s_.fragment_size;
    limits_.max_message = s_.max_message;
}

// Once this delegating constructor's body runs, a throw runs the destructor: it copes with no
// socket and no upcall yet.
Transport::Transport(const Settings& s, const std::string& hostname, std::string hello,
                     const sctpm_callbacks& cb)
    : Transport(s, std::move(hello), cb) {
    std::vector<std::string> addrs = choose_bind_addresses(s_, hostname);
    if (s_.stack == StackChoice::own) {
        auto own = std::make_unique<OwnSocket>(s_, addrs);
        const uint16_t port = own->port();
        attach_socket(std::move(own), port);
        return;
    }
    stack_ = start_stack(s_);
    attach_socket(std::make_unique<Endpoint>(s_, stack_.udp_port, addrs), stack_.udp_port);
}

Transport::Transport(const Settings& s, std::unique_ptr<SctpSocket> socket, uint16_t port, std::string hello,
                     const sctpm_callbacks& cb)
    : Transport(s, std::move(hello), cb) {
    attach_socket(std::move(socket), port);
}

void Transport::attach_socket(std::unique_ptr<SctpSocket> socket, uint16_t port) {
    ep_ = std::move(socket);
    Card c;
    c.udp_port = port;
    c.sctp_port = port;
    c.addresses = ep_->local_addresses();
    hello_card_ = format_card(c);
    key_ = c.key = random_bytes(kAuthKeyBytes);
    card_ = format_card(c);
    rxbuf_.resize(kFrameHeaderSize + std::max<size_t>(s_.head_bytes, kMaxHelloBytes));
    txbuf_.resize(kFrameHeaderSize + s_.fragment_size);
    progress_.set_spin_adapt(s_.spin_adapt);
    progress_.add_stage("read", [this] { return read_stage(); });
    progress_.add_stage("write", [this] { return write_stage(); });
    if (auto in = ep_->caller_input()) { // our own engine: the progress engine is its only driver
        progress_.set_input(in->input, in->fd);
        progress_.set_input_timer(in->next_timer_us);
        input_from_socket_ = true;
    } else if (s_.caller_input) {
        progress_.set_input(udp_input, udp_input_fd());
    }
    last_work_us_ = now_us();
    upcall_ = new_upcall_target(&progress_); // last: nothing may throw after the upcall is set
    ep_->set_upcall(upcall, upcall_);
}

// The upcall goes first, then the socket, and only then (the members) progress_ and its eventfd.
Transport::~Transport() {
    if (ep_)
        ep_->set_upcall(nullptr, nullptr);
    if (upcall_)
        detach_upcall(upcall_);
    if (input_from_socket_)
        progress_.drop_input(); // it calls into the socket, which goes first
    ep_.reset();
}

sctpm_peer Transport::add_peer(const std::string& card_text) {
    Card c = parse_card(card_text);
    return peers_.add(c, s_.streams).id;
}

bool Transport::peer_failed(sctpm_peer id) const {
    const Peer* p = peers_.get(id);
    return !p || p->state == Peer::State::failed;
}

void Transport::remove_peer(sctpm_peer id) {
    const FlushAtEnd flush{*ep_};
    Peer* p = peers_.get(id);
    if (!p || p->state == Peer::State::failed)
        return;
    const AssocId assoc = p->assoc;
    fail_peer(*p, SCTPM_EV_ASSOC_LOST, ECONNABORTED, "peer " + std::to_string(id) + " was removed");
    // Other peers may still be linked on the association: only the last one takes it down.
    if (assoc && !peers_.has_live_peer(assoc))
        abort_assoc(assoc);
}

void Transport::emit(sctpm_event& ev) {
    if (s_.log_paths && ev.type == SCTPM_EV_PATH_CHANGE)
        std::fprintf(stderr, "[sctpm %d] %s\n", getpid(), ev.detail);
    if (cb_.on_event)
        cb_.on_event(cb_.ctx, &ev);
}

void Transport::emit_for_linked_peers(AssocId assoc, sctpm_event ev) {
    std::vector<sctpm_peer> linked;
    if (const AssocEntry* a = peers_.find_assoc(assoc))
        linked = a->peers();
    bool told = false;
    for (sctpm_peer id : linked)
        if (const Peer* p = peers_.get(id); p && p->state != Peer::State::failed) {
            ev.peer = id;
            emit(ev);
            told = true;
        }
    if (!told) {
        ev.peer = -1;
        emit(ev);
    }
}

// Every send still queued or deferred for p completes with -ECONNRESET, and the queues empty.
void Transport::fail_queued_sends(Peer& p) {
    auto fail = [&](const std::deque<TxMessage>& q) {
        for (const auto& m : q)
            if (m.notify)
                completions_.push_back({m.cookie, -ECONNRESET, p.id});
    };
    for (const auto& q : p.tx_queues)
        fail(q);
    fail(p.deferred);
    for (auto& q : p.tx_queues)
        q.clear();
    p.deferred.clear();
    p.batch_cookie = nullptr;
    p.batch_queued = false;
    p.queued = 0;
}

void Transport::fail_peer(Peer& p, sctpm_event_type type, int error, const std::string& why) {
    if (p.state == Peer::State::failed)
        return;
    p.state = Peer::State::failed;
    p.failure = why;
    fail_queued_sends(p);
    p.rx.clear();
    for (auto& w : p.order)
        w = ReorderWindow<std::shared_ptr<RxMessage>>();
    p.held_bytes = 0;
    if (cont_.peer == &p && cont_.mode != ContMode::none)
        cont_.mode = ContMode::discard; // the rest of the message in the socket is dropped
    sctpm_event ev{};
    ev.type = type;
    ev.peer = p.id;
    ev.assoc_id = p.assoc;
    ev.error = error;
    std::snprintf(ev.detail, sizeof ev.detail, "%s", why.c_str());
    emit(ev);
}

int Transport::end_assoc(AssocId assoc, bool abort, sctpm_event_type type, int error, const PeerReason& why) {
    if (abort)
        abort_assoc(assoc);
    AssocEntry* a = peers_.find_assoc(assoc);
    if (!a)
        return 0;
    a->ended = true;
    if (cont_.mode != ContMode::none && cont_.assoc == assoc)
        cont_.mode = ContMode::discard; // also when it was being held for an anonymous link
    const std::vector<std::string> unproven = unproven_hellos(*a);
    drop_pending(*a);
    int failed = 0;
    for (sctpm_peer id : a->peers()) // a copy: the event callbacks may link new peers
        if (Peer* p = peers_.get(id); p && p->state != Peer::State::failed) {
            fail_peer(*p, type, error, why(*p));
            ++failed;
        }
    if (AssocEntry* again = failed ? peers_.find_assoc(assoc) : nullptr) // the callbacks may move entries
        again->end_reported = true;
    check_unproven(unproven);
    return failed;
}

void Transport::abort_assoc(AssocId assoc) {
    if (cont_.mode != ContMode::none && cont_.assoc == assoc)
        deferred_abort_ = assoc; // drain the half-read message first
    else
        ep_->abort(assoc);
    if (AssocEntry* a = peers_.find_assoc(assoc))
        a->ended = true;
}

void Transport::add_stage(const std::string& name, int (*fn)(void*), void* arg) {
    progress_.add_stage(name, [fn, arg] { return fn(arg); });
}

bool Transport::busy() const {
    if (sends_pending())
        return true;
    for (const Busy& b : busy_)
        if (b.fn(b.arg))
            return true;
    return false;
}

int Transport::progress(int64_t timeout_us) {
    const FlushAtEnd flush{*ep_};
    constexpr uint32_t kRetryBlockedSendsUs = 50; // one-to-many sockets never signal writability
    std::function<void(bool)> on_block;
    if (cb_.on_block)
        on_block = [this](bool entering) { cb_.on_block(cb_.ctx, entering ? 1 : 0); };
    std::function<void()> on_idle;
    if (s_.stall_report_s)
        on_idle = [this] {
            const int64_t idle = now_us() - last_work_us_;
            if (!stall_reported_ && idle >= int64_t{s_.stall_report_s} * 1000000) {
                stall_reported_ = true;
                report_stall(idle);
                if (cb_.on_stall)
                    cb_.on_stall(cb_.ctx);
            }
        };
    int work = progress_.wait(timeout_us, s_.spin_us, [this] { return busy(); }, kRetryBlockedSendsUs, on_block,
                              on_idle);
    if (work) {
        last_work_us_ = now_us();
        stall_reported_ = false;
    }
    return work;
}

void Transport::shutdown(int timeout_ms) {
    const FlushAtEnd flush{*ep_};
    closing_ = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    auto left_us = [&] {
        return std::chrono::duration_cast<std::chrono::microseconds>(deadline - std::chrono::steady_clock::now()).count();
    };
    while (sends_pending() && left_us() > 0)
        progress(std::min<int64_t>(left_us(), 10000));
    // Graceful SHUTDOWN delivers whatever the stack still holds before the association ends.
    // Several peers may share one association: shut each down once. Not those whose peers were
    // all released (MPI_Comm_disconnect, and CH3's VCs at MPI_Finalize): shutting those down let
    // a rank's association end before its peer's MPI_Finalize printed the path report. The remote
    // keeps them until its heartbeats fail; a process that gets our UDP port meanwhile restarts
    // one, and is served on it (restart_assoc).
    auto open_assocs = [this] {
        std::set<AssocId> open;
        for (size_t i = 0; i < peers_.size(); ++i) {
            const Peer* p = peers_.get(static_cast<sctpm_peer>(i));
            if (p->assoc && p->state != Peer::State::failed)
                open.insert(p->assoc);
        }
        return open;
    };
    for (AssocId a : open_assocs())
        ep_->shutdown_assoc(a);
    while (!open_assocs().empty() && left_us() > 0)
        progress(std::min<int64_t>(left_us(), 10000));
}

int Transport::peer_paths(sctpm_peer id, sctpm_path_info* out, int max) {
    Peer* p = peers_.get(id);
    if (!p)
        return -1;
    auto paths = p->assoc ? ep_->paths(p->assoc) : std::vector<PathStatus>{};
    if (paths.empty()) // the association ended, or never began
        return ended_paths(*p, out, max);
    // In the order of the peer's card (its multihome-file order: rail 1 first), not the stack's,
    // which depends on who connected: a path keeps its index across runs and ranks.
    auto rank_of = [&](const PathStatus& ps) { return card_rank(*p, ps.address); };
    std::stable_sort(paths.begin(), paths.end(),
                     [&](const PathStatus& x, const PathStatus& y) { return rank_of(x) < rank_of(y); });
    int n = 0;
    for (const auto& ps : paths) {
        if (n >= max)
            break;
        sctpm_path_info& o = out[n++];
        o = sctpm_path_info{};
        std::snprintf(o.address, sizeof o.address, "%s", ps.address.c_str());
        o.state = ps.state == 0x0001 ? SCTPM_PATH_ACTIVE
                  : ps.state == 0x0200 ? SCTPM_PATH_CONFIRMED
                  : ps.state == 0x0002 ? SCTPM_PATH_UNREACHABLE
                                       : SCTPM_PATH_POTENTIALLY_FAILED;
        o.srtt_us = ps.srtt * 1000; // usrsctp reports ms
        o.rto_ms = ps.rto;
        o.cwnd = ps.cwnd;
        o.mtu = ps.mtu;
        for (const auto& pc : p->paths)
            if (address_text(reinterpret_cast<const sockaddr*>(&pc.address)) == ps.address)
                o.rx_bytes = pc.rx_bytes;
    }
    return n;
}

long Transport::card_rank(const Peer& p, const std::string& address) {
    const auto& a = p.card.addresses;
    return std::find(a.begin(), a.end(), address) - a.begin();
}

// What we counted ourselves: the stack has let the association go, with its view of the paths.
int Transport::ended_paths(const Peer& p, sctpm_path_info* out, int max) const {
    std::vector<std::pair<std::string, uint64_t>> seen;
    for (const auto& pc : p.paths)
        seen.emplace_back(address_text(reinterpret_cast<const sockaddr*>(&pc.address)), pc.rx_bytes);
    std::stable_sort(seen.begin(), seen.end(),
                     [&](const auto& x, const auto& y) { return card_rank(p, x.first) < card_rank(p, y.first); });
    int n = 0;
    for (const auto& [address, bytes] : seen) {
        if (n >= max)
            break;
        sctpm_path_info& o = out[n++];
        o = sctpm_path_info{};
        std::snprintf(o.address, sizeof o.address, "%s", address.c_str());
        o.state = SCTPM_PATH_ENDED;
        o.rx_bytes = bytes;
    }
    return n;
}

sctpm_held_stats Transport::held_stats() const {
    sctpm_held_stats h{};
    h.pre_hello_bytes = peers_.pending_bytes();
    h.pre_hello_peak = pre_hello_bound_.peak();
    h.reorder_bytes = peers_.held_bytes();
    h.reorder_peak = reorder_bound_.peak();
    h.bound_aborts = bound_aborts_;
    h.auth_failures = auth_failures_;
    return h;
}

bool Transport::packet_auth(sctpm_peer id, sctpm_packet_auth* out) const {
    const Peer* p = peers_.get(id);
    if (!p)
        return false;
    const AssocEntry* a = p->assoc ? peers_.find_assoc(p->assoc) : nullptr;
    if (!a) { // its association ended (or none yet): what it was then
        *out = p->auth_at_end;
        return p->auth_at_end.active_key >= 0;
    }
    // The stack's answer now, or when the key last changed if the stack has let it go already.
    const int now = ep_->active_auth_key(p->assoc);
    out->active_key = now >= 0 ? now : a->stack_active_key;
    out->peer_key = a->peer_auth_key;
    out->null_key_deleted = a->null_deleted;
    return true;
}

bool Transport::peer_stats(sctpm_peer id, sctpm_peer_stats* out) const {
    const Peer* p = peers_.get(id);
    if (!p)
        return false;
    *out = p->stats;
    return true;
}

} // namespace sctpm
