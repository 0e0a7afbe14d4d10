// SPDX-License-Identifier: BSD-3-Clause
// Every wire header of RDMAP (RFC 5040), DDP (RFC 5041) and the DDP/SCTP adaptation (RFC 5043,
// with RFC 6581's enhanced session control), and every Terminate error code, as plain structs
// with encode/decode in network byte order.
//
// One SCTP user message on a DDP association is (RFC 5043 §5.2):
//   PPID 16: [DDP-SSN:16][DDP header 14 (tagged) or 18 (untagged)][RDMAP header?][ULP payload]
//   PPID 17: [DDP-SSN:16][Function Code:16][Private Data <= 512]
// The RFCs draw the DDP header "offset by 16 bits" for MPA's length; over SCTP the DDP-SSN sits in
// those 16 bits instead.
//
// Decoders are lenient about values (a wrong version or a reserved opcode still decodes, so the
// receiver can copy the header into a Terminate) and strict about lengths: a buffer too short for a
// field, or a field that contradicts the length, yields a WireError naming that field.
// Encoders keep every bit, reserved ones included, so encode(decode(bytes)) == bytes (one
// exception: RFC 6581's RTR flags, which are dropped when A = 0 as §9.2 says to ignore them).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iwarp {

// ---- RFC 5043: the SCTP adaptation ------------------------------------------------------------

constexpr uint16_t kAdaptationParamType = 0xC006;      // RFC 5061 Adaptation Layer Indication
constexpr uint32_t kAdaptationIndicationDdp = 0x00000001; // §5.1: this association is DDP-only
constexpr uint32_t kPpidDdpSegment = 16;               // §5.2 DDP Segment Chunk
constexpr uint32_t kPpidSessionControl = 17;           // §5.2 DDP Stream Session Control
constexpr size_t kSsnSize = 2;                         // §5.2.1 DDP-SSN leads every message
// §9: the adaptation's maximum segment is never below 516 bytes, which is exactly
// DDP-SSN (2) + Function Code (2) + 512 bytes of Private Data; so the limit counts the whole SCTP
// user message, DDP-SSN included.
constexpr size_t kMinSegmentLimit = 516;

// ---- RFC 5041 §4: DDP headers -----------------------------------------------------------------

constexpr uint8_t kDdpVersion = 1;        // DV, §4.1
constexpr size_t kTaggedHeaderSize = 14;  // §4.2
constexpr size_t kUntaggedHeaderSize = 18; // §4.3

// ---- RFC 5040 §4.1: RDMAP control and opcodes ---------------------------------------------------

// RV: 01b is RFC 5040. 00b (RDMA Consortium) is "valid" per §4.1 but only ever existed over MPA,
// and its interoperability hangs on MPA negotiation, which SCTP does not have; we send and accept 1.
constexpr uint8_t kRdmapVersion = 1;

enum class Opcode : uint8_t {
    rdma_write = 0x0,
    read_request = 0x1,
    read_response = 0x2,
    send = 0x3,
    send_inv = 0x4,    // Send with Invalidate
    send_se = 0x5,     // Send with Solicited Event
    send_se_inv = 0x6, // Send with SE and Invalidate
    terminate = 0x7,
    // RFC 7306 Fig. 2: Immediate Data (0x8, 0x9) is not implemented, so to this stack it is an
    // unexpected opcode like the reserved 0xC..0xF.
    atomic_request = 0xA,
    atomic_response = 0xB,
};

// Untagged queues (RFC 5040 Fig. 4, RFC 7306 Fig. 2). Atomic Requests share QN 1 (its MSNs and
// its IRD/ORD credits) with Read Requests.
constexpr uint32_t kQnSend = 0;
constexpr uint32_t kQnReadRequest = 1;
constexpr uint32_t kQnTerminate = 2;
constexpr uint32_t kQnAtomicResponse = 3;

