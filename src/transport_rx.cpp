// SPDX-License-Identifier: BSD-3-Clause
// Receive path: read a fragment's header first, then place its payload straight into the
// destination the caller names (or hold it while an earlier message of its domain is missing).
// With SCTP_FRAGMENT_INTERLEAVE 0 the rest of a partially read SCTP message comes next, so a
// read can stop mid-message (`cont_`) and resume on the next progress call.
// Each frame's link byte picks the peer it is for; a link's frames before its hello are held.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <usrsctp.h>

#include "error.hpp"
#include "transport.hpp"
#include "abort_cause.hpp"

namespace sctpm {
namespace {

constexpr uint64_t kUntilEor = ~0ull;

// A peer's receive state per (association, stream). One remote sender per peer: every link maps
// to one peer, and a peer on the other side sends on one link only, so fragments from different
// senders never meet in one sequencer.
uint64_t rx_key(AssocId assoc, uint16_t stream) { return (uint64_t(assoc) << 16) | stream; }

// What a frame of `frame_bytes` (header included) held for an anonymous link counts.
uint64_t pending_cost(uint64_t frame_bytes) { return frame_bytes + kHeldItemOverhead; }

bool same_address(const sockaddr_storage& a, const sockaddr_storage& b) {
    if (a.ss_family != b.ss_family)
        return false;
    if (a.ss_family == AF_INET)
        return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr ==
               reinterpret_cast<const sockaddr_in&>(b).sin_addr.s_addr;
    if (a.ss_family == AF_INET6)
        return std::memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                           &reinterpret_cast<const sockaddr_in6&>(b).sin6_addr, 16) == 0;
    return false;
}

} // namespace

int Transport::read_stage() {
    // Skip the stack's locks when the upcall reported nothing since the last drain; every 64th
    // call drains anyway in case a wakeup was ever missed.
    static thread_local unsigned calls = 0;
    const uint64_t activity = progress_.activity();
    if (activity == read_activity_ && cont_.mode == ContMode::none && (++calls & 63) != 0)
        return 0;
    int work = 0;
    if (read_depth_ > 0)
        ++nested_reads_;
    struct Depth {
        int& d;
        explicit Depth(int& v) : d(v) { ++d; }
        ~Depth() { --d; }
    } depth(read_depth_);
    while (read_one())
        ++work;
    read_activity_ = activity;
    return work;
}

bool Transport::read_one() {
    if (cont_.mode != ContMode::none)
        return continue_message();
    RecvResult r = ep_->recv(rxbuf_.data(), rxbuf_.size());
    if (r.n == -EWOULDBLOCK || r.n < 0)
        return false;
    if (r.notification) {
        take_notification(rxbuf_.data(), r);
        return true;
    }
    start_data(r);
    return true;
}

// A notification whose first read put r.n bytes at `first`: read the rest of it and handle it.
// Notifications are small, but SEND_FAILED carries the undelivered data: only a head of up to
// rxbuf_'s size is kept.
void Transport::take_notification(const uint8_t* first, RecvResult r) {
    std::vector<uint8_t> note(first, first + r.n);
    while (!r.eor && (r = ep_->recv(rxbuf_.data(), rxbuf_.size())).n > 0)
        if (note.size() < rxbuf_.size())
            note.insert(note.end(), rxbuf_.data(), rxbuf_.data() + std::min(size_t(r.n), rxbuf_.size() - note.size()));
    handle_notification(note.data(), note.size());
}

