// SPDX-License-Identifier: BSD-3-Clause
// Business card: exact text format, round trip, and an error for every malformed field.
#include "card.hpp"
#include "error.hpp"
#include "sctpmpi.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using sctpm::Card;
using Addresses = std::vector<std::string>;

namespace {

std::string card_error(const std::string& text) {
    try {
        sctpm::parse_card(text);
    } catch (const sctpm::Error& e) {
        return e.what();
    }
    return "<no error>";
}

Card make(uint16_t udp, uint16_t sctp, Addresses addresses) {
    Card c;
    c.udp_port = udp;
    c.sctp_port = sctp;
    c.addresses = std::move(addresses);
    return c;
}

} // namespace

TEST(Card, FormatIsExact) {
    EXPECT_EQ(sctpm::format_card(make(9899, 5001, {"10.0.0.1"})), "sctpm1;udp=9899;sctp=5001;addr=10.0.0.1");
    EXPECT_EQ(sctpm::format_card(make(1, 65535, {"10.0.0.1", "fe80::1", "::ffff:10.1.0.1"})),
              "sctpm1;udp=1;sctp=65535;addr=10.0.0.1,fe80::1,::ffff:10.1.0.1");
}

TEST(Card, ParseReadsEveryField) {
    Card c = sctpm::parse_card("sctpm1;udp=9899;sctp=5001;addr=10.0.0.1,10.1.0.1,2001:db8::7");
    EXPECT_EQ(c.udp_port, 9899);
    EXPECT_EQ(c.sctp_port, 5001);
    EXPECT_EQ(c.addresses, (Addresses{"10.0.0.1", "10.1.0.1", "2001:db8::7"}));
}

TEST(Card, RoundTrip) {
    for (const Card& c : {make(1, 1, {"127.0.0.1"}), make(65535, 40000, {"::1", "192.168.7.3", "fd00:1:2::3"})}) {
        Card back = sctpm::parse_card(sctpm::format_card(c));
        EXPECT_EQ(back.udp_port, c.udp_port);
        EXPECT_EQ(back.sctp_port, c.sctp_port);
        EXPECT_EQ(back.addresses, c.addresses);
    }
}

TEST(Card, LinkKeyRoundTripsAsHex) {
    Card c = make(9899, 5001, {"10.0.0.1"});
    c.key = std::string("\x00\x01\xfe\xff", 4) + std::string(12, 'A');
    const std::string text = sctpm::format_card(c);
    EXPECT_EQ(text, "sctpm1;udp=9899;sctp=5001;addr=10.0.0.1;key=0001feff414141414141414141414141");
    EXPECT_EQ(sctpm::parse_card(text).key, c.key);
    EXPECT_EQ(sctpm::parse_card("sctpm1;udp=1;sctp=2;addr=10.0.0.1").key, ""); // a card from a hello
}

TEST(Card, KeysInAnyOrderAddressesNormalised) {
    Card c = sctpm::parse_card("sctpm1;addr=2001:DB8:0:0:0:0:0:1,10.0.0.1;sctp=7;udp=08");
    EXPECT_EQ(c.udp_port, 8);
    EXPECT_EQ(c.sctp_port, 7);
    EXPECT_EQ(c.addresses, (Addresses{"2001:db8::1", "10.0.0.1"}));
}

TEST(Card, ErrorsNameTheCardAndTheField) {
    struct Case {
        std::string text;
        std::string expected; // the part after "card '<text>': "
    };
    const std::string ok_addr = "addr=10.0.0.1";
    const std::vector<Case> cases = {
        {"", "expected prefix 'sctpm1', found ''"},
        {"sctpm2;udp=1;sctp=2;" + ok_addr, "expected prefix 'sctpm1', found 'sctpm2'"},
        {"SCTPM1;udp=1;sctp=2;" + ok_addr, "expected prefix 'sctpm1', found 'SCTPM1'"},
        {"udp=1;sctp=2;" + ok_addr, "expected prefix 'sctpm1', found 'udp=1'"},
        {"sctpm1", "missing key 'udp'"},
        {"sctpm1;sctp=2;" + ok_addr, "missing key 'udp'"},
        {"sctpm1;udp=1;" + ok_addr, "missing key 'sctp'"},
        {"sctpm1;udp=1;sctp=2", "missing key 'addr'"},
        {"sctpm1;udp=1;udp=1;sctp=2;" + ok_addr, "duplicate key 'udp'"},
        {"sctpm1;udp=1;sctp=2;" + ok_addr + ";addr=10.0.0.2", "duplicate key 'addr'"},
        {"sctpm1;udp=1;sctp=2;tcp=3;" + ok_addr, "unknown key 'tcp'"},
        {"sctpm1;udp=1;sctp=2;UDP=3;" + ok_addr, "unknown key 'UDP'"},
        {"sctpm1;udp=1;sctp=2;" + ok_addr + ";", "field '' is not key=value"},
        {"sctpm1;udp=1;sctp2;" + ok_addr, "field 'sctp2' is not key=value"},
        {"sctpm1;udp=0;sctp=2;" + ok_addr, "udp port '0' is not a number in 1..65535"},
        {"sctpm1;udp=65536;sctp=2;" + ok_addr, "udp port '65536' is not a number in 1..65535"},
        {"sctpm1;udp=;sctp=2;" + ok_addr, "udp port '' is not a number in 1..65535"},
        {"sctpm1;udp=-1;sctp=2;" + ok_addr, "udp port '-1' is not a number in 1..65535"},
        {"sctpm1;udp=+1;sctp=2;" + ok_addr, "udp port '+1' is not a number in 1..65535"},
        {"sctpm1;udp=1 ;sctp=2;" + ok_addr, "udp port '1 ' is not a number in 1..65535"},
        {"sctpm1;udp=1;sctp=99999999999999999999;" + ok_addr,
         "sctp port '99999999999999999999' is not a number in 1..65535"},
        {"sctpm1;udp=1;sctp=0x50;" + ok_addr, "sctp port '0x50' is not a number in 1..65535"},
        {"sctpm1;udp=1;sctp=2;addr=", "no address"},
        {"sctpm1;udp=1;sctp=2;addr=10.0.0.1,", "address '' is not an IPv4 or IPv6 address"},
        {"sctpm1;udp=1;sctp=2;addr=10.0.0.1,,::1", "address '' is not an IPv4 or IPv6 address"},
        {"sctpm1;udp=1;sctp=2;addr=10.0.0.300", "address '10.0.0.300' is not an IPv4 or IPv6 address"},
        {"sctpm1;udp=1;sctp=2;addr=::1,node7", "address 'node7' is not an IPv4 or IPv6 address"},
        {"sctpm1;udp=1;sctp=2;addr=10.0.0.1 10.0.0.2", "address '10.0.0.1 10.0.0.2' is not an IPv4 or IPv6 address"},
        {"sctpm1;udp=1;sctp=2;addr=[::1]", "address '[::1]' is not an IPv4 or IPv6 address"},
    };
    for (const Case& c : cases)
        EXPECT_EQ(card_error(c.text), "card '" + c.text + "': " + c.expected) << c.text;
}

