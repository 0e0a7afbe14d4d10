// SPDX-License-Identifier: BSD-3-Clause
// Per-packet integrity (auth=packet): SCTP-AUTH (RFC 4895) on every chunk that carries, acknowledges
// or ends data, under keys that a link's proof of membership (hello_auth.hpp) derives; the stack's
// null key (id 0), which an on-path observer can compute from the INIT and INIT-ACK, stops being
// accepted once both sides have switched.
//
// Each proved link installs its own key on the association, with an id both sides compute alike
// (so links proved at once, also from both sides, never collide):
//   key    = HMAC-SHA-256(K_acceptor, "sctpm sctp-auth" | nonce_o | nonce_a)
//   key id = 1 + link number + 128 if the opener's verification tag is the larger one
// The switch-over (transport_packet_auth.cpp):
//   1. the acceptor installs the key before it sends the challenge;
//   2. the opener checks the challenge, installs the key and sends with it at once (the proof first);
//   3. the acceptor checks the proof and sends with the key (the opener has it since step 2);
//   4. having switched, each side deactivates the null key; the stack tells when none of its chunks
//      stamped with it is left unacknowledged (SCTP_AUTH_FREE_KEY), and then it says so with a
//      retire frame, MACed under its current key;
//   5. each side deletes the null key once it has both its own SCTP_AUTH_FREE_KEY and the other's
//      retire: no retransmission of either side can need the null key any more.
//
//   retire: u16 key id | HMAC-SHA-256(key, "sctpm retire" | role of the sender on that key's link)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hello_auth.hpp"

namespace sctpm {

constexpr size_t kRetireBytes = 2 + kMacBytes;
constexpr uint16_t kNullKeyId = 0;

std::string packet_auth_key(std::string_view key_acceptor, std::string_view nonce_opener, std::string_view nonce_acceptor);
uint16_t packet_key_id(uint8_t link_number, uint32_t opener_tag, uint32_t acceptor_tag);

// The chunk types we require the peer to authenticate (in our INIT): all but those RFC 4895 forbids
// (INIT, INIT-ACK, SHUTDOWN-COMPLETE, AUTH) and COOKIE-ECHO/-ACK, which only the null key could cover.
const std::vector<uint8_t>& authenticated_chunk_types();

std::string format_retire(uint16_t key_id, std::string_view key, AuthRole sender);
// The key id of a retire payload of kRetireBytes; check_retire verifies its MAC.
uint16_t retire_key_id(const uint8_t* payload);
bool check_retire(const uint8_t* payload, std::string_view key, AuthRole sender);

} // namespace sctpm
