// SPDX-License-Identifier: BSD-3-Clause
// The engine's UDP socket: recvmmsg + UDP_GRO + IP_PKTINFO in, sendmsg + UDP_SEGMENT out; see
// udp_io.hpp.
#include "udp_io.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include "error.hpp"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace sctpm::sctp {
namespace {

// The kernel's limits on one segmented send (udp_send_skb): at most 64 segments (128 on newer
// kernels; 64 everywhere) and one IP datagram's worth of payload.
constexpr size_t kMaxSegments = 64;
constexpr size_t kMaxUdpPayload = 65507;

std::string errno_text(int e) { return std::strerror(e); }

std::string address_text(const sockaddr_in& a) {
    char s[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a.sin_addr, s, sizeof s);
    return std::string(s) + ":" + std::to_string(ntohs(a.sin_port));
}

} // namespace

uint64_t monotonic_us() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000u + uint64_t(ts.tv_nsec) / 1000u;
}

void fill_random(void* p, size_t n) {
    auto* b = static_cast<uint8_t*>(p);
    while (n > 0) {
        const ssize_t r = getrandom(b, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            throw Error("getrandom failed: " + errno_text(errno));
        }
        b += r;
        n -= size_t(r);
    }
}

UdpSocket::UdpSocket(const Options& o) : batch_(o.batch ? o.batch : 1) {
    local_.sin_family = AF_INET;
    local_.sin_port = htons(o.port);
    if (inet_pton(AF_INET, o.addr.c_str(), &local_.sin_addr) != 1)
        throw Error("udp_io: '" + o.addr + "' is not an IPv4 address");
    // Blocking, but every call that must not wait says MSG_DONTWAIT: a read that waits (with
    // SO_RCVTIMEO as its bound) saves the poll() before it.
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0)
        throw Error("udp_io: cannot create a UDP socket: " + errno_text(errno));
    auto fail = [&](const std::string& what) {
        const int e = errno;
        close(fd_);
        fd_ = -1;
        throw Error("udp_io: " + what + " on " + address_text(local_) + ": " + errno_text(e));
    };
    int size = o.buffer_bytes;
    if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
        setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size); // capped by net.core.rmem_max
    if (setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0)
        setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    const int on = 1;
    if (setsockopt(fd_, IPPROTO_IP, IP_PKTINFO, &on, sizeof on) != 0)
        fail("cannot set IP_PKTINFO");
    const int pmtu = IP_PMTUDISC_DO;
    if (setsockopt(fd_, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu) != 0)
        fail("cannot set IP_MTU_DISCOVER");
    if (o.gro)
        gro_ = setsockopt(fd_, SOL_UDP, UDP_GRO, &on, sizeof on) == 0; // kernel 5.0+; else plain reads
    gso_ = o.gso;
    if (bind(fd_, reinterpret_cast<const sockaddr*>(&local_), sizeof local_) != 0)
        fail("cannot bind");
    socklen_t l = sizeof local_;
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&local_), &l) != 0)
        fail("getsockname failed");

    bufs_.resize(size_t(batch_) * kDatagramMax);
    ctrl_.resize(size_t(batch_) * kControlBytes);
    froms_.resize(batch_);
    iovs_.resize(batch_);
    msgs_.resize(batch_);
    for (unsigned i = 0; i < batch_; ++i) {
        iovs_[i] = {bufs_.data() + size_t(i) * kDatagramMax, kDatagramMax};
        msghdr& h = msgs_[i].msg_hdr;
        h.msg_name = &froms_[i];
        h.msg_namelen = sizeof froms_[i];
        h.msg_iov = &iovs_[i];
        h.msg_iovlen = 1;
        h.msg_control = ctrl_.data() + size_t(i) * kControlBytes;
        h.msg_controllen = kControlBytes;
    }
}

UdpSocket::~UdpSocket() {
    if (fd_ >= 0)
        close(fd_);
}

void UdpSocket::set_receive_timeout(int64_t us) {
    if (us == rcvtimeo_)
        return;
    timeval tv{};
    tv.tv_sec = us / 1000000;
    tv.tv_usec = us % 1000000;
    if (setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0)
        rcvtimeo_ = us;
}

int UdpSocket::recv_batch(int64_t wait_us) {
    int flags = MSG_DONTWAIT;
    if (wait_us != 0) {
        // The bound of the wait: the largest power of two of microseconds not above wait_us
        // (64 us at least), so that the socket option changes only when the bucket does.
        int64_t bucket = 0;
        if (wait_us > 0)
            bucket = wait_us < 64 ? 64 : int64_t{1} << (63 - __builtin_clzll(uint64_t(wait_us)));
        set_receive_timeout(bucket);
        flags = MSG_WAITFORONE;
    }
    // The headers were set up once; a read changes only the lengths of the entries it filled.
    for (unsigned i = 0; i < filled_; ++i) {
        msgs_[i].msg_hdr.msg_namelen = sizeof froms_[i];
        msgs_[i].msg_hdr.msg_controllen = kControlBytes;
    }
    filled_ = 0;
    for (;;) {
        const int n = recvmmsg(fd_, msgs_.data(), batch_, flags, nullptr);
        if (n >= 0) {
            stats_.reads += unsigned(n);
            filled_ = unsigned(n);
            return n;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        // An ICMP error queued on the socket (port unreachable after a peer left) shows up as the
        // errno of one read; it is not ours to report: read on.
        if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH)
            continue;
        return -errno;
    }
}

