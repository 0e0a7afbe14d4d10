// SPDX-License-Identifier: BSD-3-Clause
// HMAC-SHA-256 for the hello's proof of membership (hello_auth.hpp) and the packet-auth keys
// (packet_auth.hpp), from OpenSSL's libcrypto (maintained, and it uses the CPU's SHA
// instructions), and the kernel's random bytes for keys and nonces.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sctpm {

using Digest = std::array<uint8_t, 32>;

// HMAC-SHA-256 of the concatenation of `parts` under `key`; throws Error if libcrypto fails.
Digest hmac_sha256(std::string_view key, std::span<const std::string_view> parts);
inline Digest hmac_sha256(std::string_view key, std::initializer_list<std::string_view> parts) {
    return hmac_sha256(key, std::span<const std::string_view>(parts.begin(), parts.size()));
}

// Compares in time independent of where they differ (a MAC check must not leak a prefix).
bool same_digest(const uint8_t* a, const uint8_t* b, size_t len);

// n bytes from getrandom(2); throws Error if the kernel cannot give them.
std::string random_bytes(size_t n);

} // namespace sctpm