void Transport::start_data(const RecvResult& r) {
    size_t n = static_cast<size_t>(r.n);
    std::string why;
    std::optional<FrameHeader> h;
    if (n < kFrameHeaderSize)
        why = "truncated frame: " + std::to_string(n) + " bytes, a header has " + std::to_string(kFrameHeaderSize);
    else
        h = decode_frame_header(rxbuf_.data(), n, limits_, &why);
    const size_t avail = h ? n - kFrameHeaderSize : 0;
    if (h && (avail > h->frag_len || (r.eor && avail != h->frag_len)))
        why = "frame length mismatch: header says " + std::to_string(h->frag_len) + " payload bytes, the SCTP message has " +
              (r.eor ? std::to_string(avail) : "more than " + std::to_string(avail));
    cont_ = Continuation{};
    cont_.assoc = r.assoc;
    cont_.stream = r.stream;
    AssocEntry& a = peers_.assoc(r.assoc);
    ++a.messages_read;
    if (r.cut) { // the rest never comes; the notification that follows fails its peers
        discard_rest(0);
        return;
    }
    if (a.ended || a.auth_mismatch) { // aborted or failing: its peers have been told; or auth_mode_matches
        discard_rest(r.eor ? 0 : kUntilEor);
        return;
    }
    if (!why.empty()) {
        if (!r.eor) {
            cont_.mode = ContMode::discard;
            cont_.remaining = kUntilEor;
        }
        protocol_error(r.assoc, nullptr, why);
        return;
    }
    const uint64_t remaining = h->frag_len - avail;
    const LinkKey link = LinkKey::of_received(h->link);
    if (h->control()) { // always whole in rxbuf_ (its size includes kMaxHelloBytes)
        const uint8_t* payload = rxbuf_.data() + kFrameHeaderSize;
        if (h->kind == FrameKind::hello)
            handle_hello(r.assoc, link, payload, avail);
        else if (h->kind == FrameKind::challenge)
            handle_challenge(r.assoc, link, payload, avail);
        else if (h->kind == FrameKind::retire)
            handle_retire(r.assoc, link, payload, avail);
        else if (h->kind == FrameKind::unlink)
            handle_unlink(r.assoc, link);
        else
            handle_proof(r.assoc, link, payload, avail);
        return;
    }
    Peer* p = peers_.get(a.peer_on(link));
    if (!p && link.opened_by_me) {
        discard_rest(remaining);
        protocol_error(r.assoc, nullptr, "data on " + link.describe() + ", which this side never opened");
        return;
    }
    if (!p) { // anonymous link: keep the whole message until its hello names the peer
        const uint64_t cost = pending_cost(kFrameHeaderSize + h->frag_len);
        if (!pre_hello_bound_.allows(a.pending_bytes, cost)) {
            discard_rest(remaining);
            bound_exceeded(r.assoc, nullptr, pre_hello_bound_, "frames waiting for a hello", a.pending_bytes + cost);
            return;
        }
        pre_hello_bound_.charge(a.pending_bytes, cost);
        auto& held = a.pending[link.incoming_byte()];
        held.emplace_back(r.stream, std::string(reinterpret_cast<char*>(rxbuf_.data()), n));
        if (remaining) {
            cont_.mode = ContMode::raw;
            cont_.remaining = remaining;
            cont_.raw = &held.back().second;
        }
        return;
    }
    if (p->state == Peer::State::failed) {
        discard_rest(remaining);
        return;
    }
    if (link.opened_by_me && p->assoc == r.assoc && p->awaiting_challenge) {
        // Until its challenge proves the key of the card we reached it by, whoever answers at
        // that address may be anyone: a member answers our hello with the challenge, and sends
        // data only once our proof has made the link known to it.
        discard_rest(remaining);
        protocol_error(r.assoc, p,
                       "data on " + link.describe() + " before the peer proved that it holds the key of its card "
                       "(a process with auth off sends it at once: every process of a job must use the same auth setting)");
        return;
    }
    if (link.opened_by_me && p->assoc == r.assoc)
        p->link_known = true; // the remote answers on our link: it has our hello
    count_path(*p, r.from, n);
    cont_.peer = p;
    handle_fragment(*p, r.assoc, r.stream, *h, rxbuf_.data() + kFrameHeaderSize, avail, remaining);
}

// Drop what is left of the current SCTP message.
void Transport::discard_rest(uint64_t remaining) {
    if (remaining) {
        cont_.mode = ContMode::discard;
        cont_.remaining = remaining;
    }
}

