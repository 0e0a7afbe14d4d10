// SPDX-License-Identifier: BSD-3-Clause
// DDP Stream Session sequencing; see session.hpp.
#include "session.hpp"

#include "error.hpp"

#include <algorithm>

namespace iwarp {

std::string_view session_state_name(SessionState s) {
    switch (s) {
    case SessionState::idle: return "idle";
    case SessionState::initiate_sent: return "initiate sent";
    case SessionState::request_pending: return "request pending";
    case SessionState::established: return "established";
    case SessionState::rejected: return "rejected";
    case SessionState::terminated: return "terminated";
    }
    return "?";
}

IrdOrdPair negotiate_ird_ord(IrdOrdPair local, IrdOrdPair peer) {
    return {std::min(local.ird, peer.ord), std::min(local.ord, peer.ird)};
}

SsnOrder classify_ssn(uint16_t expected, uint16_t ssn) {
    const uint16_t ahead = uint16_t(ssn - expected); // modulo 2^16
    if (ahead == 0) return SsnOrder::next;
    return ahead <= kSsnWindow ? SsnOrder::ahead : SsnOrder::invalid;
}

std::vector<uint8_t> Session::control(SessionFunction f, std::optional<IrdOrdPair> word,
                                      std::span<const uint8_t> pd) {
    SessionControl m;
    m.ssn = tx_ssn_;
    m.function = f;
    if (word) m.ird_ord = IrdOrd{false, false, false, false, word->ird, word->ord};
    m.private_data.assign(pd.begin(), pd.end());
    auto bytes = encode_session_control(m); // throws on oversized private data, before any state change
    ++tx_ssn_;
    return bytes;
}

std::vector<uint8_t> Session::initiate(IrdOrdPair mine, std::span<const uint8_t> private_data) {
    if (role_ != SessionRole::active || state_ != SessionState::idle)
        throw sctpm::Error("iwarp session: Initiate only from an idle active side (state " +
                           std::string(session_state_name(state_)) + ")");
    auto m = control(SessionFunction::enhanced_initiate, mine, private_data);
    mine_ = mine;
    state_ = SessionState::initiate_sent;
    return m;
}

std::vector<uint8_t> Session::accept(IrdOrdPair mine, std::span<const uint8_t> private_data) {
    if (state_ != SessionState::request_pending)
        throw sctpm::Error("iwarp session: Accept without a pending Initiate (state " +
                           std::string(session_state_name(state_)) + ")");
    negotiated_ = peer_ ? negotiate_ird_ord(mine, *peer_) : mine;
    auto m = control(SessionFunction::enhanced_accept, negotiated_, private_data);
    mine_ = mine;
    state_ = SessionState::established;
    return m;
}

std::vector<uint8_t> Session::reject(std::span<const uint8_t> private_data) {
    if (state_ != SessionState::request_pending)
        throw sctpm::Error("iwarp session: Reject without a pending Initiate (state " +
                           std::string(session_state_name(state_)) + ")");
    auto m = control(SessionFunction::enhanced_reject, IrdOrdPair{}, private_data);
    state_ = SessionState::rejected;
    tx_closed_ = true;
    return m;
}

std::vector<uint8_t> Session::terminate() {
    if (tx_closed_)
        throw sctpm::Error("iwarp session: Terminate after our Reject or Terminate (state " +
                           std::string(session_state_name(state_)) + ")");
    auto m = control(SessionFunction::terminate, std::nullopt, {});
    state_ = SessionState::terminated;
    tx_closed_ = true;
    return m;
}

uint16_t Session::take_data_ssn() {
    if (state_ != SessionState::established)
        throw sctpm::Error("iwarp session: DDP segment before the session is established (RFC 5043 §6.6; state " +
                           std::string(session_state_name(state_)) + ")");
    return tx_ssn_++;
}

Session::ControlOutcome Session::fail(std::string why, SessionControl m) {
    state_ = SessionState::terminated;
    return {Event::sequence_error, std::move(m), std::move(why)};
}

Session::ControlOutcome Session::on_control(std::span<const uint8_t> message) {
    auto d = decode_session_control(message);
    if (!d) return fail("malformed session control message: " + d.error().text());
    const SessionControl& m = *d;
    if (m.ssn != rx_ssn_) return fail("session control message out of DDP-SSN order");
    ++rx_ssn_;
    if (m.ird_ord) peer_ = IrdOrdPair{m.ird_ord->ird, m.ird_ord->ord};
    using F = SessionFunction;
    const bool first = rx_ssn_ == 1;
    switch (m.function) {
    case F::initiate:
    case F::enhanced_initiate:
        if (role_ != SessionRole::passive || !first || state_ != SessionState::idle)
            return fail("Initiate where none is legal (RFC 5043 §6.2)", m);
        state_ = SessionState::request_pending;
        return {Event::request, m, {}};
    case F::accept:
    case F::enhanced_accept:
        if (role_ != SessionRole::active || state_ != SessionState::initiate_sent)
            return fail("Accept without our Initiate (RFC 5043 §6.2)", m);
        negotiated_ = peer_ ? negotiate_ird_ord(mine_, *peer_) : mine_;
        state_ = SessionState::established;
        return {Event::accepted, m, {}};
    case F::reject:
    case F::enhanced_reject:
        if (role_ != SessionRole::active || state_ != SessionState::initiate_sent)
            return fail("Reject without our Initiate (RFC 5043 §6.3)", m);
        state_ = SessionState::rejected;
        return {Event::rejected, m, {}};
    case F::terminate:
        // §6.2/§6.4: legal as the last message in any live session, and as a non-ULP reject.
        if (finished()) return fail("Terminate after the session ended", m);
        state_ = SessionState::terminated;
        return {Event::terminated, m, {}};
    }
    return fail("unknown session function", m);
}

std::optional<std::string> Session::on_segment(uint16_t ssn) {
    if (ssn != rx_ssn_) {
        state_ = SessionState::terminated;
        return "DDP segment out of DDP-SSN order";
    }
    if (state_ != SessionState::established) {
        const std::string was(session_state_name(state_));
        state_ = SessionState::terminated;
        return "DDP segment before the session was established or after it ended (RFC 5043 §6; state " + was + ")";
    }
    ++rx_ssn_;
    return std::nullopt;
}

} // namespace iwarp
