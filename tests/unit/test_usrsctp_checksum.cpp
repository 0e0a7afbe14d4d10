// SPDX-License-Identifier: BSD-3-Clause
// The SCTP checksum of the usrsctp we build (tools/patches/usrsctp/crc32c-sse42.patch computes it
// with the SSE4.2 CRC32 instruction where the CPU has one, in three chains joined at the end for
// buffers of 384 bytes or more, 3072 at a time where it can, what is left of them in three parts as
// long as it allows, joined by a carry-less multiply): it must equal CRC32c (RFC 9260
// appendix A) for every length and alignment, around those block sizes too, or packets between
// hosts are dropped. Loopback
// tests cannot tell: usrsctp skips the check on loopback.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <usrsctp.h>
#include <vector>

namespace {

// Bit by bit, reflected polynomial 0x82F63B78, as the RFC defines it.
uint32_t reference_crc32c(const uint8_t* p, size_t n) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) {
        crc ^= p[i];
        for (int b = 0; b < 8; ++b)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

} // namespace

TEST(UsrsctpChecksum, KnownAnswer) {
    char text[] = "123456789";
    EXPECT_EQ(usrsctp_crc32c(text, 9), 0xE3069283u);
    EXPECT_EQ(reference_crc32c(reinterpret_cast<uint8_t*>(text), 9), 0xE3069283u);
}

TEST(UsrsctpChecksum, EqualsTheReferenceForEveryLengthAndAlignment) {
    std::vector<uint8_t> buf(65000 + 16);
    uint32_t x = 12345;
    for (auto& b : buf) {
        x = x * 1103515245u + 12345u;
        b = static_cast<uint8_t>(x >> 16);
    }
    for (size_t offset = 0; offset < 8; ++offset)
        for (size_t len : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{7}, size_t{8}, size_t{9}, size_t{15},
                           size_t{16}, size_t{17}, size_t{63}, size_t{64}, size_t{65}, size_t{383}, size_t{384},
                           size_t{385}, size_t{1452}, size_t{3071}, size_t{3072}, size_t{3073}, size_t{3456},
                           size_t{8972}, size_t{9000}, size_t{65000}}) {
            uint8_t* p = buf.data() + offset;
            EXPECT_EQ(usrsctp_crc32c(p, len), reference_crc32c(p, len)) << "offset " << offset << " length " << len;
        }
}

// Every length a packet's remainder after the 3 x 1024-byte parts can have, so every part length
// the carry-less-multiply join uses (and the single chain under 384 bytes), then a long part too.
TEST(UsrsctpChecksum, EqualsTheReferenceForEveryLengthUpToThreeLongParts) {
    std::vector<uint8_t> buf(2 * 3072 + 16);
    uint32_t x = 777;
    for (auto& b : buf) {
        x = x * 1103515245u + 12345u;
        b = static_cast<uint8_t>(x >> 16);
    }
    for (size_t offset : {size_t{0}, size_t{5}})
        for (size_t len = 0; len <= 2 * 3072; len += len < 3072 ? 1 : 97) {
            uint8_t* p = buf.data() + offset;
            ASSERT_EQ(usrsctp_crc32c(p, len), reference_crc32c(p, len)) << "offset " << offset << " length " << len;
        }
}
