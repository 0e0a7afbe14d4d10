// SPDX-License-Identifier: BSD-3-Clause
// The lower layer a DDP stream runs on: one SCTP association (RFC 5043) carrying whole messages
// with a payload protocol identifier. An interface so that the RDMAP/DDP engine can be tested on
// an in-memory pipe (with reordering) as well as on usrsctp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace iwarp {

struct LlpRead {
    long n = 0;          // bytes read; -EWOULDBLOCK when nothing is waiting; other -errno: error
    bool eor = false;    // the message ended with this read
    uint32_t ppid = 0;   // kPpidDdpSegment or kPpidSessionControl (valid on the first read of a message)
    bool closed = false; // the association is gone (n is 0); `why` says how
    std::string why;
};

class Llp {
public:
    virtual ~Llp() = default;
    // One whole message, sent unordered (RFC 5043 §10). Returns len, or -EWOULDBLOCK when the
    // send buffer is full (retry later), or another -errno.
    virtual long send(uint32_t ppid, const void* data, size_t len) = 0;
    // Reads the next piece of the current message (the first read of a message starts it);
    // a message can be read in several pieces, which is how payload lands in place.
    virtual LlpRead read(void* buf, size_t len) = 0;
    // Largest message (DDP-SSN included) this association carries without fragmentation,
    // RFC 5043 §9; at least kMinSegmentLimit.
    virtual size_t max_message() const = 0;
    // RFC 5043 §10: stop sending while this many chunks are unacknowledged on the stream.
    virtual bool too_many_unacked() { return false; }
    virtual void close(bool abort) = 0;
};

} // namespace iwarp
