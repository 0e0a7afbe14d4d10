// SPDX-License-Identifier: BSD-3-Clause
// CRC32c: reflected polynomial 0x82F63B78. The hardware path folds 8 bytes per crc32
// instruction, three streams at once on long buffers; the table path is for CPUs without SSE4.2
// (and a cross-check in tests).
#include "sctp/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define SCTPM_CRC_X86 1
#endif

namespace sctpm::sctp {

namespace {

constexpr uint32_t kPoly = 0x82F63B78u; // Castagnoli, bit-reflected

constexpr std::array<uint32_t, 256> make_table() {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
        t[i] = c;
    }
    return t;
}

constexpr std::array<uint32_t, 256> kTable = make_table();

// Three-way interleaving: the crc32 instruction takes 3 cycles but a new one can start every
// cycle, so three independent streams over three consecutive blocks run about three times as
// fast; the CRC register is linear, so reg(A|B) = shift_|B|(reg(A)) ^ reg0(B), where shift_L
// advances a register over L zero bytes (here a table lookup per register byte).
constexpr size_t kBlock = 480; // bytes per stream; 3 * 480 = 1440 covers a 1500-MTU packet's payload

constexpr uint32_t zero_bytes(uint32_t r, size_t n) {
    for (size_t i = 0; i < n; ++i)
        r = kTable[r & 0xff] ^ (r >> 8);
    return r;
}

constexpr std::array<std::array<uint32_t, 256>, 4> make_shift() {
    std::array<uint32_t, 32> basis{};
    for (int j = 0; j < 32; ++j)
        basis[j] = zero_bytes(1u << j, kBlock);
    std::array<std::array<uint32_t, 256>, 4> t{};
    for (int k = 0; k < 4; ++k)
        for (uint32_t b = 0; b < 256; ++b) {
            uint32_t v = 0;
            for (int i = 0; i < 8; ++i)
                if (b & (1u << i))
                    v ^= basis[8 * k + i];
            t[k][b] = v;
        }
    return t;
}

constexpr std::array<std::array<uint32_t, 256>, 4> kShift = make_shift();

inline uint32_t shift_block(uint32_t r) {
    return kShift[0][r & 0xff] ^ kShift[1][(r >> 8) & 0xff] ^ kShift[2][(r >> 16) & 0xff] ^ kShift[3][r >> 24];
}

#ifdef SCTPM_CRC_X86
__attribute__((target("sse4.2"))) uint32_t hw_update(uint32_t crc, const uint8_t* p, size_t n) {
    uint64_t c = crc;
    while (n >= 3 * kBlock) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < kBlock; i += 8) {
            uint64_t v0, v1, v2;
            std::memcpy(&v0, p + i, 8);
            std::memcpy(&v1, p + kBlock + i, 8);
            std::memcpy(&v2, p + 2 * kBlock + i, 8);
            c = _mm_crc32_u64(c, v0);
            c1 = _mm_crc32_u64(c1, v1);
            c2 = _mm_crc32_u64(c2, v2);
        }
        c = shift_block(shift_block(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c1)) ^ static_cast<uint32_t>(c2);
        p += 3 * kBlock;
        n -= 3 * kBlock;
    }
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = static_cast<uint32_t>(c);
    if (n >= 4) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        c32 = _mm_crc32_u32(c32, v);
        p += 4;
        n -= 4;
    }
    while (n--)
        c32 = _mm_crc32_u8(c32, *p++);
    return c32;
}
#endif

bool detect_hw() {
#ifdef SCTPM_CRC_X86
    return __builtin_cpu_supports("sse4.2");
#else
    return false;
#endif
}

// Chosen once; constant afterwards (no mutable global state).
const bool kHaveHw = detect_hw();

} // namespace

bool crc32c_hw_available() { return kHaveHw; }

uint32_t crc32c_table(const uint8_t* p, size_t n) {
    uint32_t c = ~0u;
    while (n--)
        c = kTable[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

uint32_t crc32c_hw(const uint8_t* p, size_t n) {
#ifdef SCTPM_CRC_X86
    return ~hw_update(~0u, p, n);
#else
    return crc32c_table(p, n);
#endif
}

uint32_t crc32c(const uint8_t* p, size_t n) { return kHaveHw ? crc32c_hw(p, n) : crc32c_table(p, n); }

#ifdef SCTPM_CRC_X86
// The packet's CRC in one pass: the first 8 header bytes, the checksum field as zeros, the rest.
__attribute__((target("sse4.2"))) uint32_t hw_packet(const uint8_t* p, size_t n) {
    uint64_t head;
    std::memcpy(&head, p, 8);
    uint64_t c = _mm_crc32_u64(0xffffffffu, head);
    c = _mm_crc32_u32(static_cast<uint32_t>(c), 0);
    return ~hw_update(static_cast<uint32_t>(c), p + 12, n - 12);
}
#endif

uint32_t sctp_checksum(const uint8_t* packet, size_t len) {
    // The CRC covers the packet with the checksum field as zeros: header bytes 0..7, four zero
    // bytes, then the rest. Feeding it in pieces avoids writing into the caller's bytes.
    static constexpr uint8_t kZero[4] = {};
    if (len < 12)
        return 0;
#ifdef SCTPM_CRC_X86
    if (kHaveHw)
        return hw_packet(packet, len);
#endif
    uint32_t c = ~0u;
    auto feed = [&c](const uint8_t* p, size_t n) {
        while (n--)
            c = kTable[(c ^ *p++) & 0xff] ^ (c >> 8);
    };
    feed(packet, 8);
    feed(kZero, 4);
    feed(packet + 12, len - 12);
    return ~c;
}

void sctp_set_checksum(uint8_t* packet, size_t len) {
    uint32_t c = sctp_checksum(packet, len);
    packet[8] = static_cast<uint8_t>(c);
    packet[9] = static_cast<uint8_t>(c >> 8);
    packet[10] = static_cast<uint8_t>(c >> 16);
    packet[11] = static_cast<uint8_t>(c >> 24);
}

bool sctp_checksum_ok(const uint8_t* packet, size_t len) {
    if (len < 12)
        return false;
    uint32_t want = static_cast<uint32_t>(packet[8]) | static_cast<uint32_t>(packet[9]) << 8 |
                    static_cast<uint32_t>(packet[10]) << 16 | static_cast<uint32_t>(packet[11]) << 24;
    return sctp_checksum(packet, len) == want;
}

} // namespace sctpm::sctp
