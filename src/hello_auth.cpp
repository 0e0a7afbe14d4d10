// SPDX-License-Identifier: BSD-3-Clause
// A hello's payload and the two MACs of a link's proof of membership (hello_auth.hpp).
#include "hello_auth.hpp"

namespace sctpm {

std::string format_hello(const HelloParts& h) {
    std::string out = h.nonce;
    out += static_cast<char>(h.blob.size() >> 8);
    out += static_cast<char>(h.blob.size() & 0xff);
    return out + h.blob + h.card;
}

std::optional<HelloParts> parse_hello(const uint8_t* payload, size_t len) {
    const size_t at = kNonceBytes;
    if (len < at + 2)
        return std::nullopt;
    const size_t blob_len = size_t(payload[at]) << 8 | payload[at + 1];
    if (at + 2 + blob_len > len)
        return std::nullopt;
    const char* p = reinterpret_cast<const char*>(payload);
    return HelloParts{std::string(p, kNonceBytes), std::string(p + at + 2, blob_len),
                      std::string(p + at + 2 + blob_len, len - at - 2 - blob_len)};
}

Digest link_mac(AuthRole who, std::string_view key, std::string_view nonce_opener, std::string_view nonce_acceptor,
                std::string_view blob) {
    // Distinct labels: the acceptor's answer can never be reflected back as the opener's proof.
    const std::string_view label = who == AuthRole::acceptor ? std::string_view("sctpm accept", 13)
                                                             : std::string_view("sctpm open", 11);
    return hmac_sha256(key, {label, nonce_opener, nonce_acceptor, blob});
}

} // namespace sctpm
