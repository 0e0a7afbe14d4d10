// SPDX-License-Identifier: BSD-3-Clause
// Settings: defaults, strict parsing per key type, CVAR and historical environment names.
#include "error.hpp"
#include "error_of.hpp"
#include "settings.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

using sctpm::CmtMode;
using sctpm::Settings;
using sctpm::StreamPolicy;

namespace {

// Runs `f` and checks that it throws sctpm::Error whose message contains every part.
template <class F>
void expect_error_at(const char* file, int line, F f, std::initializer_list<std::string> parts) {
    try {
        f();
    } catch (const sctpm::Error& e) {
        std::string msg = e.what();
        for (const std::string& p : parts)
            if (msg.find(p) == std::string::npos) ADD_FAILURE_AT(file, line) << "message '" << msg << "' lacks '" << p << "'";
        return;
    }
    ADD_FAILURE_AT(file, line) << "no sctpm::Error thrown";
}
#define EXPECT_ERROR(stmt, ...) expect_error_at(__FILE__, __LINE__, [&] { stmt; }, {__VA_ARGS__})

// An environment made of a map; records every name asked for.
struct FakeEnv {
    std::map<std::string, std::string> vars;
    std::vector<std::string> asked;
    sctpm::EnvLookup lookup() {
        return [this](const char* name) -> const char* {
            asked.push_back(name);
            auto it = vars.find(name);
            return it == vars.end() ? nullptr : it->second.c_str();
        };
    }
};

Settings load(std::map<std::string, std::string> vars) {
    FakeEnv env{std::move(vars), {}};
    return sctpm::load_settings(env.lookup());
}

std::string set_and_get(const std::string& key, const std::string& value) {
    Settings s;
    sctpm::set_setting(s, key, value);
    return sctpm::get_setting(s, key);
}

const std::vector<std::string> all_keys = {
    "multihome_file", "bindall", "interface_hostname", "rails", "udp_port", "streams", "stream_policy", "eager_max",
    "fragment_size", "max_message", "pre_hello_bytes", "reorder_bytes", "head_bytes", "auth", "stack", "cmt", "pf_threshold", "rto_min_ms", "rto_max_ms",
    "rto_initial_ms", "heartbeat_ms", "path_max_retrans", "assoc_max_retrans", "init_max_attempts", "path_mtu",
    "sndbuf", "rcvbuf", "udp_buffer", "max_chunks_on_queue", "sack_delay_ms", "sack_per_read", "sack_full_packets", "nodelay", "spin_us", "spin_adapt", "caller_input", "log_paths",
    "stall_report_s"};

std::string description(const std::string& key) {
    for (const auto& k : sctpm::setting_keys())
        if (key == k.key) return k.description;
    return "<missing>";
}

} // namespace

TEST(Settings, KeysListEveryFieldInStructOrder) {
    std::vector<std::string> keys;
    for (const auto& k : sctpm::setting_keys()) keys.push_back(k.key);
    EXPECT_EQ(keys, all_keys);
}

TEST(Settings, DescriptionsStateUnitsAndAllowedValues) {
    for (const auto& k : sctpm::setting_keys()) EXPECT_GT(std::string(k.description).size(), 20u) << k.key;
    EXPECT_NE(description("streams").find("1..1024"), std::string::npos);
    EXPECT_NE(description("fragment_size").find("bytes, 1K..16M; K/M/G suffixes"), std::string::npos);
    EXPECT_NE(description("head_bytes").find("64..1M"), std::string::npos);
    EXPECT_NE(description("path_mtu").find("0 or 1200..65536"), std::string::npos);
    EXPECT_NE(description("sndbuf").find("64K..1G"), std::string::npos);
    EXPECT_NE(description("spin_us").find("us, 0..10000000"), std::string::npos);
    EXPECT_NE(description("rto_min_ms").find("ms, 1..600000"), std::string::npos);
    EXPECT_NE(description("cmt").find("off|base|rpv1|rpv2|mptcp"), std::string::npos);
    EXPECT_NE(description("stream_policy").find("single|context|context_tag"), std::string::npos);
    EXPECT_NE(description("nodelay").find("yes|no"), std::string::npos);
    EXPECT_NE(description("multihome_file").find("MPICH_SCTP_MULTIHOME_FILE"), std::string::npos);
}

