// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the business-card parser (a card arrives in every hello, from the network).
//
// Input: the card text, any bytes.
// Invariants: a rejection is an sctpm::Error naming the card; an accepted card has both ports in
// 1..65535 and at least one address, none empty or holding a separator or a NUL; it formats to a
// text that parses to the same card, and that text formats to itself (one canonical form).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "card.hpp"
#include "error.hpp"

using namespace sctpm;

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "card_fuzz invariant violated: %s\n", what);
        std::abort();
    }
}

bool same(const Card& a, const Card& b) {
    return a.udp_port == b.udp_port && a.sctp_port == b.sctp_port && a.addresses == b.addresses && a.key == b.key;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    Card card;
    try {
        card = parse_card(text);
    } catch (const Error& e) {
        check(std::string(e.what()).rfind("card '", 0) == 0, "rejection does not name the card");
        return 0;
    }
    check(text.find('\0') == std::string::npos, "a card with a NUL byte was accepted");
    check(card.udp_port >= 1 && card.sctp_port >= 1, "port 0 accepted");
    check(!card.addresses.empty(), "no address");
    for (const std::string& a : card.addresses)
        check(!a.empty() && a.find_first_of(",;=", 0) == std::string::npos && a.find('\0') == std::string::npos,
              "address not in plain form");
    const std::string canonical = format_card(card);
    Card again;
    try {
        again = parse_card(canonical);
    } catch (const Error&) {
        check(false, "the formatted card does not parse");
    }
    check(same(card, again), "round trip changed the card");
    check(format_card(again) == canonical, "canonical form not stable");
    return 0;
}
