// SPDX-License-Identifier: BSD-3-Clause
// sctp-perf: latency (ping-pong, one-way µs) and streaming bandwidth (window of 64, MB/s) of the
// transport core between two processes, with kernel TCP measured the same way in the same run.
// The channels and the measurement loop are in tools/perf/ (shared with iwarp-perf).
//
//   sctp-perf [--quick] [--bidir] [--json] [--only sctp|tcp|udp|engine[,...]] [--addr A[,B...]] [--set key=value ...]
//             [--max-size BYTES] [--min-size BYTES] [--latency-only] [--bandwidth-only] [--iters N] [--bw-iters N]
//       runs both sides (the server is a forked child) and prints a table with SCTP/TCP ratios.
//       --only takes one channel or a comma-separated list. `engine` is our own SCTP engine
//       (src/sctp/, issue 48) over its own UDP socket (tools/perf/engine_channel.hpp); it runs only
//       when --only names it, with the schedule of the others, and adds the columns engine/sctp
//       and engine/udp. --set path_mtu=N (the link MTU: SCTP packets of N - 28 bytes) applies to
//       both stacks, so `--only sctp,engine,udp --set path_mtu=1500` compares them at MTU 1500.
//       --set engine_max_burst=N sets the engine's Max.Burst (default none).
//       Latency is also taken over plain kernel UDP datagrams up to 65000 bytes (column udp,
//       ratio sctp/udp): the kernel's share of a message over UDP encapsulation, a floor that
//       the SCTP stack in user space adds to. Run it under `taskset -c 0` for the CPU per message
//       (both processes on one core take turns, as ranks do when they outnumber the cores).
//       --max-size and --latency-only shorten the schedule, --iters sets the round trips of each
//       latency size (a profile of small messages alone); give them to both sides when they run apart.
//       --bidir adds the bidirectional test (both sides stream at once; MB/s of both directions);
//       give it to both sides when they run apart (--server, --client).
//       --min-size drops the sizes below it, --bandwidth-only the latency test, --bw-iters sets the
//       timed rounds of each bandwidth size (after one warm-up round): `--only engine --bandwidth-only
//       --min-size 1048576 --max-size 1048576 --bw-iters 20` moves 21 x 64 MiB (CPU per MB by
//       difference of two runs, tools/engine-slice-measure).
//   sctp-perf --server [...]          prints one line "CARD <sctp card> TCP <addr>:<port> UDP <port> [ENGINE <port>]"
//                                     and serves (CARD none when sctp does not run).
//   sctp-perf --client "<that line>"  runs the client side against it.
//   sctp-perf --list-settings         prints the transport's settings with descriptions.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "channel.hpp"
#include "engine_channel.hpp"
#include "sctp_channel.hpp"
#include "tcp_channel.hpp"
#include "udp_channel.hpp"

using namespace perf;

