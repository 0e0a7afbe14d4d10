// SPDX-License-Identifier: BSD-3-Clause
// RFC 5043 on our own SCTP engine; see own_adaptation.hpp.
#include "own_adaptation.hpp"

#include "error.hpp"
#include "endpoint.hpp"
#include "own_socket.hpp"
#include "wire.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace iwarp {

using namespace sctpm::sctp;

namespace {

constexpr size_t kSpareBuffers = 64; // read messages' buffers kept for the engine's next ones

Time now() { return Time(monotonic_us()); }

// The engine carries IPv4 only: say so by name rather than fail on the first packet. The other
// errors read as the usrsctp endpoint's do.
std::vector<std::string> ipv4_addresses(const std::vector<std::string>& text) {
    sa_family_t family = AF_UNSPEC;
    for (const std::string& t : text) {
        auto a = Address::parse(t, 0);
        if (!a)
            throw sctpm::Error("iwarp adaptation: bind address '" + t + "' is not an IPv4 or IPv6 address");
        if (family != AF_UNSPEC && a->family != family)
            throw sctpm::Error("iwarp adaptation: bind addresses mix IPv4 and IPv6 ('" + text.front() + "', '" + t + "')");
        family = a->family;
    }
    if (family == AF_INET6)
        throw sctpm::Error("iwarp adaptation: stack=own carries IPv4 only, not '" + text.front() + "' (use stack=usrsctp)");
    return text;
}

} // namespace

// ---- one association ------------------------------------------------------------------------------

OwnLlp::~OwnLlp() { close(false); }

long OwnLlp::send(uint32_t ppid, const void* data, size_t len) {
    if (!ep_) return -ENOTCONN;
    return ep_->send(*this, ppid, data, len);
}

void OwnLlp::deliver(uint32_t ppid, std::vector<uint8_t>&& bytes) {
    held_ += bytes.size();
    ep_->held_ += bytes.size();
    messages_.push_back({ppid, std::move(bytes)});
}

LlpRead OwnLlp::read(void* buf, size_t len) {
    LlpRead r;
    if (messages_.empty()) {
        if (ended_ || !ep_) {
            r.closed = true;
            r.why = why_.empty() ? "association closed locally" : why_;
        } else {
            r.n = -EWOULDBLOCK;
        }
        return r;
    }
    Message& m = messages_.front();
    if (read_ == 0) r.ppid = m.ppid;
    const size_t n = std::min(len, m.bytes.size() - read_);
    if (n) std::memcpy(buf, m.bytes.data() + read_, n);
    read_ += n;
    held_ -= n;
    if (ep_) ep_->held_ -= n;
    r.n = long(n);
    if (read_ == m.bytes.size()) {
        r.eor = true;
        read_ = 0;
        if (ep_ && ep_->spare_.size() < kSpareBuffers) ep_->spare_.push_back(std::move(m.bytes));
        messages_.pop_front();
    }
    return r;
}

void OwnLlp::end(std::string why) {
    ended_ = true;
    why_ = std::move(why);
}

void OwnLlp::close(bool abort) {
    if (!ep_) return;
    ep_->close(*this, abort);
}

// ---- the endpoint ---------------------------------------------------------------------------------

OwnDdpEndpoint::OwnDdpEndpoint(const AdapterConfig& cfg, const sctpm::Settings& settings) {
    const std::vector<std::string> bound = ipv4_addresses(cfg.bind_addresses);
    sctpm::sctp::UdpSocket::Options o;
    o.addr = bound.size() == 1 ? bound.front() : "0.0.0.0";
    o.port = cfg.sctp_port; // the SCTP port is the UDP port; 0: the kernel's choice
    o.buffer_bytes = int(std::max(settings.rcvbuf, settings.sndbuf));
    try {
        sock_ = std::make_unique<UdpSocket>(o);
    } catch (const sctpm::Error& e) {
        throw sctpm::Error(std::string("iwarp adaptation: ") + e.what());
    }
    sctpm::Settings s = settings;
    s.path_mtu = cfg.path_mtu;
    if (cfg.heartbeat_ms) s.heartbeat_ms = cfg.heartbeat_ms;
    if (cfg.path_max_retrans) s.path_max_retrans = cfg.path_max_retrans;
    Config c = sctpm::OwnSocket::engine_config(s, sock_->port(), bound.empty() ? sctpm::interface_addresses() : bound);
    c.outbound_streams = c.inbound_streams = 1; // §8: one DDP stream per association
    c.adaptation_indication = kAdaptationIndicationDdp; // §5.1, §11.1
    // Messages are DDP segments (at most max_message_ bytes); session control messages are small.
    max_message_ = segment_limit(c.mtu);
    if (cfg.max_segment && cfg.max_segment < max_message_) max_message_ = cfg.max_segment;
    max_message_ = std::max(max_message_, kMinSegmentLimit);
    c.max_message = std::max<size_t>(max_message_, 1u << 16);
    ep_ = std::make_unique<Endpoint>(c, [](uint8_t* p, size_t n) { fill_random(p, n); });
    driver_ = std::make_unique<EngineDriver>(*ep_, *sock_);
}

