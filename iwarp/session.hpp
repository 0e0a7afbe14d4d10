// SPDX-License-Identifier: BSD-3-Clause
// One DDP Stream Session (RFC 5043 §6): the DDP-SSN counters of both directions, the legal
// sequences of session control (Initiate -> Accept | Reject | Terminate, then segments, then a
// session Terminate) and RFC 6581's IRD/ORD negotiation. Pure: no sockets, so it is unit-tested
// on its own; the connection feeds it messages in DDP-SSN order.
#pragma once
#include "wire.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace iwarp {

enum class SessionRole { active, passive };

enum class SessionState {
    idle,              // nothing sent or received yet
    initiate_sent,     // active: waiting for Accept/Reject
    request_pending,   // passive: Initiate delivered, the ULP decides
    established,       // segments may flow
    rejected,          // Reject sent or received: over
    terminated,        // a session Terminate was sent or received, or a sequence error: over
};
std::string_view session_state_name(SessionState s);

// RFC 6581 §9.1 as we apply it on both sides: never keep more Read Requests outstanding than the
// peer serves (ORD <= peer IRD), never reserve more than the peer can issue (IRD <= peer ORD).
struct IrdOrdPair {
    uint16_t ird = 0;
    uint16_t ord = 0;
};
IrdOrdPair negotiate_ird_ord(IrdOrdPair local, IrdOrdPair peer);

// Where an incoming message stands against the next expected DDP-SSN (RFC 5043 §10): a window of
// 32767 ahead is plausible; anything behind or farther is invalid.
enum class SsnOrder { next, ahead, invalid };
SsnOrder classify_ssn(uint16_t expected, uint16_t ssn);
constexpr uint16_t kSsnWindow = 32767;

class Session {
public:
    explicit Session(SessionRole role) : role_(role) {}
    SessionRole role() const { return role_; }
    SessionState state() const { return state_; }

    // Outgoing messages; each takes the next DDP-SSN. Throws sctpm::Error when the state does not
    // allow the message (e.g. Accept without a pending request, data before establishment).
    std::vector<uint8_t> initiate(IrdOrdPair mine, std::span<const uint8_t> private_data);
    std::vector<uint8_t> accept(IrdOrdPair mine, std::span<const uint8_t> private_data);
    std::vector<uint8_t> reject(std::span<const uint8_t> private_data);
    // Legal once, in any state, unless we rejected: it also ends a session the peer broke.
    std::vector<uint8_t> terminate();
    bool can_terminate() const { return !tx_closed_; }
    uint16_t take_data_ssn();         // the DDP-SSN for the next DDP segment (established only)
    bool can_send_data() const { return state_ == SessionState::established; }
    bool finished() const { return state_ == SessionState::rejected || state_ == SessionState::terminated; }

    // Incoming side. `expected_ssn` is the DDP-SSN the next in-order message must carry.
    uint16_t expected_ssn() const { return rx_ssn_; }
    SsnOrder order_of(uint16_t ssn) const { return classify_ssn(rx_ssn_, ssn); }

    // Deliver the in-order session control message (PPID 17). What it means for the caller:
    enum class Event { request, accepted, rejected, terminated, sequence_error };
    struct ControlOutcome {
        Event event;
        SessionControl message; // decoded, for the private data and IRD/ORD
        std::string error;      // sequence_error: what was wrong
    };
    ControlOutcome on_control(std::span<const uint8_t> message);
    // Deliver an in-order DDP segment (PPID 16): legal only once established (RFC 5043 §6.2).
    // Returns an error text if the segment breaks the legal sequence (the session is then over).
    std::optional<std::string> on_segment(uint16_t ssn);

    // The peer's IRD/ORD from its enhanced Initiate/Accept/Reject (absent for the plain codes).
    std::optional<IrdOrdPair> peer_ird_ord() const { return peer_; }
    IrdOrdPair negotiated() const { return negotiated_; }

private:
    std::vector<uint8_t> control(SessionFunction f, std::optional<IrdOrdPair> word, std::span<const uint8_t> pd);
    ControlOutcome fail(std::string why, SessionControl m = {});

    SessionRole role_;
    SessionState state_ = SessionState::idle;
    uint16_t tx_ssn_ = 0; // RFC 5043 §6.1: both reset to 0 at the start of a session
    uint16_t rx_ssn_ = 0;
    bool tx_closed_ = false; // we sent Reject or Terminate: nothing more goes out
    std::optional<IrdOrdPair> peer_;
    IrdOrdPair mine_;
    IrdOrdPair negotiated_;
};

} // namespace iwarp
