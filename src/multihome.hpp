// SPDX-License-Identifier: BSD-3-Clause
// Parser of the historical MPICH_SCTP_MULTIHOME_FILE: lines "hostname ip [ip ...]",
// several lines per host allowed, '#' starts a comment, blank lines ignored.
#pragma once
#include <istream>
#include <string>
#include <vector>

namespace sctpm {

struct MultihomeLine {
    std::string host;
    std::vector<std::string> addresses; // normalised text form (inet_ntop of the parsed address)
    int line = 0;
};

struct Multihome {
    std::string source; // file name, for error messages
    std::vector<MultihomeLine> lines;

    // All addresses listed for a host, in file order, without duplicates.
    // Throws Error naming the file and the host if the host has no line.
    std::vector<std::string> addresses_for(const std::string& host) const;
};

// Throws Error "<source>:<line>: <what> '<value>'" on a malformed line (a line with a host but no
// address, an address that is neither IPv4 nor IPv6, an over-long host name).
Multihome parse_multihome(std::istream& in, const std::string& source);
// Throws Error naming the path (and errno text) if it cannot be read.
Multihome load_multihome(const std::string& path);

} // namespace sctpm
