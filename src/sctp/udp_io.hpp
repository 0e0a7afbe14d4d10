// SPDX-License-Identifier: BSD-3-Clause
// The UDP I/O of our own SCTP engine (issue 48, item 2): the engine is sans-I/O, so the progress
// engine owns the socket and the clock. One UDP socket per address family (IPv4 here) carries
// every association (RFC 6951 encapsulation). The descriptor is blocking, every call that must not
// wait says MSG_DONTWAIT, and a read that may wait (bounded by SO_RCVTIMEO) replaces poll() + read:
//   - receive: recvmmsg() in batches, UDP_GRO on (a batch of one peer's packets arrives as one
//     buffer with a UDP_GRO cmsg naming the segment size; it is cut back into packets here),
//     IP_PKTINFO for the address each packet was sent to;
//   - send: a burst of equal-size packets to one destination (the last may be shorter) leaves in
//     one sendmsg() with a UDP_SEGMENT cmsg; when the kernel refuses the segmentation (EIO: no
//     checksum offload on the route; EINVAL) the burst goes one sendmsg() per packet;
//   - IP_MTU_DISCOVER = IP_PMTUDISC_DO: nothing is fragmented, a packet too big for the route
//     fails with EMSGSIZE, which reaches the caller (the engine lowers the path MTU).
// Buffers are allocated once; no allocation per packet. EngineDriver (below) glues an
// sctp::Endpoint to the socket: reads all that is ready, feeds it with its arrival time, ends the
// batch, sends what the engine produced and sleeps until readable or the engine's next deadline.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sctp/engine.hpp"

namespace sctpm::sctp {

// CLOCK_MONOTONIC in microseconds: the engine's time base.
uint64_t monotonic_us();
// Cryptographically strong bytes from getrandom() (the engine's tags, cookie secret, TSNs).
void fill_random(void* p, size_t n);

struct UdpStats {
    uint64_t reads = 0;          // recvmmsg() datagrams (a GRO batch counts once)
    uint64_t packets_in = 0;     // packets after GRO batches were split
    uint64_t gro_batches = 0;    // reads that held more than one packet
    uint64_t sends = 0;          // sendmsg() calls that succeeded
    uint64_t packets_out = 0;    // packets those carried
    uint64_t gso_fallbacks = 0;  // segmented sends refused by the kernel, sent one by one
    uint64_t send_drops = 0;     // packets dropped because the socket stayed full (SCTP retransmits)
    uint64_t truncated = 0;      // datagrams larger than the receive buffer (dropped)
};

class UdpSocket {
public:
    struct Options {
        std::string addr = "0.0.0.0"; // the IPv4 address to bind
        uint16_t port = 0;             // 0: the kernel chooses
        unsigned batch = 16;           // datagrams per recvmmsg()
        int buffer_bytes = 4 << 20;    // SO_RCVBUF / SO_SNDBUF (FORCE tried first)
        bool gro = true;               // ask for UDP_GRO
        bool gso = true;               // send bursts with UDP_SEGMENT
    };
    // Throws sctpm::Error naming the address and the reason when the socket cannot be made.
    explicit UdpSocket(const Options& o);
    ~UdpSocket();
    UdpSocket(const UdpSocket&) = delete;
    UdpSocket& operator=(const UdpSocket&) = delete;

    int fd() const { return fd_; }
    uint16_t port() const { return ntohs(local_.sin_port); }
    const sockaddr_in& local() const { return local_; }
    bool gro_on() const { return gro_; }
    unsigned batch() const { return batch_; }
    bool gso_on() const { return gso_; }
    const UdpStats& stats() const { return stats_; }

    // One recvmmsg(); calls on_packet(from, to, bytes, len) for every packet (GRO batches
    // split). Returns the datagrams read (0: nothing was ready, or the wait ended) or -errno.
    // The bytes stay valid until the next receive(). wait_us 0: does not wait; else waits for the
    // first datagram up to wait_us (-1: no bound) in the read itself (one system call for the
    // wait and the read; the socket's own SO_RCVTIMEO, set only when the wait's power-of-two
    // bucket changes, so it may end up to 2x early: the caller loops).
    template <class F> int receive(F&& on_packet, int64_t wait_us = 0);

    // `len` bytes holding packets of `segment` bytes back to back (the last may be shorter), all to
    // `to`. 0 when sent (or dropped after the socket stayed full), else -errno of the first packet
    // the kernel refused (-EMSGSIZE: larger than the route's MTU; later packets were still tried).
    // `source`: the local address to send from (IP_PKTINFO) when the socket is bound to the
    // wildcard; null: the kernel's choice by route.
    int send(const sockaddr_in& to, const uint8_t* data, size_t len, size_t segment, const in_addr* source = nullptr);

