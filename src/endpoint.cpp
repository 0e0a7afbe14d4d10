// SPDX-License-Identifier: BSD-3-Clause
#include "endpoint.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>
#include <usrsctp.h>

#include "error.hpp"
#include "path_params.hpp"

// Implemented by usrsctp 0.9.5.0 but not exported by its header.
#ifndef SCTP_CMT_ON_OFF
#define SCTP_CMT_ON_OFF 0x00001200
#endif
#ifndef SCTP_PEER_ADDR_THLDS
#define SCTP_PEER_ADDR_THLDS 0x00000023
struct sctp_paddrthlds {
    struct sockaddr_storage spt_address;
    sctp_assoc_t spt_assoc_id;
    uint16_t spt_pathmaxrxt;
    uint16_t spt_pathpfthld;
    uint16_t spt_pathcpthld;
};
#endif

namespace sctpm {
namespace {

// usrsctp's connectx/bindx take a packed array of sockaddrs of their natural sizes.
std::vector<uint8_t> pack_addresses(const std::vector<sockaddr_storage>& addrs) {
    std::vector<uint8_t> packed;
    for (const auto& a : addrs) {
        const auto* p = reinterpret_cast<const uint8_t*>(&a);
        packed.insert(packed.end(), p, p + sockaddr_len(a));
    }
    return packed;
}

} // namespace

std::string join_addresses(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v)
        out += (out.empty() ? "" : ",") + s;
    return out;
}

bool parse_address(const std::string& text, uint16_t port, sockaddr_storage* out) {
    std::memset(out, 0, sizeof *out);
    auto* v4 = reinterpret_cast<sockaddr_in*>(out);
    if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        return true;
    }
    auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
    if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        return true;
    }
    return false;
}

socklen_t sockaddr_len(const sockaddr_storage& ss) {
    return ss.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

std::string address_text(const sockaddr* sa) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf);
    return buf;
}

bool for_each_ip_interface(const std::function<void(const ifaddrs&)>& fn) {
    ifaddrs* ifa = nullptr;
    if (getifaddrs(&ifa) != 0)
        return false;
    for (ifaddrs* i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || !(i->ifa_flags & IFF_UP))
            continue;
        const int fam = i->ifa_addr->sa_family;
        if (fam == AF_INET || fam == AF_INET6)
            fn(*i);
    }
    freeifaddrs(ifa);
    return true;
}

bool usable_in_card(const sockaddr* sa) {
    // A link-local IPv6 address needs a scope id, which a card cannot carry.
    return !(sa->sa_family == AF_INET6 &&
             IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr));
}

std::vector<std::string> interface_addresses() {
    std::vector<std::string> global, loop;
    const bool listed = for_each_ip_interface([&](const ifaddrs& i) {
        if (!usable_in_card(i.ifa_addr))
            return;
        (i.ifa_flags & IFF_LOOPBACK ? loop : global).push_back(address_text(i.ifa_addr));
    });
    if (!listed)
        return {"127.0.0.1"};
    global.insert(global.end(), loop.begin(), loop.end());
    return global;
}