bool opcode_known(uint8_t opcode);            // 0..7, 0xA, 0xB
bool opcode_tagged(Opcode op);                // Write and Read Response use tagged buffers
uint32_t opcode_queue(Opcode op);             // QN for the untagged ones
bool opcode_invalidates(Opcode op);           // carries an Invalidate STag
std::string_view opcode_name(uint8_t opcode); // "reserved" for the others

// Byte 0 (RFC 5041 Fig. 3) and byte 1 (RFC 5040 Fig. 3), plus either model's fields.
struct DdpHeader {
    // DDP control: T, L, Rsvd (4 bits, sent 0, not checked), DV (2 bits).
    bool tagged = false;
    bool last = true;
    uint8_t ddp_reserved = 0;
    uint8_t ddp_version = kDdpVersion;
    // RDMAP control = RsvdULP[0:7]: RV (2 bits), Rsv (2 bits, sent 0, ignored), opcode (4 bits).
    uint8_t rdmap_version = kRdmapVersion;
    uint8_t rdmap_reserved = 0;
    uint8_t opcode = 0; // raw, so reserved values survive decoding
    // Tagged model (T = 1).
    uint32_t stag = 0;
    uint64_t to = 0;
    // Untagged model (T = 0). RsvdULP[8:39] is the Invalidate STag for Send with Invalidate.
    uint32_t inval_stag = 0;
    uint32_t qn = 0;
    uint32_t msn = 0;
    uint32_t mo = 0;

    size_t size() const { return tagged ? kTaggedHeaderSize : kUntaggedHeaderSize; }
    bool operator==(const DdpHeader&) const = default;
};

DdpHeader make_tagged_header(Opcode op, uint32_t stag, uint64_t to, bool last);
DdpHeader make_untagged_header(Opcode op, uint32_t msn, uint32_t mo, bool last,
                               uint32_t inval_stag = 0); // QN follows from the opcode

// ---- RFC 5040 §4.4: RDMA Read Request header (follows the untagged DDP header) -----------------

constexpr size_t kReadRequestHeaderSize = 28;

struct ReadRequestHeader {
    uint32_t sink_stag = 0; // copied back verbatim in the Read Response
    uint64_t sink_to = 0;
    uint32_t size = 0;      // RDMA Read Message Size, 0 .. 2^32-1
    uint32_t src_stag = 0;
    uint64_t src_to = 0;
    bool operator==(const ReadRequestHeader&) const = default;
};

// ---- RFC 7306 §5.2: Atomic Operation Request and Response headers ----------------------------

constexpr size_t kAtomicRequestHeaderSize = 52;
constexpr size_t kAtomicResponseHeaderSize = 12;

// AOpCode (Fig. 5). Both MUST be implemented; any other value is an error at the responder.
enum class AtomicOp : uint8_t { fetch_add = 0x0, cmp_swap = 0x2 };

struct AtomicRequestHeader {
    uint32_t reserved = 0; // 28 bits, sent 0, ignored
    uint8_t aopcode = 0;   // raw 4 bits, so that unknown values survive decoding
    uint32_t request_id = 0;
    uint32_t stag = 0;
    uint64_t to = 0;
    uint64_t add_swap = 0;      // Add Data (FetchAdd) or Swap Data (CmpSwap)
    uint64_t add_swap_mask = 0; // FetchAdd: field boundaries (0: one 64-bit add); CmpSwap: bits swapped
    uint64_t compare = 0;       // CmpSwap only
    uint64_t compare_mask = ~0ull; // CmpSwap: bits compared
    bool operator==(const AtomicRequestHeader&) const = default;
};

struct AtomicResponseHeader {
    uint32_t request_id = 0; // the request's, reflected
    uint64_t original = 0;   // the 64-bit value before the operation
    bool operator==(const AtomicResponseHeader&) const = default;
};

