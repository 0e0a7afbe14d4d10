// SPDX-License-Identifier: BSD-3-Clause
// Interoperability of our own SCTP engine (src/sctp/, issue 48 item 4b, the slice's part) with
// usrsctp, the reference, in one process over UDP on 127.0.0.1: usrsctp runs its own threads
// behind a one-to-many socket (as src/endpoint.cpp sets it up: SOCK_SEQPACKET, UDP encapsulation
// with SCTP_REMOTE_UDP_ENCAPS_PORT naming the engine's UDP port), the engine runs on the test's
// thread through its UDP I/O (src/sctp/udp_io.hpp). Cases, each in both roles (usrsctp connects
// to the engine, the engine connects to usrsctp):
//   - data both ways: messages of 1 B, 1000 B, 64 KiB and 1 MiB on four streams, every byte
//     checked, and per-stream order (each stream's k-th message must be the k-th sent on it);
//   - a graceful shutdown begun by either side is seen by the other, after the data queued
//     before it;
//   - an ABORT from either side is seen by the other, with its cause;
// a receiver whose application stops reading closes its window and the sender waits (probing)
// and resumes (both directions); unordered messages both ways;
// both connecting at once (INIT collision) makes one association that carries data; a restart of
// either side (it lost its state and connects again) is taken as one, and data flows after it;
// and the engine's packets larger than usrsctp's own MTU (9000, 65000 bytes) are taken whole.
// usrsctp computes and checks checksums here (sctp_no_csum_on_loopback off: with it on, as the
// transport runs, usrsctp leaves the checksum of a 127/8 packet between equal addresses out).
// A failing case prints the engine's last packets (chunks and hex); INTEROP_TRACE=1 prints all.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <unistd.h>
#include <usrsctp.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "packet_trace.hpp"
#include "sctp/engine.hpp"
#include "sctp/udp_io.hpp"
#include "stack.hpp"

namespace sc = sctpm::sctp;

namespace {

constexpr int64_t kPhaseTimeoutUs = 30'000'000; // a bound against hangs, not a timing assertion
const uint16_t kStreams[] = {0, 1, 2, 5};
const size_t kSizes[] = {1, 1000, 65536, 1u << 20};
constexpr int kPerStream = 8; // two of each size per stream and direction

// ---- the usrsctp side ------------------------------------------------------------------------

uint16_t usrsctp_udp_port() {
    static const uint16_t port = [] {
        const uint16_t p = sctpm::probe_free_udp_port();
        usrsctp_init(p, nullptr, nullptr);
        // Real checksums both ways (see the header); INTEROP_LOOPBACK_NO_CSUM=1 keeps usrsctp's
        // default (and the transport's): none on 127/8 between equal addresses.
        const char* keep = std::getenv("INTEROP_LOOPBACK_NO_CSUM");
        if (!(keep && *keep == '1'))
            usrsctp_sysctl_set_sctp_no_csum_on_loopback(0);
        usrsctp_sysctl_set_sctp_rto_min_default(100);
        usrsctp_sysctl_set_sctp_rto_initial_default(300);
        usrsctp_sysctl_set_sctp_init_rto_max_default(1000);
        usrsctp_sysctl_set_sctp_rto_max_default(1000);
        return p;
    }();
    return port;
}

uint16_t next_sctp_port() {
    static std::atomic<uint16_t> next{7100};
    return next++;
}

struct Message {
    uint16_t stream;
    std::vector<uint8_t> bytes;
    bool unordered = false;
};

// One one-to-many usrsctp socket on 127.0.0.1 with one association of interest.
class UsrsctpPeer {
public:
    explicit UsrsctpPeer(uint16_t sctp_port) : port_(sctp_port), buf_(2u << 20) { open(); }
    ~UsrsctpPeer() {
        if (so_)
            usrsctp_close(so_);
    }
    UsrsctpPeer(const UsrsctpPeer&) = delete;
    UsrsctpPeer& operator=(const UsrsctpPeer&) = delete;

