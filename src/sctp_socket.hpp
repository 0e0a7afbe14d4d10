// SPDX-License-Identifier: BSD-3-Clause
// What the transport needs of its SCTP socket, as an interface: Endpoint (endpoint.hpp) is the
// usrsctp one-to-many socket, OwnSocket (own_socket.hpp) the same on our own engine (stack=own);
// a scripted in-memory socket stands in for them where the receive
// state machine must run deterministically (tests/fuzz/transport_rx_fuzz.cpp). One virtual call
// per SCTP message or notification: nothing next to usrsctp's cost of a message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <sys/socket.h>
#include <sys/uio.h>
#include <vector>

struct socket; // usrsctp

namespace sctpm {

using AssocId = uint32_t;

struct RecvResult {
    long n = 0;             // bytes read, or -errno (-EWOULDBLOCK when empty)
    bool eor = false;       // the SCTP message (or notification) ended with this read
    bool cut = false;       // ... and the stack cut it short: its association was aborted or restarted
    bool notification = false;
    AssocId assoc = 0;
    uint16_t stream = 0;
    sockaddr_storage from{}; // the address the data arrived from (per-path accounting)
};

// What the stack holds for one association (SCTP_STATUS).
struct AssocStatus {
    bool known = false; // false: the stack no longer has it
    int32_t state = 0;
    uint32_t rwnd = 0;  // the peer's advertised receive window
    uint16_t unacked = 0, pending = 0; // DATA chunks sent but not acked / waiting for reassembly here
    uint32_t queued_out = 0;           // bytes the stack holds to send (sent or not, not yet acked)
};

struct PathStatus {
    std::string address;
    int32_t state = 0; // SCTP_ACTIVE / SCTP_INACTIVE / SCTP_UNCONFIRMED / PF
    uint32_t cwnd = 0, srtt = 0, rto = 0, mtu = 0;
};

class SctpSocket {
public:
    virtual ~SctpSocket() = default;

    // fn runs (on usrsctp's threads, for Endpoint) whenever the socket gets readable: it must only signal.
    virtual void set_upcall(void (*fn)(struct socket*, void*, int), void* arg) = 0;
    // Start an association to the peer's addresses (text) on its SCTP port via its UDP port.
    // Returns the association id, or throws Error naming the addresses and the reason.
    virtual AssocId connect(const std::vector<std::string>& addresses, uint16_t sctp_port, uint16_t udp_port) = 0;
    // One SCTP message on a stream, gathered from iovcnt (1..kMaxSendIov) buffers. Returns bytes
    // sent or -errno (-EWOULDBLOCK: retry later).
    virtual long sendv(AssocId assoc, uint16_t stream, const iovec* iov, int iovcnt) = 0;
    long send(AssocId assoc, uint16_t stream, const void* data, size_t len) {
        iovec v{const_cast<void*>(data), len};
        return sendv(assoc, stream, &v, 1);
    }
    static constexpr int kMaxSendIov = 64; // usrsctp_sendv_iov's USRSCTP_SENDV_MAX_IOV
    // The next piece of data or notification; with fragment interleave 0 the rest of a message
    // partly read comes before anything else.
    virtual RecvResult recv(void* buf, size_t len) = 0;
    // Per-association settings that can only be applied once the association exists.
    virtual void tune_association(AssocId assoc) = 0;
    virtual void abort(AssocId assoc, const std::string& reason = "") = 0; // reason: in the ABORT's cause
    virtual void shutdown_assoc(AssocId assoc) = 0; // graceful SHUTDOWN after queued data
    virtual std::vector<PathStatus> paths(AssocId assoc) = 0;
    virtual AssocStatus status(AssocId assoc) = 0;
    virtual bool readable() = 0; // something waits for recv (data or a notification)

    // SCTP-AUTH (auth=packet). Whether the peer's INIT asked us to authenticate DATA (it runs
    // auth=packet); nullopt if the association is gone.
    virtual std::optional<bool> peer_requires_data_auth(AssocId assoc) = 0;
    // Both verification tags (local: ours, that the peer puts in its packets), or nullopt.
    virtual std::optional<std::pair<uint32_t, uint32_t>> tags(AssocId assoc) = 0;
    // 0 or an errno.
    virtual int add_auth_key(AssocId assoc, uint16_t id, const std::string& key) = 0;
    virtual int activate_auth_key(AssocId assoc, uint16_t id) = 0;
    virtual int deactivate_auth_key(AssocId assoc, uint16_t id) = 0;
    virtual int delete_auth_key(AssocId assoc, uint16_t id) = 0;
    virtual int active_auth_key(AssocId assoc) = 0; // -1 when unknown
    virtual std::vector<std::string> local_addresses() const = 0;
    // The stack's counters in one line for a person (the stall report); empty if it has none.
    virtual std::string stack_counters() { return ""; }

    // A stack that runs only when called (stack=own): the progress engine reads its packets, runs
    // its timers and sends what they made due through these. usrsctp has threads of its own and
    // none of this (nullopt).
    struct CallerInput {
        // What waits (none read when max_reads is 0), due timers, then output; returns packets read.
        // The caller keeps the stack to itself for hold_us (a stack with a thread of its own for
        // when nobody calls leaves it alone meanwhile).
        std::function<int(int max_reads, uint32_t hold_us)> input;
        int fd = -1;                             // readable when packets wait
        std::function<int64_t()> next_timer_us;  // how soon input must run without a packet (-1: never)
    };
    virtual std::optional<CallerInput> caller_input() { return std::nullopt; }
    // Sends what the calls before queued (a stack that sends from within its calls has nothing to do).
    virtual void flush() {}
};

// Flushes a socket when the scope ends: every call of the transport that may queue sends.
struct FlushAtEnd {
    SctpSocket& socket;
    ~FlushAtEnd() { socket.flush(); }
};

} // namespace sctpm
