// SPDX-License-Identifier: BSD-3-Clause
// The process's usrsctp stack: one per process, initialised once (usrsctp cannot be restarted).
// Chooses a UDP encapsulation port that cannot collide (probe, then verify), applies the global
// tuning of the settings and enlarges the library's own UDP socket buffers.
#pragma once
#include <cstdint>

#include "settings.hpp"

namespace sctpm {

struct StackInfo {
    uint16_t udp_port = 0;      // UDP encapsulation port of this process (also its SCTP port)
    bool udp_buffers_forced = false; // SO_RCVBUFFORCE worked (else capped by net.core.rmem_max)
};

// Initialise usrsctp (first call) and return the port; later calls return the same info and
// ignore the settings. Throws Error if no port could be bound, naming the port and the reason.
StackInfo start_stack(const Settings& s);
// A UDP port that is free now on IPv4 and IPv6, as udp_port 0 chooses it (used by start_stack;
// exposed for tests that start processes on one port in turn).
uint16_t probe_free_udp_port();

// The stack's IPv4 UDP socket read on the calling thread (usrsctp_udp_input, our usrsctp patch
// udp-thread-yields-to-caller-input): inputs up to max_reads reads without blocking and keeps
// usrsctp's receive thread off the socket for hold_us (0: give it back now). udp_input_fd() is the
// socket to poll.
int udp_input(int max_reads, uint32_t hold_us);
int udp_input_fd();

// Re-apply the global sysctls that depend on settings (used by start_stack; exposed for tests).
void apply_stack_sysctls(const Settings& s);

} // namespace sctpm
