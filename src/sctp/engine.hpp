// SPDX-License-Identifier: BSD-3-Clause
// Public API of our own SCTP engine (issue 48): one SCTP endpoint (one SCTP port, many
// associations, like a one-to-many socket), written from RFC 9260 and carried in UDP (RFC 6951).
//
// Sans-I/O: the engine never reads a clock, never makes a system call, starts no thread, takes
// no lock and keeps no global state. The caller (the progress engine's UDP I/O, or a simulated
// network in tests) pushes in
//   - every received SCTP packet (one UDP payload) with its addresses and arrival time: receive();
//   - the end of each read batch: end_of_batch() (the "SACK per read" point);
//   - the time, when next_deadline() is reached: handle_timeout();
//   - the application's requests: connect(), send(), shutdown(), abort();
// and pulls out
//   - datagrams to send: poll_transmit() (bursts of equal-size packets to one destination, ready
//     for one sendmsg() with UDP_SEGMENT);
//   - events: poll_event() (association up, a whole message delivered, association ended, ...);
//   - the next timer deadline: next_deadline().
// Nothing calls back into the caller. Times are microseconds on the caller's monotonic clock.
// Randomness (verification tags, initial TSNs, the cookie secret) comes from a caller-supplied
// source, so a simulation replays exactly from its seed.
// Multihoming: an association knows every address of its peer (connect()'s remotes, the INIT /
// INIT-ACK address parameters, the packet's source); each is a path with its own state, error
// count, RTO and cwnd, probed by HEARTBEATs; data goes to the primary path while it is active,
// else to another active one (failover), and returns when the primary answers again.
//
// Limits: IPv4 address parameters only (IPv6 ones are ignored), at most 8 paths, CMT without
// DAC (Config::cmt), no path MTU discovery
// (send_failed() only counts), no SCTP-AUTH, no PR-SCTP, no ASCONF, no I-DATA. Delivery: whole
// messages, in order per stream; a gap holds back only its own stream (a message above it goes
// out once whole and next in its stream), unordered messages go out once whole. Later work
// extends this header only by adding.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sctpm::sctp {

// Microseconds on the caller's monotonic clock (any origin; must never go backwards).
using Time = int64_t;

// An association's handle. 0 is "none". An id names one association only: a dead id is
// refused (-ENOTCONN) and is handed out again only after 4096 more associations have lived in
// the same table slot (slot in the low 20 bits, generation in the high 12).
using AssocId = uint32_t;
constexpr AssocId kNoAssoc = 0;

// An IPv4 or IPv6 address with a UDP port: where an SCTP packet comes from or goes to
// (RFC 6951: the peer's UDP source port is where replies go). Plain value, comparable, hashable.
struct Address {
    sa_family_t family = AF_UNSPEC; // AF_INET, AF_INET6, or AF_UNSPEC (unset / "any")
    uint16_t port = 0;              // UDP port, host byte order
    uint8_t ip[16] = {};            // IPv4: the first 4 bytes, network order; IPv6: 16 bytes
    uint32_t scope_id = 0;          // IPv6 link-local scope; 0 otherwise

    // AF_INET / AF_INET6 sockaddr (any other family or a short length gives an AF_UNSPEC Address).
    static Address from_sockaddr(const sockaddr* sa, socklen_t len);
    // Dotted IPv4 or textual IPv6 ("10.0.0.1", "::1"); nullopt if it does not parse.
    static std::optional<Address> parse(const std::string& ip, uint16_t port);
    // Fills `out`; returns the sockaddr's length (0 for AF_UNSPEC).
    socklen_t to_sockaddr(sockaddr_storage* out) const;
    bool is_set() const { return family == AF_INET || family == AF_INET6; }
    std::string to_string() const; // "10.0.0.1:9899", "[::1]:9899"

    friend bool operator==(const Address& a, const Address& b);
    friend bool operator!=(const Address& a, const Address& b) { return !(a == b); }
};

struct AddressHash {
    size_t operator()(const Address& a) const;
};

