// SPDX-License-Identifier: BSD-3-Clause
#include "own_socket.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <usrsctp.h> // the notification layout the transport reads

#include "endpoint.hpp" // interface_addresses, address_text, join_addresses
#include "error.hpp"
#include "path_params.hpp"

namespace sctpm {
namespace {

constexpr unsigned kReadsPerInput = 16; // recvmmsg batches per input (each up to 16 datagrams)
// The longest the standby thread sleeps without looking (the engine's timers wake it sooner).
constexpr int64_t kStandbyLookUs = 200000;
constexpr uint32_t kUdpIpv4Overhead = 20 + 8;
constexpr uint32_t kMaxPacket = 65000; // the largest SCTP packet we make (room below UDP's limit)

std::vector<sctp::Address> ipv4_addresses(const std::vector<std::string>& text, uint16_t port) {
    std::vector<sctp::Address> out;
    for (const auto& t : text)
        if (auto a = sctp::Address::parse(t, port); a && a->family == AF_INET)
            out.push_back(*a);
    return out;
}

std::vector<std::string> ipv4_only(const std::vector<std::string>& text) {
    std::vector<std::string> out;
    for (const auto& t : text)
        if (auto a = sctp::Address::parse(t, 0); a && a->family == AF_INET)
            out.push_back(t);
    return out;
}

void refuse_unsupported(const Settings& s) {
    if (s.auth == AuthMode::packet)
        throw Error("auth=packet needs SCTP-AUTH, which stack=own does not have yet: use auth=hello, or stack=usrsctp");
    if (s.cmt != CmtMode::off && s.cmt != CmtMode::base)
        throw Error(std::string("cmt=") + to_string(s.cmt) +
                    " couples the paths' congestion windows, which stack=own does not do yet (it has cmt=base, "
                    "each path with its own window): use cmt=base, or stack=usrsctp");
}

std::unique_ptr<sctp::UdpSocket> bind_udp(const Settings& s, const std::string& addr) {
    sctp::UdpSocket::Options o;
    o.addr = addr;
    o.buffer_bytes = static_cast<int>(std::min<uint32_t>(s.udp_buffer, 1u << 30));
    const uint16_t first = s.udp_port, last = std::max(s.udp_port, s.udp_port_last);
    for (uint32_t port = first;; ++port) {
        o.port = static_cast<uint16_t>(port);
        try {
            return std::make_unique<sctp::UdpSocket>(o);
        } catch (const Error&) {
            if (port >= last)
                throw; // names the address, the port and the reason
        }
    }
}

uint32_t state_code(sctp::AssocState st) {
    switch (st) {
    case sctp::AssocState::cookie_wait: return SCTP_COOKIE_WAIT;
    case sctp::AssocState::cookie_echoed: return SCTP_COOKIE_ECHOED;
    case sctp::AssocState::established: return SCTP_ESTABLISHED;
    case sctp::AssocState::shutdown_pending: return SCTP_SHUTDOWN_PENDING;
    case sctp::AssocState::shutdown_sent: return SCTP_SHUTDOWN_SENT;
    case sctp::AssocState::shutdown_received: return SCTP_SHUTDOWN_RECEIVED;
    case sctp::AssocState::shutdown_ack_sent: return SCTP_SHUTDOWN_ACK_SENT;
    }
    return SCTP_CLOSED;
}

constexpr uint32_t kPathPotentiallyFailed = 0x0800; // what the transport reads as PF (not usrsctp's)
constexpr uint32_t kAddrPotentiallyFailed = 0x0007; // the path-change state the transport reads as PF

int32_t path_code(sctp::PathState st) {
    switch (st) {
    case sctp::PathState::active: return SCTP_ACTIVE;
    case sctp::PathState::potentially_failed: return kPathPotentiallyFailed;
    case sctp::PathState::inactive: return SCTP_INACTIVE;
    case sctp::PathState::unconfirmed: return SCTP_UNCONFIRMED;
    }
    return SCTP_INACTIVE;
}

uint32_t path_change_code(sctp::PathState st) {
    switch (st) {
    case sctp::PathState::active: return SCTP_ADDR_AVAILABLE;
    case sctp::PathState::potentially_failed: return kAddrPotentiallyFailed;
    case sctp::PathState::inactive: return SCTP_ADDR_UNREACHABLE;
    case sctp::PathState::unconfirmed: return SCTP_ADDR_ADDED;
    }
    return SCTP_ADDR_UNREACHABLE;
}

} // namespace

sctp::Config OwnSocket::engine_config(const Settings& s, uint16_t port, const std::vector<std::string>& addresses) {
    sctp::Config c;
    c.local_port = port;
    uint32_t link = interface_mtu(addresses);
    if (s.path_mtu)
        link = std::min(link, s.path_mtu);
    c.mtu = std::clamp<uint32_t>(link - kUdpIpv4Overhead, 512, kMaxPacket);
    c.outbound_streams = c.inbound_streams = s.streams;
    c.rwnd = s.rcvbuf;
    c.send_buffer = s.sndbuf;
    c.delayed_sack = sctp::Time(s.sack_delay_ms) * 1000;
    c.sack_every = s.sack_delay_ms == 0 ? 1 : 2;
    c.sack_per_read = s.sack_per_read;
    c.sack_full_packets = s.sack_full_packets;
    // With a SACK per read a Max.Burst pins the flight to what one SACK releases (the engine's
    // interoperability finding): the congestion window alone limits it.
    c.max_burst = s.sack_per_read ? 0 : 4;
    c.max_init_retransmits = s.init_max_attempts;
    c.max_retransmits = s.assoc_max_retrans;
    c.rto_initial = sctp::Time(s.rto_initial_ms) * 1000;
    c.rto_min = sctp::Time(s.rto_min_ms) * 1000;
    c.rto_max = sctp::Time(s.rto_max_ms) * 1000;
    // One SCTP message carries at most a fragment and its header (frame.hpp), or a hello.
    c.max_message = std::max<size_t>(c.max_message, size_t{s.fragment_size} + 4096);
    c.local_addresses = ipv4_addresses(addresses, port);
    c.heartbeat_interval = sctp::Time(s.heartbeat_ms) * 1000;
    c.path_max_retransmits = s.path_max_retrans;
    c.pf_max_retransmits = s.pf_threshold;
    c.cmt = s.cmt == CmtMode::base;
    return c;
}

OwnSocket::OwnSocket(const Settings& s, const std::vector<std::string>& addresses) {
    refuse_unsupported(s);
    bound_ = ipv4_only(addresses);
    if (!addresses.empty() && bound_.empty())
        throw Error("stack=own carries IPv4 only, and none of the addresses to bind is IPv4: [" + join_addresses(addresses) +
                    "] (use stack=usrsctp)");
    // One address: bound to it. Several (multihoming) or none: the wildcard, and each packet is
    // sent from the address the peer last reached us at (IP_PKTINFO).
    sock_ = bind_udp(s, bound_.size() == 1 ? bound_.front() : "0.0.0.0");
    if (addresses.empty())
        bound_ = ipv4_only(interface_addresses());
    ep_ = std::make_unique<sctp::Endpoint>(engine_config(s, sock_->port(), bound_),
                                           [](uint8_t* p, size_t n) { sctp::fill_random(p, n); });
    driver_ = std::make_unique<sctp::EngineDriver>(*ep_, *sock_, kReadsPerInput);
    stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (stop_fd_ < 0)
        throw Error(std::string("eventfd failed: ") + std::strerror(errno));
    // The owner is taken as present at first: the standby thread starts a millisecond later.
    owner_until_ = static_cast<int64_t>(sctp::monotonic_us()) + 1000;
    standby_ = std::thread([this] { standby_main(); });
}

OwnSocket::~OwnSocket() {
    stopping_ = true;
    const uint64_t one = 1;
    if (write(stop_fd_, &one, sizeof one) < 0) {
        // an eventfd's counter cannot overflow from one write; nothing to do
    }
    standby_.join();
    close(stop_fd_);
    driver_->output_if_due(); // ABORTs and SHUTDOWNs queued last still leave
}

void OwnSocket::set_upcall(void (*fn)(struct socket*, void*, int), void* arg) {
    Locked g(*this);
    upcall_ = fn;
    upcall_arg_ = arg;
}

void OwnSocket::publish() {
    output_due_.store(driver_->due() && ep_->transmit_pending(), std::memory_order_release);
    readable_.store(cur_active_ || ep_->event_pending(), std::memory_order_release);
    const auto d = ep_->next_deadline();
    deadline_us_.store(d ? static_cast<int64_t>(*d) : INT64_MAX, std::memory_order_release);
}

void OwnSocket::flush() {
    if (!output_due_.load(std::memory_order_acquire))
        return;
    Locked g(*this);
    driver_->output_if_due();
}

// While the owner holds the socket, sleep until its hold ends (or the socket goes); else serve
// the socket as the owner would: read, run the timers, send, and tell the owner when something
// waits for it; then sleep until a packet, the engine's next timer, or the owner's next hold.
void OwnSocket::standby_main() {
    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {sock_->fd(), POLLIN, 0}};
    while (!stopping_) {
        const int64_t now = static_cast<int64_t>(sctp::monotonic_us());
        int64_t wait_us = owner_until_.load(std::memory_order_acquire) - now;
        nfds_t polled = 1; // the stop fd alone while the owner holds the socket
        if (wait_us <= 0) {
            Locked g(*this);
            if (owner_until_.load(std::memory_order_acquire) > now)
                continue; // the owner came back meanwhile
            input_locked(static_cast<int>(kReadsPerInput), static_cast<int64_t>(sctp::monotonic_us()));
            const int64_t timer = next_timer_us_locked();
            wait_us = timer < 0 ? kStandbyLookUs : std::min(timer, kStandbyLookUs);
            polled = 2;
        }
        timespec ts{static_cast<time_t>(wait_us / 1000000), static_cast<long>(wait_us % 1000000) * 1000};
        ppoll(fds, polled, &ts, nullptr);
    }
}

