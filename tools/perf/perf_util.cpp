// SPDX-License-Identifier: BSD-3-Clause
// Helpers of the benchmarks; see perf_util.hpp.
#include "perf_util.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "card.hpp"

namespace perf {

namespace {
const char* g_program = "perf";
} // namespace

void set_program(const char* name) { g_program = name; }

void die(const std::string& what) {
    std::fprintf(stderr, "%s: %s\n", g_program, what.c_str());
    std::exit(1);
}

std::string without_key(const std::string& text) { return sctpm::redact_key(text); }

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {
uint8_t pattern_byte(uint64_t& x) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint8_t b = uint8_t(x >> 24);
    return b ? b : 0x5a;
}
uint64_t pattern_start(uint32_t seed) { return 0x9e3779b97f4a7c15ull ^ (uint64_t(seed) << 1 | 1); }
} // namespace

void fill_pattern(void* p, size_t n, uint32_t seed) {
    auto* b = static_cast<uint8_t*>(p);
    uint64_t x = pattern_start(seed);
    for (size_t i = 0; i < n; ++i)
        b[i] = pattern_byte(x);
}

bool matches_pattern(const void* p, size_t n, uint32_t seed) {
    const auto* b = static_cast<const uint8_t*>(p);
    uint64_t x = pattern_start(seed);
    for (size_t i = 0; i < n; ++i)
        if (b[i] != pattern_byte(x))
            return false;
    return true;
}

uint32_t pattern_seed(const std::string& transport, const std::string& test, size_t bytes) {
    uint32_t h = 2166136261u; // FNV-1a
    for (char c : transport + "/" + test + "/" + std::to_string(bytes))
        h = (h ^ uint8_t(c)) * 16777619u;
    return h;
}

void check_pattern(const void* p, size_t n, uint32_t seed, const std::string& what) {
    if (!matches_pattern(p, n, seed))
        die("data check failed: " + what + " (" + std::to_string(n) + " bytes) arrived corrupted or not at all");
}

void RoundTrips::start() {
    rtt_.clear();
    last_ = now_s();
}

void RoundTrips::lap() {
    const double t = now_s();
    rtt_.push_back(t - last_);
    last_ = t;
}

double RoundTrips::one_way_us(bool median) const {
    if (rtt_.empty())
        return 0;
    std::vector<double> v = rtt_;
    double rtt = 0;
    if (median) {
        std::nth_element(v.begin(), v.begin() + ptrdiff_t(v.size() / 2), v.end());
        rtt = v[v.size() / 2];
    } else {
        for (double x : v)
            rtt += x;
        rtt /= double(v.size());
    }
    return rtt / 2 * 1e6;
}

void print_json(const std::vector<Result>& rs) {
    for (const auto& r : rs)
        std::printf("{\"transport\": \"%s\", \"test\": \"%s\", \"bytes\": %zu, \"value\": %.3f}\n", r.transport.c_str(),
                    r.test.c_str(), r.bytes, r.value);
}

void print_table(const std::vector<Result>& rs, const std::vector<std::string>& columns, const std::vector<Ratio>& ratios) {
    auto value = [&](const std::string& transport, const std::string& test, size_t bytes) {
        for (const auto& r : rs)
            if (r.transport == transport && r.test == test && r.bytes == bytes)
                return r.value;
        return -1.0;
    };
    for (const char* test : {"latency", "bandwidth", "bidirectional"}) {
        std::vector<size_t> sizes;
        for (const auto& r : rs)
            if (r.test == test && std::find(sizes.begin(), sizes.end(), r.bytes) == sizes.end())
                sizes.push_back(r.bytes);
        if (sizes.empty())
            continue;
        const bool lat = std::strcmp(test, "latency") == 0;
        std::printf("\n# %s (%s)\n%-10s", test, lat ? "one-way us, lower is better" : "MB/s, higher is better", "bytes");
        for (const auto& c : columns)
            std::printf(" %12s", c.c_str());
        for (const auto& q : ratios)
            std::printf(" %10s", q.label.c_str());
        std::printf("\n");
        for (size_t bytes : sizes) {
            std::printf("%-10zu", bytes);
            for (const auto& c : columns) {
                const double v = value(c, test, bytes);
                v >= 0 ? std::printf(" %12.2f", v) : std::printf(" %12s", "-");
            }
            for (const auto& q : ratios) {
                const double a = value(q.num, test, bytes), b = value(q.den, test, bytes);
                a >= 0 && b > 0 ? std::printf(" %10.2f", a / b) : std::printf(" %10s", "-");
            }
            std::printf("\n");
        }
    }
}

std::vector<Result> run_both_sides(const std::function<void(FILE*)>& serve,
                                   const std::function<std::vector<Result>(const std::string&)>& client) {
    int p[2];
    if (pipe(p) != 0)
        die("pipe");
    std::fflush(nullptr);
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        FILE* f = fdopen(p[1], "w");
        serve(f);
        std::_Exit(0);
    }
    close(p[1]);
    FILE* f = fdopen(p[0], "r");
    char line[2048] = {};
    if (!std::fgets(line, sizeof line, f))
        die("the server side did not start");
    std::vector<Result> rs = client(line);
    int st = 0;
    waitpid(child, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("the server side failed");
    return rs;
}

} // namespace perf