struct Config {
    uint16_t local_port = 0; // this endpoint's SCTP port (common header); must be nonzero

    // The largest SCTP packet on the wire, i.e. the UDP payload: 1500 - 20 (IPv4) - 8 (UDP).
    // Every path starts with it (the slice has no PMTU discovery).
    uint32_t mtu = 1472;

    uint16_t outbound_streams = 1024; // OS we ask for (the peer's MIS may lower it)
    uint16_t inbound_streams = 1024;  // MIS we accept

    uint32_t rwnd = 4u << 20;        // receive window (a_rwnd) in bytes, per association
    size_t send_buffer = 4u << 20;   // bytes queued and unacknowledged per association; a
                                     // message larger than this is refused (-EMSGSIZE)

    Time delayed_sack = 200'000; // delayed SACK timer (RFC 9260 default 200 ms, at most 500 ms)
    uint32_t sack_every = 2;     // SACK at least every this many packets carrying DATA
    bool sack_per_read = false;  // also make a pending SACK due at each end_of_batch()
    // Count bytes, not packets, for sack_every: packets force a SACK at once only when together
    // they are worth more than (sack_every - 1) full packets (kernel TCP counts full-sized
    // segments the same way); small messages are then acknowledged by the next packet to the
    // peer or by the timer.
    bool sack_full_packets = false;

    uint32_t max_init_retransmits = 8; // Max.Init.Retransmits (INIT and COOKIE-ECHO)
    uint32_t max_retransmits = 10;     // Association.Max.Retrans (consecutive T3 / T2 expiries)
    Time rto_initial = 1'000'000;      // RTO.Initial
    Time rto_min = 1'000'000;          // RTO.Min
    Time rto_max = 60'000'000;         // RTO.Max
    uint32_t max_burst = 4;            // Max.Burst: new packets at once per transmit opportunity (0: no limit)
    Time cookie_lifetime = 60'000'000; // Valid.Cookie.Life

    // The largest message accepted from a peer. The message being reassembled in order does not
    // count against the receive window (so a message larger than rwnd still arrives); this bounds
    // it instead. A larger one aborts the association (Protocol Violation).
    size_t max_message = 64u << 20;

    // ---- multihoming (RFC 9260 §5.1.2, §5.4, §6.4, §8; RFC 7829) ----
    // Our own addresses, listed as IPv4 Address parameters in our INIT / INIT-ACK so the peer
    // can reach us on each (IPv4 only; ports are ignored). Empty: none listed (the peer knows
    // only the address our packets come from).
    std::vector<Address> local_addresses;
    // HB.interval: an idle or inactive path is probed this often (plus its RTO and a jitter of
    // +-RTO/2); potentially-failed and unconfirmed paths are probed every RTO. 0: no heartbeats
    // at all (learned addresses then stay unconfirmed and carry no data).
    Time heartbeat_interval = 30'000'000;
    uint32_t path_max_retransmits = 5; // Path.Max.Retrans: errors above this make a path inactive
    // PotentiallyFailed.Max.Retrans (RFC 7829): errors above this make an active path
    // potentially failed (no new data goes there). 0: PF at the first timeout (RFC 7829's
    // recommendation); >= path_max_retransmits: no PF state. A single path never turns PF (there
    // is nowhere else to send).
    uint32_t pf_max_retransmits = 0;
    // Concurrent Multipath Transfer (Iyengar, Amer and Stewart, "Concurrent Multipath Transfer
    // Using SCTP Multihoming Over Independent End-to-End Paths", 2006): new data goes to every
    // active path, a burst at a time in turn, each path within its own cwnd; split fast
    // retransmit (a chunk is missed only when later data sent on its own path is acknowledged),
    // the cwnd update for CMT (a path's cwnd grows when the earliest data outstanding on it is
    // acknowledged), fast recovery per path, T3 per path (only that path's data is resent), and
    // retransmissions to the active path with the largest cwnd (RTX-CWND). Potentially-failed
    // paths carry no data (CMT-PF). Without DAC (the receiver acknowledges as without CMT).
    bool cmt = false;