void OwnSocket::wake_reader() {
    if (upcall_ && (cur_active_ || ep_->event_pending())) {
        publish(); // now, not when the lock goes: the reader it wakes looks at readable_ at once
        upcall_(nullptr, upcall_arg_, 0);
    }
}

std::optional<SctpSocket::CallerInput> OwnSocket::caller_input() {
    CallerInput in;
    in.input = [this](int max_reads, uint32_t hold_us) { return input(max_reads, hold_us); };
    in.fd = sock_->fd();
    in.next_timer_us = [this] { return next_timer_us(); };
    return in;
}

int OwnSocket::input(int max_reads, uint32_t hold_us) {
    const int64_t now = static_cast<int64_t>(sctp::monotonic_us());
    owner_until_.store(now + hold_us, std::memory_order_release);
    // A claim without reads, with no output due, nothing to read (to signal) and no timer due,
    // is all it is (the progress engine makes one before and one around each wait).
    if (max_reads <= 0 && !output_due_.load(std::memory_order_acquire) && !readable_.load(std::memory_order_acquire) &&
        now < deadline_us_.load(std::memory_order_acquire))
        return 0;
    Locked g(*this);
    return input_locked(max_reads, now);
}

int OwnSocket::input_locked(int max_reads, int64_t now) {
    size_t packets = 0;
    if (max_reads > 0) {
        packets = driver_->input(now); // also ends the batch and runs the due timers
    } else {
        driver_->run_due_timers(now);
    }
    if (driver_->due())
        driver_->output(now);
    wake_reader();
    return static_cast<int>(packets);
}