Endpoint::Endpoint(const Settings& s, uint16_t port, const std::vector<std::string>& addresses)
    : s_(s), port_(port) {
    std::vector<sockaddr_storage> addrs;
    for (const auto& a : addresses) {
        sockaddr_storage ss;
        if (!parse_address(a, port, &ss))
            throw Error("cannot bind '" + a + "': not an IPv4 or IPv6 address");
        if (ss.ss_family == AF_INET6)
            family_ = AF_INET6;
        addrs.push_back(ss);
    }
    if (addresses.empty())
        family_ = AF_INET6; // wildcard: one dual-stack socket covers every address
    so_ = usrsctp_socket(family_, SOCK_SEQPACKET, IPPROTO_SCTP, nullptr, nullptr, 0, nullptr);
    if (!so_)
        throw Error(std::string("usrsctp_socket failed: ") + std::strerror(errno));
    apply_socket_options();

    if (addresses.empty()) {
        sockaddr_in6 any{};
        any.sin6_family = AF_INET6;
        any.sin6_addr = in6addr_any;
        any.sin6_port = htons(port);
        if (usrsctp_bind(so_, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0)
            throw Error("cannot bind the SCTP wildcard address on port " + std::to_string(port) +
                        ": " + std::strerror(errno));
        bound_ = interface_addresses();
    } else {
        // bindx one at a time so that the error names the address that failed.
        for (size_t i = 0; i < addrs.size(); ++i) {
            if (usrsctp_bindx(so_, reinterpret_cast<sockaddr*>(&addrs[i]), 1, SCTP_BINDX_ADD_ADDR) != 0)
                throw Error("cannot bind SCTP address " + addresses[i] + " port " + std::to_string(port) +
                            ": " + std::strerror(errno) +
                            " (the address must exist on a local interface before the process starts)");
        }
        bound_ = addresses;
    }
    paths_ = path_params(s, addresses);
    // Also the default of future associations (a per-association setting after COMM_UP left
    // every chunk at 1444 bytes, one per packet).
    if (int e = set_path_params(so_, family_, SCTP_FUTURE_ASSOC, paths_))
        throw Error(std::string("cannot set socket option SCTP_PEER_ADDR_PARAMS (path MTU): ") + std::strerror(e));
    if (usrsctp_listen(so_, 1) != 0)
        throw Error(std::string("usrsctp_listen failed: ") + std::strerror(errno));
}

Endpoint::~Endpoint() {
    if (so_)
        usrsctp_close(so_);
}

void Endpoint::set_option(int level, int name, const void* value, socklen_t len, const char* what) {
    if (usrsctp_setsockopt(so_, level, name, value, len) != 0)
        throw Error(std::string("cannot set socket option ") + what + ": " + std::strerror(errno));
}

void Endpoint::apply_socket_options() {
    usrsctp_set_non_blocking(so_, 1);
    int on = 1;
    int nodelay = s_.nodelay ? 1 : 0;
    set_option(IPPROTO_SCTP, SCTP_NODELAY, &nodelay, sizeof nodelay, "SCTP_NODELAY");
    set_option(IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof on, "SCTP_RECVRCVINFO");
    int snd = static_cast<int>(s_.sndbuf), rcv = static_cast<int>(s_.rcvbuf);
    set_option(SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd, "SO_SNDBUF");
    set_option(SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv, "SO_RCVBUF");

    // A partially read message must continue on the next read (direct placement relies on it).
    int interleave = 0;
    set_option(IPPROTO_SCTP, SCTP_FRAGMENT_INTERLEAVE, &interleave, sizeof interleave,
               "SCTP_FRAGMENT_INTERLEAVE");

    sctp_initmsg init{};
    init.sinit_num_ostreams = s_.streams;
    init.sinit_max_instreams = s_.streams;
    init.sinit_max_attempts = static_cast<uint16_t>(s_.init_max_attempts);
    init.sinit_max_init_timeo = static_cast<uint16_t>(std::min<uint32_t>(s_.rto_max_ms, 65535));
    set_option(IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof init, "SCTP_INITMSG");

    uint16_t refused = 0;
    if (!subscribe_events(so_, {SCTP_ASSOC_CHANGE, SCTP_PEER_ADDR_CHANGE, SCTP_SEND_FAILED_EVENT, SCTP_SHUTDOWN_EVENT,
                                SCTP_REMOTE_ERROR},
                          &refused))
        throw Error("cannot set socket option SCTP_EVENT (notification " + std::to_string(refused) +
                    "): " + std::strerror(errno));

    sctp_sack_info sack{};
    sack.sack_assoc_id = SCTP_FUTURE_ASSOC;
    sack.sack_delay = s_.sack_delay_ms;
    sack.sack_freq = s_.sack_delay_ms == 0 ? 1 : 2;
    if (s_.sack_delay_ms > 0)
        set_option(IPPROTO_SCTP, SCTP_DELAYED_SACK, &sack, sizeof sack, "SCTP_DELAYED_SACK");
    else {
        sack.sack_delay = 0; // usrsctp: delay 0 + freq 1 = SACK every packet
        usrsctp_setsockopt(so_, IPPROTO_SCTP, SCTP_DELAYED_SACK, &sack, sizeof sack);
    }

    if (s_.auth == AuthMode::packet)
        require_chunk_auth();

    if (s_.cmt != CmtMode::off) {
        sctp_assoc_value cmt{};
        cmt.assoc_id = SCTP_FUTURE_ASSOC;
        cmt.assoc_value = static_cast<uint32_t>(s_.cmt);
        set_option(IPPROTO_SCTP, SCTP_CMT_ON_OFF, &cmt, sizeof cmt, "SCTP_CMT_ON_OFF (cmt)");
    }
}

void Endpoint::set_upcall(void (*fn)(struct socket*, void*, int), void* arg) {
    usrsctp_set_upcall(so_, fn, arg);
}

AssocId Endpoint::connect(const std::vector<std::string>& addresses, uint16_t sctp_port, uint16_t udp_port) {
    std::vector<sockaddr_storage> addrs;
    for (const auto& a : addresses) {
        sockaddr_storage ss;
        if (!parse_address(a, sctp_port, &ss))
            throw Error("peer address '" + a + "' is not an IPv4 or IPv6 address");
        if (ss.ss_family == AF_INET6 && family_ != AF_INET6)
            continue; // an IPv4 socket cannot reach it; other addresses may
        addrs.push_back(ss);
    }
    if (addrs.empty())
        throw Error("peer addresses [" + join_addresses(addresses) + "] have no address of a family this endpoint can reach");

    // The remote UDP port is copied into an association when it is created: set it right before.
    sctp_udpencaps encaps{};
    encaps.sue_address.ss_family = static_cast<sa_family_t>(family_);
    encaps.sue_assoc_id = SCTP_FUTURE_ASSOC;
    encaps.sue_port = htons(udp_port);
    set_option(IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &encaps, sizeof encaps,
               "SCTP_REMOTE_UDP_ENCAPS_PORT");

    std::vector<uint8_t> packed = pack_addresses(addrs);
    sctp_assoc_t id = 0;
    if (usrsctp_connectx(so_, reinterpret_cast<const sockaddr*>(packed.data()),
                         static_cast<int>(addrs.size()), &id) == 0 || errno == EINPROGRESS)
        return id;
    const int err = errno;
    // The peer opened an association to us first (its hello is still on the way): use that one.
    if (err == EALREADY || err == EISCONN || err == EADDRINUSE)
        for (auto& a : addrs)
            if (sctp_assoc_t existing = usrsctp_getassocid(so_, reinterpret_cast<sockaddr*>(&a)))
                return existing;
    throw Error("cannot start an association to [" + join_addresses(addresses) + "] port " + std::to_string(sctp_port) +
                " (UDP " + std::to_string(udp_port) + "): " + std::strerror(err));
}

long Endpoint::sendv(AssocId assoc, uint16_t stream, const iovec* iov, int iovcnt) {
    static_assert(kMaxSendIov == USRSCTP_SENDV_MAX_IOV);
    sctp_sndinfo info{};
    info.snd_sid = stream;
    info.snd_assoc_id = assoc;
    // Gathered by the stack as it copies into its mbufs: the payload is not copied once more here.
    ssize_t n = usrsctp_sendv_iov(so_, iov, iovcnt, nullptr, 0, &info, sizeof info, SCTP_SENDV_SNDINFO, 0);
    if (n < 0)
        return errno == EAGAIN ? -EWOULDBLOCK : -errno;
    return n;
}

RecvResult Endpoint::recv(void* buf, size_t len) {
    RecvResult r;
    sctp_rcvinfo info{};
    socklen_t infolen = sizeof info;
    socklen_t fromlen = sizeof r.from;
    unsigned int infotype = 0;
    int flags = 0;
    ssize_t n = usrsctp_recvv(so_, buf, len, reinterpret_cast<sockaddr*>(&r.from), &fromlen, &info,
                              &infolen, &infotype, &flags);
    if (n < 0) {
        r.n = errno == EAGAIN ? -EWOULDBLOCK : -errno;
        return r;
    }
    r.n = n;
    r.eor = flags & MSG_EOR;
    r.cut = r.eor && (flags & MSG_TRUNC); // PD-API aborted: the notification after it says why
    r.notification = flags & MSG_NOTIFICATION;
    if (infotype == SCTP_RECVV_RCVINFO) {
        r.assoc = info.rcv_assoc_id;
        r.stream = info.rcv_sid;
    }
    return r;
}

void Endpoint::tune_association(AssocId assoc) {
    // Failures here leave defaults in place; the association still works, so report nothing fatal.
    tune_paths(so_, family_, assoc, paths_);

    sctp_paddrthlds th{};
    th.spt_address.ss_family = static_cast<sa_family_t>(family_);
    th.spt_assoc_id = assoc;
    th.spt_pathmaxrxt = static_cast<uint16_t>(s_.path_max_retrans);
    th.spt_pathpfthld = s_.pf_threshold;
    th.spt_pathcpthld = 0xffff; // anything else is rejected by 0.9.5.0
    usrsctp_setsockopt(so_, IPPROTO_SCTP, SCTP_PEER_ADDR_THLDS, &th, sizeof th);
}

// A send of no data that only carries flags (ABORT, EOF). usrsctp_sendv refuses a null buffer
// (EFAULT) even for zero bytes, which silently disabled both until this was found.
void Endpoint::send_flags_only(const sctp_sndinfo& info, const char* what) {
    static const char none = 0;
    // The association being gone already (the peer ended it first) is normal; only a refused
    // call is worth a word.
    if (usrsctp_sendv(so_, &none, 0, nullptr, 0, const_cast<sctp_sndinfo*>(&info), sizeof info, SCTP_SENDV_SNDINFO, 0) < 0 &&
        (errno == EFAULT || errno == EBADF))
        std::fprintf(stderr, "sctpm: %s of association %u failed: %s\n", what, info.snd_assoc_id, std::strerror(errno));
}

void Endpoint::abort(AssocId assoc, const std::string& reason) {
    sctp_sndinfo info{};
    info.snd_flags = SCTP_ABORT;
    info.snd_assoc_id = assoc;
    if (reason.empty())
        send_flags_only(info, "abort");
    else
        usrsctp_sendv(so_, reason.data(), std::min<size_t>(reason.size(), 200), nullptr, 0, &info, sizeof info,
                      SCTP_SENDV_SNDINFO, 0);
}

void Endpoint::shutdown_assoc(AssocId assoc) {
    sctp_sndinfo info{};
    info.snd_flags = SCTP_EOF;
    info.snd_assoc_id = assoc;
    send_flags_only(info, "shutdown");
}

std::vector<PathStatus> Endpoint::paths(AssocId assoc) {
    std::vector<PathStatus> out;
    sockaddr* addrs = nullptr;
    int n = usrsctp_getpaddrs(so_, assoc, &addrs);
    if (n <= 0)
        return out;
    auto* p = reinterpret_cast<uint8_t*>(addrs);
    for (int i = 0; i < n; ++i) {
        auto* sa = reinterpret_cast<sockaddr*>(p);
        socklen_t salen = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
        sctp_paddrinfo info{};
        std::memcpy(&info.spinfo_address, sa, salen);
        info.spinfo_assoc_id = assoc;
        socklen_t len = sizeof info;
        PathStatus ps;
        ps.address = address_text(sa);
        if (usrsctp_getsockopt(so_, IPPROTO_SCTP, SCTP_GET_PEER_ADDR_INFO, &info, &len) == 0) {
            ps.state = info.spinfo_state;
            ps.cwnd = info.spinfo_cwnd;
            ps.srtt = info.spinfo_srtt;
            ps.rto = info.spinfo_rto;
            ps.mtu = info.spinfo_mtu;
        }
        out.push_back(ps);
        p += salen;
    }
    usrsctp_freepaddrs(addrs);
    return out;
}

bool subscribe_events(struct socket* so, std::initializer_list<uint16_t> types, uint16_t* refused) {
    for (uint16_t type : types) {
        sctp_event ev{};
        ev.se_assoc_id = SCTP_FUTURE_ASSOC;
        ev.se_type = type;
        ev.se_on = 1;
        if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof ev) != 0) {
            *refused = type;
            return false;
        }
    }
    return true;
}

