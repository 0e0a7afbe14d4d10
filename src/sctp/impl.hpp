// SPDX-License-Identifier: BSD-3-Clause
// The engine's internal state: Endpoint::Impl (associations, lookups, timers, queues) and one
// association's TCB. Shared by the engine's sources (one file per job: handshake.cpp,
// data_rx.cpp, data_tx.cpp, output.cpp, shutdown.cpp, endpoint.cpp); not part of the API.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "sctp/cookie.hpp"
#include "sctp/engine.hpp"
#include "sctp/ring.hpp"
#include "sctp/wire.hpp"

namespace sctpm::sctp {

constexpr Time kNever = INT64_MAX;

// TSN and SSN comparisons in serial-number arithmetic (RFC 9260 §1.6).
inline bool tsn_lt(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }
inline bool tsn_le(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) <= 0; }
inline bool tsn_gt(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0; }
inline bool tsn_ge(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) >= 0; }

using Buf = std::vector<uint8_t>;

// Recycled byte buffers: messages and held chunks take one and give it back, so steady traffic
// does not allocate. Small and large buffers are kept apart so a 1-byte message does not pin a
// 1 MiB buffer; what is kept is bounded (at most 2 MiB of small ones, 32 MiB of large ones,
// none above 4 MiB), the rest is freed.
class BufPool {
public:
    Buf get(size_t want) {
        auto& list = want > kSmall ? large_ : small_;
        if (list.empty()) {
            Buf b;
            b.reserve(want > kSmall ? want : kSmall);
            return b;
        }
        Buf b = std::move(list.back());
        list.pop_back();
        if (b.capacity() > kSmall)
            large_bytes_ -= b.capacity();
        b.clear();
        return b;
    }
    void put(Buf&& b) {
        size_t cap = b.capacity();
        if (cap > kSmall) {
            if (cap <= kMaxLarge && large_bytes_ + cap <= kKeepLargeBytes) {
                large_bytes_ += cap;
                large_.push_back(std::move(b));
            }
        } else if (cap > 0 && small_.size() < kKeepSmall) {
            small_.push_back(std::move(b));
        }
        b = Buf();
    }

private:
    static constexpr size_t kSmall = 2048;
    static constexpr size_t kKeepSmall = 1024;
    static constexpr size_t kMaxLarge = 4u << 20;
    static constexpr size_t kKeepLargeBytes = 32u << 20;
    std::vector<Buf> small_;
    std::vector<Buf> large_;
    size_t large_bytes_ = 0;
};

// Messages up to this size live inside their queue entries (no buffer to take and give back).
constexpr size_t kSmallMsg = 64;

// A message accepted by send(): chunked lazily as packets are built.
struct OutMsg {
    Buf data;                 // when size > kSmallMsg
    uint8_t small[kSmallMsg]; // when size <= kSmallMsg
    uint32_t size = 0;
    const uint8_t* bytes() const { return size <= kSmallMsg ? small : data.data(); }
    uint32_t ppid = 0;
    uint16_t stream = 0;
    uint16_t ssn = 0;
    bool unordered = false;
    uint32_t chunked = 0; // bytes already put into chunks (TSNs assigned)
    uint32_t refs = 0;    // chunks made and not yet cumulatively acknowledged
};

enum class ChunkState : uint8_t { in_flight, acked, rtx };

// One DATA chunk sent and not yet cumulatively acknowledged (its bytes stay in its message).
struct TxChunk {
    uint32_t msg = 0;    // index in Assoc::msgs
    uint32_t offset = 0; // of its payload in the message
    uint16_t len = 0;
    uint8_t flags = 0;   // B/E/U
    ChunkState state = ChunkState::in_flight;
    uint8_t misses = 0;  // miss indications (§7.2.4)
    bool fast_rtx_done = false;
    bool retransmitted = false;
    bool fast_rtx = false; // marked by fast retransmit (may go out ignoring cwnd, once)
    uint8_t path = 0;      // index in Assoc::paths of the path it was last sent on
};

// One received DATA chunk held above the cumulative TSN (out of order).
struct RxSlot {
    Buf data;
    uint32_t ppid = 0;
    uint16_t stream = 0;
    uint16_t ssn = 0;
    uint8_t flags = 0;
    bool present = false;
    bool delivered = false; // its message went out ahead of the cumulative TSN (data moved)
};

