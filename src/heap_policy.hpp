// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// glibc's heap policy for a process that moves large messages through usrsctp.
//
// usrsctp copies every message into 16 KiB mbuf clusters from malloc and frees them once the
// peer acknowledged (sender) or the application read (receiver). With glibc's default trim
// threshold the freed top of the heap goes back to the kernel after each message and the next
// one faults every page in again: a 1 MiB ping-pong on loopback took 5.4 ms instead of 0.39 ms.
#include <string>

namespace sctpm {

// What keep_freed_heap() did (the tests read it).
struct HeapPolicy {
    bool applied = false; // mallopt was called
    std::string reason;   // why not, when not applied
};

// Keeps up to kHeapTrimThreshold of freed heap mapped and serves allocations below
// kHeapMmapThreshold from the heap (mallopt M_TRIM_THRESHOLD, M_MMAP_THRESHOLD), unless the user
// set glibc's own controls (MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_, MALLOC_MMAP_THRESHOLD_, or
// glibc.malloc.* in GLIBC_TUNABLES): those then stay in charge. Once per process.
HeapPolicy keep_freed_heap();

constexpr long kHeapTrimThreshold = 64L << 20;
constexpr long kHeapMmapThreshold = 32L << 20; // glibc's largest on 64-bit
} // namespace sctpm
