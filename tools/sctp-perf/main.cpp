// sctp-perf: latency (ping-pong, one-way µs) and streaming bandwidth (window of 64, MB/s) of the
// transport core between two processes, with kernel TCP measured the same way in the same run.
//
//   sctp-perf [--quick] [--json] [--only sctp|tcp] [--addr A[,B...]] [--set key=value ...]
//       runs both sides (the server is a forked child) and prints a table with SCTP/TCP ratios.
//   sctp-perf --server [...]          prints one line "CARD <sctp card> TCP <addr>:<port>" and serves.
//   sctp-perf --client "<that line>"  runs the client side against it.
//   sctp-perf --list-settings         prints the transport's settings with descriptions.
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "sctpmpi.h"

namespace {

struct Options {
    bool quick = false, json = false, server = false;
    std::string client_line, only, addr;
    std::vector<std::pair<std::string, std::string>> settings;
};

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "sctp-perf: %s\n", what.c_str());
    std::exit(1);
}

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- the schedule both sides follow ----------------------------------------------------------
std::vector<size_t> latency_sizes() {
    std::vector<size_t> v;
    for (size_t s = 1; s <= 65536; s *= 2)
        v.push_back(s);
    v.insert(v.begin() + 3, 8); // 8 B is a headline figure
    v.erase(v.begin() + 4);     // (keeps 1,2,4,8,16,...)
    return v;
}
std::vector<size_t> bandwidth_sizes() {
    std::vector<size_t> v;
    for (size_t s = 1024; s <= (4u << 20); s *= 4)
        v.push_back(s);
    return v;
}
int latency_iters(size_t size, bool quick) { return (quick ? 200 : 1000) / (size >= 16384 ? 4 : 1); }
int bandwidth_iters(size_t size, bool quick) {
    const double budget = quick ? 16e6 : 64e6; // bytes per size: enough to get past warm-up effects
    int it = static_cast<int>(budget / (64.0 * size));
    return std::max(quick ? 1 : 2, std::min(it, 50));
}
constexpr int kWindow = 64;

// ---- transport roles ----------------------------------------------------------------------------
class Channel {
public:
    virtual ~Channel() = default;
    virtual void send(const char* data, size_t len) = 0;
    virtual void recv(size_t len) = 0; // one message of len bytes
    virtual void flush() {}
};

struct SctpSide {
    sctpm_transport* t = nullptr;
    sctpm_peer peer = -1;
    std::vector<char> sink;
    size_t done = 0; // messages fully received
    int pending = 0; // queued sends
};

size_t on_message(void* ctx, sctpm_peer, uint64_t total, const void*, size_t head_len, void** msg) {
    auto* s = static_cast<SctpSide*>(ctx);
    if (head_len == total) {
        ++s->done;
        *msg = nullptr;
        return head_len;
    }
    *msg = s;
    return head_len; // the head is "consumed" (a benchmark does not keep data)
}
int on_dest(void* ctx, void*, iovec* iov, int) {
    auto* s = static_cast<SctpSide*>(ctx);
    iov[0].iov_base = s->sink.data();
    iov[0].iov_len = s->sink.size();
    return 1;
}
void on_placed(void* ctx, void*, size_t, int last) {
    if (last)
        ++static_cast<SctpSide*>(ctx)->done;
}
void on_sent(void* ctx, void*, int status) {
    auto* s = static_cast<SctpSide*>(ctx);
    if (status != 0)
        die("send failed: " + std::string(std::strerror(-status)));
    --s->pending;
}
void on_event(void*, const sctpm_event* ev) {
    if (ev->type != SCTPM_EV_ASSOC_UP && ev->type != SCTPM_EV_PATH_CHANGE && ev->type != SCTPM_EV_SHUTDOWN)
        die(std::string("transport event: ") + ev->detail);
}
sctpm_peer on_hello(void* ctx, const void*, size_t, const char* card) {
    auto* s = static_cast<SctpSide*>(ctx);
    if (s->peer < 0)
        s->peer = sctpm_peer_add(s->t, card);
    return s->peer;
}

class SctpChannel : public Channel {
public:
    explicit SctpChannel(SctpSide& s) : s_(s) {}
    void send(const char* data, size_t len) override {
        sctpm_key key{0, 0, 0};
        iovec v{const_cast<char*>(data), len};
        int rc = sctpm_send(s_.t, s_.peer, &key, &v, 1, nullptr);
        if (rc < 0)
            die("sctpm_send: " + std::string(std::strerror(-rc)));
        s_.pending += rc;
    }
    void recv(size_t) override {
        const size_t want = ++expected_;
        while (s_.done < want)
            sctpm_progress(s_.t, -1);
    }
    void flush() override {
        while (s_.pending > 0)
            sctpm_progress(s_.t, -1);
    }

private:
    SctpSide& s_;
    size_t expected_ = 0;
};