// A queued event (what poll_event() hands out).
struct PendingEvent {
    EventType type = EventType::data;
    AssocId assoc = kNoAssoc;
    uint16_t stream = 0;
    uint32_t ppid = 0;
    bool unordered = false;
    Buf data;                     // the message, unless small
    uint32_t small_len = 0;       // a message of up to kSmallMsg bytes is in `small` instead
    bool is_small = false;
    uint8_t small[kSmallMsg];
    Address peer;
    uint16_t outbound_streams = 0, inbound_streams = 0;
    std::optional<uint32_t> peer_adaptation; // assoc_up / assoc_restart
    std::string reason;
    std::vector<uint8_t> abort_chunk; // assoc_lost / cant_start by the peer's ABORT
    Address path;                     // path_change: its address; data: where the last chunk came from
    PathState path_state = PathState::active;
};

// A whole packet made outside an association's output (stateless INIT-ACK, ABORT, HEARTBEAT-ACK,
// ERROR, SHUTDOWN-COMPLETE): sent first by poll_transmit(), at most kMaxRaw queued.
struct RawPacket {
    Address to, from;
    Buf bytes;
};
constexpr size_t kMaxRaw = 256;

// At most this many paths per association (addresses beyond it are ignored); Assoc::paths never
// grows past it, so pointers to its elements stay valid.
constexpr size_t kMaxPaths = 8;

// One destination transport address of the peer (RFC 9260 §8.2, §8.3, §7.2: RTO and congestion
// control are per destination).
struct Path {
    Address addr;  // the peer's IP and UDP port
    Address local; // our address the peer's packets on this path arrive at (AF_UNSPEC: any)
    uint8_t index = 0; // in Assoc::paths
    PathState state = PathState::active;
    uint32_t errors = 0;      // consecutive timeouts (T3 of data sent here, unanswered heartbeats)
    Time rto = 0, srtt = 0, rttvar = 0;
    uint32_t cwnd = 0, ssthresh = 0, pba = 0;
    uint32_t flight = 0;      // bytes in flight last sent here (cwnd limits it)
    bool fast_recovery = false; // CMT: fast recovery is per path (else the association's)
    uint32_t recovery_exit = 0;
    Time last_sent = 0;       // data or a heartbeat last went here (the idle test)
    Time t_hb = kNever;       // next heartbeat, or the outstanding one's RTO expiry
    bool hb_out = false;      // a heartbeat is outstanding
    uint64_t hb_nonce = 0;
};

struct Assoc {
    AssocId id = kNoAssoc;
    uint32_t slot = 0;
    AssocState state = AssocState::cookie_wait;
    bool was_up = false; // reached ESTABLISHED (decides cant_start vs assoc_lost)
    bool dead = false;   // removed while a packet was being processed

    uint32_t local_tag = 0, peer_tag = 0;
    uint16_t peer_port = 0;
    std::optional<uint32_t> peer_adaptation; // its INIT's or INIT-ACK's Adaptation Layer Indication
    // Paths: cur is where data and control chunks go (the primary unless it failed); kept as a
    // pointer so the per-packet path needs no lookup.
    std::vector<Path> paths; // reserved to kMaxPaths
    Path* cur = nullptr;
    Path* tx = nullptr;      // where the burst being built goes: cur, or with CMT the path chosen for it
    uint8_t next_rr = 0;     // CMT: the path the next burst of new data tries first
    Path* reply = nullptr;   // where the last DATA came from: SACK-only packets go there (§6.4)
    uint32_t primary = 0;
    Time t_hb = kNever;      // the earliest Path::t_hb
    uint16_t os = 0, is = 0; // negotiated outbound / inbound streams
    uint32_t mtu = 0;

    // Handshake (§5.1): INIT / COOKIE-ECHO retransmitted on T1.
    Time t1 = kNever;
    uint32_t init_tries = 0;
    bool init_due = false, cookie_echo_due = false, cookie_ack_due = false;
    uint32_t initial_tsn = 0;       // our first TSN (also in our INIT)
    uint32_t cookie_preservative = 0; // ms asked for in the next INIT after a stale cookie
    Buf cookie;                     // the peer's cookie, echoed until COOKIE-ACK
    Buf cookie_error;               // an ERROR chunk (unrecognized parameters) bundled with it

