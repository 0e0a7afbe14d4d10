// SPDX-License-Identifier: BSD-3-Clause
// A process outside an MPI job that attacks one of its ranks, knowing only what the network shows:
// the rank's addresses and ports (its business card without the key, as a hello carries it).
//
//   attacker <card> <attack> [count [rnic-sctp-port]]
//
//   impersonate   `count` associations, each saying hello as rank 0 of a process group and
//                 answering the challenge with a proof under a key of its own
//   t-hello       `count` associations, each opening every link it may (128) at once with a
//                 "T<tag>" hello (MPI_Comm_connect's), then sending a wrong proof on the first
//   pre-hello     `count` associations, each sending data frames and no hello until refused
//   garbage       `count` UDP datagrams of random bytes to the rank's UDP port
//   rnic-silent   `count` associations to the rank's RNIC (ch3:hybrid; its SCTP port is the last
//                 argument, the UDP port is the transport's), opened at once, announcing DDP and
//                 sending nothing, not even the Initiate RFC 5043 requires first
//   rnic-initiate `count` associations to the RNIC, each sending an Initiate whose private data is
//                 random bytes instead of a rank's identity and proof
//
// Prints one line per attack: what was sent and how many associations the rank refused (its
// ABORT, seen as the association's loss). Exits 0 once done; the job's own checks say whether
// the attack changed anything.
#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <usrsctp.h>
#include <vector>

#include "card.hpp"
#include "wire.hpp"
#include "endpoint.hpp"
#include "error.hpp"
#include "frame.hpp"
#include "hello_auth.hpp"
#include "settings.hpp"
#include "stack.hpp"

using namespace sctpm;

namespace {

std::string frame(FrameKind kind, uint8_t link, uint32_t seq, const std::string& payload) {
    FrameHeader h;
    h.kind = kind;
    h.flags = kFrameFirst | kFrameLast;
    h.link = link;
    h.seq = seq;
    h.frag_len = uint32_t(payload.size());
    h.total = payload.size();
    uint8_t hdr[kFrameHeaderSize];
    encode_frame_header(h, hdr);
    return std::string(reinterpret_cast<char*>(hdr), sizeof hdr) + payload;
}

std::string hello(uint8_t link, const std::string& nonce, const std::string& blob, const std::string& card) {
    return frame(FrameKind::hello, link, 0, format_hello({nonce, blob, card}));
}

// One association of ours to the victim, on an endpoint of its own (a new source port each).
class Assoc {
public:
    // Bound to the victim's first address: a local one, the attacker running on its host, and in
    // the same scope (usrsctp will not pair a loopback source with another destination).
    Assoc(const Settings& s, const Card& victim) : ep_(s, 0, {victim.addresses[0]}) {
        id_ = ep_.connect(victim.addresses, victim.sctp_port, victim.udp_port);
    }

    // Sends one SCTP message; false once the victim has refused the association.
    bool send(const std::string& bytes) {
        for (int i = 0; i < 5000; ++i) {
            const long rc = ep_.send(id_, 0, bytes.data(), bytes.size());
            if (rc == long(bytes.size()))
                return true;
            if (rc != -EWOULDBLOCK)
                return false;
            drain();
            usleep(1000);
        }
        return false;
    }

    // The payload of the victim's next frame of `kind` (empty after 5 s or once refused).
    std::string receive(FrameKind kind) {
        for (int i = 0; i < 5000 && !lost_; ++i) {
            std::string got = read_one(kind);
            if (!got.empty())
                return got;
            usleep(1000);
        }
        return "";
    }

    // Waits up to 5 s for the victim to end the association.
    bool refused() {
        for (int i = 0; i < 5000 && !lost_; ++i) {
            read_one(FrameKind::data);
            if (!lost_)
                usleep(1000);
        }
        return lost_;
    }

private:
    void drain() {
        while (!read_one(FrameKind::data).empty()) {
        }
    }

