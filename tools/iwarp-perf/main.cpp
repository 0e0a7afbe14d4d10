// SPDX-License-Identifier: BSD-3-Clause
// iwarp-perf: perftest-style latency and bandwidth of the software iWARP RNIC (RDMA Write, RDMA
// Read, Send/Receive through the verbs API) between two processes, with the raw SCTP transport
// core and kernel TCP measured the same way (sctp-perf's loop, tools/perf/) in the same run.
// Sizes 1 B .. 4 MiB (powers of 2); latency is one-way (round trip / 2) in us, bandwidth in MB/s
// (10^6 bytes/s) over rounds of 64 operations. The receiving side checks the data of every size.
//
//   iwarp-perf [--quick] [--json] [--only T[,T...]] [--test latency|bandwidth] [--addr A]
//              [--mode caller|thread] [--spin-us N] [--set key=value ...]
//       runs both sides (the server is a forked child) and prints tables with ratios.
//       T: rdma_write, rdma_read, send, sctp, tcp (default all).
//   iwarp-perf --server [...]          prints one line (the contact) and serves one client.
//   iwarp-perf --client "<that line>"  runs the client side against it; the client's --quick,
//                                      --only and --test decide, the server follows.
// --mode is the RNIC's progress engine (caller: the benchmark's loop drives it; thread: a device
// thread); --set applies SCTP settings (sctp-perf --list-settings) to both SCTP users.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "channel.hpp"
#include "control.hpp"
#include "rdma_bench.hpp"
#include "sctp_channel.hpp"
#include "tcp_channel.hpp"

using namespace perf;
using iwperf::Control;
using iwperf::RdmaEndpoint;

namespace {

const std::vector<std::string> kTransports = {"rdma_write", "rdma_read", "send", "sctp", "tcp"};
const std::vector<std::string> kRdma = {"rdma_write", "rdma_read", "send"};

// What the client decides and the server follows.
struct Plan {
    bool quick = false;
    std::set<std::string> transports{kTransports.begin(), kTransports.end()};
    std::set<std::string> tests{"latency", "bandwidth"};

