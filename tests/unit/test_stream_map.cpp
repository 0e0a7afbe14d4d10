// SPDX-License-Identifier: BSD-3-Clause
// Stream mapping policies and the user hook.
#include <gtest/gtest.h>

#include <climits>
#include <set>
#include <vector>

#include "error.hpp"
#include "stream_map.hpp"

using namespace sctpm;

namespace {

const std::vector<int32_t> kOddValues = {0, 1, -1, 7, -7, 15, 16, 17, 1000, INT32_MAX, INT32_MIN, INT32_MIN + 1};

} // namespace

TEST(StreamMap, SingleUsesStreamZeroForEverything) {
    const StreamMap m(StreamPolicy::single, 16);
    EXPECT_EQ(m.policy(), StreamPolicy::single);
    EXPECT_EQ(m.streams(), 16);
    for (int32_t c : kOddValues)
        for (int32_t t : kOddValues) {
            const Route r = m.select({c, t, 0});
            EXPECT_EQ(r.stream, 0);
            EXPECT_EQ(r.domain, 0);
        }
}

TEST(StreamMap, ContextMapsStreamAndDomainByContext) {
    const StreamMap m(StreamPolicy::context, 16);
    EXPECT_EQ(m.select({7, 3, 0}).stream, 7);
    EXPECT_EQ(m.select({23, 3, 0}).stream, 7);
    for (int32_t c : kOddValues) {
        const Route r = m.select({c, 5, 0});
        EXPECT_LT(r.stream, 16) << c;
        EXPECT_EQ(r.stream, r.domain) << c;
        for (int32_t t : kOddValues)
            EXPECT_EQ(m.select({c, t, 0}).stream, r.stream) << "tag must not matter: " << c << "/" << t;
    }
}

TEST(StreamMap, ContextTagKeepsTheDomainOfTheContext) {
    const StreamMap m(StreamPolicy::context_tag, 16);
    for (int32_t c : kOddValues)
        for (int32_t t : kOddValues) {
            const Route r = m.select({c, t, 0});
            EXPECT_LT(r.stream, 16);
            EXPECT_EQ(r.domain, StreamMap(StreamPolicy::context, 16).select({c, 0, 0}).domain);
        }
    EXPECT_EQ(m.select({7, 1, 0}).domain, 7);
    EXPECT_EQ(m.select({7, 1, 0}).stream, m.select({7, 1, 0}).stream); // deterministic
}

TEST(StreamMap, ContextTagGivesTagsZeroToNMinusOneDistinctStreams) {
    for (uint16_t n : {2, 4, 10, 16, 64, 1024}) {
        const StreamMap m(StreamPolicy::context_tag, n);
        for (int32_t c : kOddValues) {
            std::set<uint16_t> used;
            for (int32_t t = 0; t < n; ++t)
                used.insert(m.select({c, t, 0}).stream);
            EXPECT_EQ(used.size(), n) << "n " << n << " context " << c;
        }
    }
}

namespace {

// Average share of the n streams that n tags start, start + stride, ... reach, over many contexts.
double coverage(uint16_t n, int32_t stride, bool shifted) {
    const StreamMap m(StreamPolicy::context_tag, n);
    double sum = 0;
    for (int32_t c = -3; c < 300; ++c) {
        std::set<uint16_t> used;
        const int32_t start = shifted ? 7 * c + 1000 : 0;
        for (int32_t i = 0; i < n; ++i)
            used.insert(m.select({c, start + i * stride, 0}).stream);
        sum += double(used.size()) / n;
    }
    return sum / 303;
}

} // namespace

TEST(StreamMap, ContextTagSpreadsConsecutiveAndStridedTags) {
    // A random hash reaches 1 - (1 - 1/n)^n of the streams: about 65% for n >= 10.
    for (uint16_t n : {10, 16, 64}) {
        EXPECT_GT(coverage(n, 1, true), 0.78) << n; // consecutive, not block aligned
        for (int32_t stride : {2, 3, 16, 64, 100, 1000, 1024})
            EXPECT_GT(coverage(n, stride, false), 0.6) << "n " << n << " stride " << stride;
    }
}