// The value the responder writes back for `original` (RFC 7306 §5.1.1 and §5.1.2 pseudocode):
// a masked FetchAdd adds field by field, a field ending at each bit set in Add Mask (no carry out of
// it); a masked CmpSwap swaps the Swap Mask bits when the Compare Mask bits match. Requires a known
// aopcode.
uint64_t atomic_result(const AtomicRequestHeader& h, uint64_t original);

// ---- Terminate error codes: RFC 5040 §4.8 Fig. 9, RFC 5041 §7.2, RFC 5044/6581 (MPA) ----------

enum class Layer : uint8_t { rdmap = 0x0, ddp = 0x1, llp = 0x2 };

enum class RdmapEtype : uint8_t { local_catastrophic = 0x0, remote_protection = 0x1, remote_operation = 0x2 };
enum class DdpEtype : uint8_t { local_catastrophic = 0x0, tagged = 0x1, untagged = 0x2, llp_reserved = 0x3 };
enum class LlpEtype : uint8_t { mpa = 0x0 };

// The (layer, error type, error code) triple of a Terminate Control field. Raw bytes, so that a
// received Terminate with values this stack does not know still decodes.
struct TermCode {
    Layer layer = Layer::rdmap;
    uint8_t etype = 0; // 4 bits
    uint8_t code = 0;  // 8 bits
    bool operator==(const TermCode&) const = default;
};

namespace term {
// RDMAP layer (RFC 5040 Fig. 9).
constexpr TermCode rdmap_local_catastrophic{Layer::rdmap, 0x0, 0x00}; // no code; any value allowed
constexpr TermCode rdmap_invalid_stag{Layer::rdmap, 0x1, 0x00};
constexpr TermCode rdmap_base_bounds{Layer::rdmap, 0x1, 0x01};
constexpr TermCode rdmap_access_rights{Layer::rdmap, 0x1, 0x02};
constexpr TermCode rdmap_stag_not_associated{Layer::rdmap, 0x1, 0x03};
constexpr TermCode rdmap_to_wrap{Layer::rdmap, 0x1, 0x04};
constexpr TermCode rdmap_protection_cannot_invalidate{Layer::rdmap, 0x1, 0x09};
constexpr TermCode rdmap_protection_unspecified{Layer::rdmap, 0x1, 0xFF};
constexpr TermCode rdmap_invalid_version{Layer::rdmap, 0x2, 0x05};
constexpr TermCode rdmap_unexpected_opcode{Layer::rdmap, 0x2, 0x06};
constexpr TermCode rdmap_catastrophic_stream{Layer::rdmap, 0x2, 0x07};
constexpr TermCode rdmap_catastrophic_global{Layer::rdmap, 0x2, 0x08};
constexpr TermCode rdmap_operation_cannot_invalidate{Layer::rdmap, 0x2, 0x09};
constexpr TermCode rdmap_operation_unspecified{Layer::rdmap, 0x2, 0xFF};
// DDP layer (RFC 5041 §7.2).
constexpr TermCode ddp_local_catastrophic{Layer::ddp, 0x0, 0x00};
constexpr TermCode ddp_tagged_invalid_stag{Layer::ddp, 0x1, 0x00};
constexpr TermCode ddp_tagged_base_bounds{Layer::ddp, 0x1, 0x01};
constexpr TermCode ddp_tagged_stag_not_associated{Layer::ddp, 0x1, 0x02};
constexpr TermCode ddp_tagged_to_wrap{Layer::ddp, 0x1, 0x03};
constexpr TermCode ddp_tagged_invalid_version{Layer::ddp, 0x1, 0x04};
constexpr TermCode ddp_untagged_invalid_qn{Layer::ddp, 0x2, 0x01};
constexpr TermCode ddp_untagged_no_buffer{Layer::ddp, 0x2, 0x02};
constexpr TermCode ddp_untagged_msn_range{Layer::ddp, 0x2, 0x03};
constexpr TermCode ddp_untagged_invalid_mo{Layer::ddp, 0x2, 0x04};
constexpr TermCode ddp_untagged_too_long{Layer::ddp, 0x2, 0x05};
constexpr TermCode ddp_untagged_invalid_version{Layer::ddp, 0x2, 0x06};
// LLP layer. Only MPA defines codes (RFC 5044 §8, RFC 6581 §8); RFC 5043 defines none, so this
// stack never sends them over SCTP (RFC 5040 §4.8: an LLP without codes uses none). They are here
// so a received Terminate can be named.
constexpr TermCode mpa_tcp_closed{Layer::llp, 0x0, 0x01};
constexpr TermCode mpa_crc_error{Layer::llp, 0x0, 0x02};
constexpr TermCode mpa_marker_mismatch{Layer::llp, 0x0, 0x03};
constexpr TermCode mpa_invalid_request_reply{Layer::llp, 0x0, 0x04};
constexpr TermCode mpa_local_catastrophic{Layer::llp, 0x0, 0x05};
constexpr TermCode mpa_insufficient_ird{Layer::llp, 0x0, 0x06};
constexpr TermCode mpa_no_matching_rtr{Layer::llp, 0x0, 0x07};
} // namespace term

