// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the private data of ch3:hybrid's queue-pair connections
// (ch3_hybrid/include/hy_proto.h): a connecting peer's identity and contact, from the network.
//
// Input: the private data, any bytes (an MPA frame carries at most 508).
// Invariants: nothing is read outside the input; an accepted identity has a rank >= 0, a
// non-empty group id without a NUL, and the NUL right before the contact; writing it again and
// parsing that gives the same rank, group and contact; the contact parser agrees on the version.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hy_proto.h"

namespace {

void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "hy_identity_fuzz invariant violated: %s\n", what);
        std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // Exactly sized copies, so that ASan sees any read or write past them.
    std::vector<uint8_t> in(data, data + size);
    std::vector<char> text(size ? size : 1);
    int rank = -1;
    const char *pg = nullptr;
    MPIDI_CH3I_Hy_contact_t contact;
    hy_wire_status s = hy_parse_identity(in.data(), size, text.data(), &rank, &pg, &contact);
    if (s == HY_WIRE_MALFORMED)
        return 0;
    check(rank >= 0, "negative rank");
    check(pg && *pg && pg >= text.data() && pg < text.data() + size, "group id empty or outside the text");
    check(size > sizeof(contact) && in[size - sizeof(contact) - 1] == 0, "the NUL is not before the contact");
    check(std::strlen(pg) == std::strlen(text.data()) - (size_t) (pg - text.data()), "group id not in the text");
    MPIDI_CH3I_Hy_contact_t direct;
    check(hy_parse_contact(in.data() + size - sizeof(contact), sizeof(contact), &direct) == s,
          "contact parser disagrees on the version");
    check((s == HY_WIRE_OK) == (contact.version == MPIDI_CH3I_HY_PROTO_VERSION), "version status wrong");

    std::vector<uint8_t> out(size + 16);
    int len = hy_write_identity(out.data(), out.size(), rank, pg, &contact);
    check(len > 0, "an accepted identity cannot be written again");
    std::vector<char> text2((size_t) len);
    int rank2 = -1;
    const char *pg2 = nullptr;
    MPIDI_CH3I_Hy_contact_t contact2;
    check(hy_parse_identity(out.data(), (size_t) len, text2.data(), &rank2, &pg2, &contact2) == s,
          "written again, it parses differently");
    check(rank2 == rank && std::strcmp(pg2, pg) == 0 && std::memcmp(&contact2, &contact, sizeof(contact)) == 0,
          "written again, it names another peer");
    return 0;
}
