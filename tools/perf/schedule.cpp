// SPDX-License-Identifier: BSD-3-Clause
// The measurement loop shared by the benchmarks; see channel.hpp.
#include "channel.hpp"

#include <algorithm>
#include <thread>

namespace perf {

namespace {

// One untimed warm-up round, then `rounds` timed ones; returns the seconds those took.
template <class Round> double timed_rounds(int rounds, Round round) {
    round();
    const double t0 = now_s();
    for (int i = 0; i < rounds; ++i)
        round();
    return now_s() - t0;
}

// One round of the bidirectional test: `window` messages each way. The last one received is
// checked before flush(): the peer's next messages may arrive (and overwrite it) once this side
// progresses again.
void exchange_window(Channel& ch, const char* data, size_t size, int window, uint32_t seed, const std::string& what) {
    auto send_all = [&] {
        for (int w = 0; w < window; ++w)
            ch.send(data, size);
    };
    if (ch.sends_queue()) {
        send_all();
        for (int w = 0; w < window; ++w)
            ch.recv(size);
    } else {
        std::thread sender(send_all);
        for (int w = 0; w < window; ++w)
            ch.recv(size);
        sender.join();
    }
    check_pattern(ch.received(), size, seed, what);
    ch.flush();
}

void run_bidirectional(Channel& ch, bool client, const Schedule& s, const std::string& name, std::vector<Result>* out,
                       std::vector<char>& buf) {
    // The server starts once it has checked the bandwidth test's last message (the client's next
    // message would overwrite it); by then it knows its peer from that test.
    if (client) {
        ch.recv(4);
    } else {
        ch.send(buf.data(), 4);
        ch.flush();
    }
    for (size_t size : s.bandwidth_sizes) {
        const uint32_t seed = pattern_seed(name, "bidirectional", size);
        fill_pattern(buf.data(), std::max<size_t>(size, 4), seed);
        const int iters = s.bandwidth_iters(size);
        const double seconds = timed_rounds(
            iters, [&] { exchange_window(ch, buf.data(), size, s.window, seed, name + " bidirectional message"); });
        // Both have checked this size before either sends the next (and refills its buffer).
        ch.send(buf.data(), 4);
        ch.recv(4);
        ch.flush();
        if (client)
            out->push_back({name, "bidirectional", size, 2.0 * double(size) * s.window * iters / seconds / 1e6});
    }
}

} // namespace

void run_schedule(Channel& ch, bool client, const Schedule& s, const std::string& name, std::vector<Result>* out) {
    size_t largest = 4;
    for (size_t v : s.latency_sizes) largest = std::max(largest, v);
    for (size_t v : s.bandwidth_sizes) largest = std::max(largest, v);
    std::vector<char> buf(largest);
    for (size_t size : s.latency_sizes) {
        const uint32_t seed = pattern_seed(name, "latency", size);
        fill_pattern(buf.data(), size, seed);
        const int iters = s.latency_iters(size), warm = iters / 10;
        RoundTrips rt;
        for (int i = 0; i < iters + warm; ++i) {
            if (i == warm)
                rt.start();
            if (client) {
                ch.send(buf.data(), size);
                ch.recv(size);
            } else {
                ch.recv(size);
                ch.send(buf.data(), size);
            }
            if (i >= warm)
                rt.lap();
        }
        if (client)
            out->push_back({name, "latency", size, rt.one_way_us(s.median)});
        ch.flush(); // buf is refilled next: no send may still read it
        check_pattern(ch.received(), size, seed, name + " latency message");
    }
    for (size_t size : s.bandwidth_sizes) {
        const uint32_t seed = pattern_seed(name, "bandwidth", size);
        fill_pattern(buf.data(), std::max<size_t>(size, 4), seed);
        const int iters = s.bandwidth_iters(size);
        const double seconds = timed_rounds(iters, [&] {
            if (client) {
                for (int w = 0; w < s.window; ++w)
                    ch.send(buf.data(), size);
                ch.recv(4);
            } else {
                for (int w = 0; w < s.window; ++w)
                    ch.recv(size);
                ch.send(buf.data(), 4);
                ch.flush();
            }
        });
        ch.flush();
        if (client) {
            out->push_back({name, "bandwidth", size, double(size) * s.window * iters / seconds / 1e6});
            check_pattern(ch.received(), 4, seed, name + " bandwidth acknowledgement");
        } else {
            check_pattern(ch.received(), size, seed, name + " bandwidth message");
        }
    }
    if (s.bidirectional)
        run_bidirectional(ch, client, s, name, out, buf);
}

} // namespace perf