TEST(Settings, DefaultsThroughGetSetting) {
    Settings s;
    const std::map<std::string, std::string> expected = {
        {"multihome_file", ""},      {"bindall", "false"},         {"interface_hostname", ""}, {"rails", ""},
        {"udp_port", "0"},           {"streams", "16"},            {"stream_policy", "single"},
        {"eager_max", "0"},          {"fragment_size", "262144"},  {"max_message", "68719476736"},
        {"pre_hello_bytes", "0"},    {"reorder_bytes", "67108864"},
        {"head_bytes", "4096"},      {"auth", "hello"},            {"stack", "usrsctp"},         {"cmt", "off"},               {"pf_threshold", "0"},
        {"rto_min_ms", "100"},       {"rto_max_ms", "300"},        {"rto_initial_ms", "300"},
        {"heartbeat_ms", "100"},     {"path_max_retrans", "2"},    {"assoc_max_retrans", "10"},
        {"init_max_attempts", "8"},  {"path_mtu", "0"},            {"sndbuf", "8388608"},
        {"rcvbuf", "8388608"},       {"udp_buffer", "4194304"},    {"max_chunks_on_queue", "65536"},
        {"sack_delay_ms", "10"},     {"sack_per_read", "true"},    {"sack_full_packets", "true"}, {"nodelay", "true"},          {"spin_us", "100"}, {"spin_adapt", "true"}, {"caller_input", "true"},
        {"log_paths", "false"},      {"stall_report_s", "0"}};
    ASSERT_EQ(expected.size(), all_keys.size());
    for (const auto& [key, value] : expected) EXPECT_EQ(sctpm::get_setting(s, key), value) << key;
}

TEST(Settings, EmptyEnvironmentGivesDefaults) {
    Settings s = load({});
    Settings d;
    for (const std::string& key : all_keys) EXPECT_EQ(sctpm::get_setting(s, key), sctpm::get_setting(d, key)) << key;
}

TEST(Settings, EveryValueRoundTripsThroughGetAndSet) {
    Settings s;
    sctpm::set_setting(s, "cmt", "rpv2");
    sctpm::set_setting(s, "max_message", "3G");
    sctpm::set_setting(s, "multihome_file", "/etc/hosts.sctp");
    for (const std::string& key : all_keys) {
        Settings copy;
        sctpm::set_setting(copy, key, sctpm::get_setting(s, key));
        EXPECT_EQ(sctpm::get_setting(copy, key), sctpm::get_setting(s, key)) << key;
    }
    EXPECT_EQ(sctpm::get_setting(s, "max_message"), "3221225472");
}

TEST(Settings, IntegersInRangeAreStored) {
    Settings s;
    sctpm::set_setting(s, "streams", "1");
    EXPECT_EQ(s.streams, 1);
    sctpm::set_setting(s, "streams", "1024");
    EXPECT_EQ(s.streams, 1024);
    sctpm::set_setting(s, "streams", "007");
    EXPECT_EQ(s.streams, 7);
    sctpm::set_setting(s, "udp_port", "65535");
    EXPECT_EQ(s.udp_port, 65535);
    sctpm::set_setting(s, "pf_threshold", "65535");
    EXPECT_EQ(s.pf_threshold, 65535);
    sctpm::set_setting(s, "spin_us", "10000000");
    EXPECT_EQ(s.spin_us, 10000000u);
    sctpm::set_setting(s, "sack_delay_ms", "0");
    EXPECT_EQ(s.sack_delay_ms, 0u);
}

TEST(Settings, OutOfRangeMessageNamesKeyValueAndRange) {
    Settings s;
    EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "streams", "0"); }), "streams: '0' is out of range (1..1024)");
    EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "streams", "1025"); }), "streams: '1025' is out of range (1..1024)");
    EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "streams", "12x"); }),
              "streams: '12x' is not a decimal integer; allowed: 1..1024");
    EXPECT_EQ(s.streams, 16) << "a rejected value must not be stored";
}

TEST(Settings, CountsDoNotTakeSuffixes) {
    Settings s;
    EXPECT_ERROR(sctpm::set_setting(s, "streams", "1K"), "streams: '1K' is not a decimal integer");
    EXPECT_ERROR(sctpm::set_setting(s, "max_chunks_on_queue", "64K"), "is not a decimal integer");
}

