// SPDX-License-Identifier: BSD-3-Clause
// RFC 5043 on usrsctp: the DDP endpoint socket and its peeled-off associations; see adaptation.hpp.
#include "adaptation.hpp"

#include "endpoint.hpp"
#include "error.hpp"
#include "path_params.hpp"
#include "wire.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <usrsctp.h>

namespace iwarp {

using sctpm::parse_address;
using sctpm::sockaddr_len;

namespace {

std::string errno_text(int e) { return std::strerror(e); }

void set_option(struct socket* so, int name, const void* value, socklen_t len, const char* what) {
    if (usrsctp_setsockopt(so, IPPROTO_SCTP, name, value, len) != 0)
        throw sctpm::Error(std::string("iwarp adaptation: setsockopt ") + what + ": " + errno_text(errno));
}

void set_int(struct socket* so, int name, int value, const char* what) { set_option(so, name, &value, sizeof value, what); }

// SCTP port numbers are not kernel resources under UDP encapsulation, yet two processes on one
// host must not use the same one. Holding a kernel UDP socket bound to the number reserves it
// among every process that follows this rule (the MPI socket's SCTP port is its UDP port, which
// usrsctp itself holds).
int reserve_port(uint16_t wanted, uint16_t* port) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) throw sctpm::Error("iwarp adaptation: cannot create a UDP socket to reserve a port: " + errno_text(errno));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(wanted);
    socklen_t len = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        const int e = errno;
        close(fd);
        throw sctpm::Error("iwarp adaptation: cannot reserve port " + std::to_string(wanted) + " for the DDP endpoint: " +
                           errno_text(e));
    }
    *port = ntohs(a.sin_port);
    return fd;
}

void subscribe(struct socket* so) {
    uint16_t refused = 0;
    if (!sctpm::subscribe_events(so, {SCTP_ASSOC_CHANGE, SCTP_ADAPTATION_INDICATION, SCTP_SHUTDOWN_EVENT}, &refused))
        throw sctpm::Error("iwarp adaptation: setsockopt SCTP_EVENT (notification " + std::to_string(refused) +
                           "): " + errno_text(errno));
}

sctpm::PathParams path_params(const AdapterConfig& cfg) {
    return sctpm::path_params(cfg.path_mtu, cfg.bind_addresses, cfg.heartbeat_ms, cfg.path_max_retrans);
}

} // namespace

// ---- one association ----------------------------------------------------------------------------

SctpLlp::SctpLlp(struct socket* so, const AdapterConfig& cfg, int family, Upcall upcall, void* arg) : so_(so) {
    try {
        if (usrsctp_set_non_blocking(so_, 1) != 0)
            throw sctpm::Error("iwarp adaptation: cannot make the association socket non-blocking: " + errno_text(errno));
        set_int(so_, SCTP_RECVRCVINFO, 1, "SCTP_RECVRCVINFO");
        set_int(so_, SCTP_NODELAY, 1, "SCTP_NODELAY");
        // The endpoint made these the defaults its associations start with; an adopted socket's
        // association gets its paths tuned here (its DATA chunks keep the size it started with).
        const sctpm::PathParams params = path_params(cfg);
        sctpm::tune_paths(so_, family, 0, params); // keeps usrsctp's if refused
        // RFC 5043 §9: the largest segment that needs no SCTP fragmentation, but not below 516.
        sctp_status st{};
        socklen_t len = sizeof st;
        size_t frag = 0;
        if (usrsctp_getsockopt(so_, IPPROTO_SCTP, SCTP_STATUS, &st, &len) == 0) frag = st.sstat_fragmentation_point;
        if (frag == 0) frag = DdpEndpoint::segment_limit(sctpm::sctp_path_mtu(params.link_mtu, family));
        if (cfg.max_segment && cfg.max_segment < frag) frag = cfg.max_segment;
        max_message_ = std::max(frag, kMinSegmentLimit);
        usrsctp_set_upcall(so_, upcall, arg);
    } catch (...) {
        usrsctp_close(so_);
        throw;
    }
}

SctpLlp::~SctpLlp() { close(false); }

