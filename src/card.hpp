// SPDX-License-Identifier: BSD-3-Clause
// Business card of a process: how peers reach its usrsctp stack. Exchanged as text through the
// process manager (PMI key-value space), so it must round-trip exactly and fail loudly when bad.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sctpm {

struct Card {
    uint16_t udp_port = 0;              // UDP encapsulation port of the peer's stack
    uint16_t sctp_port = 0;             // SCTP port of the peer's socket
    std::vector<std::string> addresses; // IPv4/IPv6 in plain text form, primary first
    // The process's link key (hello_auth.hpp), raw bytes. Empty in a card taken from a hello,
    // which never carries it: a peer made from such a card can answer but not open links.
    std::string key;
};

// "sctpm1;udp=<port>;sctp=<port>;addr=<a>[,<a>...][;key=<32 hex digits>]"  (IPv6 addresses appear
// in plain text form; ',' separates)
std::string format_card(const Card&);

// Throws sctpm::Error naming the card text (through redact_key) and the bad field: a NUL byte, wrong prefix/version,
// missing or duplicate key, unknown key, port not a number in 1..65535, a key that is not 32 hex digits (described,
// never shown), no address, an address that is neither IPv4 nor IPv6 (inet_pton).
// Addresses are stored in their normalised (inet_ntop) form.
Card parse_card(const std::string& text);

// text with the value of every key field replaced by "<redacted>": "key=<hex>" in a card, "key#<hex>" in its PMI
// form (a business card or port name of the channels). The link key is the job's secret, so a card or port name is
// quoted in a message only through this. A value runs to its field's end (';', or '$' in the PMI form); the field
// name matches in any case.
std::string redact_key(const std::string& text);

} // namespace sctpm