    // RFC 5061 §4.2.6: an Adaptation Layer Indication parameter with this value goes in our
    // INIT and INIT-ACK (RFC 5043 announces DDP with 1). Unset: none is sent. The peer's, if it
    // sent one, comes with assoc_up (Event::peer_adaptation).
    std::optional<uint32_t> adaptation_indication;
};

// The state of one path (one peer transport address) of an association.
enum class PathState : uint8_t {
    active,             // carries data
    potentially_failed, // RFC 7829: timed out (errors > pf_max_retransmits); probed every RTO
    inactive,           // errors > path_max_retransmits; probed every HB.interval
    unconfirmed,        // learned, never answered a HEARTBEAT (RFC 9260 §5.4); no data
};

const char* to_string(PathState s);

// One path in AssocInfo.
struct PathInfo {
    Address address;
    PathState state = PathState::active;
    bool primary = false; // the primary path (first address, or set_primary())
    bool current = false; // where new data goes now
    Time srtt = 0, rto = 0;
    uint32_t cwnd = 0, ssthresh = 0;
    uint32_t flight_size = 0; // bytes in flight last sent on this path
    uint32_t errors = 0;
};

// Fills n bytes with randomness. Called from the Endpoint's constructor and from connect() and
// INIT handling (tags, initial TSNs), and once when heartbeats first start (at the first
// association's establishment: the seed of heartbeat nonces and jitter), and for a new cookie
// secret at an INIT once every Valid.Cookie.Life, never elsewhere. Production: getrandom(); tests: a seeded PRNG.
using RandomSource = std::function<void(uint8_t*, size_t)>;
// A deterministic source (xoshiro256**-style PRNG seeded from `seed`), for simulations.
RandomSource seeded_random(uint64_t seed);

// One burst from poll_transmit(): `count` packets, all to `to`, laid back to back in the caller's
// buffer, `segment_size` bytes each except possibly the last (shorter, never longer):
// sendmsg(to, buf, bytes) with UDP_SEGMENT = segment_size when count > 1.
struct Transmit {
    Address to;          // the remote UDP address (IP + UDP port)
    Address from;        // the local address the peer last sent to (AF_UNSPEC: any)
    size_t segment_size = 0;
    size_t count = 0;
    size_t bytes = 0;    // total bytes written = (count - 1) * segment_size + size of the last
};

enum class EventType : uint8_t {
    assoc_up,          // association ESTABLISHED (either role); `peer`, streams filled
    data,              // one whole message on `stream` (`data` view, see Event)
    send_space,        // a send() that returned -EWOULDBLOCK on `assoc` may be retried now
    assoc_restart,     // the peer restarted the association (RFC 9260 §5.2.4 action A): data in
                       // flight both ways was lost; the id stays valid and the association is up
    shutdown_complete, // graceful SHUTDOWN finished (either side began it); the id is dead
    assoc_lost,        // ABORT received or sent, or retransmissions exhausted; the id is dead
    cant_start,        // connect() failed (INIT/COOKIE-ECHO retransmits exhausted, ABORT during
                       // setup, stale cookies); the id is dead
    path_change,       // a path of `assoc` changed state: `path_address`, `path_state`
};

const char* to_string(EventType t);

struct Event {
    EventType type = EventType::data;
    AssocId assoc = kNoAssoc;
    // data: the message. `data` points into memory the Endpoint owns; it stays valid until the
    // next poll_event() call (or the Endpoint's destruction), whatever else is called meanwhile.
    uint16_t stream = 0;
    uint32_t ppid = 0;        // payload protocol identifier (host order)
    bool unordered = false;
    std::span<const uint8_t> data;
    // assoc_up / assoc_restart: the peer's address (where packets go) and the negotiated streams.
    Address peer;
    uint16_t outbound_streams = 0;
    uint16_t inbound_streams = 0;
    // assoc_up / assoc_restart: the peer's Adaptation Layer Indication, if its INIT or INIT-ACK
    // had one (RFC 5061 §4.2.6).
    std::optional<uint32_t> peer_adaptation;
    // shutdown_complete / assoc_lost / cant_start: what happened, for a person to read
    // (e.g. "peer sent ABORT: User-Initiated Abort: \"rank 3 exits\"", "T3-rtx expired 11 times").
    std::string reason;
    // assoc_lost / cant_start caused by an ABORT the peer sent: that chunk as received (type,
    // flags, length, causes), for a caller that reports causes itself; empty otherwise.
    std::vector<uint8_t> abort_chunk;
    // path_change: the peer's address whose path changed, and its new state. data: the peer's
    // address the packet with the message's last chunk came from (per-path accounting).
    Address path_address;
    PathState path_state = PathState::active;
};