    // Loses every association at once: the socket closes with SO_LINGER 0 (an ABORT goes out,
    // which a test may keep from its peer to make the loss silent), and a new socket takes the
    // same SCTP port with no state, as a process that crashed and started again.
    void reopen() {
        linger l{1, 0};
        set(SOL_SOCKET, SO_LINGER, &l, sizeof l);
        usrsctp_close(so_);
        so_ = nullptr;
        assoc = 0;
        up = shutdown_event = shutdown_comp = comm_lost = cant_start = restarted = false;
        lost_info.clear();
        log += "(reopened) ";
        messages.clear();
        partial_.clear();
        for (int attempt = 0;; ++attempt) { // the old endpoint may hold the port for a moment
            try {
                open();
                return;
            } catch (const std::exception&) {
                if (so_)
                    usrsctp_close(so_);
                so_ = nullptr;
                if (attempt == 50)
                    throw;
                usleep(10'000);
            }
        }
    }

private:
    void open() {
        usrsctp_udp_port();
        so_ = usrsctp_socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP, nullptr, nullptr, 0, nullptr);
        if (!so_)
            throw std::runtime_error(std::string("usrsctp_socket: ") + std::strerror(errno));
        usrsctp_set_non_blocking(so_, 1);
        const int on = 1, bufsize = 8 << 20;
        set(IPPROTO_SCTP, SCTP_NODELAY, &on, sizeof on);
        set(IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof on);
        set(SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof bufsize);
        set(SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof bufsize);
        sctp_initmsg init{};
        init.sinit_num_ostreams = 16;
        init.sinit_max_instreams = 16;
        init.sinit_max_attempts = 8;
        set(IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof init);
        for (uint16_t t : {SCTP_ASSOC_CHANGE, SCTP_SHUTDOWN_EVENT, SCTP_REMOTE_ERROR, SCTP_SEND_FAILED_EVENT}) {
            sctp_event ev{};
            ev.se_assoc_id = SCTP_FUTURE_ASSOC;
            ev.se_type = t;
            ev.se_on = 1;
            set(IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof ev);
        }
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port_);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (usrsctp_bind(so_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("usrsctp_bind 127.0.0.1:" + std::to_string(port_) + ": " + std::strerror(errno));
        if (usrsctp_listen(so_, 1) != 0)
            throw std::runtime_error(std::string("usrsctp_listen: ") + std::strerror(errno));
    }

public:
    uint16_t sctp_port() const { return port_; }

    void connect(uint16_t udp_port, uint16_t sctp_port) {
        sctp_udpencaps encaps{};
        encaps.sue_address.ss_family = AF_INET;
        encaps.sue_assoc_id = SCTP_FUTURE_ASSOC;
        encaps.sue_port = htons(udp_port);
        set(IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &encaps, sizeof encaps);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(sctp_port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sctp_assoc_t id = 0;
        if (usrsctp_connectx(so_, reinterpret_cast<sockaddr*>(&a), 1, &id) != 0 && errno != EINPROGRESS)
            throw std::runtime_error(std::string("usrsctp_connectx: ") + std::strerror(errno));
        assoc = id;
    }

    // Reads all that is ready: messages (whole, on MSG_EOR) and notifications. True if anything came.
    bool poll() {
        bool any = false;
        for (;;) {
            sctp_rcvinfo info{};
            socklen_t infolen = sizeof info, fromlen = sizeof(sockaddr_in);
            sockaddr_in from{};
            unsigned infotype = 0;
            int flags = 0;
            const ssize_t n = usrsctp_recvv(so_, buf_.data(), buf_.size(), reinterpret_cast<sockaddr*>(&from), &fromlen,
                                            &info, &infolen, &infotype, &flags);
            if (n < 0)
                return any;
            any = true;
            if (flags & MSG_NOTIFICATION) {
                notification(buf_.data(), size_t(n));
                continue;
            }
            if (infotype == SCTP_RECVV_RCVINFO) {
                if (!assoc)
                    assoc = info.rcv_assoc_id;
                partial_stream_ = info.rcv_sid;
                partial_unordered_ = (info.rcv_flags & SCTP_UNORDERED) != 0;
            }
            partial_.insert(partial_.end(), buf_.begin(), buf_.begin() + n);
            if (flags & MSG_EOR) {
                messages.push_back({partial_stream_, std::move(partial_), partial_unordered_});
                partial_.clear();
            }
        }
    }

    // 0, -EWOULDBLOCK (the send buffer is full: try again) or -errno.
    int send(uint16_t stream, const uint8_t* p, size_t n, bool unordered = false) {
        sctp_sndinfo info{};
        info.snd_sid = stream;
        info.snd_flags = unordered ? SCTP_UNORDERED : 0;
        info.snd_assoc_id = assoc;
        if (usrsctp_sendv(so_, p, n, nullptr, 0, &info, sizeof info, SCTP_SENDV_SNDINFO, 0) >= 0)
            return 0;
        return errno == EAGAIN ? -EWOULDBLOCK : -errno;
    }
    int shutdown() { return flags_only(SCTP_EOF, ""); }
    int abort(const std::string& reason) { return flags_only(SCTP_ABORT, reason); }

    sctp_assoc_t assoc = 0;
    bool up = false, shutdown_event = false, shutdown_comp = false, comm_lost = false, cant_start = false,
         restarted = false;
    std::vector<uint8_t> lost_info; // sac_info of COMM_LOST: the ABORT chunk received, if any
    std::string log;                // every notification, for a failure's message
    std::vector<Message> messages;

private:
    void set(int level, int name, const void* v, socklen_t len) {
        if (usrsctp_setsockopt(so_, level, name, v, len) != 0)
            throw std::runtime_error("usrsctp_setsockopt " + std::to_string(name) + ": " + std::strerror(errno));
    }
    int flags_only(uint16_t flags, const std::string& data) {
        sctp_sndinfo info{};
        info.snd_flags = flags;
        info.snd_assoc_id = assoc;
        const char none = 0;
        if (usrsctp_sendv(so_, data.empty() ? &none : data.data(), data.size(), nullptr, 0, &info, sizeof info,
                          SCTP_SENDV_SNDINFO, 0) < 0)
            return -errno;
        return 0;
    }
    void notification(const uint8_t* p, size_t n) {
        sctp_notification note;
        std::memcpy(&note, p, std::min(n, sizeof note));
        switch (note.sn_header.sn_type) {
        case SCTP_ASSOC_CHANGE: {
            const auto& c = note.sn_assoc_change;
            log += "ASSOC_CHANGE state " + std::to_string(c.sac_state) + " error " + std::to_string(c.sac_error) + "; ";
            if (c.sac_state == SCTP_COMM_UP) {
                up = true;
                assoc = c.sac_assoc_id;
                outbound_streams = c.sac_outbound_streams;
            } else if (c.sac_state == SCTP_COMM_LOST) {
                comm_lost = true;
                const size_t head = offsetof(sctp_assoc_change, sac_info);
                if (n > head)
                    lost_info.assign(p + head, p + n);
            } else if (c.sac_state == SCTP_SHUTDOWN_COMP) {
                shutdown_comp = true;
            } else if (c.sac_state == SCTP_CANT_STR_ASSOC) {
                cant_start = true;
            } else if (c.sac_state == SCTP_RESTART) {
                restarted = true;
            }
            break;
        }
        case SCTP_SHUTDOWN_EVENT:
            shutdown_event = true;
            log += "SHUTDOWN_EVENT; ";
            break;
        case SCTP_REMOTE_ERROR:
            log += "REMOTE_ERROR cause " + std::to_string(ntohs(note.sn_remote_error.sre_error)) + "; ";
            break;
        case SCTP_SEND_FAILED_EVENT:
            log += "SEND_FAILED; ";
            break;
        default:
            log += "notification " + std::to_string(note.sn_header.sn_type) + "; ";
        }
    }

public:
    uint16_t outbound_streams = 0;

private:
    struct socket* so_ = nullptr;
    uint16_t port_;
    std::vector<uint8_t> buf_;
    std::vector<uint8_t> partial_;
    uint16_t partial_stream_ = 0;
    bool partial_unordered_ = false;
};

// ---- the engine side -------------------------------------------------------------------------

sc::UdpSocket::Options engine_socket(uint16_t port) {
    sc::UdpSocket::Options o;
    o.addr = "127.0.0.1";
    o.port = port;
    return o;
}

sc::Config engine_config(uint16_t port, uint32_t mtu) {
    sc::Config c;
    c.local_port = port;
    c.mtu = mtu; // by default MTU 1500 on the wire: 1 MiB is some 700 packets, fragmented and reassembled
    c.rto_initial = 300'000;
    c.rto_min = 100'000;
    c.rto_max = 1'000'000;
    return c;
}

class EngineSide {
public:
    // port 0: the kernel's choice (also the SCTP port); mtu: the largest SCTP packet the engine sends.
    explicit EngineSide(uint16_t port = 0, uint32_t mtu = 1472)
        : sock(engine_socket(port)),
          ep(engine_config(sock.port(), mtu), [](uint8_t* p, size_t n) { sc::fill_random(p, n); }), drv(ep, sock) {
        drv.set_tap(&interop::PacketTrace::tap, &trace);
        const char* v = std::getenv("INTEROP_TRACE");
        trace.set_verbose(v && *v == '1');
    }
    uint16_t port() const { return sock.port(); } // UDP port, also the SCTP port

    bool pump() {
        if (!taking) { // moves packets, leaves the events (and the data) in the engine
            const bool any = drv.input(sc::Time(sc::monotonic_us())) > 0;
            drv.output(sc::Time(sc::monotonic_us()));
            return any;
        }
        bool any = false;
        drv.pump([&](const sc::Event& ev) {
            any = true;
            on_event(ev);
        });
        return any;
    }
    bool taking = true; // false: the application takes no events (its receive window fills)

    sc::UdpSocket sock;
    sc::Endpoint ep;
    sc::EngineDriver drv;
    interop::PacketTrace trace{96};
    sc::AssocId assoc = sc::kNoAssoc;
    bool up = false, ended = false, lost = false, cant_start = false, space = false, restarted = false;
    std::string reason;
    std::vector<Message> messages;
    uint16_t outbound_streams = 0;

private:
    void on_event(const sc::Event& ev) {
        switch (ev.type) {
        case sc::EventType::data:
            messages.push_back({ev.stream, std::vector<uint8_t>(ev.data.begin(), ev.data.end()), ev.unordered});
            break;
        case sc::EventType::assoc_up:
            up = true;
            assoc = ev.assoc;
            outbound_streams = ev.outbound_streams;
            break;
        case sc::EventType::send_space:
            space = true;
            break;
        case sc::EventType::assoc_restart:
            restarted = true;
            break;
        case sc::EventType::shutdown_complete:
            ended = true;
            reason = ev.reason;
            break;
        case sc::EventType::assoc_lost:
            lost = true;
            reason = ev.reason;
            break;
        case sc::EventType::cant_start:
            cant_start = true;
            reason = ev.reason;
            break;
        case sc::EventType::path_change: // one path on loopback: nothing to check here
            break;
        }
    }
};

// ---- the pair --------------------------------------------------------------------------------

enum class Role { usrsctp_connects, engine_connects };

std::string role_name(Role r) { return r == Role::usrsctp_connects ? "usrsctp connects" : "engine connects"; }

class Pair {
public:
    Pair() : usr(next_sctp_port()) {}

    // Runs both sides until pred() holds; false after kPhaseTimeoutUs without it.
    bool run(const std::function<bool()>& pred, int64_t timeout_us = kPhaseTimeoutUs) {
        const uint64_t start = sc::monotonic_us();
        for (;;) {
            bool any = eng->pump();
            if (usr_reading)
                any |= usr.poll();
            if (pred())
                return true;
            if (int64_t(sc::monotonic_us() - start) > timeout_us)
                return false;
            if (!any)
                eng->drv.wait(1000); // usrsctp's threads work meanwhile; its socket is polled every ms
        }
    }

    // Both sides see the association up.
    ::testing::AssertionResult establish(Role role) {
        if (role == Role::usrsctp_connects) {
            usr.connect(eng->port(), eng->port());
        } else {
            const auto a = sc::Address::parse("127.0.0.1", usrsctp_udp_port());
            eng->assoc = eng->ep.connect(std::span(&*a, 1), usr.sctp_port(), sc::Time(sc::monotonic_us()));
            if (eng->assoc == sc::kNoAssoc)
                return ::testing::AssertionFailure() << "Endpoint::connect refused 127.0.0.1";
        }
        const bool settled = run([&] {
            return (eng->up && usr.up) || eng->cant_start || usr.cant_start || eng->lost || usr.comm_lost;
        });
        if (!settled || !eng->up || !usr.up)
            return ::testing::AssertionFailure() << "no association (" << role_name(role) << "): " << state();
        return ::testing::AssertionSuccess();
    }

    std::string state() const {
        return "engine up=" + std::to_string(eng->up) + " ended=" + std::to_string(eng->ended) +
               " lost=" + std::to_string(eng->lost) + " cant_start=" + std::to_string(eng->cant_start) +
               " reason='" + eng->reason + "' drops: bad_checksum=" + std::to_string(eng->ep.stats().bad_checksum) +
               " malformed=" + std::to_string(eng->ep.stats().malformed) + " bad_vtag=" +
               std::to_string(eng->ep.stats().bad_vtag) + " ootb=" + std::to_string(eng->ep.stats().ootb) +
               " bad_cookie=" + std::to_string(eng->ep.stats().bad_cookie) + " last_drop='" +
               eng->ep.stats().last_drop + "'; usrsctp: " + usr.log + "\nlast packets of the engine:\n" +
               eng->trace.dump();
    }

    UsrsctpPeer usr;
    std::unique_ptr<EngineSide> eng = std::make_unique<EngineSide>();
    bool usr_reading = true; // false: the usrsctp application reads nothing (its window fills)
};

// The k-th message on `stream` from side `from` (0: engine, 1: usrsctp): its size and bytes.
std::vector<uint8_t> message_bytes(int from, uint16_t stream, int k) {
    std::vector<uint8_t> v(kSizes[k % 4]);
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t(from) * 1000003 + uint64_t(stream) * 1009 + uint64_t(k) + 1);
    for (auto& b : v) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b = uint8_t(x >> 24);
    }
    return v;
}

// Checks the messages one side received from `from`: per stream, the k-th must be message k.
::testing::AssertionResult check_messages(const std::vector<Message>& got, int from) {
    std::map<uint16_t, int> next;
    for (size_t i = 0; i < got.size(); ++i) {
        const Message& m = got[i];
        const int k = next[m.stream]++;
        const auto want = message_bytes(from, m.stream, k);
        if (m.bytes.size() != want.size())
            return ::testing::AssertionFailure() << "message " << i << " on stream " << m.stream << " (its #" << k
                                                 << "): " << m.bytes.size() << " bytes, sent " << want.size();
        if (m.bytes != want) {
            size_t at = 0;
            while (m.bytes[at] == want[at])
                ++at;
            return ::testing::AssertionFailure() << "message " << i << " on stream " << m.stream << " (its #" << k
                                                 << ", " << want.size() << " bytes) differs from byte " << at;
        }
    }
    for (uint16_t s : kStreams)
        if (next[s] != kPerStream)
            return ::testing::AssertionFailure() << "stream " << s << ": " << next[s] << " of " << kPerStream
                                                 << " messages";
    return ::testing::AssertionSuccess();
}

// Both sides send kPerStream messages on each stream (streams taking turns), all at once.
void exchange_data(Pair& p) {
    struct Next {
        size_t i = 0; // index into the round-robin order
    } eng_next, usr_next;
    const size_t total = std::size(kStreams) * kPerStream;
    auto item = [](size_t i, uint16_t* stream, int* k) {
        *stream = kStreams[i % std::size(kStreams)];
        *k = int(i / std::size(kStreams));
    };
    std::vector<uint8_t> eng_msg, usr_msg;
    auto pending = [&] {
        // the engine's sends
        while (eng_next.i < total) {
            uint16_t s;
            int k;
            item(eng_next.i, &s, &k);
            if (eng_msg.empty())
                eng_msg = message_bytes(0, s, k);
            iovec v{eng_msg.data(), eng_msg.size()};
            const int rc = p.eng->ep.send(p.eng->assoc, s, &v, 1, false, sc::Time(sc::monotonic_us()));
            if (rc == -EWOULDBLOCK || rc == -EAGAIN)
                break;
            if (rc != 0) {
                ADD_FAILURE() << "engine send: " << std::strerror(-rc);
                return true;
            }
            eng_msg.clear();
            ++eng_next.i;
        }
        // usrsctp's sends
        while (usr_next.i < total) {
            uint16_t s;
            int k;
            item(usr_next.i, &s, &k);
            if (usr_msg.empty())
                usr_msg = message_bytes(1, s, k);
            const int rc = p.usr.send(s, usr_msg.data(), usr_msg.size());
            if (rc == -EWOULDBLOCK)
                break;
            if (rc != 0) {
                ADD_FAILURE() << "usrsctp send: " << std::strerror(-rc);
                return true;
            }
            usr_msg.clear();
            ++usr_next.i;
        }
        return eng_next.i == total && usr_next.i == total && p.eng->messages.size() == total &&
               p.usr.messages.size() == total;
    };
    const bool done = p.run([&] { return pending() || p.eng->lost || p.usr.comm_lost; });
    EXPECT_TRUE(done && !p.eng->lost && !p.usr.comm_lost)
        << "data exchange stopped: engine sent " << eng_next.i << "/" << total << " received "
        << p.eng->messages.size() << "; usrsctp sent " << usr_next.i << "/" << total << " received "
        << p.usr.messages.size() << "\n"
        << p.state();
    EXPECT_TRUE(check_messages(p.usr.messages, 0)) << "usrsctp received from the engine";
    EXPECT_TRUE(check_messages(p.eng->messages, 1)) << "the engine received from usrsctp";
}

class Interop : public ::testing::TestWithParam<Role> {};

std::string param_name(const ::testing::TestParamInfo<Role>& info) {
    return info.param == Role::usrsctp_connects ? "UsrsctpConnects" : "EngineConnects";
}

TEST_P(Interop, SetupAgreesOnStreams) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    EXPECT_EQ(p.usr.outbound_streams, 16); // its own 16; the engine accepts 1024
    EXPECT_EQ(p.eng->outbound_streams, 16) << "the engine must lower its outbound streams to usrsctp's MIS";
}

