// SPDX-License-Identifier: BSD-3-Clause
// The "rails" setting: the data networks a process binds to, found on the host itself, so that
// no multihome file is needed when every host's rails are on the same subnets (or interface names).
// The chosen addresses go into the business card, which reaches the peers through PMI.
#pragma once
#include <string>
#include <vector>

namespace sctpm {

// One entry of the list: a subnet ("198.18.1.0/24", "fd00::/64") or an interface name ("eth1").
struct RailFilter {
    std::string text;      // as the user wrote it, for messages
    std::string interface; // non-empty for an interface name
    int family = 0;        // AF_INET or AF_INET6 for a subnet
    unsigned char net[16] = {};
    int prefix = 0;
};

// Comma-separated filters, rail 1 first. Throws Error naming `name`, the value and the bad entry.
std::vector<RailFilter> parse_rails(const std::string& name, const std::string& value);

struct LocalAddress {
    std::string interface;
    std::string address; // text form
};

// The address each filter selects in `local`, in rail order. A subnet must hold exactly one of
// the host's addresses; an interface gives its IPv4 address (its IPv6 one if it has none).
// Throws Error naming the host, the filter and the addresses when a filter selects none or
// several, or one that an earlier filter selected.
std::vector<std::string> rail_addresses(const std::vector<RailFilter>& filters,
                                        const std::vector<LocalAddress>& local, const std::string& host);

// This host's addresses with their interfaces (up, IPv4 and non-link-local IPv6).
std::vector<LocalAddress> local_addresses();

} // namespace sctpm
