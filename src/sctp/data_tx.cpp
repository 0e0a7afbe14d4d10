// SPDX-License-Identifier: BSD-3-Clause
// The data sender (RFC 9260 §6.1, §6.2.1, §6.3, §7): the send buffer (messages copied once, then
// chunked as packets are built), SACK processing (cumulative and gap acknowledgements, the
// peer's rwnd), RTT measurement and RTO (§6.3.1), congestion control (slow start, congestion
// avoidance, partial_bytes_acked, fast recovery), fast retransmit on three miss indications
// with the HTNA rule (§7.2.4), and the T3-rtx timer (§6.3.2, §6.3.3).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sctp/impl.hpp"

namespace sctpm::sctp {

using namespace wire;

int Endpoint::Impl::send(Assoc* a, uint16_t stream, const iovec* iov, int iovcnt, bool unordered, uint32_t ppid,
                         Time now) {
    if (a->state >= AssocState::shutdown_pending)
        return -ESHUTDOWN;
    if (stream >= (a->was_up ? a->os : cfg.outbound_streams))
        return -EINVAL;
    if (iovcnt < 0 || (iovcnt > 0 && iov == nullptr))
        return -EINVAL;
    size_t len = 0;
    for (int i = 0; i < iovcnt; ++i)
        len += iov[i].iov_len;
    if (len == 0)
        return -EINVAL;
    if (len > cfg.send_buffer || len > 0xffffffffu)
        return -EMSGSIZE;
    if (a->queued + len > cfg.send_buffer) {
        a->blocked_want = std::max(a->blocked_want, len);
        return -EWOULDBLOCK;
    }
    uint32_t idx;
    if (!a->free_msgs.empty()) {
        idx = a->free_msgs.back();
        a->free_msgs.pop_back();
    } else {
        idx = static_cast<uint32_t>(a->msgs.size());
        a->msgs.emplace_back();
    }
    OutMsg& m = a->msgs[idx];
    m.size = static_cast<uint32_t>(len);
    if (len <= kSmallMsg) {
        size_t off = 0;
        for (int i = 0; i < iovcnt; ++i) {
            if (iov[i].iov_len)
                std::memcpy(m.small + off, iov[i].iov_base, iov[i].iov_len);
            off += iov[i].iov_len;
        }
    } else {
        m.data = pool.get(len);
        for (int i = 0; i < iovcnt; ++i) {
            const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
            m.data.insert(m.data.end(), p, p + iov[i].iov_len);
        }
    }
    m.ppid = ppid;
    m.stream = stream;
    m.unordered = unordered;
    m.ssn = unordered ? 0 : a->next_ssn[stream]++;
    m.chunked = 0;
    m.refs = 0;
    a->queue.push_back(idx);
    a->queued += len;
    if (a->flight == 0)
        a->burst = 0; // a new transmit opportunity (Max.Burst counts from here)
    // Idle (§7.2.1): after an RTO without sending, cwnd decays to max(cwnd/2, 4 MTU) per RTO.
    if (a->flight == 0 && a->state == AssocState::established && now - a->last_data_sent > a->cur->rto) {
        uint32_t floor = 4 * a->mtu;
        for (Time t = a->last_data_sent + a->cur->rto; t < now && a->cur->cwnd > floor; t += a->cur->rto)
            a->cur->cwnd = std::max(a->cur->cwnd / 2, floor);
    }
    mark_ready(a);
    return 0;
}

void Endpoint::Impl::release(Assoc* a, TxChunk& c) {
    OutMsg& m = a->msgs[c.msg];
    a->queued -= c.len;
    if (--m.refs == 0 && m.chunked == m.size) {
        if (m.size > kSmallMsg)
            pool.put(std::move(m.data));
        a->free_msgs.push_back(c.msg);
    }
}

void Endpoint::Impl::rtt_sample(Path* p, Time r) {
    // §6.3.1 with alpha 1/8, beta 1/4; RTTVAR never below the clock granularity (1 µs here).
    if (p->srtt == 0) {
        p->srtt = r;
        p->rttvar = r / 2;
    } else {
        Time diff = p->srtt > r ? p->srtt - r : r - p->srtt;
        p->rttvar = p->rttvar - p->rttvar / 4 + diff / 4;
        p->srtt = p->srtt - p->srtt / 8 + r / 8;
    }
    if (p->rttvar < 1)
        p->rttvar = 1;
    p->rto = std::clamp(p->srtt + 4 * p->rttvar, cfg.rto_min, cfg.rto_max);
}

bool Endpoint::Impl::ack_cum(Assoc* a, uint32_t cum, Time now, uint32_t& bytes, bool& rtt_done, uint32_t* bytes_on) {
    bool advanced = false;
    while (!a->out.empty() && tsn_le(a->tx_base, cum)) {
        TxChunk& c = a->out.front();
        if (c.state != ChunkState::acked) {
            bytes += c.len;
            if (bytes_on != nullptr)
                bytes_on[c.path] += c.len;
            a->acked_paths |= 1u << c.path;
        }
        if (c.state == ChunkState::in_flight) {
            a->flight -= c.len;
            a->paths[c.path].flight -= c.len;
        }
        else if (c.state == ChunkState::rtx)
            --a->rtx_count;
        if (a->timing && a->rtt_tsn == a->tx_base) {
            a->timing = false;
            if (!c.retransmitted && !rtt_done) {
                rtt_sample(a->rtt_path, now - a->rtt_sent);
                rtt_done = true;
            }
        }
        release(a, c);
        a->out.pop_front();
        ++a->tx_base;
        advanced = true;
    }
    return advanced;
}

void Endpoint::Impl::on_sack(Assoc* a, const SackChunk& s, Time now) {
    if (a->state < AssocState::established)
        return;
    ++a->counters.sacks_received;
    uint32_t cum = s.cum_tsn;
    if (tsn_lt(cum, a->tx_base - 1))
        return; // older than what we know (§6.2.1 D i): reordered, ignore
    if (tsn_ge(cum, a->next_tsn)) {
        violation(a, "SACK acknowledges a TSN that was never sent");
        return;
    }
    uint32_t flight_before = a->cur->flight; // congestion control is the current path's
    // CMT: congestion control per path. Each path's flight before this SACK, the bytes it newly
    // acknowledges per path, the earliest TSN in flight on each path (the cwnd update for CMT),
    // and the highest TSN newly acknowledged per path (split fast retransmit).
    const bool cmt = cfg.cmt;
    uint32_t path_flight[kMaxPaths], bytes_on[kMaxPaths] = {}, first_out[kMaxPaths], htna_on[kMaxPaths];
    bool htna_on_set[kMaxPaths] = {};
    if (cmt) {
        size_t waiting = 0; // paths with data in flight whose earliest TSN is not found yet
        for (const Path& q : a->paths) {
            path_flight[q.index] = q.flight;
            first_out[q.index] = a->next_tsn; // none
            waiting += q.flight > 0;
        }
        for (size_t i = 0; i < a->out.size() && waiting > 0; ++i) {
            const TxChunk& c = a->out[i];
            if (c.state == ChunkState::in_flight && first_out[c.path] == a->next_tsn) {
                first_out[c.path] = a->tx_base + static_cast<uint32_t>(i);
                --waiting;
            }
        }
    }
    uint32_t bytes = 0;
    bool rtt_done = false;
    bool advanced = ack_cum(a, cum, now, bytes, rtt_done, cmt ? bytes_on : nullptr);

    // Gap blocks: mark newly acknowledged chunks; remember the highest newly acknowledged TSN.
    bool htna_set = advanced;
    uint32_t htna = cum;
    for (size_t i = 0; i < s.gap_count; ++i) {
        uint32_t start = cum + s.gap_start(i), end = cum + s.gap_end(i);
        if (s.gap_start(i) == 0 || s.gap_end(i) < s.gap_start(i) || tsn_ge(end, a->next_tsn))
            continue; // malformed block: ignore it
        for (uint32_t t = start; tsn_le(t, end); ++t) {
            TxChunk& c = a->out[t - a->tx_base];
            if (c.state == ChunkState::acked)
                continue;
            if (c.state == ChunkState::in_flight) {
                a->flight -= c.len;
                a->paths[c.path].flight -= c.len;
            }
            else
                --a->rtx_count;
            c.state = ChunkState::acked;
            bytes += c.len;
            a->acked_paths |= 1u << c.path;
            if (cmt) {
                bytes_on[c.path] += c.len;
                if (!htna_on_set[c.path] || tsn_gt(t, htna_on[c.path])) {
                    htna_on[c.path] = t;
                    htna_on_set[c.path] = true;
                }
            }
            if (a->timing && a->rtt_tsn == t) {
                a->timing = false;
                if (!c.retransmitted && !rtt_done) {
                    rtt_sample(a->rtt_path, now - a->rtt_sent);
                    rtt_done = true;
                }
            }
            if (!htna_set || tsn_gt(t, htna)) {
                htna = t;
                htna_set = true;
            }
        }
    }

    // Miss indications (§7.2.4, HTNA): chunks below the highest newly acknowledged TSN that are
    // still missing; the third one sends the chunk by fast retransmit. With CMT (split fast
    // retransmit) only data sent later on the chunk's own path counts: the paths reorder each
    // other's data all the time.
    if (s.gap_count > 0 && htna_set) {
        bool marked = false;
        for (uint32_t t = a->tx_base; tsn_lt(t, htna); ++t) {
            TxChunk& c = a->out[t - a->tx_base];
            if (c.state != ChunkState::in_flight || c.fast_rtx_done)
                continue;
            if (cmt && (!htna_on_set[c.path] || !tsn_lt(t, htna_on[c.path])))
                continue;
            if (++c.misses >= 3) {
                if (cmt) {
                    Path& q = a->paths[c.path];
                    if (!q.fast_recovery) { // §7.2.3 on the chunk's own path, once per window
                        q.ssthresh = std::max(q.cwnd / 2, 4 * a->mtu);
                        q.cwnd = q.ssthresh;
                        q.pba = 0;
                        q.fast_recovery = true;
                        q.recovery_exit = a->next_tsn - 1;
                    }
                }
                c.state = ChunkState::rtx;
                c.fast_rtx = true;
                c.fast_rtx_done = true;
                a->flight -= c.len;
                a->paths[c.path].flight -= c.len;
                ++a->rtx_count;
                ++a->counters.fast_retransmits;
                if (a->timing && a->rtt_tsn == t)
                    a->timing = false;
                marked = true;
            }
        }
        if (marked && !cmt && !a->fast_recovery) {
            a->cur->ssthresh = std::max(a->cur->cwnd / 2, 4 * a->mtu);
            a->cur->cwnd = a->cur->ssthresh;
            a->cur->pba = 0;
            a->fast_recovery = true;
            a->recovery_exit = a->next_tsn - 1;
        }
    }
    if (a->fast_recovery && (a->out.empty() || tsn_ge(cum, a->recovery_exit)))
        a->fast_recovery = false;

    // The peer's window (§6.2.1): what it offers minus what is still in flight.
    a->peer_rwnd = s.a_rwnd > a->flight ? s.a_rwnd - a->flight : 0;

    // cwnd (§7.2.1, §7.2.2): only when the cumulative ack advanced and not in fast recovery, and
    // only while the window was in use. Max.Burst stopping the sender with data still queued
    // counts as in use: otherwise a SACK per burst (sack_per_read, GRO batches) pins cwnd at
    // about one burst above the flight, whatever the path could carry.
    const bool burst_limited = cfg.max_burst != 0 && a->burst >= cfg.max_burst && !a->queue.empty();
    const bool in_use = flight_before + a->mtu > a->cur->cwnd || burst_limited;
    if (cmt) {
        cmt_after_sack(a, path_flight, bytes_on, first_out, cum, burst_limited);
    } else if (advanced && !a->fast_recovery) {
        if (a->cur->cwnd <= a->cur->ssthresh) {
            if (in_use)
                a->cur->cwnd += std::min(bytes, a->mtu);
        } else {
            a->cur->pba += bytes;
            if (a->cur->pba >= a->cur->cwnd && in_use) {
                a->cur->pba -= a->cur->cwnd;
                a->cur->cwnd += a->mtu;
            }
        }
    }
    // A SACK that advances, or that answers a zero-window probe, shows the peer is alive: the
    // probes do not count as errors (§6.1).
    if (advanced || s.a_rwnd == 0)
        a->errors = 0;
    // The paths whose data was acknowledged work (§8.3); a PF or inactive one comes back.
    const uint32_t cur_bit = 1u << a->cur->index;
    if (a->acked_paths == cur_bit && a->cur->errors == 0 && a->cur->state == PathState::active) {
        a->acked_paths = 0; // the common case: the current path, healthy
    } else if (a->acked_paths != 0) {
        uint32_t mask = a->acked_paths;
        a->acked_paths = 0;
        for (uint32_t i = 0; mask != 0; ++i, mask >>= 1)
            if ((mask & 1) && (a->paths[i].errors != 0 || a->paths[i].state != PathState::active))
                path_alive(a, &a->paths[i]);
    }
    a->burst = 0;
    // T3-rtx (§6.3.2 R2, R3). It runs while anything is not cumulatively acknowledged, gap-acked
    // chunks included: a receiver may renege on those (§6.2), and T3 is what recovers them.
    if (a->out.empty()) {
        a->t3 = kNever;
        a->cur->pba = 0;
    } else if (advanced) {
        a->t3 = now + a->cur->rto;
        arm(a);
    }
    after_acks(a, now);
}

// CMT's congestion control after a SACK (§7.2.1, §7.2.2 per path, with the cwnd update for CMT):
// a path's cwnd grows only when the earliest data in flight on it (its pseudo-cumulative TSN)
// was acknowledged, by the bytes newly acknowledged on it, and only while its window was in use.
void Endpoint::Impl::cmt_after_sack(Assoc* a, const uint32_t* flight_before, const uint32_t* bytes_on,
                                    const uint32_t* first_out, uint32_t cum, bool burst_limited) {
    for (Path& q : a->paths) {
        if (q.fast_recovery && (a->out.empty() || tsn_ge(cum, q.recovery_exit)))
            q.fast_recovery = false;
        const uint32_t i = q.index;
        if (bytes_on[i] == 0 || q.fast_recovery || first_out[i] == a->next_tsn)
            continue;
        const bool pseudo_cum_acked = tsn_lt(first_out[i], a->tx_base) ||
                                      a->out[first_out[i] - a->tx_base].state == ChunkState::acked;
        if (!pseudo_cum_acked)
            continue;
        const bool in_use = flight_before[i] + a->mtu > q.cwnd || burst_limited;
        if (q.cwnd <= q.ssthresh) {
            if (in_use)
                q.cwnd += std::min(bytes_on[i], a->mtu);
        } else {
            q.pba += bytes_on[i];
            if (q.pba >= q.cwnd && in_use) {
                q.pba -= q.cwnd;
                q.cwnd += a->mtu;
            }
        }
    }
}

void Endpoint::Impl::after_acks(Assoc* a, Time now) {
    if (a->blocked_want && a->queued + a->blocked_want <= cfg.send_buffer) {
        a->blocked_want = 0;
        PendingEvent& e = events.emplace_back_reuse();
        e.type = EventType::send_space;
        e.assoc = a->id;
        e.data.clear();
        e.reason.clear();
    }
    if (a->rtx_count || !a->queue.empty())
        mark_ready(a);
    maybe_finish_shutdown(a, now);
}

void Endpoint::Impl::on_t3(Assoc* a, Time now) {
    a->t3 = kNever;
    if (a->out.empty())
        return;
    ++a->counters.t3_expiries;
    // The error belongs to the path the oldest outstanding chunk went to.
    Path* p = a->cur;
    for (size_t i = 0; i < a->out.size(); ++i)
        if (a->out[i].state == ChunkState::in_flight) {
            p = &a->paths[a->out[i].path];
            break;
        }
    // §6.3.3 E1-E3, §7.2.3: back off, collapse that path's cwnd, resend everything not
    // acknowledged (to another active path when this one turned PF or inactive, §6.4).
    p->ssthresh = std::max(p->cwnd / 2, 4 * a->mtu);
    p->cwnd = a->mtu;
    p->pba = 0;
    a->fast_recovery = false;
    p->rto = std::min(p->rto * 2, cfg.rto_max);
    if (!path_timeout(a, p, now, true))
        return;
    if (cfg.cmt && p->flight > 0) {
        on_t3_cmt(a, p);
        a->t3 = now + a->cur->rto;
        arm(a);
        mark_ready(a);
        return;
    }
    for (size_t i = 0; i < a->out.size(); ++i) {
        TxChunk& c = a->out[i];
        if (c.state == ChunkState::in_flight) {
            c.state = ChunkState::rtx;
            ++a->rtx_count;
        }
        c.fast_rtx = false;
    }
    if (a->rtx_count == 0) {
        // Everything left was gap-acknowledged a whole RTO ago and never cumulatively: the peer
        // reneged (dropped them); send them again.
        for (size_t i = 0; i < a->out.size(); ++i) {
            TxChunk& c = a->out[i];
            if (c.state == ChunkState::acked) {
                c.state = ChunkState::rtx;
                ++a->rtx_count;
            }
        }
    }
    a->flight = 0;
    for (Path& q : a->paths)
        q.flight = 0;
    a->timing = false;
    a->burst = 0;
    a->t3 = now + a->cur->rto;
    mark_ready(a);
}

// CMT's T3 (§6.3.3 per path): only the data in flight on the path that timed out is resent
// (elsewhere, by RTX-CWND); the other paths' data and windows are theirs.
void Endpoint::Impl::on_t3_cmt(Assoc* a, Path* p) {
    p->fast_recovery = false;
    for (size_t i = 0; i < a->out.size(); ++i) {
        TxChunk& c = a->out[i];
        if (c.state != ChunkState::in_flight || c.path != p->index)
            continue;
        c.state = ChunkState::rtx;
        c.fast_rtx = false;
        ++a->rtx_count;
        a->flight -= c.len;
        p->flight -= c.len;
        if (a->timing && a->rtt_tsn == a->tx_base + static_cast<uint32_t>(i))
            a->timing = false;
    }
    a->burst = 0;
}

} // namespace sctpm::sctp