class TcpChannel : public Channel {
public:
    explicit TcpChannel(int fd) : fd_(fd), sink_(4u << 20) {
        int on = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    ~TcpChannel() override { close(fd_); }
    void send(const char* data, size_t len) override {
        uint32_t n = static_cast<uint32_t>(len);
        iovec v[2] = {{&n, 4}, {const_cast<char*>(data), len}};
        msghdr mh{};
        mh.msg_iov = v;
        mh.msg_iovlen = 2;
        size_t left = len + 4;
        while (left > 0) {
            ssize_t w = sendmsg(fd_, &mh, MSG_NOSIGNAL);
            if (w <= 0)
                die("tcp send: " + std::string(std::strerror(errno)));
            left -= w;
            while (w > 0) { // advance the iov
                size_t k = std::min<size_t>(w, mh.msg_iov->iov_len);
                mh.msg_iov->iov_base = static_cast<char*>(mh.msg_iov->iov_base) + k;
                mh.msg_iov->iov_len -= k;
                w -= k;
                if (mh.msg_iov->iov_len == 0) {
                    ++mh.msg_iov;
                    --mh.msg_iovlen;
                }
            }
        }
    }
    void recv(size_t len) override {
        uint32_t n = 0;
        read_exact(&n, 4);
        if (n != len)
            die("tcp: message of " + std::to_string(n) + " bytes, expected " + std::to_string(len));
        read_exact(sink_.data(), n);
    }

private:
    void read_exact(void* p, size_t len) {
        char* c = static_cast<char*>(p);
        while (len > 0) {
            ssize_t r = ::recv(fd_, c, len, 0);
            if (r <= 0)
                die("tcp recv: " + std::string(r == 0 ? "peer closed" : std::strerror(errno)));
            c += r;
            len -= r;
        }
    }
    int fd_;
    std::vector<char> sink_;
};

// ---- the measurements -------------------------------------------------------------------------
struct Result {
    std::string transport, test;
    size_t bytes;
    double value;
};

void run_schedule(Channel& ch, bool client, bool quick, const std::string& name, std::vector<Result>* out) {
    std::vector<char> buf(4u << 20, 'x');
    for (size_t size : latency_sizes()) {
        const int iters = latency_iters(size, quick), warm = iters / 10;
        double t0 = 0;
        for (int i = 0; i < iters + warm; ++i) {
            if (i == warm)
                t0 = now_s();
            if (client) {
                ch.send(buf.data(), size);
                ch.recv(size);
            } else {
                ch.recv(size);
                ch.send(buf.data(), size);
            }
        }
        if (client)
            out->push_back({name, "latency", size, (now_s() - t0) / iters / 2 * 1e6});
    }
    for (size_t size : bandwidth_sizes()) {
        const int iters = bandwidth_iters(size, quick), warm = 1;
        double t0 = 0;
        for (int i = 0; i < iters + warm; ++i) {
            if (i == warm)
                t0 = now_s();
            if (client) {
                for (int w = 0; w < kWindow; ++w)
                    ch.send(buf.data(), size);
                ch.recv(4);
            } else {
                for (int w = 0; w < kWindow; ++w)
                    ch.recv(size);
                ch.send(buf.data(), 4);
                ch.flush();
            }
        }
        ch.flush();
        if (client)
            out->push_back({name, "bandwidth", size, double(size) * kWindow * iters / (now_s() - t0) / 1e6});
    }
}

sctpm_transport* open_sctp(const Options& o, SctpSide& side) {
    char err[SCTPM_ERRLEN];
    sctpm_config* cfg = sctpm_config_from_env(err, sizeof err);
    if (!cfg)
        die(err);
    if (!o.addr.empty()) {
        // Several addresses: through a multihome file, the way users configure multihoming.
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        std::string path = "/tmp/sctp-perf-multihome." + std::to_string(getpid());
        std::ofstream(path) << host << " " << [&] {
            std::string a = o.addr;
            for (auto& c : a)
                if (c == ',') c = ' ';
            return a;
        }() << "\n";
        if (sctpm_config_set(cfg, "multihome_file", path.c_str(), err, sizeof err) != 0)
            die(err);
    }
    for (const auto& [k, v] : o.settings)
        if (sctpm_config_set(cfg, k.c_str(), v.c_str(), err, sizeof err) != 0)
            die(err);
    side.sink.resize(4u << 20);
    sctpm_callbacks cb{&side, on_message, on_dest, on_placed, on_sent, on_event, on_hello, nullptr};
    side.t = sctpm_open(cfg, nullptr, "perf", 4, &cb, err, sizeof err);
    sctpm_config_free(cfg);
    if (!side.t)
        die(err);
    return side.t;
}

int tcp_listen(const std::string& addr, uint16_t* port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, addr.c_str(), &a.sin_addr);
    socklen_t l = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &l) != 0)
        die("tcp listen on " + addr + ": " + std::strerror(errno));
    *port = ntohs(a.sin_port);
    return fd;
}