OwnDdpEndpoint::~OwnDdpEndpoint() {
    for (auto& [id, llp] : llps_) {
        llp->end("the RNIC was closed");
        llp->ep_ = nullptr;
        ep_->abort(id, "RNIC closed", now());
    }
    driver_->output(now()); // the ABORTs still leave
}

uint32_t OwnDdpEndpoint::connect(const std::string& address, uint16_t sctp_port, uint16_t udp_port) {
    auto a = Address::parse(address, udp_port);
    if (!a) throw sctpm::Error("iwarp connect: '" + address + "' is not an IPv4 or IPv6 address");
    if (a->family != AF_INET)
        throw sctpm::Error("iwarp connect: stack=own carries IPv4 only, not '" + address + "' (use stack=usrsctp)");
    const AssocId id = ep_->connect(std::span<const Address>(&*a, 1), sctp_port, now());
    if (id == kNoAssoc)
        throw sctpm::Error("iwarp connect: cannot start an association to " + address + " port " +
                           std::to_string(sctp_port) + " (UDP " + std::to_string(udp_port) + ")");
    driver_->mark_due();
    return id;
}

long OwnDdpEndpoint::send(OwnLlp& llp, uint32_t ppid, const void* data, size_t len) {
    iovec iov{const_cast<void*>(data), len};
    // RFC 5043 §10: every message unordered; the DDP sequence numbers restore the order.
    const int rc = ep_->send(llp.id_, 0, &iov, 1, true, now(), ppid);
    if (rc < 0) return rc;
    driver_->mark_due();
    return long(len);
}

void OwnDdpEndpoint::close(OwnLlp& llp, bool abort) {
    if (abort)
        ep_->abort(llp.id_, "queue pair closed", now());
    else
        ep_->shutdown(llp.id_, now());
    driver_->mark_due();
    held_ -= llp.held();
    llps_.erase(llp.id_);
    llp.ep_ = nullptr;
}

void OwnDdpEndpoint::ended(AssocId id, const std::string& why, std::vector<AssociationFailed>& failed) {
    auto it = llps_.find(id);
    if (it == llps_.end()) { // not handed out: a connect or an accept that failed
        failed.push_back({id, why});
        return;
    }
    it->second->end(why);
    held_ -= it->second->held(); // readable still, but no longer ours to bound
    it->second->ep_ = nullptr;
    llps_.erase(it);
}

void OwnDdpEndpoint::not_ddp(const Event& ev, std::vector<AssociationFailed>& failed) {
    const std::string what = ev.peer_adaptation ? "announced adaptation layer " + std::to_string(*ev.peer_adaptation) + ", not DDP (1)"
                                                : "did not announce the DDP adaptation layer";
    ep_->abort(ev.assoc, "not DDP", now());
    driver_->mark_due();
    failed.push_back({ev.assoc, "peer " + what + " (RFC 5043 §11.1)"});
}

size_t OwnDdpEndpoint::poll(std::vector<AssociationUp>& up, std::vector<AssociationFailed>& failed) {
    driver_->input(now());
    size_t taken = 0;
    Event ev;
    while (held_ < kHeldLimit && ep_->poll_event(ev)) {
        ++taken;
        switch (ev.type) {
        case EventType::assoc_up:
            if (ev.peer_adaptation != kAdaptationIndicationDdp) {
                not_ddp(ev, failed);
                break;
            }
            {
                auto llp = std::make_unique<OwnLlp>(*this, ev.assoc, max_message_);
                llps_[ev.assoc] = llp.get();
                up.push_back({ev.assoc, std::move(llp)});
            }
            break;
        case EventType::data: {
            auto it = llps_.find(ev.assoc);
            if (it == llps_.end()) break; // its queue pair closed it: the rest goes
            std::vector<uint8_t> bytes;
            if (!spare_.empty()) {
                bytes = std::move(spare_.back());
                spare_.pop_back();
            }
            ep_->take_data(bytes); // true after a data event
            it->second->deliver(ev.ppid, std::move(bytes));
            break;
        }
        case EventType::assoc_restart: // data in flight both ways was lost: DDP cannot go on
            ep_->abort(ev.assoc, "peer restarted", now());
            driver_->mark_due();
            ended(ev.assoc, "the peer restarted the association", failed);
            break;
        case EventType::shutdown_complete: ended(ev.assoc, "association shut down", failed); break;
        case EventType::assoc_lost:
        case EventType::cant_start:
            ended(ev.assoc, (ev.type == EventType::cant_start ? "association could not be started: " : "association lost: ") +
                                ev.reason,
                  failed);
            break;
        case EventType::send_space:
        case EventType::path_change: break;
        }
    }
    return taken;
}

void OwnDdpEndpoint::flush() { driver_->output_if_due(); }

std::optional<int64_t> OwnDdpEndpoint::next_deadline() const {
    auto d = ep_->next_deadline();
    return d ? std::optional<int64_t>(int64_t(*d)) : std::nullopt;
}

} // namespace iwarp