void Transport::handle_fragment(Peer& p, AssocId assoc, uint16_t stream, const FrameHeader& h,
                                const uint8_t* avail, size_t avail_len, uint64_t remaining) {
    StreamRx& sr = p.rx[rx_key(assoc, stream)];
    std::string why = sr.sequencer.accept(h);
    if (!why.empty()) {
        discard_rest(remaining);
        protocol_error(assoc, &p, why + " (stream " + std::to_string(stream) + ")");
        return;
    }
    std::shared_ptr<RxMessage> m;
    bool release_held = false;
    if (h.first()) {
        // decode_frame_header already bounded the domain (< 1024).
        if (h.domain >= p.order.size())
            p.order.resize(h.domain + 1);
        auto& w = p.order[h.domain];
        const uint64_t cost = kHeldItemOverhead + h.frag_len; // the whole fragment, as it will arrive
        if (!w.is_next(h.seq) && !reorder_bound_.allows(p.held_bytes, cost)) {
            discard_rest(remaining);
            bound_exceeded(assoc, &p, reorder_bound_, "messages held out of order", p.held_bytes + cost);
            return;
        }
        m = std::make_shared<RxMessage>();
        m->total = h.total;
        if (!w.is_next(h.seq)) {
            try {
                w.hold(h.seq, m);
            } catch (const Error& e) {
                discard_rest(remaining);
                protocol_error(assoc, &p, e.what());
                return;
            }
            ++p.stats.reordered;
        }
        if (!h.last())
            sr.current = m;
        m->received = avail_len;
        if (w.is_next(h.seq)) {
            w.advance();
            deliver(p, *m, avail, avail_len);
            release_held = true;
        } else {
            m->buffered.assign(reinterpret_cast<const char*>(avail), avail_len);
            reorder_bound_.charge(p.held_bytes, kHeldItemOverhead + avail_len); // the rest as it arrives
        }
    } else {
        m = sr.current;
        if (!m->delivered && !reorder_bound_.allows(p.held_bytes, h.frag_len)) {
            discard_rest(remaining);
            bound_exceeded(assoc, &p, reorder_bound_, "messages held out of order", p.held_bytes + h.frag_len);
            return;
        }
        if (h.last())
            sr.current.reset();
        m->received += avail_len;
        if (m->delivered) {
            place_bytes(p, *m, avail, avail_len);
        } else {
            m->buffered.append(reinterpret_cast<const char*>(avail), avail_len);
            reorder_bound_.charge(p.held_bytes, avail_len);
        }
    }
    if (p.state == Peer::State::failed) {
        discard_rest(remaining); // the receiver failed on this fragment's head
    } else if (remaining) {
        cont_.mode = m->delivered ? ContMode::place : ContMode::buffer;
        cont_.remaining = remaining;
        cont_.msg = m;
    }
    if (release_held && p.state != Peer::State::failed)
        deliver_in_order(p, h.domain);
}

