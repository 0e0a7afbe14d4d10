// SPDX-License-Identifier: BSD-3-Clause
// Shared by the benchmarks in tools/ (sctp-perf, iwarp-perf): fatal errors, the clock, the byte
// pattern receivers check so that no speed is reported for broken transfers, and the results with
// their JSON and table output.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace perf {

void set_program(const char* name); // prefix of die()'s message
[[noreturn]] void die(const std::string& what);
// text (a contact line, a card) fit for a message: the card's key, the run's secret, redacted.
std::string without_key(const std::string& text);
double now_s();

// Bytes that are a function of (seed, position) and never 0: misplaced, stale or missing bytes
// show. Each transfer size of each test has its own seed, so leftovers of another pass fail too.
void fill_pattern(void* p, size_t n, uint32_t seed);
bool matches_pattern(const void* p, size_t n, uint32_t seed);
uint32_t pattern_seed(const std::string& transport, const std::string& test, size_t bytes);
// die() naming the transfer unless p holds the pattern.
void check_pattern(const void* p, size_t n, uint32_t seed, const std::string& what);

// The round trips of a ping-pong, timed one by one. One-way latency = round trip / 2, of their
// mean, or of their median (perftest's "typical": robust against a busy machine's preemptions).
class RoundTrips {
public:
    void start();     // right before the first timed round
    void lap();       // right after each timed round
    double one_way_us(bool median) const;

private:
    double last_ = 0;
    std::vector<double> rtt_;
};

struct Result {
    std::string transport, test; // test: "latency" (one-way us) or "bandwidth" (MB/s, 10^6 B/s)
    size_t bytes;
    double value;
};

// One line per result: {"transport": ..., "test": ..., "bytes": N, "value": X}
void print_json(const std::vector<Result>& rs);

// Per test, one row per size: a column per transport, then the ratios num/den.
struct Ratio {
    std::string num, den, label;
};
void print_table(const std::vector<Result>& rs, const std::vector<std::string>& columns, const std::vector<Ratio>& ratios);

// Both sides in this process's stead: `serve` runs in a forked child (its own usrsctp stack) and
// writes its contact line to the FILE it gets; `client` runs here with that line. die()s if the
// server does not start or fails.
std::vector<Result> run_both_sides(const std::function<void(FILE*)>& serve,
                                   const std::function<std::vector<Result>(const std::string&)>& client);

} // namespace perf
