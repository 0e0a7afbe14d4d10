// SPDX-License-Identifier: BSD-3-Clause
// Our own SCTP engine (src/sctp/, issue 48) as a benchmark channel: one Endpoint on its own UDP
// socket (src/sctp/udp_io.hpp), one association, messages on stream 0, driven from the calling
// thread (no thread of its own, no usrsctp). It is measured with the schedule of the transport's
// channel (sctp_channel.hpp) so that the two stacks compare directly: same sizes, same window,
// the same pattern check of every size's last message. A delivered message is copied once into
// the channel's buffers (as usrsctp copies it out to the reader).
#pragma once
#include "channel.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "sctp/engine.hpp"
#include "sctp/udp_io.hpp"

namespace perf {

struct EngineOptions {
    std::string addr = "127.0.0.1"; // the IPv4 address to bind (port: the kernel's choice)
    uint32_t link_mtu = 0;          // the link MTU (SCTP packets of link_mtu - 28 bytes); 0: 65000-byte packets
    // Config::max_burst, 0: none, cwnd alone limits. Not the transport's 32 (kSackPerReadBurst):
    // with one SACK per GRO read of ~32 packets at MTU 1500, a burst limit of 32 kept the
    // engine's flight at 32 packets and its cwnd from growing (2026-12-07, loopback 1 MiB:
    // 307 MB/s with 32, 479 with 64, 679 with none).
    uint32_t max_burst = 0;
};

class EngineChannel : public Channel {
public:
    explicit EngineChannel(const EngineOptions& o);
    ~EngineChannel() override; // graceful shutdown (bounded), then closes
    EngineChannel(const EngineChannel&) = delete;
    EngineChannel& operator=(const EngineChannel&) = delete;

    uint16_t port() const { return sock_.port(); } // UDP port, also the SCTP port
    void connect(const std::string& addr, uint16_t port); // client: the association, up on return
    void accept();                                        // server: waits for the peer's association

    void send(const char* data, size_t len) override;
    void recv(size_t len) override;
    void flush() override;
    const char* received() const override { return current_.data(); }
    bool sends_queue() const override { return true; }

private:
    void on_event(const sctpm::sctp::Event& ev);
    // Until pred() holds: sends what is due, then waits in the read itself (socket readable or
    // the engine's deadline: one recvmmsg per wake-up, no poll before it) and takes the events.
    // What the last read made due (a SACK) is not sent before returning: the caller's answer,
    // sent next (send() outputs), carries it in the same packet.
    template <class Pred> void progress_until(Pred pred) {
        while (!pred()) {
            drv_.output_if_due();
            drv_.wait_input(-1);
            drv_.take_events([this](const sctpm::sctp::Event& ev) { on_event(ev); });
        }
    }
    sctpm::sctp::UdpSocket sock_;
    sctpm::sctp::Endpoint ep_;
    sctpm::sctp::EngineDriver drv_;
    sctpm::sctp::AssocId assoc_ = sctpm::sctp::kNoAssoc;
    bool up_ = false, ended_ = false, space_ = false;
    // Messages delivered and not yet taken by recv(), oldest at head_ (a pump may deliver more
    // than the one recv() waits for); recv() swaps the oldest into current_, which received()
    // shows until the next recv(). Buffers are reused: no allocation once they have grown.
    std::vector<std::vector<char>> ring_;
    size_t head_ = 0, count_ = 0;
    std::vector<char> current_;
    size_t taken_ = 0;
};

} // namespace perf
