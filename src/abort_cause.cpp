// SPDX-License-Identifier: BSD-3-Clause
#include "abort_cause.hpp"

#include <algorithm>
#include <cctype>

namespace sctpm {
namespace {

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

const char* cause_name(uint16_t code) {
    switch (code) {
    case 1: return "invalid stream identifier";
    case 2: return "missing mandatory parameter";
    case 3: return "stale cookie";
    case 4: return "out of resource";
    case 5: return "unresolvable address";
    case 6: return "unrecognized chunk type";
    case 7: return "invalid mandatory parameter";
    case 8: return "unrecognized parameters";
    case 9: return "no user data";
    case 10: return "cookie received while shutting down";
    case 11: return "restart with new addresses";
    case 12: return "user-initiated abort";
    case 13: return "protocol violation";
    default: return nullptr;
    }
}

// Printable text of a cause's information field (usrsctp writes a C string there).
std::string printable(const uint8_t* p, size_t n) {
    std::string s;
    for (size_t i = 0; i < n && p[i]; ++i)
        s += std::isprint(p[i]) ? static_cast<char>(p[i]) : '?';
    return s;
}

} // namespace

std::string describe_abort_chunk(const uint8_t* info, size_t len) {
    constexpr uint8_t kAbortChunk = 6;
    if (len < 4 || info[0] != kAbortChunk)
        return "";
    size_t end = std::min<size_t>(len, be16(info + 2));
    std::string out = (info[1] & 1) ? "ABORT (T bit)" : "ABORT";
    bool first = true;
    for (size_t off = 4; off + 4 <= end;) {
        const uint16_t code = be16(info + off), clen = be16(info + off + 2);
        if (clen < 4 || off + clen > end)
            break;
        const char* name = cause_name(code);
        out += first ? ": " : "; ";
        out += name ? name : "cause " + std::to_string(code);
        if (code == 12 || code == 13) {
            const std::string text = printable(info + off + 4, clen - 4u);
            if (!text.empty())
                out += " (" + text + ")";
        }
        first = false;
        off += (clen + 3u) & ~3u;
    }
    return out;
}

} // namespace sctpm
