// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target: the transport's receive state machine (transport_rx.cpp, transport_auth.cpp,
// reorder.hpp, frame, hello_auth) on a scripted in-memory socket (sctp_socket.hpp) instead of
// usrsctp, so that every run is deterministic.
//
// The harness plays the remote processes. The input is a header (auth on or off, the bounds
// pre_hello_bytes and reorder_bytes, fragment and head sizes, how the receiver takes its bytes)
// and then a script of operations, each one byte and its arguments (see `step`): a hello on a
// link the remote opens, the proof (right, computed with the victim's key read from its card, or
// wrong), frames of messages built by the harness (any ordering domain, sequence numbers ahead of
// their turn, any stream, cut into fragments), raw frames, notifications (association up, lost
// with an ABORT chunk's causes, restart, shutdown, cannot start, path change, SEND_FAILED),
// holding messages back and releasing them interleaved across streams, peers this side adds and
// connects (the harness then answers their hello with a challenge, right or wrong), sends, blocked
// sends, peer removal, peer release and the remote's unlink frames.
//
// Checked, besides "no crash, no sanitizer report":
//  - the channel hears of a remote-opened link (on_hello) only after a right proof on that link,
//    or, with auth off, after its hello;
//  - the transport's challenge proves the victim's key, its proof the key of the card it reached;
//    on a link it opened nothing but the hello goes out, and nothing is delivered, before the
//    remote's right challenge;
//  - on links carrying only the harness's messages: delivery per ordering domain in sequence
//    order, each message once, with the bytes that were sent, placed where the receiver said;
//  - pre_hello_bytes and reorder_bytes: the most one association / peer ever held stays within
//    its bound, and all held bytes are released once every association has ended;
//  - every association the transport aborts has an event naming it, or counts in held_stats
//    (refusals of strangers after the first are only counted), or was a peer the script removed;
//    every failure event carries a detail.
//
// Seeds: tests/fuzz/transport_rx_corpus, written by tests/fuzz/gen_transport_rx_corpus.py (a
// handshake with a message, a reordered and fragmented message, a wrong proof, data before the
// hello, a bound exceeded, an outgoing link, notifications); findings are kept there too.
#include "card.hpp"
#include "frame.hpp"
#include "hello_auth.hpp"
#include "hmac_sha256.hpp"
#include "sctp_socket.hpp"
#include "transport.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <usrsctp.h>
#include <vector>

using namespace sctpm;

namespace {

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c))                                                                                                      \
            __builtin_trap();                                                                                          \
    } while (0)

// TRANSPORT_RX_FUZZ_TRACE=1: print events, deliveries and aborts (to see what a seed reaches).
const bool trace = std::getenv("TRANSPORT_RX_FUZZ_TRACE") != nullptr;

// Reads the input front to back; zeros once it runs out.
struct In {
    const uint8_t* p;
    size_t n;
    bool empty() const { return n == 0; }
    uint8_t u8() {
        if (!n)
            return 0;
        --n;
        return *p++;
    }
    uint16_t u16() { return uint16_t(u8() << 8 | u8()); }
    uint32_t u32() { return uint32_t(u16()) << 16 | u16(); }
    std::string bytes(size_t len) {
        len = std::min(len, n);
        std::string s(reinterpret_cast<const char*>(p), len);
        p += len;
        n -= len;
        return s;
    }
};

// One SCTP message or notification waiting in the socket.
struct Item {
    bool note = false;
    AssocId assoc = 0;
    uint16_t stream = 0;
    std::string bytes;
};

struct Sent {
    AssocId assoc;
    uint16_t stream;
    std::string bytes;
};

// The socket: messages are read in pieces as usrsctp's one-to-many socket with fragment
// interleave 0 gives them (the rest of a message before anything else).
class ScriptedSocket final : public SctpSocket {
public:
    std::deque<Item> in;
    size_t offset = 0; // of in.front()
    Item current;      // the message being read (its assoc and header), for the callbacks
    std::vector<Sent> sent;
    std::vector<AssocId> aborted, shut;
    std::vector<AssocId> connected;
    bool blocked = false, refuse_connect = false;

    void push(Item it) {
        in.push_back(std::move(it));
        if (upcall_)
            upcall_(nullptr, arg_, 0); // what usrsctp's upcall does: the progress engine looks
    }