void Transport::deliver_in_order(Peer& p, uint16_t domain) {
    auto& w = p.order[domain];
    while (p.state != Peer::State::failed) {
        auto held = w.take_next();
        if (!held)
            break;
        w.advance();
        std::string bytes = std::move((*held)->buffered);
        (*held)->buffered.clear();
        HeldBytesBound::release(p.held_bytes, kHeldItemOverhead + bytes.size());
        deliver(p, **held, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
        if (cont_.msg == *held && cont_.mode == ContMode::buffer)
            cont_.mode = ContMode::place; // its fragment still streaming in goes straight to the caller
    }
}

void Transport::deliver(Peer& p, RxMessage& m, const uint8_t* head, size_t head_len) {
    m.delivered = true;
    ++p.stats.rx_messages;
    p.stats.rx_bytes += m.total;
    void* handle = nullptr;
    size_t used = cb_.on_message ? cb_.on_message(cb_.ctx, p.id, m.total, head, head_len, &handle) : head_len;
    if (used > head_len)
        used = head_len;
    m.handle = handle;
    m.placed = used;
    if (m.placed < m.total && !handle) {
        receive_failed(p, EPROTO, "the receiver took " + std::to_string(used) + " of a " + std::to_string(m.total) +
                                      "-byte message and named no destination for the rest");
        return;
    }
    if (used < head_len)
        place_bytes(p, m, head + used, head_len - used);
}

bool Transport::next_dest(Peer& p, RxMessage& m) {
    while (m.dest_index < m.dest_count && m.dest[m.dest_index].iov_len == 0)
        ++m.dest_index;
    if (m.dest_index < m.dest_count)
        return true;
    int n = cb_.on_dest ? cb_.on_dest(cb_.ctx, m.handle, m.dest, 16) : 0;
    size_t room = 0;
    for (int i = 0; i < n && i < 16; ++i)
        room += m.dest[i].iov_len;
    if (n <= 0 || room == 0) {
        receive_failed(p, EMSGSIZE, "no room for the remaining " + std::to_string(m.total - m.placed) + " bytes of a " +
                                        std::to_string(m.total) + "-byte message");
        return false;
    }
    m.dest_count = std::min(n, 16);
    m.dest_index = 0;
    m.dest_offset = 0;
    m.dest_filled = 0;
    while (m.dest[m.dest_index].iov_len == 0)
        ++m.dest_index;
    return true;
}

// Account k bytes written at the cursor; hand full iov batches (and the end) to the caller.
static void advance_cursor(RxMessage& m, size_t k, const sctpm_callbacks& cb) {
    m.dest_offset += k;
    m.dest_filled += k;
    m.placed += k;
    if (m.dest_offset == m.dest[m.dest_index].iov_len) {
        ++m.dest_index;
        m.dest_offset = 0;
    }
    const bool last = m.placed == m.total;
    if (m.dest_index == m.dest_count || last) {
        size_t filled = m.dest_filled;
        m.dest_count = m.dest_index = 0;
        m.dest_filled = 0;
        if (cb.on_placed)
            cb.on_placed(cb.ctx, m.handle, filled, last);
    }
}

bool Transport::place_bytes(Peer& p, RxMessage& m, const uint8_t* data, size_t len) {
    while (len > 0 && p.state != Peer::State::failed) {
        if (m.placed + len > m.total) {
            receive_failed(p, EPROTO, "message longer than announced");
            return false;
        }
        if (!next_dest(p, m))
            return false;
        iovec& v = m.dest[m.dest_index];
        size_t k = std::min(len, v.iov_len - m.dest_offset);
        std::memcpy(static_cast<uint8_t*>(v.iov_base) + m.dest_offset, data, k);
        data += k;
        len -= k;
        advance_cursor(m, k, cb_);
    }
    return p.state != Peer::State::failed;
}

// Read the rest of the current SCTP message according to cont_.mode. Returns false when the
// socket has nothing more for now (the message stays half-read until the next call).
bool Transport::continue_message() {
    while (cont_.mode != ContMode::none && cont_.remaining > 0) {
        uint8_t* dst = rxbuf_.data();
        size_t want = static_cast<size_t>(std::min<uint64_t>(cont_.remaining, rxbuf_.size()));
        RxMessage* m = cont_.msg.get();
        if (cont_.mode == ContMode::place) {
            if (!next_dest(*cont_.peer, *m)) {
                cont_.mode = ContMode::discard;
                continue;
            }
            iovec& v = m->dest[m->dest_index];
            dst = static_cast<uint8_t*>(v.iov_base) + m->dest_offset;
            want = static_cast<size_t>(std::min<uint64_t>(cont_.remaining, v.iov_len - m->dest_offset));
        }
        RecvResult r = ep_->recv(dst, want);
        if (r.n == -EWOULDBLOCK)
            return false;
        // The stack ended the message short: its association was aborted, or restarted by a new
        // process at the sender's port. What came of it is dropped, and the notification, which
        // comes at once or next, fails its peers. Not a protocol error of the sender's.
        if (r.notification) { // read into dst, which may be the receiver's buffer
            finish_fragment();
            take_notification(dst, r);
            return true;
        }
        if (r.cut && r.assoc == cont_.assoc) {
            cont_.mode = ContMode::discard;
            cont_.remaining = 0;
            break;
        }
        if (r.n <= 0 || r.notification || r.assoc != cont_.assoc) {
            // Cannot happen with fragment interleave 0; if it does, the stream is unusable.
            std::fprintf(stderr, "sctpm: internal error: read of a continued message returned %ld bytes from assoc %u (expected %u)\n",
                         r.n, r.assoc, cont_.assoc);
            cont_.mode = ContMode::none;
            return false;
        }
        const size_t n = static_cast<size_t>(r.n);
        if (cont_.remaining != kUntilEor)
            cont_.remaining -= n;
        const bool early_end = r.eor && cont_.remaining > 0 && cont_.remaining != kUntilEor;
        const bool too_long = !r.eor && cont_.remaining == 0;
        if (cont_.peer && cont_.mode != ContMode::discard)
            count_path(*cont_.peer, r.from, n);
        switch (cont_.mode) {
        case ContMode::place:
            m->received += n;
            advance_cursor(*m, n, cb_);
            break;
        case ContMode::buffer:
            m->received += n;
            m->buffered.append(reinterpret_cast<char*>(dst), n);
            reorder_bound_.charge(cont_.peer->held_bytes, n); // within what handle_fragment allowed
            break;
        case ContMode::raw:
            cont_.raw->append(reinterpret_cast<char*>(dst), n);
            break;
        default:
            break;
        }
        if (r.eor && cont_.remaining == kUntilEor)
            cont_.remaining = 0;
        if (early_end || too_long) {
            const AssocId assoc = cont_.assoc;
            if (too_long) {
                cont_.mode = ContMode::discard;
                cont_.remaining = kUntilEor;
            } else {
                cont_.remaining = 0;
            }
            protocol_error(assoc, cont_.peer, early_end ? "truncated frame: the SCTP message ended before its payload did"
                                                        : "frame longer than its header says");
        }
    }
    finish_fragment();
    return true;
}

void Transport::finish_fragment() {
    const AssocId abort_assoc = deferred_abort_;
    cont_ = Continuation{};
    if (abort_assoc) {
        deferred_abort_ = 0;
        ep_->abort(abort_assoc);
    }
}

void Transport::count_path(Peer& p, const sockaddr_storage& from, size_t n) {
    for (auto& pc : p.paths)
        if (same_address(pc.address, from)) {
            pc.rx_bytes += n;
            return;
        }
    p.paths.push_back({from, n});
}

void Transport::protocol_error(AssocId assoc, const Peer* culprit, const std::string& why, int error) {
    const std::string where = "association " + std::to_string(assoc);
    const AssocEntry* a = peers_.find_assoc(assoc);
    if (a && a->ended)
        return; // its end was reported; later bytes of it are discarded
    const bool identified = a && !a->links.empty();
    const int told = end_assoc(assoc, true, SCTPM_EV_PROTOCOL_ERROR, error, [&](const Peer& p) {
        const std::string peer = "peer " + std::to_string(p.id) + " (" + where + "): ";
        if (!culprit || &p == culprit)
            return peer + why;
        return peer + "aborted for a protocol error on peer " + std::to_string(culprit->id) + "'s link: " + why;
    });
    // A culprit linked on another association than its own still has to fail.
    if (culprit && culprit->state != Peer::State::failed)
        fail_peer(*peers_.get(culprit->id), SCTPM_EV_PROTOCOL_ERROR, error,
                  "peer " + std::to_string(culprit->id) + " (" + where + "): " + why);
    else if (told == 0)
        report_peerless_end(assoc, SCTPM_EV_PROTOCOL_ERROR, error, identified, why);
}

void Transport::report_peerless_end(AssocId assoc, sctpm_event_type type, int error, bool identified,
                                    const std::string& why) {
    sctpm_event ev{};
    ev.type = type;
    ev.peer = -1;
    ev.assoc_id = assoc;
    ev.error = error;
    std::snprintf(ev.detail, sizeof ev.detail, "%s association %u: %s",
                  identified ? "(every peer failed already)" : "unidentified", assoc, why.c_str());
    if (AssocEntry* e = peers_.find_assoc(assoc))
        e->end_reported = true;
    emit(ev);
}

void Transport::bound_exceeded(AssocId assoc, const Peer* culprit, const HeldBytesBound& bound,
                               const std::string& what, uint64_t would_hold) {
    const AssocEntry* a = peers_.find_assoc(assoc);
    if (a && a->ended)
        return;
    ++bound_aborts_;
    refuse(assoc, culprit, bound.describe(what, would_hold), EPROTO, bound_aborts_);
}

void Transport::refuse(AssocId assoc, const Peer* culprit, const std::string& why, int error, uint64_t count) {
    if (culprit || count == 1) {
        protocol_error(assoc, culprit, why + (culprit ? "" : " (further refusals of strangers are only counted)"), error);
        return;
    }
    end_assoc(assoc, true, SCTPM_EV_PROTOCOL_ERROR, error, [&](const Peer& p) {
        return "peer " + std::to_string(p.id) + " (association " + std::to_string(assoc) + "): " + why;
    });
}

void Transport::drop_pending(AssocEntry& a) {
    a.pending.clear();
    a.challenges.clear();
    a.pending_bytes = 0;
}

AssocEntry::Held Transport::take_pending(AssocEntry& a, uint8_t link_byte) {
    auto it = a.pending.find(link_byte);
    if (it == a.pending.end())
        return {};
    AssocEntry::Held held = std::move(it->second);
    a.pending.erase(it);
    for (const auto& [stream, raw] : held)
        HeldBytesBound::release(a.pending_bytes, pending_cost(raw.size()));
    return held;
}

// A message for p cannot be completed: its stream state is lost, and so is its association.
void Transport::receive_failed(Peer& p, int error, const std::string& why) {
    if (p.assoc)
        protocol_error(p.assoc, &p, why, error);
    else
        fail_peer(p, SCTPM_EV_PROTOCOL_ERROR, error, "peer " + std::to_string(p.id) + ": " + why);
}

// An idle peer replies on the link the remote opened: it knows who we are, no hello needed.
void Transport::adopt_link(Peer& p, AssocId assoc, LinkKey link) {
    p.assoc = assoc;
    p.link = link.outgoing_byte();
    p.state = Peer::State::up;
    p.hello_sent = true;
    p.link_known = true;
}

void Transport::replay_pending(Peer& p, AssocId assoc, LinkKey link) {
    AssocEntry* a = peers_.find_assoc(assoc);
    if (!a)
        return;
    // Complete frames: a hello is read only after the SCTP message before it was.
    AssocEntry::Held held = take_pending(*a, link.incoming_byte());
    for (auto& [stream, raw] : held) {
        std::string why;
        auto h = decode_frame_header(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), limits_, &why);
        if (!h || raw.size() != kFrameHeaderSize + h->frag_len) {
            protocol_error(assoc, &p, why.empty() ? "frame length mismatch in a held message" : why);
            return;
        }
        handle_fragment(p, assoc, stream, *h, reinterpret_cast<const uint8_t*>(raw.data()) + kFrameHeaderSize,
                        h->frag_len, 0);
        if (p.state == Peer::State::failed)
            return;
    }
}

