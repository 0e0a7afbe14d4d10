// SPDX-License-Identifier: BSD-3-Clause
// The one error type of the core: a message that names what failed, where, and which value.
#pragma once
#include <cstdio>
#include <stdexcept>
#include <string>

namespace sctpm {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Bytes from the network, fit for a message: control bytes become \xNN.
inline std::string printable_text(const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
        if (c >= 0x20 && c != 0x7f) {
            out += static_cast<char>(c);
        } else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    return out;
}

} // namespace sctpm
