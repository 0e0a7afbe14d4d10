// Business card: exact text format, round trip, and an error for every malformed field.
#include "card.hpp"
#include "error.hpp"

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
        {"sctpm1;udp=1;sctp=2;" + ok_addr + ";key=00", "key '00' is not 32 lower-case hex digits"},
        {"sctpm1;udp=1;sctp=2;" + ok_addr + ";key=0001FEFF414141414141414141414141",
         "key '0001FEFF414141414141414141414141' is not 32 lower-case hex digits"},
        {"sctpm1;udp=1;sctp=2;" + ok_addr + ";key=0001feff41414141414141414141414g",
         "key '0001feff41414141414141414141414g' is not 32 lower-case hex digits"},
    };
    for (const Case& c : cases)
        EXPECT_EQ(card_error(c.text), "card '" + c.text + "': " + c.expected) << c.text;
}

TEST(Card, NulByteIsRejectedAndShownEscaped) {
    // inet_pton would stop at the NUL and accept the address before it (found by card_fuzz).
    const std::string text("sctpm1;udp=1;sctp=2;addr=10.0.0.1\0junk", 38);
    EXPECT_EQ(card_error(text), "card 'sctpm1;udp=1;sctp=2;addr=10.0.0.1\\x00junk': NUL byte at offset 33");
}