    std::string read_one(FrameKind kind) {
        const RecvResult r = ep_.recv(buf_.data(), buf_.size());
        if (r.n <= 0)
            return "";
        if (r.notification) {
            const auto* n = reinterpret_cast<const sctp_notification*>(buf_.data());
            if (n->sn_header.sn_type == SCTP_ASSOC_CHANGE &&
                (n->sn_assoc_change.sac_state == SCTP_COMM_LOST || n->sn_assoc_change.sac_state == SCTP_SHUTDOWN_COMP))
                lost_ = true;
            return "";
        }
        std::string why;
        auto h = decode_frame_header(buf_.data(), size_t(r.n), FrameLimits{}, &why);
        if (!h || h->kind != kind)
            return "";
        return std::string(reinterpret_cast<char*>(buf_.data()) + kFrameHeaderSize, h->frag_len);
    }

    Endpoint ep_;
    AssocId id_ = 0;
    bool lost_ = false;
    std::vector<uint8_t> buf_ = std::vector<uint8_t>(65536);
};

// Says hello on `link` as `blob` and answers the challenge under a key of our own. True if the
// victim challenged.
bool false_proof(Assoc& a, uint8_t link, const std::string& blob, const std::string& my_card) {
    const std::string nonce = random_bytes(kNonceBytes), key = random_bytes(kAuthKeyBytes);
    if (!a.send(hello(link, nonce, blob, my_card)))
        return false;
    const std::string challenge = a.receive(FrameKind::challenge);
    if (challenge.size() != kChallengeBytes)
        return false;
    const Digest mac = link_mac(AuthRole::opener, key, nonce, challenge.substr(0, kNonceBytes), blob);
    a.send(frame(FrameKind::proof, link, 0, std::string(reinterpret_cast<const char*>(mac.data()), mac.size())));
    return true;
}

// An association to the RNIC at `sctp_port` (one-to-one socket: the RNIC's side of RFC 5043),
// announcing DDP. Null if the stack refused the connect.
struct socket* ddp_association(const Card& victim, uint16_t sctp_port) {
    struct socket* so = usrsctp_socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP, nullptr, nullptr, 0, nullptr);
    if (!so)
        return nullptr;
    sctp_setadaptation ali{};
    ali.ssb_adaptation_ind = iwarp::kAdaptationIndicationDdp;
    sctp_udpencaps enc{};
    enc.sue_address.ss_family = AF_INET;
    enc.sue_port = htons(victim.udp_port);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(sctp_port);
    inet_pton(AF_INET, victim.addresses[0].c_str(), &to.sin_addr);
    if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, &ali, sizeof ali) != 0 ||
        usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_REMOTE_UDP_ENCAPS_PORT, &enc, sizeof enc) != 0 ||
        usrsctp_connect(so, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
        usrsctp_close(so);
        return nullptr;
    }
    return so;
}

// Reads until the RNIC ends the association (true) or the deadline passes (usrsctp has no
// SO_RCVTIMEO: the socket is polled); a Reject or Terminate it sends first is read and ignored.
bool rnic_refused(struct socket* so, std::chrono::steady_clock::time_point deadline) {
    usrsctp_set_non_blocking(so, 1);
    char buf[2048];
    while (std::chrono::steady_clock::now() < deadline) {
        sctp_rcvinfo info{};
        socklen_t infolen = sizeof info;
        unsigned infotype = 0;
        int flags = 0;
        const ssize_t n = usrsctp_recvv(so, buf, sizeof buf, nullptr, nullptr, &info, &infolen, &infotype, &flags);
        if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == ECONNABORTED || errno == ENOTCONN)))
            return true;
        if (n < 0)
            usleep(10000);
    }
    return false;
}