// "DDP/untagged/Invalid MSN - no buffer available (1/2/0x02)"; unknown triples print as numbers.
std::string describe(const TermCode& c);

// ---- RFC 5040 §4.8: Terminate header (follows the untagged DDP header, QN 2) -------------------

constexpr size_t kTerminateControlSize = 4;
// Control + segment length + untagged DDP header + Read Request header.
constexpr size_t kTerminateHeaderMaxSize = kTerminateControlSize + 2 + kUntaggedHeaderSize + kReadRequestHeaderSize;

// Layout (positional, each part only if flagged): [control+reserved:4]
// [DDP Segment Length:2 if M or D][terminated DDP header:14/18 if D][terminated RDMA header:28 if R].
// The length field is present whenever D is set (§4.8) and meaningful only with M. RFC 5040 §7.1
// rule 1 speaks of absent headers as "set to zero"; we send them absent and ignore trailing bytes.
struct TerminateHeader {
    TermCode code;
    bool segment_length_valid = false; // M
    uint16_t reserved = 0;             // 13 bits, sent 0, ignored
    uint16_t ddp_segment_length = 0;   // length of the offending DDP segment (DDP-SSN excluded)
    std::optional<DdpHeader> ddp;      // D: the offending segment's DDP header
    std::optional<ReadRequestHeader> rdma; // R: the offending Read Request's header
    size_t size() const;
    bool operator==(const TerminateHeader&) const = default;
};

// ---- RFC 5043 §5.2.3 / RFC 6581 §7, §9: DDP Stream Session Control (PPID 17) -------------------

enum class SessionFunction : uint16_t {
    initiate = 0x0001,
    accept = 0x0002,
    reject = 0x0003,
    terminate = 0x0004,
    enhanced_initiate = 0x0005, // RFC 6581 §7
    enhanced_accept = 0x0006,
    enhanced_reject = 0x0007,
};
bool session_function_enhanced(SessionFunction f);

constexpr size_t kSessionControlHeaderSize = 4; // DDP-SSN + Function Code
constexpr size_t kMaxPrivateData = 512;         // §5.2.3, counting RFC 6581's 4 bytes too
constexpr size_t kIrdOrdSize = 4;
constexpr uint16_t kIrdOrdMax = 0x3FFF;         // 14 bits; all ones = "no automatic negotiation"

