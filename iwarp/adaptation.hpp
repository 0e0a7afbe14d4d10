// SPDX-License-Identifier: BSD-3-Clause
// The RFC 5043 adaptation on usrsctp: a DDP endpoint socket of its own (never the MPI socket:
// §5.1 forbids mixing DDP and other traffic in one association) that announces the Adaptation
// Layer Indication 0x00000001 in INIT/INIT-ACK, checks the peer's, and hands each usable
// association over as its own peeled-off one-to-one socket (SctpLlp), which - unlike a
// one-to-many socket - signals writability through its upcall.
//
// Needs the process's usrsctp stack started (sctpm::start_stack). Not thread-safe: the device
// serializes calls. Upcalls run on usrsctp's threads and must only signal.
#pragma once
#include "llp.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct socket; // usrsctp

namespace iwarp {

using Upcall = void (*)(struct socket*, void*, int);

struct AdapterConfig {
    std::vector<std::string> bind_addresses; // empty: all; several: a multihomed endpoint
    uint16_t sctp_port = 0;   // 0: reserve a free one (see DdpEndpoint)
    uint32_t path_mtu = 0;    // link MTU cap (sctpm/path_params.hpp); 0: each path's route decides
    uint32_t max_segment = 0; // 0: no cap below the unfragmented size
    uint32_t heartbeat_ms = 0;     // per path; 0: usrsctp's default
    uint32_t path_max_retrans = 0; // 0: usrsctp's default
};

// One association, peeled off: PPID 16/17 messages, unordered, on SCTP stream 0 (one DDP stream
// per association).
class SctpLlp : public Llp {
public:
    // Takes ownership of a one-to-one usrsctp socket of address family `family`; tunes its
    // paths and reads the fragmentation point to size segments.
    SctpLlp(struct socket* so, const AdapterConfig& cfg, int family, Upcall upcall, void* arg);
    ~SctpLlp() override;
    long send(uint32_t ppid, const void* data, size_t len) override;
    LlpRead read(void* buf, size_t len) override;
    size_t max_message() const override { return max_message_; }
    bool too_many_unacked() override;
    void close(bool abort) override;

private:
    struct socket* so_;
    size_t max_message_ = 0;
    uint32_t sends_since_check_ = 0;
    bool in_message_ = false; // a partially read message is open
    bool notification_ = false;
};

// An association that became usable (up, peer announced DDP), or one that failed.
struct AssociationUp {
    uint32_t assoc = 0;
    std::unique_ptr<Llp> llp;
};
struct AssociationFailed {
    uint32_t assoc = 0;
    std::string why;
};

class DdpEndpoint {
public:
    DdpEndpoint(const AdapterConfig& cfg, Upcall upcall, void* arg);
    ~DdpEndpoint();
    DdpEndpoint(const DdpEndpoint&) = delete;
    DdpEndpoint& operator=(const DdpEndpoint&) = delete;

    uint16_t port() const { return port_; }
    const AdapterConfig& config() const { return cfg_; }

    // Non-blocking start of an association; the result shows up in poll(). Throws sctpm::Error
    // naming the address if it cannot even start.
    uint32_t connect(const std::string& address, uint16_t sctp_port, uint16_t udp_port);

    // Drain the socket's notifications: associations that are up and announced DDP are peeled
    // off and returned; those that failed, or whose peer did not announce DDP (then aborted,
    // RFC 5043 §11.1), are reported.
    void poll(std::vector<AssociationUp>& up, std::vector<AssociationFailed>& failed);

    // Adopt an association of another DDP-enabled one-to-many socket (peels it off).
    std::unique_ptr<SctpLlp> adopt(struct socket* one_to_many, uint32_t assoc);
    // Adopt a one-to-one socket (already peeled off or connected by its owner).
    std::unique_ptr<SctpLlp> adopt(struct socket* one_to_one);

    // RFC 5043 §11.1: the announced value is checked on every association; exposed for tests.
    static bool adaptation_is_ddp(uint32_t indication);
    std::string abort(uint32_t assoc, const char* reason);
    // The largest DDP segment (SCTP user message) that one DATA chunk carries on a path of this
    // MTU: the fragmentation point of an association that started with it.
    static size_t segment_limit(uint32_t path_mtu);

private:
    void peel(uint32_t assoc, std::vector<AssociationUp>& up, std::vector<AssociationFailed>& failed);

    AdapterConfig cfg_;
    Upcall upcall_;
    void* arg_;
    struct socket* so_ = nullptr;
    uint16_t port_ = 0;
    int family_ = 0;
    int reservation_fd_ = -1; // a kernel UDP socket holding the port number so no other process takes it
    std::map<uint32_t, bool> comm_up_; // associations up, waiting for their adaptation indication
};

} // namespace iwarp