int64_t OwnSocket::next_timer_us() {
    const int64_t d = deadline_us_.load(std::memory_order_acquire);
    if (d == INT64_MAX)
        return -1;
    return std::max<int64_t>(0, d - static_cast<int64_t>(sctp::monotonic_us()));
}

int64_t OwnSocket::next_timer_us_locked() const {
    const auto d = ep_->next_deadline();
    if (!d)
        return -1;
    return std::max<int64_t>(0, *d - sctp::Time(sctp::monotonic_us()));
}

AssocId OwnSocket::connect(const std::vector<std::string>& addresses, uint16_t sctp_port, uint16_t udp_port) {
    Locked g(*this);
    const auto remotes = ipv4_addresses(addresses, udp_port);
    if (remotes.empty())
        throw Error("peer addresses [" + join_addresses(addresses) + "] have no IPv4 address, the only family stack=own carries");
    const AssocId id = ep_->connect(remotes, sctp_port, sctp::Time(sctp::monotonic_us()));
    if (id == sctp::kNoAssoc)
        throw Error("cannot start an association to [" + join_addresses(addresses) + "] port " + std::to_string(sctp_port) +
                    " (UDP " + std::to_string(udp_port) + "): no usable address");
    driver_->mark_due();
    return id;
}

long OwnSocket::sendv(AssocId assoc, uint16_t stream, const iovec* iov, int iovcnt) {
    Locked g(*this);
    const int r = ep_->send(assoc, stream, iov, iovcnt, false, sctp::Time(sctp::monotonic_us()));
    if (r < 0)
        return r;
    driver_->mark_due();
    long n = 0;
    for (int i = 0; i < iovcnt; ++i)
        n += static_cast<long>(iov[i].iov_len);
    return n;
}

