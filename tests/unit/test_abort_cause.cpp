// SPDX-License-Identifier: BSD-3-Clause
// The ABORT chunk of a COMM_LOST notification becomes a readable reason.
#include <gtest/gtest.h>

#include <vector>

#include "abort_cause.hpp"

using sctpm::describe_abort_chunk;

namespace {

// An ABORT chunk with the given causes (code, info), each padded to 4 bytes.
std::vector<uint8_t> abort_chunk(const std::vector<std::pair<uint16_t, std::string>>& causes, uint8_t flags = 0) {
    std::vector<uint8_t> c = {6, flags, 0, 0};
    for (const auto& [code, info] : causes) {
        const size_t len = 4 + info.size();
        c.insert(c.end(), {uint8_t(code >> 8), uint8_t(code), uint8_t(len >> 8), uint8_t(len)});
        c.insert(c.end(), info.begin(), info.end());
        while (c.size() % 4)
            c.push_back(0);
    }
    c[2] = uint8_t(c.size() >> 8);
    c[3] = uint8_t(c.size());
    return c;
}

} // namespace

TEST(AbortCause, ProtocolViolationCarriesUsrsctpsText) {
    auto c = abort_chunk({{13, "Duplicate S-SEQ: 5"}});
    EXPECT_EQ(describe_abort_chunk(c.data(), c.size()), "ABORT: protocol violation (Duplicate S-SEQ: 5)");
}

TEST(AbortCause, SeveralCausesAndTheTBit) {
    auto c = abort_chunk({{4, ""}, {12, "bye"}, {99, "x"}}, 1);
    EXPECT_EQ(describe_abort_chunk(c.data(), c.size()),
              "ABORT (T bit): out of resource; user-initiated abort (bye); cause 99");
}

TEST(AbortCause, NoCausesStillSaysAbort) {
    auto c = abort_chunk({});
    EXPECT_EQ(describe_abort_chunk(c.data(), c.size()), "ABORT");
}

TEST(AbortCause, NothingOrNotAnAbortChunkIsEmpty) {
    EXPECT_EQ(describe_abort_chunk(nullptr, 0), "");
    const uint8_t data_chunk[] = {0, 3, 0, 4};
    EXPECT_EQ(describe_abort_chunk(data_chunk, sizeof data_chunk), "");
}

TEST(AbortCause, TruncatedOrLyingLengthsStopSafely) {
    auto c = abort_chunk({{13, "abcdefgh"}});
    // Cut inside the cause: the cause is dropped, nothing is read past the end.
    EXPECT_EQ(describe_abort_chunk(c.data(), 10), "ABORT");
    c[6] = 0; c[7] = 2; // cause length below its own header
    EXPECT_EQ(describe_abort_chunk(c.data(), c.size()), "ABORT");
    c[6] = 0x7f; c[7] = 0xff; // cause length past the chunk
    EXPECT_EQ(describe_abort_chunk(c.data(), c.size()), "ABORT");
    auto d = abort_chunk({{13, "\x01\x02ok"}});
    EXPECT_EQ(describe_abort_chunk(d.data(), d.size()), "ABORT: protocol violation (??ok)");
}
