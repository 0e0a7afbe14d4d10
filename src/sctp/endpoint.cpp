// SPDX-License-Identifier: BSD-3-Clause
// Endpoint: the public API's entry points, the association table (slots with generations, O(1)
// lookup by id, by verification tag and by peer), the timer heap, the event queue, and the
// per-packet dispatch of chunks (RFC 9260 §8.4 out-of-the-blue rules, §8.5 verification tags).
#include <cerrno>
#include <cstring>

#include "sctp/impl.hpp"

namespace sctpm::sctp {

using namespace wire;

namespace {

constexpr uint32_t kSlotBits = 20;
constexpr uint32_t kSlotMask = (1u << kSlotBits) - 1;

AssocId make_id(uint32_t slot, uint32_t gen) { return (gen & 0xfff) << kSlotBits | (slot + 1); }

PeerKey peer_key(const Address& ip, uint16_t sctp_port) {
    PeerKey k{ip};
    k.addr.port = sctp_port;
    return k;
}

} // namespace

// ---- helpers of the API's types ------------------------------------------------------------------
RandomSource seeded_random(uint64_t seed) {
    // splitmix64: tiny, good enough for tags in a simulation, exactly reproducible.
    return [s = seed](uint8_t* p, size_t n) mutable {
        while (n > 0) {
            uint64_t z = (s += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            size_t k = n < 8 ? n : 8;
            std::memcpy(p, &z, k);
            p += k;
            n -= k;
        }
    };
}

const char* to_string(EventType t) {
    switch (t) {
    case EventType::assoc_up: return "assoc_up";
    case EventType::data: return "data";
    case EventType::send_space: return "send_space";
    case EventType::assoc_restart: return "assoc_restart";
    case EventType::shutdown_complete: return "shutdown_complete";
    case EventType::assoc_lost: return "assoc_lost";
    case EventType::cant_start: return "cant_start";
    case EventType::path_change: return "path_change";
    }
    return "?";
}

const char* to_string(AssocState s) {
    switch (s) {
    case AssocState::cookie_wait: return "COOKIE-WAIT";
    case AssocState::cookie_echoed: return "COOKIE-ECHOED";
    case AssocState::established: return "ESTABLISHED";
    case AssocState::shutdown_pending: return "SHUTDOWN-PENDING";
    case AssocState::shutdown_sent: return "SHUTDOWN-SENT";
    case AssocState::shutdown_received: return "SHUTDOWN-RECEIVED";
    case AssocState::shutdown_ack_sent: return "SHUTDOWN-ACK-SENT";
    }
    return "?";
}

// ---- Impl: associations -------------------------------------------------------------------------
Endpoint::Impl::Impl(const Config& c, RandomSource r) : cfg(c), random(std::move(r)) {
    if (cfg.mtu < 256)
        cfg.mtu = 256; // room for INIT-ACK with its cookie; RFC 9260 assumes at least 576 anyway
    if (cfg.mtu > 65535)
        cfg.mtu = 65535;
    if (cfg.sack_every == 0)
        cfg.sack_every = 1;
    if (cfg.outbound_streams == 0)
        cfg.outbound_streams = 1;
    if (cfg.inbound_streams == 0)
        cfg.inbound_streams = 1;
    if (cfg.rwnd < 1500)
        cfg.rwnd = 1500;
    random(secret, sizeof secret);
}

uint32_t Endpoint::Impl::random32() {
    uint8_t b[4];
    random(b, 4);
    uint32_t v;
    std::memcpy(&v, b, 4);
    return v;
}

uint32_t Endpoint::Impl::random_tag() {
    for (;;) {
        uint32_t t = random32();
        if (t != 0 && by_tag.find(t) == by_tag.end())
            return t;
    }
}

Assoc* Endpoint::Impl::find(AssocId id) const {
    uint32_t s = (id & kSlotMask);
    if (s == 0 || s > slots.size())
        return nullptr;
    Assoc* a = slots[s - 1].get();
    return a && a->id == id ? a : nullptr;
}

Assoc* Endpoint::Impl::create_assoc(const Address& peer, uint16_t peer_port, uint32_t local_tag, Time now) {
    uint32_t slot;
    if (!free_slots.empty()) {
        slot = free_slots.front();
        free_slots.pop_front();
    } else {
        if (slots.size() >= kSlotMask - 1)
            return nullptr;
        slot = static_cast<uint32_t>(slots.size());
        slots.emplace_back();
        gens.push_back(0);
    }
    auto a = std::make_unique<Assoc>();
    a->slot = slot;
    a->id = make_id(slot, gens[slot]);
    a->local_tag = local_tag;
    a->peer_port = peer_port;
    a->mtu = cfg.mtu;
    a->os = cfg.outbound_streams;
    a->is = cfg.inbound_streams;
    a->next_ssn.assign(cfg.outbound_streams, 0);
    a->initial_tsn = random32();
    a->next_tsn = a->tx_base = a->initial_tsn;
    a->peer_rwnd = cfg.rwnd;
    a->paths.reserve(kMaxPaths);
    a->cur = add_path(a.get(), peer, true, now);
    a->map.resize(64);
    a->last_adv = cfg.rwnd;
    a->last_data_sent = now;
    Assoc* p = a.get();
    slots[slot] = std::move(a);
    by_tag[local_tag] = p;
    by_peer[peer_key(peer, peer_port)] = p;
    ++live;
    return p;
}

void Endpoint::Impl::remove(Assoc* a) {
    if (a->dead)
        return;
    a->dead = true;
    auto t = by_tag.find(a->local_tag);
    if (t != by_tag.end() && t->second == a)
        by_tag.erase(t);
    for (const Path& pa : a->paths) {
        auto k = by_peer.find(peer_key(pa.addr, a->peer_port));
        if (k != by_peer.end() && k->second == a)
            by_peer.erase(k);
    }
    for (auto& m : a->msgs)
        if (m.data.capacity())
            pool.put(std::move(m.data));
    uint32_t slot = a->slot;
    ++gens[slot];
    graveyard.push_back(std::move(slots[slot])); // freed after the current API call returns
    free_slots.push_back(slot);
    --live;
}

void Endpoint::Impl::end_assoc(Assoc* a, EventType type, std::string reason) {
    if (a->dead)
        return;
    PendingEvent& e = events.emplace_back_reuse();
    e.type = type;
    e.assoc = a->id;
    e.data.clear();
    e.peer = a->cur->addr;
    e.reason = std::move(reason);
    e.abort_chunk.clear();
    remove(a);
}

void Endpoint::Impl::up_event(Assoc* a, EventType type) {
    PendingEvent& e = events.emplace_back_reuse();
    e.type = type;
    e.assoc = a->id;
    e.data.clear();
    e.peer = a->cur->addr;
    e.outbound_streams = a->os;
    e.inbound_streams = a->is;
    e.peer_adaptation = a->peer_adaptation;
    e.reason.clear();
}

void Endpoint::Impl::mark_ready(Assoc* a) {
    if (!a->in_ready && !a->dead) {
        a->in_ready = true;
        ready.push_back(a->id);
    }
}

void Endpoint::Impl::arm(Assoc* a) {
    Time t = std::min(std::min(std::min(a->t1, a->t2), std::min(a->t3, a->t_sack)), std::min(a->t_hb, a->t5));
    if (t < a->armed_at) {
        a->armed_at = t;
        timers.push(TimerEntry{t, a->slot, a->id});
    }
}

void Endpoint::Impl::queue_raw(const Address& to, const Address& from, const uint8_t* p, size_t n) {
    if (raw.size() >= kMaxRaw || n == 0) {
        stats.last_drop = "reply dropped: too many replies queued";
        return;
    }
    RawPacket& r = raw.emplace_back_reuse();
    r.to = to;
    r.from = from;
    if (r.bytes.capacity() == 0)
        r.bytes = pool.get(n);
    r.bytes.assign(p, p + n);
}

void Endpoint::Impl::send_abort(const Address& to, const Address& from, uint16_t peer_port, uint32_t vtag,
                                bool t_bit, uint16_t cause, const void* value, size_t len) {
    uint8_t buf[512];
    PacketBuilder b(buf, std::min<size_t>(sizeof buf, cfg.mtu));
    b.header(cfg.local_port, peer_port, vtag);
    b.open_chunk(kAbort, t_bit ? kFlagT : 0);
    if (cause != 0)
        b.put_tlv(cause, value, std::min<size_t>(len, 256));
    b.close_chunk();
    size_t n = b.finish();
    queue_raw(to, from, buf, n);
}

void Endpoint::Impl::violation(Assoc* a, const char* what) {
    if (a->dead)
        return;
    if (a->peer_tag != 0)
        send_abort(a->cur->addr, a->cur->local, a->peer_port, a->peer_tag, false, kProtocolViolation, what, std::strlen(what));
    end_assoc(a, a->was_up ? EventType::assoc_lost : EventType::cant_start,
              std::string("protocol violation by the peer: ") + what);
}

void Endpoint::Impl::drop(const char* why, uint64_t& counter) {
    ++counter;
    stats.last_drop = why;
}

// ---- Impl: one received packet -----------------------------------------------------------------
bool Endpoint::Impl::unknown_chunk(Assoc* a, const Address& from, const Address& to, const CommonHeader& h,
                                   const Chunk& c) {
    (void)h;
    UnknownAction act = unknown_chunk_action(c.type);
    if (reports(act) && a != nullptr && a->peer_tag != 0) {
        uint8_t buf[512];
        PacketBuilder b(buf, std::min<size_t>(sizeof buf, cfg.mtu));
        b.header(cfg.local_port, a->peer_port, a->peer_tag);
        b.open_chunk(kError, 0);
        // The cause carries the unrecognized chunk (header and as much of it as fits).
        size_t n = std::min<size_t>(kChunkHeaderSize + c.value_len, 256);
        b.put_tlv(kUnrecognizedChunk, c.value - kChunkHeaderSize, n);
        b.close_chunk();
        queue_raw(from, to, buf, b.finish());
    }
    return !stops(act);
}

void Endpoint::Impl::ootb(const Address& from, const Address& to, const CommonHeader& h, const uint8_t* p,
                          size_t n) {
    ++stats.ootb;
    ChunkIter it(p, n);
    Chunk c;
    bool first = true;
    uint8_t first_type = 0;
    while (it.next(c)) {
        if (c.type == kAbort) {
            stats.last_drop = "out of the blue packet with ABORT (discarded, §8.4)";
            return;
        }
        if (first)
            first_type = c.type;
        first = false;
    }
    switch (first_type) {
    case kShutdownAck: {
        uint8_t buf[16];
        PacketBuilder b(buf, sizeof buf);
        b.header(cfg.local_port, h.src_port, h.vtag);
        b.open_chunk(kShutdownComplete, kFlagT);
        b.close_chunk();
        queue_raw(from, to, buf, b.finish());
        stats.last_drop = "out of the blue SHUTDOWN-ACK (answered with SHUTDOWN-COMPLETE)";
        return;
    }
    case kShutdownComplete:
    case kCookieAck:
    case kError:
        stats.last_drop = "out of the blue SHUTDOWN-COMPLETE, COOKIE-ACK or ERROR (discarded)";
        return;
    default:
        send_abort(from, to, h.src_port, h.vtag, true, 0, nullptr, 0);
        stats.last_drop = "out of the blue packet (answered with ABORT)";
    }
}

void Endpoint::Impl::process(const Address& from, const Address& to, const uint8_t* p, size_t n, Time now) {
    ++stats.packets_in;
    CommonHeader h;
    if (const char* why = check_packet(p, n, true, h)) {
        drop(why, std::strcmp(why, "bad CRC32c checksum") == 0 ? stats.bad_checksum : stats.malformed);
        return;
    }
    if (h.dst_port != cfg.local_port || h.src_port == 0) {
        drop(h.src_port == 0 ? "source port 0" : "destination port is not this endpoint's", stats.malformed);
        return;
    }
    ChunkIter it(p, n);
    Chunk c;
    it.next(c);
    Assoc* a = nullptr;
    if (c.type == kInit) {
        Chunk more;
        ChunkIter rest = it;
        if (rest.next(more)) {
            drop("INIT bundled with other chunks", stats.malformed);
            return;
        }
        if (h.vtag != 0) {
            drop("INIT with a nonzero verification tag", stats.bad_vtag);
            return;
        }
        on_init(from, to, h, c, now);
        return;
    }
    if (c.type == kCookieEcho) {
        auto k = by_peer.find(peer_key(from, h.src_port));
        a = on_cookie_echo(k == by_peer.end() ? nullptr : k->second, from, to, h, c, now);
        if (a == nullptr || a->dead)
            return;
        if (!it.next(c))
            return;
    } else {
        auto t = by_tag.find(h.vtag);
        if (t != by_tag.end()) {
            a = t->second;
        } else if ((c.type == kAbort || c.type == kShutdownComplete) && (c.flags & kFlagT)) {
            // T bit: the sender reflected our peer's tag (§8.5.1).
            auto k = by_peer.find(peer_key(from, h.src_port));
            if (k != by_peer.end() && k->second->peer_tag == h.vtag)
                a = k->second;
        }
        if (a == nullptr) {
            if (by_peer.find(peer_key(from, h.src_port)) != by_peer.end())
                drop("verification tag does not match the association", stats.bad_vtag);
            else
                ootb(from, to, h, p, n);
            return;
        }
        if (a->peer_port != h.src_port) {
            drop("source port does not match the association", stats.bad_vtag);
            return;
        }
        if ((c.type == kAbort || c.type == kShutdownComplete) && !(c.flags & kFlagT) && h.vtag != a->local_tag) {
            drop("verification tag does not match the association", stats.bad_vtag);
            return;
        }
    }
    // Packets from any of the peer's addresses belong to it (the tag decided). RFC 6951: replies
    // go to the UDP port the peer's packets come from, one port for all its addresses.
    Path* pa = path_of(a, from);
    if (pa != nullptr) {
        if (pa->addr.port != from.port)
            for (Path& q : a->paths)
                q.addr.port = from.port;
        if (to.is_set())
            pa->local = to;
    }

    bool data_seen = false, immediate = false;
    do {
        switch (c.type) {
        case kData: {
            DataChunk d;
            if (const char* why = parse_data(c, d)) {
                if (why == kNoUserDataReason) {
                    uint8_t tsn[4];
                    put32(tsn, d.tsn);
                    send_abort(a->cur->addr, a->cur->local, a->peer_port, a->peer_tag, false, kNoUserData, tsn, 4);
                    end_assoc(a, a->was_up ? EventType::assoc_lost : EventType::cant_start,
                              "the peer sent a DATA chunk without user data (aborted)");
                } else {
                    drop(why, stats.malformed);
                }
                return;
            }
            on_data(a, d, immediate);
            data_seen = true;
            break;
        }
        case kInit:
            drop("INIT bundled with other chunks", stats.malformed);
            return;
        case kInitAck:
            on_init_ack(a, c, now);
            break;
        case kSack: {
            SackChunk s;
            if (const char* why = parse_sack(c, s)) {
                drop(why, stats.malformed);
                return;
            }
            on_sack(a, s, now);
            break;
        }
        case kHeartbeat: {
            Span info;
            if (const char* why = parse_heartbeat(c, info)) {
                drop(why, stats.malformed);
                return;
            }
            if (a->peer_tag != 0 && info.n + 32 <= cfg.mtu) {
                uint8_t buf[2048];
                PacketBuilder b(buf, std::min<size_t>(sizeof buf, cfg.mtu));
                b.header(cfg.local_port, a->peer_port, a->peer_tag);
                b.open_chunk(kHeartbeatAck, 0);
                b.put_bytes(info.p, info.n);
                b.close_chunk();
                queue_raw(from, to, buf, b.finish()); // §8.3: to the HEARTBEAT's source, known or not
            }
            break;
        }
        case kHeartbeatAck:
            on_heartbeat_ack(a, c, now);
            break;
        case kEcne:
        case kCwr:
        case kCookieEcho: // only meaningful first in its packet
            break;
        case kAbort:
            on_abort(a, c);
            break;
        case kShutdown:
            on_shutdown(a, c, now);
            break;
        case kShutdownAck:
            on_shutdown_ack(a, now);
            break;
        case kShutdownComplete:
            on_shutdown_complete(a);
            break;
        case kError:
            on_error(a, c, now);
            break;
        case kCookieAck:
            on_cookie_ack(a, now);
            break;
        default:
            if (!unknown_chunk(a, from, to, h, c)) {
                stats.last_drop = "unrecognized chunk type asked to stop processing the packet";
                if (data_seen && !a->dead)
                    after_data_packet(a, immediate, n, now);
                return;
            }
        }
        if (a->dead)
            return;
    } while (it.next(c));
    if (data_seen) {
        a->reply = pa;
        after_data_packet(a, immediate, n, now);
    }
}

// ---- Endpoint API ----------------------------------------------------------------------------------
Endpoint::Endpoint(const Config& cfg, RandomSource random) : impl_(std::make_unique<Impl>(cfg, std::move(random))) {}
Endpoint::~Endpoint() = default;

const Config& Endpoint::config() const { return impl_->cfg; }

void Endpoint::receive(const Address& from, const Address& to, const uint8_t* bytes, size_t len, Time now) {
    impl_->process(from, to, bytes, len, now);
    if (!impl_->graveyard.empty())
        impl_->graveyard.clear();
}

void Endpoint::end_of_batch(Time) {
    Impl& m = *impl_;
    for (AssocId id : m.batch_list) {
        if (Assoc* a = m.find(id)) {
            a->in_batch_list = false;
            if (a->sack_wanted) {
                a->sack_due = true;
                m.mark_ready(a);
            }
        }
    }
    m.batch_list.clear();
}

void Endpoint::handle_timeout(Time now) {
    Impl& m = *impl_;
    // Collect what is due first: a timer re-armed at `now` waits for the next call.
    m.due.clear();
    while (!m.timers.empty() && m.timers.top().t <= now) {
        m.due.push_back(m.timers.top());
        m.timers.pop();
    }
    for (const TimerEntry& e : m.due) {
        Assoc* a = m.find(e.id);
        if (a == nullptr || a->armed_at != e.t)
            continue; // stale entry: the association ended or re-armed earlier
        a->armed_at = kNever;
        if (a->t1 <= now)
            m.on_t1(a, now);
        if (!a->dead && a->t3 <= now)
            m.on_t3(a, now);
        if (!a->dead && a->t_sack <= now) {
            a->t_sack = kNever;
            a->sack_due = true;
            m.mark_ready(a);
        }
        if (!a->dead && a->t2 <= now)
            m.on_t2(a, now);
        if (!a->dead && a->t_hb <= now)
            m.on_hb_timer(a, now);
        if (!a->dead && a->t5 <= now)
            m.on_t5(a, now);
        if (!a->dead)
            m.arm(a);
    }
    m.graveyard.clear();
}

void Endpoint::send_failed(const Address& to, int error, Time) {
    ++impl_->stats.send_failures;
    impl_->stats.last_drop = "send to " + to.to_string() + " failed: errno " + std::to_string(error);
}

AssocId Endpoint::connect(std::span<const Address> remotes, uint16_t remote_port, Time now) {
    Impl& m = *impl_;
    const Address* to = nullptr;
    for (const Address& r : remotes)
        if (r.is_set()) {
            to = &r;
            break;
        }
    if (to == nullptr || remote_port == 0)
        return kNoAssoc;
    auto k = m.by_peer.find(peer_key(*to, remote_port));
    if (k != m.by_peer.end())
        return k->second->id;
    Assoc* a = m.create_assoc(*to, remote_port, m.random_tag(), now);
    if (a == nullptr)
        return kNoAssoc;
    // The other addresses the caller gave are paths too, unconfirmed until a heartbeat comes
    // back (§5.4: only the one the INIT went to is confirmed by the handshake).
    for (const Address& r : remotes)
        if (r.is_set() && &r != to)
            m.add_path(a, r, false, now);
    a->init_due = true;
    a->t1 = now + a->cur->rto;
    m.arm(a);
    m.mark_ready(a);
    return a->id;
}

int Endpoint::send(AssocId id, uint16_t stream, const iovec* iov, int iovcnt, bool unordered, Time now,
                   uint32_t ppid) {
    Assoc* a = impl_->find(id);
    if (a == nullptr)
        return -ENOTCONN;
    return impl_->send(a, stream, iov, iovcnt, unordered, ppid, now);
}

std::optional<Transmit> Endpoint::poll_transmit(uint8_t* buf, size_t cap, size_t max_segments, Time now) {
    auto r = impl_->poll_transmit(buf, cap, max_segments, now);
    if (!impl_->graveyard.empty())
        impl_->graveyard.clear();
    return r;
}

bool Endpoint::event_pending() const { return !impl_->events.empty(); }

bool Endpoint::transmit_pending() const { return !impl_->raw.empty() || !impl_->ready.empty(); }

bool Endpoint::take_data(std::vector<uint8_t>& out) {
    Impl& m = *impl_;
    if (m.current_small_len) {
        out.assign(m.current_small, m.current_small + m.current_small_len);
        m.current_small_len = 0;
        return true;
    }
    if (!m.current.capacity())
        return false;
    out.swap(m.current);
    m.pool.put(std::move(m.current));
    return true;
}

bool Endpoint::poll_event(Event& ev) {
    Impl& m = *impl_;
    m.current_small_len = 0;
    if (m.current.capacity())
        m.pool.put(std::move(m.current));
    if (m.events.empty())
        return false;
    PendingEvent& p = m.events.front();
    ev.type = p.type;
    ev.assoc = p.assoc;
    if (p.type == EventType::data) {
        ev.stream = p.stream;
        ev.ppid = p.ppid;
        ev.unordered = p.unordered;
        size_t len;
        if (p.is_small) {
            len = p.small_len;
            std::memcpy(m.current_small, p.small, len);
            m.current_small_len = len;
            ev.data = std::span<const uint8_t>(m.current_small, len);
        } else {
            m.current = std::move(p.data);
            len = m.current.size();
            ev.data = std::span<const uint8_t>(m.current.data(), len);
        }
        ev.path_address = p.path;
        m.events.pop_front();
        if (Assoc* a = m.find(ev.assoc))
            m.taken(a, len);
        return true;
    }
    ev.stream = 0;
    ev.ppid = 0;
    ev.unordered = false;
    ev.data = {};
    ev.peer = p.peer;
    ev.outbound_streams = p.outbound_streams;
    ev.inbound_streams = p.inbound_streams;
    ev.peer_adaptation = p.peer_adaptation;
    ev.reason = std::move(p.reason);
    ev.abort_chunk.clear();
    if (p.type == EventType::assoc_lost || p.type == EventType::cant_start)
        ev.abort_chunk.swap(p.abort_chunk);
    ev.path_address = p.path;
    ev.path_state = p.path_state;
    m.events.pop_front();
    return true;
}

std::optional<Time> Endpoint::next_deadline() const {
    Impl& m = *impl_;
    // Drop stale entries on top. A live entry may still be early (its timer was stopped or
    // pushed back since): the caller then wakes once for nothing, which costs less than keeping
    // the heap exact on every timer restart.
    while (!m.timers.empty()) {
        const TimerEntry& e = m.timers.top();
        Assoc* a = m.find(e.id);
        if (a != nullptr && a->armed_at == e.t)
            return e.t;
        m.timers.pop();
    }
    return std::nullopt;
}

std::optional<AssocInfo> Endpoint::info(AssocId id) const {
    Assoc* a = impl_->find(id);
    if (a == nullptr)
        return std::nullopt;
    AssocInfo i = a->counters;
    i.state = a->state;
    i.peer = a->cur->addr;
    i.peer_port = a->peer_port;
    i.outbound_streams = a->os;
    i.inbound_streams = a->is;
    i.mtu = a->mtu;
    i.cwnd = a->cur->cwnd;
    i.ssthresh = a->cur->ssthresh;
    i.flight_size = a->flight;
    i.peer_rwnd = a->peer_rwnd;
    i.rto = a->cur->rto;
    i.srtt = a->cur->srtt;
    i.send_queued = a->queued;
    i.paths.reserve(a->paths.size());
    for (size_t k = 0; k < a->paths.size(); ++k) {
        const Path& pa = a->paths[k];
        PathInfo pi;
        pi.address = pa.addr;
        pi.state = pa.state;
        pi.primary = k == a->primary;
        pi.current = &pa == a->cur;
        pi.srtt = pa.srtt;
        pi.rto = pa.rto;
        pi.cwnd = pa.cwnd;
        pi.ssthresh = pa.ssthresh;
        pi.flight_size = pa.flight;
        pi.errors = pa.errors;
        i.paths.push_back(pi);
    }
    i.recv_held = a->held;
    return i;
}

int Endpoint::set_primary(AssocId id, const Address& primary, Time) {
    Assoc* a = impl_->find(id);
    if (a == nullptr)
        return -ENOTCONN;
    Path* p = impl_->path_of(a, primary);
    if (p == nullptr)
        return -EINVAL;
    a->primary = static_cast<uint32_t>(p - a->paths.data());
    impl_->select_path(a);
    return 0;
}

const EndpointStats& Endpoint::stats() const { return impl_->stats; }
size_t Endpoint::association_count() const { return impl_->live; }

} // namespace sctpm::sctp