TEST(Settings, SizesAcceptBinarySuffixes) {
    EXPECT_EQ(set_and_get("fragment_size", "1K"), "1024");
    EXPECT_EQ(set_and_get("fragment_size", "64k"), "65536");
    EXPECT_EQ(set_and_get("fragment_size", "16M"), "16777216");
    EXPECT_EQ(set_and_get("fragment_size", "2m"), "2097152");
    EXPECT_EQ(set_and_get("sndbuf", "1G"), "1073741824");
    EXPECT_EQ(set_and_get("rcvbuf", "1g"), "1073741824");
    EXPECT_EQ(set_and_get("udp_buffer", "65536"), "65536");
    EXPECT_EQ(set_and_get("eager_max", "0"), "0");
    EXPECT_EQ(set_and_get("head_bytes", "64"), "64");
    EXPECT_EQ(set_and_get("max_message", "262144G"), "281474976710656");
}

TEST(Settings, SizeLimits) {
    Settings s;
    EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "fragment_size", "1023"); }),
              "fragment_size: '1023' is out of range (1K..16M)");
    EXPECT_ERROR(sctpm::set_setting(s, "fragment_size", "16777217"), "'16777217' is out of range (1K..16M)");
    // 4G does not fit the uint32_t field: must be rejected, not wrapped to 0.
    EXPECT_ERROR(sctpm::set_setting(s, "fragment_size", "4G"), "'4G' is out of range");
    EXPECT_ERROR(sctpm::set_setting(s, "head_bytes", "63"), "head_bytes: '63' is out of range (64..1M)");
    EXPECT_ERROR(sctpm::set_setting(s, "head_bytes", "1025K"), "out of range (64..1M)");
    EXPECT_ERROR(sctpm::set_setting(s, "sndbuf", "65535"), "sndbuf: '65535' is out of range (64K..1G)");
    EXPECT_ERROR(sctpm::set_setting(s, "rcvbuf", "2G"), "rcvbuf: '2G' is out of range (64K..1G)");
    EXPECT_ERROR(sctpm::set_setting(s, "udp_buffer", "63K"), "out of range (64K..1G)");
    EXPECT_ERROR(sctpm::set_setting(s, "eager_max", "65M"), "eager_max: '65M' is out of range (0..64M)");
    EXPECT_ERROR(sctpm::set_setting(s, "max_message", "262145G"), "out of range (1K..262144G)");
    // Overflow of uint64_t, by digits and by suffix.
    EXPECT_ERROR(sctpm::set_setting(s, "max_message", "99999999999999999999999"), "is out of range");
    EXPECT_ERROR(sctpm::set_setting(s, "max_message", "99999999999G"), "'99999999999G' is out of range");
    // (2^34 + 1) GiB wraps to 1 GiB in 64 bits, which would be in range.
    EXPECT_ERROR(sctpm::set_setting(s, "max_message", "17179869185G"), "'17179869185G' is out of range");
    EXPECT_EQ(s.fragment_size, 262144u);
    EXPECT_EQ(s.max_message, 64ull << 30);
    EXPECT_ERROR(sctpm::set_setting(s, "pre_hello_bytes", "4095"), "pre_hello_bytes: '4095' is out of range (0 or 4K..1G)");
    EXPECT_ERROR(sctpm::set_setting(s, "reorder_bytes", "1025G"), "reorder_bytes: '1025G' is out of range (4K..1024G)");
}

TEST(Settings, PathMtuIsZeroOrAWindow) {
    EXPECT_EQ(set_and_get("path_mtu", "0"), "0");
    EXPECT_EQ(set_and_get("path_mtu", "1200"), "1200");
    EXPECT_EQ(set_and_get("path_mtu", "65536"), "65536");
    Settings s;
    EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "path_mtu", "1199"); }),
              "path_mtu: '1199' is out of range (0 or 1200..65536)");
    EXPECT_ERROR(sctpm::set_setting(s, "path_mtu", "65537"), "'65537' is out of range (0 or 1200..65536)");
    EXPECT_ERROR(sctpm::set_setting(s, "path_mtu", "1"), "out of range");
}

