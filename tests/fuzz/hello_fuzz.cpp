// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for a hello's payload (src/hello_auth.hpp), the first bytes a new link's
// opener sends, from anyone on the network.
//
// Input: the payload, any bytes.
// Invariants: nothing is read outside the input; the payload is accepted exactly when it holds a
// nonce, a length and that many blob bytes; an accepted one has a nonce of kNonceBytes and formats
// back to the very same bytes (no byte is lost, added or moved between blob and card).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hello_auth.hpp"

using namespace sctpm;

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "hello_fuzz invariant violated: %s\n", what);
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> in(data, data + size); // exactly sized: ASan sees any overread
    const std::optional<HelloParts> h = parse_hello(in.data(), in.size());
    const bool fits = size >= kNonceBytes + 2 &&
                      kNonceBytes + 2 + (size_t(in[kNonceBytes]) << 8 | in[kNonceBytes + 1]) <= size;
    check(h.has_value() == fits, "accepted a payload that does not fit, or refused one that does");
    if (!h)
        return 0;
    check(h->nonce.size() == kNonceBytes, "nonce size");
    const std::string again = format_hello(*h);
    check(again.size() == size && std::memcmp(again.data(), in.data(), size) == 0, "does not format back to itself");
    return 0;
}
