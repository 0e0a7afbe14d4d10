// SPDX-License-Identifier: BSD-3-Clause
// sctp-perf: latency (ping-pong, one-way µs) and streaming bandwidth (window of 64, MB/s) of the
// transport core between two processes, with kernel TCP measured the same way in the same run.
// The channels and the measurement loop are in tools/perf/ (shared with iwarp-perf).
//
//   sctp-perf [--quick] [--bidir] [--json] [--only sctp|tcp|udp] [--addr A[,B...]] [--set key=value ...]
//             [--max-size BYTES] [--latency-only] [--iters N]
//       runs both sides (the server is a forked child) and prints a table with SCTP/TCP ratios.
//       Latency is also taken over plain kernel UDP datagrams up to 65000 bytes (column udp,
//       ratio sctp/udp): the kernel's share of a message over UDP encapsulation, a floor that
//       the SCTP stack in user space adds to. Run it under `taskset -c 0` for the CPU per message
//       (both processes on one core take turns, as ranks do when they outnumber the cores).
//       --max-size and --latency-only shorten the schedule, --iters sets the round trips of each
//       latency size (a profile of small messages alone); give them to both sides when they run apart.
//       --bidir adds the bidirectional test (both sides stream at once; MB/s of both directions);
//       give it to both sides when they run apart (--server, --client).
//   sctp-perf --server [...]          prints one line "CARD <sctp card> TCP <addr>:<port> UDP <port>" and serves.
//   sctp-perf --client "<that line>"  runs the client side against it.
//   sctp-perf --list-settings         prints the transport's settings with descriptions.
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "channel.hpp"
#include "sctp_channel.hpp"
#include "tcp_channel.hpp"
#include "udp_channel.hpp"

using namespace perf;

