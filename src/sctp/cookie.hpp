// SPDX-License-Identifier: BSD-3-Clause
// The State Cookie (RFC 9260 §5.1.3): everything the server needs to build the association's
// TCB, sent to the peer inside INIT-ACK and echoed back in COOKIE-ECHO, so that the server keeps
// no state before COOKIE-ECHO. Signed with HMAC-SHA-256 (OpenSSL's libcrypto) under a secret
// only this endpoint knows; the format is private to this implementation (version byte first).
#pragma once
#include <cstddef>
#include <cstdint>

#include "sctp/engine.hpp"

namespace sctpm::sctp {

struct CookieData {
    Time created = 0;            // when the INIT-ACK was made
    Time lifetime = 0;           // valid until created + lifetime
    uint32_t local_tag = 0;      // our Initiate Tag in the INIT-ACK
    uint32_t peer_tag = 0;       // the peer's Initiate Tag (from its INIT)
    uint32_t local_tie_tag = 0;  // tags of an existing TCB, if one existed (§5.2.2), else 0
    uint32_t peer_tie_tag = 0;
    uint32_t local_tsn = 0;      // our initial TSN
    uint32_t peer_tsn = 0;       // the peer's initial TSN
    uint32_t peer_rwnd = 0;      // the peer's a_rwnd
    uint16_t outbound_streams = 0; // negotiated: min(our OS, the peer's MIS)
    uint16_t inbound_streams = 0;  // min(our MIS, the peer's OS)
    uint16_t local_port = 0;
    uint16_t peer_port = 0;
    // The peer's IPv4 addresses from its INIT's address parameters (§5.1.2), network order.
    static constexpr size_t kMaxAddresses = 8;
    uint8_t addr_count = 0;
    uint8_t addrs[kMaxAddresses][4] = {};
    // The peer's Adaptation Layer Indication from its INIT (RFC 5061 §4.2.6), if it sent one.
    bool has_adaptation = false;
    uint32_t adaptation = 0;
};

constexpr size_t kCookieKeySize = 32;
constexpr size_t kCookieSize = 96 + 32; // fields (padded) + HMAC-SHA-256

// Writes the signed cookie (kCookieSize bytes).
void write_cookie(const CookieData& c, const uint8_t key[kCookieKeySize], uint8_t out[kCookieSize]);
// Checks size, version and signature; fills `c`. nullptr, or why the cookie is refused.
const char* read_cookie(const uint8_t* p, size_t n, const uint8_t key[kCookieKeySize], CookieData& c);

} // namespace sctpm::sctp