TEST(Settings, BadIntegerTextTable) {
    struct Case {
        const char* key;
        const char* value;
        const char* expected;
    };
    const std::vector<Case> cases = {
        {"streams", "", "streams: '' is not a decimal integer; allowed: 1..1024"},
        {"streams", "-1", "streams: '-1' is not a decimal integer"},
        {"streams", "+5", "'+5' is not a decimal integer"},
        {"streams", " 5", "' 5' is not a decimal integer"},
        {"streams", "5 ", "'5 ' is not a decimal integer"},
        {"streams", "0x10", "'0x10' is not a decimal integer"},
        {"streams", "1e3", "'1e3' is not a decimal integer"},
        {"streams", "99999999999999999999999", "'99999999999999999999999' is out of range (1..1024)"},
        // 2^64 + 5 wraps to 5, which would be in range.
        {"streams", "18446744073709551621", "'18446744073709551621' is out of range (1..1024)"},
        {"udp_port", "65536", "udp_port: '65536' is out of range (0..65535)"},
        {"udp_port", "-0", "udp_port: '' is not a decimal integer; allowed: 1..65535"},
        {"pf_threshold", "70000", "pf_threshold: '70000' is out of range (0..65535)"},
        {"rto_min_ms", "0", "rto_min_ms: '0' is out of range (1..600000)"},
        {"rto_max_ms", "600001", "rto_max_ms: '600001' is out of range (1..600000)"},
        {"rto_initial_ms", "0", "rto_initial_ms: '0' is out of range"},
        {"heartbeat_ms", "0", "heartbeat_ms: '0' is out of range (1..600000)"},
        {"path_max_retrans", "0", "path_max_retrans: '0' is out of range (1..65535)"},
        {"assoc_max_retrans", "65536", "assoc_max_retrans: '65536' is out of range (1..65535)"},
        {"init_max_attempts", "0", "init_max_attempts: '0' is out of range (1..65535)"},
        {"max_chunks_on_queue", "255", "max_chunks_on_queue: '255' is out of range (256..16777216)"},
        {"sack_delay_ms", "501", "sack_delay_ms: '501' is out of range (0..500)"},
        {"spin_us", "10000001", "spin_us: '10000001' is out of range (0..10000000)"},
        {"fragment_size", "", "fragment_size: '' is not a size (decimal bytes, optional K, M or G suffix); allowed: 1K..16M"},
        {"fragment_size", "K", "'K' is not a size"},
        {"fragment_size", "1KB", "'1KB' is not a size"},
        {"fragment_size", "1.5M", "'1.5M' is not a size"},
        {"fragment_size", "-1K", "'-1K' is not a size"},
        {"fragment_size", "64 K", "'64 K' is not a size"},
        {"fragment_size", "1T", "'1T' is not a size"},
        {"sndbuf", "lots", "sndbuf: 'lots' is not a size"},
    };
    for (const Case& c : cases) {
        Settings s;
        std::string msg = error_of([&] { sctpm::set_setting(s, c.key, c.value); });
        EXPECT_NE(msg.find(c.expected), std::string::npos) << c.key << "='" << c.value << "' gave: " << msg;
    }
}

TEST(Settings, UdpPortIsOnePortOrARange) {
    Settings s;
    sctpm::set_setting(s, "udp_port", "40000-40100");
    EXPECT_EQ(s.udp_port, 40000);
    EXPECT_EQ(s.udp_port_last, 40100);
    EXPECT_EQ(sctpm::get_setting(s, "udp_port"), "40000-40100");
    sctpm::set_setting(s, "udp_port", "9899");
    EXPECT_EQ(s.udp_port, 9899);
    EXPECT_EQ(s.udp_port_last, 9899); // a single port is not a range
    EXPECT_EQ(sctpm::get_setting(s, "udp_port"), "9899");
    sctpm::set_setting(s, "udp_port", "7-7");
    EXPECT_EQ(sctpm::get_setting(s, "udp_port"), "7");
    sctpm::set_setting(s, "udp_port", "0");
    EXPECT_EQ(s.udp_port_last, 0);
    EXPECT_NE(description("udp_port").find("range A-B"), std::string::npos);
}

TEST(Settings, BadUdpPortRanges) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"5-3", "udp_port: '5-3' is an empty range (A-B needs A <= B)"},
        {"0-5", "udp_port: '0' is out of range (1..65535)"},
        {"1-65536", "udp_port: '65536' is out of range (1..65535)"},
        {"40000-", "udp_port: '' is not a decimal integer; allowed: 1..65535"},
        {"-40000", "udp_port: '' is not a decimal integer; allowed: 1..65535"},
        {"1-2-3", "udp_port: '2-3' is not a decimal integer; allowed: 1..65535"},
        {"a-b", "udp_port: 'a' is not a decimal integer; allowed: 1..65535"},
    };
    for (const auto& [value, expected] : cases) {
        Settings s;
        EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "udp_port", value); }), expected) << value;
    }
}

