// SPDX-License-Identifier: BSD-3-Clause
// State Cookie: fixed layout, big-endian fields, HMAC-SHA-256 over the first 96 bytes.
#include "sctp/cookie.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstring>

#include "sctp/wire.hpp"

namespace sctpm::sctp {

namespace {

constexpr uint8_t kVersion = 1;
constexpr size_t kBody = 96;

void mac(const uint8_t key[kCookieKeySize], const uint8_t* body, uint8_t out[32]) {
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, kCookieKeySize, body, kBody, out, &len);
}

} // namespace

void write_cookie(const CookieData& c, const uint8_t key[kCookieKeySize], uint8_t out[kCookieSize]) {
    std::memset(out, 0, kBody);
    out[0] = kVersion;
    be::store64(out + 4, static_cast<uint64_t>(c.created));
    be::store64(out + 12, static_cast<uint64_t>(c.lifetime));
    wire::put32(out + 20, c.local_tag);
    wire::put32(out + 24, c.peer_tag);
    wire::put32(out + 28, c.local_tie_tag);
    wire::put32(out + 32, c.peer_tie_tag);
    wire::put32(out + 36, c.local_tsn);
    wire::put32(out + 40, c.peer_tsn);
    wire::put32(out + 44, c.peer_rwnd);
    wire::put16(out + 48, c.outbound_streams);
    wire::put16(out + 50, c.inbound_streams);
    wire::put16(out + 52, c.local_port);
    wire::put16(out + 54, c.peer_port);
    out[56] = static_cast<uint8_t>(std::min<size_t>(c.addr_count, CookieData::kMaxAddresses));
    out[57] = c.has_adaptation ? 1 : 0;
    std::memcpy(out + 60, c.addrs, sizeof c.addrs);
    wire::put32(out + 92, c.adaptation);
    mac(key, out, out + kBody);
}

const char* read_cookie(const uint8_t* p, size_t n, const uint8_t key[kCookieKeySize], CookieData& c) {
    if (n != kCookieSize)
        return "State Cookie of the wrong size";
    if (p[0] != kVersion)
        return "State Cookie of an unknown version";
    uint8_t want[32];
    mac(key, p, want);
    if (CRYPTO_memcmp(want, p + kBody, 32) != 0)
        return "State Cookie signature mismatch";
    c.created = static_cast<Time>(be::load64(p + 4));
    c.lifetime = static_cast<Time>(be::load64(p + 12));
    c.local_tag = wire::get32(p + 20);
    c.peer_tag = wire::get32(p + 24);
    c.local_tie_tag = wire::get32(p + 28);
    c.peer_tie_tag = wire::get32(p + 32);
    c.local_tsn = wire::get32(p + 36);
    c.peer_tsn = wire::get32(p + 40);
    c.peer_rwnd = wire::get32(p + 44);
    c.outbound_streams = wire::get16(p + 48);
    c.inbound_streams = wire::get16(p + 50);
    c.local_port = wire::get16(p + 52);
    c.peer_port = wire::get16(p + 54);
    c.addr_count = static_cast<uint8_t>(std::min<size_t>(p[56], CookieData::kMaxAddresses));
    std::memcpy(c.addrs, p + 60, sizeof c.addrs);
    c.has_adaptation = p[57] != 0;
    c.adaptation = wire::get32(p + 92);
    return nullptr;
}

} // namespace sctpm::sctp