TEST(StreamMap, ContextTagIsBalancedAndSpreadsContexts) {
    const StreamMap m(StreamPolicy::context_tag, 10);
    std::vector<int> count(10, 0);
    for (int32_t t = 0; t < 10000; t += 7)
        ++count[m.select({42, t, 0}).stream];
    for (int c : count) {
        EXPECT_GT(c, 110);
        EXPECT_LT(c, 175);
    }
    // The same tag on many communicators does not pile onto one stream either.
    const StreamMap m16(StreamPolicy::context_tag, 16);
    std::set<uint16_t> used;
    for (int32_t c = 0; c < 64; ++c)
        used.insert(m16.select({c, 0, 0}).stream);
    EXPECT_GE(used.size(), 12u);
}

TEST(StreamMap, ControlPacketsUseStreamZeroDomainZero) {
    for (StreamPolicy p : {StreamPolicy::single, StreamPolicy::context, StreamPolicy::context_tag}) {
        const StreamMap m(p, 16);
        for (int32_t c : kOddValues) {
            const Route r = m.select({c, 9, 1});
            EXPECT_EQ(r.stream, 0);
            EXPECT_EQ(r.domain, 0);
        }
    }
}

TEST(StreamMap, OneStreamMapsEverythingToZero) {
    for (StreamPolicy p : {StreamPolicy::single, StreamPolicy::context, StreamPolicy::context_tag}) {
        const StreamMap m(p, 1);
        for (int32_t c : kOddValues)
            for (int32_t t : kOddValues) {
                const Route r = m.select({c, t, 0});
                EXPECT_EQ(r.stream, 0);
                EXPECT_EQ(r.domain, 0);
            }
    }
}

TEST(StreamMap, MaximumStreamCount) {
    const StreamMap m(StreamPolicy::context_tag, 1024);
    std::set<uint16_t> used;
    for (int32_t t = 0; t < 4096; ++t) {
        const Route r = m.select({INT32_MIN, t, 0});
        EXPECT_LT(r.stream, 1024);
        used.insert(r.stream);
    }
    EXPECT_GT(used.size(), 900u);
}

TEST(StreamMap, RejectsStreamCountOutOfRange) {
    for (uint16_t n : {0, 1025, 65535}) {
        try {
            StreamMap m(StreamPolicy::context, n);
            ADD_FAILURE() << n << " streams accepted";
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()), "stream map: " + std::to_string(n) + " streams, need 1..1024");
        }
    }
}

namespace {

struct HookLog {
    int calls = 0;
    SendKey last;
    uint16_t nstreams = 0;
};

Route test_hook(const SendKey* key, uint16_t nstreams, void* arg) {
    auto* log = static_cast<HookLog*>(arg);
    ++log->calls;
    log->last = *key;
    log->nstreams = nstreams;
    return {uint16_t(key->tag % nstreams), 3};
}

} // namespace

TEST(StreamMap, HookOverridesThePolicy) {
    StreamMap m(StreamPolicy::single, 8);
    HookLog log;
    m.set_hook(test_hook, &log);
    const Route r = m.select({11, 13, 0});
    EXPECT_EQ(r.stream, 5);
    EXPECT_EQ(r.domain, 3);
    EXPECT_EQ(log.calls, 1);
    EXPECT_EQ(log.last.context, 11);
    EXPECT_EQ(log.last.tag, 13);
    EXPECT_EQ(log.nstreams, 8);
    // Control packets go through the hook too: it replaces the policy entirely.
    EXPECT_EQ(m.select({11, 2, 1}).domain, 3);
    EXPECT_EQ(log.calls, 2);
    EXPECT_EQ(log.last.cls, 1);
    m.set_hook(nullptr, nullptr);
    EXPECT_EQ(m.select({11, 13, 0}).domain, 0);
    EXPECT_EQ(log.calls, 2);
}
