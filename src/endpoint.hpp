// SPDX-License-Identifier: BSD-3-Clause
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
#include "sctp_socket.hpp"
#include "settings.hpp"

struct sctp_sndinfo;

namespace sctpm {

class Endpoint final : public SctpSocket {
public:
    // Binds `addresses` (text IPv4/IPv6) on `port`; an empty list binds the wildcard (all
    // addresses). Throws Error naming the address and the reason.
    Endpoint(const Settings& s, uint16_t port, const std::vector<std::string>& addresses);
    ~Endpoint();
    Endpoint(const Endpoint&) = delete;
    Endpoint& operator=(const Endpoint&) = delete;

    // fn runs on usrsctp's threads whenever the socket gets readable: it must only signal.
    void set_upcall(void (*fn)(struct socket*, void*, int), void* arg) override;

    // Start an association to the peer's addresses (text) on its SCTP port via its UDP port.
    // Returns the association id, or throws Error naming the addresses and the reason.
    AssocId connect(const std::vector<std::string>& addresses, uint16_t sctp_port, uint16_t udp_port) override;

    // One SCTP message on a stream, gathered from iov. Returns bytes sent or -errno (-EWOULDBLOCK: retry later).
    long sendv(AssocId assoc, uint16_t stream, const iovec* iov, int iovcnt) override;
    RecvResult recv(void* buf, size_t len) override;

    // Per-association settings that usrsctp only accepts once the association exists:
    // path MTU, heartbeat interval and PF thresholds on every path.
    void tune_association(AssocId assoc) override;
    void abort(AssocId assoc, const std::string& reason = "") override; // reason: in the ABORT's user-initiated cause
    void shutdown_assoc(AssocId assoc) override; // graceful SHUTDOWN after queued data
    std::vector<PathStatus> paths(AssocId assoc) override;
    AssocStatus status(AssocId assoc) override;
    bool readable() override; // the stack has something for recv (data or a notification)

    // SCTP-AUTH (auth=packet; endpoint_auth.cpp): see SctpSocket.
    std::optional<bool> peer_requires_data_auth(AssocId assoc) override;
    std::optional<std::pair<uint32_t, uint32_t>> tags(AssocId assoc) override;
    int add_auth_key(AssocId assoc, uint16_t id, const std::string& key) override;
    int activate_auth_key(AssocId assoc, uint16_t id) override;
    int deactivate_auth_key(AssocId assoc, uint16_t id) override;
    int delete_auth_key(AssocId assoc, uint16_t id) override;
    int active_auth_key(AssocId assoc) override;
    std::vector<std::string> local_addresses() const override { return bound_; }
    std::string stack_counters() override; // usrsctp's, for the whole process
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
// Addresses in text, comma-separated (for errors).
std::string join_addresses(const std::vector<std::string>& addresses);
// Text form of an address (without port).
std::string address_text(const sockaddr* sa);
// Turn these SCTP notifications on for every future association of the socket. False (errno set)
// when the stack refuses one; *refused names it.
bool subscribe_events(struct socket* so, std::initializer_list<uint16_t> types, uint16_t* refused);
// Calls fn for every address of an interface that is up, IPv4 or IPv6; false if the list of
// interfaces cannot be read.
bool for_each_ip_interface(const std::function<void(const ifaddrs&)>& fn);
// False for an address a business card cannot carry (IPv6 link-local).
bool usable_in_card(const sockaddr* sa);
// The local interface addresses (IPv4 and global IPv6), loopback last.
std::vector<std::string> interface_addresses();

} // namespace sctpm