    void set_upcall(void (*fn)(struct socket*, void*, int), void* arg) override {
        upcall_ = fn;
        arg_ = arg;
    }
    AssocId connect(const std::vector<std::string>&, uint16_t, uint16_t) override {
        if (refuse_connect)
            throw Error("scripted socket: no route to the peer");
        connected.push_back(AssocId(1000 + connected.size()));
        return connected.back();
    }
    long sendv(AssocId assoc, uint16_t stream, const iovec* iov, int iovcnt) override {
        if (blocked)
            return -EWOULDBLOCK;
        if (iovcnt < 1 || iovcnt > kMaxSendIov)
            throw Error("scripted socket: a send of " + std::to_string(iovcnt) + " buffers");
        std::string bytes;
        for (int i = 0; i < iovcnt; ++i)
            bytes.append(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
        sent.push_back({assoc, stream, bytes});
        return long(bytes.size());
    }
    RecvResult recv(void* buf, size_t len) override {
        RecvResult r;
        if (in.empty()) {
            r.n = -EWOULDBLOCK;
            return r;
        }
        const Item& it = in.front();
        if (offset == 0)
            current = it;
        const size_t take = std::min(len, it.bytes.size() - offset);
        if (take)
            std::memcpy(buf, it.bytes.data() + offset, take);
        offset += take;
        r.n = long(take);
        r.notification = it.note;
        r.assoc = it.assoc;
        r.stream = it.stream;
        auto& sin = reinterpret_cast<sockaddr_in&>(r.from);
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(0x0A000000u | (it.stream & 3)); // one path per stream: per-path counters
        if (offset == it.bytes.size()) {
            r.eor = true;
            offset = 0;
            in.pop_front();
        }
        return r;
    }
    void tune_association(AssocId) override {}
    void abort(AssocId assoc, const std::string& = "") override { aborted.push_back(assoc); }
    void shutdown_assoc(AssocId assoc) override { shut.push_back(assoc); }
    std::vector<PathStatus> paths(AssocId) override { return {PathStatus{"10.0.0.2", 2, 4380, 1, 300, 1500}}; }
    AssocStatus status(AssocId) override { return AssocStatus{true, 4, 65536, 0, 0, 0}; }
    bool readable() override { return !in.empty(); }
    std::vector<std::string> local_addresses() const override { return {"10.0.0.1"}; }
    // SCTP-AUTH: the script's remotes run auth=hello or off, never packet (packet mode needs the
    // real stack's keys: tests/integration/packet_auth.cpp).
    std::optional<bool> peer_requires_data_auth(AssocId) override { return false; }
    std::optional<std::pair<uint32_t, uint32_t>> tags(AssocId) override { return std::make_pair(1u, 2u); }
    int add_auth_key(AssocId, uint16_t, const std::string&) override { return 0; }
    int activate_auth_key(AssocId, uint16_t) override { return 0; }
    int deactivate_auth_key(AssocId, uint16_t) override { return 0; }
    int delete_auth_key(AssocId, uint16_t) override { return 0; }
    int active_auth_key(AssocId) override { return 0; }

private:
    void (*upcall_)(struct socket*, void*, int) = nullptr;
    void* arg_ = nullptr;
};

using LinkId = std::pair<AssocId, uint8_t>; // an association, and the link byte the remote's frames carry

std::string frame(FrameKind kind, uint8_t link, uint8_t flags, uint16_t domain, uint32_t seq, uint64_t total,
                  uint64_t offset, const std::string& payload) {
    FrameHeader h;
    h.kind = kind;
    h.flags = flags;
    h.link = link;
    h.domain = domain;
    h.seq = seq;
    h.frag_len = uint32_t(payload.size());
    h.total = kind == FrameKind::data ? total : payload.size(); // a control frame is one whole fragment
    h.offset = offset;
    uint8_t hdr[kFrameHeaderSize];
    encode_frame_header(h, hdr);
    return std::string(reinterpret_cast<char*>(hdr), sizeof hdr) + payload;
}

// Byte i of the harness's message (link, domain, seq): a tag, then a pattern of all four.
uint8_t content(const LinkId& l, uint16_t domain, uint32_t seq, uint64_t i) {
    const uint8_t tag[6] = {uint8_t(domain >> 8), uint8_t(domain), uint8_t(seq >> 24), uint8_t(seq >> 16),
                            uint8_t(seq >> 8), uint8_t(seq)};
    if (i < 6)
        return tag[i];
    return uint8_t(i * 13 + seq * 131 + domain * 7 + l.second + l.first * 3);
}

// A link the remote opened (its hello and proof) or this side opened (its hello, our challenge).
struct Link {
    std::string nonce_o, nonce_a, blob; // this side's link: its hello's nonce and blob, our nonce
    // Remote-opened: the hellos the harness said (the association id may come back after it
    // ended, and a second hello is an error the victim must catch), and those whose right proof
    // went out (auth) or that were said (auth off).
    std::vector<std::string> said;
    std::set<std::string> proved;
    bool challenged = false; // this side's: the harness's right challenge went out
};

// The harness's messages on one link: per domain the next seq and those sent ahead of it.
struct Sender {
    std::map<uint16_t, uint32_t> next;
    std::map<uint16_t, std::set<uint32_t>> ahead;
    std::map<std::pair<uint16_t, uint32_t>, uint64_t> totals; // sent, not yet delivered
    uint32_t take(uint16_t d, uint32_t delta) {
        const uint32_t seq = next[d] + delta;
        if (delta == 0) {
            ++next[d];
            while (ahead[d].erase(next[d]))
                ++next[d];
        } else {
            ahead[d].insert(seq);
        }
        return seq;
    }
};

// A message the receiver takes: where its bytes went, checked at the end if its link is clean.
struct RxMsg {
    bool checked = false;
    LinkId link{};
    uint16_t domain = 0;
    uint32_t seq = 0;
    uint64_t total = 0, placed = 0;
    std::string buf; // checked: the whole message; else the last on_dest's room
    bool done = false;
};

struct Harness {
    Settings s;
    ScriptedSocket* sock = nullptr;
    std::unique_ptr<Transport> t;
    std::string victim_key;
    const std::string remote_key = std::string(kAuthKeyBytes, '\x5a'); // in the cards we add
    uint64_t pre_limit = 0;
    uint8_t consume = 0, piece = 0;
    bool stingy = false;