void OwnSocket::abort(AssocId assoc, const std::string& reason) {
    Locked g(*this);
    ep_->abort(assoc, reason, sctp::Time(sctp::monotonic_us()));
    driver_->mark_due();
}

void OwnSocket::shutdown_assoc(AssocId assoc) {
    Locked g(*this);
    ep_->shutdown(assoc, sctp::Time(sctp::monotonic_us()));
    driver_->mark_due();
}

void OwnSocket::make_notification(const sctp::Event& ev) {
    note_.clear();
    if (ev.type == sctp::EventType::path_change) {
        sctp_paddr_change c{};
        c.spc_type = SCTP_PEER_ADDR_CHANGE;
        c.spc_length = sizeof c;
        ev.path_address.to_sockaddr(&c.spc_aaddr);
        c.spc_state = path_change_code(ev.path_state);
        c.spc_assoc_id = ev.assoc;
        const auto* p = reinterpret_cast<const uint8_t*>(&c);
        note_.assign(p, p + sizeof c);
        return;
    }
    sctp_assoc_change c{};
    c.sac_type = SCTP_ASSOC_CHANGE;
    c.sac_length = static_cast<uint32_t>(sizeof c + ev.abort_chunk.size());
    switch (ev.type) {
    case sctp::EventType::assoc_up: c.sac_state = SCTP_COMM_UP; break;
    case sctp::EventType::assoc_restart: c.sac_state = SCTP_RESTART; break;
    case sctp::EventType::shutdown_complete: c.sac_state = SCTP_SHUTDOWN_COMP; break;
    case sctp::EventType::assoc_lost: c.sac_state = SCTP_COMM_LOST; break;
    default: c.sac_state = SCTP_CANT_STR_ASSOC; break;
    }
    c.sac_outbound_streams = ev.outbound_streams;
    c.sac_inbound_streams = ev.inbound_streams;
    c.sac_assoc_id = ev.assoc;
    const auto* p = reinterpret_cast<const uint8_t*>(&c);
    note_.assign(p, p + sizeof c);
    note_.insert(note_.end(), ev.abort_chunk.begin(), ev.abort_chunk.end()); // sac_info, as usrsctp gives it
}

bool OwnSocket::take_event() {
    for (;;) {
        if (!ep_->poll_event(ev_))
            return false;
        driver_->mark_due(); // a message taken opens the receive window: a window update may be due
        if (ev_.type == sctp::EventType::send_space)
            continue; // the transport retries blocked sends on its own
        cur_off_ = 0;
        cur_active_ = true;
        cur_note_ = ev_.type != sctp::EventType::data;
        if (cur_note_) {
            make_notification(ev_);
            cur_ = note_.data();
            cur_len_ = note_.size();
        } else {
            cur_ = ev_.data.data();
            cur_len_ = ev_.data.size();
        }
        return true;
    }
}