int rnic(const Card& victim, const std::string& attack, int count, uint16_t sctp_port) {
    std::vector<struct socket*> all;
    for (int i = 0; i < count; ++i)
        if (struct socket* so = ddp_association(victim, sctp_port))
            all.push_back(so);
    int initiates = 0, refused = 0;
    if (attack == "rnic-initiate")
        for (struct socket* so : all) {
            iwarp::SessionControl m;
            const std::string junk = random_bytes(100);
            m.private_data.assign(junk.begin(), junk.end());
            const std::vector<uint8_t> bytes = iwarp::encode_session_control(m);
            sctp_sndinfo info{};
            info.snd_ppid = htonl(iwarp::kPpidSessionControl);
            initiates += usrsctp_sendv(so, bytes.data(), bytes.size(), nullptr, 0, &info, sizeof info,
                                       SCTP_SENDV_SNDINFO, 0) == ssize_t(bytes.size());
        }
    // One deadline for all: 5 s, ten times the Initiate timeout the job runs with.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (struct socket* so : all) {
        refused += rnic_refused(so, deadline);
        usrsctp_close(so);
    }
    std::printf("attacker: %s: %d associations, %d connected, %d initiates sent, %d associations refused\n",
                attack.c_str(), count, int(all.size()), initiates, refused);
    return 0;
}

int garbage(const Card& victim, int count) {
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(victim.udp_port);
    inet_pton(AF_INET, victim.addresses[0].c_str(), &to.sin_addr);
    int sent = 0;
    for (int i = 0; i < count; ++i) {
        const std::string junk = random_bytes(1 + size_t(i * 37) % 1400);
        sent += sendto(fd, junk.data(), junk.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) > 0;
    }
    close(fd);
    std::printf("attacker: garbage: %d of %d datagrams sent\n", sent, count);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: attacker <card> impersonate|t-hello|pre-hello|garbage [count]\n"
                             "       attacker <card> rnic-silent|rnic-initiate count rnic-sctp-port\n");
        return 2;
    }
    try {
        const Card victim = parse_card(argv[1]);
        const std::string attack = argv[2];
        const int count = argc > 3 ? std::atoi(argv[3]) : 10;
        if (attack == "garbage")
            return garbage(victim, count);
        Settings s;
        const StackInfo stack = start_stack(s);
        if (attack.rfind("rnic-", 0) == 0) {
            if (argc < 5 || (attack != "rnic-silent" && attack != "rnic-initiate")) {
                std::fprintf(stderr, "attacker: %s needs a count and the RNIC's SCTP port\n", attack.c_str());
                return 2;
            }
            return rnic(victim, attack, count, uint16_t(std::atoi(argv[4])));
        }
        Card mine;
        mine.udp_port = stack.udp_port;
        mine.sctp_port = 1;
        mine.addresses = {victim.addresses[0]};
        const std::string my_card = format_card(mine);
        int challenged = 0, refused = 0;
        uint64_t bytes = 0;
        for (int i = 0; i < count; ++i) {
            Assoc a(s, victim);
            if (attack == "impersonate") {
                challenged += false_proof(a, 0, "P0 kvs_" + std::to_string(getpid()) + "_0", my_card);
            } else if (attack == "t-hello") {
                for (unsigned link = 0; link < kMaxLinks; ++link)
                    if (!a.send(hello(uint8_t(link), random_bytes(kNonceBytes), "T" + std::to_string(link), my_card)))
                        break;
                challenged += !a.receive(FrameKind::challenge).empty();
                a.send(frame(FrameKind::proof, 0, 0, random_bytes(kProofBytes)));
            } else if (attack == "pre-hello") {
                const std::string data(60000, 'x');
                for (uint32_t seq = 0; seq < 4096 && a.send(frame(FrameKind::data, 0, seq, data)); ++seq)
                    bytes += data.size();
            } else {
                std::fprintf(stderr, "attacker: unknown attack '%s'\n", attack.c_str());
                return 2;
            }
            refused += a.refused();
        }
        std::printf("attacker: %s: %d associations, %d hellos challenged, %llu data bytes accepted by the stack, "
                    "%d associations refused\n",
                    attack.c_str(), count, challenged, (unsigned long long)bytes, refused);
    } catch (const Error& e) {
        std::fprintf(stderr, "attacker: %s\n", e.what());
        return 1;
    }
    return 0;
}
