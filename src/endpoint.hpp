// The one-to-many (SOCK_SEQPACKET) usrsctp socket of a process: binding (multihomed), socket and
// per-association options, non-blocking send/receive, connect with the peer's UDP port.
#pragma once
#include <functional>
#include <ifaddrs.h>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <string>
#include <sys/socket.h>
#include <vector>

#include "path_params.hpp"
#include "settings.hpp"

struct socket; // usrsctp
struct sctp_sndinfo;

namespace sctpm {

using AssocId = uint32_t;

struct RecvResult {
    long n = 0;             // bytes read, or -errno (-EWOULDBLOCK when empty)
    bool eor = false;       // the SCTP message (or notification) ended with this read
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

class Endpoint {
public:
    // Binds `addresses` (text IPv4/IPv6) on `port`; an empty list binds the wildcard (all
    // addresses). Throws Error naming the address and the reason.
    Endpoint(const Settings& s, uint16_t port, const std::vector<std::string>& addresses);
    ~Endpoint();
    Endpoint(const Endpoint&) = delete;
    Endpoint& operator=(const Endpoint&) = delete;

    // fn runs on usrsctp's threads whenever the socket gets readable: it must only signal.
    void set_upcall(void (*fn)(struct socket*, void*, int), void* arg);

    // Start an association to the peer's addresses (text) on its SCTP port via its UDP port.
    // Returns the association id, or throws Error naming the addresses and the reason.
    AssocId connect(const std::vector<std::string>& addresses, uint16_t sctp_port, uint16_t udp_port);

    // One SCTP message on a stream. Returns bytes sent or -errno (-EWOULDBLOCK: retry later).
    long send(AssocId assoc, uint16_t stream, const void* data, size_t len);
    RecvResult recv(void* buf, size_t len);

    // Per-association settings that usrsctp only accepts once the association exists:
    // path MTU, heartbeat interval and PF thresholds on every path.
    void tune_association(AssocId assoc);
    void abort(AssocId assoc, const std::string& reason = ""); // reason: in the ABORT's user-initiated cause
    void shutdown_assoc(AssocId assoc); // graceful SHUTDOWN after queued data
    std::vector<PathStatus> paths(AssocId assoc);
    AssocStatus status(AssocId assoc);
    bool readable(); // the stack has something for recv (data or a notification)

    // SCTP-AUTH (auth=packet; endpoint_auth.cpp). Returns 0 or an errno where it can fail.
    // Whether the peer's INIT asked us to authenticate DATA (it runs auth=packet); nullopt if the
    // stack no longer has the association.
    std::optional<bool> peer_requires_data_auth(AssocId assoc);
    // Both verification tags (local: ours, that the peer puts in its packets), or nullopt.
    std::optional<std::pair<uint32_t, uint32_t>> tags(AssocId assoc);
    int add_auth_key(AssocId assoc, uint16_t id, const std::string& key);
    int activate_auth_key(AssocId assoc, uint16_t id);
    int deactivate_auth_key(AssocId assoc, uint16_t id);
    int delete_auth_key(AssocId assoc, uint16_t id);
    int active_auth_key(AssocId assoc); // -1 when unknown
    std::vector<std::string> local_addresses() const { return bound_; }
    uint16_t port() const { return port_; }

private:
    void set_option(int level, int name, const void* value, socklen_t len, const char* what);
    void apply_socket_options();
    void require_chunk_auth(); // before any association: our INIT carries the list
    void send_flags_only(const ::sctp_sndinfo& info, const char* what);

    const Settings& s_;
    struct socket* so_ = nullptr;
    uint16_t port_;
    int family_ = AF_INET;
    PathParams paths_; // path MTU, heartbeats and retransmissions of every association
    std::vector<std::string> bound_;
};

// An IPv4 or IPv6 address in text form with a port; false when the text is neither.
bool parse_address(const std::string& text, uint16_t port, sockaddr_storage* out);
// The size of the sockaddr actually held (what usrsctp's bind/connect calls take).
socklen_t sockaddr_len(const sockaddr_storage& ss);
// Text form of an address (without port).
std::string address_text(const sockaddr* sa);
// Turn these SCTP notifications on for every future association of the socket. False (errno set)
// when the stack refuses one; *refused names it.
bool subscribe_events(struct socket* so, std::initializer_list<uint16_t> types, uint16_t* refused);
// Calls fn for every address of an interface that is up, IPv4 or IPv6; false if the list of
// interfaces cannot be read.
bool for_each_ip_interface(const std::function<void(const ifaddrs&)>& fn);
// The local interface addresses (IPv4 and global IPv6), loopback last.
std::vector<std::string> interface_addresses();

} // namespace sctpm