long SctpLlp::send(uint32_t ppid, const void* data, size_t len) {
    if (!so_) return -ENOTCONN;
    sctp_sndinfo info{};
    info.snd_sid = 0;
    info.snd_flags = SCTP_UNORDERED; // RFC 5043 §10: every chunk unordered; DDP-SSN restores order
    info.snd_ppid = htonl(ppid);
    ssize_t n = usrsctp_sendv(so_, data, len, nullptr, 0, &info, sizeof info, SCTP_SENDV_SNDINFO, 0);
    if (n < 0) return errno == EAGAIN ? -EWOULDBLOCK : -errno;
    ++sends_since_check_;
    return n;
}

bool SctpLlp::too_many_unacked() {
    // RFC 5043 §10: at most 32767 chunks in flight per stream. Asking SCTP is not free, so look
    // only once enough messages went out to possibly get near the limit.
    if (!so_ || sends_since_check_ < 8192) return false;
    sctp_status st{};
    socklen_t len = sizeof st;
    if (usrsctp_getsockopt(so_, IPPROTO_SCTP, SCTP_STATUS, &st, &len) != 0) return false;
    if (uint32_t(st.sstat_unackdata) + st.sstat_penddata >= 24576) return true;
    sends_since_check_ = 0;
    return false;
}

LlpRead SctpLlp::read(void* buf, size_t len) {
    LlpRead r;
    if (!so_) {
        r.closed = true;
        r.why = "association closed locally";
        return r;
    }
    for (;;) {
        sctp_rcvinfo info{};
        socklen_t infolen = sizeof info;
        sockaddr_storage from{};
        socklen_t fromlen = sizeof from;
        unsigned int infotype = 0;
        int flags = 0;
        ssize_t n = usrsctp_recvv(so_, buf, len, reinterpret_cast<sockaddr*>(&from), &fromlen, &info, &infolen,
                                  &infotype, &flags);
        if (n < 0) {
            r.n = errno == EAGAIN ? -EWOULDBLOCK : -errno;
            if (r.n == -ENOTCONN) {
                r.n = 0;
                r.closed = true;
                r.why = "association is gone";
            }
            return r;
        }
        if (n == 0 && !(flags & MSG_NOTIFICATION) && !in_message_) {
            r.closed = true;
            r.why = "association shut down by the peer";
            return r;
        }
        const bool first = !in_message_;
        in_message_ = !(flags & MSG_EOR);
        if (flags & MSG_NOTIFICATION || (!first && notification_)) {
            // Notifications are small; collect the rest of this one and look at its type.
            notification_ = in_message_;
            uint8_t note[1024];
            size_t have = std::min(size_t(n), sizeof note);
            std::memcpy(note, buf, have);
            while (in_message_) {
                int f = 0;
                ssize_t m = usrsctp_recvv(so_, note + have, sizeof note - have, nullptr, nullptr, nullptr, nullptr,
                                          &infotype, &f);
                if (m <= 0) break;
                have += size_t(m);
                in_message_ = !(f & MSG_EOR);
                if (have == sizeof note) have = sizeof note - 1; // overlong: keep draining, header stays
            }
            notification_ = false;
            if (first && have >= sizeof(sctp_notification::sn_header)) {
                auto* sn = reinterpret_cast<const sctp_notification*>(note);
                const uint16_t type = sn->sn_header.sn_type;
                if (type == SCTP_SHUTDOWN_EVENT) {
                    r.closed = true;
                    r.why = "peer shut the association down";
                    return r;
                }
                if (type == SCTP_ASSOC_CHANGE && have >= sizeof(sctp_assoc_change)) {
                    const uint16_t state = sn->sn_assoc_change.sac_state;
                    if (state == SCTP_COMM_LOST || state == SCTP_SHUTDOWN_COMP || state == SCTP_CANT_STR_ASSOC) {
                        r.closed = true;
                        r.why = state == SCTP_COMM_LOST ? "association lost (peer unreachable or aborted)"
                                                        : "association shut down";
                        return r;
                    }
                }
            }
            continue; // nothing for DDP: read on
        }
        r.n = n;
        r.eor = flags & MSG_EOR;
        if (first && infotype == SCTP_RECVV_RCVINFO) r.ppid = ntohl(info.rcv_ppid);
        return r;
    }
}

