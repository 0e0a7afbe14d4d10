// SPDX-License-Identifier: BSD-3-Clause
// Parser of the multihome file: "hostname ip [ip ...]" per line, '#' comments.
#include "multihome.hpp"

#include "error.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <strings.h>

namespace sctpm {
namespace {

constexpr size_t max_host_name = 255; // DNS limit on a full name

// The inet_ntop form, so "::1" and "0:0::1" count as one address; false if neither family parses.
bool normalise(const std::string& text, std::string& out) {
    unsigned char bin[sizeof(in6_addr)];
    char buf[INET6_ADDRSTRLEN];
    for (int family : {AF_INET, AF_INET6}) {
        if (inet_pton(family, text.c_str(), bin) == 1 && inet_ntop(family, bin, buf, sizeof buf)) {
            out = buf;
            return true;
        }
    }
    return false;
}

void add_unique(std::vector<std::string>& list, const std::string& a) {
    if (std::find(list.begin(), list.end(), a) == list.end()) list.push_back(a);
}

// Host names compare case-insensitively, as DNS does.
bool same_host(const std::string& a, const std::string& b) {
    return a.size() == b.size() && strncasecmp(a.c_str(), b.c_str(), a.size()) == 0;
}

[[noreturn]] void fail_at(const std::string& source, int line, const std::string& what) {
    throw Error(source + ":" + std::to_string(line) + ": " + what);
}

// One line without its comment; empty host means a blank line.
MultihomeLine parse_line(const std::string& text, const std::string& source, int number) {
    std::istringstream words(text.substr(0, text.find('#')));
    MultihomeLine line;
    line.line = number;
    if (!(words >> line.host)) return line;
    if (line.host.size() > max_host_name)
        fail_at(source, number, "host name '" + line.host.substr(0, 40) + "...' is longer than " +
                                    std::to_string(max_host_name) + " characters");
    std::string word, address;
    while (words >> word) {
        if (!normalise(word, address)) fail_at(source, number, "'" + word + "' is not an IPv4 or IPv6 address");
        add_unique(line.addresses, address);
    }
    if (line.addresses.empty()) fail_at(source, number, "host '" + line.host + "' has no address");
    return line;
}

} // namespace

std::vector<std::string> Multihome::addresses_for(const std::string& host) const {
    std::vector<std::string> result;
    bool found = false;
    for (const MultihomeLine& l : lines) {
        if (!same_host(l.host, host)) continue;
        found = true;
        for (const std::string& a : l.addresses) add_unique(result, a);
    }
    if (!found) throw Error(source + ": no line for host '" + host + "'");
    return result;
}

Multihome parse_multihome(std::istream& in, const std::string& source) {
    Multihome m;
    m.source = source;
    std::string text;
    for (int number = 1; std::getline(in, text); ++number) {
        MultihomeLine line = parse_line(text, source, number);
        if (!line.host.empty()) m.lines.push_back(std::move(line));
    }
    return m;
}

Multihome load_multihome(const std::string& path) {
    auto fail = [&] { throw Error("cannot read multihome file '" + path + "': " + std::strerror(errno)); };
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "r"), &std::fclose);
    if (!f) fail();
    // Read it whole with stdio so that read errors (e.g. EISDIR) keep their errno.
    std::string content;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) content.append(buf, n);
    if (std::ferror(f.get())) fail();
    std::istringstream in(content);
    return parse_multihome(in, path);
}

} // namespace sctpm