TEST_P(Interop, MessagesBothWaysEveryByteAndStreamOrder) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    exchange_data(p);
}

TEST_P(Interop, ShutdownByTheEngineIsSeenByUsrsctpAfterItsData) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    // A message queued right before the shutdown is still delivered (RFC 9260 9.2).
    const auto last = message_bytes(0, 1, 3); // 1 MiB
    iovec v{const_cast<uint8_t*>(last.data()), last.size()};
    ASSERT_EQ(0, p.eng->ep.send(p.eng->assoc, 1, &v, 1, false, sc::Time(sc::monotonic_us())));
    ASSERT_EQ(0, p.eng->ep.shutdown(p.eng->assoc, sc::Time(sc::monotonic_us())));
    EXPECT_TRUE(p.run([&] { return (p.eng->ended && p.usr.shutdown_comp) || p.eng->lost || p.usr.comm_lost; }))
        << p.state();
    EXPECT_TRUE(p.eng->ended) << p.state();
    EXPECT_TRUE(p.usr.shutdown_event) << "usrsctp saw no SHUTDOWN: " << p.state();
    EXPECT_TRUE(p.usr.shutdown_comp) << p.state();
    EXPECT_FALSE(p.usr.comm_lost || p.eng->lost) << p.state();
    ASSERT_EQ(p.usr.messages.size(), 1u) << p.state();
    EXPECT_EQ(p.usr.messages[0].stream, 1);
    EXPECT_TRUE(p.usr.messages[0].bytes == last) << "the message sent before the shutdown differs";
}

