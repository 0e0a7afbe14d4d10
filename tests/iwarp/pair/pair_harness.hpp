// SPDX-License-Identifier: BSD-3-Clause
// The harness of the two-process iWARP tests: each test forks two children (usrsctp can be
// started once per process) that exchange ports, addresses and STags through pipes, each with
// one device, PD, CQ, QP and registered buffer. A child that fails prints why and exits non-zero;
// the parent kills both after a timeout, and each child also has an alarm. Forking, waiting and
// CHILD_CHECK: ../../wait_pair.hpp.
#pragma once
#include <gtest/gtest.h>

#include "iwarp_verbs.h"
#include "../../wait_pair.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <execinfo.h>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace iwtest {

constexpr int kWaitMs = 30000;
constexpr size_t kBuf = 8u << 20;

// A byte pattern that is a function of (seed, position): any misplaced byte shows.
inline void fill(uint8_t* p, size_t n, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 0x9e3779b9u;
    for (size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = uint8_t(x);
    }
}
inline bool same(const uint8_t* p, size_t n, uint32_t seed) {
    std::vector<uint8_t> want(n);
    fill(want.data(), n, seed);
    return n == 0 || std::memcmp(p, want.data(), n) == 0;
}

// The pipes between the two children.
struct Link {
    int rd = -1, wr = -1;
    template <class T>
    void put(const T& v) const {
        CHILD_CHECK(write(wr, &v, sizeof v) == ssize_t(sizeof v), "pipe write");
    }
    template <class T>
    T get() const {
        T v;
        size_t got = 0;
        while (got < sizeof v) {
            ssize_t n = read(rd, reinterpret_cast<char*>(&v) + got, sizeof v - got);
            CHILD_CHECK(n > 0, "pipe read: the other side is gone");
            got += size_t(n);
        }
        return v;
    }
};

struct Remote {
    uint64_t addr;
    uint32_t rkey;
    uint32_t extra_rkey; // a second region, for Send with Invalidate
};

// One side: device, PD, CQ, QP, one large registered buffer.
struct Side {
    iwv_device* dev = nullptr;
    iwv_pd* pd = nullptr;
    iwv_cq* cq = nullptr;
    iwv_qp* qp = nullptr;
    std::vector<uint8_t> buf = std::vector<uint8_t>(kBuf);
    std::vector<uint8_t> extra = std::vector<uint8_t>(4096);
    iwv_mr* mr = nullptr;
    iwv_mr* extra_mr = nullptr;
    Link link;
    Remote peer{};
    iwv_progress_mode mode = IWV_PROGRESS_THREAD;

    void open(iwv_progress_mode m, uint32_t path_mtu) {
        alarm(100); // last resort against a hang inside a child
        mode = m;
        iwv_device_attr attr;
        iwv_device_attr_init(&attr);
        attr.progress = m;
        attr.bind_address = "127.0.0.1";
        attr.path_mtu = path_mtu;
        char err[256];
        dev = iwv_open_device(&attr, err, sizeof err);
        CHILD_CHECK(dev, "%s", err);
        pd = iwv_alloc_pd(dev);
        cq = iwv_create_cq(dev, 4096);
        CHILD_CHECK(pd && cq, "%s", iwv_last_error(dev));
        iwv_qp_init_attr qa{};
        qa.send_cq = cq;
        qa.recv_cq = cq;
        qa.cap = {1024, 1024, 4, 4, 0};
        qp = iwv_create_qp(pd, &qa);
        CHILD_CHECK(qp, "%s", iwv_last_error(dev));
        CHILD_CHECK(iwv_modify_qp(qp, IWV_QPS_INIT) == 0, "%s", iwv_last_error(dev));
        const int all = IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_WRITE | IWV_ACCESS_REMOTE_READ;
        mr = iwv_reg_mr(pd, buf.data(), buf.size(), all);
        extra_mr = iwv_reg_mr(pd, extra.data(), extra.size(), all);
        CHILD_CHECK(mr && extra_mr, "%s", iwv_last_error(dev));
    }
    iwv_sge sge(size_t off, size_t len) { return iwv_sge{uint64_t(uintptr_t(buf.data() + off)), uint32_t(len), mr->lkey}; }
    iwv_event event(iwv_event_type want) {
        iwv_event ev;
        CHILD_CHECK(iwv_get_event(dev, &ev, kWaitMs) == 1, "no event %d within %d ms", int(want), kWaitMs);
        CHILD_CHECK(ev.type == want, "event %d (%s) instead of %d", int(ev.type), ev.detail, int(want));
        return ev;
    }
    iwv_wc wc() {
        iwv_wc w;
        for (;;) {
            int n = iwv_poll_cq(cq, 1, &w);
            CHILD_CHECK(n >= 0, "CQ overflow");
            if (n == 1) return w;
            CHILD_CHECK(iwv_cq_wait(cq, kWaitMs) == 1, "no completion within %d ms", kWaitMs);
        }
    }
    iwv_wc wc_ok(uint64_t wr_id, iwv_wc_opcode op) {
        iwv_wc w = wc();
        CHILD_CHECK(w.status == IWV_WC_SUCCESS, "wr %llu: status %d vendor 0x%x", (unsigned long long)w.wr_id,
                    int(w.status), w.vendor_err);
        CHILD_CHECK(w.wr_id == wr_id && w.opcode == op, "got wr %llu op %d, wanted wr %llu op %d",
                    (unsigned long long)w.wr_id, int(w.opcode), (unsigned long long)wr_id, int(op));
        return w;
    }
    void post_recv(uint64_t id, std::vector<iwv_sge> sg) {
        iwv_recv_wr wr{id, nullptr, sg.data(), int(sg.size())};
        iwv_recv_wr* bad = nullptr;
        CHILD_CHECK(iwv_post_recv(qp, &wr, &bad) == 0, "%s", iwv_last_error(dev));
    }
    void post(uint64_t id, iwv_wr_opcode op, std::vector<iwv_sge> sg, unsigned flags = IWV_SEND_SIGNALED,
              uint64_t raddr = 0, uint32_t rkey = 0, uint32_t inval = 0) {
        iwv_send_wr wr{};
        wr.wr_id = id;
        wr.opcode = op;
        wr.sg_list = sg.data();
        wr.num_sge = int(sg.size());
        wr.send_flags = flags;
        wr.rdma.remote_addr = raddr;
        wr.rdma.rkey = rkey;
        wr.invalidate_rkey = inval;
        iwv_send_wr* bad = nullptr;
        CHILD_CHECK(iwv_post_send(qp, &wr, &bad) == 0, "%s", iwv_last_error(dev));
    }
    void close() {
        iwv_disconnect(qp);
        iwv_destroy_qp(qp);
        iwv_dereg_mr(mr);
        iwv_dereg_mr(extra_mr);
        iwv_destroy_cq(cq);
        iwv_dealloc_pd(pd);
        CHILD_CHECK(iwv_close_device(dev) == 0, "%s", iwv_last_error(dev));
    }
};