    // Sender (§6.1, §7).
    std::vector<OutMsg> msgs;
    std::vector<uint32_t> free_msgs;
    Ring<uint32_t> queue;       // messages not fully chunked, in send order
    Ring<TxChunk> out;          // TSNs tx_base .. next_tsn-1
    uint32_t next_tsn = 0;
    uint32_t tx_base = 0;       // lowest TSN not cumulatively acknowledged
    std::vector<uint16_t> next_ssn;
    size_t queued = 0;          // send-buffer bytes (accepted, not cumulatively acknowledged)
    size_t blocked_want = 0;    // a refused send's size: send_space when that much is free
    uint32_t flight = 0;        // bytes in flight
    uint32_t rtx_count = 0;     // chunks marked for retransmission
    uint32_t peer_rwnd = 0;
    bool fast_recovery = false;
    uint32_t recovery_exit = 0;
    uint32_t burst = 0;         // new-data packets since the last SACK (Max.Burst)
    bool timing = false;        // an RTT measurement is running on rtt_tsn
    Path* rtt_path = nullptr;   // ... on this path
    uint32_t rtt_tsn = 0;
    Time rtt_sent = 0;
    Time t3 = kNever;
    uint32_t errors = 0;        // association error count (§8.1): timeouts on any path
    uint32_t acked_paths = 0;   // bit i: a chunk last sent on paths[i] was acknowledged (on_sack)
    Time last_data_sent = 0;

    // Receiver (§6.2, §6.7).
    uint32_t cum = 0;           // cumulative TSN received
    uint32_t highest = 0;       // highest TSN received (== cum when no gap)
    std::vector<RxSlot> map;    // held chunks above cum, indexed by tsn & (size - 1)
    Buf partial;                // the message being reassembled in TSN order
    bool partial_active = false;
    uint16_t partial_stream = 0;
    uint32_t partial_ppid = 0;
    bool partial_unordered = false;
    uint16_t partial_ssn = 0;
    std::vector<uint16_t> rx_ssn; // per inbound stream: the next SSN to deliver
    size_t held = 0;            // bytes received and not yet taken by poll_event()
    uint32_t last_adv = 0;      // a_rwnd of the last SACK sent
    uint32_t data_pkts = 0;     // DATA packets since the last SACK
    size_t data_bytes = 0;      // ... and their bytes (sack_full_packets)
    bool sack_due = false;      // send a SACK in the next packet
    bool sack_wanted = false;   // a SACK is owed (delayed)
    bool in_batch_list = false;
    Time t_sack = kNever;
    std::vector<uint32_t> dups;

    // Shutdown (§9.2).
    Time t2 = kNever;
    Time t5 = kNever; // T5-shutdown-guard (§9.2): the whole shutdown, from its start, is bounded
    bool shutdown_due = false, shutdown_ack_due = false;

    // Endpoint bookkeeping.
    bool in_ready = false;
    Time armed_at = kNever; // the deadline of this association's live entry in the timer heap

    AssocInfo counters; // the counter fields of info()
};

struct PeerKey {
    Address addr; // IP with port = the peer's SCTP port (the UDP port is not part of the key)
    friend bool operator==(const PeerKey& a, const PeerKey& b) { return a.addr == b.addr; }
};
struct PeerKeyHash {
    size_t operator()(const PeerKey& k) const { return AddressHash()(k.addr); }
};

struct TimerEntry {
    Time t;
    uint32_t slot;
    AssocId id;
    bool operator>(const TimerEntry& o) const { return t > o.t; }
};

struct Endpoint::Impl {
    Config cfg;
    RandomSource random;
    // The cookie's secret (§5.1.3: changed now and then) and the one before it: a new secret
    // every Valid.Cookie.Life, and a cookie is checked against both, so a cookie still valid by
    // its lifetime is accepted across one change.
    uint8_t secret[kCookieKeySize] = {};
    uint8_t old_secret[kCookieKeySize] = {};
    bool have_old_secret = false;
    Time secret_since = kNever; // set at the first INIT-ACK
    void rotate_secret(Time now); // before a cookie is made
    uint64_t hb_rng = 0;         // heartbeat nonces and jitter (seeded at the first heartbeat)
    bool hb_rng_seeded = false;

