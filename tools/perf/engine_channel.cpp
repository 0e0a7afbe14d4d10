// SPDX-License-Identifier: BSD-3-Clause
// Our own SCTP engine as a benchmark channel; see engine_channel.hpp.
#include "engine_channel.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace perf {

namespace sc = sctpm::sctp;

namespace {

constexpr int64_t kSetupTimeoutUs = 10'000'000;
constexpr int64_t kShutdownTimeoutUs = 2'000'000;

// The engine set up as the transport sets up usrsctp (src/settings.hpp defaults): RTO 300 ms
// initial, 100 ms minimum; delayed SACK 10 ms and a SACK per read; 8 MiB windows. No burst
// limit by default (EngineOptions::max_burst).
sc::Config engine_config(const EngineOptions& o, uint16_t port) {
    sc::Config c;
    c.local_port = port;
    if (o.link_mtu != 0 && (o.link_mtu < 576 || o.link_mtu > 65536))
        die("engine: path_mtu " + std::to_string(o.link_mtu) + " is outside 576..65536");
    // The link MTU less the IPv4 and UDP headers, at most 65000 bytes as the transport's paths
    // (src/path_params.cpp); 0: 65000 (loopback's MTU, as the transport takes it from the route).
    c.mtu = o.link_mtu ? std::min<uint32_t>(o.link_mtu - 28, 65000) : 65000;
    c.rto_initial = 300'000;
    c.rto_min = 100'000;
    c.rto_max = 1'000'000;
    c.delayed_sack = 10'000;
    c.sack_per_read = true;
    c.max_burst = o.max_burst;
    c.rwnd = 8u << 20;
    c.send_buffer = 8u << 20;
    return c;
}

sc::UdpSocket::Options socket_options(const EngineOptions& o) {
    sc::UdpSocket::Options s;
    s.addr = o.addr;
    return s;
}

} // namespace

EngineChannel::EngineChannel(const EngineOptions& o)
    : sock_(socket_options(o)),
      ep_(engine_config(o, sock_.port()), [](uint8_t* p, size_t n) { sc::fill_random(p, n); }),
      drv_(ep_, sock_), ring_(4) {}

EngineChannel::~EngineChannel() {
    if (const char* v = std::getenv("SCTP_PERF_ENGINE_STATS"); v && *v == '1') {
        const auto& u = sock_.stats();
        const auto& d = drv_.stats();
        std::fprintf(stderr,
                     "engine[%d]: udp reads %llu packets_in %llu gro_batches %llu sends %llu packets_out %llu "
                     "gso_fallbacks %llu send_drops %llu | driver pumps %llu waits %llu bursts %llu timeouts %llu",
                     int(getpid()), (unsigned long long)u.reads, (unsigned long long)u.packets_in,
                     (unsigned long long)u.gro_batches, (unsigned long long)u.sends, (unsigned long long)u.packets_out,
                     (unsigned long long)u.gso_fallbacks, (unsigned long long)u.send_drops,
                     (unsigned long long)d.pumps, (unsigned long long)d.waits, (unsigned long long)d.bursts,
                     (unsigned long long)d.timeouts);
        if (const auto i = ep_.info(assoc_))
            std::fprintf(stderr,
                         " | assoc mtu %u cwnd %u data_packets %llu rtx_chunks %llu fast_rtx %llu t3 %llu "
                         "sacks_sent %llu sacks_received %llu",
                         i->mtu, i->cwnd, (unsigned long long)i->data_packets_sent,
                         (unsigned long long)i->retransmitted_chunks, (unsigned long long)i->fast_retransmits,
                         (unsigned long long)i->t3_expiries, (unsigned long long)i->sacks_sent,
                         (unsigned long long)i->sacks_received);
        std::fprintf(stderr, "\n");
    }
    if (up_ && !ended_ && ep_.shutdown(assoc_, sc::Time(sc::monotonic_us())) == 0)
        drv_.run_until([this](const sc::Event& ev) { on_event(ev); }, [this] { return ended_; }, kShutdownTimeoutUs);
}

void EngineChannel::on_event(const sc::Event& ev) {
    switch (ev.type) {
    case sc::EventType::data: {
        if (count_ == ring_.size()) { // full: make room (rare; the buffers are kept and reused)
            std::rotate(ring_.begin(), ring_.begin() + long(head_), ring_.end());
            head_ = 0;
            ring_.emplace_back();
        }
        auto* p = reinterpret_cast<const char*>(ev.data.data());
        ring_[(head_ + count_) % ring_.size()].assign(p, p + ev.data.size());
        ++count_;
        break;
    }
    case sc::EventType::assoc_up:
        if (assoc_ == sc::kNoAssoc || assoc_ == ev.assoc) {
            assoc_ = ev.assoc;
            up_ = true;
        }
        break;
    case sc::EventType::send_space:
        space_ = true;
        break;
    case sc::EventType::shutdown_complete:
        if (ev.assoc == assoc_)
            ended_ = true;
        break;
    case sc::EventType::assoc_restart:
    case sc::EventType::assoc_lost:
    case sc::EventType::cant_start:
        die(std::string("engine: ") + sc::to_string(ev.type) + ": " + ev.reason);
    case sc::EventType::path_change: // the benchmark's one path: nothing to do
        break;
    }
}

void EngineChannel::connect(const std::string& addr, uint16_t port) {
    const auto a = sc::Address::parse(addr, port);
    if (!a)
        die("engine: '" + addr + "' is not an IP address");
    assoc_ = ep_.connect(std::span(&*a, 1), port, sc::Time(sc::monotonic_us()));
    if (assoc_ == sc::kNoAssoc)
        die("engine: connect to " + a->to_string() + " refused");
    if (!drv_.run_until([this](const sc::Event& ev) { on_event(ev); }, [this] { return up_; }, kSetupTimeoutUs))
        die("engine: no association with " + a->to_string() + " within 10 s");
}

void EngineChannel::accept() {
    if (!drv_.run_until([this](const sc::Event& ev) { on_event(ev); }, [this] { return up_; }, kSetupTimeoutUs))
        die("engine: no peer associated within 10 s");
}

void EngineChannel::send(const char* data, size_t len) {
    iovec v{const_cast<char*>(data), len};
    for (;;) {
        const sc::Time now = sc::Time(sc::monotonic_us());
        const int rc = ep_.send(assoc_, 0, &v, 1, false, now);
        if (rc == 0) {
            drv_.output(now); // leaves now, as a send with SCTP_NODELAY does
            return;
        }
        if (rc != -EWOULDBLOCK && rc != -EAGAIN)
            die("engine: send of " + std::to_string(len) + " bytes: " + std::strerror(-rc));
        space_ = false;
        progress_until([this] { return space_; });
    }
}

void EngineChannel::recv(size_t len) {
    progress_until([this] { return count_ > 0; });
    std::swap(current_, ring_[head_]);
    head_ = (head_ + 1) % ring_.size();
    --count_;
    ++taken_;
    if (current_.size() != len)
        die("engine: message " + std::to_string(taken_) + " has " + std::to_string(current_.size()) +
            " bytes, expected " + std::to_string(len));
}

// Hands what the engine may send now to the kernel; no read: a read could take the peer's next
// messages, which the caller does not want yet (they wait in the engine).
void EngineChannel::flush() { drv_.output(sc::Time(sc::monotonic_us())); }

} // namespace perf