    std::map<LinkId, Link> links;
    std::map<LinkId, Sender> senders;
    std::set<LinkId> tainted;                 // raw frames went there: no order/content checks
    std::map<sctpm_peer, std::set<LinkId>> peer_links; // from on_hello and our connects
    std::map<std::pair<LinkId, uint16_t>, uint32_t> expect; // next seq to be delivered
    std::vector<std::unique_ptr<RxMsg>> msgs;
    std::set<AssocId> used;                   // incoming associations seen (COMM_UP given)
    std::vector<sctpm_event> events;
    bool removed_now = false;                 // this operation removed a peer (its abort is the script's)
    uint64_t counted = 0;                     // refusals only counted whose abort is still to be seen
    size_t aborts_seen = 0, sent_seen = 0;
    bool hold = false;
    std::vector<Item> held;
    std::vector<sctpm_peer> added; // peers this side added (connect, send, remove)

    // ---- callbacks (the channel) ----
    static Harness& of(void* ctx) { return *static_cast<Harness*>(ctx); }

    static sctpm_peer on_hello(void* ctx, const void* hello, size_t len, const char* card) {
        Harness& h = of(ctx);
        const Item& cur = h.sock->current;
        CHECK(!cur.note && cur.bytes.size() >= kFrameHeaderSize);
        const LinkId id{cur.assoc, uint8_t(cur.bytes[5])};
        auto it = h.links.find(id);
        const std::string blob(static_cast<const char*>(hello), len);
        if (h.s.auth == AuthMode::hello) // never before a right proof (raw bytes cannot make one)
            CHECK(it != h.links.end() && it->second.proved.count(blob));
        else if (it != h.links.end() && !h.tainted.count(id))
            CHECK(it->second.proved.count(blob));
        const uint8_t b = len ? static_cast<const uint8_t*>(hello)[len - 1] : 0;
        sctpm_peer p = -1;
        if (b % 4 == 1 || (b % 4 == 2 && h.added.empty())) {
            try {
                p = h.t->add_peer(card);
            } catch (const Error&) {
                return -1;
            }
        } else if (b % 4 == 2) {
            p = h.added[(b / 4) % h.added.size()];
        } else if (b % 4 == 3) {
            p = 4242; // names no peer
        }
        h.bind(p, id);
        return p;
    }

    // An association ended with hellos unproven: the answer, by the blob's last byte, is no peer,
    // a peer this side added (the transport then connects it if idle: connect_peer from inside
    // end_assoc, while the receive path may be half-way through a message), or an id of no peer.
    static sctpm_peer on_unproven_end(void* ctx, const void* hello, size_t len) {
        Harness& h = of(ctx);
        const uint8_t b = len ? static_cast<const uint8_t*>(hello)[len - 1] : 0;
        if (b % 3 == 1 && !h.added.empty())
            return h.added[(b / 3) % h.added.size()];
        return b % 3 == 2 ? 4242 : -1;
    }

    void bind(sctpm_peer p, const LinkId& id) {
        if (p < 0 || p == 4242)
            return;
        auto& ls = peer_links[p];
        ls.insert(id);
        if (ls.size() > 1) // one peer on two links: two senders' sequences meet, not checked
            for (auto& l : ls)
                tainted.insert(l);
    }

    // The clean link a peer's messages come from, if there is exactly one.
    const LinkId* clean_link(sctpm_peer p) const {
        auto it = peer_links.find(p);
        if (it == peer_links.end() || it->second.size() != 1 || tainted.count(*it->second.begin()))
            return nullptr;
        return &*it->second.begin();
    }