namespace {

struct Options {
    bool quick = false, bidir = false, json = false, server = false, latency_only = false;
    size_t max_size = 4u << 20;
    int iters = 0; // round trips per latency size; 0: the schedule's own
    std::string client_line, only;
    SctpOptions sctp;
};

// ---- the schedule both sides follow ----------------------------------------------------------
Schedule schedule(const Options& o) {
    const bool quick = o.quick;
    Schedule s;
    for (size_t v = 1; v <= o.max_size; v *= 2) // past 64 KiB: messages beyond one initial window
        s.latency_sizes.push_back(v);
    for (size_t v = 1024; v <= o.max_size && !o.latency_only; v *= 4)
        s.bandwidth_sizes.push_back(v);
    s.latency_iters = [quick, fixed = o.iters](size_t size) {
        return fixed > 0 ? fixed : (quick ? 200 : 1000) / (size >= (1u << 20) ? 20 : size >= 16384 ? 4 : 1);
    };
    s.bandwidth_iters = [quick](size_t size) {
        const double budget = quick ? 16e6 : 64e6; // bytes per size: enough to get past warm-up effects
        int it = static_cast<int>(budget / (64.0 * size));
        return std::max(quick ? 1 : 2, std::min(it, 50));
    };
    s.window = 64;
    s.bidirectional = o.bidir;
    return s;
}

// The UDP floor: latency only, of the sizes that fit one datagram.
Schedule udp_schedule(const Options& o) {
    Schedule s = schedule(o);
    std::erase_if(s.latency_sizes, [](size_t v) { return v > kUdpMaxMessage; });
    s.bandwidth_sizes.clear();
    s.bidirectional = false;
    return s;
}

bool runs(const Options& o, const char* transport) { return o.only.empty() || o.only == transport; }

// Server: serve SCTP, then TCP, then the UDP floor, following the same schedule. `line_out` gets the contact line.
void serve(const Options& o, FILE* line_out) {
    SctpChannel sctp(o.sctp);
    const std::string addr = first_address(o.sctp.addr);
    uint16_t tcp_port = 0;
    int lfd = runs(o, "tcp") ? tcp_listen(addr, &tcp_port) : -1;
    UdpChannel udp(addr);
    std::fprintf(line_out, "CARD %s TCP %s:%u UDP %u\n", sctp.card(), addr.c_str(), tcp_port, udp.port());
    std::fflush(line_out);
    std::vector<Result> none;
    if (runs(o, "sctp"))
        run_schedule(sctp, false, schedule(o), "sctp", &none);
    if (lfd >= 0) {
        TcpChannel ch(accept(lfd, nullptr, nullptr));
        run_schedule(ch, false, schedule(o), "tcp", &none);
        close(lfd);
    }
    if (runs(o, "udp")) {
        udp.accept();
        run_schedule(udp, false, udp_schedule(o), "udp", &none);
    }
}

std::vector<Result> run_client(const Options& o, const std::string& line) {
    char card[SCTPM_CARD_MAX], tcp[256];
    unsigned udp_port = 0;
    if (std::sscanf(line.c_str(), "CARD %1023s TCP %255s UDP %u", card, tcp, &udp_port) != 3 || udp_port > 65535)
        die("bad server line: " + without_key(line));
    std::string tcp_addr = tcp;
    uint16_t tcp_port = static_cast<uint16_t>(std::atoi(tcp_addr.substr(tcp_addr.rfind(':') + 1).c_str()));
    tcp_addr = tcp_addr.substr(0, tcp_addr.rfind(':'));
    std::vector<Result> results;
    SctpChannel sctp(o.sctp);
    sctp.connect(card);
    if (runs(o, "sctp"))
        run_schedule(sctp, true, schedule(o), "sctp", &results);
    if (runs(o, "tcp")) {
        TcpChannel ch(tcp_connect(tcp_addr, tcp_port));
        run_schedule(ch, true, schedule(o), "tcp", &results);
    }
    if (runs(o, "udp")) {
        UdpChannel ch(first_address(o.sctp.addr));
        ch.connect(tcp_addr, static_cast<uint16_t>(udp_port));
        run_schedule(ch, true, udp_schedule(o), "udp", &results);
    }
    return results;
}

void print(const std::vector<Result>& rs, bool json) {
    if (json)
        print_json(rs);
    else
        print_table(rs, {"sctp", "tcp", "udp"}, {{"sctp", "tcp", "sctp/tcp"}, {"sctp", "udp", "sctp/udp"}});
}

// The value of a count option, from 1 to max; dies naming the option otherwise.
long long count_option(const std::string& option, const std::string& v, long long max) {
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || n < 1 || n > max)
        die(option + " wants a count from 1 to " + std::to_string(max) + ", got '" + v + "'");
    return n;
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
        if (a == "--quick") o.quick = true;
        else if (a == "--json") o.json = true;
        else if (a == "--bidir") o.bidir = true;
        else if (a == "--server") o.server = true;
        else if (a == "--client") o.client_line = next();
        else if (a == "--only") o.only = next();
        else if (a == "--addr") o.sctp.addr = next();
        else if (a == "--latency-only") o.latency_only = true;
        else if (a == "--max-size") o.max_size = static_cast<size_t>(count_option(a, next(), 1ll << 30));
        else if (a == "--iters") o.iters = static_cast<int>(count_option(a, next(), 100000000));
        else if (a == "--set") {
            std::string kv = next();
            auto eq = kv.find('=');
            if (eq == std::string::npos)
                die("--set wants key=value, got '" + kv + "'");
            o.sctp.settings.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
        } else if (a == "--list-settings") {
            for (const char* const* k = sctpm_config_keys(); *k; ++k)
                std::printf("MPIR_CVAR_CH3_SCTP_%-22s %s\n", [&] {
                    std::string u = *k;
                    for (auto& c : u) c = static_cast<char>(std::toupper(c));
                    return u;
                }().c_str(), sctpm_config_describe(*k));
            std::exit(0);
        } else
            die("unknown option '" + a + "' (see the comment at the top of tools/sctp-perf/main.cpp)");
    }
    if (!o.only.empty() && o.only != "sctp" && o.only != "tcp" && o.only != "udp")
        die("--only takes sctp, tcp or udp, got '" + o.only + "'");
    return o;
}

} // namespace

int main(int argc, char** argv) {
    set_program("sctp-perf");
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