TEST_P(Interop, ShutdownByUsrsctpIsSeenByTheEngineAfterItsData) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    const auto last = message_bytes(1, 2, 3); // 1 MiB
    ASSERT_EQ(0, p.usr.send(2, last.data(), last.size()));
    ASSERT_EQ(0, p.usr.shutdown());
    EXPECT_TRUE(p.run([&] { return (p.eng->ended && p.usr.shutdown_comp) || p.eng->lost || p.usr.comm_lost; }))
        << p.state();
    EXPECT_TRUE(p.eng->ended) << p.state();
    EXPECT_TRUE(p.usr.shutdown_comp) << p.state();
    EXPECT_FALSE(p.usr.comm_lost || p.eng->lost) << p.state();
    ASSERT_EQ(p.eng->messages.size(), 1u) << p.state();
    EXPECT_EQ(p.eng->messages[0].stream, 2);
    EXPECT_TRUE(p.eng->messages[0].bytes == last) << "the message sent before the shutdown differs";
    // The association is gone: a send on it is refused.
    const uint8_t one = 1;
    iovec v{const_cast<uint8_t*>(&one), 1};
    EXPECT_NE(0, p.eng->ep.send(p.eng->assoc, 0, &v, 1, false, sc::Time(sc::monotonic_us())));
}