UdpSocket::Meta UdpSocket::meta(unsigned i) const {
    Meta m{local_, 0};
    const msghdr& h = msgs_[i].msg_hdr;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&h), c)) {
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
            in_pktinfo pi;
            std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
            m.to.sin_addr = pi.ipi_addr; // the header's destination address
        } else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int seg = 0;
            std::memcpy(&seg, CMSG_DATA(c), sizeof seg);
            if (seg > 0)
                m.segment = size_t(seg);
        }
    }
    return m;
}

int UdpSocket::send_one(const sockaddr_in& to, const uint8_t* data, size_t len, uint16_t gso_size,
                        const in_addr* source) {
    iovec iov{const_cast<uint8_t*>(data), len};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(uint16_t)) + CMSG_SPACE(sizeof(in_pktinfo))];
    msghdr h{};
    h.msg_name = const_cast<sockaddr_in*>(&to);
    h.msg_namelen = sizeof to;
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    if (source && local_.sin_addr.s_addr != htonl(INADDR_ANY))
        source = nullptr; // bound to one address: that is the source anyway
    if (gso_size || source) {
        std::memset(control, 0, sizeof control);
        h.msg_control = control;
        h.msg_controllen =
            (gso_size ? CMSG_SPACE(sizeof(uint16_t)) : 0) + (source ? CMSG_SPACE(sizeof(in_pktinfo)) : 0);
        cmsghdr* c = CMSG_FIRSTHDR(&h);
        if (gso_size) {
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            std::memcpy(CMSG_DATA(c), &gso_size, sizeof gso_size);
            c = CMSG_NXTHDR(&h, c);
        }
        if (source) {
            in_pktinfo pi{};
            pi.ipi_spec_dst = *source;
            c->cmsg_level = IPPROTO_IP;
            c->cmsg_type = IP_PKTINFO;
            c->cmsg_len = CMSG_LEN(sizeof pi);
            std::memcpy(CMSG_DATA(c), &pi, sizeof pi);
        }
    }
    bool stale_error_seen = false;
    for (int waits = 0;;) {
        if (sendmsg(fd_, &h, MSG_DONTWAIT) >= 0) {
            ++stats_.sends;
            return 0;
        }
        const int e = errno;
        if (e == EINTR)
            continue;
        if ((e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) && waits < 10) {
            // The send buffer is full: wait for room a little (1 ms at a time), then drop.
            pollfd p{fd_, POLLOUT, 0};
            poll(&p, 1, 1);
            ++waits;
            continue;
        }
        if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS)
            return 1; // dropped: the engine's retransmission covers it
        // Once: a queued ICMP error of an earlier send (this one was not sent yet). Again: the
        // route itself fails (a rail down: ENETUNREACH every time), which the caller must hear
        // (retrying it for ever held the engine, and its process stopped answering on every path).
        if ((e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH) && !stale_error_seen) {
            stale_error_seen = true;
            continue;
        }
        return -e;
    }
}

int UdpSocket::send_each(const sockaddr_in& to, const uint8_t* data, size_t len, size_t segment,
                         const in_addr* source) {
    int first_error = 0;
    for (size_t at = 0; at < len; at += segment) {
        const size_t n = len - at < segment ? len - at : segment;
        const int r = send_one(to, data + at, n, 0, source);
        if (r == 0)
            ++stats_.packets_out;
        else if (r > 0)
            ++stats_.send_drops;
        else if (!first_error)
            first_error = r;
    }
    return first_error;
}

