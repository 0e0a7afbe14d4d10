// SPDX-License-Identifier: BSD-3-Clause
// Address: the engine's plain-value IPv4/IPv6 + UDP port, converted to and from sockaddr (no
// system call: inet_pton/inet_ntop only format bytes).
#include <arpa/inet.h>

#include <cstring>

#include "sctp/engine.hpp"

namespace sctpm::sctp {

Address Address::from_sockaddr(const sockaddr* sa, socklen_t len) {
    Address a;
    if (sa == nullptr)
        return a;
    if (sa->sa_family == AF_INET && len >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
        a.family = AF_INET;
        a.port = ntohs(in->sin_port);
        std::memcpy(a.ip, &in->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6 && len >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
        a.family = AF_INET6;
        a.port = ntohs(in6->sin6_port);
        std::memcpy(a.ip, &in6->sin6_addr, 16);
        a.scope_id = in6->sin6_scope_id;
    }
    return a;
}

std::optional<Address> Address::parse(const std::string& ip, uint16_t port) {
    Address a;
    a.port = port;
    if (inet_pton(AF_INET, ip.c_str(), a.ip) == 1) {
        a.family = AF_INET;
        return a;
    }
    if (inet_pton(AF_INET6, ip.c_str(), a.ip) == 1) {
        a.family = AF_INET6;
        return a;
    }
    return std::nullopt;
}

socklen_t Address::to_sockaddr(sockaddr_storage* out) const {
    std::memset(out, 0, sizeof *out);
    if (family == AF_INET) {
        auto* in = reinterpret_cast<sockaddr_in*>(out);
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        std::memcpy(&in->sin_addr, ip, 4);
        return sizeof(sockaddr_in);
    }
    if (family == AF_INET6) {
        auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        std::memcpy(&in6->sin6_addr, ip, 16);
        in6->sin6_scope_id = scope_id;
        return sizeof(sockaddr_in6);
    }
    return 0;
}

std::string Address::to_string() const {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (family == AF_INET) {
        inet_ntop(AF_INET, ip, buf, sizeof buf);
        return std::string(buf) + ":" + std::to_string(port);
    }
    if (family == AF_INET6) {
        inet_ntop(AF_INET6, ip, buf, sizeof buf);
        return "[" + std::string(buf) + "]:" + std::to_string(port);
    }
    return "unspecified";
}

bool operator==(const Address& a, const Address& b) {
    if (a.family != b.family || a.port != b.port)
        return false;
    if (a.family == AF_INET)
        return std::memcmp(a.ip, b.ip, 4) == 0;
    if (a.family == AF_INET6)
        return std::memcmp(a.ip, b.ip, 16) == 0 && a.scope_id == b.scope_id;
    return true;
}

size_t AddressHash::operator()(const Address& a) const {
    // FNV-1a over the bytes that operator== compares.
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint8_t b) { h = (h ^ b) * 1099511628211ull; };
    mix(static_cast<uint8_t>(a.family));
    mix(static_cast<uint8_t>(a.port >> 8));
    mix(static_cast<uint8_t>(a.port));
    size_t n = a.family == AF_INET ? 4 : a.family == AF_INET6 ? 16 : 0;
    for (size_t i = 0; i < n; ++i)
        mix(a.ip[i]);
    return static_cast<size_t>(h);
}

} // namespace sctpm::sctp
