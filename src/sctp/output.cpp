// SPDX-License-Identifier: BSD-3-Clause
// Packet output: poll_transmit() hands out replies made outside associations first, then bursts
// of one association's packets (control chunks first, a due SACK bundled with DATA, then
// retransmissions, then new DATA within cwnd, the peer's rwnd and Max.Burst), each burst to one
// path (with CMT, the active paths in turn). A burst is packets
// of the first packet's size back to back, the last possibly shorter, so the caller sends it in
// one sendmsg() with UDP_SEGMENT.
#include <algorithm>
#include <cstring>

#include "sctp/impl.hpp"

namespace sctpm::sctp {

using namespace wire;

namespace {

// A message that fits in an empty packet is not split to fill the end of a fuller one; a larger
// message's fragment is cut to the room left when that room is at least this much.
constexpr size_t kMinFragment = 64;

} // namespace

bool Endpoint::Impl::put_data(Assoc* a, PacketBuilder& b, Time now, bool& sent_new) {
    bool any = false;
    // Retransmissions first (§6.1 C), lowest TSN first. Fast-retransmit chunks may go beyond
    // cwnd (§7.2.4: one packet); T3 ones wait for cwnd.
    if (a->rtx_count > 0) {
        for (size_t i = 0; i < a->out.size() && a->rtx_count > 0; ++i) {
            TxChunk& c = a->out[i];
            if (c.state != ChunkState::rtx)
                continue;
            // After T3 (cwnd = 1 MTU) only what fits one packet goes (§6.3.3 E3): a retransmission
            // must fit in cwnd, unless nothing is in flight.
            if (!c.fast_rtx && a->tx->flight > 0 && a->tx->flight + c.len > a->tx->cwnd)
                return any;
            if (pad4(kDataHeaderSize + c.len) > b.room())
                return any;
            const OutMsg& m = a->msgs[c.msg];
            uint32_t tsn = a->tx_base + static_cast<uint32_t>(i);
            b.put_data(c.flags, tsn, m.stream, m.ssn, m.ppid, m.bytes() + c.offset, c.len);
            c.state = ChunkState::in_flight;
            c.retransmitted = true;
            c.fast_rtx = false;
            c.misses = 0;
            c.path = a->tx->index;
            --a->rtx_count;
            a->flight += c.len;
            a->tx->flight += c.len;
            ++a->counters.retransmitted_chunks;
            if (i == 0 || a->t3 == kNever) { // §6.3.2 R4 / R1
                a->t3 = now + a->tx->rto;
                arm(a);
            }
            any = true;
        }
        if (a->rtx_count > 0)
            return any;
    }
    size_t full_payload = (a->mtu - kCommonHeaderSize - kDataHeaderSize) & ~size_t{3};
    while (!a->queue.empty() && a->tx->flight < a->tx->cwnd) {
        OutMsg& m = a->msgs[a->queue.front()];
        size_t remaining = m.size - m.chunked;
        size_t room = b.room() & ~size_t{3};
        if (room < kDataHeaderSize + 4)
            break;
        size_t maxp = std::min<size_t>(room - kDataHeaderSize, 0xffff - kDataHeaderSize);
        size_t len;
        if (remaining <= maxp) {
            len = remaining;
        } else if (b.has_chunks() && ((m.chunked == 0 && remaining <= full_payload) || maxp < kMinFragment)) {
            break; // close this packet; the next one takes it whole or in a bigger piece
        } else {
            len = maxp;
        }
        // The peer's window (§6.1 A): one chunk may probe a closed window when nothing is in flight.
        if (len > a->peer_rwnd && a->flight > 0)
            break;
        uint8_t flags = 0;
        if (m.chunked == 0)
            flags |= kDataBegin;
        if (m.chunked + len == m.size)
            flags |= kDataEnd;
        if (m.unordered)
            flags |= kDataUnordered;
        uint32_t tsn = a->next_tsn;
        b.put_data(flags, tsn, m.stream, m.ssn, m.ppid, m.bytes() + m.chunked, len);
        TxChunk& c = a->out.emplace_back_reuse();
        c.msg = a->queue.front();
        c.offset = m.chunked;
        c.len = static_cast<uint16_t>(len);
        c.flags = flags;
        c.state = ChunkState::in_flight;
        c.misses = 0;
        c.fast_rtx_done = c.retransmitted = c.fast_rtx = false;
        c.path = a->tx->index;
        m.chunked += static_cast<uint32_t>(len);
        ++m.refs;
        if (m.chunked == m.size)
            a->queue.pop_front();
        ++a->next_tsn;
        a->flight += static_cast<uint32_t>(len);
        a->tx->flight += static_cast<uint32_t>(len);
        a->peer_rwnd -= std::min<uint32_t>(a->peer_rwnd, static_cast<uint32_t>(len));
        if (!a->timing) {
            a->timing = true;
            a->rtt_path = a->tx;
            a->rtt_tsn = tsn;
            a->rtt_sent = now;
        }
        if (a->t3 == kNever) {
            a->t3 = now + a->tx->rto;
            arm(a);
        }
        sent_new = any = true;
    }
    return any;
}

// Whether a congestion window lets new data go: the current path's, or with CMT any active
// path's (the current one's when none is active).
static bool cwnd_room(const Assoc* a, const Config& cfg) {
    if (cfg.cmt) {
        bool any_active = false;
        for (const Path& p : a->paths) {
            if (p.state != PathState::active)
                continue;
            if (p.flight < p.cwnd)
                return true;
            any_active = true;
        }
        if (any_active)
            return false;
    }
    return a->cur->flight < a->cur->cwnd;
}

Path* Endpoint::Impl::burst_path(Assoc* a) {
    if (!cfg.cmt || a->paths.size() < 2)
        return a->cur;
    if (a->rtx_count > 0) {
        // RTX-CWND: a retransmission goes to the active path with the largest cwnd.
        Path* best = nullptr;
        for (Path& p : a->paths)
            if (p.state == PathState::active && (best == nullptr || p.cwnd > best->cwnd))
                best = &p;
        return best != nullptr ? best : a->cur;
    }
    if (a->queue.empty())
        return a->cur;
    // New data: the next active path in turn whose cwnd has room.
    const size_t n = a->paths.size();
    for (size_t k = 0; k < n; ++k) {
        Path& p = a->paths[(a->next_rr + k) % n];
        if (p.state == PathState::active && p.flight < p.cwnd) {
            a->next_rr = static_cast<uint8_t>((p.index + 1) % n);
            return &p;
        }
    }
    return a->cur;
}

// Whether build_packet() would write anything (checked before building, so that the last
// poll_transmit() of a batch costs little).
static bool has_output(const Assoc* a, const Config& cfg) {
    if (a->init_due || a->cookie_echo_due || a->cookie_ack_due || a->sack_due || a->shutdown_due ||
        a->shutdown_ack_due)
        return true;
    bool data_state = a->state == AssocState::established || a->state == AssocState::shutdown_pending ||
                      a->state == AssocState::shutdown_received;
    return data_state && (a->rtx_count > 0 || (!a->queue.empty() && cwnd_room(a, cfg) &&
                                               (cfg.max_burst == 0 || a->burst < cfg.max_burst)));
}

size_t Endpoint::Impl::build_packet(Assoc* a, uint8_t* buf, size_t limit, Time now) {
    if (!has_output(a, cfg))
        return 0;
    PacketBuilder b(buf, limit);
    if (a->state == AssocState::cookie_wait) {
        if (!a->init_due)
            return 0;
        b.header(cfg.local_port, a->peer_port, 0);
        write_init(b, a);
        a->init_due = false;
        return b.finish();
    }
    b.header(cfg.local_port, a->peer_port, a->peer_tag);
    if (a->cookie_echo_due) {
        // COOKIE-ECHO first in its packet (§5.1 C); an ERROR about INIT-ACK parameters after it.
        if (a->cookie.size() + 8 + a->cookie_error.size() > b.room())
            return 0;
        b.open_chunk(kCookieEcho, 0);
        b.put_bytes(a->cookie.data(), a->cookie.size());
        b.close_chunk();
        if (!a->cookie_error.empty())
            b.put_bytes(a->cookie_error.data(), a->cookie_error.size());
        a->cookie_echo_due = false;
    }
    if (a->cookie_ack_due) {
        b.open_chunk(kCookieAck, 0);
        b.close_chunk();
        a->cookie_ack_due = false;
    }
    bool data_state = a->state == AssocState::established || a->state == AssocState::shutdown_pending ||
                      a->state == AssocState::shutdown_received;
    bool can_data = data_state && (a->rtx_count > 0 || (!a->queue.empty() && a->tx->flight < a->tx->cwnd &&
                                                        (cfg.max_burst == 0 || a->burst < cfg.max_burst)));
    if (a->sack_due || (a->sack_wanted && can_data))
        write_sack(a, b);
    if (a->shutdown_due && a->state == AssocState::shutdown_sent) {
        b.open_chunk(kShutdown, 0);
        b.put32(a->cum);
        b.close_chunk();
        a->shutdown_due = false;
    }
    if (a->shutdown_ack_due && a->state == AssocState::shutdown_ack_sent) {
        b.open_chunk(kShutdownAck, 0);
        b.close_chunk();
        a->shutdown_ack_due = false;
    }
    bool sent_new = false;
    if (can_data && put_data(a, b, now, sent_new)) {
        ++a->counters.data_packets_sent;
        a->last_data_sent = now;
        a->tx->last_sent = now;
        if (sent_new)
            ++a->burst;
    }
    if (!b.has_chunks())
        return 0;
    return b.finish();
}

std::optional<Transmit> Endpoint::Impl::poll_transmit(uint8_t* buf, size_t cap, size_t max_segments, Time now) {
    if (max_segments == 0)
        max_segments = 1;
    if (!raw.empty()) {
        RawPacket& r = raw.front();
        if (r.bytes.size() > cap)
            return std::nullopt;
        std::memcpy(buf, r.bytes.data(), r.bytes.size());
        Transmit t{r.to, r.from, r.bytes.size(), 1, r.bytes.size()};
        raw.pop_front();
        ++stats.packets_out;
        return t;
    }
    while (!ready.empty()) {
        AssocId id = ready.front();
        Assoc* a = find(id);
        if (a == nullptr) {
            ready.pop_front();
            continue;
        }
        if (cap < a->mtu)
            return std::nullopt;
        // A burst continues only while packets come out at the first one's size, and only if
        // that size is at least half the MTU (small first packets would cut data into crumbs).
        a->tx = burst_path(a);
        size_t off = 0, count = 0, seg = 0;
        const uint64_t data_before = a->counters.data_packets_sent;
        while (count < max_segments) {
            size_t limit = count == 0 ? a->mtu : seg;
            if (cap - off < limit)
                break;
            size_t n = build_packet(a, buf + off, limit, now);
            if (n == 0)
                break;
            if (count == 0)
                seg = n;
            off += n;
            ++count;
            if (n < seg || seg < a->mtu / 2)
                break;
        }
        if (count == 0) {
            ready.pop_front();
            a->in_ready = false;
            continue;
        }
        // Keep it in the list, behind the others, only if it has more to send now.
        ready.pop_front();
        if (has_output(a, cfg))
            ready.push_back(id);
        else
            a->in_ready = false;
        stats.packets_out += count;
        // DATA goes to the burst's path (the current one without CMT); a reply without DATA (a
        // SACK) to where the DATA came from (§6.4), which works even while our current path to
        // the peer is down.
        const Path* to = a->tx;
        if (a->reply != nullptr && a->reply != a->tx && a->counters.data_packets_sent == data_before)
            to = a->reply;
        return Transmit{to->addr, to->local, seg, count, off};
    }
    return std::nullopt;
}

} // namespace sctpm::sctp
