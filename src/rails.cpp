// SPDX-License-Identifier: BSD-3-Clause
#include "rails.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include "endpoint.hpp"
#include "error.hpp"

namespace sctpm {
namespace {

std::string trimmed(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Address bytes of `text` (IPv4 or IPv6); the family, or 0 when it is neither.
int address_bytes(const std::string& text, unsigned char out[16]) {
    if (inet_pton(AF_INET, text.c_str(), out) == 1) return AF_INET;
    if (inet_pton(AF_INET6, text.c_str(), out) == 1) return AF_INET6;
    return 0;
}

bool valid_interface_name(const std::string& s) {
    if (s.empty() || s.size() >= IFNAMSIZ) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
               c == '-' || c == '.' || c == '@';
    });
}

RailFilter parse_one(const std::string& name, const std::string& value, const std::string& entry) {
    auto bad = [&](const std::string& why) -> Error {
        return Error(name + ": '" + value + "': entry '" + entry + "' " + why);
    };
    RailFilter f;
    f.text = entry;
    const auto slash = entry.find('/');
    if (slash == std::string::npos) {
        unsigned char scratch[16];
        if (address_bytes(entry, scratch))
            throw bad("is an address, not a subnet: write it with its prefix length (e.g. 198.18.1.0/24)");
        if (!valid_interface_name(entry))
            throw bad("is neither a subnet (address/prefix) nor an interface name");
        f.interface = entry;
        return f;
    }
    f.family = address_bytes(entry.substr(0, slash), f.net);
    if (!f.family) throw bad("does not start with an IPv4 or IPv6 address");
    const std::string len = entry.substr(slash + 1);
    const int max = f.family == AF_INET ? 32 : 128;
    if (len.empty() || len.size() > 3 || !std::all_of(len.begin(), len.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(len) > max)
        throw bad("has no prefix length of 0.." + std::to_string(max));
    f.prefix = std::stoi(len);
    return f;
}

bool in_subnet(const RailFilter& f, const std::string& address) {
    unsigned char a[16];
    if (address_bytes(address, a) != f.family) return false;
    const int whole = f.prefix / 8, rest = f.prefix % 8;
    if (std::memcmp(a, f.net, static_cast<size_t>(whole)) != 0) return false;
    if (rest == 0) return true;
    const auto mask = static_cast<unsigned char>(0xff << (8 - rest));
    return (a[whole] & mask) == (f.net[whole] & mask);
}

bool is_ipv4(const std::string& address) {
    unsigned char scratch[16];
    return address_bytes(address, scratch) == AF_INET;
}

bool selects(const RailFilter& f, const LocalAddress& l) {
    return f.interface.empty() ? in_subnet(f, l.address) : f.interface == l.interface;
}

} // namespace

std::vector<RailFilter> parse_rails(const std::string& name, const std::string& value) {
    std::vector<RailFilter> out;
    size_t start = 0;
    while (start <= value.size()) {
        size_t comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        const std::string entry = trimmed(value.substr(start, comma - start));
        if (entry.empty()) throw Error(name + ": '" + value + "' has an empty entry (a list of subnets or interface names, separated by commas)");
        out.push_back(parse_one(name, value, entry));
        start = comma + 1;
    }
    return out;
}

std::vector<std::string> rail_addresses(const std::vector<RailFilter>& filters,
                                        const std::vector<LocalAddress>& local, const std::string& host) {
    auto listed = [](const std::vector<LocalAddress>& l) {
        std::string t;
        for (const LocalAddress& a : l) t += (t.empty() ? "" : ", ") + a.interface + " " + a.address;
        return t.empty() ? std::string("none") : t;
    };
    std::vector<std::string> out;
    for (const RailFilter& f : filters) {
        std::vector<LocalAddress> hit;
        for (const LocalAddress& l : local)
            if (selects(f, l)) hit.push_back(l);
        // An interface is one rail: its IPv4 address, or its IPv6 one when it has no IPv4 address
        // (a second path over the same NIC would only split CMT's traffic on one link).
        if (!f.interface.empty() && std::any_of(hit.begin(), hit.end(), [](const LocalAddress& l) { return is_ipv4(l.address); }))
            hit.erase(std::remove_if(hit.begin(), hit.end(), [](const LocalAddress& l) { return !is_ipv4(l.address); }), hit.end());
        const std::string what = (f.interface.empty() ? "in subnet " : "on interface ") + f.text;
        if (hit.empty())
            throw Error("rails: no address of host '" + host + "' is " + what + " (its addresses: " + listed(local) + ")");
        if (hit.size() > 1)
            throw Error("rails: host '" + host + "' has " + std::to_string(hit.size()) + " addresses " + what + " (" +
                        listed(hit) + "): a rail is one address, name it by a narrower subnet");
        if (std::find(out.begin(), out.end(), hit[0].address) != out.end())
            throw Error("rails: on host '" + host + "', " + f.text + " selects " + hit[0].address +
                        ", which an earlier entry selected already: each entry must be a rail of its own");
        out.push_back(hit[0].address);
    }
    return out;
}

std::vector<LocalAddress> local_addresses() {
    std::vector<LocalAddress> out;
    const bool listed = for_each_ip_interface([&](const ifaddrs& i) {
        if (usable_in_card(i.ifa_addr))
            out.push_back({i.ifa_name, address_text(i.ifa_addr)});
    });
    if (!listed) throw Error(std::string("rails: cannot list this host's interfaces: ") + std::strerror(errno));
    return out;
}

} // namespace sctpm
