// SPDX-License-Identifier: BSD-3-Clause
// Multihome file: lines "hostname ip [ip ...]", comments, IPv6, errors with file and line.
#include "error.hpp"
#include "error_of.hpp"
#include "multihome.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using sctpm::Multihome;
using Addresses = std::vector<std::string>;

namespace {

Multihome parse(const std::string& text, const std::string& source = "mh.txt") {
    std::istringstream in(text);
    return sctpm::parse_multihome(in, source);
}

std::string parse_error(const std::string& text) {
    return error_of([&] { parse(text); });
}

// A file in the test temp directory, removed at the end of the test.
struct TempFile {
    std::string path;
    explicit TempFile(const std::string& content) {
        std::string pattern = testing::TempDir() + "multihome_XXXXXX";
        std::vector<char> buf(pattern.begin(), pattern.end());
        buf.push_back('\0');
        int fd = mkstemp(buf.data());
        EXPECT_GE(fd, 0) << std::strerror(errno);
        path = buf.data();
        EXPECT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
        close(fd);
    }
    ~TempFile() { std::remove(path.c_str()); }
};

} // namespace

TEST(Multihome, LinesKeepHostAddressesAndLineNumbers) {
    Multihome m = parse("node1 10.0.0.1 10.1.0.1\nnode2 10.0.0.2\n", "hosts.mh");
    EXPECT_EQ(m.source, "hosts.mh");
    ASSERT_EQ(m.lines.size(), 2u);
    EXPECT_EQ(m.lines[0].host, "node1");
    EXPECT_EQ(m.lines[0].addresses, (Addresses{"10.0.0.1", "10.1.0.1"}));
    EXPECT_EQ(m.lines[0].line, 1);
    EXPECT_EQ(m.lines[1].host, "node2");
    EXPECT_EQ(m.lines[1].addresses, (Addresses{"10.0.0.2"}));
    EXPECT_EQ(m.lines[1].line, 2);
    EXPECT_EQ(m.addresses_for("node1"), (Addresses{"10.0.0.1", "10.1.0.1"}));
    EXPECT_EQ(m.addresses_for("node2"), (Addresses{"10.0.0.2"}));
}

TEST(Multihome, SeveralLinesPerHostAccumulateInFileOrder) {
    Multihome m = parse("a 10.0.0.1\n"
                        "b 10.0.0.9\n"
                        "a 10.2.0.1 10.0.0.1\n"
                        "a 10.1.0.1\n");
    EXPECT_EQ(m.lines.size(), 4u);
    EXPECT_EQ(m.addresses_for("a"), (Addresses{"10.0.0.1", "10.2.0.1", "10.1.0.1"}));
    EXPECT_EQ(m.addresses_for("b"), (Addresses{"10.0.0.9"}));
}

TEST(Multihome, DuplicatesDroppedAfterNormalisation) {
    Multihome m = parse("a 10.0.0.1 10.0.0.1 fe80:0:0:0:0:0:0:1\na FE80::1 10.0.0.1 ::1\n");
    EXPECT_EQ(m.lines[0].addresses, (Addresses{"10.0.0.1", "fe80::1"}));
    EXPECT_EQ(m.addresses_for("a"), (Addresses{"10.0.0.1", "fe80::1", "::1"}));
}

TEST(Multihome, Ipv6IsStoredNormalised) {
    Multihome m = parse("v6 2001:DB8:0:0:0:0:0:0001 ::ffff:10.0.0.1 2001:db8::1:0:0:1\n");
    EXPECT_EQ(m.addresses_for("v6"), (Addresses{"2001:db8::1", "::ffff:10.0.0.1", "2001:db8::1:0:0:1"}));
}

TEST(Multihome, CommentsBlankLinesAndWhitespace) {
    Multihome m = parse("# cluster rails\n"
                        "\n"
                        "   \t  \n"
                        "  node1\t10.0.0.1   10.1.0.1  # ib0 and eth1\n"
                        "#node1 10.9.9.9\n"
                        "node2 10.0.0.2#no space before the comment\r\n"
                        "node3 10.0.0.3\r\n"
                        "node4 10.0.0.4"); // no final newline
    ASSERT_EQ(m.lines.size(), 4u);
    EXPECT_EQ(m.lines[0].line, 4);
    EXPECT_EQ(m.lines[1].line, 6);
    EXPECT_EQ(m.addresses_for("node1"), (Addresses{"10.0.0.1", "10.1.0.1"}));
    EXPECT_EQ(m.addresses_for("node2"), (Addresses{"10.0.0.2"}));
    EXPECT_EQ(m.addresses_for("node3"), (Addresses{"10.0.0.3"}));
    EXPECT_EQ(m.addresses_for("node4"), (Addresses{"10.0.0.4"}));
}

