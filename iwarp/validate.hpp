// SPDX-License-Identifier: BSD-3-Clause
// The receiver's checks on one incoming DDP Segment Chunk (RFC 5041 §7.1, RFC 5040 §7.2, RFC 5043
// §9): either where to place its payload, or the one Terminate to send back.
//
// Pure: it reads a ReceiverState and the message bytes and changes nothing, so it can be fuzzed.
// Advancing the state (consuming a receive buffer when a Send is delivered, taking an IRD slot
// for a Read Request, popping the ORQ when a Read Response is delivered) is the caller's job.
//
// Every segment is self-describing, so it can be checked and placed as it arrives, in any order;
// the untagged checks therefore accept any MSN inside the window of posted buffers, not only the
// next one. Delivery (in DDP-SSN order, and in MSN order within a queue) is the caller's job too.
#pragma once
#include "memory.hpp"
#include "wire.hpp"

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

namespace iwarp {

// One posted receive buffer (a receive WR with its SGL flattened to a length; addr is where its
// first byte lives when the buffer is contiguous, and may be 0 when the caller scatters itself).
struct RecvBuffer {
    uint64_t addr = 0;
    uint32_t length = 0;
};

// One of our Read Requests whose Response has not been delivered yet (the ORQ entry).
struct OutstandingRead {
    uint32_t sink_stag = 0;
    uint64_t sink_to = 0;
    uint32_t size = 0;
};

// One of our Atomic Requests whose Response has not been delivered yet (RFC 7306 §5.2.2).
struct OutstandingAtomic {
    uint32_t request_id = 0;
};

// Default segment limit: the largest DDP segment a Terminate's 16-bit length field can name.
constexpr size_t kDefaultMaxMessage = kSsnSize + 0xFFFF;

struct ReceiverState {
    const StagTable* stags = nullptr; // must be set
    PdHandle pd = 0;                  // the stream's (QP's) protection domain
    size_t max_message = kDefaultMaxMessage; // largest SCTP message, DDP-SSN included (RFC 5043 §9)

    // QN 0: posted receive buffers; recv[i] is for the Send with MSN recv_msn + i (mod 2^32).
    uint32_t recv_msn = 1;
    std::deque<RecvBuffer> recv;

    // QN 1: inbound Read Requests. Each holds one of `ird` slots until its Response has gone
    // out; the free slots are the "buffers" of this queue (RFC 5040 §5.2.2).
    uint32_t read_msn = 1; // MSN of the next Read Request
    uint32_t ird = 0;
    uint32_t reads_active = 0;

    // QN 2: exactly one Terminate per stream (RFC 5040 §5.4).
    uint32_t terminate_msn = 1;
    bool terminate_seen = false;

    // Data sink side of our own RDMA Reads, oldest first.
    std::deque<OutstandingRead> orq;

    // QN 3 (RFC 7306): our Atomic Requests awaiting their Response, oldest first; the Response
    // with MSN atomic_msn + i answers atomics[i]. They are the queue's buffers (§5.2.2 item 5).
    uint32_t atomic_msn = 1;
    std::deque<OutstandingAtomic> atomics;
};

struct Placement {
    uint64_t address = 0; // where the payload's first byte goes
    uint32_t length = 0;  // payload bytes
};

struct Accepted {
    Segment segment; // payload points into the checked message
    // Where to copy the payload. Absent for zero-length payloads and for Read Requests and
    // Terminates, whose payload is an RDMAP header for the RDMAP layer (decoded below).
    std::optional<Placement> placement;
    uint32_t buffer_index = 0;              // untagged: MSN - first MSN of its queue
    uint32_t message_offset = 0;            // untagged: MO; tagged: TO - first TO of the ORQ entry
    std::optional<uint32_t> message_length; // untagged last segment: MO + payload (RFC 5041 §5.4)
    std::optional<ReadRequestHeader> read_request;
    std::optional<AtomicRequestHeader> atomic_request;   // its target checked: remote atomic, 8 bytes, aligned
    std::optional<AtomicResponseHeader> atomic_response; // answers atomics[buffer_index]
    std::optional<TerminateHeader> terminate;
    std::optional<uint32_t> invalidate_stag; // Send with Invalidate, last segment: checked, to do
    std::optional<size_t> orq_index;         // Read Response: the ORQ entry it belongs to
};

struct Rejected {
    TerminateHeader terminate; // code, M/D/R and the copied headers, ready to encode
    std::string_view reason;   // which check failed, with its RFC section
};

using Verdict = std::variant<Accepted, Rejected>;

// The target of an Atomic Request (RFC 7306 §5.1, §8.2): a valid STag of the stream's PD with
// remote atomic access, 8 bytes inside the region (RDMAP Remote Protection codes otherwise) at a
// 64-bit aligned local address (Remote Operation, catastrophic to the stream, otherwise). Also
// checked again when the request is carried out, as the region may have changed since.
TagCheck check_atomic_target(const StagTable& t, PdHandle stream_pd, const AtomicRequestHeader& h);

// `message` is one SCTP user message received with PPID 16.
Verdict validate_segment(const ReceiverState& st, std::span<const uint8_t> message);

// True for the opcodes whose payload is ULP data to place (Write, Read Response, the Sends), as
// opposed to an RDMAP header (Read Request, Terminate, the atomics) or a reserved opcode.
bool payload_is_data(const DdpHeader& h);

// The same checks for a receiver that reads a segment's DDP-SSN and header first and places the
// payload straight from the socket: `head` holds the decoded header (its payload is ignored) and
// `payload_length` the payload bytes that follow. The checks only grow stricter with the length,
// so a receiver may validate with an upper bound, place, and re-validate with the exact length.
// Only for payload_is_data(head.hdr); anything else throws sctpm::Error (read the whole message).
// Accepted::segment.payload is empty.
Verdict validate_segment_head(const ReceiverState& st, const Segment& head, uint64_t payload_length);

} // namespace iwarp
