// SPDX-License-Identifier: BSD-3-Clause
// SHA-256 as FIPS 180-4 specifies it (section 6.2), HMAC as RFC 2104 does; checked against the
// FIPS and RFC 4231 test vectors (tests/unit/test_hmac_sha256.cpp).
#include "hmac_sha256.hpp"

#include <cerrno>
#include <cstring>
#include <sys/random.h>

#include "error.hpp"

namespace sctpm {
namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr size_t kBlock = 64;

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

class Sha256 {
public:
    void add(std::string_view data) {
        length_ += data.size();
        for (unsigned char c : data) {
            block_[used_++] = c;
            if (used_ == kBlock) {
                compress();
                used_ = 0;
            }
        }
    }

    Digest finish() {
        const uint64_t bits = length_ * 8;
        block_[used_++] = 0x80;
        if (used_ > kBlock - 8) {
            std::memset(block_ + used_, 0, kBlock - used_);
            compress();
            used_ = 0;
        }
        std::memset(block_ + used_, 0, kBlock - 8 - used_);
        for (int i = 0; i < 8; ++i)
            block_[kBlock - 1 - i] = uint8_t(bits >> (8 * i));
        compress();
        Digest d;
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 4; ++j)
                d[4 * i + j] = uint8_t(h_[i] >> (24 - 8 * j));
        return d;
    }

private:
    void compress() {
        uint32_t w[64];
        for (int t = 0; t < 16; ++t)
            w[t] = uint32_t(block_[4 * t]) << 24 | uint32_t(block_[4 * t + 1]) << 16 | uint32_t(block_[4 * t + 2]) << 8 |
                   block_[4 * t + 3];
        for (int t = 16; t < 64; ++t) {
            const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
            const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
        for (int t = 0; t < 64; ++t) {
            const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
            const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h_[0] += a, h_[1] += b, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
    }

    uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint8_t block_[kBlock] = {};
    size_t used_ = 0;
    uint64_t length_ = 0;
};

} // namespace

Digest hmac_sha256(std::string_view key, std::span<const std::string_view> parts) {
    uint8_t k[kBlock] = {};
    if (key.size() > kBlock) {
        Sha256 s;
        s.add(key);
        const Digest d = s.finish();
        std::memcpy(k, d.data(), d.size());
    } else {
        std::memcpy(k, key.data(), key.size());
    }
    uint8_t pad[kBlock];
    auto padded = [&](uint8_t with) {
        for (size_t i = 0; i < kBlock; ++i)
            pad[i] = k[i] ^ with;
        return std::string_view(reinterpret_cast<const char*>(pad), kBlock);
    };
    Sha256 inner;
    inner.add(padded(0x36));
    for (std::string_view p : parts)
        inner.add(p);
    const Digest inner_digest = inner.finish();
    Sha256 outer;
    outer.add(padded(0x5c));
    outer.add(std::string_view(reinterpret_cast<const char*>(inner_digest.data()), inner_digest.size()));
    return outer.finish();
}

bool same_digest(const uint8_t* a, const uint8_t* b, size_t len) {
    uint8_t diff = 0;
    for (size_t i = 0; i < len; ++i)
        diff |= a[i] ^ b[i];
    return diff == 0;
}

std::string random_bytes(size_t n) {
    std::string out(n, '\0');
    size_t got = 0;
    while (got < n) {
        const ssize_t r = getrandom(out.data() + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            throw Error(std::string("getrandom: ") + std::strerror(errno));
        got += size_t(r);
    }
    return out;
}

} // namespace sctpm