    static size_t on_message(void* ctx, sctpm_peer peer, uint64_t total, const void* head, size_t head_len,
                             void** handle) {
        Harness& h = of(ctx);
        if (trace)
            std::fprintf(stderr, "on_message peer %d, %llu bytes\n", peer, (unsigned long long)total);
        // A message on a link this side opened: only once the remote proved its key (challenge).
        const Item& cur = h.sock->current;
        if (h.s.auth == AuthMode::hello && !cur.note && cur.bytes.size() >= kFrameHeaderSize &&
            (uint8_t(cur.bytes[5]) & kLinkOpenedByReceiver)) {
            auto it = h.links.find({cur.assoc, uint8_t(cur.bytes[5])});
            CHECK(it != h.links.end() && it->second.challenged);
        }
        // The frame being read is on the link the message came from (held ones came earlier on the
        // same peer's link): a peer seen on two links is not checked (our hello may still wait).
        if (!cur.note && cur.bytes.size() >= kFrameHeaderSize)
            h.bind(peer, {cur.assoc, uint8_t(cur.bytes[5])});
        auto m = std::make_unique<RxMsg>();
        m->total = total;
        const auto* hb = static_cast<const uint8_t*>(head);
        CHECK(head_len <= total);
        if (const LinkId* l = h.clean_link(peer)) {
            CHECK(head_len >= std::min<uint64_t>(6, total)); // the first fragment's bytes at least
            CHECK(total >= 6);
            m->checked = true;
            m->link = *l;
            m->domain = uint16_t(hb[0] << 8 | hb[1]);
            m->seq = uint32_t(hb[2]) << 24 | uint32_t(hb[3]) << 16 | uint32_t(hb[4]) << 8 | hb[5];
            uint32_t& next = h.expect[{*l, m->domain}];
            CHECK(m->seq == next); // in order, once
            ++next;
            auto& totals = h.senders[*l].totals;
            auto st = totals.find({m->domain, m->seq});
            CHECK(st != totals.end() && st->second == total);
            totals.erase(st);
            m->buf.assign(size_t(total), '\0');
        }
        const size_t used = std::min<size_t>(head_len, h.consume == 0xFF ? head_len : h.consume);
        if (m->checked)
            std::memcpy(m->buf.data(), hb, used);
        m->placed = used;
        if (used == total) {
            m->done = true;
            h.verify(*m);
            return used;
        }
        *handle = m.get();
        h.msgs.push_back(std::move(m));
        return used;
    }

    static int on_dest(void* ctx, void* handle, iovec* iov, int max) {
        Harness& h = of(ctx);
        auto* m = static_cast<RxMsg*>(handle);
        CHECK(!m->done && m->placed < m->total);
        if (h.stingy)
            return 0;
        const uint64_t left = m->total - m->placed;
        const size_t piece = h.piece ? h.piece : 4096;
        int n = 0;
        uint64_t at = m->placed;
        if (!m->checked)
            m->buf.assign(std::min<uint64_t>(left, uint64_t(piece) * 3), '\0');
        char* base = m->checked ? m->buf.data() + at : m->buf.data();
        for (uint64_t given = 0; n < std::min(max, 3) && given < left; ++n) {
            const size_t k = size_t(std::min<uint64_t>(piece, left - given));
            if (!m->checked && given + k > m->buf.size())
                break;
            iov[n] = {base + given, k};
            given += k;
        }
        return n;
    }

    static void on_placed(void* ctx, void* handle, size_t filled, int last) {
        Harness& h = of(ctx);
        auto* m = static_cast<RxMsg*>(handle);
        CHECK(!m->done);
        m->placed += filled;
        CHECK(m->placed <= m->total);
        CHECK(bool(last) == (m->placed == m->total));
        if (last) {
            m->done = true;
            h.verify(*m);
        }
    }

    void verify(const RxMsg& m) {
        if (trace)
            std::fprintf(stderr, "delivered %llu bytes%s (domain %u seq %u)\n", (unsigned long long)m.total,
                         m.checked ? ", checked" : "", m.domain, m.seq);
        if (!m.checked)
            return;
        for (uint64_t i = 0; i < m.total; ++i)
            CHECK(uint8_t(m.buf[size_t(i)]) == content(m.link, m.domain, m.seq, i));
    }

    static void on_sent(void*, void*, int) {}

    static void on_event(void* ctx, const sctpm_event* ev) {
        Harness& h = of(ctx);
        if (ev->type != SCTPM_EV_ASSOC_UP && ev->type != SCTPM_EV_PATH_CHANGE && ev->type != SCTPM_EV_SHUTDOWN)
            CHECK(ev->detail[0] != '\0');
        CHECK(std::memchr(ev->detail, 0, sizeof ev->detail));
        if (trace)
            std::fprintf(stderr, "event %d peer %d assoc %u: %s\n", int(ev->type), ev->peer, ev->assoc_id, ev->detail);
        h.events.push_back(*ev);
    }

    // ---- the remote's moves ----
    AssocId pick_assoc(uint8_t b) {
        const size_t n = 3 + sock->connected.size();
        const size_t i = b % n;
        return i < 3 ? AssocId(i + 1) : sock->connected[i - 3];
    }

