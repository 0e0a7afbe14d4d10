// SPDX-License-Identifier: BSD-3-Clause
// The transport's socket on our own SCTP engine (setting stack=own; src/sctp/): an SctpSocket
// made of an sctp::Endpoint, its UDP socket and the driver between them. The progress engine
// reads the packets, runs the timers and sends what is due (caller_input()), and calls that queue
// data (sendv, connect, abort) send when the transport flushes at the end of its call.
//
// A process that computes outside MPI must still answer its peers (SACKs, heartbeats, the
// handshake), or their retransmission timers end the association. So a standby thread takes the
// socket over whenever the owner has left it for longer than its last hold (about a millisecond
// after the owner's last progress call; never while the owner waits in progress, which holds it
// for the whole wait): it reads, runs the timers and sends, and wakes the owner's progress engine
// when something waits to be read. A lock serialises the two (uncontended but for those moments).
// Whatever takes the lock publishes, before it lets go, whether output is due, the engine's next
// deadline and whether anything waits to be read: the calls that would find nothing to do (the
// progress engine's claims around its waits, the read that ends a read loop, a flush after a
// flush) look at those and return without the lock.
//
// What the transport reads is the same as from usrsctp: messages in pieces (a message stays in
// the engine until it has been read whole, so nothing is copied on the way), and notifications
// in usrsctp's layout (sctp_assoc_change, sctp_paddr_change), made here from the engine's events.
// Not there yet, refused with an error that says so: SCTP-AUTH (auth=packet), the CMT variants
// that couple the paths' windows (cmt=rpv1, rpv2, mptcp; cmt=base is there), IPv6.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "sctp/engine.hpp"
#include "sctp/udp_io.hpp"
#include "sctp_socket.hpp"
#include "settings.hpp"

namespace sctpm {

class OwnSocket final : public SctpSocket {
public:
    // Binds a UDP port (settings udp_port, a range, or the kernel's choice) for `addresses` (text;
    // empty: every local address). Throws Error naming what cannot be done.
    OwnSocket(const Settings& s, const std::vector<std::string>& addresses);
    ~OwnSocket() override;

    uint16_t port() const { return sock_->port(); }
    // The engine's configuration these settings give (exposed for tests).
    static sctp::Config engine_config(const Settings& s, uint16_t port, const std::vector<std::string>& addresses);

    void set_upcall(void (*fn)(struct socket*, void*, int), void* arg) override;
    AssocId connect(const std::vector<std::string>& addresses, uint16_t sctp_port, uint16_t udp_port) override;
    long sendv(AssocId assoc, uint16_t stream, const iovec* iov, int iovcnt) override;
    RecvResult recv(void* buf, size_t len) override;
    void tune_association(AssocId) override {} // the settings are the engine's configuration
    void abort(AssocId assoc, const std::string& reason = "") override;
    void shutdown_assoc(AssocId assoc) override;
    std::vector<PathStatus> paths(AssocId assoc) override;
    AssocStatus status(AssocId assoc) override;
    bool readable() override;

    std::optional<bool> peer_requires_data_auth(AssocId assoc) override;
    std::optional<std::pair<uint32_t, uint32_t>> tags(AssocId) override { return std::nullopt; }
    int add_auth_key(AssocId, uint16_t, const std::string&) override { return EOPNOTSUPP; }
    int activate_auth_key(AssocId, uint16_t) override { return EOPNOTSUPP; }
    int deactivate_auth_key(AssocId, uint16_t) override { return EOPNOTSUPP; }
    int delete_auth_key(AssocId, uint16_t) override { return EOPNOTSUPP; }
    int active_auth_key(AssocId) override { return -1; }
    std::vector<std::string> local_addresses() const override { return bound_; }
    std::string stack_counters() override; // the engine's and its UDP socket's

    std::optional<CallerInput> caller_input() override;
    void flush() override;

private:
    // The lock, and what its holder publishes when it lets go (publish()).
    class Locked {
    public:
        explicit Locked(OwnSocket& s) : s_(s), lock_(s.mu_) {}
        ~Locked() { s_.publish(); }
        Locked(const Locked&) = delete;
        Locked& operator=(const Locked&) = delete;

    private:
        OwnSocket& s_;
        std::lock_guard<std::mutex> lock_;
    };
    void publish(); // under the lock

    int input(int max_reads, uint32_t hold_us); // the progress engine's packet input (CallerInput::input)
    int input_locked(int max_reads, int64_t now);
    int64_t next_timer_us();        // CallerInput::next_timer_us
    int64_t next_timer_us_locked() const;
    void standby_main();
    void wake_reader();           // the upcall, when events wait for recv
    bool take_event();            // the next event into cur_ (false: none); notifications made here
    void make_notification(const sctp::Event& ev);

    std::unique_ptr<sctp::UdpSocket> sock_;
    std::unique_ptr<sctp::Endpoint> ep_;
    std::unique_ptr<sctp::EngineDriver> driver_;
    std::mutex mu_; // the engine, the driver, the socket's buffers and what follows
    // Published by the lock's holder (publish()), read without the lock.
    std::atomic<bool> output_due_{false};
    std::atomic<bool> readable_{false};
    std::atomic<int64_t> deadline_us_{INT64_MAX}; // the engine's next deadline (monotonic us), or none
    std::atomic<int64_t> owner_until_{0}; // the owner holds the socket until then (monotonic us)
    int stop_fd_ = -1;                    // an eventfd that ends the standby thread's waits
    std::atomic<bool> stopping_{false};
    std::thread standby_;
    std::vector<std::string> bound_;
    void (*upcall_)(struct socket*, void*, int) = nullptr;
    void* upcall_arg_ = nullptr;

    // What recv hands out now: a message (in the engine's memory until the next poll_event) or a
    // notification (note_), read in pieces.
    sctp::Event ev_;
    const uint8_t* cur_ = nullptr;
    size_t cur_len_ = 0, cur_off_ = 0;
    bool cur_active_ = false, cur_note_ = false;
    std::vector<uint8_t> note_;
};

} // namespace sctpm