    // Waits until the socket is readable or timeout_us passed (-1: forever). True if readable.
    bool wait_readable(int64_t timeout_us);

private:
    int recv_batch(int64_t wait_us); // fills msgs_, returns the count or -errno
    void set_receive_timeout(int64_t us); // SO_RCVTIMEO (0: none), only when it changes
    int send_one(const sockaddr_in& to, const uint8_t* data, size_t len, uint16_t gso_size, const in_addr* source);
    int send_each(const sockaddr_in& to, const uint8_t* data, size_t len, size_t segment, const in_addr* source);

    int fd_ = -1;
    sockaddr_in local_{};
    bool gro_ = false, gso_ = false;
    UdpStats stats_;
    // receive buffers, reused
    static constexpr size_t kDatagramMax = 65536;
    static constexpr size_t kControlBytes = 64;
    std::vector<uint8_t> bufs_;   // batch x kDatagramMax
    std::vector<uint8_t> ctrl_;   // batch x kControlBytes (IP_PKTINFO and UDP_GRO)
    std::vector<sockaddr_in> froms_;
    std::vector<struct iovec> iovs_;
    std::vector<struct mmsghdr> msgs_;
    unsigned batch_ = 0;
    unsigned filled_ = 0; // entries the last read filled (their lengths need resetting)
    int64_t rcvtimeo_ = 0; // the socket's SO_RCVTIMEO now (us, 0: none)

public:
    // What receive() learned from one datagram's control messages (exposed for the template).
    struct Meta {
        sockaddr_in to;
        size_t segment; // GRO segment size, 0 if none
    };
    Meta meta(unsigned i) const;
    const uint8_t* datagram(unsigned i) const { return bufs_.data() + size_t(i) * kDatagramMax; }
    size_t datagram_len(unsigned i) const { return msgs_[i].msg_len; }
    const sockaddr_in& from(unsigned i) const { return froms_[i]; }
    bool datagram_truncated(unsigned i) const { return (msgs_[i].msg_hdr.msg_flags & MSG_TRUNC) != 0; }
    void count_in(size_t packets, bool truncated) {
        stats_.packets_in += packets;
        stats_.gro_batches += packets > 1;
        stats_.truncated += truncated;
    }
};

template <class F> int UdpSocket::receive(F&& on_packet, int64_t wait_us) {
    const int n = recv_batch(wait_us);
    if (n <= 0)
        return n;
    for (unsigned i = 0; i < unsigned(n); ++i) {
        if (datagram_truncated(i)) {
            count_in(0, true);
            continue;
        }
        const Meta m = meta(i);
        const uint8_t* p = datagram(i);
        const size_t len = datagram_len(i);
        const size_t seg = m.segment ? m.segment : len;
        size_t k = 0;
        for (size_t at = 0; at < len; at += seg, ++k)
            on_packet(from(i), m.to, p + at, len - at < seg ? len - at : seg);
        if (len == 0) { // an empty datagram is still one (the engine drops it)
            on_packet(from(i), m.to, p, size_t{0});
            k = 1;
        }
        count_in(k, false);
    }
    return n;
}

// The engine's addresses from and to the socket's (IPv4).
inline Address to_address(const sockaddr_in& a) {
    Address r;
    r.family = AF_INET;
    r.port = ntohs(a.sin_port);
    static_assert(sizeof a.sin_addr <= sizeof r.ip);
    __builtin_memcpy(r.ip, &a.sin_addr, sizeof a.sin_addr);
    return r;
}
inline sockaddr_in to_sockaddr_in(const Address& a) {
    sockaddr_in r{};
    r.sin_family = AF_INET;
    r.sin_port = htons(a.port);
    __builtin_memcpy(&r.sin_addr, a.ip, sizeof r.sin_addr);
    return r;
}

// Glues an Endpoint to a UdpSocket on the caller's thread (no thread of its own). One step:
//   pump(on_event): reads every datagram that is ready (recvmmsg batches, at most max_reads of
//   them), feeds each packet with its arrival time, end_of_batch(), runs the timers that are
//   due, hands every pending event to on_event (which may send()), then sends all the engine
//   produced (poll_transmit until empty: one sendmsg per burst);
//   wait(max_us): sleeps in poll() until the socket is readable, the engine's next deadline or
//   max_us (-1: no bound), whichever comes first.
// A loop of pump() and wait() is the progress engine; run_until(pred) is that loop. The fast
// loop (tools/perf/engine_channel.hpp) is output_if_due(), wait_input(), take_events(): one
// recvmmsg per wake-up, and a SACK made due by a read rides in the answer the caller sends.
class EngineDriver {
public:
    struct Stats {
        uint64_t pumps = 0, waits = 0, bursts = 0, send_errors = 0, emsgsize = 0, timeouts = 0;
    };
    // Optional observer of every packet in (inbound = true) and out, e.g. a test's packet trace.
    using Tap = void (*)(void* ctx, bool inbound, const Address& peer, const uint8_t* p, size_t len);

