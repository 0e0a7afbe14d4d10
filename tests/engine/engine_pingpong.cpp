// SPDX-License-Identifier: BSD-3-Clause
// Cost of the engine alone for a 1-byte message round trip: two Endpoints in one process pass
// packets to each other in memory (no sockets, no clock: time advances 1 µs a step). For the
// issue 48 metric, run under callgrind at two counts and take the difference:
//   valgrind --tool=callgrind tests/engine_pingpong 1000 ; ... 101000
//   (instructions(101000) - instructions(1000)) / 100000 / 2 = per round trip and process.
// A second argument sets the message size (both ways), for the cost per byte of bulk data.
// Prints the messages checked; exits non-zero if a message is missing or wrong.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sctp/engine.hpp"

using namespace sctpm::sctp;

namespace {

Address v4(uint8_t last) {
    Address a;
    a.family = AF_INET;
    a.port = static_cast<uint16_t>(9000 + last);
    a.ip[0] = 127;
    a.ip[3] = last;
    return a;
}

struct Side {
    Endpoint ep;
    Address addr;
    AssocId id = kNoAssoc;
    Side(const Config& c, uint64_t seed, Address a) : ep(c, seeded_random(seed)), addr(a) {}
};

std::vector<uint8_t> g_buf(65536);

// Moves everything `from` has to send into `to`; returns packets moved.
int shuttle(Side& from, Side& to, Time now) {
    int n = 0;
    while (auto t = from.ep.poll_transmit(g_buf.data(), g_buf.size(), 64, now)) {
        size_t off = 0;
        for (size_t k = 0; k < t->count; ++k) {
            size_t len = k + 1 < t->count ? t->segment_size : t->bytes - off;
            to.ep.receive(from.addr, to.addr, g_buf.data() + off, len, now);
            off += len;
            ++n;
        }
        to.ep.end_of_batch(now);
    }
    return n;
}

} // namespace

int main(int argc, char** argv) {
    long rounds = argc > 1 ? std::atol(argv[1]) : 100000;
    size_t size = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1;
    if (size == 0)
        size = 1;
    std::vector<uint8_t> msg(size);
    Config c;
    c.local_port = 5000;
    Side a(c, 1, v4(1)), b(c, 2, v4(2));
    Time now = 1;
    Address peer = b.addr;
    a.id = a.ep.connect(std::span<const Address>(&peer, 1), 5000, now);
    Event ev;
    for (int i = 0; i < 10 && b.id == kNoAssoc; ++i) {
        shuttle(a, b, now);
        shuttle(b, a, now);
        while (b.ep.poll_event(ev))
            if (ev.type == EventType::assoc_up)
                b.id = ev.assoc;
        while (a.ep.poll_event(ev))
            ;
    }
    if (b.id == kNoAssoc) {
        std::fprintf(stderr, "no association\n");
        return 1;
    }
    long ok = 0;
    uint8_t byte = 0;
    for (long r = 0; r < rounds; ++r) {
        ++byte;
        msg[0] = msg[size - 1] = byte;
        iovec iov{msg.data(), size};
        if (a.ep.send(a.id, 0, &iov, 1, false, ++now) != 0)
            return 2;
        // Packets go back and forth until the reply is back (one exchange for small messages).
        bool back = false;
        for (int guard = 0; guard < 100000 && !back; ++guard) {
            shuttle(a, b, ++now);
            while (b.ep.poll_event(ev))
                if (ev.type == EventType::data && ev.data.size() == size && ev.data[0] == byte &&
                    ev.data[size - 1] == byte)
                    b.ep.send(b.id, 0, &iov, 1, false, now); // the reply
            shuttle(b, a, ++now);
            while (a.ep.poll_event(ev))
                if (ev.type == EventType::data && ev.data.size() == size && ev.data[0] == byte &&
                    ev.data[size - 1] == byte)
                    back = true;
            if (auto d = a.ep.next_deadline(); d && *d <= now)
                a.ep.handle_timeout(now);
            if (auto d = b.ep.next_deadline(); d && *d <= now)
                b.ep.handle_timeout(now);
        }
        ok += back;
    }
    std::printf("%ld of %ld round trips checked\n", ok, rounds);
    return ok == rounds ? 0 : 3;
}