TEST(Settings, BooleansAcceptEverySpelling) {
    for (const char* v : {"1", "yes", "true", "on", "YES", "True", "ON", "oN"}) {
        Settings s;
        sctpm::set_setting(s, "log_paths", v);
        EXPECT_TRUE(s.log_paths) << v;
        sctpm::set_setting(s, "bindall", v);
        EXPECT_TRUE(s.bind_all) << v;
    }
    for (const char* v : {"0", "no", "false", "off", "NO", "False", "OFF"}) {
        Settings s;
        sctpm::set_setting(s, "nodelay", v);
        EXPECT_FALSE(s.nodelay) << v;
    }
}

TEST(Settings, BadBooleans) {
    for (const char* v : {"", "2", "y", "n", "enable", "truee", " on", "10"}) {
        Settings s;
        EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "nodelay", v); }),
                  std::string("nodelay: '") + v + "' is not a boolean (1|0|yes|no|true|false|on|off)");
        EXPECT_TRUE(s.nodelay);
    }
}

TEST(Settings, CmtByNameOrNumber) {
    const std::vector<std::pair<const char*, CmtMode>> names = {{"off", CmtMode::off},
                                                                {"base", CmtMode::base},
                                                                {"rpv1", CmtMode::rpv1},
                                                                {"rpv2", CmtMode::rpv2},
                                                                {"mptcp", CmtMode::mptcp}};
    for (size_t i = 0; i < names.size(); ++i) {
        // Start from another mode so that a no-op parse cannot pass.
        CmtMode other = names[i].second == CmtMode::rpv1 ? CmtMode::off : CmtMode::rpv1;
        Settings by_name, by_number;
        by_name.cmt = by_number.cmt = other;
        sctpm::set_setting(by_name, "cmt", names[i].first);
        sctpm::set_setting(by_number, "cmt", std::to_string(i));
        EXPECT_EQ(by_name.cmt, names[i].second) << names[i].first;
        EXPECT_EQ(by_number.cmt, names[i].second) << i;
        EXPECT_STREQ(sctpm::to_string(names[i].second), names[i].first);
    }
}

TEST(Settings, BadCmt) {
    for (const char* v : {"5", "-1", "", "BASE", "Off", "cmt", "1 "}) {
        Settings s;
        EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "cmt", v); }),
                  std::string("cmt: '") + v + "' is not a CMT mode (off|base|rpv1|rpv2|mptcp or 0..4)");
    }
}

TEST(Settings, StreamPolicyByNameOnly) {
    Settings s;
    sctpm::set_setting(s, "stream_policy", "context_tag");
    EXPECT_EQ(s.stream_policy, StreamPolicy::context_tag);
    sctpm::set_setting(s, "stream_policy", "context");
    EXPECT_EQ(s.stream_policy, StreamPolicy::context);
    sctpm::set_setting(s, "stream_policy", "single");
    EXPECT_EQ(s.stream_policy, StreamPolicy::single);
    EXPECT_STREQ(sctpm::to_string(StreamPolicy::context_tag), "context_tag");
    for (const char* v : {"tag", "", "1", "Single", "context-tag"}) {
        EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "stream_policy", v); }),
                  std::string("stream_policy: '") + v + "' is not a stream policy (single|context|context_tag)");
    }
}

TEST(Settings, AuthByNameOnly) {
    Settings s;
    sctpm::set_setting(s, "auth", "off");
    EXPECT_EQ(s.auth, sctpm::AuthMode::off);
    sctpm::set_setting(s, "auth", "hello");
    EXPECT_EQ(s.auth, sctpm::AuthMode::hello);
    sctpm::set_setting(s, "auth", "packet");
    EXPECT_EQ(s.auth, sctpm::AuthMode::packet);
    for (const char* v : {"on", "", "0", "Hello", "sctp-auth"}) {
        EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "auth", v); }),
                  std::string("auth: '") + v + "' is not an authentication mode (hello|packet|off)");
    }
}

TEST(Settings, StackByNameOnly) {
    Settings s;
    EXPECT_EQ(s.stack, sctpm::StackChoice::usrsctp);
    sctpm::set_setting(s, "stack", "own");
    EXPECT_EQ(s.stack, sctpm::StackChoice::own);
    sctpm::set_setting(s, "stack", "usrsctp");
    EXPECT_EQ(s.stack, sctpm::StackChoice::usrsctp);
    for (const char* v : {"", "kernel", "Own", "1"}) {
        EXPECT_EQ(error_of([&] { sctpm::set_setting(s, "stack", v); }),
                  std::string("stack: '") + v + "' is not an SCTP stack (usrsctp|own)");
    }
}