    void push(AssocId assoc, uint16_t stream, std::string bytes) {
        if (assoc <= 3 && used.insert(assoc).second)
            sock->push(notification_assoc(assoc, SCTP_COMM_UP, 0, {}));
        Item it{false, assoc, stream, std::move(bytes)};
        if (hold)
            held.push_back(std::move(it));
        else
            sock->push(std::move(it));
    }

    static Item notification_assoc(AssocId assoc, uint16_t state, uint16_t error, const std::string& info) {
        std::string b(sizeof(sctp_assoc_change) + info.size(), '\0');
        sctp_assoc_change c{};
        c.sac_type = SCTP_ASSOC_CHANGE;
        c.sac_length = uint32_t(b.size());
        c.sac_state = state;
        c.sac_error = error;
        c.sac_outbound_streams = c.sac_inbound_streams = 4;
        c.sac_assoc_id = assoc;
        std::memcpy(b.data(), &c, sizeof c);
        std::memcpy(b.data() + sizeof c, info.data(), info.size());
        return Item{true, assoc, 0, b};
    }

    void hello(In& in) {
        const AssocId a = pick_assoc(in.u8());
        const uint8_t n = in.u8() & 0x7F;
        const uint8_t who = in.u8();
        if (trace)
            std::fprintf(stderr, "hello on association %u link %d\n", a, n);
        Link& l = links[{a, n}];
        l.nonce_o = std::string(kNonceBytes, char(n + 1));
        const std::string blob = "rank" + std::string(1, char(who));
        const std::string card = format_card(Card{9, 9, {"10.0.0." + std::to_string(2 + who % 8)}, {}});
        l.said.push_back(blob);
        if (s.auth == AuthMode::off)
            l.proved.insert(blob);
        push(a, 0, frame(FrameKind::hello, n, kFrameFirst | kFrameLast, 0, 0, 0, 0, format_hello({l.nonce_o, blob, card})));
    }

    // The victim's challenge on a link the remote opened, checked; then the proof (right or not).
    void proof(In& in) {
        const AssocId a = pick_assoc(in.u8());
        const uint8_t n = in.u8() & 0x7F;
        const bool right = !(in.u8() & 1);
        Link& l = links[{a, n}];
        // The victim's latest challenge on the link, and the hello of ours it answers.
        std::string nonce_a(kNonceBytes, '\0'), blob = l.said.empty() ? "" : l.said.back();
        bool found = false;
        for (const Sent& m : sock->sent)
            if (m.assoc == a && m.bytes.size() == kFrameHeaderSize + kChallengeBytes && m.bytes[3] == 2 &&
                uint8_t(m.bytes[5]) == uint8_t(n | kLinkOpenedByReceiver))
                for (const std::string& b : l.said) {
                    const std::string na = m.bytes.substr(kFrameHeaderSize, kNonceBytes);
                    const Digest c = link_mac(AuthRole::acceptor, victim_key, l.nonce_o, na, b);
                    if (std::memcmp(c.data(), m.bytes.data() + kFrameHeaderSize + kNonceBytes, kMacBytes) == 0) {
                        nonce_a = na;
                        blob = b;
                        found = true;
                    }
                }
        const Digest mac = link_mac(AuthRole::opener, victim_key, l.nonce_o, nonce_a, blob);
        std::string p(reinterpret_cast<const char*>(mac.data()), mac.size());
        if (!right)
            p[0] ^= 1;
        else if (found)
            l.proved.insert(blob); // right only for a challenge the victim sent
        push(a, 0, frame(FrameKind::proof, n, kFrameFirst | kFrameLast, 0, 0, 0, 0, p));
    }

    // The harness's message on a link: tagged content, cut into fragments on one stream.
    void data(In& in) {
        const AssocId a = pick_assoc(in.u8());
        const uint8_t link = in.u8();
        const uint16_t domain = in.u8() % 4;
        const uint32_t delta = in.u8() % 4;
        const uint16_t stream = in.u8() % 6;
        const uint64_t total = 6 + in.u16() % 3000;
        const size_t frag = 8 + in.u8() * 8;
        const LinkId id{a, link};
        Sender& snd = senders[id];
        const uint32_t seq = snd.take(domain, delta);
        if (!snd.totals.emplace(std::pair{domain, seq}, total).second)
            tainted.insert(id); // the harness sent this seq before: which copy arrives is not ours to say
        if (trace)
            std::fprintf(stderr, "data on association %u link %d: domain %u seq %u, %llu bytes, stream %u\n", a, link,
                         domain, seq, (unsigned long long)total, stream);
        std::string body(size_t(total), '\0');
        for (uint64_t i = 0; i < total; ++i)
            body[size_t(i)] = char(content(id, domain, seq, i));
        for (uint64_t off = 0; off < total; off += frag) {
            const size_t k = size_t(std::min<uint64_t>(frag, total - off));
            const uint8_t flags = uint8_t((off == 0 ? kFrameFirst : 0) | (off + k == total ? kFrameLast : 0));
            push(a, stream, frame(FrameKind::data, link, flags, domain, seq, total, off, body.substr(size_t(off), k)));
        }
    }

