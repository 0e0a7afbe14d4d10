// SPDX-License-Identifier: BSD-3-Clause
// Association setup (RFC 9260 §5): INIT / INIT-ACK with a signed State Cookie (the responder
// keeps no state until COOKIE-ECHO), COOKIE-ECHO / COOKIE-ACK, T1-init and T1-cookie
// retransmission, the Stale Cookie error, and the unexpected INIT / COOKIE-ECHO rules of §5.2
// (simultaneous open, tie-tags, peer restart).
#include <algorithm>
#include <cstring>

#include "sctp/impl.hpp"

namespace sctpm::sctp {

using namespace wire;

namespace {

PeerKey key_of(const Address& ip, uint16_t port) {
    PeerKey k{ip};
    k.addr.port = port;
    return k;
}

} // namespace

void Endpoint::Impl::write_init(PacketBuilder& b, Assoc* a) {
    b.open_chunk(kInit, 0);
    b.put32(a->local_tag);
    b.put32(cfg.rwnd);
    b.put16(cfg.outbound_streams);
    b.put16(cfg.inbound_streams);
    b.put32(a->initial_tsn);
    if (a->cookie_preservative != 0) {
        uint8_t v[4];
        put32(v, a->cookie_preservative);
        b.put_tlv(kCookiePreservative, v, 4);
    }
    add_init_addresses(b);
    add_adaptation(b);
    b.close_chunk();
}

void Endpoint::Impl::add_adaptation(PacketBuilder& b) {
    if (!cfg.adaptation_indication)
        return;
    uint8_t v[4];
    put32(v, *cfg.adaptation_indication);
    b.put_tlv(kAdaptationLayerIndication, v, 4);
}

void Endpoint::Impl::on_init(const Address& from, const Address& to, const CommonHeader& h, const Chunk& c,
                             Time now) {
    InitChunk in;
    if (const char* why = parse_init(c, in)) {
        drop(why, stats.malformed);
        return;
    }
    if (in.tag == 0) {
        drop("INIT with Initiate Tag 0", stats.malformed); // §3.3.2: silently discarded
        return;
    }
    if (in.outbound_streams == 0 || in.inbound_streams == 0) {
        send_abort(from, to, h.src_port, in.tag, false, kInvalidMandatoryParam, nullptr, 0);
        drop("INIT with zero streams (answered with ABORT)", stats.malformed);
        return;
    }
    auto k = by_peer.find(key_of(from, h.src_port));
    Assoc* a = k == by_peer.end() ? nullptr : k->second;
    if (a != nullptr && a->state == AssocState::shutdown_ack_sent) {
        a->shutdown_ack_due = true; // §9.2: our SHUTDOWN-COMPLETE was lost; repeat SHUTDOWN-ACK
        mark_ready(a);
        return;
    }

    CookieData ck;
    ck.created = now;
    Time extra = std::min<Time>(static_cast<Time>(in.cookie_preservative) * 1000, cfg.cookie_lifetime);
    ck.lifetime = cfg.cookie_lifetime + extra;
    ck.peer_tag = in.tag;
    ck.peer_tsn = in.initial_tsn;
    ck.peer_rwnd = in.a_rwnd;
    ck.outbound_streams = std::min(cfg.outbound_streams, in.inbound_streams);
    ck.inbound_streams = std::min(cfg.inbound_streams, in.outbound_streams);
    ck.local_port = cfg.local_port;
    ck.peer_port = h.src_port;
    // §5.1.2: the INIT's addresses become paths once the cookie comes back.
    ck.addr_count = static_cast<uint8_t>(std::min<size_t>(in.ipv4_addresses, CookieData::kMaxAddresses));
    std::memcpy(ck.addrs, in.ipv4, sizeof(ck.addrs[0]) * ck.addr_count);
    ck.has_adaptation = in.has_adaptation;
    ck.adaptation = in.adaptation;
    if (a == nullptr) {
        ck.local_tag = random_tag();
        ck.local_tsn = random32();
    } else if (a->state == AssocState::cookie_wait || a->state == AssocState::cookie_echoed) {
        // §5.2.1: answer with the parameters of our own INIT (same tag); COOKIE-ECHOED also
        // records the current tags as tie-tags.
        ck.local_tag = a->local_tag;
        ck.local_tsn = a->initial_tsn;
        if (a->state == AssocState::cookie_echoed) {
            ck.local_tie_tag = a->local_tag;
            ck.peer_tie_tag = a->peer_tag;
        }
    } else {
        // §5.2.2: an INIT for an association that is up (the peer may have restarted): new tag,
        // the current tags as tie-tags.
        ck.local_tag = random_tag();
        ck.local_tsn = random32();
        ck.local_tie_tag = a->local_tag;
        ck.peer_tie_tag = a->peer_tag;
    }
    uint8_t cookie[kCookieSize];
    rotate_secret(now);
    write_cookie(ck, secret, cookie);

    uint8_t buf[1024];
    PacketBuilder b(buf, std::min<size_t>(sizeof buf, cfg.mtu));
    b.header(cfg.local_port, h.src_port, in.tag);
    b.open_chunk(kInitAck, 0);
    b.put32(ck.local_tag);
    b.put32(cfg.rwnd);
    b.put16(cfg.outbound_streams);
    b.put16(cfg.inbound_streams);
    b.put32(ck.local_tsn);
    b.put_tlv(kStateCookie, cookie, sizeof cookie);
    add_init_addresses(b);
    add_adaptation(b);
    // Parameters whose type asks for a report go back as Unrecognized Parameter (§3.3.3),
    // as many as fit.
    for (size_t i = 0; i < in.unrecognized_count; ++i)
        if (pad4(4 + in.unrecognized[i].n) + 4 <= b.room())
            b.put_tlv(kUnrecognizedParam, in.unrecognized[i].p, in.unrecognized[i].n);
    b.close_chunk();
    queue_raw(from, to, buf, b.finish());
}

void Endpoint::Impl::on_init_ack(Assoc* a, const Chunk& c, Time now) {
    if (a->state != AssocState::cookie_wait)
        return; // §5.2.3: discarded in any other state
    InitChunk in;
    if (const char* why = parse_init(c, in)) {
        drop(why, stats.malformed);
        return;
    }
    if (in.tag == 0 || in.outbound_streams == 0 || in.inbound_streams == 0) {
        if (in.tag != 0)
            send_abort(a->cur->addr, a->cur->local, a->peer_port, in.tag, false, kInvalidMandatoryParam, nullptr, 0);
        end_assoc(a, EventType::cant_start, "INIT-ACK with a zero Initiate Tag or zero streams");
        return;
    }
    if (in.cookie.p == nullptr) {
        uint8_t v[6];
        put32(v, 1);
        put16(v + 4, kStateCookie);
        send_abort(a->cur->addr, a->cur->local, a->peer_port, in.tag, false, kMissingMandatoryParam, v, sizeof v);
        end_assoc(a, EventType::cant_start, "INIT-ACK without a State Cookie");
        return;
    }
    a->peer_tag = in.tag;
    a->cum = a->highest = in.initial_tsn - 1;
    a->peer_rwnd = in.a_rwnd;
    for (Path& q : a->paths)
        q.ssthresh = in.a_rwnd; // §7.2.1: the initial ssthresh is the peer's window, on every path
    a->os = std::min(cfg.outbound_streams, in.inbound_streams);
    a->is = std::min(cfg.inbound_streams, in.outbound_streams);
    a->cookie.assign(in.cookie.p, in.cookie.p + in.cookie.n);
    a->cookie_error.clear();
    a->peer_adaptation = in.has_adaptation ? std::optional<uint32_t>(in.adaptation) : std::nullopt;
    // §5.1.2: the INIT-ACK's addresses are paths (unconfirmed), with the peer's one UDP port.
    for (size_t i = 0; i < std::min<size_t>(in.ipv4_addresses, InitChunk::kMaxAddresses); ++i) {
        Address ad;
        ad.family = AF_INET;
        ad.port = a->cur->addr.port;
        std::memcpy(ad.ip, in.ipv4[i], 4);
        add_path(a, ad, false, now);
    }
    if (in.unrecognized_count > 0) {
        // An ERROR chunk with an Unrecognized Parameters cause rides behind COOKIE-ECHO.
        uint8_t buf[1024];
        PacketBuilder b(buf, sizeof buf);
        b.header(0, 0, 0);
        b.open_chunk(kError, 0);
        size_t total = 0;
        for (size_t i = 0; i < in.unrecognized_count; ++i)
            total += pad4(in.unrecognized[i].n);
        if (total + 16 <= 512) {
            b.put16(kUnrecognizedParams);
            b.put16(static_cast<uint16_t>(4 + total));
            for (size_t i = 0; i < in.unrecognized_count; ++i) {
                b.put_bytes(in.unrecognized[i].p, in.unrecognized[i].n);
                static const uint8_t zero[4] = {};
                b.put_bytes(zero, pad4(in.unrecognized[i].n) - in.unrecognized[i].n);
            }
            b.close_chunk();
            if (!b.overflowed())
                a->cookie_error.assign(buf + kCommonHeaderSize, buf + b.size());
        }
    }
    a->state = AssocState::cookie_echoed;
    a->cookie_echo_due = true;
    a->init_tries = 0;
    a->t1 = now + a->cur->rto;
    arm(a);
    mark_ready(a);
}

void Endpoint::Impl::establish(Assoc* a, const CookieData& ck, Time now) {
    a->peer_tag = ck.peer_tag;
    if (a->out.empty()) {
        a->initial_tsn = ck.local_tsn;
        a->next_tsn = a->tx_base = ck.local_tsn;
    }
    a->cum = a->highest = ck.peer_tsn - 1;
    a->peer_rwnd = ck.peer_rwnd;
    for (Path& q : a->paths)
        q.ssthresh = ck.peer_rwnd; // §7.2.1: the initial ssthresh is the peer's window, on every path
    a->os = ck.outbound_streams;
    a->is = ck.inbound_streams;
    a->peer_adaptation = ck.has_adaptation ? std::optional<uint32_t>(ck.adaptation) : std::nullopt;
    a->state = AssocState::established;
    a->t1 = kNever;
    a->init_due = a->cookie_echo_due = false;
    a->cookie.clear();
    a->cookie_error.clear();
    if (!a->was_up) {
        a->was_up = true;
        up_event(a, EventType::assoc_up);
    }
    start_heartbeats(a, now);
    mark_ready(a);
}

void Endpoint::Impl::rotate_secret(Time now) {
    if (secret_since == kNever) {
        secret_since = now;
        return;
    }
    if (now - secret_since < cfg.cookie_lifetime)
        return;
    std::memcpy(old_secret, secret, sizeof secret);
    have_old_secret = true;
    random(secret, sizeof secret);
    secret_since = now;
}

Assoc* Endpoint::Impl::on_cookie_echo(Assoc* a, const Address& from, const Address& to, const CommonHeader& h,
                                      const Chunk& c, Time now) {
    CookieData ck;
    const char* why = read_cookie(c.value, c.value_len, secret, ck);
    if (why != nullptr && have_old_secret && read_cookie(c.value, c.value_len, old_secret, ck) == nullptr)
        why = nullptr; // made before the last change of secret
    if (why != nullptr) {
        drop(why, stats.bad_cookie);
        return nullptr;
    }
    if (h.vtag != ck.local_tag) {
        drop("COOKIE-ECHO whose verification tag is not the cookie's tag", stats.bad_vtag);
        return nullptr;
    }
    if (ck.local_port != cfg.local_port || ck.peer_port != h.src_port) {
        drop("COOKIE-ECHO with a cookie made for other ports", stats.bad_cookie);
        return nullptr;
    }
    auto stale = [&]() {
        if (now <= ck.created + ck.lifetime)
            return false;
        uint64_t us = static_cast<uint64_t>(now - (ck.created + ck.lifetime));
        uint8_t v[4];
        put32(v, us > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(us));
        uint8_t buf[64];
        PacketBuilder b(buf, sizeof buf);
        b.header(cfg.local_port, h.src_port, ck.peer_tag);
        b.open_chunk(kError, 0);
        b.put_tlv(kStaleCookie, v, 4);
        b.close_chunk();
        queue_raw(from, to, buf, b.finish());
        drop("stale State Cookie (answered with Stale Cookie Error)", stats.stale_cookie);
        return true;
    };

    if (a == nullptr) {
        if (stale())
            return nullptr;
        if (by_tag.find(ck.local_tag) != by_tag.end()) {
            drop("COOKIE-ECHO whose tag is already in use", stats.bad_cookie);
            return nullptr;
        }
        a = create_assoc(from, h.src_port, ck.local_tag, now);
        if (a == nullptr)
            return nullptr;
        a->cur->local = to;
        for (size_t i = 0; i < ck.addr_count; ++i) {
            Address ad;
            ad.family = AF_INET;
            ad.port = from.port;
            std::memcpy(ad.ip, ck.addrs[i], 4);
            add_path(a, ad, false, now);
        }
        establish(a, ck, now);
        a->cookie_ack_due = true;
        return a;
    }

    // §5.2.4 Table 2: compare the cookie's tags and tie-tags with the existing TCB.
    bool lt = ck.local_tag == a->local_tag;
    bool pt = ck.peer_tag == a->peer_tag;
    bool ties = ck.local_tie_tag != 0 || ck.peer_tie_tag != 0;
    if (lt && pt) { // (D): a retransmitted or crossing COOKIE-ECHO
        if (a->state == AssocState::cookie_wait || a->state == AssocState::cookie_echoed)
            establish(a, ck, now);
        a->cookie_ack_due = true;
        mark_ready(a);
        return a;
    }
    if (lt) { // (B): setup collision; the peer's tag is the cookie's
        if (stale())
            return nullptr;
        if (a->state == AssocState::cookie_wait || a->state == AssocState::cookie_echoed) {
            establish(a, ck, now);
        } else {
            a->peer_tag = ck.peer_tag;
        }
        a->cookie_ack_due = true;
        mark_ready(a);
        return a;
    }
    if (pt && !ties) // (C): an old cookie arriving late
        return nullptr;
    if (!pt && ties && ck.local_tie_tag == a->local_tag && ck.peer_tie_tag == a->peer_tag) { // (A): restart
        if (stale())
            return nullptr;
        if (a->state == AssocState::shutdown_ack_sent) {
            a->shutdown_ack_due = true;
            mark_ready(a);
            return nullptr;
        }
        if (by_tag.find(ck.local_tag) != by_tag.end()) {
            drop("restart COOKIE-ECHO whose tag is already in use", stats.bad_cookie);
            return nullptr;
        }
        // Forget everything in flight both ways; keep the id.
        by_tag.erase(a->local_tag);
        a->local_tag = ck.local_tag;
        by_tag[a->local_tag] = a;
        for (auto& m : a->msgs)
            if (m.data.capacity())
                pool.put(std::move(m.data));
        a->msgs.clear();
        a->free_msgs.clear();
        a->queue.clear();
        a->out.clear();
        a->queued = a->flight = a->rtx_count = 0;
        for (Path& q : a->paths)
            q.flight = 0;
        std::fill(a->next_ssn.begin(), a->next_ssn.end(), 0);
        for (auto& s : a->map)
            s.present = s.delivered = false;
        std::fill(a->rx_ssn.begin(), a->rx_ssn.end(), 0);
        a->partial_active = false;
        a->partial.clear();
        a->fast_recovery = a->timing = false;
        a->t3 = a->t2 = a->t5 = a->t_sack = kNever;
        a->sack_due = a->sack_wanted = false;
        a->held = 0; // data events already queued stay; their bytes no longer count
        a->errors = 0;
        uint32_t m = a->mtu;
        a->cur->cwnd = std::min(4 * m, std::max(2 * m, 4380u));
        a->cur->pba = 0;
        a->state = AssocState::cookie_wait; // establish() takes it from here
        bool up = a->was_up;
        a->was_up = true;
        establish(a, ck, now);
        a->was_up = up;
        up_event(a, EventType::assoc_restart);
        a->cookie_ack_due = true;
        return a;
    }
    drop("COOKIE-ECHO matching no case of RFC 9260 Table 2", stats.bad_cookie);
    return nullptr;
}

void Endpoint::Impl::on_cookie_ack(Assoc* a, Time now) {
    if (a->state != AssocState::cookie_echoed)
        return;
    a->state = AssocState::established;
    a->t1 = kNever;
    a->cookie.clear();
    a->cookie_error.clear();
    a->cookie_echo_due = false;
    a->init_tries = 0;
    if (!a->was_up) {
        a->was_up = true;
        up_event(a, EventType::assoc_up);
    }
    start_heartbeats(a, now);
    mark_ready(a);
}

void Endpoint::Impl::on_error(Assoc* a, const Chunk& c, Time now) {
    CauseIter it(c.value, c.value_len);
    Cause cause;
    while (it.next(cause)) {
        if (cause.code == kStaleCookie && a->state == AssocState::cookie_echoed && cause.value.n >= 4) {
            // §5.2.6: start over with a new INIT asking for a longer cookie life.
            if (++a->init_tries > cfg.max_init_retransmits) {
                end_assoc(a, EventType::cant_start, "the peer found every State Cookie stale");
                return;
            }
            uint64_t ms = get32(cause.value.p) / 1000 * 2 + 1;
            a->cookie_preservative = static_cast<uint32_t>(std::min<uint64_t>(ms, 3'600'000));
            a->state = AssocState::cookie_wait;
            a->peer_tag = 0;
            a->cookie.clear();
            a->cookie_error.clear();
            a->cookie_echo_due = false;
            a->init_due = true;
            a->t1 = now + a->cur->rto;
            arm(a);
            mark_ready(a);
            return;
        }
    }
}

void Endpoint::Impl::on_t1(Assoc* a, Time now) {
    a->t1 = kNever;
    if (a->state != AssocState::cookie_wait && a->state != AssocState::cookie_echoed)
        return;
    if (++a->init_tries > cfg.max_init_retransmits) {
        end_assoc(a, EventType::cant_start,
                  std::string(a->state == AssocState::cookie_wait ? "INIT" : "COOKIE-ECHO") + " sent " +
                      std::to_string(a->init_tries) + " times without an answer");
        return;
    }
    a->cur->rto = std::min(a->cur->rto * 2, cfg.rto_max);
    // §6.4: retransmit to another of the peer's addresses when it has several (connect()'s).
    if (a->paths.size() > 1) {
        Time rto = a->cur->rto;
        a->cur = &a->paths[(a->cur - a->paths.data() + 1) % a->paths.size()];
        a->cur->rto = std::max(a->cur->rto, rto); // the backoff is the handshake's, not a path's
    }
    if (a->state == AssocState::cookie_wait)
        a->init_due = true;
    else
        a->cookie_echo_due = true;
    a->t1 = now + a->cur->rto;
    mark_ready(a);
}

} // namespace sctpm::sctp
