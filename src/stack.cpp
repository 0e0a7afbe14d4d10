// SPDX-License-Identifier: BSD-3-Clause
#include "stack.hpp"

#include "heap_policy.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>
#include <usrsctp.h>

#include "error.hpp"

namespace sctpm {
namespace {

std::mutex g_stack_mutex;
bool g_started = false;
StackInfo g_info;

std::string errno_text(int e) { return std::string(std::strerror(e)); }

// Long enough for queued data to drain at a graceful end (the caller of sctpm_close bounds its own
// wait; what is left after it drains in the background), never shorter than RFC 4960's 5 x RTO.max.
uint32_t shutdown_guard_seconds(const Settings& s) {
    constexpr uint32_t kMinGuardSeconds = 60;
    const uint64_t rfc_seconds = (uint64_t{5} * s.rto_max_ms + 999) / 1000;
    return static_cast<uint32_t>(std::max<uint64_t>(kMinGuardSeconds, rfc_seconds));
}

// Whether `port` can be bound on both families (usrsctp binds both): bind, then close at once.
bool udp_port_free(uint16_t port) {
    int fd4 = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd4 < 0)
        throw Error("cannot create a UDP socket to probe port " + std::to_string(port) + ": " + errno_text(errno));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(port);
    bool free = bind(fd4, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    int fd6 = free ? socket(AF_INET6, SOCK_DGRAM, 0) : -1;
    if (fd6 >= 0) {
        int on = 1;
        setsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
        sockaddr_in6 b{};
        b.sin6_family = AF_INET6;
        b.sin6_addr = in6addr_any;
        b.sin6_port = htons(port);
        free = bind(fd6, reinterpret_cast<sockaddr*>(&b), sizeof b) == 0 || errno == EAFNOSUPPORT;
        close(fd6);
    }
    close(fd4);
    return free;
}

// Processes of one user on one host that start together (the ranks of a job) choose their ports
// in turn: each holds this lock from its probe until usrsctp has bound the port it chose. Without
// it two of them could choose the same port, a range's first free one or a port the kernel handed
// out again once the first had closed its probe socket (seen: 1 of about 1000 test-suite jobs of
// 10 ranks failed MPI_Init so). Without the lock file (no writable /tmp) they race, and the check
// after usrsctp_init names the loser's port.
class PortChoiceLock {
public:
    PortChoiceLock() {
        const std::string path = "/tmp/sctpm-udp-ports-" + std::to_string(getuid()) + ".lock";
        fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd_ >= 0 && flock(fd_, LOCK_EX) != 0) {
            close(fd_);
            fd_ = -1;
        }
    }
    ~PortChoiceLock() {
        if (fd_ >= 0)
            close(fd_); // releases the lock
    }
    PortChoiceLock(const PortChoiceLock&) = delete;
    PortChoiceLock& operator=(const PortChoiceLock&) = delete;

private:
    int fd_ = -1;
};

std::string range_text(const Settings& s) {
    return std::to_string(s.udp_port) + "-" + std::to_string(s.udp_port_last);
}

uint16_t first_free_in_range(const Settings& s) {
    for (uint32_t p = s.udp_port; p <= s.udp_port_last; ++p)
        if (udp_port_free(static_cast<uint16_t>(p)))
            return static_cast<uint16_t>(p);
    throw Error("no free UDP port in " + range_text(s) + " (udp_port / MPIR_CVAR_CH3_SCTP_UDP_PORT): all " +
                std::to_string(s.udp_port_last - s.udp_port + 1) +
                " are in use on this host; each process needs one, so widen the range");
}

// usrsctp does not expose its UDP sockets: find them among our descriptors by their bound port.
int find_udp_sockets(uint16_t port, int* fds, int max) {
    int found = 0;
    for (int fd = 0; fd < 4096 && found < max; ++fd) {
        int type = 0;
        socklen_t tl = sizeof type;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_DGRAM)
            continue;
        sockaddr_storage ss{};
        socklen_t l = sizeof ss;
        if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &l) != 0)
            continue;
        uint16_t p = 0;
        if (ss.ss_family == AF_INET)
            p = ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            p = ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
        if (p == port)
            fds[found++] = fd;
    }
    return found;
}