TEST(Settings, StringsAreTakenVerbatim) {
    Settings s;
    sctpm::set_setting(s, "interface_hostname", "node1-ib0");
    EXPECT_EQ(s.interface_hostname, "node1-ib0");
    sctpm::set_setting(s, "multihome_file", "/path with spaces/mh");
    EXPECT_EQ(s.multihome_file, "/path with spaces/mh");
    sctpm::set_setting(s, "multihome_file", "");
    EXPECT_EQ(s.multihome_file, "");
}

TEST(Settings, PreHelloBytesIsZeroForTwoFragmentsOrAWindow) {
    EXPECT_EQ(set_and_get("pre_hello_bytes", "0"), "0");
    EXPECT_EQ(set_and_get("pre_hello_bytes", "4K"), "4096");
    EXPECT_EQ(set_and_get("pre_hello_bytes", "1G"), "1073741824");
}

TEST(Settings, UnknownKey) {
    Settings s;
    EXPECT_ERROR(sctpm::set_setting(s, "stream", "4"), "unknown setting 'stream'", "streams", "log_paths");
    EXPECT_ERROR(sctpm::get_setting(s, "STREAMS"), "unknown setting 'STREAMS'");
    EXPECT_ERROR(sctpm::get_setting(s, ""), "unknown setting ''");
}

TEST(Settings, LoadAsksForEveryCvarAndHistoricalName) {
    FakeEnv env;
    sctpm::load_settings(env.lookup());
    std::set<std::string> asked(env.asked.begin(), env.asked.end());
    for (const char* name : {"MPICH_SCTP_MULTIHOME_FILE", "MPICH_SCTP_BINDALL", "MPICH_INTERFACE_HOSTNAME",
                             "MPIR_CVAR_CH3_SCTP_BINDALL", "MPIR_CVAR_CH3_SCTP_MAX_CHUNKS_ON_QUEUE",
                             "MPIR_CVAR_CH3_SCTP_RTO_INITIAL_MS", "MPIR_CVAR_CH3_SCTP_STREAM_POLICY"})
        EXPECT_TRUE(asked.count(name)) << name;
    EXPECT_EQ(asked.size(), all_keys.size() + 3);
    // Historical names are read before any CVAR.
    ASSERT_GE(env.asked.size(), 3u);
    EXPECT_EQ(env.asked[0].rfind("MPICH_", 0), 0u);
    EXPECT_EQ(env.asked[2].rfind("MPICH_", 0), 0u);
}

TEST(Settings, HistoricalNames) {
    Settings s = load({{"MPICH_SCTP_MULTIHOME_FILE", "/etc/mh"},
                       {"MPICH_SCTP_BINDALL", "no"},
                       {"MPICH_INTERFACE_HOSTNAME", "10.1.0.7"}});
    EXPECT_EQ(s.multihome_file, "/etc/mh");
    EXPECT_TRUE(s.bind_all) << "MPICH_SCTP_BINDALL means on whatever its value";
    EXPECT_EQ(s.interface_hostname, "10.1.0.7");
}

TEST(Settings, HistoricalBindallEmptyValueIsOn) {
    EXPECT_TRUE(load({{"MPICH_SCTP_BINDALL", ""}}).bind_all);
    EXPECT_FALSE(load({}).bind_all);
}

TEST(Settings, CvarsOverrideHistoricalNames) {
    Settings s = load({{"MPICH_SCTP_MULTIHOME_FILE", "/old"},
                       {"MPIR_CVAR_CH3_SCTP_MULTIHOME_FILE", "/new"},
                       {"MPICH_SCTP_BINDALL", "1"},
                       {"MPIR_CVAR_CH3_SCTP_BINDALL", "off"},
                       {"MPICH_INTERFACE_HOSTNAME", "old-host"},
                       {"MPIR_CVAR_CH3_SCTP_INTERFACE_HOSTNAME", "new-host"}});
    EXPECT_EQ(s.multihome_file, "/new");
    EXPECT_FALSE(s.bind_all);
    EXPECT_EQ(s.interface_hostname, "new-host");
}