void Transport::handle_notification(const uint8_t* data, size_t len) {
    const auto* n = reinterpret_cast<const sctp_notification*>(data);
    if (len < sizeof n->sn_header)
        return;
    switch (n->sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE:
        handle_assoc_change(n->sn_assoc_change, len);
        break;
    case SCTP_PEER_ADDR_CHANGE:
        handle_path_change(n->sn_paddr_change);
        break;
    case SCTP_AUTHENTICATION_EVENT:
        if (len >= sizeof n->sn_auth_event)
            handle_auth_event(n->sn_auth_event);
        break;
    case SCTP_SEND_FAILED_EVENT: {
        const sctp_send_failed_event& f = n->sn_send_failed_event;
        // An association that never came up ends with SCTP_CANT_STR_ASSOC, which follows the
        // failed sends of its queued hello and data and says why (no answer).
        if (const AssocEntry* a = peers_.find_assoc(f.ssfe_assoc_id); a && !a->up && !a->ended)
            break;
        end_assoc(f.ssfe_assoc_id, false, SCTPM_EV_SEND_FAILED, f.ssfe_error ? static_cast<int>(f.ssfe_error) : ECONNRESET,
                  [&](const Peer& p) {
                      return "peer " + std::to_string(p.id) + ": data could not be delivered (association " +
                             std::to_string(f.ssfe_assoc_id) + " failing)";
                  });
        break;
    }
    default:
        break;
    }
}

