// SPDX-License-Identifier: BSD-3-Clause
// The stall report (setting stall_report_s): when a blocked wait has seen no transport progress
// for that long, one stderr report of where every message stands, so that a hang can be told
// apart: bytes still queued here, held by the stack (unacked, zero window), waiting for an
// earlier sequence number, or delivered and never matched above.
#include <cstdio>
#include <set>
#include <sstream>
#include <unistd.h>

#include "transport.hpp"

namespace sctpm {
namespace {

const char* state_name(Peer::State s) {
    switch (s) {
    case Peer::State::idle: return "idle";
    case Peer::State::connecting: return "connecting";
    case Peer::State::up: return "up";
    case Peer::State::failed: return "failed";
    }
    return "?";
}

const char* mode_name(int m) {
    static const char* names[] = {"none", "place", "buffer", "raw", "discard"};
    return m >= 0 && m < 5 ? names[m] : "?";
}

} // namespace

void Transport::report_stall(int64_t idle_us) {
    std::ostringstream o;
    const std::string who = "[sctpm " + std::to_string(getpid()) + "] stall: ";
    o << who << "no transport progress for " << idle_us / 1000 << " ms; half-read message: "
      << mode_name(static_cast<int>(cont_.mode)) << " (assoc " << cont_.assoc << ", stream " << cont_.stream
      << ", " << cont_.remaining << " bytes left); peers with queued sends: " << tx_ready_.size()
      << "; socket readable: " << (ep_->readable() ? "yes" : "no") << "; nested reads so far: " << nested_reads_ << "\n";
    std::set<AssocId> assocs;
    for (size_t i = 0; i < peers_.size(); ++i) {
        const Peer& p = *peers_.get(static_cast<sctpm_peer>(i));
        if (p.state == Peer::State::idle && p.stats.rx_messages == 0)
            continue;
        if (p.assoc)
            assocs.insert(p.assoc);
        o << who << "peer " << p.id << " " << state_name(p.state) << " assoc " << p.assoc << " link "
          << int(p.link) << ": sent " << p.stats.tx_messages << " msgs, received " << p.stats.rx_messages
          << ", refused sends " << p.stats.retries << ", reordered " << p.stats.reordered << "\n";
        for (size_t s = 0; s < p.tx_queues.size(); ++s)
            if (!p.tx_queues[s].empty()) {
                const TxMessage& m = p.tx_queues[s].front();
                o << who << "  stream " << s << ": " << p.tx_queues[s].size() << " queued, front seq "
                  << m.header.seq << " domain " << m.header.domain << " sent " << m.sent << "/" << m.header.total
                  << "\n";
            }
        for (size_t d = 0; d < p.tx_seq.size(); ++d)
            if (p.tx_seq[d] || (d < p.order.size() && (p.order[d].expected() || p.order[d].held())))
                o << who << "  domain " << d << ": next seq out " << p.tx_seq[d] << ", next seq in "
                  << (d < p.order.size() ? p.order[d].expected() : 0) << ", held "
                  << (d < p.order.size() ? p.order[d].held() : 0) << "\n";
        for (const auto& [key, sr] : p.rx)
            if (sr.current)
                o << who << "  stream " << (key & 0xffff) << ": message seq " << sr.sequencer.seq() << " half received "
                  << sr.current->received << "/" << sr.current->total << (sr.current->delivered ? " (delivered)" : "")
                  << "\n";
    }
    for (AssocId a : assocs) {
        if (const AssocEntry* e = peers_.find_assoc(a)) {
            uint64_t sent = 0;
            for (sctpm_peer id : e->peers())
                sent += peers_.get(id)->frames_sent;
            size_t held = 0;
            for (const auto& [link, msgs] : e->pending)
                held += msgs.size();
            o << who << "assoc " << a << ": SCTP messages sent " << sent << ", read " << e->messages_read
              << ", held for a hello " << held << "\n";
        }
        const AssocStatus st = ep_->status(a);
        if (!st.known) {
            o << who << "assoc " << a << ": unknown to the stack\n";
            continue;
        }
        o << who << "assoc " << a << ": state " << st.state << ", peer rwnd " << st.rwnd << ", unacked chunks "
          << st.unacked << ", chunks awaiting reassembly " << st.pending << ", bytes queued to send " << st.queued_out
          << "\n";
        for (const auto& ps : ep_->paths(a))
            o << who << "  path " << ps.address << " state " << ps.state << " cwnd " << ps.cwnd << " rto " << ps.rto
              << "\n";
    }
    if (const std::string c = ep_->stack_counters(); !c.empty())
        o << who << "stack: " << c << "\n";
    std::fputs(o.str().c_str(), stderr);
    std::fflush(stderr);
}

} // namespace sctpm