    std::vector<std::unique_ptr<Assoc>> slots;
    std::vector<uint32_t> gens;
    Ring<uint32_t> free_slots;
    size_t live = 0;
    std::unordered_map<uint32_t, Assoc*> by_tag;
    std::unordered_map<PeerKey, Assoc*, PeerKeyHash> by_peer;

    Ring<uint32_t> ready;              // slots with something to send (maybe)
    std::vector<uint32_t> batch_list;  // slots owing a SACK at end_of_batch (sack_per_read)
    std::priority_queue<TimerEntry, std::vector<TimerEntry>, std::greater<TimerEntry>> timers;

    Ring<PendingEvent> events;
    Buf current;                       // the data of the last event handed out
    uint8_t current_small[kSmallMsg];  // ... when it was a small message
    size_t current_small_len = 0;      // ... of this length (0: no small message to take)
    BufPool pool;
    Ring<RawPacket> raw;
    EndpointStats stats;
    std::vector<std::unique_ptr<Assoc>> graveyard; // removed during the current API call
    std::vector<TimerEntry> due;                   // scratch of handle_timeout()

    Impl(const Config& c, RandomSource r);

    // endpoint.cpp: associations, lookups, timers, events
    uint32_t random32();
    uint32_t random_tag(); // nonzero and not in use
    Assoc* find(AssocId id) const;
    Assoc* create_assoc(const Address& peer, uint16_t peer_port, uint32_t local_tag, Time now);
    void remove(Assoc* a);
    void end_assoc(Assoc* a, EventType type, std::string reason); // event, then remove
    void arm(Assoc* a);      // after a timer of `a` changed
    void mark_ready(Assoc* a);
    void up_event(Assoc* a, EventType type);
    void queue_raw(const Address& to, const Address& from, const uint8_t* p, size_t n);
    void process(const Address& from, const Address& to, const uint8_t* p, size_t n, Time now);
    void ootb(const Address& from, const Address& to, const wire::CommonHeader& h, const uint8_t* p,
              size_t n);
    bool unknown_chunk(Assoc* a, const Address& from, const Address& to, const wire::CommonHeader& h,
                       const wire::Chunk& c); // false: stop processing the packet
    void send_abort(const Address& to, const Address& from, uint16_t peer_port, uint32_t vtag, bool t_bit,
                    uint16_t cause, const void* cause_value, size_t cause_len);
    void violation(Assoc* a, const char* what); // ABORT with Protocol Violation, assoc_lost
    void drop(const char* why, uint64_t& counter);

    // path.cpp: paths, heartbeats, failover
    Path* add_path(Assoc* a, const Address& addr, bool confirmed, Time now);
    // The path of the peer's address `from` (IP only), nullptr if unknown; O(1) when it is the
    // current path (every packet asks).
    Path* path_of(Assoc* a, const Address& from) const {
        if (a->cur != nullptr && from.family == AF_INET && a->cur->addr.family == AF_INET) {
            uint32_t x, y;
            std::memcpy(&x, from.ip, 4);
            std::memcpy(&y, a->cur->addr.ip, 4);
            if (x == y)
                return a->cur;
        }
        return path_lookup(a, from);
    }
    Path* path_lookup(Assoc* a, const Address& from) const;
    void select_path(Assoc* a);                          // cur = primary, or another active path
    void set_path_state(Assoc* a, Path* p, PathState s);  // with a path_change event
    bool path_timeout(Assoc* a, Path* p, Time now, bool t3); // an error on p; false: the assoc ended
    void path_alive(Assoc* a, Path* p);                  // p answered (SACK of its data, HB-ACK)
    void start_heartbeats(Assoc* a, Time now);           // the association came up
    void on_hb_timer(Assoc* a, Time now);
    void on_heartbeat_ack(Assoc* a, const wire::Chunk& c, Time now);
    void send_heartbeat(Assoc* a, Path* p, Time now);
    void rearm_hb(Assoc* a);
    uint64_t hb_random();
    Time hb_next(const Path& p, Time now);               // when an idle path is probed next
    void add_init_addresses(wire::PacketBuilder& b);     // our addresses in INIT / INIT-ACK
    void add_adaptation(wire::PacketBuilder& b);         // our Adaptation Layer Indication, if configured

