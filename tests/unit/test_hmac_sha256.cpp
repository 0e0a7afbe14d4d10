// SPDX-License-Identifier: BSD-3-Clause
// HMAC-SHA-256 against RFC 4231's test cases, and against Python's hmac module at the lengths
// where SHA-256's padding spills into another block; the link MACs' inputs are bound as documented.
#include <gtest/gtest.h>

#include <string>

#include "hello_auth.hpp"
#include "hmac_sha256.hpp"

using namespace sctpm;

namespace {

std::string hex(const Digest& d) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (uint8_t b : d) {
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

std::string counting(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>(i % 251);
    return s;
}

} // namespace

TEST(HmacSha256, Rfc4231TestCases) {
    EXPECT_EQ(hex(hmac_sha256(std::string(20, '\x0b'), {"Hi There"})),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    EXPECT_EQ(hex(hmac_sha256("Jefe", {"what do ya want for nothing?"})),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    EXPECT_EQ(hex(hmac_sha256(std::string(20, '\xaa'), {std::string(50, '\xdd')})),
              "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    // Keys longer than a block are hashed first.
    EXPECT_EQ(hex(hmac_sha256(std::string(131, '\xaa'), {"Test Using Larger Than Block-Size Key - Hash Key First"})),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    EXPECT_EQ(hex(hmac_sha256(std::string(131, '\xaa'),
                              {"This is a test using a larger than block-size key and a larger than block-size data. "
                               "The key needs to be hashed before being used by the HMAC algorithm."})),
              "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, PaddingBoundaries) {
    const std::string key(16, 'k');
    const std::pair<size_t, const char*> want[] = {
        {55, "e8320dc915c2d765bfe66285b140fe0a79f084f2e6db50e51ac4a96a9f43fe3b"},
        {56, "1c8d0f522e7a409b61f599c3f0d350978a26eb8ce7d5a04c55adfc48c478b5cb"},
        {63, "b46463833967ae3f49b445c6a9f25a5d15f4c1ff00c5743c6797d0511a1aea2f"},
        {64, "bed24333999aefec7cbeca34c6ecf0e0c9a42befd1406f0a16fcad11e23063a7"},
        {65, "074473b42fc682b88add8683868c2626ff5eb635365a5eb6ab28eeb1d927cb74"},
        {119, "d12de47af90c2ffc89fbe2225495abf747f860dd5651536e9103c2a5a62042f5"},
        {120, "aed434a195bdd484e2e5bdb9a45e4b5fccf0b8a6c8b951ed878e317cde7d5aee"},
        {1000, "7ab08dbb6678754c88de6b0c9046adb8fd6386b1c994d7b01824d3d90858a59b"},
    };
    for (const auto& [n, digest] : want)
        EXPECT_EQ(hex(hmac_sha256(key, {counting(n)})), digest) << n << " bytes";
}

TEST(HmacSha256, PartsAreConcatenated) {
    const std::string data = counting(300);
    const Digest whole = hmac_sha256("key", {data});
    EXPECT_EQ(hmac_sha256("key", {data.substr(0, 1), data.substr(1, 64), "", data.substr(65)}), whole);
}

TEST(HmacSha256, SameDigestComparesEveryByte) {
    Digest a = hmac_sha256("k", {"x"}), b = a;
    EXPECT_TRUE(same_digest(a.data(), b.data(), a.size()));
    for (size_t i : {size_t(0), size_t(17), a.size() - 1}) {
        b = a;
        b[i] ^= 1;
        EXPECT_FALSE(same_digest(a.data(), b.data(), a.size())) << "byte " << i;
    }
}

TEST(HmacSha256, RandomBytesDiffer) {
    const std::string a = random_bytes(kNonceBytes), b = random_bytes(kNonceBytes);
    EXPECT_EQ(a.size(), kNonceBytes);
    EXPECT_NE(a, b);
}

// Each input of a link MAC changes it, and the two roles never give the same MAC.
TEST(LinkMac, BindsRoleKeyNoncesAndHello) {
    const std::string key(kAuthKeyBytes, 'K'), no(kNonceBytes, 'o'), na(kNonceBytes, 'a');
    const Digest base = link_mac(AuthRole::opener, key, no, na, "P1 pg");
    EXPECT_NE(link_mac(AuthRole::acceptor, key, no, na, "P1 pg"), base);
    EXPECT_NE(link_mac(AuthRole::opener, std::string(kAuthKeyBytes, 'L'), no, na, "P1 pg"), base);
    EXPECT_NE(link_mac(AuthRole::opener, key, na, no, "P1 pg"), base);
    EXPECT_NE(link_mac(AuthRole::opener, key, no, std::string(kNonceBytes, 'b'), "P1 pg"), base);
    EXPECT_NE(link_mac(AuthRole::opener, key, no, na, "P0 pg"), base);
    EXPECT_EQ(link_mac(AuthRole::opener, key, no, na, "P1 pg"), base);
}
