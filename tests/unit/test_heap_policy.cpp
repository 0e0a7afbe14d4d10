// SPDX-License-Identifier: BSD-3-Clause
// keep_freed_heap(): glibc keeps the freed heap mapped (so that the next message does not fault
// its pages in again), unless the user set glibc's own malloc controls.
#include <cstdlib>
#include <malloc.h>
#include <vector>

#include <gtest/gtest.h>

#include "heap_policy.hpp"

using sctpm::keep_freed_heap;

namespace {
// Sets an environment variable for the scope of one test.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
    ~ScopedEnv() { unsetenv(name_); }

private:
    const char* name_;
};
} // namespace

TEST(HeapPolicy, UserMallocVariablesStayInCharge) {
    for (const char* v : {"MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_"}) {
        ScopedEnv env(v, "131072");
        const auto p = keep_freed_heap();
        EXPECT_FALSE(p.applied) << v;
        EXPECT_NE(p.reason.find(v), std::string::npos) << p.reason;
    }
    ScopedEnv env("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=131072");
    const auto p = keep_freed_heap();
    EXPECT_FALSE(p.applied);
    EXPECT_NE(p.reason.find("GLIBC_TUNABLES"), std::string::npos) << p.reason;
}

TEST(HeapPolicy, OtherTunablesDoNotCount) {
    ScopedEnv env("GLIBC_TUNABLES", "glibc.pthread.rseq=0");
    const auto p = keep_freed_heap();
    if (!p.applied && p.reason.find("mallopt") != std::string::npos)
        GTEST_SKIP() << "this malloc ignores mallopt (a sanitizer's allocator): " << p.reason;
    EXPECT_TRUE(p.applied) << p.reason;
}

TEST(HeapPolicy, FreedClustersStayMapped) {
    const auto p = keep_freed_heap();
    if (!p.applied)
        GTEST_SKIP() << "policy not applied here: " << p.reason;
    // What usrsctp does per 4 MiB message: 16 KiB clusters, all freed once acknowledged.
    constexpr size_t kCluster = 16 * 1024, kCount = 256;
    std::vector<void*> clusters;
    for (size_t i = 0; i < kCount; ++i) {
        clusters.push_back(std::malloc(kCluster));
        static_cast<volatile char*>(clusters.back())[0] = 1; // touch: make it resident
    }
    for (void* c : clusters)
        std::free(c);
    // glibc's default (128 KiB trim threshold) would have given all but ~128 KiB back.
    EXPECT_GE(mallinfo2().fordblks, kCluster * kCount);
}