void Transport::handle_assoc_change(const sctp_assoc_change& c, size_t len) {
    const AssocId id = c.sac_assoc_id;
    const std::string where = "association " + std::to_string(id);
    auto who = [](const Peer& p) { return "peer " + std::to_string(p.id); };
    switch (c.sac_state) {
    case SCTP_COMM_UP:
        assoc_up(id);
        break;
    case SCTP_RESTART:
        restart_assoc(id);
        break;
    case SCTP_COMM_LOST: {
        // sac_info holds the ABORT chunk, if one ended the association (not on a timeout).
        const size_t info_len = std::min<size_t>(c.sac_length, len) > sizeof c ? std::min<size_t>(c.sac_length, len) - sizeof c : 0;
        const std::string abort = describe_abort_chunk(c.sac_info, info_len);
        const std::string cause = abort.empty() ? "the peer stopped answering on every path" : abort;
        end_assoc(id, false, SCTPM_EV_ASSOC_LOST, c.sac_error ? c.sac_error : ECONNRESET,
                  [&](const Peer& p) { return who(p) + ": " + where + " lost (" + cause + ")"; });
        forget_assoc(id);
        break;
    }
    case SCTP_CANT_STR_ASSOC:
        end_assoc(id, false, SCTPM_EV_CANT_START, EHOSTUNREACH, [&](const Peer& p) {
            std::string addrs;
            for (const auto& a : p.card.addresses)
                addrs += (addrs.empty() ? "" : ",") + a;
            return who(p) + ": cannot start an association to [" + addrs + "] SCTP port " +
                   std::to_string(p.card.sctp_port) + " UDP port " + std::to_string(p.card.udp_port) + " (no answer)";
        });
        forget_assoc(id);
        break;
    case SCTP_SHUTDOWN_COMP:
        assoc_shut_down(id);
        break;
    default:
        break;
    }
}

