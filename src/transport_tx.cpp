// SPDX-License-Identifier: BSD-3-Clause
// Send path: fragmentation into SCTP messages, per-stream queues, lazy association setup. A peer
// to a process we already have an association with opens a new link on it instead (frame.hpp).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "error.hpp"
#include "hello_auth.hpp"
#include "transport.hpp"

namespace sctpm {
namespace {

uint64_t iov_total(const std::vector<iovec>& iov) {
    uint64_t t = 0;
    for (const auto& v : iov)
        t += v.iov_len;
    return t;
}

// Call piece(base, n) for each non-empty piece of the `len` payload bytes that start at message
// offset `off` of the iov, in order, while it returns true.
template <typename Piece>
void for_each_piece(const std::vector<iovec>& iov, uint64_t off, size_t len, Piece piece) {
    size_t i = 0;
    while (i < iov.size() && off >= iov[i].iov_len)
        off -= iov[i++].iov_len;
    for (; len > 0 && i < iov.size(); ++i, off = 0) {
        const size_t n = std::min<size_t>(len, iov[i].iov_len - off);
        if (n > 0 && !piece(static_cast<uint8_t*>(iov[i].iov_base) + off, n))
            return;
        len -= n;
    }
}

// Point out[] at those bytes. Returns the entries used, or -1 when that would take more than `max`.
int slice(const std::vector<iovec>& iov, uint64_t off, size_t len, iovec* out, int max) {
    int n = 0;
    bool fits = true;
    for_each_piece(iov, off, len, [&](uint8_t* base, size_t k) {
        if (n == max)
            return fits = false;
        out[n++] = iovec{base, k};
        return true;
    });
    return fits ? n : -1;
}

// Copy those bytes to out.
void gather(const std::vector<iovec>& iov, uint64_t off, size_t len, uint8_t* out) {
    for_each_piece(iov, off, len, [&](const uint8_t* base, size_t k) {
        std::memcpy(out, base, k);
        out += k;
        return true;
    });
}

// A message that stays queued after the call that sent it: it keeps a copy of its bytes.
void own_bytes(TxMessage& m) {
    m.owned.resize(m.header.total);
    gather(m.iov, 0, m.owned.size(), reinterpret_cast<uint8_t*>(m.owned.data()));
    m.iov.assign(1, iovec{m.owned.data(), m.owned.size()});
}

} // namespace

void Transport::queue_control(Peer& p, FrameKind kind, std::string payload) {
    TxMessage m;
    m.owned = std::move(payload);
    m.header.kind = kind;
    m.header.total = m.owned.size();
    m.stream = 0;
    p.tx_queues[0].push_front(std::move(m));
    // The iov points into `owned`, which lives in the queue now.
    TxMessage& q = p.tx_queues[0].front();
    q.iov.push_back({q.owned.data(), q.owned.size()});
    ++p.queued;
}

void Transport::queue_hello(Peer& p) {
    // A fresh nonce, the hello blob, then our card without its key (the peer may not know the
    // card; the key never travels in a hello).
    p.hello_nonce = random_bytes(kNonceBytes);
    queue_control(p, FrameKind::hello, format_hello({p.hello_nonce, p.hello.empty() ? hello_ : p.hello, hello_card_}));
    p.hello_sent = true;
    p.link_known = false;
    p.awaiting_challenge = s_.auth != AuthMode::off;
}

void Transport::connect_peer(Peer& p) {
    const std::string who = "peer " + std::to_string(p.id);
    if (s_.auth != AuthMode::off && p.card.key.empty()) {
        fail_peer(p, SCTPM_EV_CANT_START, EACCES,
                  who + ": cannot open a link to it: its card has no key (a card from a hello), so this "
                        "process cannot prove that it may talk to it");
        return;
    }
    // usrsctp keeps one association per pair of endpoints: another peer's, or (simultaneous
    // connect) the one the remote just opened to us, which Endpoint::connect returns.
    AssocId assoc = peers_.live_assoc_to(p.card, p.id);
    if (!assoc) {
        try {
            assoc = ep_->connect(p.card.addresses, p.card.sctp_port, p.card.udp_port);
        } catch (const Error& e) {
            fail_peer(p, SCTPM_EV_CANT_START, EHOSTUNREACH, who + ": " + e.what());
            return;
        }
    }
    AssocEntry& a = peers_.assoc(assoc);
    if (a.ended) {
        fail_peer(p, SCTPM_EV_CANT_START, ECONNRESET, who + ": association " + std::to_string(assoc) +
                                                           " to that process is being torn down");
        return;
    }
    if (a.free_links.empty() && a.next_link >= kMaxLinks) {
        fail_peer(p, SCTPM_EV_CANT_START, EMLINK,
                  who + ": association " + std::to_string(assoc) + " already carries the " +
                      std::to_string(kMaxLinks) + " links this side can open to that process");
        return;
    }
    // A number both sides unlinked first (transport_unlink.cpp), so that numbers last.
    uint8_t number;
    if (!a.free_links.empty()) {
        number = a.free_links.back();
        a.free_links.pop_back();
    } else {
        number = static_cast<uint8_t>(a.next_link++);
    }
    const LinkKey link{true, number};
    a.links[link.incoming_byte()] = p.id;
    p.assoc = assoc;
    p.link = link.outgoing_byte();
    p.state = a.up ? Peer::State::up : Peer::State::connecting;
    queue_hello(p);
    // The hello leaves now (with the handshake, on a new association), not at the next progress
    // call: a process that sends and then stays out of the library, or dies, has introduced
    // itself, so the remote can name it (check_unproven) when the association ends.
    pump(p, 0);
}

int Transport::connect(sctpm_peer id, const std::string* hello) {
    const FlushAtEnd flush{*ep_};
    Peer* p = peers_.get(id);
    if (!p)
        return -EINVAL;
    if (hello)
        p->hello = *hello;
    if (p->state == Peer::State::idle)
        connect_peer(*p);
    if (p->state == Peer::State::failed)
        return -EHOSTUNREACH;
    if (p->queued && std::find(tx_ready_.begin(), tx_ready_.end(), id) == tx_ready_.end())
        tx_ready_.push_back(id);
    return 0;
}

int Transport::send(sctpm_peer id, const SendKey& key, const iovec* iov, int iovcnt, void* cookie, bool copy,
                    bool more) {
    const FlushAtEnd flush{*ep_};
    Peer* p = peers_.get(id);
    if (!p || iovcnt < 0 || (iovcnt > 0 && !iov))
        return -EINVAL;
    if (p->state == Peer::State::failed)
        return -ECONNRESET;
    Route r = map_.select(key);
    if (r.stream >= s_.streams || r.domain >= s_.streams)
        throw Error("stream map returned stream " + std::to_string(r.stream) + " domain " +
                    std::to_string(r.domain) + " for " + std::to_string(s_.streams) + " streams");
    if (p->state == Peer::State::idle) {
        connect_peer(*p);
        if (p->state == Peer::State::failed)
            return -EHOSTUNREACH;
    }
    if (!p->link_known)
        r.stream = 0; // behind our hello (the domain keeps the order whatever the stream)

    TxMessage m;
    m.iov.assign(iov, iov + iovcnt);
    m.header.kind = FrameKind::data;
    m.header.domain = r.domain;
    m.header.total = iov_total(m.iov);
    m.stream = r.stream;
    m.cookie = cookie;

    const bool next_batch = p->batch_cookie && cookie == p->batch_cookie;
    if (p->batch_cookie && !next_batch) {
        if (p->batch_queued) {
            // Between two batches of another message: after its last one.
            if (copy)
                own_bytes(m);
            else
                m.notify = true;
            p->deferred.push_back(std::move(m));
            return copy ? 0 : 1;
        }
        end_batch(*p); // that message's sender stopped before its last batch (an error)
    }
    if (next_batch)
        p->batch_cookie = nullptr;
    m.next_batch = next_batch;

    auto& q = p->tx_queues[r.stream];
    const size_t at = key.cls == kReply ? overtaking_point(*p, r) : q.size();
    if (at < q.size()) {
        // Ahead of whole messages nobody has seen yet: it takes the first one's number.
        m.header.seq = q[at].header.seq;
        for (size_t i = at; i < q.size(); ++i)
            ++q[i].header.seq;
        ++p->tx_seq[r.domain];
        if (copy)
            own_bytes(m);
        else
            m.notify = true;
        q.insert(q.begin() + static_cast<std::ptrdiff_t>(at), std::move(m));
        ++p->queued;
        if (at == 0)
            pump(*p, r.stream);
        if (p->state == Peer::State::failed) {
            flush_completions();
            return -ECONNRESET;
        }
        flush_completions();
        return copy ? 0 : 1; // on_sent follows even if it went at once
    }
    m.header.seq = p->tx_seq[r.domain]++;
    q.push_back(std::move(m));
    ++p->queued;
    const bool sent_now = q.size() == 1 && pump(*p, r.stream);
    if (p->state == Peer::State::failed) {
        flush_completions();
        return -ECONNRESET;
    }
    if (!sent_now && copy)
        own_bytes(q.back()); // still queued (pump only pops whole messages from the front)
    else if (!sent_now)
        q.back().notify = true;
    if (more) {
        p->batch_cookie = cookie;
        p->batch_queued = !sent_now;
    } else if (next_batch) {
        end_batch(*p);
    }
    if (p->queued && std::find(tx_ready_.begin(), tx_ready_.end(), id) == tx_ready_.end())
        tx_ready_.push_back(id);
    flush_completions();
    return sent_now || copy ? 0 : 1;
}

// Where a reply (kReply) may go in its stream's queue: before the queued messages at the tail that
// have not started, are data of its own domain, and do not continue the message before them (the
// receiver appends a further batch to the one before). Only with a built-in policy that keeps the
// domain in this one queue (single): renumbering then touches nothing sent or queued elsewhere.
size_t Transport::overtaking_point(const Peer& p, const Route& r) const {
    const auto& q = p.tx_queues[r.stream];
    if (map_.hooked() || map_.policy() != StreamPolicy::single)
        return q.size();
    size_t at = q.size();
    while (at > 0) {
        const TxMessage& m = q[at - 1];
        if (m.sent != 0 || m.header.kind != FrameKind::data || m.header.domain != r.domain || m.next_batch)
            break;
        --at;
    }
    return at;
}

void Transport::end_batch(Peer& p) {
    p.batch_cookie = nullptr;
    p.batch_queued = false;
    if (p.deferred.empty())
        return;
    do {
        TxMessage& m = p.deferred.front();
        m.header.seq = p.tx_seq[m.header.domain]++;
        p.tx_queues[m.stream].push_back(std::move(m));
        p.deferred.pop_front();
        ++p.queued;
    } while (!p.deferred.empty());
    if (std::find(tx_ready_.begin(), tx_ready_.end(), p.id) == tx_ready_.end())
        tx_ready_.push_back(p.id);
}

// Send fragments of the messages queued on one stream until the stack pushes back.
// Returns true when the queue is empty.
bool Transport::pump(Peer& p, uint16_t stream) {
    auto& q = p.tx_queues[stream];
    while (!q.empty()) {
        TxMessage& m = q.front();
        if (p.awaiting_challenge && m.header.kind != FrameKind::hello)
            return false; // nothing but the hello until the remote's challenge is answered
        do {
            const size_t len = static_cast<size_t>(std::min<uint64_t>(s_.fragment_size, m.header.total - m.sent));
            FrameHeader h = m.header;
            h.link = p.link;
            h.offset = m.sent;
            h.frag_len = static_cast<uint32_t>(len);
            h.flags = (m.sent == 0 ? kFrameFirst : 0) | (m.sent + len == m.header.total ? kFrameLast : 0);
            // Our frame header, then the payload straight from the caller's buffers: the stack
            // gathers them as it copies into its mbufs, so the payload is copied once on this side
            // of the kernel, not twice. A payload in more pieces than one send takes is gathered
            // after the header.
            encode_frame_header(h, txbuf_.data());
            iovec frag[SctpSocket::kMaxSendIov];
            frag[0] = iovec{txbuf_.data(), kFrameHeaderSize};
            int pieces = slice(m.iov, m.sent, len, frag + 1, SctpSocket::kMaxSendIov - 1);
            if (pieces < 0) {
                gather(m.iov, m.sent, len, txbuf_.data() + kFrameHeaderSize);
                frag[0].iov_len += len;
                pieces = 0;
            }
            long n = ep_->sendv(p.assoc, m.stream, frag, 1 + pieces);
            if (n == -EWOULDBLOCK) {
                ++p.stats.retries;
                return false;
            }
            if (n < 0) {
                fail_peer(p, SCTPM_EV_SEND_FAILED, static_cast<int>(-n),
                          "send to peer " + std::to_string(p.id) + " failed: " + std::strerror(static_cast<int>(-n)));
                return false;
            }
            if (static_cast<size_t>(n) != kFrameHeaderSize + len) {
                // A SEQPACKET send is all or nothing; a short count would lose the rest silently.
                fail_peer(p, SCTPM_EV_SEND_FAILED, EIO,
                          "send to peer " + std::to_string(p.id) + ": the stack took " + std::to_string(n) + " of " +
                              std::to_string(kFrameHeaderSize + len) + " bytes");
                return false;
            }
            ++p.frames_sent;
            m.sent += len;
        } while (m.sent < m.header.total);
        if (m.header.kind == FrameKind::data) {
            p.stats.tx_bytes += m.header.total;
            ++p.stats.tx_messages;
        }
        if (m.notify)
            completions_.push_back({m.cookie, 0, p.id});
        q.pop_front();
        --p.queued;
    }
    return true;
}

int Transport::write_stage() {
    int done = control_ready_.empty() ? 0 : flush_control();
    if (!unlinks_due_.empty())
        send_due_unlinks();
    for (size_t i = 0; i < tx_ready_.size();) {
        Peer* p = peers_.get(tx_ready_[i]);
        if (p && p->state == Peer::State::idle && p->queued)
            connect_peer(*p); // association ended gracefully while sends were queued
        if (p && p->state != Peer::State::failed)
            for (uint16_t s = 0; s < p->tx_queues.size(); ++s)
                if (!p->tx_queues[s].empty())
                    pump(*p, s);
        if (!p || p->queued == 0) {
            tx_ready_[i] = tx_ready_.back();
            tx_ready_.pop_back();
        } else {
            ++i;
        }
    }
    done += static_cast<int>(completions_.size());
    flush_completions();
    return done;
}

void Transport::flush_completions() {
    while (!completions_.empty()) {
        const Completion c = completions_.front();
        completions_.pop_front();
        // A batch went: its sender sends the next one from on_sent (ahead of what waits).
        Peer* p = peers_.get(c.peer);
        const bool batch = p && p->batch_queued && p->batch_cookie == c.cookie;
        if (batch)
            p->batch_queued = false;
        if (cb_.on_sent)
            cb_.on_sent(cb_.ctx, c.cookie, c.status);
        if (!batch)
            continue;
        p = peers_.get(c.peer); // on_sent may have added peers
        if (p && p->batch_cookie == c.cookie && !p->batch_queued)
            end_batch(*p); // no further batch was queued, so none is coming
    }
}

} // namespace sctpm