    void raw(In& in) {
        const AssocId a = pick_assoc(in.u8());
        const uint16_t stream = in.u8() % 6;
        std::string b = in.bytes(in.u16() % 5000);
        if (b.size() > 5)
            tainted.insert({a, uint8_t(b[5])});
        for (auto& [id, l] : links) // raw bytes may take any link's place: none is checked after
            if (id.first == a)
                tainted.insert(id);
        for (auto& [id, snd] : senders)
            if (id.first == a)
                tainted.insert(id);
        push(a, stream, std::move(b));
    }

    void note(In& in) {
        const uint8_t k = in.u8();
        const AssocId a = pick_assoc(in.u8());
        const uint16_t err = in.u16();
        Item it;
        if (trace)
            std::fprintf(stderr, "notification %d on association %u\n", k % 7, a);
        switch (k % 7) {
        case 0: it = notification_assoc(a, SCTP_COMM_UP, 0, {}); break;
        case 1: it = notification_assoc(a, SCTP_COMM_LOST, err, in.bytes(in.u8())); break; // an ABORT chunk
        case 2: it = notification_assoc(a, SCTP_RESTART, 0, {}); break;
        case 3: it = notification_assoc(a, SCTP_SHUTDOWN_COMP, 0, {}); break;
        case 4: it = notification_assoc(a, SCTP_CANT_STR_ASSOC, err, {}); break;
        case 5: {
            sctp_paddr_change c{};
            c.spc_type = SCTP_PEER_ADDR_CHANGE;
            c.spc_length = sizeof c;
            auto& sin = reinterpret_cast<sockaddr_in&>(c.spc_aaddr);
            sin.sin_family = AF_INET;
            sin.sin_addr.s_addr = htonl(0x0A000002u);
            c.spc_state = in.u8() % 9;
            c.spc_error = err;
            c.spc_assoc_id = a;
            it = Item{true, a, 0, std::string(reinterpret_cast<char*>(&c), sizeof c)};
            break;
        }
        default: {
            const std::string undelivered = in.bytes(in.u8());
            std::string b(sizeof(sctp_send_failed_event) + undelivered.size(), '\0');
            sctp_send_failed_event f{};
            f.ssfe_type = SCTP_SEND_FAILED_EVENT;
            f.ssfe_length = uint32_t(b.size());
            f.ssfe_error = err;
            f.ssfe_assoc_id = a;
            std::memcpy(b.data(), &f, sizeof f);
            std::memcpy(b.data() + sizeof f, undelivered.data(), undelivered.size());
            it = Item{true, a, 0, b};
            break;
        }
        }
        if (hold)
            held.push_back(std::move(it));
        else
            sock->push(std::move(it));
    }

    // Held messages go out interleaved across (association, stream), each one's order kept (SCTP
    // orders a stream; notifications keep their place among their association's messages).
    void release(uint8_t seed) {
        std::map<std::pair<AssocId, int>, std::deque<Item>> q;
        for (auto& it : held)
            q[{it.assoc, it.note ? -1 : it.stream}].push_back(std::move(it));
        held.clear();
        std::mt19937 rng(seed);
        while (!q.empty()) {
            auto it = q.begin();
            std::advance(it, rng() % q.size());
            sock->push(std::move(it->second.front()));
            it->second.pop_front();
            if (it->second.empty())
                q.erase(it);
        }
    }

    // This side adds a peer (a card with a key we know) and connects: its hello goes out.
    void connect(In& in) {
        const uint8_t k = in.u8();
        if (added.size() >= 8)
            return;
        Card c{9, 9, {"10.0.0." + std::to_string(2 + k % 8)}, k & 0x40 ? std::string() : remote_key};
        const sctpm_peer p = t->add_peer(format_card(c));
        added.push_back(p);
        sock->refuse_connect = k & 0x80;
        const std::string blob = "mine" + std::to_string(p); // names the peer in its hello
        t->connect(p, &blob);
        sock->refuse_connect = false;
    }