TEST_P(Interop, AbortByTheEngineReachesUsrsctpWithItsCause) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    const std::string why = "engine-side abort 48";
    ASSERT_EQ(0, p.eng->ep.abort(p.eng->assoc, why, sc::Time(sc::monotonic_us())));
    EXPECT_TRUE(p.run([&] { return p.eng->lost && p.usr.comm_lost; })) << p.state();
    EXPECT_TRUE(p.eng->lost) << "the aborting side reports assoc_lost too";
    ASSERT_TRUE(p.usr.comm_lost) << p.state();
    // usrsctp hands the ABORT chunk it received in sac_info: User-Initiated Abort (cause 12)
    // carrying the reason.
    const std::string info(p.usr.lost_info.begin(), p.usr.lost_info.end());
    EXPECT_NE(info.find(why), std::string::npos)
        << "usrsctp's COMM_LOST holds no ABORT with the reason: "
        << interop::hex(p.usr.lost_info.data(), p.usr.lost_info.size());
    if (p.usr.lost_info.size() >= 8) {
        EXPECT_EQ(p.usr.lost_info[0], 6) << "an ABORT chunk";
        EXPECT_EQ((p.usr.lost_info[4] << 8) | p.usr.lost_info[5], 12) << "cause User-Initiated Abort";
    }
}