TEST(Settings, CvarsSetEveryKey) {
    const std::map<std::string, std::string> values = {
        {"multihome_file", "/mh"},    {"bindall", "yes"},         {"interface_hostname", "h"}, {"rails", "r1,10.2.0.0/16"},
        {"udp_port", "9899"},         {"streams", "64"},          {"stream_policy", "context"},
        {"eager_max", "128K"},        {"fragment_size", "1M"},    {"max_message", "4G"},
        {"pre_hello_bytes", "1M"},    {"reorder_bytes", "8M"},
        {"head_bytes", "512"},        {"auth", "off"},            {"stack", "own"},           {"cmt", "mptcp"},           {"pf_threshold", "65535"},
        {"rto_min_ms", "10"},         {"rto_max_ms", "1000"},     {"rto_initial_ms", "50"},
        {"heartbeat_ms", "30"},       {"path_max_retrans", "5"},  {"assoc_max_retrans", "20"},
        {"init_max_attempts", "3"},   {"path_mtu", "9000"},       {"sndbuf", "16M"},
        {"rcvbuf", "32M"},            {"udp_buffer", "2M"},       {"max_chunks_on_queue", "1000"},
        {"sack_delay_ms", "0"},       {"sack_per_read", "off"},   {"sack_full_packets", "off"}, {"nodelay", "false"},       {"spin_us", "0"}, {"spin_adapt", "false"}, {"caller_input", "false"},
        {"log_paths", "on"},          {"stall_report_s", "30"}};
    ASSERT_EQ(values.size(), all_keys.size());
    std::map<std::string, std::string> env;
    for (const auto& [key, value] : values) {
        std::string var = "MPIR_CVAR_CH3_SCTP_";
        for (char c : key) var += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        env[var] = value;
    }
    Settings s = load(env);
    Settings d;
    for (const auto& [key, value] : values) {
        EXPECT_NE(sctpm::get_setting(s, key), sctpm::get_setting(d, key)) << key << " kept its default";
    }
    EXPECT_EQ(s.udp_port, 9899);
    EXPECT_EQ(s.streams, 64);
    EXPECT_EQ(s.stream_policy, StreamPolicy::context);
    EXPECT_EQ(s.eager_max, 131072u);
    EXPECT_EQ(s.max_message, 4ull << 30);
    EXPECT_EQ(s.pre_hello_bytes, 1ull << 20);
    EXPECT_EQ(s.reorder_bytes, 8ull << 20);
    EXPECT_EQ(s.cmt, CmtMode::mptcp);
    EXPECT_EQ(s.rcvbuf, 32u << 20);
    EXPECT_EQ(s.path_mtu, 9000u);
    EXPECT_FALSE(s.sack_per_read);
    EXPECT_FALSE(s.sack_full_packets);
    EXPECT_FALSE(s.nodelay);
    EXPECT_TRUE(s.log_paths);
    EXPECT_EQ(s.stall_report_s, 30u);
}

TEST(Settings, CvarErrorNamesTheVariable) {
    EXPECT_EQ(error_of([] { load({{"MPIR_CVAR_CH3_SCTP_STREAMS", "0"}}); }),
              "MPIR_CVAR_CH3_SCTP_STREAMS: '0' is out of range (1..1024)");
    EXPECT_EQ(error_of([] { load({{"MPIR_CVAR_CH3_SCTP_NODELAY", "maybe"}}); }),
              "MPIR_CVAR_CH3_SCTP_NODELAY: 'maybe' is not a boolean (1|0|yes|no|true|false|on|off)");
    EXPECT_ERROR(load({{"MPIR_CVAR_CH3_SCTP_BINDALL", ""}}), "MPIR_CVAR_CH3_SCTP_BINDALL: '' is not a boolean");
    EXPECT_ERROR(load({{"MPIR_CVAR_CH3_SCTP_FRAGMENT_SIZE", "12x"}}), "MPIR_CVAR_CH3_SCTP_FRAGMENT_SIZE: '12x'",
                 "is not a size");
    EXPECT_ERROR(load({{"MPIR_CVAR_CH3_SCTP_CMT", "fast"}}), "MPIR_CVAR_CH3_SCTP_CMT: 'fast'", "off|base");
}