enum class AssocState : uint8_t {
    cookie_wait,
    cookie_echoed,
    established,
    shutdown_pending,
    shutdown_sent,
    shutdown_received,
    shutdown_ack_sent,
};

const char* to_string(AssocState s);

// A snapshot of one association (for tools and tests; not needed on the hot path).
struct AssocInfo {
    AssocState state = AssocState::cookie_wait;
    Address peer;
    uint16_t peer_port = 0; // the peer's SCTP port
    uint16_t outbound_streams = 0, inbound_streams = 0;
    uint32_t mtu = 0;
    uint32_t cwnd = 0, ssthresh = 0, flight_size = 0, peer_rwnd = 0;
    Time rto = 0, srtt = 0; // 0 srtt: no measurement yet
    size_t send_queued = 0; // bytes accepted by send() and not yet acknowledged
    size_t recv_held = 0;   // bytes received and not yet handed out by poll_event()
    uint64_t data_packets_sent = 0, retransmitted_chunks = 0, fast_retransmits = 0, t3_expiries = 0;
    uint64_t sacks_sent = 0, sacks_received = 0;
    // Every path to the peer (the fields above about one path describe the current one).
    std::vector<PathInfo> paths;
};

// Counters of the endpoint as a whole (packets that reached no association are counted here).
struct EndpointStats {
    uint64_t packets_in = 0, packets_out = 0;
    uint64_t bad_checksum = 0;   // dropped: CRC32c mismatch
    uint64_t malformed = 0;      // dropped: a length or field the RFC forbids (see last_drop)
    uint64_t bad_vtag = 0;       // dropped: verification tag mismatch
    uint64_t ootb = 0;           // out of the blue (no association): answered or dropped per §8.4
    uint64_t bad_cookie = 0;     // COOKIE-ECHO with a wrong signature or shape
    uint64_t stale_cookie = 0;   // COOKIE-ECHO past its lifetime (answered with Stale Cookie)
    uint64_t send_failures = 0;  // send_failed() reports from the caller
    uint64_t dropped_data = 0;   // DATA chunks dropped: twice the receive window used, or more
                                 // than 65536 TSNs above the cumulative TSN
    std::string last_drop;       // why the last dropped packet was dropped (for tests and logs)
};

class Endpoint {
public:
    Endpoint(const Config& cfg, RandomSource random);
    ~Endpoint();
    Endpoint(const Endpoint&) = delete;
    Endpoint& operator=(const Endpoint&) = delete;

    const Config& config() const;

    // ---- inputs ----------------------------------------------------------------------------
    // One SCTP packet (a whole UDP payload) that arrived from `from` (the peer's IP and UDP
    // source port) at `to` (our address; AF_UNSPEC if unknown). The bytes are read during the
    // call only. Bad packets are dropped and counted (stats()), never acted on.
    void receive(const Address& from, const Address& to, const uint8_t* bytes, size_t len, Time now);

    // The caller finished one read batch: with Config::sack_per_read, pending SACKs become due
    // now. Best order for the caller: receive()... end_of_batch(), poll_event() (the application
    // may send()), then poll_transmit(): a due SACK then rides in the same packet as new DATA.
    void end_of_batch(Time now);

    // Runs every timer due at `now` (early or spurious calls are harmless).
    void handle_timeout(Time now);