struct ConnParam {
    uint16_t ird = 8, ord = 8;
    std::string private_data;
};

// a: active, b: passive. Ports and regions are exchanged; both QPs are in RTS on return.
inline void connect_active(Side& s, const ConnParam& p = {}) {
    const auto ports = s.link.get<std::pair<uint16_t, uint16_t>>();
    iwv_conn_param cp{p.private_data.data(), uint16_t(p.private_data.size()), p.ird, p.ord};
    CHILD_CHECK(iwv_connect(s.qp, "127.0.0.1", ports.first, ports.second, &cp) == 0, "%s", iwv_last_error(s.dev));
    iwv_event ev = s.event(IWV_EVENT_ESTABLISHED);
    CHILD_CHECK(std::string(reinterpret_cast<char*>(ev.private_data), ev.private_data_len) == "welcome", "accept data");
    iwv_qp_attr at;
    iwv_query_qp(s.qp, &at);
    CHILD_CHECK(at.max_segment >= 516, "segment limit %u below RFC 5043 §9's 516", at.max_segment);
    CHILD_CHECK(at.ird == 8 && at.ord == 8, "negotiated IRD/ORD %u/%u", at.ird, at.ord);
    if (std::getenv("IWARP_TEST_VERBOSE")) std::fprintf(stderr, "DDP segment limit %u bytes\n", at.max_segment);
}
inline void connect_passive(Side& s, const ConnParam& p = {}) {
    s.link.put(std::make_pair(iwv_device_sctp_port(s.dev), iwv_device_udp_port(s.dev)));
    iwv_event ev = s.event(IWV_EVENT_CONNECT_REQUEST);
    CHILD_CHECK(std::string(reinterpret_cast<char*>(ev.private_data), ev.private_data_len) == "hello rnic",
                "initiate data");
    CHILD_CHECK(ev.ird == 8 && ev.ord == 8, "initiator IRD/ORD %u/%u", ev.ird, ev.ord);
    iwv_conn_param cp{"welcome", 7, p.ird, p.ord};
    CHILD_CHECK(iwv_accept(ev.request, s.qp, &cp) == 0, "%s", iwv_last_error(s.dev));
    iwv_qp_attr at;
    iwv_query_qp(s.qp, &at);
    CHILD_CHECK(at.state == IWV_QPS_RTS, "state %d after accept", int(at.state));
}
inline void exchange_regions(Side& s) {
    s.link.put(Remote{uint64_t(uintptr_t(s.buf.data())), s.mr->rkey, s.extra_mr->rkey});
    s.peer = s.link.get<Remote>();
}

using Role = std::function<void(Side&)>;

inline const char* mode_name(iwv_progress_mode m) {
    return m == IWV_PROGRESS_THREAD ? "DeviceThread" : m == IWV_PROGRESS_CALLER ? "CallerDriven" : "Standby";
}

// A crash in a child names where it happened (the parent only sees the signal).
inline void crash_handler(int sig) {
    void* frames[64];
    int n = backtrace(frames, 64);
    std::fprintf(stderr, "[pid %d] signal %d, backtrace:\n", getpid(), sig);
    backtrace_symbols_fd(frames, n, 2);
    std::signal(sig, SIG_DFL);
    raise(sig);
}

inline PairExit run_pair(iwv_progress_mode mode, const Role& a, const Role& b, int timeout_s = 120,
                         uint32_t path_mtu = 0) {
    auto child = [&](const Role& role, int rd, int wr) {
        std::signal(SIGSEGV, crash_handler);
        std::signal(SIGABRT, crash_handler);
        Side s;
        s.link = Link{rd, wr};
        s.open(mode, path_mtu);
        role(s);
        std::_Exit(0); // with s alive: the device may still place data into its buffer
    };
    return fork_pair([&](int rd, int wr) { child(a, rd, wr); }, [&](int rd, int wr) { child(b, rd, wr); }, timeout_s);
}

} // namespace iwtest