    // handshake.cpp
    void on_init(const Address& from, const Address& to, const wire::CommonHeader& h, const wire::Chunk& c,
                 Time now);
    void on_init_ack(Assoc* a, const wire::Chunk& c, Time now);
    Assoc* on_cookie_echo(Assoc* a, const Address& from, const Address& to, const wire::CommonHeader& h,
                          const wire::Chunk& c, Time now);
    void on_cookie_ack(Assoc* a, Time now);
    void on_error(Assoc* a, const wire::Chunk& c, Time now);
    void establish(Assoc* a, const CookieData& ck, Time now);
    void on_t1(Assoc* a, Time now);
    void write_init(wire::PacketBuilder& b, Assoc* a);

    // data_rx.cpp
    void on_data(Assoc* a, const wire::DataChunk& d, bool& immediate);
    void after_data_packet(Assoc* a, bool immediate, size_t packet_len, Time now);
    PendingEvent& data_event(Assoc* a, uint16_t stream, uint32_t ppid, bool unordered);
    void deliver_in_order(Assoc* a, const wire::DataChunk& d, Buf* owned);
    bool deliver_early(Assoc* a, uint32_t tsn); // the held message around tsn, if it may go now
    void early_scan(Assoc* a);                  // every held message that may go now
    void ordered_delivered(Assoc* a, uint16_t stream, uint16_t ssn) {
        if (stream >= a->rx_ssn.size())
            a->rx_ssn.resize(std::max<size_t>(a->is, stream + 1u), 0);
        a->rx_ssn[stream] = static_cast<uint16_t>(ssn + 1);
    }
    uint32_t a_rwnd(const Assoc* a) const;
    size_t write_sack(Assoc* a, wire::PacketBuilder& b); // 0 if it did not fit
    void taken(Assoc* a, size_t bytes);                  // poll_event handed out a message

    // data_tx.cpp
    int send(Assoc* a, uint16_t stream, const iovec* iov, int iovcnt, bool unordered, uint32_t ppid, Time now);
    void on_sack(Assoc* a, const wire::SackChunk& s, Time now);
    // true: advanced; bytes_on (CMT), if given, gets the bytes newly acknowledged per path
    bool ack_cum(Assoc* a, uint32_t cum, Time now, uint32_t& bytes, bool& rtt_done, uint32_t* bytes_on = nullptr);
    void release(Assoc* a, TxChunk& c);
    void rtt_sample(Path* p, Time r);
    void on_t3(Assoc* a, Time now);
    void after_acks(Assoc* a, Time now);
    bool all_acked(const Assoc* a) const { return a->out.empty() && a->queue.empty(); }

    void cmt_after_sack(Assoc* a, const uint32_t* flight_before, const uint32_t* bytes_on, const uint32_t* first_out,
                        uint32_t cum, bool burst_limited);
    void on_t3_cmt(Assoc* a, Path* p);

    // output.cpp
    Path* burst_path(Assoc* a); // where the next burst goes (sets CMT's round robin)
    std::optional<Transmit> poll_transmit(uint8_t* buf, size_t cap, size_t max_segments, Time now);
    size_t build_packet(Assoc* a, uint8_t* buf, size_t limit, Time now);
    bool put_data(Assoc* a, wire::PacketBuilder& b, Time now, bool& sent_new);

    // shutdown.cpp
    void on_shutdown(Assoc* a, const wire::Chunk& c, Time now);
    void on_shutdown_ack(Assoc* a, Time now);
    void on_shutdown_complete(Assoc* a);
    void on_abort(Assoc* a, const wire::Chunk& c);
    void maybe_finish_shutdown(Assoc* a, Time now);
    void on_t2(Assoc* a, Time now);
    void start_shutdown_guard(Assoc* a, Time now); // T5, unless it runs
    void on_t5(Assoc* a, Time now);
    void send_shutdown_complete(Assoc* a, bool t_bit, uint32_t vtag, const Address& to, const Address& from,
                                uint16_t peer_port);
};

} // namespace sctpm::sctp