AssocStatus Endpoint::status(AssocId assoc) {
    AssocStatus out;
    sctp_status st{};
    st.sstat_assoc_id = assoc;
    socklen_t len = sizeof st;
    if (usrsctp_getsockopt(so_, IPPROTO_SCTP, SCTP_STATUS, &st, &len) != 0)
        return out;
    out.known = true;
    out.state = st.sstat_state;
    out.rwnd = st.sstat_rwnd;
    out.unacked = st.sstat_unackdata;
    out.pending = st.sstat_penddata;
    // SCTP_GET_SNDBUF_USE is not in usrsctp.h; its struct is sctp_sockstat of netinet/sctp_uio.h.
    struct {
        sctp_assoc_t assoc;
        uint32_t sndbuf, recvbuf;
    } use{};
    use.assoc = assoc;
    len = sizeof use;
    if (usrsctp_getsockopt(so_, IPPROTO_SCTP, 0x00001101 /* SCTP_GET_SNDBUF_USE */, &use, &len) == 0)
        out.queued_out = use.sndbuf;
    return out;
}

std::string Endpoint::stack_counters() {
    sctpstat s{};
    usrsctp_get_stat(&s);
    return "DATA chunks in " + std::to_string(s.sctps_recvdata) + " (duplicates " + std::to_string(s.sctps_recvdupdata) +
           ", dropped for the chunk limit " + std::to_string(s.sctps_datadropchklmt) + ", for the window " +
           std::to_string(s.sctps_datadroprwnd) + "), out " + std::to_string(s.sctps_senddata) + " (retransmitted " +
           std::to_string(s.sctps_sendretransdata) + ", fast " + std::to_string(s.sctps_sendfastretrans) + ")";
}

bool Endpoint::readable() { return (usrsctp_get_events(so_) & SCTP_EVENT_READ) != 0; }

} // namespace sctpm
