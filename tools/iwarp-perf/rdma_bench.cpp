// SPDX-License-Identifier: BSD-3-Clause
// The iWARP measurements of iwarp-perf; see rdma_bench.hpp.
#include "rdma_bench.hpp"

#include "perf_util.hpp"

#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <vector>

using perf::die;
using perf::now_s;

namespace iwperf {

namespace {

constexpr double kHangSeconds = 60;
constexpr uint16_t kReadCredits = 64; // IRD = ORD: a window of Reads in flight
constexpr size_t kCtlBytes = 4096;    // acknowledgements: received at ctl + 0, sent from ctl + 64

std::string verr(iwv_device* dev, const std::string& what) { return what + ": " + iwv_last_error(dev); }

} // namespace

RdmaEndpoint::RdmaEndpoint(const RdmaOptions& o) : o_(o) {
    iwv_device_attr attr;
    iwv_device_attr_init(&attr);
    attr.progress = o.mode;
    attr.bind_address = o_.addr.c_str();
    char err[512];
    dev_ = iwv_open_device(&attr, err, sizeof err);
    if (!dev_)
        die(err);
    pd_ = iwv_alloc_pd(dev_);
    cq_ = iwv_create_cq(dev_, 4 * o.window + 64);
    if (!pd_ || !cq_)
        die(verr(dev_, "iwarp: PD/CQ"));
    iwv_qp_init_attr qa{};
    qa.send_cq = cq_;
    qa.recv_cq = cq_;
    qa.cap = {uint32_t(2 * o.window + 8), uint32_t(2 * o.window + 8), 1, 1, 0};
    qp_ = iwv_create_qp(pd_, &qa);
    if (!qp_ || iwv_modify_qp(qp_, IWV_QPS_INIT) != 0)
        die(verr(dev_, "iwarp: QP"));
    const size_t total = 2 * kMaxBytes + kCtlBytes;
    buf_ = static_cast<uint8_t*>(std::aligned_alloc(4096, total));
    if (!buf_)
        die("iwarp: out of memory");
    std::memset(buf_, 0, total);
    mr_ = iwv_reg_mr(pd_, buf_, total, IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ);
    if (!mr_)
        die(verr(dev_, "iwarp: register"));
}

RdmaEndpoint::~RdmaEndpoint() {
    iwv_disconnect(qp_);
    iwv_destroy_qp(qp_);
    iwv_dereg_mr(mr_);
    iwv_destroy_cq(cq_);
    iwv_dealloc_pd(pd_);
    iwv_close_device(dev_);
    std::free(buf_);
}

void RdmaEndpoint::accept() {
    iwv_event ev;
    if (iwv_get_event(dev_, &ev, int(kHangSeconds * 1000)) != 1 || ev.type != IWV_EVENT_CONNECT_REQUEST)
        die("iwarp: no connection request from the client");
    if (ev.private_data_len != sizeof peer_)
        die("iwarp: the client's private data does not describe its buffer");
    std::memcpy(&peer_, ev.private_data, sizeof peer_);
    Remote mine{uint64_t(uintptr_t(src())), uint64_t(uintptr_t(dst())), mr_->rkey};
    iwv_conn_param cp{&mine, uint16_t(sizeof mine), kReadCredits, kReadCredits};
    if (iwv_accept(ev.request, qp_, &cp) != 0)
        die(verr(dev_, "iwarp: accept"));
}

void RdmaEndpoint::connect(const std::string& addr, uint16_t sctp_port, uint16_t udp_port) {
    Remote mine{uint64_t(uintptr_t(src())), uint64_t(uintptr_t(dst())), mr_->rkey};
    iwv_conn_param cp{&mine, uint16_t(sizeof mine), kReadCredits, kReadCredits};
    if (iwv_connect(qp_, addr.c_str(), sctp_port, udp_port, &cp) != 0)
        die(verr(dev_, "iwarp: connect"));
    iwv_event ev;
    if (iwv_get_event(dev_, &ev, int(kHangSeconds * 1000)) != 1 || ev.type != IWV_EVENT_ESTABLISHED)
        die("iwarp: the connection was not established");
    if (ev.private_data_len != sizeof peer_)
        die("iwarp: the server's private data does not describe its buffer");
    std::memcpy(&peer_, ev.private_data, sizeof peer_);
}

// ---- work requests and waiting ------------------------------------------------------------------

iwv_sge RdmaEndpoint::sge(size_t offset, size_t len) {
    return iwv_sge{uint64_t(uintptr_t(buf_ + offset)), uint32_t(len), mr_->lkey};
}

void RdmaEndpoint::post_recv(size_t offset, size_t len, int count) {
    std::vector<iwv_sge> sg(size_t(count), sge(offset, len));
    std::vector<iwv_recv_wr> wr(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i)
        wr[size_t(i)] = {uint64_t(i), i + 1 < count ? &wr[size_t(i) + 1] : nullptr, &sg[size_t(i)], 1};
    iwv_recv_wr* bad = nullptr;
    if (iwv_post_recv(qp_, wr.data(), &bad) != 0)
        die(verr(dev_, "iwarp: post receive"));
}

void RdmaEndpoint::post(iwv_wr_opcode op, size_t offset, size_t len, uint64_t remote, int count, bool signal_last) {
    std::vector<iwv_sge> sg(size_t(count), sge(offset, len));
    std::vector<iwv_send_wr> wr(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
        iwv_send_wr& w = wr[size_t(i)];
        w = iwv_send_wr{};
        w.wr_id = uint64_t(i);
        w.next = i + 1 < count ? &wr[size_t(i) + 1] : nullptr;
        w.sg_list = &sg[size_t(i)];
        w.num_sge = 1;
        w.opcode = op;
        w.send_flags = signal_last && i + 1 == count ? IWV_SEND_SIGNALED : 0;
        w.rdma.remote_addr = remote;
        w.rdma.rkey = peer_.rkey;
    }
    post_chain(wr.data());
}

void RdmaEndpoint::post_chain(iwv_send_wr* first) {
    iwv_send_wr* bad = nullptr;
    if (iwv_post_send(qp_, first, &bad) != 0)
        die(verr(dev_, "iwarp: post send"));
}

template <class Done>
void RdmaEndpoint::wait_until(Done done, const char* what) {
    const double start = now_s();
    double spin_end = start + o_.spin_us * 1e-6;
    while (!done()) {
        const double now = now_s();
        if (now < spin_end) {
            // Thread mode: the device thread works; taking its lock to spin would only slow it.
            // Yield as the core's progress does: on 2 cores usrsctp's threads need ours.
            if (o_.mode == IWV_PROGRESS_CALLER && iwv_progress(dev_, 0) > 0)
                spin_end = now + o_.spin_us * 1e-6;
            else
                sched_yield();
            continue;
        }
        if (now - start > kHangSeconds)
            die(std::string("iwarp: nothing arrived for 60 s waiting for ") + what);
        if (iwv_progress(dev_, 1) > 0)
            spin_end = now_s() + o_.spin_us * 1e-6;
    }
}

void RdmaEndpoint::completions(int count, iwv_wc_opcode op, size_t byte_len) {
    iwv_wc wc[64];
    int got = 0;
    while (got < count) {
        int n = 0;
        wait_until([&] { return (n = iwv_poll_cq(cq_, std::min(count - got, 64), wc)) != 0; }, "a completion");
        if (n < 0)
            die("iwarp: completion queue overflow");
        for (int i = 0; i < n; ++i) {
            if (wc[i].status != IWV_WC_SUCCESS)
                die("iwarp: work completion with status " + std::to_string(int(wc[i].status)) + " (vendor 0x" +
                    [&] { char b[16]; std::snprintf(b, sizeof b, "%x", wc[i].vendor_err); return std::string(b); }() + ")");
            if (wc[i].opcode != op)
                die("iwarp: completion of opcode " + std::to_string(int(wc[i].opcode)) + ", expected " + std::to_string(int(op)));
            if (op == IWV_WC_RECV && wc[i].byte_len != byte_len)
                die("iwarp: received " + std::to_string(wc[i].byte_len) + " bytes, expected " + std::to_string(byte_len));
        }
        got += n;
    }
}

void RdmaEndpoint::serve_until_barrier(Control& ctl) {
    if (o_.mode == IWV_PROGRESS_THREAD) {
        ctl.barrier();
        return;
    }
    double spin_end = now_s() + o_.spin_us * 1e-6, next_look = 0;
    for (;;) {
        const double now = now_s();
        if (now >= next_look) { // a system call: not on every round
            if (ctl.arrived())
                break;
            next_look = now + 200e-6;
        }
        if (iwv_progress(dev_, now < spin_end ? 0 : 1) > 0)
            spin_end = now + o_.spin_us * 1e-6;
        else if (now < spin_end)
            sched_yield();
    }
    ctl.barrier();
}

// ---- the tests ----------------------------------------------------------------------------------

double RdmaEndpoint::run(const std::string& transport, const std::string& test, size_t bytes, int iters, bool client,
                         Control& ctl) {
    if (bytes == 0 || bytes > kMaxBytes)
        die("iwarp: transfer size " + std::to_string(bytes) + " outside 1 .. 4 MiB");
    const bool lat = test == "latency";
    if (transport == "rdma_write")
        return lat ? write_latency(bytes, iters, client, ctl) : write_bandwidth(bytes, iters, client, ctl);
    if (transport == "rdma_read")
        return lat ? read_latency(bytes, iters, client, ctl) : read_bandwidth(bytes, iters, client, ctl);
    if (transport == "send")
        return lat ? send_latency(bytes, iters, client, ctl) : send_bandwidth(bytes, iters, client, ctl);
    die("iwarp: unknown transport " + transport);
}

// ib_write_lat: the last byte of each Write carries the iteration number (1..255, never 0), and the
// receiver polls it; placement is in order, so every other byte is there once it shows.
double RdmaEndpoint::write_latency(size_t bytes, int iters, bool client, Control& ctl) {
    const uint32_t seed = perf::pattern_seed("rdma_write", "latency", bytes);
    perf::fill_pattern(src(), bytes, seed);
    volatile uint8_t* last = dst() + bytes - 1;
    *last = 0;
    ctl.barrier();
    const int warm = iters / 10;
    uint8_t mark = 0;
    perf::RoundTrips rt;
    for (int i = 0; i < iters + warm; ++i) {
        if (i == warm)
            rt.start();
        mark = uint8_t(i % 255 + 1);
        if (!client)
            wait_until([&] { return *last == mark; }, "an RDMA Write");
        src()[bytes - 1] = mark;
        post(IWV_WR_RDMA_WRITE, 0, bytes, peer_.dst, 1, false);
        if (client)
            wait_until([&] { return *last == mark; }, "an RDMA Write");
        if (i >= warm)
            rt.lap();
    }
    perf::check_pattern(dst(), bytes - 1, seed, "rdma_write latency");
    if (*last != mark)
        die("data check failed: rdma_write latency: last byte " + std::to_string(*last) + ", expected " + std::to_string(mark));
    if (!client) {
        serve_until_barrier(ctl); // our last Write may still be on its way out
        return 0;
    }
    ctl.barrier();
    return rt.one_way_us(o_.median);
}

double RdmaEndpoint::read_latency(size_t bytes, int iters, bool client, Control& ctl) {
    const uint32_t seed = perf::pattern_seed("rdma_read", "latency", bytes);
    if (!client) {
        perf::fill_pattern(src(), bytes, seed);
        ctl.barrier();
        serve_until_barrier(ctl);
        return 0;
    }
    ctl.barrier();
    const int warm = iters / 10;
    perf::RoundTrips rt;
    for (int i = 0; i < iters + warm; ++i) {
        if (i == warm)
            rt.start();
        post(IWV_WR_RDMA_READ, kDst, bytes, peer_.src, 1, true);
        completions(1, IWV_WC_RDMA_READ, 0);
        if (i >= warm)
            rt.lap();
    }
    perf::check_pattern(dst(), bytes, seed, "rdma_read latency");
    ctl.barrier();
    return rt.one_way_us(o_.median);
}

// Each side posts the receive for the next message before sending, so that no Send ever finds
// the receive queue empty (which would be a fatal error for the connection).
double RdmaEndpoint::send_latency(size_t bytes, int iters, bool client, Control& ctl) {
    const uint32_t seed = perf::pattern_seed("send", "latency", bytes);
    perf::fill_pattern(src(), bytes, seed);
    const int warm = iters / 10, n = iters + warm;
    if (!client)
        post_recv(kDst, bytes);
    ctl.barrier();
    perf::RoundTrips rt;
    for (int i = 0; i < n; ++i) {
        if (i == warm)
            rt.start();
        if (client) {
            post_recv(kDst, bytes);
            post(IWV_WR_SEND, 0, bytes, 0, 1, false);
            completions(1, IWV_WC_RECV, bytes);
        } else {
            completions(1, IWV_WC_RECV, bytes);
            if (i + 1 < n)
                post_recv(kDst, bytes);
            post(IWV_WR_SEND, 0, bytes, 0, 1, false);
        }
        if (i >= warm)
            rt.lap();
    }
    perf::check_pattern(dst(), bytes, seed, "send latency");
    if (!client) {
        serve_until_barrier(ctl);
        return 0;
    }
    ctl.barrier();
    return rt.one_way_us(o_.median);
}

double RdmaEndpoint::write_bandwidth(size_t bytes, int iters, bool client, Control& ctl) {
    const uint32_t seed = perf::pattern_seed("rdma_write", "bandwidth", bytes);
    const int rounds = iters + 1; // one round of warm-up
    if (!client) {
        post_recv(ctl_offset(), 4);
        ctl.barrier();
        for (int r = 0; r < rounds; ++r) {
            completions(1, IWV_WC_RECV, 4); // the Send behind the round's Writes
            if (r + 1 < rounds)
                post_recv(ctl_offset(), 4);
            post(IWV_WR_SEND, ctl_offset() + 64, 4, 0, 1, false);
        }
        perf::check_pattern(dst(), bytes, seed, "rdma_write bandwidth");
        serve_until_barrier(ctl);
        return 0;
    }
    perf::fill_pattern(src(), bytes, seed);
    ctl.barrier();
    const double mbs = timed_rounds(bytes, iters, [&] {
        post_recv(ctl_offset(), 4);
        // The Writes and the Send that follows them in one chain: one call, one lock.
        std::vector<iwv_sge> sg(size_t(o_.window) + 1, sge(0, bytes));
        sg.back() = sge(ctl_offset() + 64, 4);
        std::vector<iwv_send_wr> wr(size_t(o_.window) + 1);
        for (size_t i = 0; i < wr.size(); ++i) {
            wr[i] = iwv_send_wr{};
            wr[i].next = i + 1 < wr.size() ? &wr[i + 1] : nullptr;
            wr[i].sg_list = &sg[i];
            wr[i].num_sge = 1;
            wr[i].opcode = i + 1 < wr.size() ? IWV_WR_RDMA_WRITE : IWV_WR_SEND;
            wr[i].rdma.remote_addr = peer_.dst;
            wr[i].rdma.rkey = peer_.rkey;
        }
        post_chain(wr.data());
        completions(1, IWV_WC_RECV, 4); // the server's acknowledgement
    });
    ctl.barrier();
    return mbs;
}

double RdmaEndpoint::read_bandwidth(size_t bytes, int iters, bool client, Control& ctl) {
    const uint32_t seed = perf::pattern_seed("rdma_read", "bandwidth", bytes);
    if (!client) {
        perf::fill_pattern(src(), bytes, seed);
        ctl.barrier();
        serve_until_barrier(ctl);
        return 0;
    }
    ctl.barrier();
    const double mbs = timed_rounds(bytes, iters, [&] {
        post(IWV_WR_RDMA_READ, kDst, bytes, peer_.src, o_.window, true);
        completions(1, IWV_WC_RDMA_READ, 0); // Reads complete in order: the last one ends the round
    });
    perf::check_pattern(dst(), bytes, seed, "rdma_read bandwidth");
    ctl.barrier();
    return mbs;
}

double RdmaEndpoint::send_bandwidth(size_t bytes, int iters, bool client, Control& ctl) {
    const uint32_t seed = perf::pattern_seed("send", "bandwidth", bytes);
    const int rounds = iters + 1;
    if (!client) {
        post_recv(kDst, bytes, o_.window);
        ctl.barrier();
        for (int r = 0; r < rounds; ++r) {
            completions(o_.window, IWV_WC_RECV, bytes);
            if (r + 1 < rounds)
                post_recv(kDst, bytes, o_.window); // before the acknowledgement lets the next round go
            post(IWV_WR_SEND, ctl_offset() + 64, 4, 0, 1, false);
        }
        perf::check_pattern(dst(), bytes, seed, "send bandwidth");
        serve_until_barrier(ctl);
        return 0;
    }
    perf::fill_pattern(src(), bytes, seed);
    ctl.barrier();
    const double mbs = timed_rounds(bytes, iters, [&] {
        post_recv(ctl_offset(), 4);
        post(IWV_WR_SEND, 0, bytes, 0, o_.window, false);
        completions(1, IWV_WC_RECV, 4);
    });
    ctl.barrier();
    return mbs;
}

double RdmaEndpoint::timed_rounds(size_t bytes, int iters, const std::function<void()>& round) const {
    double t0 = 0;
    for (int r = 0; r <= iters; ++r) {
        if (r == 1)
            t0 = now_s();
        round();
    }
    return double(bytes) * o_.window * iters / (now_s() - t0) / 1e6;
}

} // namespace iwperf
