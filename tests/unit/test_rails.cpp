// SPDX-License-Identifier: BSD-3-Clause
// The rails setting: parsing of subnets and interface names, and which local addresses each
// selects, in rail order, with errors that name the host, the filter and what the host has.
#include "error.hpp"
#include "error_of.hpp"
#include "rails.hpp"
#include "settings.hpp"
#include "transport.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using sctpm::LocalAddress;
using Addresses = std::vector<std::string>;

namespace {

const std::vector<LocalAddress> kHost = {
    {"lo", "127.0.0.1"},  {"ctl", "198.18.0.3"}, {"r2", "198.18.2.3"}, {"r1", "198.18.1.3"},
    {"r1", "fd00:1::3"},  {"r3", "198.18.3.3"},  {"r3", "198.18.3.4"}, {"ib0", "fd00:9::3"},
};

Addresses pick(const std::string& rails) {
    return sctpm::rail_addresses(sctpm::parse_rails("rails", rails), kHost, "h3");
}

std::string pick_error(const std::string& rails) {
    return error_of([&] { pick(rails); });
}

} // namespace

TEST(Rails, SubnetsSelectInRailOrderNotInterfaceOrder) {
    EXPECT_EQ(pick("198.18.1.0/24,198.18.2.0/24"), (Addresses{"198.18.1.3", "198.18.2.3"}));
    EXPECT_EQ(pick("198.18.2.0/24, 198.18.1.0/24"), (Addresses{"198.18.2.3", "198.18.1.3"}));
}

TEST(Rails, PrefixLengthsThatAreNotWholeBytes) {
    // 198.18.1.2/31 holds .2 and .3; 198.18.2.0/23 holds 198.18.2.x and 198.18.3.x (three here).
    EXPECT_EQ(pick("198.18.1.2/31"), (Addresses{"198.18.1.3"}));
    EXPECT_EQ(pick("198.18.2.0/25"), (Addresses{"198.18.2.3"}));
    EXPECT_NE(pick_error("198.18.2.0/23").find("has 3 addresses in subnet 198.18.2.0/23"), std::string::npos);
}

TEST(Rails, AnInterfaceIsItsIpv4AddressOrElseItsIpv6One) {
    EXPECT_EQ(pick("r1,r2"), (Addresses{"198.18.1.3", "198.18.2.3"}));
    EXPECT_EQ(pick("ib0,r2"), (Addresses{"fd00:9::3", "198.18.2.3"}));
}

TEST(Rails, Ipv6SubnetsAndMixedLists) {
    EXPECT_EQ(pick("fd00:1::/64"), (Addresses{"fd00:1::3"}));
    EXPECT_EQ(pick("fd00:1::/64,r2"), (Addresses{"fd00:1::3", "198.18.2.3"}));
    // An IPv6 subnet never selects an IPv4 address and the reverse.
    EXPECT_EQ(pick("fd00:9::/32,127.0.0.0/8"), (Addresses{"fd00:9::3", "127.0.0.1"}));
}

TEST(Rails, AFilterThatSelectsNothingNamesHostFilterAndAddresses) {
    const std::string e = pick_error("198.18.1.0/24,198.18.9.0/24");
    EXPECT_NE(e.find("host 'h3'"), std::string::npos) << e;
    EXPECT_NE(e.find("subnet 198.18.9.0/24"), std::string::npos) << e;
    EXPECT_NE(e.find("r2 198.18.2.3"), std::string::npos) << e;
    const std::string i = pick_error("eth7");
    EXPECT_NE(i.find("on interface eth7"), std::string::npos) << i;
}

TEST(Rails, SeveralAddressesForOneRailOrOneAddressForTwoAreRefused) {
    const std::string several = pick_error("r3");
    EXPECT_NE(several.find("has 2 addresses on interface r3 (r3 198.18.3.3, r3 198.18.3.4)"), std::string::npos)
        << several;
    const std::string twice = pick_error("r1,198.18.1.0/24");
    EXPECT_NE(twice.find("198.18.1.0/24 selects 198.18.1.3, which an earlier entry selected"), std::string::npos)
        << twice;
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
    EXPECT_EQ(sctpm::choose_bind_addresses(s, "anyhost"), (Addresses{"127.0.0.1"}));
    s.multihome_file = "/nonexistent";
    EXPECT_NE(error_of([&] { sctpm::choose_bind_addresses(s, "anyhost"); }).find("are both set"), std::string::npos);
    s.multihome_file.clear();
    s.interface_hostname = "localhost";
    EXPECT_NE(error_of([&] { sctpm::choose_bind_addresses(s, "anyhost"); }).find("interface_hostname"), std::string::npos);
}
