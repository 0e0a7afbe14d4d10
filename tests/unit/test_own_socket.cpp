// SPDX-License-Identifier: BSD-3-Clause
// The transport's socket on our own engine (stack=own): what the settings become in the engine's
// configuration, and what it refuses, by name.
#include <gtest/gtest.h>

#include "error_of.hpp"
#include "own_socket.hpp"
#include "settings.hpp"

using sctpm::OwnSocket;
using sctpm::Settings;

TEST(OwnSocket, SettingsBecomeTheEnginesConfiguration) {
    Settings s;
    sctpm::set_setting(s, "streams", "64");
    sctpm::set_setting(s, "rcvbuf", "2M");
    sctpm::set_setting(s, "sndbuf", "3M");
    sctpm::set_setting(s, "sack_delay_ms", "0");
    sctpm::set_setting(s, "rto_min_ms", "20");
    sctpm::set_setting(s, "rto_initial_ms", "40");
    sctpm::set_setting(s, "rto_max_ms", "80");
    sctpm::set_setting(s, "heartbeat_ms", "250");
    sctpm::set_setting(s, "path_max_retrans", "3");
    sctpm::set_setting(s, "pf_threshold", "1");
    sctpm::set_setting(s, "assoc_max_retrans", "7");
    sctpm::set_setting(s, "init_max_attempts", "4");
    sctpm::set_setting(s, "path_mtu", "1500");
    const auto c = OwnSocket::engine_config(s, 9899, {"127.0.0.1", "198.18.0.1", "::1"});
    EXPECT_EQ(c.local_port, 9899);
    EXPECT_EQ(c.outbound_streams, 64);
    EXPECT_EQ(c.inbound_streams, 64);
    EXPECT_EQ(c.rwnd, 2u << 20);
    EXPECT_EQ(c.send_buffer, 3u << 20);
    EXPECT_EQ(c.sack_every, 1u) << "sack_delay_ms 0: a SACK for every packet";
    EXPECT_EQ(c.rto_min, 20'000);
    EXPECT_EQ(c.rto_initial, 40'000);
    EXPECT_EQ(c.rto_max, 80'000);
    EXPECT_EQ(c.heartbeat_interval, 250'000);
    EXPECT_EQ(c.path_max_retransmits, 3u);
    EXPECT_EQ(c.pf_max_retransmits, 1u);
    EXPECT_EQ(c.max_retransmits, 7u);
    EXPECT_EQ(c.max_init_retransmits, 4u);
    EXPECT_EQ(c.mtu, 1500u - 28) << "a link MTU of 1500: UDP payloads of 1472 bytes";
    ASSERT_EQ(c.local_addresses.size(), 2u) << "IPv4 addresses only";
    EXPECT_EQ(c.local_addresses[1].to_string(), "198.18.0.1:9899");
    EXPECT_GE(c.max_message, size_t{s.fragment_size}) << "a whole fragment fits in one SCTP message";
}

TEST(OwnSocket, RefusesWhatTheEngineDoesNotHaveByName) {
    Settings s;
    sctpm::set_setting(s, "auth", "packet");
    EXPECT_EQ(error_of([&] { OwnSocket sock(s, {"127.0.0.1"}); }),
              "auth=packet needs SCTP-AUTH, which stack=own does not have yet: use auth=hello, or stack=usrsctp");
    s = Settings{};
    sctpm::set_setting(s, "cmt", "rpv1");
    EXPECT_NE(error_of([&] { OwnSocket sock(s, {"127.0.0.1"}); }).find("cmt=rpv1 couples the paths' congestion windows"),
              std::string::npos);
    sctpm::set_setting(s, "cmt", "base");
    EXPECT_EQ(error_of([&] { OwnSocket sock(s, {"127.0.0.1"}); }), "<no error>") << "cmt=base is the engine's CMT";
    EXPECT_TRUE(OwnSocket::engine_config(s, 9899, {"127.0.0.1"}).cmt);
    s = Settings{};
    EXPECT_EQ(error_of([&] { OwnSocket sock(s, {"::1"}); }),
              "stack=own carries IPv4 only, and none of the addresses to bind is IPv4: [::1] (use stack=usrsctp)");
}

TEST(OwnSocket, BindsThePortOfTheSettingsOrTheFirstFreeOfARange) {
    Settings s;
    OwnSocket first(s, {"127.0.0.1"});
    ASSERT_NE(first.port(), 0);
    const std::string taken = std::to_string(first.port());
    sctpm::set_setting(s, "udp_port", taken + "-" + std::to_string(first.port() + 64));
    OwnSocket second(s, {"127.0.0.1"});
    EXPECT_GT(second.port(), first.port()) << "the first port of the range is taken: a later one";
    EXPECT_LE(second.port(), first.port() + 64);
    sctpm::set_setting(s, "udp_port", taken);
    EXPECT_NE(error_of([&] { OwnSocket third(s, {"127.0.0.1"}); }).find(taken), std::string::npos)
        << "the error names the port";
}
