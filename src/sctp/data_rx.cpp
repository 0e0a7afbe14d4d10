// SPDX-License-Identifier: BSD-3-Clause
// The data receiver (RFC 9260 §6.2, §6.5, §6.7, §6.9): the TSN map (cumulative TSN, chunks held
// above it), reassembly and delivery in TSN order (which keeps every stream's order), duplicate
// reports, the delayed SACK rules, the SACK itself, and receive-window accounting: a message's
// bytes count against a_rwnd until poll_event() hands it out.
//
// In-order chunks (the common case) are copied once, from the packet into the message's buffer;
// out-of-order chunks wait in the map in their own buffer. A message held above a gap goes out
// as soon as it is whole and next in its stream (or unordered), so a gap in one stream does not
// hold back the others (§6.6); the rest moves on when the gap fills.
#include <algorithm>
#include <array>
#include <cstring>

#include "sctp/impl.hpp"

namespace sctpm::sctp {

using namespace wire;

namespace {

constexpr size_t kMaxMap = 1u << 16;   // TSNs held above the cumulative TSN
constexpr size_t kMaxDups = 32;        // duplicate TSNs reported per SACK
constexpr size_t kMaxGapBlocks = 128;  // gap blocks per SACK
constexpr uint8_t kDiscard = 0x80;     // internal flag: acknowledged but not delivered

// Grows the map so that TSNs up to cum + off fit; false when past kMaxMap.
bool ensure_map(Assoc* a, size_t off) {
    if (off <= a->map.size())
        return true;
    if (off > kMaxMap)
        return false;
    size_t n = a->map.size();
    while (n < off)
        n *= 2;
    std::vector<RxSlot> m(n);
    size_t old_mask = a->map.size() - 1;
    for (uint32_t t = a->cum + 1; tsn_le(t, a->highest); ++t) {
        RxSlot& s = a->map[t & old_mask];
        if (s.present)
            m[t & (n - 1)] = std::move(s);
    }
    a->map.swap(m);
    return true;
}

} // namespace

// Bytes that count against the window: all held bytes but the in-order message being
// reassembled (bounded by max_message instead, so a message larger than the window completes).
static size_t counted(const Assoc* a) { return a->held - (a->partial_active ? a->partial.size() : 0); }

uint32_t Endpoint::Impl::a_rwnd(const Assoc* a) const {
    size_t c = counted(a);
    return c >= cfg.rwnd ? 0 : static_cast<uint32_t>(cfg.rwnd - c);
}

// A whole message's event, queued; the caller puts the bytes in (small inline, or `data`).
PendingEvent& Endpoint::Impl::data_event(Assoc* a, uint16_t stream, uint32_t ppid, bool unordered) {
    PendingEvent& e = events.emplace_back_reuse();
    e.type = EventType::data;
    e.assoc = a->id;
    e.stream = stream;
    e.ppid = ppid;
    e.unordered = unordered;
    e.is_small = false;
    e.path = a->reply ? a->reply->addr : a->cur->addr;
    return e;
}

void Endpoint::Impl::deliver_in_order(Assoc* a, const DataChunk& d, Buf* owned) {
    if (d.flags & kDiscard) {
        if (owned) {
            a->held -= owned->size();
            pool.put(std::move(*owned));
        }
        return;
    }
    if (d.begin()) {
        if (a->partial_active) {
            violation(a, "a message began before the previous one ended");
            return;
        }
        if (d.end() && !d.unordered())
            ordered_delivered(a, d.stream, d.ssn);
        if (d.end() && !owned && d.len <= kSmallMsg) {
            // A whole small message: straight into its event.
            PendingEvent& e = data_event(a, d.stream, d.ppid, d.unordered());
            e.is_small = true;
            e.small_len = static_cast<uint32_t>(d.len);
            std::memcpy(e.small, d.payload, d.len);
            a->held += d.len;
            return;
        }
        Buf m;
        if (owned && d.end()) {
            m = std::move(*owned);
        } else {
            // The first fragment of a long message takes a large recycled buffer, so that
            // appending the rest rarely reallocates (a reallocation copies the whole message).
            m = pool.get(d.end() ? d.len : std::max<size_t>(d.len, 64 * 1024));
            m.insert(m.end(), d.payload, d.payload + d.len);
            if (owned)
                pool.put(std::move(*owned));
            else
                a->held += d.len;
        }
        if (d.end()) {
            data_event(a, d.stream, d.ppid, d.unordered()).data = std::move(m);
            return;
        }
        a->partial = std::move(m);
        a->partial_active = true;
        a->partial_stream = d.stream;
        a->partial_ppid = d.ppid;
        a->partial_unordered = d.unordered();
        a->partial_ssn = d.ssn;
        return;
    }
    if (!a->partial_active || d.stream != a->partial_stream) {
        violation(a, "a fragment without its message's first fragment");
        return;
    }
    if (a->partial.size() + d.len > cfg.max_message) {
        violation(a, "a message larger than the receiver's limit");
        return;
    }
    if (owned) {
        a->partial.insert(a->partial.end(), owned->begin(), owned->end());
        pool.put(std::move(*owned));
    } else {
        a->partial.insert(a->partial.end(), d.payload, d.payload + d.len);
        a->held += d.len;
    }
    if (d.end()) {
        if (!a->partial_unordered)
            ordered_delivered(a, a->partial_stream, a->partial_ssn);
        data_event(a, a->partial_stream, a->partial_ppid, a->partial_unordered).data = std::move(a->partial);
        a->partial = Buf();
        a->partial_active = false;
    }
}

void Endpoint::Impl::on_data(Assoc* a, const DataChunk& d, bool& immediate) {
    if (a->state == AssocState::cookie_wait || a->state == AssocState::cookie_echoed)
        return; // the peer is ahead of our COOKIE-ACK; it retransmits
    uint32_t tsn = d.tsn;
    if (tsn_le(tsn, a->cum)) {
        if (a->dups.size() < kMaxDups)
            a->dups.push_back(tsn);
        immediate = true;
        return;
    }
    size_t off = tsn - a->cum;
    if (!ensure_map(a, off)) {
        ++stats.dropped_data;
        immediate = true;
        return;
    }
    RxSlot& slot = a->map[tsn & (a->map.size() - 1)];
    if (off > 1 && slot.present) {
        if (a->dups.size() < kMaxDups)
            a->dups.push_back(tsn);
        immediate = true;
        return;
    }
    // Receive window (§6.2): beyond the highest TSN seen, take data while under twice the window
    // (a compliant sender stays under it; the slack covers a message that just completed and
    // starts to count); below it (filling a gap) always. A hard bound keeps a misbehaving peer
    // in check.
    size_t in_window = counted(a);
    if ((in_window >= 2 * size_t{cfg.rwnd} && tsn_gt(tsn, a->highest)) ||
        in_window + d.len > 4 * size_t{cfg.rwnd} + cfg.mtu) {
        ++stats.dropped_data;
        immediate = true;
        return;
    }
    DataChunk c = d;
    if (d.stream >= a->is) {
        // §6.5: acknowledge it, report Invalid Stream Identifier, deliver nothing.
        uint8_t v[4];
        put16(v, d.stream);
        put16(v + 2, 0);
        uint8_t buf[64];
        PacketBuilder b(buf, sizeof buf);
        b.header(cfg.local_port, a->peer_port, a->peer_tag);
        b.open_chunk(kError, 0);
        b.put_tlv(kInvalidStream, v, 4);
        b.close_chunk();
        queue_raw(a->cur->addr, a->cur->local, buf, b.finish());
        c.flags |= kDiscard;
    }
    if (off == 1) {
        bool had_gap = a->highest != a->cum;
        deliver_in_order(a, c, nullptr);
        if (a->dead)
            return;
        a->cum = tsn;
        // The gap may now be filled: pass on what waited behind it.
        while (a->highest != a->cum) {
            RxSlot& s = a->map[(a->cum + 1) & (a->map.size() - 1)];
            if (!s.present)
                break;
            if (s.delivered) { // its message already went out
                if (a->partial_active) {
                    violation(a, "a message's fragments interleaved with another message");
                    return;
                }
                s.present = s.delivered = false;
                ++a->cum;
                continue;
            }
            DataChunk h;
            h.flags = s.flags;
            h.stream = s.stream;
            h.ssn = s.ssn;
            h.ppid = s.ppid;
            h.payload = s.data.data();
            h.len = s.data.size();
            s.present = false;
            deliver_in_order(a, h, &s.data);
            if (a->dead)
                return;
            ++a->cum;
        }
        if (tsn_gt(a->cum, a->highest))
            a->highest = a->cum;
        if (had_gap) {
            immediate = true; // §6.7: SACK at once when a gap is filled
            if (a->highest != a->cum)
                early_scan(a); // streams moved on: messages waiting above the gap may go
        }
        return;
    }
    slot.data = pool.get(c.len);
    slot.data.insert(slot.data.end(), c.payload, c.payload + c.len);
    slot.flags = c.flags;
    slot.stream = c.stream;
    slot.ssn = c.ssn;
    slot.ppid = c.ppid;
    slot.present = true;
    slot.delivered = false;
    a->held += c.len;
    if (tsn_gt(tsn, a->highest))
        a->highest = tsn;
    immediate = true; // out of order: SACK at once (§6.7)
    if (!(c.flags & kDiscard) && deliver_early(a, tsn))
        early_scan(a); // its stream moved on: its successor may be waiting already
}

bool Endpoint::Impl::deliver_early(Assoc* a, uint32_t tsn) {
    size_t mask = a->map.size() - 1;
    auto at = [&](uint32_t t) -> RxSlot& { return a->map[t & mask]; };
    auto usable = [](const RxSlot& s) { return s.present && !s.delivered && !(s.flags & kDiscard); };
    // The message's first fragment: above cum (else the in-order path is assembling it).
    uint32_t b = tsn;
    for (;;) {
        if (!usable(at(b)))
            return false;
        if (at(b).flags & kDataBegin)
            break;
        if (b == a->cum + 1)
            return false;
        --b;
    }
    uint32_t e = tsn;
    for (;;) {
        if (!usable(at(e)))
            return false;
        if (at(e).flags & kDataEnd)
            break;
        if (e == a->highest)
            return false;
        ++e;
    }
    RxSlot& first = at(b);
    uint16_t stream = first.stream;
    bool unordered = first.flags & kDataUnordered;
    size_t total = 0;
    for (uint32_t t = b;; ++t) {
        if (at(t).stream != stream)
            return false; // inconsistent: left to the in-order path, which reports it
        total += at(t).data.size();
        if (t == e)
            break;
    }
    if (!unordered) {
        uint16_t next = stream < a->rx_ssn.size() ? a->rx_ssn[stream] : 0;
        if (first.ssn != next)
            return false; // an earlier message of its stream is still missing
        ordered_delivered(a, stream, first.ssn);
    }
    if (total > cfg.max_message) {
        violation(a, "a message larger than the receiver's limit");
        return false;
    }
    PendingEvent& ev = data_event(a, stream, first.ppid, unordered);
    if (b == e) {
        ev.data = std::move(first.data);
    } else {
        ev.data = pool.get(total);
        for (uint32_t t = b;; ++t) {
            ev.data.insert(ev.data.end(), at(t).data.begin(), at(t).data.end());
            pool.put(std::move(at(t).data));
            if (t == e)
                break;
        }
    }
    for (uint32_t t = b;; ++t) {
        at(t).delivered = true; // still present: acknowledged in gap blocks until cum passes
        at(t).data = Buf();
        if (t == e)
            break;
    }
    return true;
}

void Endpoint::Impl::early_scan(Assoc* a) {
    // Bounded: at most a few passes over at most 4096 TSNs above cum; what it misses goes out
    // in TSN order when the gap fills.
    for (int pass = 0; pass < 4 && !a->dead; ++pass) {
        bool progress = false;
        uint32_t span = std::min<uint32_t>(a->highest - a->cum, 4096);
        size_t mask = a->map.size() - 1;
        for (uint32_t off = 1; off <= span && !a->dead; ++off) {
            RxSlot& s = a->map[(a->cum + off) & mask];
            if (s.present && !s.delivered && (s.flags & kDataBegin) && deliver_early(a, a->cum + off))
                progress = true;
        }
        if (!progress)
            return;
    }
}

void Endpoint::Impl::after_data_packet(Assoc* a, bool immediate, size_t packet_len, Time now) {
    ++a->data_pkts;
    a->data_bytes += packet_len;
    a->sack_wanted = true;
    bool enough = cfg.sack_full_packets ? a->data_bytes > size_t{cfg.sack_every - 1} * a->mtu
                                        : a->data_pkts >= cfg.sack_every;
    if (immediate || enough || a->state == AssocState::shutdown_sent) {
        a->sack_due = true;
        if (a->state == AssocState::shutdown_sent) {
            a->shutdown_due = true; // §9.2: every SACK in SHUTDOWN-SENT goes with a SHUTDOWN
            a->t2 = now + a->cur->rto;
        }
        mark_ready(a);
        return;
    }
    if (cfg.sack_per_read && !a->in_batch_list) {
        a->in_batch_list = true;
        batch_list.push_back(a->id);
    }
    if (a->t_sack == kNever) {
        a->t_sack = now + cfg.delayed_sack;
        arm(a);
    }
}

size_t Endpoint::Impl::write_sack(Assoc* a, PacketBuilder& b) {
    if (b.room() < kSackFixedSize)
        return 0;
    if (a->highest == a->cum && a->dups.empty()) {
        // The common case: no gap, no duplicate; 16 bytes written directly.
        uint32_t rwnd = a_rwnd(a);
        uint8_t* q = b.append(kSackFixedSize);
        q[0] = kSack;
        q[1] = 0;
        put16(q + 2, kSackFixedSize);
        put32(q + 4, a->cum);
        put32(q + 8, rwnd);
        put32(q + 12, 0); // no gap blocks, no duplicates
        a->sack_due = a->sack_wanted = false;
        a->data_pkts = 0;
        a->data_bytes = 0;
        a->t_sack = kNever;
        a->last_adv = rwnd;
        ++a->counters.sacks_sent;
        return kSackFixedSize;
    }
    // Gap blocks: runs of held TSNs above cum, as offsets from cum.
    std::array<uint16_t, 2 * kMaxGapBlocks> gaps;
    size_t ngaps = 0;
    size_t ndups = std::min(a->dups.size(), (b.room() - kSackFixedSize) / 4);
    size_t max_gaps = std::min(kMaxGapBlocks, (b.room() - kSackFixedSize) / 4 - ndups);
    if (a->highest != a->cum) {
        size_t mask = a->map.size() - 1;
        uint32_t span = a->highest - a->cum;
        bool in_run = false;
        for (uint32_t off = 1; off <= span && off <= 0xffff; ++off) {
            bool p = a->map[(a->cum + off) & mask].present;
            if (p && !in_run) {
                if (ngaps == max_gaps)
                    break;
                gaps[2 * ngaps] = static_cast<uint16_t>(off);
                in_run = true;
            } else if (!p && in_run) {
                gaps[2 * ngaps + 1] = static_cast<uint16_t>(off - 1);
                ++ngaps;
                in_run = false;
            }
        }
        if (in_run) {
            gaps[2 * ngaps + 1] = static_cast<uint16_t>(std::min<uint32_t>(span, 0xffff));
            ++ngaps;
        }
    }
    uint32_t rwnd = a_rwnd(a);
    b.open_chunk(kSack, 0);
    b.put32(a->cum);
    b.put32(rwnd);
    b.put16(static_cast<uint16_t>(ngaps));
    b.put16(static_cast<uint16_t>(ndups));
    for (size_t i = 0; i < ngaps; ++i) {
        b.put16(gaps[2 * i]);
        b.put16(gaps[2 * i + 1]);
    }
    for (size_t i = 0; i < ndups; ++i)
        b.put32(a->dups[i]);
    b.close_chunk();
    a->dups.clear();
    a->sack_due = a->sack_wanted = false;
    a->data_pkts = 0;
    a->data_bytes = 0;
    a->t_sack = kNever;
    a->last_adv = rwnd;
    ++a->counters.sacks_sent;
    return kSackFixedSize + 4 * (ngaps + ndups);
}

void Endpoint::Impl::taken(Assoc* a, size_t bytes) {
    a->held -= std::min(a->held, bytes);
    // Window update: when the window we last advertised was under half and has since grown by
    // an eighth of the buffer, tell the peer (a sender stalled on it has nothing else to go by).
    uint32_t now_adv = a_rwnd(a);
    if (a->last_adv < cfg.rwnd / 2 && now_adv >= a->last_adv + cfg.rwnd / 8 &&
        a->state != AssocState::cookie_wait && a->state != AssocState::cookie_echoed) {
        a->sack_due = true;
        mark_ready(a);
    }
}

} // namespace sctpm::sctp