TEST(Multihome, EmptyInputHasNoLines) {
    EXPECT_TRUE(parse("").lines.empty());
    EXPECT_TRUE(parse("# only a comment\n\n").lines.empty());
}

TEST(Multihome, HostWithoutAddressNamesSourceAndLine) {
    EXPECT_EQ(parse_error("a 10.0.0.1\n\nh1\n"), "mh.txt:3: host 'h1' has no address");
    EXPECT_EQ(parse_error("h1   # 10.0.0.1 commented out\n"), "mh.txt:1: host 'h1' has no address");
}

TEST(Multihome, BadAddressNamesSourceLineAndValue) {
    EXPECT_EQ(parse_error("a 10.0.0.1\nb 10.0.0.2 abc\n"), "mh.txt:2: 'abc' is not an IPv4 or IPv6 address");
    const std::vector<std::string> bad = {"10.0.0.256", "10.0.0", "10.0.0.1.1", "[::1]", "fe80::1%eth0",
                                          "1:2:3:4:5:6:7:8:9", "node1", "10.0.0.1/24", "::g"};
    for (const std::string& a : bad)
        EXPECT_EQ(parse_error("host " + a + "\n"), "mh.txt:1: '" + a + "' is not an IPv4 or IPv6 address") << a;
}

TEST(Multihome, HostNameLengthLimit) {
    std::string ok(255, 'h');
    EXPECT_EQ(parse(ok + " 10.0.0.1\n").addresses_for(ok), (Addresses{"10.0.0.1"}));
    std::string msg = parse_error("a 10.0.0.1\n" + std::string(256, 'h') + " 10.0.0.1\n");
    EXPECT_EQ(msg.rfind("mh.txt:2: host name '", 0), 0u) << msg;
    EXPECT_NE(msg.find("longer than 255 characters"), std::string::npos) << msg;
}

TEST(Multihome, UnknownHostNamesSourceAndHost) {
    Multihome m = parse("node1 10.0.0.1\n", "/etc/sctp.mh");
    EXPECT_EQ(error_of([&] { m.addresses_for("node9"); }), "/etc/sctp.mh: no line for host 'node9'");
    EXPECT_EQ(error_of([&] { m.addresses_for("node"); }), "/etc/sctp.mh: no line for host 'node'");
    EXPECT_EQ(error_of([&] { m.addresses_for(""); }), "/etc/sctp.mh: no line for host ''");
}

TEST(Multihome, HostNamesCompareCaseInsensitively) {
    Multihome m = parse("Node1.Cluster 10.0.0.1\nnode1.cluster 10.0.0.2\n");
    EXPECT_EQ(m.addresses_for("NODE1.CLUSTER"), (Addresses{"10.0.0.1", "10.0.0.2"}));
}

TEST(Multihome, LoadReadsFileAndNamesItInErrors) {
    TempFile good("n1 10.0.0.1\nn1 ::1\n");
    Multihome m = sctpm::load_multihome(good.path);
    EXPECT_EQ(m.source, good.path);
    EXPECT_EQ(m.addresses_for("n1"), (Addresses{"10.0.0.1", "::1"}));
    EXPECT_EQ(error_of([&] { m.addresses_for("n2"); }), good.path + ": no line for host 'n2'");

    TempFile bad("n1 10.0.0.1\nn2 x.y\n");
    EXPECT_EQ(error_of([&] { sctpm::load_multihome(bad.path); }),
              bad.path + ":2: 'x.y' is not an IPv4 or IPv6 address");
}

TEST(Multihome, LoadMissingFileGivesPathAndErrno) {
    std::string path = testing::TempDir() + "no_such_multihome_file";
    std::string msg = error_of([&] { sctpm::load_multihome(path); });
    EXPECT_NE(msg.find("'" + path + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::strerror(ENOENT)), std::string::npos) << msg;
}

TEST(Multihome, LoadDirectoryGivesPathAndErrno) {
    std::string msg = error_of([] { sctpm::load_multihome("/"); });
    EXPECT_NE(msg.find("'/'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::strerror(EISDIR)), std::string::npos) << msg;
}