int UdpSocket::send(const sockaddr_in& to, const uint8_t* data, size_t len, size_t segment, const in_addr* source) {
    if (segment == 0 || segment >= len || !gso_)
        return send_each(to, data, len, segment ? segment : len, source);
    // Cut into sends the kernel accepts: at most kMaxSegments segments and one datagram's bytes.
    size_t per_send = kMaxUdpPayload / segment;
    if (per_send > kMaxSegments)
        per_send = kMaxSegments;
    int first_error = 0;
    for (size_t at = 0; at < len;) {
        const size_t chunk = std::min(len - at, per_send * segment);
        int r = 0;
        if (gso_ && chunk > segment) {
            r = send_one(to, data + at, chunk, uint16_t(segment), source);
            if (r == 0) {
                stats_.packets_out += (chunk + segment - 1) / segment;
            } else if (r > 0) {
                stats_.send_drops += (chunk + segment - 1) / segment;
                r = 0;
            } else if (r == -EIO || r == -EINVAL || r == -EMSGSIZE || r == -EOPNOTSUPP) {
                // The kernel would not segment this burst (no checksum offload on the route, a
                // segment over the route's MTU, ...): one packet at a time, which also tells a
                // too-big packet apart (EMSGSIZE). If they all go out, segmentation cannot work
                // here: stop trying it.
                ++stats_.gso_fallbacks;
                r = send_each(to, data + at, chunk, segment, source);
                if (r == 0)
                    gso_ = false;
            }
        } else {
            r = send_each(to, data + at, chunk, segment, source);
        }
        if (r < 0 && !first_error)
            first_error = r;
        at += chunk;
    }
    return first_error;
}

bool UdpSocket::wait_readable(int64_t timeout_us) {
    pollfd p{fd_, POLLIN, 0};
    timespec ts{};
    if (timeout_us >= 0) {
        ts.tv_sec = timeout_us / 1000000;
        ts.tv_nsec = (timeout_us % 1000000) * 1000;
    }
    const int r = ppoll(&p, 1, timeout_us >= 0 ? &ts : nullptr, nullptr);
    return r > 0 && (p.revents & POLLIN);
}

size_t EngineDriver::input(Time now) { return input_from(now, 0); }

// How long a wait may last: max_us (-1: no bound), cut at the engine's next deadline.
int64_t EngineDriver::wait_bound(int64_t max_us) {
    ++stats_.waits;
    int64_t until = max_us;
    if (const auto d = ep_.next_deadline()) {
        const int64_t left = std::max<int64_t>(0, *d - Time(monotonic_us()));
        if (until < 0 || left < until)
            until = left;
    }
    return until;
}

size_t EngineDriver::wait_input(int64_t max_us) {
    int64_t until = wait_bound(max_us);
    if (until > 0 && until < 64)
        until = 0; // too close to sleep for: look, and run the timer
    return input_from(Time(monotonic_us()), until);
}

size_t EngineDriver::input_from(Time now, int64_t first_wait_us) {
    size_t packets = 0;
    bool stale = first_wait_us != 0; // `now` is from before the wait: take the time again
    for (unsigned r = 0; r < max_reads_; ++r) {
        const int n = sock_.receive(
            [&](const sockaddr_in& from, const sockaddr_in& to, const uint8_t* p, size_t len) {
                if (stale) {
                    now = Time(monotonic_us()); // the arrival time of what the wait brought
                    stale = false;
                }
                const Address a = to_address(from);
                if (tap_)
                    tap_(tap_ctx_, true, a, p, len);
                ep_.receive(a, to_address(to), p, len, now);
                ++packets;
            },
            r == 0 ? first_wait_us : 0);
        if (n <= 0) // nothing more (or an error the next wait will show again)
            break;
        if (unsigned(n) < sock_.batch()) // a short batch: the socket is drained
            break;
    }
    if (stale)
        now = Time(monotonic_us()); // the wait ended without a packet: a timer may be due
    if (packets) {
        ep_.end_of_batch(now);
        due_ = true;
    }
    run_due_timers(now);
    return packets;
}

void EngineDriver::run_due_timers(Time now) {
    if (const auto d = ep_.next_deadline(); d && *d <= now) {
        ++stats_.timeouts;
        ep_.handle_timeout(now);
        due_ = true;
    }
}

size_t EngineDriver::output(Time now) {
    due_ = false;
    size_t bursts = 0;
    while (const auto t = ep_.poll_transmit(out_.data(), out_.size(), kOutSegments, now)) {
        ++bursts;
        if (t->bytes == 0)
            continue;
        const sockaddr_in to = to_sockaddr_in(t->to);
        if (tap_)
            for (size_t at = 0; at < t->bytes; at += t->segment_size ? t->segment_size : t->bytes)
                tap_(tap_ctx_, false, t->to, out_.data() + at,
                     std::min(t->bytes - at, t->segment_size ? t->segment_size : t->bytes));
        in_addr src{};
        const bool have_src = t->from.family == AF_INET;
        if (have_src)
            std::memcpy(&src, t->from.ip, sizeof src);
        const int r =
            sock_.send(to, out_.data(), t->bytes, t->count > 1 ? t->segment_size : 0, have_src ? &src : nullptr);
        if (r < 0) {
            ++stats_.send_errors;
            stats_.emsgsize += r == -EMSGSIZE;
            ep_.send_failed(t->to, -r, now);
        }
    }
    stats_.bursts += bursts;
    return bursts;
}

void EngineDriver::wait(int64_t max_us) {
    const int64_t until = wait_bound(max_us);
    if (until == 0)
        return;
    sock_.wait_readable(until);
}

} // namespace sctpm::sctp
