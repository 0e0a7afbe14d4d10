// SPDX-License-Identifier: BSD-3-Clause
// RFC 5043 on our own SCTP engine (setting stack=own; src/sctp/): the RNIC's DDP endpoint is an
// sctp::Endpoint with a UDP socket of its own (never the MPI socket's: §5.1 forbids mixing DDP
// and other traffic in one association), one inbound and one outbound stream per association
// (§8), the Adaptation Layer Indication 1 in INIT and INIT-ACK and the peer's checked (§11.1).
//
// No thread and no lock of its own: the device runs it under its mutex, from whichever progress
// its mode names (device.cpp), and waits for its socket and its next timer.
//
// Each association is an OwnLlp. The engine hands out whole messages in arrival order across
// associations, while a queue pair reads only its own, so each message's buffer is taken from
// the engine (Endpoint::take_data: not copied) into its association's queue, and given back once
// read. The queues together are bounded (kHeldLimit): past it the endpoint stops taking messages
// from the engine, which then holds them and closes the peers' receive windows, so a queue pair
// that stops reading makes its peers wait instead of making memory grow.
#pragma once
#include "adaptation.hpp"

#include "sctp/engine.hpp"
#include "sctp/udp_io.hpp"
#include "settings.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace iwarp {

class OwnDdpEndpoint;

// One association of the engine: PPID 16/17 messages, unordered, on stream 0.
class OwnLlp : public Llp {
public:
    OwnLlp(OwnDdpEndpoint& ep, sctpm::sctp::AssocId id, size_t max_message) : ep_(&ep), id_(id), max_message_(max_message) {}
    ~OwnLlp() override;
    long send(uint32_t ppid, const void* data, size_t len) override;
    LlpRead read(void* buf, size_t len) override;
    size_t max_message() const override { return max_message_; }
    void close(bool abort) override;

private:
    friend class OwnDdpEndpoint;
    void deliver(uint32_t ppid, std::vector<uint8_t>&& bytes);
    void end(std::string why); // the association is gone: reads report it once the queue is read
    size_t held() const { return held_; }

    struct Message {
        uint32_t ppid;
        std::vector<uint8_t> bytes;
    };
    OwnDdpEndpoint* ep_; // null once closed, ended or the endpoint is gone
    sctpm::sctp::AssocId id_;
    size_t max_message_;
    std::deque<Message> messages_;
    size_t read_ = 0; // how much of the front message was read
    size_t held_ = 0; // unread bytes queued
    bool ended_ = false;
    std::string why_;
};

class OwnDdpEndpoint {
public:
    // Binds a UDP port of the kernel's choice on the configured addresses (several: the wildcard,
    // and every one listed in INIT / INIT-ACK: a multihomed endpoint, with CMT if `s` asks for
    // it). The paths' settings are those of `s` (the MPI socket's), with cfg's overrides. Throws
    // sctpm::Error naming what cannot be done.
    OwnDdpEndpoint(const AdapterConfig& cfg, const sctpm::Settings& s);
    ~OwnDdpEndpoint();
    OwnDdpEndpoint(const OwnDdpEndpoint&) = delete;
    OwnDdpEndpoint& operator=(const OwnDdpEndpoint&) = delete;

    uint16_t port() const { return sock_->port(); } // the SCTP port and the UDP port alike
    int fd() const { return sock_->fd(); }

    // Starts an association (non-blocking); the result shows up in poll(). Throws sctpm::Error
    // naming the address if it cannot even start.
    uint32_t connect(const std::string& address, uint16_t sctp_port, uint16_t udp_port);

    // Reads what arrived, runs the due timers, and hands out what happened: associations that are
    // up with a peer that announced DDP, and those that failed (or whose peer did not announce
    // DDP: then aborted, §11.1); messages go to their OwnLlp. Returns how many events it took.
    size_t poll(std::vector<AssociationUp>& up, std::vector<AssociationFailed>& failed);
    // Sends what the engine has to send.
    void flush();
    // The engine's next timer (monotonic microseconds), if one runs.
    std::optional<int64_t> next_deadline() const;

    // RFC 5043 §9: the largest DDP segment one DATA chunk carries in an SCTP packet of `mtu` bytes
    // (the UDP payload: common header 12, DATA chunk header 16, a multiple of 4).
    static size_t segment_limit(uint32_t mtu) { return mtu > 28 ? (mtu - 28) & ~size_t(3) : 0; }

private:
    friend class OwnLlp;
    long send(OwnLlp& llp, uint32_t ppid, const void* data, size_t len);
    void close(OwnLlp& llp, bool abort);
    void ended(sctpm::sctp::AssocId id, const std::string& why, std::vector<AssociationFailed>& failed);
    void not_ddp(const sctpm::sctp::Event& ev, std::vector<AssociationFailed>& failed);

    static constexpr size_t kHeldLimit = 16u << 20; // bytes queued in all OwnLlps together

    std::unique_ptr<sctpm::sctp::UdpSocket> sock_;
    std::unique_ptr<sctpm::sctp::Endpoint> ep_;
    std::unique_ptr<sctpm::sctp::EngineDriver> driver_;
    size_t max_message_ = 0;
    std::unordered_map<sctpm::sctp::AssocId, OwnLlp*> llps_;
    size_t held_ = 0; // bytes queued in the OwnLlps, unread
    std::vector<std::vector<uint8_t>> spare_; // read messages' buffers, for the next take_data
};

} // namespace iwarp
