// SPDX-License-Identifier: BSD-3-Clause
#include "heap_policy.hpp"

#include <cstdlib>
#include <cstring>
#include <malloc.h>

namespace sctpm {
namespace {
// The name of the first glibc malloc control the user set in the environment, or nullptr.
const char* user_malloc_control() {
    static const char* const kVariables[] = {"MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_"};
    for (const char* v : kVariables)
        if (std::getenv(v))
            return v;
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables && (std::strstr(tunables, "glibc.malloc.trim_threshold") ||
                     std::strstr(tunables, "glibc.malloc.top_pad") ||
                     std::strstr(tunables, "glibc.malloc.mmap_threshold")))
        return "GLIBC_TUNABLES";
    return nullptr;
}
} // namespace

HeapPolicy keep_freed_heap() {
    HeapPolicy p;
#if defined(__GLIBC__)
    if (const char* v = user_malloc_control()) {
        p.reason = std::string(v) + " is set: glibc's heap policy is left to it";
        return p;
    }
    // Setting either turns off glibc's own adjustment of both; the mmap threshold is set too so
    // that large temporary buffers (MPICH's unexpected messages) also come from the heap.
    const bool trim = mallopt(M_TRIM_THRESHOLD, static_cast<int>(kHeapTrimThreshold)) == 1;
    const bool mmap = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapMmapThreshold)) == 1;
    p.applied = trim && mmap;
    if (!p.applied)
        p.reason = "mallopt refused M_TRIM_THRESHOLD or M_MMAP_THRESHOLD";
#else
    p.reason = "not glibc";
#endif
    return p;
}

} // namespace sctpm
