// SPDX-License-Identifier: BSD-3-Clause
// Multihoming (RFC 9260 §5.4, §6.4, §8.1-§8.3; RFC 7829 SCTP-PF): the peer's addresses as paths,
// their states and error counters, HEARTBEAT probing with a nonce (so that only an ack of a
// heartbeat we sent can revive or confirm a path), and the choice of the path data goes to:
// the primary while it is active, else another active path, and back when the primary answers.
#include <cstring>

#include "sctp/impl.hpp"

namespace sctpm::sctp {

using namespace wire;

namespace {

bool same_ip(const Address& a, const Address& b) {
    if (a.family != b.family)
        return false;
    return std::memcmp(a.ip, b.ip, a.family == AF_INET ? 4 : 16) == 0;
}

// Our Heartbeat Info (it only ever comes back to us): nonce, send time, path index.
constexpr size_t kHbInfoValue = 8 + 8 + 4;

bool data_state(AssocState s) {
    return s == AssocState::established || s == AssocState::shutdown_pending ||
           s == AssocState::shutdown_received || s == AssocState::shutdown_sent;
}

} // namespace

const char* to_string(PathState s) {
    switch (s) {
    case PathState::active: return "active";
    case PathState::potentially_failed: return "potentially-failed";
    case PathState::inactive: return "inactive";
    case PathState::unconfirmed: return "unconfirmed";
    }
    return "?";
}

Path* Endpoint::Impl::add_path(Assoc* a, const Address& addr, bool confirmed, Time now) {
    if (Path* p = path_of(a, addr))
        return p;
    if (a->paths.size() >= kMaxPaths || !addr.is_set())
        return nullptr;
    Path& p = a->paths.emplace_back();
    p.index = static_cast<uint8_t>(a->paths.size() - 1);
    p.addr = addr;
    p.state = confirmed ? PathState::active : PathState::unconfirmed;
    p.rto = cfg.rto_initial;
    // Initial cwnd (§7.2.1): min(4 MTU, max(2 MTU, 4380)).
    uint32_t m = a->mtu;
    p.cwnd = std::min(4 * m, std::max(2 * m, 4380u));
    p.ssthresh = a->cur != nullptr ? a->cur->ssthresh : cfg.rwnd;
    p.last_sent = now;
    PeerKey k{addr};
    k.addr.port = a->peer_port;
    by_peer.try_emplace(k, a);
    if (data_state(a->state) && cfg.heartbeat_interval > 0) {
        p.t_hb = now; // learned while up: probe it at once
        rearm_hb(a);
    }
    return &p;
}

Path* Endpoint::Impl::path_lookup(Assoc* a, const Address& from) const {
    for (Path& p : a->paths)
        if (same_ip(p.addr, from))
            return &p;
    return nullptr;
}

void Endpoint::Impl::set_path_state(Assoc* a, Path* p, PathState s) {
    if (p->state == s)
        return;
    p->state = s;
    PendingEvent& e = events.emplace_back_reuse();
    e.type = EventType::path_change;
    e.assoc = a->id;
    e.data.clear();
    e.reason.clear();
    e.peer = a->cur->addr;
    e.path = p->addr;
    e.path_state = s;
}

void Endpoint::Impl::select_path(Assoc* a) {
    Path* best = &a->paths[a->primary];
    if (best->state != PathState::active) {
        Path* pf = nullptr;
        best = nullptr;
        for (Path& p : a->paths) {
            if (p.state == PathState::active) {
                best = &p;
                break;
            }
            // RFC 7829 §4.1: with no active path, the PF path with the fewest errors.
            if (p.state == PathState::potentially_failed && (pf == nullptr || p.errors < pf->errors))
                pf = &p;
        }
        if (best == nullptr)
            best = pf;
        if (best == nullptr)
            best = a->cur->state == PathState::unconfirmed ? &a->paths[a->primary] : a->cur;
    }
    if (best != a->cur) {
        a->cur = best;
        a->burst = 0;
        mark_ready(a);
    }
}

bool Endpoint::Impl::path_timeout(Assoc* a, Path* p, Time now, bool t3) {
    (void)now;
    ++p->errors;
    // An unanswered probe of an address that never answered (§5.4) says nothing about the
    // association (a peer may list addresses we cannot reach); it stays unconfirmed.
    if (p->state == PathState::unconfirmed && !t3)
        return true;
    if (++a->errors > cfg.max_retransmits) {
        send_abort(a->cur->addr, a->cur->local, a->peer_port, a->peer_tag, false, 0, nullptr, 0);
        end_assoc(a, EventType::assoc_lost,
                  (t3 ? "T3-rtx expired " + std::to_string(a->errors) + " times in a row"
                      : "a HEARTBEAT went unanswered (timeout " + std::to_string(a->errors) + " in a row)") +
                      ": the association error count exceeded Association.Max.Retrans (" +
                      std::to_string(cfg.max_retransmits) + "), the peer is unreachable on every path");
        return false;
    }
    // (Data reaches an unconfirmed path only for want of any other; it stays unconfirmed.)
    if (p->state != PathState::unconfirmed) {
        if (p->errors > cfg.path_max_retransmits)
            set_path_state(a, p, PathState::inactive);
        else if (p->errors > cfg.pf_max_retransmits && p->state == PathState::active && a->paths.size() > 1)
            set_path_state(a, p, PathState::potentially_failed);
    }
    select_path(a);
    return true;
}

void Endpoint::Impl::path_alive(Assoc* a, Path* p) {
    p->errors = 0;
    a->errors = 0;
    if (p->state != PathState::active) {
        set_path_state(a, p, PathState::active);
        select_path(a);
    }
}

uint64_t Endpoint::Impl::hb_random() {
    if (!hb_rng_seeded) {
        uint8_t b[8];
        random(b, sizeof b);
        std::memcpy(&hb_rng, b, sizeof b);
        hb_rng_seeded = true;
    }
    // splitmix64 step.
    uint64_t z = (hb_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

Time Endpoint::Impl::hb_next(const Path& p, Time now) {
    // §8.3: HB.interval + RTO, jittered by +-RTO/2 so that paths do not probe in lockstep.
    Time jitter = p.rto > 1 ? static_cast<Time>(hb_random() % static_cast<uint64_t>(p.rto)) - p.rto / 2 : 0;
    return now + cfg.heartbeat_interval + p.rto + jitter;
}

void Endpoint::Impl::rearm_hb(Assoc* a) {
    Time t = kNever;
    for (const Path& p : a->paths)
        t = std::min(t, p.t_hb);
    a->t_hb = t;
    arm(a);
}

void Endpoint::Impl::start_heartbeats(Assoc* a, Time now) {
    select_path(a); // the handshake may have tried other addresses (T1): data starts on the primary
    if (cfg.heartbeat_interval <= 0)
        return;
    for (Path& p : a->paths)
        p.t_hb = p.state == PathState::active ? hb_next(p, now) : now;
    rearm_hb(a);
}

void Endpoint::Impl::send_heartbeat(Assoc* a, Path* p, Time now) {
    uint8_t buf[64];
    PacketBuilder b(buf, sizeof buf);
    b.header(cfg.local_port, a->peer_port, a->peer_tag);
    b.open_chunk(kHeartbeat, 0);
    uint8_t v[kHbInfoValue];
    p->hb_nonce = hb_random();
    put32(v, static_cast<uint32_t>(p->hb_nonce >> 32));
    put32(v + 4, static_cast<uint32_t>(p->hb_nonce));
    put32(v + 8, static_cast<uint32_t>(static_cast<uint64_t>(now) >> 32));
    put32(v + 12, static_cast<uint32_t>(now));
    put32(v + 16, p->index);
    b.put_tlv(kHeartbeatInfo, v, sizeof v);
    b.close_chunk();
    queue_raw(p->addr, p->local, buf, b.finish());
    p->hb_out = true;
    p->last_sent = now;
    p->t_hb = now + p->rto; // unanswered within an RTO: an error (§8.3)
}

void Endpoint::Impl::on_hb_timer(Assoc* a, Time now) {
    a->t_hb = kNever;
    if (cfg.heartbeat_interval <= 0)
        return;
    for (Path& p : a->paths) {
        if (p.t_hb > now)
            continue;
        if (!data_state(a->state)) {
            p.t_hb = kNever;
            continue;
        }
        bool timed_out = p.hb_out;
        if (timed_out) {
            p.hb_out = false;
            p.rto = std::min(p.rto * 2, cfg.rto_max); // §6.3.3 E2 for the probe as well
            if (!path_timeout(a, &p, now, false))
                return;
        }
        // PF and unconfirmed paths are probed every RTO (RFC 7829 §4, RFC 9260 §5.4); inactive
        // ones every HB.interval; active ones when idle for HB.interval (data going there shows
        // it works, until T3 says otherwise). A path with data outstanding is not idle.
        bool busy = &p == a->cur && a->t3 != kNever;
        bool probe = p.state == PathState::potentially_failed || p.state == PathState::unconfirmed ||
                     (p.state == PathState::inactive && !timed_out) ||
                     (p.state == PathState::active && !busy && now - p.last_sent >= cfg.heartbeat_interval);
        if (p.state == PathState::inactive && timed_out)
            p.last_sent = now; // the next probe one HB.interval from now
        if (busy && !probe)
            p.last_sent = now;
        if (probe)
            send_heartbeat(a, &p, now);
        else
            p.t_hb = hb_next(p, p.last_sent); // later than now: the path is not idle yet
    }
    rearm_hb(a);
}

void Endpoint::Impl::on_heartbeat_ack(Assoc* a, const Chunk& c, Time now) {
    Span info;
    if (parse_heartbeat(c, info) != nullptr || info.n != 4 + kHbInfoValue || get16(info.p) != kHeartbeatInfo) {
        stats.last_drop = "HEARTBEAT-ACK with an info we did not send (ignored)";
        return;
    }
    const uint8_t* v = info.p + 4;
    uint64_t nonce = static_cast<uint64_t>(get32(v)) << 32 | get32(v + 4);
    Time sent = static_cast<Time>(static_cast<uint64_t>(get32(v + 8)) << 32 | get32(v + 12));
    uint32_t idx = get32(v + 16);
    if (idx >= a->paths.size() || !a->paths[idx].hb_out || a->paths[idx].hb_nonce != nonce || sent > now) {
        stats.last_drop = "HEARTBEAT-ACK with a nonce we never sent or already saw (ignored)";
        return;
    }
    Path* p = &a->paths[idx];
    p->hb_out = false;
    rtt_sample(p, now - sent);
    path_alive(a, p); // confirms an unconfirmed address too (§5.4)
    p->t_hb = hb_next(*p, now);
    rearm_hb(a);
}

void Endpoint::Impl::add_init_addresses(PacketBuilder& b) {
    for (const Address& l : cfg.local_addresses)
        if (l.family == AF_INET)
            b.put_tlv(kIPv4Address, l.ip, 4);
}

} // namespace sctpm::sctp