TEST(Settings, RtoOrderIsCheckedAfterAllKeys) {
    // Raising min above the default max is fine when max is raised too, whatever the read order.
    Settings s = load({{"MPIR_CVAR_CH3_SCTP_RTO_MIN_MS", "1000"},
                       {"MPIR_CVAR_CH3_SCTP_RTO_INITIAL_MS", "2000"},
                       {"MPIR_CVAR_CH3_SCTP_RTO_MAX_MS", "3000"}});
    EXPECT_EQ(s.rto_min_ms, 1000u);
    EXPECT_EQ(s.rto_initial_ms, 2000u);
    EXPECT_EQ(s.rto_max_ms, 3000u);
    EXPECT_EQ(error_of([] {
                  load({{"MPIR_CVAR_CH3_SCTP_RTO_MIN_MS", "500"}, {"MPIR_CVAR_CH3_SCTP_RTO_INITIAL_MS", "500"}});
              }),
              "MPIR_CVAR_CH3_SCTP_RTO_MIN_MS (500) must not exceed MPIR_CVAR_CH3_SCTP_RTO_MAX_MS (300)");
    EXPECT_ERROR(load({{"MPIR_CVAR_CH3_SCTP_RTO_MAX_MS", "200"}}),
                 "MPIR_CVAR_CH3_SCTP_RTO_INITIAL_MS (300) must not exceed MPIR_CVAR_CH3_SCTP_RTO_MAX_MS (200)");
    EXPECT_ERROR(load({{"MPIR_CVAR_CH3_SCTP_RTO_INITIAL_MS", "50"}}),
                 "MPIR_CVAR_CH3_SCTP_RTO_MIN_MS (100) must not exceed MPIR_CVAR_CH3_SCTP_RTO_INITIAL_MS (50)");
}

TEST(Settings, SendBufferMustHoldTwoFragments) {
    EXPECT_ERROR(load({{"MPIR_CVAR_CH3_SCTP_SNDBUF", "256K"}, {"MPIR_CVAR_CH3_SCTP_FRAGMENT_SIZE", "256K"}}),
                 "MPIR_CVAR_CH3_SCTP_SNDBUF (262144) must be at least twice MPIR_CVAR_CH3_SCTP_FRAGMENT_SIZE (262144)");
    Settings s = load({{"MPIR_CVAR_CH3_SCTP_SNDBUF", "512K"}, {"MPIR_CVAR_CH3_SCTP_FRAGMENT_SIZE", "256K"}});
    EXPECT_EQ(s.sndbuf, 512u * 1024);
}

TEST(Settings, CmtTakesSmallerReceiveBufferUnlessSet) {
    EXPECT_EQ(load({}).rcvbuf, 8u << 20);
    EXPECT_EQ(load({{"MPIR_CVAR_CH3_SCTP_CMT", "base"}}).rcvbuf, sctpm::kCmtRcvbuf);
    EXPECT_EQ(load({{"MPIR_CVAR_CH3_SCTP_CMT", "base"}, {"MPIR_CVAR_CH3_SCTP_RCVBUF", "4M"}}).rcvbuf, 4u << 20);
}

TEST(Settings, SackPerReadIsOnAlsoWithCmtUnlessSet) {
    EXPECT_TRUE(load({}).sack_per_read);
    EXPECT_FALSE(load({{"MPIR_CVAR_CH3_SCTP_SACK_PER_READ", "off"}}).sack_per_read);
    EXPECT_TRUE(load({{"MPIR_CVAR_CH3_SCTP_CMT", "base"}}).sack_per_read);
    EXPECT_FALSE(load({{"MPIR_CVAR_CH3_SCTP_CMT", "base"}, {"MPIR_CVAR_CH3_SCTP_SACK_PER_READ", "off"}}).sack_per_read);
}

TEST(Settings, ValidateUsesKeyNames) {
    Settings s;
    EXPECT_NO_THROW(sctpm::validate_settings(s));
    sctpm::set_setting(s, "rto_min_ms", "400");
    EXPECT_EQ(error_of([&] { sctpm::validate_settings(s); }), "rto_min_ms (400) must not exceed rto_max_ms (300)");
}

TEST(Settings, LoadFromProcessEnvironment) {
    ASSERT_EQ(setenv("MPIR_CVAR_CH3_SCTP_STREAMS", "33", 1), 0);
    ASSERT_EQ(setenv("MPICH_INTERFACE_HOSTNAME", "envhost", 1), 0);
    Settings s = sctpm::load_settings_from_environment();
    EXPECT_EQ(s.streams, 33);
    EXPECT_EQ(s.interface_hostname, "envhost");
    ASSERT_EQ(setenv("MPIR_CVAR_CH3_SCTP_STREAMS", "2000", 1), 0);
    EXPECT_ERROR(sctpm::load_settings_from_environment(), "MPIR_CVAR_CH3_SCTP_STREAMS: '2000' is out of range");
    unsetenv("MPIR_CVAR_CH3_SCTP_STREAMS");
    unsetenv("MPICH_INTERFACE_HOSTNAME");
}