TEST(Card, NulByteIsRejectedAndShownEscaped) {
    // inet_pton would stop at the NUL and accept the address before it (found by card_fuzz).
    const std::string text("sctpm1;udp=1;sctp=2;addr=10.0.0.1\0junk", 38);
    EXPECT_EQ(card_error(text), "card 'sctpm1;udp=1;sctp=2;addr=10.0.0.1\\x00junk': NUL byte at offset 33");
}

// The link key is the job's secret: an error quotes the card with the key's value redacted, names
// what was wrong, and a malformed key is described, never shown (not even the part that is bad).
TEST(Card, ErrorsNeverShowTheKey) {
    const std::string key = "0001feff414141414141414141414141";
    const std::string head = "sctpm1;udp=1;sctp=2;addr=10.0.0.1";
    struct Case {
        std::string text, expected, secret; // secret: what the error must not contain
    };
    const std::vector<Case> cases = {
        {"sctpm1;udp=0;sctp=2;addr=10.0.0.1;key=" + key,
         "card 'sctpm1;udp=0;sctp=2;addr=10.0.0.1;key=<redacted>': udp port '0' is not a number in 1..65535", key},
        {"sctpm1;key=" + key + ";udp=1;sctp=2;addr=10.0.0.300",
         "card 'sctpm1;key=<redacted>;udp=1;sctp=2;addr=10.0.0.300': "
         "address '10.0.0.300' is not an IPv4 or IPv6 address",
         key},
        {head + ";key=" + key + ";key=" + key,
         "card '" + head + ";key=<redacted>;key=<redacted>': duplicate key 'key'", key},
        {"sctpm2;udp=1;sctp=2;addr=10.0.0.1;key=" + key,
         "card 'sctpm2;udp=1;sctp=2;addr=10.0.0.1;key=<redacted>': expected prefix 'sctpm1', found 'sctpm2'", key},
        {head + ";key=" + key.substr(0, 30),
         "card '" + head + ";key=<redacted>': key is not 32 lower-case hex digits: it has 30 characters",
         key.substr(0, 30)},
        {head + ";key=0001FEFF414141414141414141414141",
         "card '" + head + ";key=<redacted>': key is not 32 lower-case hex digits: "
         "the character at offset 4 is not one",
         "414141414141"},
        {head + ";KEY=" + key, "card '" + head + ";KEY=<redacted>': unknown key 'KEY'", key},
    };
    for (const Case& c : cases) {
        const std::string error = card_error(c.text);
        EXPECT_EQ(error, c.expected) << c.text;
        EXPECT_EQ(error.find(c.secret), std::string::npos) << error;
    }
}

// What the channels quote: a card, or its PMI form in a business card or port name ('=' and ';' become
// '#' and '$'), through the C ABI, whose output is cut short to the buffer, never overrun.
TEST(Card, RedactKeyOfCardsAndPortNames) {
    const std::string key = "0001feff414141414141414141414141";
    auto redacted = [](const std::string& text, size_t size = SCTPM_CARD_MAX) {
        std::vector<char> out(size, 'X');
        return std::string(sctpm_redact_key(text.c_str(), out.data(), out.size()));
    };
    EXPECT_EQ(redacted("sctpm1;udp=1;sctp=2;addr=10.0.0.1;key=" + key),
              "sctpm1;udp=1;sctp=2;addr=10.0.0.1;key=<redacted>");
    EXPECT_EQ(redacted("tag#3$sctpm1$udp#1$sctp#2$addr#10.0.0.1$key#" + key + "$"),
              "tag#3$sctpm1$udp#1$sctp#2$addr#10.0.0.1$key#<redacted>$");
    EXPECT_EQ(redacted("key#" + key + "$key=" + key + ";Key=" + key), "key#<redacted>$key=<redacted>;Key=<redacted>");
    EXPECT_EQ(redacted("monkey=1;keys=2;key;addr=key"), "monkey=1;keys=2;key;addr=key"); // no key field
    EXPECT_EQ(redacted("key=" + key, 8), "key=<re");
    EXPECT_EQ(redacted(""), "");
    char out[4] = "abc";
    EXPECT_STREQ(sctpm_redact_key(nullptr, out, sizeof out), "");
    EXPECT_EQ(sctpm_redact_key("key=00", out, 0), out); // nothing written
    EXPECT_STREQ(out, "");
}