// RFC 6581 §9: |A|B| IRD:14 |C|D| ORD:14| at the start of the private data.
//
// Our reading of where it applies: RFC 6581 updates RFC 5043 (§1.2, §7), so the word is carried by
// SCTP session control, but only under the enhanced function codes 5/6/7; the plain codes 1-4 are
// untouched. §7 names Initiate and Accept as carriers, yet also lets the provider answer with a
// reject "indicating which RTR indication types it supports", which needs the A-D flags, and §9.1
// has the initiator pass the responder's IRD/ORD up for a reject as well (as MPA's Reply frame
// does for both outcomes). So all three enhanced codes carry the word, and the 512-byte limit
// includes it (§7: "including enhanced RDMA connection establishment data").
// RFC 6581's LLP error codes (2/0/5..7) are MPA errors; RFC 5043 has no LLP codes, so over SCTP a
// failed negotiation is answered with Enhanced Reject or Stream Session Terminate instead.
struct IrdOrd {
    bool peer_to_peer = false; // A; when 0, B..D are ignored on receive (decoded as false)
    bool rtr_send = false;     // B: zero-length Send as RTR
    bool rtr_write = false;    // C: zero-length RDMA Write as RTR
    bool rtr_read = false;     // D: zero-length RDMA Read as RTR
    uint16_t ird = 0;
    uint16_t ord = 0;
    bool operator==(const IrdOrd&) const = default;
};

struct SessionControl {
    uint16_t ssn = 0;
    SessionFunction function = SessionFunction::initiate;
    std::optional<IrdOrd> ird_ord;     // present exactly for the enhanced codes
    std::vector<uint8_t> private_data; // ULP private data (after the IRD/ORD word if any)
    bool operator==(const SessionControl&) const = default;
};

// ---- Decoding results -----------------------------------------------------------------------

struct WireError {
    std::string_view field;   // the field that did not fit or is inconsistent, e.g. "msn"
    std::string_view problem; // "truncated", "unknown value", ...
    std::string text() const;
};

template <class T>
class Decoded {
public:
    Decoded(T value) : value_(std::move(value)) {}
    Decoded(WireError error) : error_(error) {}
    bool ok() const { return value_.has_value(); }
    explicit operator bool() const { return ok(); }
    const T& operator*() const { return *value_; }
    const T* operator->() const { return &*value_; }
    const WireError& error() const { return error_; }

private:
    std::optional<T> value_;
    WireError error_{};
};

// One DDP Segment Chunk (PPID 16) split into its parts; payload points into the decoded buffer
// and holds everything after the DDP header (for Read Request/Terminate: their RDMAP header).
struct Segment {
    uint16_t ssn = 0;
    DdpHeader hdr;
    std::span<const uint8_t> payload;
};

// ---- Encode / decode -------------------------------------------------------------------------
// Encoders write into `out` and return the byte count; `out` too small is a programming error
// (sctpm::Error). Decoders read from the start of `in`; extra bytes after the structure are not
// theirs to judge, except where noted.

size_t encode(const DdpHeader& h, std::span<uint8_t> out);
Decoded<DdpHeader> decode_ddp_header(std::span<const uint8_t> in);

size_t encode(const ReadRequestHeader& h, std::span<uint8_t> out);
Decoded<ReadRequestHeader> decode_read_request(std::span<const uint8_t> in);

size_t encode(const AtomicRequestHeader& h, std::span<uint8_t> out);
Decoded<AtomicRequestHeader> decode_atomic_request(std::span<const uint8_t> in);
size_t encode(const AtomicResponseHeader& h, std::span<uint8_t> out);
Decoded<AtomicResponseHeader> decode_atomic_response(std::span<const uint8_t> in);

size_t encode(const TerminateHeader& h, std::span<uint8_t> out);
Decoded<TerminateHeader> decode_terminate(std::span<const uint8_t> in);

uint32_t encode_ird_ord(const IrdOrd& v); // the 32-bit word, host order
IrdOrd decode_ird_ord(uint32_t word);

// Whole SCTP messages.
std::vector<uint8_t> encode_segment(uint16_t ssn, const DdpHeader& h, std::span<const uint8_t> payload);
Decoded<Segment> decode_segment(std::span<const uint8_t> message); // PPID 16

std::vector<uint8_t> encode_session_control(const SessionControl& m);
Decoded<SessionControl> decode_session_control(std::span<const uint8_t> message); // PPID 17, exact

} // namespace iwarp