    std::string encode() const {
        std::string s = std::string(quick ? "quick" : "full") + " ";
        for (const auto& t : transports) s += t + ",";
        s += " ";
        for (const auto& t : tests) s += t + ",";
        return s;
    }
    static Plan decode(const std::string& line) {
        Plan p;
        std::istringstream in(line);
        std::string q, ts, tests;
        if (!(in >> q >> ts >> tests))
            die("bad plan from the client: " + line);
        p.quick = q == "quick";
        p.transports = split(ts);
        p.tests = split(tests);
        return p;
    }
    static std::set<std::string> split(const std::string& list) {
        std::set<std::string> out;
        std::istringstream in(list);
        for (std::string item; std::getline(in, item, ',');)
            if (!item.empty())
                out.insert(item);
        return out;
    }
    bool has(const std::string& t) const { return transports.count(t) != 0; }
    bool any_rdma() const {
        for (const auto& t : kRdma)
            if (has(t)) return true;
        return false;
    }
};

struct Options {
    bool json = false, server = false;
    std::string client_line;
    Plan plan;
    SctpOptions sctp;
    iwperf::RdmaOptions rdma;
};

// ---- the schedule every transport follows --------------------------------------------------
Schedule schedule(const Plan& p) {
    Schedule s;
    std::vector<size_t> sizes;
    if (p.quick)
        sizes = {1, 8, 64, 512, 4096, 32768, 262144, 1u << 20, 4u << 20};
    else
        for (size_t v = 1; v <= (4u << 20); v *= 2)
            sizes.push_back(v);
    if (p.tests.count("latency"))
        s.latency_sizes = sizes;
    if (p.tests.count("bandwidth"))
        s.bandwidth_sizes = sizes;
    const bool quick = p.quick;
    s.latency_iters = [quick](size_t size) {
        const int base = quick ? 200 : 1000;
        return size <= 16384 ? base : std::max(quick ? 10 : 20, int(base * 16384.0 / double(size)));
    };
    s.bandwidth_iters = [quick](size_t size) { // as sctp-perf: a byte budget per size
        const double budget = quick ? 16e6 : 64e6;
        return std::max(quick ? 1 : 2, std::min(int(budget / (64.0 * double(size))), 50));
    };
    s.window = 64;
    s.median = true; // as RdmaOptions::median: every transport the same way
    return s;
}

// The iWARP passes, in the order both sides follow.
void run_rdma(RdmaEndpoint& ep, Control& ctl, const Plan& p, bool client, std::vector<Result>* out) {
    const Schedule s = schedule(p);
    for (const char* test : {"latency", "bandwidth"}) {
        const bool lat = std::strcmp(test, "latency") == 0;
        for (const auto& t : kRdma) {
            if (!p.has(t))
                continue;
            for (size_t size : lat ? s.latency_sizes : s.bandwidth_sizes) {
                const double v = ep.run(t, test, size, lat ? s.latency_iters(size) : s.bandwidth_iters(size), client, ctl);
                if (client)
                    out->push_back({t, test, size, v});
            }
        }
    }
}

// Server: every transport of the client's plan, in the order the client runs them.
void serve(const Options& o, FILE* line_out) {
    SctpChannel sctp(o.sctp); // first: it starts the process's usrsctp stack with the settings
    RdmaEndpoint rdma(o.rdma);
    const std::string addr = first_address(o.sctp.addr);
    uint16_t ctl_port = 0, tcp_port = 0;
    int ctl_listen = tcp_listen(addr, &ctl_port), tcp_listen_fd = tcp_listen(addr, &tcp_port);
    std::fprintf(line_out, "IWARP %s %u %u CTRL %u TCP %u CARD %s\n", addr.c_str(), rdma.sctp_port(), rdma.udp_port(),
                 ctl_port, tcp_port, sctp.card());
    std::fflush(line_out);
    Control ctl(accept(ctl_listen, nullptr, nullptr));
    close(ctl_listen);
    const Plan plan = Plan::decode(ctl.recv_line());
    std::vector<Result> none;
    if (plan.any_rdma()) {
        rdma.accept();
        run_rdma(rdma, ctl, plan, false, &none);
    }
    if (plan.has("sctp"))
        run_schedule(sctp, false, schedule(plan), "sctp", &none);
    if (plan.has("tcp")) {
        TcpChannel tcp(accept(tcp_listen_fd, nullptr, nullptr));
        run_schedule(tcp, false, schedule(plan), "tcp", &none);
    }
    close(tcp_listen_fd);
    ctl.barrier(); // the client is done with every transport before anything closes
}

std::vector<Result> run_client(const Options& o, const std::string& line) {
    char addr[256], card[SCTPM_CARD_MAX];
    unsigned sctp_port = 0, udp_port = 0, ctl_port = 0, tcp_port = 0;
    if (std::sscanf(line.c_str(), "IWARP %255s %u %u CTRL %u TCP %u CARD %1023s", addr, &sctp_port, &udp_port, &ctl_port,
                    &tcp_port, card) != 6)
        die("bad server line: " + without_key(line));
    SctpChannel sctp(o.sctp);
    sctp.connect(card);
    RdmaEndpoint rdma(o.rdma);
    Control ctl(tcp_connect(addr, uint16_t(ctl_port)));
    ctl.send_line(o.plan.encode());
    std::vector<Result> results;
    if (o.plan.any_rdma()) {
        rdma.connect(addr, uint16_t(sctp_port), uint16_t(udp_port));
        run_rdma(rdma, ctl, o.plan, true, &results);
    }
    if (o.plan.has("sctp"))
        run_schedule(sctp, true, schedule(o.plan), "sctp", &results);
    if (o.plan.has("tcp")) {
        TcpChannel tcp(tcp_connect(addr, uint16_t(tcp_port)));
        run_schedule(tcp, true, schedule(o.plan), "tcp", &results);
    }
    ctl.barrier();
    return results;
}

void print(const std::vector<Result>& rs, bool json) {
    if (json) {
        print_json(rs);
        return;
    }
    print_table(rs, kTransports,
                {{"rdma_write", "sctp", "write/sctp"},
                 {"rdma_read", "sctp", "read/sctp"},
                 {"send", "sctp", "send/sctp"},
                 {"sctp", "tcp", "sctp/tcp"}});
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc)
                die(a + " needs a value");
            return argv[++i];
        };
        if (a == "--quick") o.plan.quick = true;
        else if (a == "--json") o.json = true;
        else if (a == "--server") o.server = true;
        else if (a == "--client") o.client_line = next();
        else if (a == "--only") {
            o.plan.transports = Plan::split(next());
            for (const auto& t : o.plan.transports)
                if (std::find(kTransports.begin(), kTransports.end(), t) == kTransports.end())
                    die("--only takes rdma_write, rdma_read, send, sctp, tcp (comma-separated), not '" + t + "'");
        } else if (a == "--test") {
            std::string t = next();
            if (t != "latency" && t != "bandwidth")
                die("--test takes latency or bandwidth");
            o.plan.tests = {t};
        } else if (a == "--addr") {
            o.sctp.addr = next();
            o.rdma.addr = first_address(o.sctp.addr);
        } else if (a == "--mode") {
            std::string m = next();
            if (m != "caller" && m != "thread")
                die("--mode takes caller or thread");
            o.rdma.mode = m == "thread" ? IWV_PROGRESS_THREAD : IWV_PROGRESS_CALLER;
        } else if (a == "--spin-us") {
            o.rdma.spin_us = std::atoi(next().c_str());
        } else if (a == "--set") {
            std::string kv = next();
            auto eq = kv.find('=');
            if (eq == std::string::npos)
                die("--set wants key=value, got '" + kv + "'");
            o.sctp.settings.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
            // Through the environment too: the RNIC reads its path settings from there.
            std::string var = "MPIR_CVAR_CH3_SCTP_" + kv.substr(0, eq);
            for (auto& c : var) c = char(std::toupper(c));
            setenv(var.c_str(), kv.substr(eq + 1).c_str(), 1);
        } else
            die("unknown option '" + a + "' (see the comment at the top of tools/iwarp-perf/main.cpp)");
    }
    return o;
}

} // namespace

int main(int argc, char** argv) {
    set_program("iwarp-perf");
    Options o = parse(argc, argv);
    if (o.server) {
        serve(o, stdout);
        return 0;
    }
    if (!o.client_line.empty()) {
        print(run_client(o, o.client_line), o.json);
        return 0;
    }
    print(run_both_sides([&](FILE* f) { serve(o, f); }, [&](const std::string& line) { return run_client(o, line); }),
          o.json);
    return 0;
}
