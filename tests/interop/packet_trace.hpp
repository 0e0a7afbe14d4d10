// SPDX-License-Identifier: BSD-3-Clause
// A record of the SCTP packets one engine sent and received (through EngineDriver's tap), for
// the interoperability tests: when a case fails, the last packets are printed as chunk lists and
// hex, so that a finding names the exact packet and the peer's answer.
#pragma once
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "sctp/engine.hpp"

namespace interop {

inline const char* chunk_name(uint8_t type) {
    static const char* const names[] = {"DATA",     "INIT",         "INIT-ACK",     "SACK",      "HEARTBEAT",
                                        "HB-ACK",   "ABORT",        "SHUTDOWN",     "SHUT-ACK",  "ERROR",
                                        "COOKIE-ECHO", "COOKIE-ACK", "ECNE",        "CWR",       "SHUT-COMPLETE",
                                        "AUTH"};
    if (type < sizeof names / sizeof names[0])
        return names[type];
    switch (type) {
    case 0x40: return "I-DATA";
    case 0x80: return "ASCONF-ACK";
    case 0x82: return "RE-CONFIG";
    case 0x84: return "PAD";
    case 0xc0: return "FORWARD-TSN";
    case 0xc1: return "ASCONF";
    case 0xc2: return "I-FORWARD-TSN";
    case 0x10: return "NR-SACK";
    default: return "?";
    }
}

// "INIT(len 84) DATA(len 1016,flags 03)" of one SCTP packet; "(short)" when it is cut.
inline std::string chunk_list(const uint8_t* p, size_t len) {
    if (len < 12)
        return "(shorter than the common header)";
    char head[64];
    std::snprintf(head, sizeof head, "ports %u>%u vtag %08x: ", unsigned(p[0] << 8 | p[1]), unsigned(p[2] << 8 | p[3]),
                  unsigned(uint32_t(p[4]) << 24 | uint32_t(p[5]) << 16 | uint32_t(p[6]) << 8 | p[7]));
    std::string out = head;
    size_t at = 12;
    while (at + 4 <= len) {
        const uint8_t type = p[at], flags = p[at + 1];
        const size_t clen = size_t(p[at + 2]) << 8 | p[at + 3];
        char one[96];
        std::snprintf(one, sizeof one, "%s%s(0x%02x len %zu flags %02x)", at > 12 ? " " : "", chunk_name(type), type,
                      clen, flags);
        out += one;
        if (clen < 4) {
            out += " (bad length)";
            break;
        }
        at += (clen + 3) & ~size_t(3);
    }
    if (at < len)
        out += " (+" + std::to_string(len - at) + " bytes)";
    return out;
}

inline std::string hex(const uint8_t* p, size_t len, size_t max = 256) {
    std::string out;
    char b[4];
    for (size_t i = 0; i < len && i < max; ++i) {
        if (i && i % 32 == 0)
            out += "\n        ";
        std::snprintf(b, sizeof b, "%02x", p[i]);
        out += b;
        if (i % 4 == 3)
            out += ' ';
    }
    if (len > max)
        out += "... (" + std::to_string(len) + " bytes)";
    return out;
}

class PacketTrace {
public:
    explicit PacketTrace(size_t keep = 64) : keep_(keep) {}
    static void tap(void* ctx, bool inbound, const sctpm::sctp::Address& peer, const uint8_t* p, size_t len) {
        static_cast<PacketTrace*>(ctx)->add(inbound, peer, p, len);
    }
    void add(bool inbound, const sctpm::sctp::Address& peer, const uint8_t* p, size_t len) {
        ++count_;
        Entry e{count_, inbound, peer.to_string(), std::vector<uint8_t>(p, p + std::min<size_t>(len, 512)), len};
        if (verbose_)
            std::fprintf(stderr, "%s\n", describe(e).c_str());
        packets_.push_back(std::move(e));
        if (packets_.size() > keep_)
            packets_.pop_front();
    }
    void set_verbose(bool v) { verbose_ = v; }
    // The kept packets, oldest first: "#n IN/OUT peer len: chunks" and their first bytes in hex.
    std::string dump() const {
        std::string out;
        for (const auto& e : packets_)
            out += describe(e) + "\n";
        return out;
    }

private:
    struct Entry {
        uint64_t n;
        bool inbound;
        std::string peer;
        std::vector<uint8_t> bytes;
        size_t len;
    };
    static std::string describe(const Entry& e) {
        return "#" + std::to_string(e.n) + (e.inbound ? " IN  from " : " OUT to   ") + e.peer + " len " +
               std::to_string(e.len) + ": " + chunk_list(e.bytes.data(), e.bytes.size()) + "\n        " +
               hex(e.bytes.data(), e.bytes.size(), e.len > 200 ? 64 : 200);
    }
    size_t keep_;
    uint64_t count_ = 0;
    bool verbose_ = false;
    std::deque<Entry> packets_;
};

} // namespace interop
