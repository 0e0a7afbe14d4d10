// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for what ch3:hybrid makes of the messages a peer sends on its queue pair (PUT
// headers, ch3_hybrid/include/hy_order.h hy_header_arrival), with the receiver's queue of deferred
// headers as hy_placed.c keeps it. CH3's PUT handler, which runs an accepted header, is MPICH's
// and takes the packet as it would from SCTP; it is not in this target.
//
// Input: a bound on deferred headers (first byte, 1..16), a start for the control-packet counter
// (next 4 bytes, so runs cross the 2^32 wrap), then events, each led by one byte:
//   op % 4 == 0  the peer's next SCTP control packet was handled: deferred headers may run;
//   op % 4 == 1  a message lands: a length byte (header length unless >= 0xf0, then 0..15 bytes
//                off), 4 bytes of after_ctl (as sent, or relative to the counter when op & 4),
//                and the PUT_PLACED test (op & 8 clear);
//   op % 4 == 2  the peer asks which headers were handled (QP_SYNC): deferred ones that may run
//                do, the others are dropped (it resends them), and its next QP starts empty;
//   op % 4 == 3  nothing (padding).
// Invariants: a header runs only once the control packets before it were handled, and headers run
// in the order they were accepted; never more than the bound wait; a malformed message or one over
// the bound is refused (the QP closes) and nothing else; what was accepted is handled or dropped
// at the QP_SYNC, never both, never lost.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>

#include "hy_order.h"

namespace {

constexpr size_t kHeaderLen = 8 + 80; // after_ctl, pad and CH3's packet (mpidi_ch3_hybrid.h, x86-64)

void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "hy_header_fuzz invariant violated: %s\n", what);
        std::abort();
    }
}

struct Header {
    uint64_t id; // acceptance order
    uint32_t after_ctl;
};

struct Receiver {
    unsigned max_deferred;
    uint32_t ctl_done;
    std::deque<Header> deferred;
    uint64_t accepted = 0, handled = 0, dropped = 0, next_to_run = 0;
    bool qp_open = true;

    void run(const Header &h)
    {
        check(hy_reached(ctl_done, h.after_ctl), "a header ran before its control packets");
        check(h.id == next_to_run, "headers ran out of their order");
        next_to_run++;
        handled++;
    }
    void run_deferred()
    {
        while (!deferred.empty() && hy_header_may_run(ctl_done, deferred.front().after_ctl)) {
            run(deferred.front());
            deferred.pop_front();
        }
    }
    void message(size_t len, uint32_t after_ctl, bool is_put)
    {
        if (!qp_open)
            return; // closed: nothing more lands from it
        const hy_arrival a =
            hy_header_arrival(len, kHeaderLen, is_put, (unsigned)deferred.size(), max_deferred, ctl_done, after_ctl);
        check((a == HY_ARRIVAL_BAD_LENGTH) == (len != kHeaderLen), "length verdict");
        check(a != HY_ARRIVAL_BAD_TYPE || (len == kHeaderLen && !is_put), "type verdict");
        check(a != HY_ARRIVAL_TOO_MANY || deferred.size() >= max_deferred, "refused under the bound");
        switch (a) {
        case HY_ARRIVAL_RUN:
            check(deferred.empty(), "a header passed deferred ones");
            run({accepted++, after_ctl});
            break;
        case HY_ARRIVAL_DEFER:
            deferred.push_back({accepted++, after_ctl});
            break;
        default:
            qp_open = false; // refused: the QP closes, the peer resends on SCTP
        }
        check(deferred.size() <= max_deferred, "more headers wait than the bound");
    }
    void qp_sync()
    {
        run_deferred();
        dropped += deferred.size();
        next_to_run += deferred.size(); // the peer resends them on SCTP
        deferred.clear();
        check(handled + dropped == accepted, "a header was lost or counted twice");
        qp_open = true; // the next QP
    }
};

uint32_t read32(const uint8_t *p)
{
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    Receiver r;
    r.max_deferred = 1 + data[0] % 16;
    r.ctl_done = read32(data + 1);
    size_t i = 5;
    while (i < size) {
        const uint8_t op = data[i++];
        if (op % 4 == 0) {
            r.ctl_done++;
            r.run_deferred();
        } else if (op % 4 == 1) {
            if (size - i < 5)
                break;
            const uint8_t l = data[i];
            const size_t len = l < 0xf0 ? kHeaderLen : (l & 1 ? kHeaderLen + (l & 0xe) : kHeaderLen - (l & 0xf));
            uint32_t after_ctl = read32(data + i + 1);
            if (op & 4)
                after_ctl = r.ctl_done + (int32_t)(int8_t)after_ctl; // near the counter: both verdicts
            i += 5;
            r.message(len, after_ctl, !(op & 8));
        } else if (op % 4 == 2) {
            r.qp_sync();
        }
    }
    r.qp_sync();
    return 0;
}