// The library hard-codes 128 KiB kernel buffers; bursts of small messages overflow them.
bool enlarge_udp_buffers(const int* fds, int n, uint32_t bytes) {
    bool forced = true;
    int sz = static_cast<int>(bytes);
    for (int i = 0; i < n; ++i) {
        if (setsockopt(fds[i], SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof sz) != 0) {
            forced = false;
            setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
        }
        if (setsockopt(fds[i], SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof sz) != 0)
            setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    }
    return forced;
}

// Don't fragment: a packet too big for its path is refused (EMSGSIZE) instead of being split
// by the kernel, and usrsctp then lowers that path's MTU to the kernel's
// (tools/patches/usrsctp/udp-path-mtu-from-emsgsize.patch). False if a socket refused it.
bool set_dont_fragment(const int* fds, int n) {
    bool ok = true;
    for (int i = 0; i < n; ++i) {
        sockaddr_storage ss{};
        socklen_t l = sizeof ss;
        if (getsockname(fds[i], reinterpret_cast<sockaddr*>(&ss), &l) != 0)
            continue;
        const bool v6 = ss.ss_family == AF_INET6;
        const int value = v6 ? IPV6_PMTUDISC_DO : IP_PMTUDISC_DO;
        ok &= setsockopt(fds[i], v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_MTU_DISCOVER : IP_MTU_DISCOVER, &value,
                         sizeof value) == 0;
    }
    return ok;
}

} // namespace