    // Our answer to the hello of a link this side opened: the challenge, right or wrong.
    void challenge(In& in) {
        const uint8_t k = in.u8();
        for (const Sent& m : sock->sent) {
            if (m.bytes.size() < kFrameHeaderSize || m.bytes[3] != 1)
                continue; // not a hello
            if (k & 0x40 && &m != &sock->sent.back())
                continue;
            const uint8_t n = uint8_t(m.bytes[5]);
            auto hp = parse_hello(reinterpret_cast<const uint8_t*>(m.bytes.data()) + kFrameHeaderSize,
                                  m.bytes.size() - kFrameHeaderSize);
            CHECK(hp && n < kMaxLinks);
            const LinkId id{m.assoc, uint8_t(n | kLinkOpenedByReceiver)};
            if (auto done = links.find(id); done != links.end() && done->second.challenged)
                continue; // answered rightly already: its nonces are what the victim's proof covers
            Link& l = links[id];
            l.nonce_o = hp->nonce;
            l.blob = hp->blob;
            l.nonce_a = std::string(kNonceBytes, char(k));
            const Digest mac = link_mac(AuthRole::acceptor, remote_key, l.nonce_o, l.nonce_a, l.blob);
            std::string c = l.nonce_a + std::string(reinterpret_cast<const char*>(mac.data()), mac.size());
            if (k & 1)
                c[kNonceBytes] ^= 1;
            else
                l.challenged = true;
            push(m.assoc, 0, frame(FrameKind::challenge, id.second, kFrameFirst | kFrameLast, 0, 0, 0, 0, c));
            break;
        }
    }

    // The remote gives a link back (transport_unlink.cpp): any link, any association.
    void unlink(In& in) {
        const AssocId a = pick_assoc(in.u8());
        push(a, 0, frame(FrameKind::unlink, in.u8(), kFrameFirst | kFrameLast, 0, 0, 0, 0, {}));
    }

    void send(In& in) {
        if (added.empty())
            return;
        const sctpm_peer p = added[in.u8() % added.size()];
        std::string b = in.bytes(in.u8());
        iovec v{b.data(), b.size()};
        t->send(p, SendKey{0, 0, 0}, &v, 1, nullptr, true);
    }

    void step(In& in) {
        switch (in.u8() % 16) {
        case 0: hello(in); break;
        case 1: proof(in); break;
        case 2: data(in); break;
        case 3: raw(in); break;
        case 4: note(in); break;
        case 5: hold = !hold; break;
        case 6: release(in.u8()); break;
        case 7: connect(in); break;
        case 8: challenge(in); break;
        case 9: send(in); break;
        case 10: sock->blocked = !sock->blocked; break;
        case 11:
            if (!added.empty()) {
                t->remove_peer(added[in.u8() % added.size()]);
                removed_now = true; // its association's abort is the script's
            }
            break;
        case 12: stingy = !stingy; break;
        case 13: consume = in.u8(); break;
        case 14: t->release_peer(sctpm_peer(in.u8() % 64)); break; // any peer: added or a remote's link
        case 15: unlink(in); break;
        }
    }

    // ---- after every operation ----
    void settle() {
        const sctpm_held_stats before = t->held_stats();
        // Only while there is work: an idle progress(0) yields the CPU, which a fuzzer cannot afford.
        for (int i = 0; i < 64 && (!sock->in.empty() || (t->sends_pending() && !sock->blocked)); ++i)
            if (t->progress(0) == 0)
                break;
        const sctpm_held_stats h = t->held_stats();
        CHECK(h.pre_hello_peak <= pre_limit);
        CHECK(h.reorder_peak <= s.reorder_bytes);
        // Every abort names its reason: an event about it, or a counted refusal, or the script's.
        // A counted refusal aborts once, maybe later (after the half-read message): a credit.
        counted += h.bound_aborts + h.auth_failures - before.bound_aborts - before.auth_failures;
        for (; aborts_seen < sock->aborted.size(); ++aborts_seen) {
            const AssocId a = sock->aborted[aborts_seen];
            if (trace)
                std::fprintf(stderr, "abort of association %u\n", a);
            bool named = removed_now;
            for (size_t i = 0; i < events.size() && !named; ++i) // now, or when it first ended
                named = events[i].assoc_id == a || std::strstr(events[i].detail, ("association " + std::to_string(a)).c_str());
            if (!named) {
                CHECK(counted > 0);
                --counted;
            }
        }
        removed_now = false;
        check_sent();
    }

