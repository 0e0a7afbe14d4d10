// SPDX-License-Identifier: BSD-3-Clause
// Big-endian (network order) loads and stores on raw bytes, for every wire format here (SCTP's
// chunks in src/sctp/, iWARP's headers in iwarp/): fields are big-endian and may sit at any
// alignment, so they are assembled byte by byte.
#pragma once
#include <cstdint>

namespace sctpm::be {

inline uint16_t load16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

inline uint32_t load32(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

inline uint64_t load64(const uint8_t* p) { return uint64_t(load32(p)) << 32 | load32(p + 4); }

inline void store16(uint8_t* p, uint16_t v) {
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}

inline void store32(uint8_t* p, uint32_t v) {
    store16(p, uint16_t(v >> 16));
    store16(p + 2, uint16_t(v));
}

inline void store64(uint8_t* p, uint64_t v) {
    store32(p, uint32_t(v >> 32));
    store32(p + 4, uint32_t(v));
}

} // namespace sctpm::be
