// SPDX-License-Identifier: BSD-3-Clause
// CRC32c (Castagnoli), the SCTP checksum (RFC 9260 §6.8 and Appendix B). Every packet the engine
// sends carries it and every packet it receives is checked (usrsctp checks it over UDP too).
// The SSE4.2 crc32 instruction is used when the CPU has it (chosen once at run time), a
// byte-table loop otherwise.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sctpm::sctp {

// The CRC32c of n bytes (initial value ~0, final complement: RFC 3720 B.4's test vectors).
uint32_t crc32c(const uint8_t* p, size_t n);

// Both implementations, for tests (crc32c() calls one of them).
uint32_t crc32c_table(const uint8_t* p, size_t n);
uint32_t crc32c_hw(const uint8_t* p, size_t n); // only if crc32c_hw_available()
bool crc32c_hw_available();

// SCTP stores the CRC in the checksum field (bytes 8..11 of the common header) least
// significant byte first (RFC 9260 Appendix B).
uint32_t sctp_checksum(const uint8_t* packet, size_t len); // computed with the field taken as 0
void sctp_set_checksum(uint8_t* packet, size_t len);
bool sctp_checksum_ok(const uint8_t* packet, size_t len);

} // namespace sctpm::sctp