TEST_P(Interop, AbortByUsrsctpReachesTheEngineWithItsCause) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    const std::string why = "usrsctp-side abort 48";
    ASSERT_EQ(0, p.usr.abort(why));
    EXPECT_TRUE(p.run([&] { return p.eng->lost && p.usr.comm_lost; })) << p.state();
    EXPECT_TRUE(p.usr.comm_lost) << "the aborting side reports COMM_LOST too: " << p.usr.log;
    ASSERT_TRUE(p.eng->lost) << p.state();
    EXPECT_NE(p.eng->reason.find(why), std::string::npos) << "the engine's reason: '" << p.eng->reason << "'";
    const uint8_t one = 1;
    iovec v{const_cast<uint8_t*>(&one), 1};
    EXPECT_NE(0, p.eng->ep.send(p.eng->assoc, 0, &v, 1, false, sc::Time(sc::monotonic_us())));
}

// Sends `count` messages of `size` bytes on stream 3 from one side while the other side's
// application takes nothing until the sender is stuck (its receive window closes: the sender must
// probe it, RFC 9260 6.1 rule A), then takes everything: all must arrive, whole and in order.
void stalled_receiver(Pair& p, bool engine_sends) {
    const size_t size = 256 * 1024;
    const int count = 64; // 16 MiB: four times the engine's window, twice usrsctp's buffer
    auto bytes = [&](int k) {
        std::vector<uint8_t> v(size);
        for (size_t i = 0; i < size; ++i)
            v[i] = uint8_t((i * 131 + size_t(k) * 7 + (i >> 9)) ^ uint8_t(k));
        return v;
    };
    if (engine_sends)
        p.usr_reading = false;
    else
        p.eng->taking = false;
    int sent = 0;
    auto send_more = [&] {
        while (sent < count) {
            const auto v = bytes(sent);
            int rc;
            if (engine_sends) {
                iovec io{const_cast<uint8_t*>(v.data()), v.size()};
                rc = p.eng->ep.send(p.eng->assoc, 3, &io, 1, false, sc::Time(sc::monotonic_us()));
            } else {
                rc = p.usr.send(3, v.data(), v.size());
            }
            if (rc == -EWOULDBLOCK || rc == -EAGAIN)
                return false;
            if (rc != 0) {
                ADD_FAILURE() << "send: " << std::strerror(-rc);
                return true;
            }
            ++sent;
        }
        return false;
    };
    // Phase 1: the receiver takes nothing; run until the sender has been blocked for 300 ms
    // (then the window is surely closed and probing begins).
    uint64_t blocked_since = 0;
    p.run([&] {
        send_more();
        if (sent == count)
            return true; // all fit in the buffers (no stall): still a valid pass of phase 2
        if (!blocked_since)
            blocked_since = sc::monotonic_us();
        return sc::monotonic_us() - blocked_since > 300'000;
    });
    const auto* got = engine_sends ? &p.usr.messages : &p.eng->messages;
    EXPECT_TRUE(got->empty()) << "the stalled receiver took nothing";
    if (engine_sends) {
        const auto info = p.eng->ep.info(p.eng->assoc);
        ASSERT_TRUE(info.has_value());
        ::testing::Test::RecordProperty("engine_peer_rwnd_when_stalled", int(info->peer_rwnd));
        ::testing::Test::RecordProperty("engine_t3_when_stalled", int(info->t3_expiries));
    }
    // Phase 2: the receiver reads again.
    p.usr_reading = true;
    p.eng->taking = true;
    EXPECT_TRUE(p.run([&] {
        send_more();
        return (sent == count && int(got->size()) == count) || p.eng->lost || p.usr.comm_lost;
    })) << "sent " << sent << " received " << got->size() << "\n" << p.state();
    EXPECT_FALSE(p.eng->lost || p.usr.comm_lost) << p.state();
    ASSERT_EQ(int(got->size()), count) << p.state();
    for (int k = 0; k < count; ++k) {
        ASSERT_EQ((*got)[k].stream, 3);
        ASSERT_TRUE((*got)[k].bytes == bytes(k)) << "message " << k << " differs";
    }
}

