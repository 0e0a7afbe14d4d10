// The rails setting: parsing of subnets and interface names, and which local addresses each
// selects, in rail order, with errors that name the host, the filter and what the host has.
#include "error.hpp"
#include "rails.hpp"
#include "settings.hpp"
#include "transport.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using sctpm::LocalAddress;
using Addresses = std::vector<std::string>;

namespace {

template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const sctpm::Error& e) {
        return e.what();
    }
    return "<no error>";
}

const std::vector<LocalAddress> kHost = {
    {"lo", "127.0.0.1"},         {"ctl", "198.18.0.3"},   {"r2", "198.18.2.3"},
    {"r1", "198.18.1.3"},        {"r1", "fd00:1::3"},     {"r3", "198.18.3.3"},
    {"r3", "198.18.3.4"},
};

Addresses pick(const std::string& rails) {
    return sctpm::rail_addresses(sctpm::parse_rails("rails", rails), kHost, "h3");
}

} // namespace

TEST(Rails, SubnetsSelectInRailOrderNotInterfaceOrder) {
    EXPECT_EQ(pick("198.18.1.0/24,198.18.2.0/24"), (Addresses{"198.18.1.3", "198.18.2.3"}));
    EXPECT_EQ(pick("198.18.2.0/24, 198.18.1.0/24"), (Addresses{"198.18.2.3", "198.18.1.3"}));
}

TEST(Rails, PrefixLengthsThatAreNotWholeBytes) {
    // 198.18.2.0/23 holds 198.18.2.x and 198.18.3.x, not 198.18.1.x.
    EXPECT_EQ(pick("198.18.2.0/23"), (Addresses{"198.18.2.3", "198.18.3.3", "198.18.3.4"}));
    EXPECT_EQ(pick("198.18.1.2/31"), (Addresses{"198.18.1.3"}));
    EXPECT_EQ(pick("198.18.0.0/15"), (Addresses{"198.18.0.3", "198.18.2.3", "198.18.1.3", "198.18.3.3", "198.18.3.4"}));
    EXPECT_EQ(pick("0.0.0.0/0").size(), 6u);
}

TEST(Rails, InterfaceNamesTakeEveryAddressOfTheInterface) {
    EXPECT_EQ(pick("r1,r2"), (Addresses{"198.18.1.3", "fd00:1::3", "198.18.2.3"}));
    EXPECT_EQ(pick("r3"), (Addresses{"198.18.3.3", "198.18.3.4"}));
}

TEST(Rails, Ipv6SubnetsAndMixedLists) {
    EXPECT_EQ(pick("fd00:1::/64"), (Addresses{"fd00:1::3"}));
    EXPECT_EQ(pick("fd00:1::/64,r2"), (Addresses{"fd00:1::3", "198.18.2.3"}));
    // An IPv4 subnet never selects an IPv6 address and the reverse.
    EXPECT_EQ(pick("::/0"), (Addresses{"fd00:1::3"}));
}

TEST(Rails, AnAddressSelectedTwiceIsBoundOnce) {
    EXPECT_EQ(pick("r1,198.18.1.0/24,r2"), (Addresses{"198.18.1.3", "fd00:1::3", "198.18.2.3"}));
}

TEST(Rails, AFilterThatSelectsNothingNamesHostFilterAndAddresses) {
    const std::string e = error_of([] { pick("198.18.1.0/24,198.18.9.0/24"); });
    EXPECT_NE(e.find("host 'h3'"), std::string::npos) << e;
    EXPECT_NE(e.find("subnet 198.18.9.0/24"), std::string::npos) << e;
    EXPECT_NE(e.find("r2 198.18.2.3"), std::string::npos) << e;
    const std::string i = error_of([] { pick("eth7"); });
    EXPECT_NE(i.find("on interface eth7"), std::string::npos) << i;
}

TEST(Rails, MalformedEntriesAreRefusedWithTheEntry) {
    auto parse_error = [](const std::string& v) { return error_of([&] { sctpm::parse_rails("rails", v); }); };
    EXPECT_NE(parse_error("198.18.1.3").find("is an address, not a subnet"), std::string::npos);
    EXPECT_NE(parse_error("198.18.1.0/33").find("prefix length of 0..32"), std::string::npos);
    EXPECT_NE(parse_error("fd00::/129").find("prefix length of 0..128"), std::string::npos);
    EXPECT_NE(parse_error("198.18.1.0/").find("prefix length"), std::string::npos);
    EXPECT_NE(parse_error("198.18.1.0/-1").find("prefix length"), std::string::npos);
    EXPECT_NE(parse_error("198.18.300.0/24").find("does not start with an IPv4 or IPv6 address"), std::string::npos);
    EXPECT_NE(parse_error("r1,,r2").find("empty entry"), std::string::npos);
    EXPECT_NE(parse_error("r1,").find("empty entry"), std::string::npos);
    EXPECT_NE(parse_error("eth 1").find("entry 'eth 1' is neither"), std::string::npos);
    EXPECT_NE(parse_error("averyveryverylongname").find("neither"), std::string::npos);
}

TEST(Rails, TheSettingIsCheckedWhenSetAndConflictsWithAFile) {
    sctpm::Settings s;
    EXPECT_NE(error_of([&] { sctpm::set_setting(s, "rails", "10.0.0.1"); }).find("rails: '10.0.0.1'"), std::string::npos);
    sctpm::set_setting(s, "rails", "lo");
    EXPECT_EQ(sctpm::get_setting(s, "rails"), "lo");
    const Addresses lo = sctpm::choose_bind_addresses(s, "anyhost");
    ASSERT_FALSE(lo.empty());
    EXPECT_EQ(lo.front(), "127.0.0.1");
    for (const auto& a : lo)
        EXPECT_TRUE(a == "127.0.0.1" || a == "::1") << a;
    s.multihome_file = "/nonexistent";
    EXPECT_NE(error_of([&] { sctpm::choose_bind_addresses(s, "anyhost"); }).find("are both set"), std::string::npos);
    s.multihome_file.clear();
    s.interface_hostname = "localhost";
    EXPECT_NE(error_of([&] { sctpm::choose_bind_addresses(s, "anyhost"); }).find("interface_hostname"), std::string::npos);
}