    EngineDriver(Endpoint& ep, UdpSocket& sock, unsigned max_reads = 8)
        : ep_(ep), sock_(sock), max_reads_(max_reads), out_(kOutBytes) {}

    void set_tap(Tap tap, void* ctx) { tap_ = tap, tap_ctx_ = ctx; }
    Endpoint& endpoint() { return ep_; }
    UdpSocket& socket() { return sock_; }
    const Stats& stats() const { return stats_; }

    // Reads what is ready and feeds it; returns the packets read. Also ends the batch and runs due timers.
    size_t input(Time now);
    // Runs the engine's timers if one is due at `now` (what input() does after its reads).
    void run_due_timers(Time now);
    // Sends everything the engine has to send; returns the bursts sent.
    size_t output(Time now);
    // output() only if something may have become due since the last one: input() read packets
    // or ran timers, or the caller marked it (after its own Endpoint calls, e.g. send()).
    size_t output_if_due() { return due_ ? output(Time(monotonic_us())) : 0; }
    void mark_due() { due_ = true; }
    bool due() const { return due_; } // output_if_due() would send

    template <class OnEvent> size_t pump(OnEvent&& on_event) {
        const size_t packets = pump_in(on_event);
        output(Time(monotonic_us()));
        return packets;
    }
    // pump() without the output: for a caller that answers what it received (send()) before it
    // calls output(), so that the SACK the read made due leaves in the answer's packet instead
    // of a packet of its own (a ping-pong then sends one packet per message, not two).
    template <class OnEvent> size_t pump_in(OnEvent&& on_event) {
        ++stats_.pumps;
        const size_t packets = input(Time(monotonic_us()));
        take_events(on_event);
        return packets;
    }
    // Hands every pending event to on_event.
    template <class OnEvent> void take_events(OnEvent&& on_event) {
        Event ev;
        while (ep_.poll_event(ev))
            on_event(ev);
    }
    // Events dropped (for a caller that only moves packets).
    size_t pump() {
        return pump([](const Event&) {});
    }

    // Sleeps until the socket is readable, the next deadline or max_us passed (-1: no bound).
    void wait(int64_t max_us);
    // wait() and input() in one: the read itself waits (recvmmsg on the blocking socket, up to
    // the next deadline or max_us), then the rest of what is ready is read, the batch ended and
    // the due timers run. One system call per wake-up instead of poll + read. Returns the packets read.
    size_t wait_input(int64_t max_us);

    // pump() and wait() until pred() holds or timeout_us passed (-1: no bound); true if it held.
    template <class OnEvent, class Pred> bool run_until(OnEvent&& on_event, Pred&& pred, int64_t timeout_us) {
        const uint64_t start = monotonic_us();
        for (;;) {
            pump(on_event);
            if (pred())
                return true;
            int64_t left = -1;
            if (timeout_us >= 0) {
                left = timeout_us - int64_t(monotonic_us() - start);
                if (left <= 0)
                    return false;
            }
            wait(left);
        }
    }

private:
    int64_t wait_bound(int64_t max_us); // max_us cut at the engine's next deadline (counts a wait)
    size_t input_from(Time now, int64_t first_wait_us); // input(), the first read waiting up to first_wait_us
    static constexpr size_t kOutBytes = 65507; // one UDP_SEGMENT send: one IPv4 datagram's payload
    static constexpr size_t kOutSegments = 64; // the kernel's UDP_MAX_SEGMENTS
    Endpoint& ep_;
    UdpSocket& sock_;
    unsigned max_reads_;
    std::vector<uint8_t> out_;
    Stats stats_;
    Tap tap_ = nullptr;
    void* tap_ctx_ = nullptr;
    bool due_ = true;
};

} // namespace sctpm::sctp