// A restart is a new process at the address and SCTP port of the one the association was with: a
// rank that died and was started again, or a process spawned after another left (MPI_Comm_disconnect)
// that the kernel gave the same UDP port. The stack has kept the association and reset it for the
// new process, so what was on it is lost: its peers fail. The new process then says hello on it as
// on a new association. With auth=packet the stack keeps the SCTP-AUTH keys of the old links, which
// the new process does not know: the association is aborted instead (the new process's peers on it
// fail too).
void Transport::restart_assoc(AssocId id) {
    const AssocEntry* a = peers_.find_assoc(id);
    const bool reported = a && a->end_reported;     // its end was told already
    const bool identified = a && !a->links.empty(); // read now: the callbacks may move entries
    const bool abort = s_.auth == AuthMode::packet;
    const int told = end_assoc(id, abort, SCTPM_EV_ASSOC_LOST, ECONNRESET, [&](const Peer& p) {
        return "peer " + std::to_string(p.id) + ": the peer restarted association " + std::to_string(id) +
               ": messages in flight may be lost";
    });
    if (abort) {
        if (told == 0 && !reported) // no live peer on it (none identified yet, or all failed)
            report_peerless_end(id, SCTPM_EV_ASSOC_LOST, ECONNRESET, identified, "the peer restarted it; aborted");
        return;
    }
    forget_assoc(id);
    assoc_up(id);
}