// Ask the kernel for a free UDP port (bind to port 0 and read it back), then check that both
// families can have it (usrsctp binds both). The sockets are closed before usrsctp_init binds
// the port: start_stack holds PortChoiceLock meanwhile, and verifies the bind afterwards.
uint16_t probe_free_udp_port() {
    for (int attempt = 0; attempt < 32; ++attempt) {
        int fd4 = socket(AF_INET, SOCK_DGRAM, 0);
        if (fd4 < 0)
            throw Error("cannot create a UDP socket to probe for a free port: " + errno_text(errno));
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        socklen_t len = sizeof a;
        if (bind(fd4, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            getsockname(fd4, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            int e = errno;
            close(fd4);
            throw Error("cannot bind a UDP socket to probe for a free port: " + errno_text(e));
        }
        close(fd4);
        const uint16_t port = ntohs(a.sin_port);
        if (udp_port_free(port))
            return port;
    }
    throw Error("no UDP port is free on both IPv4 and IPv6 after 32 probes");
}

void apply_stack_sysctls(const Settings& s) {
    // CMT: the global switch must be on before the per-socket option is accepted.
    usrsctp_sysctl_set_sctp_cmt_on_off(static_cast<uint32_t>(s.cmt));
    usrsctp_sysctl_set_sctp_cmt_use_dac(s.cmt != CmtMode::off ? 1 : 0);
    usrsctp_sysctl_set_sctp_path_pf_threshold(s.pf_threshold);
    usrsctp_sysctl_set_sctp_rto_min_default(s.rto_min_ms);
    usrsctp_sysctl_set_sctp_rto_max_default(s.rto_max_ms);
    usrsctp_sysctl_set_sctp_rto_initial_default(s.rto_initial_ms);
    usrsctp_sysctl_set_sctp_init_rto_max_default(s.rto_max_ms);
    usrsctp_sysctl_set_sctp_heartbeat_interval_default(s.heartbeat_ms);
    usrsctp_sysctl_set_sctp_path_rtx_max_default(s.path_max_retrans);
    usrsctp_sysctl_set_sctp_assoc_rtx_max_default(s.assoc_max_retrans);
    usrsctp_sysctl_set_sctp_init_rtx_max_default(s.init_max_attempts);
    usrsctp_sysctl_set_sctp_sendspace(s.sndbuf);
    usrsctp_sysctl_set_sctp_recvspace(s.rcvbuf);
    usrsctp_sysctl_set_sctp_max_chunks_on_queue(s.max_chunks_on_queue);
    usrsctp_sysctl_set_sctp_nr_outgoing_streams_default(s.streams);
    if (s.sack_delay_ms > 0)
        usrsctp_sysctl_set_sctp_delayed_sack_time_default(s.sack_delay_ms);
    // A SACK per GRO read (user-recv-sack-per-gro-read.patch) acknowledges up to 44 packets at MTU
    // 1500, and usrsctp's cwnd-based burst limit of 4 packets per SACK would shrink the window to
    // that. One 10 Gbit/s rail, MTU 1500, osu_bw 1 MiB, same session: 1022-1025 MB/s with 16,
    // 1059-1083 with 32, 1048-1129 with 64; 32 is the smaller burst at the same rate.
    usrsctp_sysctl_set_sctp_sack_per_read(s.sack_per_read ? 1 : 0);
    // user-recv-sack-small-packets-by-bytes.patch: 4 ranks on 2 cores, osu_allreduce 8 B, a fifth
    // of all packets were lone SACKs for two messages from a peer that came before the answer.
    usrsctp_sysctl_set_sctp_sack_full_packets(s.sack_full_packets ? 1 : 0);
    if (s.sack_per_read)
        usrsctp_sysctl_set_sctp_max_burst_default(kSackPerReadBurst);
    // Packets of other processes' stacks are not ours: drop them silently instead of ABORTing.
    usrsctp_sysctl_set_sctp_blackhole(2);
    // usrsctp aborts an association once one DATA chunk was sent 30 times, and zero-window
    // probes count: a receiver that stays out of MPI for ~7 s with a full receive window lost
    // its peer. Dead peers are still found by assoc_max_retrans (probes answered by a SACK
    // reset that count; unanswered ones do not).
    usrsctp_sysctl_set_sctp_max_retran_chunk(0);
    usrsctp_sysctl_set_sctp_ecn_enable(0);
    // A graceful end (SCTP_EOF, sctpm_close) is aborted by the stack when its queued data is not
    // all acknowledged within the shutdown guard time, by default 5 x RTO.max: 1.5 s with ours,
    // less than a receiver may compute before it reads again. The data is then lost.
    usrsctp_sysctl_set_sctp_shutdown_guard_time_default(shutdown_guard_seconds(s));
}

StackInfo start_stack(const Settings& s) {
    std::lock_guard<std::mutex> lock(g_stack_mutex);
    if (g_started)
        return g_info;
    keep_freed_heap(); // before usrsctp allocates its first mbufs
    const bool range = s.udp_port_last > s.udp_port;
    std::optional<PortChoiceLock> choice_lock;
    if (range || s.udp_port == 0)
        choice_lock.emplace();
    const uint16_t port = range ? first_free_in_range(s) : s.udp_port ? s.udp_port : probe_free_udp_port();
    usrsctp_init(port, nullptr, nullptr);
    g_started = true;
    apply_stack_sysctls(s);

    // A failed bind inside usrsctp_init is silent: verify that its IPv4 socket holds the port.
    int fds[4];
    int n = find_udp_sockets(port, fds, 4);
    bool have_v4 = false;
    for (int i = 0; i < n; ++i) {
        sockaddr_storage ss{};
        socklen_t l = sizeof ss;
        getsockname(fds[i], reinterpret_cast<sockaddr*>(&ss), &l);
        have_v4 |= ss.ss_family == AF_INET;
    }
    if (!have_v4)
        throw Error("usrsctp could not bind UDP port " + std::to_string(port) + " (in use by another process?" +
                    std::string(range       ? " it was the first free one of " + range_text(s) + " a moment before"
                                : s.udp_port ? " it was set by udp_port / MPIR_CVAR_CH3_SCTP_UDP_PORT"
                                             : " it was free a moment before") +
                    "); choose another port or leave udp_port at 0");
    choice_lock.reset(); // the port is bound: the next process may probe
    g_info.udp_port = port;
    g_info.udp_buffers_forced = enlarge_udp_buffers(fds, n, s.udp_buffer);
    if (!set_dont_fragment(fds, n))
        throw Error("cannot set don't-fragment (IP_MTU_DISCOVER) on usrsctp's UDP sockets: " + errno_text(errno));
    return g_info;
}

int udp_input(int max_reads, uint32_t hold_us) { return usrsctp_udp_input(max_reads, hold_us); }

int udp_input_fd() { return usrsctp_udp_socket(AF_INET); }

} // namespace sctpm