    // A send of a burst to `to` failed with `error` (a positive errno; EMSGSIZE: the packet is too
    // big for the route). The slice only counts it; later: lowers the path MTU.
    void send_failed(const Address& to, int error, Time now);

    // Starts an association to the peer whose addresses (IP + UDP port) are `remotes` (the INIT
    // goes to the first, and its retransmissions to the next ones in turn; the others are paths
    // too: probed, unconfirmed until they answer) and whose SCTP port is `remote_port`. Returns its id; kNoAssoc when no
    // address is usable. If an association with that peer (address, SCTP port) already exists
    // its id is returned. The id is reported by an assoc_up (or cant_start) event later; if the
    // peer connects to us at the same moment, both attempts become this one association.
    AssocId connect(std::span<const Address> remotes, uint16_t remote_port, Time now);

    // Queues one message: the iovecs concatenated, at least 1 byte (RFC 9260 DATA cannot carry an
    // empty message: -EINVAL). The bytes are copied before the call returns. Allowed from connect() on (queued until the association is up).
    // 0, or -errno: -EWOULDBLOCK the send buffer is full (a send_space event follows),
    // -EMSGSIZE larger than Config::send_buffer, -EINVAL bad stream / empty message,
    // -ENOTCONN unknown or dead id, -ESHUTDOWN shutdown begun by either side.
    int send(AssocId id, uint16_t stream, const iovec* iov, int iovcnt, bool unordered, Time now,
             uint32_t ppid = 0);

    // Graceful SHUTDOWN: queued data is still sent and acknowledged first. shutdown_complete follows,
    // or assoc_lost (with an ABORT to the peer) if the whole shutdown, from this call or the peer's
    // SHUTDOWN on, takes longer than 5 x RTO.Max, and at least 30 s (T5-shutdown-guard, RFC 9260 §9.2).
    // -ENOTCONN for an unknown id.
    int shutdown(AssocId id, Time now);
    // ABORT now with a User-Initiated Abort cause carrying `reason`; an assoc_lost event follows
    // locally too. -ENOTCONN for an unknown id.
    int abort(AssocId id, const std::string& reason, Time now);

    // Makes `primary` (one of the peer's known addresses; the port is ignored) the primary
    // path: data goes there whenever it is active. 0, -ENOTCONN unknown id, -EINVAL unknown address.
    int set_primary(AssocId id, const Address& primary, Time now);

    // ---- outputs ---------------------------------------------------------------------------
    // Writes the next burst into buf[0..cap) and describes it; nullopt when nothing is to be sent
    // now. `cap` must hold at least one packet of Config::mtu bytes; at most `max_segments`
    // packets are written (UDP_SEGMENT allows 64, and 64 KiB in all: pass cap <= 65535 for GSO).
    // Call until nullopt after every input.
    std::optional<Transmit> poll_transmit(uint8_t* buf, size_t cap, size_t max_segments, Time now);

    // The next event, or false when none is pending. See Event for how long `data` stays valid.
    // A data event is what "takes" the message: only then is its space back in the receive window.
    bool poll_event(Event& ev);

    // After a data event: moves the message's bytes into `out` instead of leaving them for the
    // caller to copy (a caller that queues messages per association keeps them without a copy);
    // `out`'s old buffer goes to the engine's pool for a later message. The event's `data` view
    // is invalid from then on. False, and `out` untouched, when the last event handed out was no
    // data event or its bytes were taken already.
    bool take_data(std::vector<uint8_t>& out);

    // Whether poll_event() has an event to hand out (without taking it).
    bool event_pending() const;
    // Whether poll_transmit() may have something to send (false: it surely has nothing).
    bool transmit_pending() const;

    // When handle_timeout() should be called next (it may be early), or nullopt when no timer runs.
    std::optional<Time> next_deadline() const;

    // ---- inspection ------------------------------------------------------------------------
    std::optional<AssocInfo> info(AssocId id) const;
    const EndpointStats& stats() const;
    size_t association_count() const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

} // namespace sctpm::sctp