void Transport::assoc_up(AssocId assoc) {
    ep_->tune_association(assoc);
    if (!auth_mode_matches(assoc))
        return;
    AssocEntry& a = peers_.assoc(assoc);
    a.up = true;
    for (sctpm_peer id : a.peers()) {
        Peer* p = peers_.get(id);
        if (!p || p->state == Peer::State::failed)
            continue;
        if (p->state == Peer::State::connecting && p->assoc == assoc)
            p->state = Peer::State::up;
        sctpm_event ev{};
        ev.type = SCTPM_EV_ASSOC_UP;
        ev.peer = id;
        ev.assoc_id = assoc;
        std::snprintf(ev.detail, sizeof ev.detail, "peer %d: association %u up", id, assoc);
        emit(ev);
    }
}

// A graceful end: the peers on it go back to idle and connect again when they next send.
void Transport::assoc_shut_down(AssocId assoc) {
    std::vector<sctpm_peer> linked;
    std::vector<std::string> unproven;
    if (const AssocEntry* a = peers_.find_assoc(assoc)) {
        linked = a->peers();
        unproven = unproven_hellos(*a);
    }
    forget_assoc(assoc);
    bool told = false;
    for (sctpm_peer id : linked) {
        Peer* p = peers_.get(id);
        if (!p || p->state == Peer::State::failed)
            continue;
        if (p->assoc == assoc) {
            p->assoc = 0;
            p->state = Peer::State::idle;
            p->hello_sent = false;
            p->link_known = false;
            p->awaiting_challenge = false;
            p->rx.clear();
        }
        sctpm_event ev{};
        ev.type = SCTPM_EV_SHUTDOWN;
        ev.peer = id;
        ev.assoc_id = assoc;
        std::snprintf(ev.detail, sizeof ev.detail, "peer %d: association %u shut down", id, assoc);
        emit(ev);
        told = true;
    }
    if (!told) {
        sctpm_event ev{};
        ev.type = SCTPM_EV_SHUTDOWN;
        ev.peer = -1;
        ev.assoc_id = assoc;
        std::snprintf(ev.detail, sizeof ev.detail, "association %u shut down", assoc);
        emit(ev);
    }
    check_unproven(unproven);
}

void Transport::handle_path_change(const sctp_paddr_change& c) {
    static const struct {
        uint32_t sctp;
        sctpm_path_state state;
        const char* name;
    } map[] = {{SCTP_ADDR_AVAILABLE, SCTPM_PATH_ACTIVE, "available"},
               {SCTP_ADDR_UNREACHABLE, SCTPM_PATH_UNREACHABLE, "unreachable"},
               {SCTP_ADDR_REMOVED, SCTPM_PATH_REMOVED, "removed"},
               {SCTP_ADDR_ADDED, SCTPM_PATH_ADDED, "added"},
               {SCTP_ADDR_MADE_PRIM, SCTPM_PATH_ACTIVE, "made primary"},
               {SCTP_ADDR_CONFIRMED, SCTPM_PATH_CONFIRMED, "confirmed"},
               {0x0007, SCTPM_PATH_POTENTIALLY_FAILED, "potentially failed"}};
    sctpm_event ev{};
    ev.type = SCTPM_EV_PATH_CHANGE;
    ev.assoc_id = c.spc_assoc_id;
    ev.error = static_cast<int>(c.spc_error);
    const char* name = "unknown state";
    for (const auto& m : map)
        if (m.sctp == c.spc_state) {
            ev.state = m.state;
            name = m.name;
        }
    std::string addr = address_text(reinterpret_cast<const sockaddr*>(&c.spc_aaddr));
    std::snprintf(ev.address, sizeof ev.address, "%s", addr.c_str());
    std::snprintf(ev.detail, sizeof ev.detail, "association %u path %s: %s", c.spc_assoc_id, addr.c_str(), name);
    emit_for_linked_peers(c.spc_assoc_id, ev);
}

} // namespace sctpm
