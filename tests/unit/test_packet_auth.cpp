// SPDX-License-Identifier: BSD-3-Clause
// auth=packet's keys, key ids and retire frames (packet_auth.hpp): both sides of a link compute the
// same id, the two links both sides open at once get different ones, and a retire verifies only
// for the role that made it.
#include <gtest/gtest.h>

#include <set>

#include "frame.hpp"
#include "packet_auth.hpp"

using namespace sctpm;

TEST(PacketAuth, KeyIdsAreAgreedAndDistinctPerLink) {
    const uint32_t tag_a = 0x1234, tag_b = 0xabcd0000;
    std::set<uint16_t> ids;
    for (uint8_t n = 0; n < kMaxLinks; ++n) {
        // Link n opened by A: A passes its own tag first, B passes A's (its remote) first; and back.
        const uint16_t by_a = packet_key_id(n, tag_a, tag_b), by_b = packet_key_id(n, tag_b, tag_a);
        EXPECT_NE(by_a, by_b) << "link " << int(n);
        EXPECT_GE(std::min(by_a, by_b), 1); // never the null key
        ids.insert(by_a);
        ids.insert(by_b);
    }
    EXPECT_EQ(ids.size(), 2 * kMaxLinks);
}

TEST(PacketAuth, KeyDependsOnTheAcceptorsKeyAndBothNonces) {
    const std::string k = packet_auth_key("key-a", "nonce-o", "nonce-a");
    EXPECT_EQ(k.size(), 32u);
    EXPECT_EQ(k, packet_auth_key("key-a", "nonce-o", "nonce-a"));
    EXPECT_NE(k, packet_auth_key("key-b", "nonce-o", "nonce-a"));
    EXPECT_NE(k, packet_auth_key("key-a", "nonce-x", "nonce-a"));
    EXPECT_NE(k, packet_auth_key("key-a", "nonce-o", "nonce-x"));
}

TEST(PacketAuth, RetireVerifiesOnlyForItsSenderAndKey) {
    const std::string key(32, 'k');
    const std::string r = format_retire(0x0102, key, AuthRole::opener);
    ASSERT_EQ(r.size(), kRetireBytes);
    const auto* p = reinterpret_cast<const uint8_t*>(r.data());
    EXPECT_EQ(retire_key_id(p), 0x0102);
    EXPECT_TRUE(check_retire(p, key, AuthRole::opener));
    EXPECT_FALSE(check_retire(p, key, AuthRole::acceptor)); // reflected back to its sender
    EXPECT_FALSE(check_retire(p, std::string(32, 'x'), AuthRole::opener));
}

TEST(PacketAuth, RetireFrameHasOneSize) {
    const std::string f = control_frame(FrameKind::retire, 0x81, std::string(kRetireBytes, 'r'));
    std::string why;
    auto h = decode_frame_header(reinterpret_cast<const uint8_t*>(f.data()), f.size(), FrameLimits{}, &why);
    ASSERT_TRUE(h) << why;
    EXPECT_EQ(h->kind, FrameKind::retire);
    EXPECT_EQ(h->link, 0x81);
    const std::string short_one = control_frame(FrameKind::retire, 0, std::string(kRetireBytes - 1, 'r'));
    EXPECT_FALSE(decode_frame_header(reinterpret_cast<const uint8_t*>(short_one.data()), short_one.size(), FrameLimits{}, &why));
    EXPECT_EQ(why, "frame: retire of 33 bytes, it has 34");
}
