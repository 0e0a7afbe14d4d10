// SPDX-License-Identifier: BSD-3-Clause
// Stream mapping policies (see stream_map.hpp). All arithmetic is on uint32 so negative contexts and
// tags map without undefined behaviour or negative remainders.
#include "stream_map.hpp"

#include <string>

#include "error.hpp"

namespace sctpm {

namespace {

constexpr uint32_t kMaxStreams = 1024; // frame domains and SCTP streams per association

uint16_t mod(int32_t value, uint16_t n) { return uint16_t(uint32_t(value) % n); }

// Integer mix (xor-shift, multiply) so that nearby inputs give unrelated outputs. The multipliers are
// odd "nothing up my sleeve" constants (2^32/phi, fractions of sqrt 2 and sqrt 3).
uint32_t mix(uint32_t x) {
    x ^= x >> 15;
    x *= 0x9e3779b9u;
    x ^= x >> 13;
    x *= 0x6a09e667u;
    x ^= x >> 16;
    return x;
}

// Tags are cut into blocks of n consecutive values; a block's tags go to n distinct streams, rotated
// by a hash of (context, block). So tags 0..n-1 never share a stream, and strided tag patterns
// (multiples of n, say) still spread like random ones instead of piling onto one stream.
uint16_t hash_stream(int32_t context, int32_t tag, uint16_t n) {
    const uint32_t t = uint32_t(tag);
    const uint32_t rotation = mix(uint32_t(context) * 0xbb67ae85u ^ mix(t / n)) % n;
    return uint16_t((t % n + rotation) % n);
}

} // namespace

StreamMap::StreamMap(StreamPolicy policy, uint16_t nstreams) : policy_(policy), nstreams_(nstreams) {
    if (nstreams == 0 || nstreams > kMaxStreams)
        throw Error("stream map: " + std::to_string(nstreams) + " streams, need 1.." + std::to_string(kMaxStreams));
}

Route StreamMap::select(const SendKey& key) const {
    if (hook_)
        return hook_(&key, nstreams_, hook_arg_);
    if (key.cls != 0)
        return {0, 0};
    switch (policy_) {
    case StreamPolicy::single:
        return {0, 0};
    case StreamPolicy::context: {
        const uint16_t s = mod(key.context, nstreams_);
        return {s, s};
    }
    case StreamPolicy::context_tag:
        return {hash_stream(key.context, key.tag, nstreams_), mod(key.context, nstreams_)};
    }
    return {0, 0};
}

} // namespace sctpm