TEST_P(Interop, EngineWaitsForAStalledUsrsctpReaderAndResumes) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    stalled_receiver(p, true);
}

TEST_P(Interop, UsrsctpWaitsForAStalledEngineReaderAndResumes) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    stalled_receiver(p, false);
}

// Unordered messages (U bit) both ways: each arrives whole and marked unordered.
TEST_P(Interop, UnorderedMessagesBothWays) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    const int count = 6;
    for (int k = 0; k < count; ++k) {
        const auto e = message_bytes(0, 4, k), u = message_bytes(1, 4, k);
        iovec io{const_cast<uint8_t*>(e.data()), e.size()};
        ASSERT_EQ(0, p.eng->ep.send(p.eng->assoc, 4, &io, 1, true, sc::Time(sc::monotonic_us())));
        int rc;
        while ((rc = p.usr.send(4, u.data(), u.size(), true)) == -EWOULDBLOCK)
            p.run([] { return true; });
        ASSERT_EQ(rc, 0);
    }
    EXPECT_TRUE(p.run([&] { return (int(p.eng->messages.size()) == count && int(p.usr.messages.size()) == count) ||
                                   p.eng->lost || p.usr.comm_lost; }))
        << p.state();
    // Any order: match each received message to one sent.
    for (int side = 0; side < 2; ++side) {
        const auto& got = side == 0 ? p.usr.messages : p.eng->messages;
        ASSERT_EQ(int(got.size()), count);
        std::vector<bool> seen(count);
        for (const auto& m : got) {
            EXPECT_TRUE(m.unordered) << (side == 0 ? "usrsctp" : "the engine") << " got an ordered message";
            int k = 0;
            while (k < count && (seen[k] || m.bytes != message_bytes(side, 4, k)))
                ++k;
            ASSERT_LT(k, count) << "a message that was not sent (" << m.bytes.size() << " bytes)";
            seen[k] = true;
        }
    }
}