void SctpLlp::close(bool abort) {
    if (!so_) return;
    usrsctp_set_upcall(so_, nullptr, nullptr);
    if (abort) {
        linger l{1, 0}; // SO_LINGER 0: close sends ABORT
        usrsctp_setsockopt(so_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    usrsctp_close(so_);
    so_ = nullptr;
}

// ---- the endpoint ---------------------------------------------------------------------------------

// ABORTs an association of the endpoint socket with `reason` as its user-initiated cause (usrsctp
// refuses a null buffer, even of length 0). Returns "" or what went wrong, for the caller's message.
std::string DdpEndpoint::abort(uint32_t assoc, const char* reason) {
    sctp_sndinfo info{};
    info.snd_flags = SCTP_ABORT;
    info.snd_assoc_id = assoc;
    if (usrsctp_sendv(so_, reason, std::strlen(reason), nullptr, 0, &info, sizeof info, SCTP_SENDV_SNDINFO, 0) >= 0)
        return "";
    return std::string(" (and its ABORT failed: ") + std::strerror(errno) + ")";
}

bool DdpEndpoint::adaptation_is_ddp(uint32_t indication) { return indication == kAdaptationIndicationDdp; }

size_t DdpEndpoint::segment_limit(uint32_t path_mtu) {
    // Measured on usrsctp 0.9.5.0 (UDP encapsulation, IPv4): a packet is the path MTU plus the
    // 12-byte SCTP common header, so one DATA chunk of 16 header bytes carries MTU - 16 bytes,
    // rounded down to a multiple of 4 (e.g. 16000 -> 15984; no setting, 1500 -> 1444).
    return path_mtu > 16 ? (path_mtu - 16) & ~size_t(3) : 0;
}

DdpEndpoint::DdpEndpoint(const AdapterConfig& cfg, Upcall upcall, void* arg) : cfg_(cfg), upcall_(upcall), arg_(arg) {
    std::vector<sockaddr_storage> locals(cfg.bind_addresses.size());
    int family = AF_INET;
    for (size_t i = 0; i < locals.size(); i++) {
        if (!parse_address(cfg.bind_addresses[i], 0, &locals[i]))
            throw sctpm::Error("iwarp adaptation: bind address '" + cfg.bind_addresses[i] +
                               "' is not an IPv4 or IPv6 address");
        if (i > 0 && locals[i].ss_family != locals[0].ss_family)
            throw sctpm::Error("iwarp adaptation: bind addresses mix IPv4 and IPv6 ('" + cfg.bind_addresses[0] +
                               "', '" + cfg.bind_addresses[i] + "')");
        family = locals[i].ss_family;
    }
    family_ = family;
    if (cfg.sctp_port == 0) {
        reservation_fd_ = reserve_port(0, &port_);
    } else {
        port_ = cfg.sctp_port;
    }
    so_ = usrsctp_socket(family, SOCK_SEQPACKET, IPPROTO_SCTP, nullptr, nullptr, 0, nullptr);
    if (!so_) {
        if (reservation_fd_ >= 0) ::close(reservation_fd_);
        throw sctpm::Error("iwarp adaptation: usrsctp_socket failed (is the usrsctp stack started?): " + errno_text(errno));
    }
    try {
        if (usrsctp_set_non_blocking(so_, 1) != 0)
            throw sctpm::Error("iwarp adaptation: cannot make the DDP socket non-blocking: " + errno_text(errno));
        // RFC 5043 §5.1/§11.1: announce DDP in INIT and INIT-ACK.
        sctp_setadaptation ali{};
        ali.ssb_adaptation_ind = kAdaptationIndicationDdp;
        set_option(so_, SCTP_ADAPTATION_LAYER, &ali, sizeof ali, "SCTP_ADAPTATION_LAYER");
        set_int(so_, SCTP_RECVRCVINFO, 1, "SCTP_RECVRCVINFO");
        set_int(so_, SCTP_NODELAY, 1, "SCTP_NODELAY");
        // RFC 5043 §8: equal numbers of inbound and outbound streams; one DDP stream per association.
        sctp_initmsg init{};
        init.sinit_num_ostreams = 1;
        init.sinit_max_instreams = 1;
        set_option(so_, SCTP_INITMSG, &init, sizeof init, "SCTP_INITMSG");
        // The defaults of every association this socket starts or accepts: usrsctp sizes DATA
        // chunks (and so our segments) from the MTU an association starts with, for good.
        const sctpm::PathParams params = path_params(cfg_);
        if (int e = sctpm::set_path_params(so_, family, SCTP_FUTURE_ASSOC, params))
            throw sctpm::Error("iwarp adaptation: setsockopt SCTP_PEER_ADDR_PARAMS (link MTU " +
                               std::to_string(params.link_mtu) + "): " + errno_text(e));
        subscribe(so_);
        if (locals.empty()) {
            sockaddr_in any{};
            any.sin_family = AF_INET;
            any.sin_addr.s_addr = htonl(INADDR_ANY);
            any.sin_port = htons(port_);
            if (usrsctp_bind(so_, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0)
                throw sctpm::Error("iwarp adaptation: cannot bind SCTP port " + std::to_string(port_) + ": " +
                                   errno_text(errno));
        }
        // The first address by bind, the others added: every association this endpoint starts
        // or accepts lists them all (INIT / INIT-ACK), so it is multihomed, and uses CMT if the
        // stack's default says so (the MPI socket's settings, applied when the stack started).
        for (size_t i = 0; i < locals.size(); i++) {
            reinterpret_cast<sockaddr_in*>(&locals[i])->sin_port = htons(port_); // same offset for IPv6
            sockaddr* a = reinterpret_cast<sockaddr*>(&locals[i]);
            if ((i == 0 ? usrsctp_bind(so_, a, sockaddr_len(locals[i]))
                        : usrsctp_bindx(so_, a, 1, SCTP_BINDX_ADD_ADDR)) != 0)
                throw sctpm::Error("iwarp adaptation: cannot bind " + cfg.bind_addresses[i] + " port " +
                                   std::to_string(port_) + ": " + errno_text(errno));
        }
        if (usrsctp_listen(so_, 1) != 0) throw sctpm::Error("iwarp adaptation: usrsctp_listen: " + errno_text(errno));
        usrsctp_set_upcall(so_, upcall_, arg_);
    } catch (...) {
        usrsctp_close(so_);
        if (reservation_fd_ >= 0) ::close(reservation_fd_);
        throw;
    }
}

DdpEndpoint::~DdpEndpoint() {
    usrsctp_set_upcall(so_, nullptr, nullptr);
    usrsctp_close(so_);
    if (reservation_fd_ >= 0) ::close(reservation_fd_);
}

uint32_t DdpEndpoint::connect(const std::string& address, uint16_t sctp_port, uint16_t udp_port) {
    sockaddr_storage peer;
    if (!parse_address(address, sctp_port, &peer))
        throw sctpm::Error("iwarp connect: '" + address + "' is not an IPv4 or IPv6 address");
    // The remote UDP port is copied into an association when it is created: set it right before.
    sctp_udpencaps encaps{};
    encaps.sue_address.ss_family = peer.ss_family;
    encaps.sue_assoc_id = SCTP_FUTURE_ASSOC;
    encaps.sue_port = htons(udp_port);
    set_option(so_, SCTP_REMOTE_UDP_ENCAPS_PORT, &encaps, sizeof encaps, "SCTP_REMOTE_UDP_ENCAPS_PORT");
    sctp_assoc_t id = 0;
    if (usrsctp_connectx(so_, reinterpret_cast<const sockaddr*>(&peer), 1, &id) != 0 && errno != EINPROGRESS)
        throw sctpm::Error("iwarp connect: cannot start an association to " + address + " port " +
                           std::to_string(sctp_port) + " (UDP " + std::to_string(udp_port) + "): " + errno_text(errno));
    return id;
}

void DdpEndpoint::peel(uint32_t assoc, std::vector<AssociationUp>& up, std::vector<AssociationFailed>& failed) {
    comm_up_.erase(assoc);
    struct socket* s = usrsctp_peeloff(so_, assoc);
    if (!s) {
        failed.push_back({assoc, "usrsctp_peeloff failed: " + errno_text(errno)});
        return;
    }
    try {
        up.push_back({assoc, std::make_unique<SctpLlp>(s, cfg_, family_, upcall_, arg_)});
    } catch (const sctpm::Error& e) {
        failed.push_back({assoc, e.what()});
    }
}

void DdpEndpoint::poll(std::vector<AssociationUp>& up, std::vector<AssociationFailed>& failed) {
    for (int budget = 0; budget < 256; ++budget) {
        uint8_t buf[1024];
        sctp_rcvinfo info{};
        socklen_t infolen = sizeof info;
        unsigned int infotype = 0;
        int flags = 0;
        ssize_t n = usrsctp_recvv(so_, buf, sizeof buf, nullptr, nullptr, &info, &infolen, &infotype, &flags);
        if (n <= 0) return;
        if (!(flags & MSG_NOTIFICATION)) {
            // Data on the endpoint socket: its association was never announced as DDP (we peel
            // off as soon as it is), so the peer does not speak RFC 5043.
            if (infotype == SCTP_RECVV_RCVINFO) {
                comm_up_.erase(info.rcv_assoc_id);
                failed.push_back({info.rcv_assoc_id,
                                  "peer sent data without announcing the DDP adaptation layer (RFC 5043 §11.1)" +
                                      abort(info.rcv_assoc_id, "not DDP")});
            }
            continue;
        }
        auto* sn = reinterpret_cast<const sctp_notification*>(buf);
        switch (sn->sn_header.sn_type) {
        case SCTP_ASSOC_CHANGE: {
            const auto& ac = sn->sn_assoc_change;
            if (ac.sac_state == SCTP_COMM_UP || ac.sac_state == SCTP_RESTART) {
                comm_up_[ac.sac_assoc_id] = true; // its adaptation indication follows (or never comes)
            } else if (ac.sac_state == SCTP_COMM_LOST || ac.sac_state == SCTP_CANT_STR_ASSOC ||
                       ac.sac_state == SCTP_SHUTDOWN_COMP) {
                comm_up_.erase(ac.sac_assoc_id);
                failed.push_back({ac.sac_assoc_id, ac.sac_state == SCTP_CANT_STR_ASSOC
                                                        ? "association could not be started (peer unreachable?)"
                                                        : "association ended before it was used"});
            }
            break;
        }
        case SCTP_ADAPTATION_INDICATION: {
            const auto& ai = sn->sn_adaptation_event;
            if (adaptation_is_ddp(ai.sai_adaptation_ind)) {
                peel(ai.sai_assoc_id, up, failed);
            } else {
                comm_up_.erase(ai.sai_assoc_id);
                failed.push_back({ai.sai_assoc_id, "peer announced adaptation layer " +
                                                       std::to_string(ai.sai_adaptation_ind) +
                                                       ", not DDP (1) (RFC 5043 §11.1)" +
                                                       abort(ai.sai_assoc_id, "not DDP")});
            }
            break;
        }
        default: break;
        }
    }
}

std::unique_ptr<SctpLlp> DdpEndpoint::adopt(struct socket* one_to_many, uint32_t assoc) {
    struct socket* s = usrsctp_peeloff(one_to_many, assoc);
    if (!s) throw sctpm::Error("iwarp adopt: usrsctp_peeloff of association " + std::to_string(assoc) + ": " +
                               errno_text(errno));
    return std::make_unique<SctpLlp>(s, cfg_, family_, upcall_, arg_);
}

std::unique_ptr<SctpLlp> DdpEndpoint::adopt(struct socket* one_to_one) {
    return std::make_unique<SctpLlp>(one_to_one, cfg_, family_, upcall_, arg_);
}

} // namespace iwarp