    // What this side sent: its challenges prove its key; on a link it opened, nothing but the
    // hello (and then the proof) before the remote's right challenge.
    void check_sent() {
        for (; sent_seen < sock->sent.size(); ++sent_seen) {
            const Sent& m = sock->sent[sent_seen];
            std::string why;
            FrameLimits lim;
            auto hdr = decode_frame_header(reinterpret_cast<const uint8_t*>(m.bytes.data()), m.bytes.size(), lim, &why);
            CHECK(hdr);
            const std::string payload = m.bytes.substr(kFrameHeaderSize);
            if (trace)
                std::fprintf(stderr, "sent kind %d link %d on association %u, %zu bytes\n", int(hdr->kind), hdr->link,
                             m.assoc, payload.size());
            if (hdr->kind == FrameKind::hello) { // a link this side opens: its peer is in the blob
                auto hp = parse_hello(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
                CHECK(hp && hp->blob.rfind("mine", 0) == 0 && !(hdr->link & kLinkOpenedByReceiver));
                bind(std::stoi(hp->blob.substr(4)), {m.assoc, uint8_t(hdr->link | kLinkOpenedByReceiver)});
            }
            if (hdr->kind == FrameKind::challenge) {
                const LinkId id{m.assoc, uint8_t(hdr->link ^ kLinkOpenedByReceiver)};
                auto it = links.find(id);
                if (it == links.end() || it->second.said.empty() || tainted.count(id))
                    continue; // a raw hello's
                CHECK(payload.size() == kChallengeBytes);
                bool proves = false; // the victim's key, over one of our hellos on the link
                for (const std::string& b : it->second.said) {
                    const Digest want =
                        link_mac(AuthRole::acceptor, victim_key, it->second.nonce_o, payload.substr(0, kNonceBytes), b);
                    proves |= std::memcmp(want.data(), payload.data() + kNonceBytes, kMacBytes) == 0;
                }
                CHECK(proves);
            }
            if (s.auth == AuthMode::hello && !(hdr->link & kLinkOpenedByReceiver) && hdr->kind != FrameKind::hello) {
                auto it = links.find({m.assoc, uint8_t(hdr->link | kLinkOpenedByReceiver)});
                CHECK(it != links.end() && it->second.challenged); // only after a right challenge
                if (hdr->kind == FrameKind::proof) {
                    const Digest want = link_mac(AuthRole::opener, remote_key, it->second.nonce_o, it->second.nonce_a,
                                                 it->second.blob);
                    CHECK(payload.size() == kProofBytes && std::memcmp(want.data(), payload.data(), kMacBytes) == 0);
                }
            }
        }
    }

    // Every association ends; every peer this side added is removed: nothing may stay held.
    void finish() {
        hold = false;
        held.clear();
        std::set<AssocId> all(used.begin(), used.end());
        all.insert(sock->connected.begin(), sock->connected.end());
        for (AssocId a : all)
            sock->push(notification_assoc(a, SCTP_COMM_LOST, 0, {}));
        settle();
        CHECK(sock->in.empty());
        for (sctpm_peer p = 0; p < 64; ++p)
            t->remove_peer(p);
        const sctpm_held_stats h = t->held_stats();
        CHECK(h.pre_hello_bytes == 0 && h.reorder_bytes == 0);
    }
};

} // namespace

// Every Transport keeps its upcall target for ever (transport.cpp says why), so each input ends
// with one malloc more than its frees, and libFuzzer then scans the heap for leaks after every
// new input: seven times slower. Leak checking is off by default here (a later -detect_leaks=1
// wins); the ASan step's transport tests check for leaks.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    static std::vector<char*> args;
    static char off[] = "-detect_leaks=0";
    args.assign(*argv, *argv + *argc);
    args.insert(args.begin() + (*argc > 0 ? 1 : 0), off);
    args.push_back(nullptr);
    *argc = int(args.size() - 1);
    *argv = args.data();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    In in{data, size};
    Harness h;
    const uint8_t b0 = in.u8(), b1 = in.u8();
    static constexpr uint64_t pre[] = {0, 300, 1200, 6000};
    static constexpr uint64_t reorder[] = {64ull << 20, 700, 3000, 20000};
    static constexpr uint32_t frag[] = {64, 256, 1024, 4096};
    static constexpr uint32_t head[] = {16, 64, 512, 4096};
    h.s.auth = b0 & 1 ? AuthMode::off : AuthMode::hello;
    h.s.pre_hello_bytes = pre[b0 >> 1 & 3];
    h.s.reorder_bytes = reorder[b0 >> 3 & 3];
    h.s.fragment_size = frag[b0 >> 5 & 3];
    h.s.head_bytes = head[b1 & 3];
    h.s.streams = 4;
    h.s.max_message = 1 << 20;
    h.s.caller_input = false;
    h.s.spin_us = 0;
    h.pre_limit = h.s.pre_hello_bytes ? h.s.pre_hello_bytes : uint64_t{h.s.fragment_size} + kFrameHeaderSize + kHeldItemOverhead;
    h.consume = b1 >> 2 & 1 ? 0xFF : uint8_t(b1 >> 3 & 7);
    h.piece = uint8_t((b1 >> 6) * 37);
    sctpm_callbacks cb{};
    cb.ctx = &h;
    cb.on_message = Harness::on_message;
    cb.on_dest = Harness::on_dest;
    cb.on_placed = Harness::on_placed;
    cb.on_sent = Harness::on_sent;
    cb.on_event = Harness::on_event;
    cb.on_hello = Harness::on_hello;
    cb.on_unproven_end = Harness::on_unproven_end;
    auto sock = std::make_unique<ScriptedSocket>();
    h.sock = sock.get();
    h.t = std::make_unique<Transport>(h.s, std::move(sock), 5000, "victim", cb);
    h.victim_key = parse_card(h.t->card()).key;
    for (int ops = 0; !in.empty() && ops < 300; ++ops) {
        h.step(in);
        h.settle();
    }
    h.finish();
    return 0;
}