// The engine loses its state silently (a process that crashed: nothing is sent) and a new
// engine on the same UDP and SCTP port connects again: usrsctp sees a restart of its peer
// (RFC 9260 5.2.4 action A, SCTP_RESTART), and the association carries data again.
TEST_P(Interop, EngineRestartIsSeenByUsrsctp) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    const uint16_t port = p.eng->port();
    p.eng.reset(); // no SHUTDOWN, no ABORT: sans-I/O, the engine sends only what is pulled
    p.eng = std::make_unique<EngineSide>(port);
    const auto a = sc::Address::parse("127.0.0.1", usrsctp_udp_port());
    p.eng->assoc = p.eng->ep.connect(std::span(&*a, 1), p.usr.sctp_port(), sc::Time(sc::monotonic_us()));
    ASSERT_TRUE(p.run([&] { return (p.eng->up && p.usr.restarted) || p.eng->cant_start || p.usr.comm_lost; }))
        << p.state();
    EXPECT_TRUE(p.eng->up) << p.state();
    EXPECT_TRUE(p.usr.restarted) << "usrsctp saw no restart: " << p.state();
    EXPECT_FALSE(p.usr.comm_lost) << p.state();
    exchange_data(p);
}

// usrsctp loses its state (its ABORT is kept from the engine) and connects again from the same
// port: the engine must take it as a restart of its peer (RFC 9260 5.2.4 action A): the same
// association id, an assoc_restart event, and data both ways afterwards.
TEST_P(Interop, UsrsctpRestartIsSeenByTheEngine) {
    Pair p;
    ASSERT_TRUE(p.establish(GetParam()));
    const sc::AssocId before = p.eng->assoc;
    p.usr.reopen();
    // Keep usrsctp's ABORT from the engine: read and drop what arrives for 100 ms.
    const uint64_t until = sc::monotonic_us() + 100'000;
    int dropped = 0;
    while (sc::monotonic_us() < until)
        if (p.eng->sock.wait_readable(10'000))
            p.eng->sock.receive([&](const sockaddr_in&, const sockaddr_in&, const uint8_t* b, size_t n) {
                ++dropped;
                p.eng->trace.add(true, sc::Address{}, b, n); // in the trace, marked as from nowhere
            });
    EXPECT_GE(dropped, 1) << "usrsctp's ABORT at the abortive close";
    p.usr.connect(p.eng->port(), p.eng->port());
    ASSERT_TRUE(p.run([&] { return (p.usr.up && p.eng->restarted) || p.usr.cant_start || p.eng->lost; }))
        << p.state();
    EXPECT_TRUE(p.eng->restarted) << "the engine saw no restart: " << p.state();
    EXPECT_FALSE(p.eng->lost) << p.state();
    EXPECT_EQ(p.eng->assoc, before) << "a restart keeps the association's id";
    EXPECT_EQ(p.eng->ep.association_count(), 1u);
    p.eng->messages.clear();
    exchange_data(p);
}

// The engine sends packets larger than usrsctp's own path MTU (9000 and 65000 bytes: jumbo
// frames, loopback): usrsctp takes them whole (its reads fit one datagram), data both ways.
TEST(InteropLargePackets, EnginePacketsOf9000And65000Bytes) {
    for (uint32_t mtu : {8972u, 65000u}) {
        SCOPED_TRACE("engine mtu " + std::to_string(mtu));
        Pair p;
        p.eng = std::make_unique<EngineSide>(0, mtu);
        ASSERT_TRUE(p.establish(Role::engine_connects));
        exchange_data(p);
    }
}

// Both connect at the same moment (RFC 9260 5.2.1/5.2.4: INIT collision): one association,
// up on both sides, that carries data both ways.
TEST(InteropCollision, BothConnectAtOnceMakeOneAssociation) {
    Pair p;
    p.usr.connect(p.eng->port(), p.eng->port());
    const auto a = sc::Address::parse("127.0.0.1", usrsctp_udp_port());
    const sc::AssocId id = p.eng->ep.connect(std::span(&*a, 1), p.usr.sctp_port(), sc::Time(sc::monotonic_us()));
    ASSERT_NE(id, sc::kNoAssoc);
    ASSERT_TRUE(p.run([&] { return (p.eng->up && p.usr.up) || p.eng->cant_start || p.usr.cant_start || p.eng->lost; }))
        << p.state();
    ASSERT_TRUE(p.eng->up && p.usr.up) << p.state();
    EXPECT_EQ(p.eng->assoc, id) << "the engine's own attempt becomes the association";
    EXPECT_EQ(p.eng->ep.association_count(), 1u) << p.state();
    exchange_data(p);
    EXPECT_FALSE(p.eng->restarted || p.usr.restarted) << "a collision is no restart: " << p.state();
}

INSTANTIATE_TEST_SUITE_P(Roles, Interop, ::testing::Values(Role::usrsctp_connects, Role::engine_connects), param_name);

} // namespace
