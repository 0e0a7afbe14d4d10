// SPDX-License-Identifier: BSD-3-Clause
// Proof of membership on a new link (the "auth" setting). Every process draws a random key at
// start-up and publishes it in its business card, which travels only through the process manager
// (PMI) or a port name, never in a hello. The side that opens a link says hello with a fresh nonce;
// the other side answers with its own nonce and a MAC under its key (it is the process the card
// names); the opener proves with a MAC under the same key that it read that card. Both MACs cover
// both nonces and the opener's hello, so a recorded exchange proves nothing on another link.
//
//   hello:     nonce_o (16) | u16 blob length | blob | card without its key
//   challenge: nonce_a (16) | MAC(key, "sctpm accept" | nonce_o | nonce_a | blob)   (frame kind 2)
//   proof:                    MAC(key, "sctpm open"   | nonce_o | nonce_a | blob)   (frame kind 3)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hmac_sha256.hpp"

namespace sctpm {

constexpr size_t kAuthKeyBytes = 16;
constexpr size_t kNonceBytes = 16;
constexpr size_t kMacBytes = 32;
constexpr size_t kChallengeBytes = kNonceBytes + kMacBytes;
constexpr size_t kProofBytes = kMacBytes;

enum class AuthRole { acceptor, opener };

// A hello's payload (above), and its parts.
struct HelloParts {
    std::string nonce, blob, card;
};
std::string format_hello(const HelloParts& h); // blob at most 65535 bytes
// nullopt when the bytes are not that layout (shorter than a nonce and a length, or a blob length
// beyond the payload); the card is not checked here.
std::optional<HelloParts> parse_hello(const uint8_t* payload, size_t len);

Digest link_mac(AuthRole who, std::string_view key, std::string_view nonce_opener, std::string_view nonce_acceptor,
                std::string_view blob);

} // namespace sctpm