namespace {

struct Options {
    bool quick = false, bidir = false, json = false, server = false, latency_only = false, bandwidth_only = false;
    size_t max_size = 4u << 20, min_size = 1;
    int iters = 0;    // round trips per latency size; 0: the schedule's own
    int bw_iters = 0; // timed rounds per bandwidth size; 0: the schedule's own
    std::string client_line;
    std::vector<std::string> only; // empty: sctp, tcp and udp
    SctpOptions sctp;
    std::vector<std::pair<std::string, std::string>> engine_settings; // --set engine_*=value
};

// ---- the schedule both sides follow ----------------------------------------------------------
Schedule schedule(const Options& o) {
    const bool quick = o.quick;
    Schedule s;
    for (size_t v = 1; v <= o.max_size && !o.bandwidth_only; v *= 2) // past 64 KiB: beyond one initial window
        if (v >= o.min_size)
            s.latency_sizes.push_back(v);
    for (size_t v = 1024; v <= o.max_size && !o.latency_only; v *= 4)
        if (v >= o.min_size)
            s.bandwidth_sizes.push_back(v);
    s.latency_iters = [quick, fixed = o.iters](size_t size) {
        return fixed > 0 ? fixed : (quick ? 200 : 1000) / (size >= (1u << 20) ? 20 : size >= 16384 ? 4 : 1);
    };
    s.bandwidth_iters = [quick, fixed = o.bw_iters](size_t size) {
        if (fixed > 0)
            return fixed;
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

bool runs(const Options& o, const char* transport) {
    if (o.only.empty())
        return std::string(transport) != "engine"; // the engine runs when asked for
    return std::find(o.only.begin(), o.only.end(), transport) != o.only.end();
}

// The engine's settings from the command line: the address and the path MTU the transport gets.
EngineOptions engine_options(const Options& o) {
    EngineOptions e;
    const std::string a = first_address(o.sctp.addr);
    if (!a.empty())
        e.addr = a;
    for (const auto& [k, v] : o.sctp.settings)
        if (k == "path_mtu")
            e.link_mtu = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    for (const auto& [k, v] : o.engine_settings) {
        char* end = nullptr;
        const unsigned long n = std::strtoul(v.c_str(), &end, 10);
        if (k != "engine_max_burst" || v.empty() || *end != '\0' || n > 1000000)
            die("--set " + k + "=" + v + ": the engine knows engine_max_burst=N (0: no limit)");
        e.max_burst = static_cast<uint32_t>(n);
    }
    return e;
}

// The engine's channel; dies with the reason when its socket cannot be made (e.g. an IPv6 --addr).
std::unique_ptr<EngineChannel> open_engine(const Options& o) {
    try {
        return std::make_unique<EngineChannel>(engine_options(o));
    } catch (const std::exception& e) {
        die(std::string("engine: ") + e.what());
    }
}

// Server: serve SCTP, then TCP, then the UDP floor, then the engine, following the same schedule.
// `line_out` gets the contact line. A channel that does not run is not opened (no usrsctp threads
// in a profile of the engine).
void serve(const Options& o, FILE* line_out) {
    std::unique_ptr<SctpChannel> sctp;
    if (runs(o, "sctp"))
        sctp = std::make_unique<SctpChannel>(o.sctp);
    const std::string addr = first_address(o.sctp.addr);
    uint16_t tcp_port = 0;
    int lfd = runs(o, "tcp") ? tcp_listen(addr, &tcp_port) : -1;
    UdpChannel udp(addr);
    std::unique_ptr<EngineChannel> engine;
    if (runs(o, "engine"))
        engine = open_engine(o);
    std::fprintf(line_out, "CARD %s TCP %s:%u UDP %u", sctp ? sctp->card() : "none", addr.c_str(), tcp_port,
                 udp.port());
    if (engine)
        std::fprintf(line_out, " ENGINE %u", engine->port());
    std::fprintf(line_out, "\n");
    std::fflush(line_out);
    std::vector<Result> none;
    if (sctp)
        run_schedule(*sctp, false, schedule(o), "sctp", &none);
    if (lfd >= 0) {
        TcpChannel ch(accept(lfd, nullptr, nullptr));
        run_schedule(ch, false, schedule(o), "tcp", &none);
        close(lfd);
    }
    if (runs(o, "udp")) {
        udp.accept();
        run_schedule(udp, false, udp_schedule(o), "udp", &none);
    }
    if (engine) {
        engine->accept();
        run_schedule(*engine, false, schedule(o), "engine", &none);
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
    if (runs(o, "sctp")) {
        SctpChannel sctp(o.sctp);
        sctp.connect(card);
        run_schedule(sctp, true, schedule(o), "sctp", &results);
    }
    if (runs(o, "tcp")) {
        TcpChannel ch(tcp_connect(tcp_addr, tcp_port));
        run_schedule(ch, true, schedule(o), "tcp", &results);
    }
    if (runs(o, "udp")) {
        UdpChannel ch(first_address(o.sctp.addr));
        ch.connect(tcp_addr, static_cast<uint16_t>(udp_port));
        run_schedule(ch, true, udp_schedule(o), "udp", &results);
    }
    if (runs(o, "engine")) {
        const auto at = line.find(" ENGINE ");
        if (at == std::string::npos)
            die("the server line has no ENGINE port (give the server --only ...,engine too)");
        const unsigned engine_port = static_cast<unsigned>(std::strtoul(line.c_str() + at + 8, nullptr, 10));
        if (engine_port == 0 || engine_port > 65535)
            die("bad ENGINE port in the server line: " + without_key(line));
        const auto ch = open_engine(o);
        ch->connect(tcp_addr, static_cast<uint16_t>(engine_port));
        run_schedule(*ch, true, schedule(o), "engine", &results);
    }
    return results;
}

void print(const std::vector<Result>& rs, bool json) {
    if (json) {
        print_json(rs);
        return;
    }
    std::vector<std::string> columns{"sctp", "tcp", "udp"};
    std::vector<Ratio> ratios{{"sctp", "tcp", "sctp/tcp"}, {"sctp", "udp", "sctp/udp"}};
    if (std::any_of(rs.begin(), rs.end(), [](const Result& r) { return r.transport == "engine"; })) {
        columns.push_back("engine");
        ratios.push_back({"engine", "sctp", "engine/sctp"});
        ratios.push_back({"engine", "udp", "engine/udp"});
    }
    print_table(rs, columns, ratios);
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
        else if (a == "--only") {
            std::stringstream list(next());
            for (std::string t; std::getline(list, t, ',');)
                if (!t.empty())
                    o.only.push_back(t);
        }
        else if (a == "--addr") o.sctp.addr = next();
        else if (a == "--latency-only") o.latency_only = true;
        else if (a == "--bandwidth-only") o.bandwidth_only = true;
        else if (a == "--min-size") o.min_size = static_cast<size_t>(count_option(a, next(), 1ll << 30));
        else if (a == "--bw-iters") o.bw_iters = static_cast<int>(count_option(a, next(), 1000000));
        else if (a == "--max-size") o.max_size = static_cast<size_t>(count_option(a, next(), 1ll << 30));
        else if (a == "--iters") o.iters = static_cast<int>(count_option(a, next(), 100000000));
        else if (a == "--set") {
            std::string kv = next();
            auto eq = kv.find('=');
            if (eq == std::string::npos)
                die("--set wants key=value, got '" + kv + "'");
            if (kv.rfind("engine_", 0) == 0) // the engine's own (the transport does not know them)
                o.engine_settings.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
            else
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
    for (const auto& t : o.only)
        if (t != "sctp" && t != "tcp" && t != "udp" && t != "engine")
            die("--only takes sctp, tcp, udp or engine (or a comma-separated list), got '" + t + "'");
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
