// SPDX-License-Identifier: BSD-3-Clause
// Ending an association (RFC 9260 §9): graceful SHUTDOWN once all queued data is acknowledged
// (SHUTDOWN / SHUTDOWN-ACK retransmitted on T2-shutdown, SHUTDOWN-COMPLETE), and ABORT both ways
// (ours carries a User-Initiated Abort cause with the caller's reason).
#include <algorithm>
#include <cerrno>

#include "sctp/impl.hpp"

namespace sctpm::sctp {

using namespace wire;

void Endpoint::Impl::maybe_finish_shutdown(Assoc* a, Time now) {
    if (!all_acked(a))
        return;
    if (a->state == AssocState::shutdown_pending) {
        a->state = AssocState::shutdown_sent;
        a->shutdown_due = true;
    } else if (a->state == AssocState::shutdown_received) {
        a->state = AssocState::shutdown_ack_sent;
        a->shutdown_ack_due = true;
    } else {
        return;
    }
    a->errors = 0;
    a->t3 = kNever;
    a->t2 = now + a->cur->rto;
    arm(a);
    mark_ready(a);
}

void Endpoint::Impl::on_shutdown(Assoc* a, const Chunk& c, Time now) {
    uint32_t cum;
    if (const char* why = parse_shutdown(c, cum)) {
        drop(why, stats.malformed);
        return;
    }
    if (a->state < AssocState::established)
        return;
    // Its Cumulative TSN Ack acknowledges like a SACK's (§9.2).
    if (tsn_ge(cum, a->tx_base - 1) && tsn_lt(cum, a->next_tsn)) {
        uint32_t bytes = 0;
        bool rtt_done = false;
        if (ack_cum(a, cum, now, bytes, rtt_done) && a->out.empty())
            a->t3 = kNever;
    }
    switch (a->state) {
    case AssocState::established:
    case AssocState::shutdown_pending:
        a->state = AssocState::shutdown_received;
        start_shutdown_guard(a, now);
        break;
    case AssocState::shutdown_sent: // both sides shut down at once
        a->state = AssocState::shutdown_ack_sent;
        a->shutdown_ack_due = true;
        a->t2 = now + a->cur->rto;
        arm(a);
        mark_ready(a);
        return;
    case AssocState::shutdown_ack_sent:
        a->shutdown_ack_due = true; // our SHUTDOWN-ACK was lost
        mark_ready(a);
        return;
    default:
        break;
    }
    after_acks(a, now);
}

void Endpoint::Impl::send_shutdown_complete(Assoc* a, bool t_bit, uint32_t vtag, const Address& to,
                                            const Address& from, uint16_t peer_port) {
    (void)a;
    uint8_t buf[16];
    PacketBuilder b(buf, sizeof buf);
    b.header(cfg.local_port, peer_port, vtag);
    b.open_chunk(kShutdownComplete, t_bit ? kFlagT : 0);
    b.close_chunk();
    queue_raw(to, from, buf, b.finish());
}

void Endpoint::Impl::on_shutdown_ack(Assoc* a, Time now) {
    (void)now;
    if (a->state != AssocState::shutdown_sent && a->state != AssocState::shutdown_ack_sent)
        return;
    send_shutdown_complete(a, false, a->peer_tag, a->cur->addr, a->cur->local, a->peer_port);
    end_assoc(a, EventType::shutdown_complete, "graceful shutdown complete");
}

void Endpoint::Impl::on_shutdown_complete(Assoc* a) {
    if (a->state != AssocState::shutdown_ack_sent)
        return;
    end_assoc(a, EventType::shutdown_complete, "graceful shutdown complete (the peer began it)");
}

void Endpoint::Impl::on_abort(Assoc* a, const Chunk& c) {
    if (a->dead)
        return;
    std::string why = "the peer sent ABORT: " + describe_causes(c.value, c.value_len);
    end_assoc(a, a->was_up ? EventType::assoc_lost : EventType::cant_start, std::move(why));
    auto& chunk = events.back().abort_chunk; // the event end_assoc just queued
    const uint8_t head[4] = {kAbort, c.flags, uint8_t((4 + c.value_len) >> 8), uint8_t(4 + c.value_len)};
    chunk.assign(head, head + 4);
    chunk.insert(chunk.end(), c.value, c.value + c.value_len);
}

namespace {

// §9.2: the side that shuts down may bound the whole sequence by T5-shutdown-guard, 5 x RTO.Max.
// Not below 30 s here: fast-failover settings make RTO.Max a fraction of a second, and a peer
// that computes outside MPI may leave its window shut for longer than that while its data is
// still owed to it.
Time shutdown_guard(const Config& cfg) { return std::max<Time>(5 * cfg.rto_max, 30'000'000); }

} // namespace

// Started as soon as either side begins to shut down: until all data is acknowledged the other
// side may keep the association alive for ever (a shut receive window, with heartbeats
// answered, resets no limit that T3 would reach).
void Endpoint::Impl::start_shutdown_guard(Assoc* a, Time now) {
    if (a->t5 != kNever)
        return;
    a->t5 = now + shutdown_guard(cfg);
    arm(a);
}

void Endpoint::Impl::on_t5(Assoc* a, Time now) {
    (void)now;
    a->t5 = kNever;
    const std::string why = "the shutdown did not complete within T5-shutdown-guard (" +
                            std::to_string(shutdown_guard(cfg) / 1000) + " ms)";
    send_abort(a->cur->addr, a->cur->local, a->peer_port, a->peer_tag, false, kUserInitiatedAbort, why.data(), why.size());
    end_assoc(a, EventType::assoc_lost, why);
}

void Endpoint::Impl::on_t2(Assoc* a, Time now) {
    a->t2 = kNever;
    if (a->state != AssocState::shutdown_sent && a->state != AssocState::shutdown_ack_sent)
        return;
    if (++a->errors > cfg.max_retransmits) {
        send_abort(a->cur->addr, a->cur->local, a->peer_port, a->peer_tag, false, 0, nullptr, 0);
        end_assoc(a, EventType::assoc_lost,
                  "T2-shutdown expired " + std::to_string(a->errors) + " times in a row (peer unreachable)");
        return;
    }
    a->cur->rto = std::min(a->cur->rto * 2, cfg.rto_max);
    if (a->state == AssocState::shutdown_sent)
        a->shutdown_due = true;
    else
        a->shutdown_ack_due = true;
    a->t2 = now + a->cur->rto;
    mark_ready(a);
}

int Endpoint::shutdown(AssocId id, Time now) {
    Impl& m = *impl_;
    Assoc* a = m.find(id);
    if (a == nullptr)
        return -ENOTCONN;
    if (a->state == AssocState::cookie_wait || a->state == AssocState::cookie_echoed) {
        if (a->peer_tag != 0)
            m.send_abort(a->cur->addr, a->cur->local, a->peer_port, a->peer_tag, false, 0, nullptr, 0);
        m.end_assoc(a, EventType::shutdown_complete, "shut down before the association was up");
        m.graveyard.clear();
        return 0;
    }
    if (a->state == AssocState::established) {
        a->state = AssocState::shutdown_pending;
        m.start_shutdown_guard(a, now);
        m.maybe_finish_shutdown(a, now);
    }
    return 0;
}

int Endpoint::abort(AssocId id, const std::string& reason, Time now) {
    (void)now;
    Impl& m = *impl_;
    Assoc* a = m.find(id);
    if (a == nullptr)
        return -ENOTCONN;
    if (a->peer_tag != 0)
        m.send_abort(a->cur->addr, a->cur->local, a->peer_port, a->peer_tag, false, kUserInitiatedAbort, reason.data(),
                     std::min<size_t>(reason.size(), 256));
    m.end_assoc(a, a->was_up ? EventType::assoc_lost : EventType::cant_start, "aborted locally: " + reason);
    m.graveyard.clear();
    return 0;
}

} // namespace sctpm::sctp
