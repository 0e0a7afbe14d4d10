// SPDX-License-Identifier: BSD-3-Clause
// HMAC-SHA-256 through libcrypto's EVP_MAC (the parts are fed in turn, nothing is concatenated);
// checked against RFC 4231's test vectors (tests/unit/test_hmac_sha256.cpp).
#include "hmac_sha256.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <sys/random.h>

#include "error.hpp"

namespace sctpm {
namespace {

struct MacFree {
    void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
    void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

// Fetched once per process: a fetch looks the algorithm up in libcrypto's provider tables.
EVP_MAC* hmac_algorithm() {
    static const std::unique_ptr<EVP_MAC, MacFree> mac(EVP_MAC_fetch(nullptr, OSSL_MAC_NAME_HMAC, nullptr));
    if (!mac)
        throw Error("libcrypto: HMAC is not available (EVP_MAC_fetch failed)");
    return mac.get();
}

} // namespace

Digest hmac_sha256(std::string_view key, std::span<const std::string_view> parts) {
    std::unique_ptr<EVP_MAC_CTX, MacFree> ctx(EVP_MAC_CTX_new(hmac_algorithm()));
    char digest_name[] = OSSL_DIGEST_NAME_SHA2_256;
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
                                 OSSL_PARAM_construct_end()};
    // An empty key is a valid HMAC key; libcrypto wants a non-null pointer for it.
    static const unsigned char no_key = 0;
    const auto* key_bytes = key.empty() ? &no_key : reinterpret_cast<const unsigned char*>(key.data());
    bool ok = ctx && EVP_MAC_init(ctx.get(), key_bytes, key.size(), params) == 1;
    for (std::string_view p : parts)
        ok = ok && EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(p.data()), p.size()) == 1;
    Digest out{};
    size_t len = 0;
    ok = ok && EVP_MAC_final(ctx.get(), out.data(), &len, out.size()) == 1 && len == out.size();
    if (!ok)
        throw Error("libcrypto: HMAC-SHA-256 failed");
    return out;
}

bool same_digest(const uint8_t* a, const uint8_t* b, size_t len) { return CRYPTO_memcmp(a, b, len) == 0; }

std::string random_bytes(size_t n) {
    std::string out(n, '\0');
    size_t got = 0;
    while (got < n) {
        const ssize_t r = getrandom(out.data() + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            throw Error(std::string("getrandom: ") + std::strerror(errno));
        got += size_t(r);
    }
    return out;
}

} // namespace sctpm
