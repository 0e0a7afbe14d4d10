// SPDX-License-Identifier: BSD-3-Clause
// The private data of ch3:hybrid's queue-pair connections (ch3_hybrid/include/hy_proto.h): what
// one side writes the other parses, and every other byte string is refused as malformed or as
// another version, never read past its length.
#include <gtest/gtest.h>

#include "hy_proto.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

MPIDI_CH3I_Hy_contact_t contact(uint32_t version = MPIDI_CH3I_HY_PROTO_VERSION)
{
    MPIDI_CH3I_Hy_contact_t c;
    std::memset(&c, 0, sizeof(c));
    c.version = version;
    c.stag = 0x1234;
    c.addr = 0x7fff00001000ull;
    return c;
}

std::vector<uint8_t> identity(const std::string &text, const MPIDI_CH3I_Hy_contact_t &c)
{
    std::vector<uint8_t> v(text.begin(), text.end());
    v.push_back(0);
    const uint8_t *p = reinterpret_cast<const uint8_t *>(&c);
    v.insert(v.end(), p, p + sizeof(c));
    return v;
}

hy_wire_status parse(const std::vector<uint8_t> &data, int *rank = nullptr, std::string *pg = nullptr,
                     MPIDI_CH3I_Hy_contact_t *out = nullptr)
{
    std::vector<char> text(data.size() + 1, 'x');
    int r = -1;
    const char *g = nullptr;
    MPIDI_CH3I_Hy_contact_t c;
    hy_wire_status s = hy_parse_identity(data.data(), data.size(), text.data(), &r, &g, &c);
    if (s != HY_WIRE_MALFORMED) {
        if (rank)
            *rank = r;
        if (pg)
            *pg = g;
        if (out)
            *out = c;
    }
    return s;
}

TEST(HyProto, IdentityRoundTrips)
{
    uint8_t buf[508];
    MPIDI_CH3I_Hy_contact_t c = contact(), back;
    int len = hy_write_identity(buf, sizeof(buf), 17, "kvs_123_0", &c);
    ASSERT_GT(len, 0);
    int rank;
    std::string pg;
    EXPECT_EQ(parse(std::vector<uint8_t>(buf, buf + len), &rank, &pg, &back), HY_WIRE_OK);
    EXPECT_EQ(rank, 17);
    EXPECT_EQ(pg, "kvs_123_0");
    EXPECT_EQ(back.stag, c.stag);
    EXPECT_EQ(back.addr, c.addr);
}

TEST(HyProto, IdentityThatDoesNotFitIsNotWritten)
{
    uint8_t buf[20];
    MPIDI_CH3I_Hy_contact_t c = contact();
    EXPECT_EQ(hy_write_identity(buf, sizeof(buf), 1, "a-process-group-id", &c), -1);
    EXPECT_EQ(hy_write_identity(buf, sizeof(buf), 1, "", &c), 3 + (int) sizeof(c));
}

TEST(HyProto, AnotherVersionIsToldApartFromGarbage)
{
    int rank = -1;
    EXPECT_EQ(parse(identity("3 pg", contact(MPIDI_CH3I_HY_PROTO_VERSION + 1)), &rank), HY_WIRE_VERSION);
    EXPECT_EQ(rank, 3); // so the receiver can say which rank it is
}

TEST(HyProto, TheProofIsTheLast32Bytes)
{
    EXPECT_EQ(hy_proof_at(0), -1);
    EXPECT_EQ(hy_proof_at(MPIDI_CH3I_HY_PROOF_BYTES), -1); // a proof and no identity
    EXPECT_EQ(hy_proof_at(MPIDI_CH3I_HY_PROOF_BYTES + 1), 1);
    EXPECT_EQ(hy_proof_at(508), 508 - MPIDI_CH3I_HY_PROOF_BYTES);
}

TEST(HyProto, MalformedIdentitiesAreRefused)
{
    const MPIDI_CH3I_Hy_contact_t c = contact();
    EXPECT_EQ(parse({}), HY_WIRE_MALFORMED);
    EXPECT_EQ(parse(identity("", c)), HY_WIRE_MALFORMED);              // no rank
    EXPECT_EQ(parse(identity("12", c)), HY_WIRE_MALFORMED);            // no group
    EXPECT_EQ(parse(identity("12 ", c)), HY_WIRE_MALFORMED);           // empty group
    EXPECT_EQ(parse(identity("-1 pg", c)), HY_WIRE_MALFORMED);         // negative rank
    EXPECT_EQ(parse(identity(" 1 pg", c)), HY_WIRE_MALFORMED);
    EXPECT_EQ(parse(identity("1x pg", c)), HY_WIRE_MALFORMED);
    EXPECT_EQ(parse(identity("99999999999 pg", c)), HY_WIRE_MALFORMED); // over INT_MAX
    std::vector<uint8_t> v = identity("1 pg", c);
    v.push_back(0); // one byte too many
    EXPECT_EQ(parse(v), HY_WIRE_MALFORMED);
    v = identity("1 pg", c);
    v.pop_back(); // one too few
    EXPECT_EQ(parse(v), HY_WIRE_MALFORMED);
    v = identity("1 pg", c);
    v[4] = 'x'; // the NUL is gone: text runs into the contact
    EXPECT_EQ(parse(v), HY_WIRE_MALFORMED);
    v = identity("1 pg", c);
    v[3] = 0; // a NUL early: the contact would start inside the text
    EXPECT_EQ(parse(v), HY_WIRE_MALFORMED);
}

TEST(HyProto, ContactIsExactlyItsSize)
{
    MPIDI_CH3I_Hy_contact_t c = contact(), out;
    std::vector<uint8_t> v(reinterpret_cast<uint8_t *>(&c), reinterpret_cast<uint8_t *>(&c) + sizeof(c));
    EXPECT_EQ(hy_parse_contact(v.data(), v.size(), &out), HY_WIRE_OK);
    EXPECT_EQ(out.addr, c.addr);
    EXPECT_EQ(hy_parse_contact(v.data(), v.size() - 1, &out), HY_WIRE_MALFORMED);
    v.push_back(0);
    EXPECT_EQ(hy_parse_contact(v.data(), v.size(), &out), HY_WIRE_MALFORMED);
    c = contact(7);
    EXPECT_EQ(hy_parse_contact(reinterpret_cast<uint8_t *>(&c), sizeof(c), &out), HY_WIRE_VERSION);
}

} // namespace