RecvResult OwnSocket::recv(void* buf, size_t len) {
    RecvResult r;
    if (!readable_.load(std::memory_order_acquire)) { // the read that ends a read loop
        r.n = -EWOULDBLOCK;
        return r;
    }
    Locked g(*this);
    if (!cur_active_ && !take_event()) {
        r.n = -EWOULDBLOCK;
        return r;
    }
    const size_t n = std::min(len, cur_len_ - cur_off_);
    std::memcpy(buf, cur_ + cur_off_, n);
    cur_off_ += n;
    r.n = static_cast<long>(n);
    r.eor = cur_off_ == cur_len_;
    r.notification = cur_note_;
    if (!cur_note_) {
        r.assoc = ev_.assoc;
        r.stream = ev_.stream;
        ev_.path_address.to_sockaddr(&r.from);
    }
    if (r.eor)
        cur_active_ = false; // the engine's memory of it goes at the next poll_event
    return r;
}

std::vector<PathStatus> OwnSocket::paths(AssocId assoc) {
    Locked g(*this);
    std::vector<PathStatus> out;
    const auto info = ep_->info(assoc);
    if (!info)
        return out;
    for (const auto& p : info->paths) {
        PathStatus ps;
        sockaddr_storage ss{};
        p.address.to_sockaddr(&ss);
        ps.address = address_text(reinterpret_cast<const sockaddr*>(&ss));
        ps.state = path_code(p.state);
        ps.cwnd = p.cwnd;
        ps.srtt = static_cast<uint32_t>(p.srtt / 1000); // ms, as usrsctp reports it
        ps.rto = static_cast<uint32_t>(p.rto / 1000);
        ps.mtu = info->mtu - 12; // usrsctp's unit: after the SCTP common header
        out.push_back(ps);
    }
    return out;
}

AssocStatus OwnSocket::status(AssocId assoc) {
    Locked g(*this);
    AssocStatus out;
    const auto info = ep_->info(assoc);
    if (!info)
        return out;
    out.known = true;
    out.state = static_cast<int32_t>(state_code(info->state));
    out.rwnd = info->peer_rwnd;
    // The engine counts bytes, not chunks: "some" is what the transport needs to know.
    out.unacked = info->flight_size ? 1 : 0;
    out.pending = 0;
    out.queued_out = static_cast<uint32_t>(std::min<size_t>(info->send_queued, UINT32_MAX));
    return out;
}

std::string OwnSocket::stack_counters() {
    Locked g(*this);
    const sctp::EndpointStats& e = ep_->stats();
    const sctp::UdpStats& u = sock_->stats();
    std::string out = "own engine: packets in " + std::to_string(e.packets_in) + ", out " + std::to_string(e.packets_out) +
                      "; dropped: bad checksum " + std::to_string(e.bad_checksum) + ", malformed " +
                      std::to_string(e.malformed) + ", bad tag " + std::to_string(e.bad_vtag) + ", out of the blue " +
                      std::to_string(e.ootb) + ", DATA over the window " + std::to_string(e.dropped_data) +
                      "; UDP sends failed " + std::to_string(e.send_failures) + ", packets dropped on a full socket " +
                      std::to_string(u.send_drops) + ", truncated " + std::to_string(u.truncated);
    if (!e.last_drop.empty())
        out += "; last drop: " + e.last_drop;
    return out;
}

bool OwnSocket::readable() { return readable_.load(std::memory_order_acquire); }

std::optional<bool> OwnSocket::peer_requires_data_auth(AssocId assoc) {
    Locked g(*this);
    if (!ep_->info(assoc))
        return std::nullopt;
    return false; // the engine does not offer SCTP-AUTH in its INIT, nor take it from the peer's
}

} // namespace sctpm