int tcp_connect(const std::string& addr, uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (inet_pton(AF_INET, addr.c_str(), &a.sin_addr) != 1)
        die("bad TCP address " + addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
        die("tcp connect to " + addr + ":" + std::to_string(port) + ": " + std::strerror(errno));
    return fd;
}

std::string first_address(const std::string& list) { return list.empty() ? "127.0.0.1" : list.substr(0, list.find(',')); }

// Server: serve SCTP, then TCP, following the same schedule. `line_out` gets the contact line.
void serve(const Options& o, FILE* line_out) {
    SctpSide side;
    open_sctp(o, side);
    uint16_t tcp_port = 0;
    int lfd = o.only == "sctp" ? -1 : tcp_listen(first_address(o.addr), &tcp_port);
    std::fprintf(line_out, "CARD %s TCP %s:%u\n", sctpm_card(side.t), first_address(o.addr).c_str(), tcp_port);
    std::fflush(line_out);
    std::vector<Result> none;
    if (o.only != "tcp") {
        SctpChannel ch(side);
        run_schedule(ch, false, o.quick, "sctp", &none);
    }
    if (lfd >= 0) {
        TcpChannel ch(accept(lfd, nullptr, nullptr));
        run_schedule(ch, false, o.quick, "tcp", &none);
        close(lfd);
    }
    sctpm_close(side.t, 5000);
}

std::vector<Result> run_client(const Options& o, const std::string& line) {
    char card[SCTPM_CARD_MAX], tcp[256];
    if (std::sscanf(line.c_str(), "CARD %1023s TCP %255s", card, tcp) != 2)
        die("bad server line: " + line);
    std::string tcp_addr = tcp;
    uint16_t tcp_port = static_cast<uint16_t>(std::atoi(tcp_addr.substr(tcp_addr.rfind(':') + 1).c_str()));
    tcp_addr = tcp_addr.substr(0, tcp_addr.rfind(':'));
    std::vector<Result> results;
    SctpSide side;
    open_sctp(o, side);
    side.peer = sctpm_peer_add(side.t, card);
    if (side.peer < 0)
        die(std::string("bad card: ") + sctpm_last_error(side.t));
    if (o.only != "tcp") {
        SctpChannel ch(side);
        run_schedule(ch, true, o.quick, "sctp", &results);
    }
    if (o.only != "sctp") {
        TcpChannel ch(tcp_connect(tcp_addr, tcp_port));
        run_schedule(ch, true, o.quick, "tcp", &results);
    }
    sctpm_close(side.t, 5000);
    return results;
}

void print(const std::vector<Result>& rs, bool json) {
    if (json) {
        for (const auto& r : rs)
            std::printf("{\"transport\": \"%s\", \"test\": \"%s\", \"bytes\": %zu, \"value\": %.3f}\n",
                        r.transport.c_str(), r.test.c_str(), r.bytes, r.value);
        return;
    }
    for (const char* test : {"latency", "bandwidth"}) {
        const bool lat = std::strcmp(test, "latency") == 0;
        std::printf("\n# %s (%s)\n%-10s %12s %12s %10s\n", test, lat ? "one-way us, lower is better" : "MB/s, higher is better",
                    "bytes", "sctp", "tcp", "sctp/tcp");
        for (const auto& r : rs) {
            if (r.test != test || r.transport != "sctp")
                continue;
            double tcp = -1;
            for (const auto& q : rs)
                if (q.test == test && q.transport == "tcp" && q.bytes == r.bytes)
                    tcp = q.value;
            if (tcp > 0)
                std::printf("%-10zu %12.2f %12.2f %10.2f\n", r.bytes, r.value, tcp, r.value / tcp);
            else
                std::printf("%-10zu %12.2f %12s %10s\n", r.bytes, r.value, "-", "-");
        }
    }
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
        else if (a == "--server") o.server = true;
        else if (a == "--client") o.client_line = next();
        else if (a == "--only") o.only = next();
        else if (a == "--addr") o.addr = next();
        else if (a == "--set") {
            std::string kv = next();
            auto eq = kv.find('=');
            if (eq == std::string::npos)
                die("--set wants key=value, got '" + kv + "'");
            o.settings.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
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
    if (!o.only.empty() && o.only != "sctp" && o.only != "tcp")
        die("--only takes sctp or tcp");
    return o;
}

} // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    if (o.server) {
        serve(o, stdout);
        return 0;
    }
    if (!o.client_line.empty()) {
        print(run_client(o, o.client_line), o.json);
        return 0;
    }
    // Both sides here: the server is a child (its own usrsctp stack) that reports its line by pipe.
    int p[2];
    if (pipe(p) != 0)
        die("pipe");
    std::fflush(nullptr);
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        FILE* f = fdopen(p[1], "w");
        serve(o, f);
        std::_Exit(0);
    }
    close(p[1]);
    FILE* f = fdopen(p[0], "r");
    char line[2048] = {};
    if (!std::fgets(line, sizeof line, f))
        die("the server side did not start");
    std::vector<Result> rs = run_client(o, line);
    int st = 0;
    waitpid(child, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("the server side failed");
    print(rs, o.json);
    return 0;
}
