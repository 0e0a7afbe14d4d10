// SPDX-License-Identifier: BSD-3-Clause
// Business card text: "sctpm1;udp=<port>;sctp=<port>;addr=<a>[,<a>...][;key=<hex>]".
#include "card.hpp"

#include "error.hpp"
#include "hello_auth.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <map>

namespace sctpm {
namespace {

constexpr const char* version = "sctpm1";

std::vector<std::string> split(const std::string& text, char sep) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t end; (end = text.find(sep, start)) != std::string::npos; start = end + 1)
        parts.push_back(text.substr(start, end - start));
    parts.push_back(text.substr(start));
    return parts;
}

// The separator that ends a key field's value when one starts at text[at] ("key=" ends at ';', the PMI
// form's "key#" at '$'), or 0. A name that merely ends in "key" ("monkey=") is not one.
char key_field_end(const std::string& text, size_t at) {
    auto part_of_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    if (text.size() < at + 4 || (at > 0 && part_of_name(text[at - 1])))
        return 0;
    for (size_t i = 0; i < 3; ++i)
        if (std::tolower(static_cast<unsigned char>(text[at + i])) != "key"[i])
            return 0;
    return text[at + 3] == '=' ? ';' : text[at + 3] == '#' ? '$' : 0;
}

class CardParser {
public:
    explicit CardParser(const std::string& text) : text_(text) {}

    Card parse() {
        // inet_pton stops at a NUL: "10.0.0.1<NUL>junk" would pass as 10.0.0.1 (found by card_fuzz).
        if (size_t nul = text_.find('\0'); nul != std::string::npos)
            fail("NUL byte at offset " + std::to_string(nul));
        std::vector<std::string> fields = split(text_, ';');
        if (fields[0] != version) fail("expected prefix '" + std::string(version) + "', found '" + fields[0] + "'");
        for (size_t i = 1; i < fields.size(); ++i) add_field(fields[i]);
        Card card;
        card.udp_port = port("udp");
        card.sctp_port = port("sctp");
        card.addresses = addresses();
        card.key = key();
        return card;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error("card '" + printable_text(redact_key(text_)) + "': " + what);
    }

    void add_field(const std::string& field) {
        size_t eq = field.find('=');
        if (eq == std::string::npos) fail("field '" + field + "' is not key=value");
        std::string key = field.substr(0, eq);
        if (key != "udp" && key != "sctp" && key != "addr" && key != "key") fail("unknown key '" + key + "'");
        if (!values_.emplace(key, field.substr(eq + 1)).second) fail("duplicate key '" + key + "'");
    }

    const std::string& value(const std::string& key) const {
        auto it = values_.find(key);
        if (it == values_.end()) fail("missing key '" + key + "'");
        return it->second;
    }

    uint16_t port(const std::string& key) const {
        const std::string& v = value(key);
        bool digits = !v.empty() && v.size() <= 5 && v.find_first_not_of("0123456789") == std::string::npos;
        unsigned long n = digits ? std::stoul(v) : 0;
        if (n < 1 || n > 65535) fail(key + " port '" + v + "' is not a number in 1..65535");
        return static_cast<uint16_t>(n);
    }

    std::string key() const {
        auto it = values_.find("key");
        if (it == values_.end()) return "";
        const std::string& v = it->second;
        // Said, not shown: even a malformed key may be most of the secret.
        const std::string expected = "key is not " + std::to_string(2 * kAuthKeyBytes) + " lower-case hex digits: ";
        if (v.size() != 2 * kAuthKeyBytes)
            fail(expected + "it has " + std::to_string(v.size()) + " characters");
        if (size_t bad = v.find_first_not_of("0123456789abcdef"); bad != std::string::npos)
            fail(expected + "the character at offset " + std::to_string(bad) + " is not one");
        std::string raw;
        for (size_t i = 0; i < v.size(); i += 2) raw += static_cast<char>(std::stoi(v.substr(i, 2), nullptr, 16));
        return raw;
    }

    std::vector<std::string> addresses() const {
        const std::string& v = value("addr");
        if (v.empty()) fail("no address");
        std::vector<std::string> result;
        for (const std::string& a : split(v, ',')) result.push_back(normalise(a));
        return result;
    }

    std::string normalise(const std::string& a) const {
        unsigned char bin[sizeof(in6_addr)];
        char buf[INET6_ADDRSTRLEN];
        for (int family : {AF_INET, AF_INET6})
            if (inet_pton(family, a.c_str(), bin) == 1 && inet_ntop(family, bin, buf, sizeof buf)) return buf;
        fail("address '" + a + "' is not an IPv4 or IPv6 address");
    }

    const std::string& text_;
    std::map<std::string, std::string> values_;
};

} // namespace

std::string format_card(const Card& card) {
    std::string text = std::string(version) + ";udp=" + std::to_string(card.udp_port) +
                       ";sctp=" + std::to_string(card.sctp_port) + ";addr=";
    for (size_t i = 0; i < card.addresses.size(); ++i) text += (i ? "," : "") + card.addresses[i];
    if (!card.key.empty()) {
        text += ";key=";
        for (unsigned char c : card.key) {
            char hex[3];
            std::snprintf(hex, sizeof hex, "%02x", c);
            text += hex;
        }
    }
    return text;
}

Card parse_card(const std::string& text) { return CardParser(text).parse(); }

std::string redact_key(const std::string& text) {
    std::string shown;
    for (size_t at = 0; at < text.size();) {
        if (char end = key_field_end(text, at)) {
            shown.append(text, at, 4).append("<redacted>");
            at = std::min(text.find(end, at + 4), text.size());
        } else {
            shown += text[at++];
        }
    }
    return shown;
}

} // namespace sctpm
