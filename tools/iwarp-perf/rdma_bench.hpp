// SPDX-License-Identifier: BSD-3-Clause
// The iWARP side of iwarp-perf, through the verbs API (iwarp_verbs.h): one device, PD, CQ and
// connected QP per process, one registered buffer [src | dst | ctl], and one pass of a test at one
// size at a time:
//   rdma_write latency   perftest's ib_write_lat: each side writes into the other's dst and polls
//                        the last byte, which carries the iteration number
//   rdma_read latency    one RDMA Read, waited for, per iteration (one-way = the Read's time / 2)
//   send latency         Send/Receive ping-pong
//   bandwidth            rounds of `window` operations, then one acknowledgement (Writes: a
//                        4-byte Send after them; Reads: the last Read's completion)
// The client measures; the server answers and keeps the RNIC moving. The receiving side checks
// the data of the last iteration against the pattern of tools/perf/perf_util.hpp.
#pragma once
#include "control.hpp"
#include "iwarp_verbs.h"

#include <cstdint>
#include <functional>
#include <string>

namespace iwperf {

struct RdmaOptions {
    std::string addr = "127.0.0.1";
    iwv_progress_mode mode = IWV_PROGRESS_CALLER;
    int spin_us = 100; // busy-poll this long before blocking (as the core's spin_us)
    int window = 64;
    bool median = true; // latency from the median round trip (perf::RoundTrips)
};

class RdmaEndpoint {
public:
    static constexpr size_t kMaxBytes = 4u << 20;

    explicit RdmaEndpoint(const RdmaOptions& o);
    ~RdmaEndpoint();
    RdmaEndpoint(const RdmaEndpoint&) = delete;
    RdmaEndpoint& operator=(const RdmaEndpoint&) = delete;

    uint16_t sctp_port() const { return iwv_device_sctp_port(dev_); }
    uint16_t udp_port() const { return iwv_device_udp_port(dev_); }
    void accept();                                                          // server
    void connect(const std::string& addr, uint16_t sctp_port, uint16_t udp_port); // client

    // transport: rdma_write | rdma_read | send; test: latency | bandwidth. Returns the client's
    // measurement (one-way us or MB/s); the server returns 0.
    double run(const std::string& transport, const std::string& test, size_t bytes, int iters, bool client,
               Control& ctl);

private:
    struct Remote {
        uint64_t src = 0, dst = 0;
        uint32_t rkey = 0;
    };

    double write_latency(size_t bytes, int iters, bool client, Control& ctl);
    double read_latency(size_t bytes, int iters, bool client, Control& ctl);
    double send_latency(size_t bytes, int iters, bool client, Control& ctl);
    double write_bandwidth(size_t bytes, int iters, bool client, Control& ctl);
    double read_bandwidth(size_t bytes, int iters, bool client, Control& ctl);
    double send_bandwidth(size_t bytes, int iters, bool client, Control& ctl);

    // Work requests on the one buffer (offsets into it; remote ones into the peer's).
    iwv_sge sge(size_t offset, size_t len);
    void post_recv(size_t offset, size_t len, int count = 1);
    void post(iwv_wr_opcode op, size_t offset, size_t len, uint64_t remote, int count, bool signal_last);
    void post_chain(iwv_send_wr* first);
    // Wait, driving progress in caller mode: spin spin_us, then block in short slices.
    template <class Done>
    void wait_until(Done done, const char* what);
    void completions(int count, iwv_wc_opcode op, size_t byte_len);
    void serve_until_barrier(Control& ctl); // the server keeps answering until the client is done
    // Runs `round` iters + 1 times (the first is warm-up, not timed); MB/s of window x bytes a round.
    double timed_rounds(size_t bytes, int iters, const std::function<void()>& round) const;

    uint8_t* src() { return buf_; }
    uint8_t* dst() { return buf_ + kMaxBytes; }
    size_t ctl_offset() const { return 2 * kMaxBytes; }
    static constexpr size_t kDst = kMaxBytes;

    RdmaOptions o_;
    iwv_device* dev_ = nullptr;
    iwv_pd* pd_ = nullptr;
    iwv_cq* cq_ = nullptr;
    iwv_qp* qp_ = nullptr;
    iwv_mr* mr_ = nullptr;
    uint8_t* buf_ = nullptr;
    Remote peer_;
};

} // namespace iwperf
