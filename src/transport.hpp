// SPDX-License-Identifier: BSD-3-Clause
// The transport: one endpoint, the peer table, the send queues and the receive path, driven by
// the progress pipeline (read, write; more stages can be added). Not thread-safe except wakeup():
// the owner serialises calls (MPICH's CH3 does, under its global lock).
// Peers to the same remote process share its one association, each on its own link (frame.hpp):
// association events reach every peer linked on it.
#pragma once
#include <cerrno>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "endpoint.hpp"
#include "sctp_socket.hpp"
#include "hmac_sha256.hpp"
#include "held_bytes.hpp"
#include "peer_table.hpp"
#include "progress.hpp"
#include "sctpmpi.h"
#include "settings.hpp"
#include "stack.hpp"
#include "stream_map.hpp"

struct sctp_assoc_change; // usrsctp
struct sctp_paddr_change;
struct sctp_authkey_event;

namespace sctpm {

struct UpcallTarget;

class Transport {
public:
    Transport(const Settings& s, const std::string& hostname, std::string hello, const sctpm_callbacks& cb);
    // On a socket of the caller's (the scripted one of tests/fuzz/transport_rx_fuzz.cpp): no stack
    // is started, and the card names `port` and the socket's local addresses.
    Transport(const Settings& s, std::unique_ptr<SctpSocket> socket, uint16_t port, std::string hello,
              const sctpm_callbacks& cb);
    ~Transport();

    const std::string& card() const { return card_; }
    const Settings& settings() const { return s_; }
    sctpm_peer add_peer(const std::string& card_text);
    bool peer_failed(sctpm_peer id) const;
    int connect(sctpm_peer id, const std::string* hello = nullptr);
    void remove_peer(sctpm_peer id);
    // The caller is done with this peer for good (its VC is destroyed): its memory is freed, no
    // event names it again, and its link is unlinked (transport_unlink.cpp).
    void release_peer(sctpm_peer id);

    // copy: if the message must wait, keep a copy of its bytes and report it done (returns 0).
    // more: a further batch of this message (the same cookie) follows, and nothing else sent to
    // the peer goes between the two (sctpm_send_batch).
    int send(sctpm_peer id, const SendKey& key, const iovec* iov, int iovcnt, void* cookie, bool copy = false,
             bool more = false);
    void set_stream_hook(StreamHook hook, void* arg) { map_.set_hook(hook, arg); }

    int progress(int64_t timeout_us);
    void wakeup() { progress_.wake(); }
    void add_stage(const std::string& name, int (*fn)(void*), void* arg);
    void watch_fd(int fd) { progress_.watch(fd); }
    void add_spin_probe(int (*fn)(void*), void* arg) { progress_.add_spin_probe([fn, arg] { return fn(arg) != 0; }); }
    void add_busy(int (*fn)(void*), void* arg) { busy_.push_back({fn, arg}); }
    bool sends_pending() const { return !tx_ready_.empty() || !control_ready_.empty(); }

    // Flush queued sends and shut every association down gracefully, bounded by timeout_ms.
    void shutdown(int timeout_ms);

    int peer_paths(sctpm_peer id, sctpm_path_info* out, int max);
    bool peer_stats(sctpm_peer id, sctpm_peer_stats* out) const;
    sctpm_held_stats held_stats() const;
    bool packet_auth(sctpm_peer id, sctpm_packet_auth* out) const;
    // HMAC-SHA-256 of the parts under our key (id < 0) or peer id's (sctpm_link_key_mac);
    // nullopt if it has none.
    std::optional<Digest> link_key_mac(sctpm_peer id, const iovec* parts, int n) const;

private:
    // peer_paths: a path's index in the peer's card (past the end if not in it), and the paths
    // counted by us once the stack has let the association go.
    static long card_rank(const Peer& p, const std::string& address); // its index in the card, or past the end
    int ended_paths(const Peer& p, sctpm_path_info* out, int max) const;
    // The members and checks both public constructors share; then each opens its socket and
    // calls attach_socket.
    Transport(const Settings& s, std::string hello, const sctpm_callbacks& cb);
    void attach_socket(std::unique_ptr<SctpSocket> socket, uint16_t port);

    // ---- receive path (transport_rx.cpp)
    enum class ContMode { none, place, buffer, raw, discard };
    struct Continuation {
        ContMode mode = ContMode::none;
        AssocId assoc = 0;
        uint16_t stream = 0;
        uint64_t remaining = 0;   // bytes of the current SCTP message still in the socket
        bool last_fragment = false;
        Peer* peer = nullptr;
        std::shared_ptr<RxMessage> msg;
        std::string* raw = nullptr;
    };
    int read_stage();
    bool read_one();
    bool continue_message();
    void start_data(const RecvResult& r);
    void handle_fragment(Peer& p, AssocId assoc, uint16_t stream, const FrameHeader& h,
                         const uint8_t* avail, size_t avail_len, uint64_t remaining);
    void discard_rest(uint64_t remaining);
    // A new link's hello, challenge and proof (hello_auth.hpp, transport_auth.cpp).
    void handle_hello(AssocId assoc, LinkKey link, const uint8_t* payload, size_t len);
    void handle_challenge(AssocId assoc, LinkKey link, const uint8_t* payload, size_t len);
    void handle_proof(AssocId assoc, LinkKey link, const uint8_t* payload, size_t len);
    void accept_link(AssocId assoc, LinkKey link, const std::string& blob, const std::string& card);
    // Hellos of an association that ended before their proof came (on_unproven_end): each peer the
    // channel names for one is connected if idle, so that its death is reported.
    static std::vector<std::string> unproven_hellos(const AssocEntry& a);
    void check_unproven(const std::vector<std::string>& hellos);
    // A failed proof: counted, the association aborted (refuse).
    void auth_failed(AssocId assoc, const Peer* culprit, const std::string& why);
    // Aborts an association for the count-th refusal of its kind: a protocol error reported when
    // one of our peers is the culprit or it is the first; a stranger's later ones only counted, so
    // a flood of them cannot flood stderr.
    void refuse(AssocId assoc, const Peer* culprit, const std::string& why, int error, uint64_t count);
    // auth=packet: SCTP-AUTH keys from the proofs (packet_auth.hpp, transport_packet_auth.cpp).
    bool add_link_key(AssocId assoc, LinkKey link, const std::string& key);
    bool use_link_key(AssocId assoc, LinkKey link);
    void handle_retire(AssocId assoc, LinkKey link, const uint8_t* payload, size_t len);
    void handle_auth_event(const sctp_authkey_event& e);
    void delete_null_key_when_done(AssocId assoc);
    bool auth_mode_matches(AssocId assoc); // at COMM_UP: false = the association is refused or ignored
    void send_control(AssocId assoc, std::string frame);
    int flush_control();
    void adopt_link(Peer& p, AssocId assoc, LinkKey link);
    void replay_pending(Peer& p, AssocId assoc, LinkKey link);
    // ---- link release (transport_unlink.cpp)
    void send_due_unlinks();
    void forget_assoc(AssocId id); // the peer table's entry and the unlinks due on it
    bool send_unlink(AssocId assoc, uint8_t incoming_byte); // true: sent, or no longer needed
    void handle_unlink(AssocId assoc, LinkKey link);
    void forget_link_if_unlinked(AssocEntry& a, uint8_t incoming_byte);
    void deliver_in_order(Peer& p, uint16_t domain);
    void deliver(Peer& p, RxMessage& m, const uint8_t* head, size_t head_len);
    bool place_bytes(Peer& p, RxMessage& m, const uint8_t* data, size_t len);
    bool next_dest(Peer& p, RxMessage& m);
    void finish_fragment();
    void count_path(Peer& p, const sockaddr_storage& from, size_t n);
    // Malformed or undeliverable bytes on an association: abort it, failing every peer on it.
    // culprit: the peer whose link the bytes came on, if known.
    void protocol_error(AssocId assoc, const Peer* culprit, const std::string& why, int error = EPROTO);
    void receive_failed(Peer& p, int error, const std::string& why);
    // Holding would_hold bytes for `what` passes `bound`: a protocol error naming the bound.
    void bound_exceeded(AssocId assoc, const Peer* culprit, const HeldBytesBound& bound, const std::string& what,
                        uint64_t would_hold);
    // An association's frames waiting for a hello: all dropped, or one link's taken out.
    static void drop_pending(AssocEntry& a);
    static AssocEntry::Held take_pending(AssocEntry& a, uint8_t link_byte);
    void take_notification(const uint8_t* first, RecvResult r);
    void handle_notification(const uint8_t* data, size_t len);
    void handle_assoc_change(const sctp_assoc_change& c, size_t len);
    void handle_path_change(const sctp_paddr_change& c);
    void assoc_up(AssocId assoc);
    void restart_assoc(AssocId assoc);
    void assoc_shut_down(AssocId assoc);

    // ---- send path (transport_tx.cpp)
    int write_stage();
    bool pump(Peer& p, uint16_t stream);
    void connect_peer(Peer& p);
    // An internal message (hello, proof) at the front of stream 0, ahead of everything queued.
    void queue_control(Peer& p, FrameKind kind, std::string payload);
    void queue_hello(Peer& p);
    void flush_completions();
    // The batches of the peer's message in batches are all sent (or it ended early): the sends
    // deferred meanwhile are numbered and queued behind them.
    void end_batch(Peer& p);
    size_t overtaking_point(const Peer& p, const Route& r) const;
    void fail_queued_sends(Peer& p);

    // Fails this peer alone: its queued sends complete with -ECONNRESET, one event. Its association
    // is left alone (other peers may be linked on it).
    void fail_peer(Peer& p, sctpm_event_type type, int error, const std::string& why);
    // Ends an association: fails every live peer linked on it (each with why(peer)) and marks it
    // ended; abort: also abort it (after a half-read message of it). Returns the peers failed.
    using PeerReason = std::function<std::string(const Peer&)>;
    int end_assoc(AssocId assoc, bool abort, sctpm_event_type type, int error, const PeerReason& why);
    void abort_assoc(AssocId assoc);
    void emit(sctpm_event& ev);
    // An association's end that no peer's event told (none linked, or all failed already): one
    // event with peer -1 says why, and the association counts as reported.
    void report_peerless_end(AssocId assoc, sctpm_event_type type, int error, bool identified, const std::string& why);
    void emit_for_linked_peers(AssocId assoc, sctpm_event ev); // one copy per live peer, or peer -1
    void report_stall(int64_t idle_us); // transport_report.cpp

    Settings s_;
    StackInfo stack_;
    std::unique_ptr<SctpSocket> ep_; // an Endpoint, unless a test gave its own
    PeerTable peers_;
    StreamMap map_;
    Progress progress_;
    struct Busy {
        int (*fn)(void*);
        void* arg;
    };
    std::vector<Busy> busy_; // extra work to retry while blocked (sctpm_add_busy)
    bool busy() const;       // own blocked sends, or an extra busy() says so
    sctpm_callbacks cb_;
    std::string hello_, card_;
    std::string key_;        // our link key, in card_ (hello_auth.hpp)
    std::string hello_card_; // card_ without the key: what our hellos carry
    uint64_t auth_failures_ = 0;
    std::vector<AssocId> control_ready_; // associations with control_out frames
    // Released peers' links whose unlink frame waits until the association has no data of ours
    // unacknowledged (transport_unlink.cpp): (association, LinkKey::incoming_byte()).
    std::vector<std::pair<AssocId, uint8_t>> unlinks_due_;
    FrameLimits limits_;
    HeldBytesBound pre_hello_bound_; // AssocEntry::pending_bytes
    HeldBytesBound reorder_bound_;   // Peer::held_bytes
    uint64_t bound_aborts_ = 0;      // associations aborted for passing one of the two
    std::vector<uint8_t> rxbuf_;
    std::vector<uint8_t> txbuf_; // a fragment's frame header (and its payload when pump gathers it)
    Continuation cont_;
    std::vector<sctpm_peer> tx_ready_;
    struct Completion {
        void* cookie;
        int status;
        sctpm_peer peer;
    };
    std::deque<Completion> completions_;
    uint64_t read_activity_ = ~0ull;
    AssocId deferred_abort_ = 0; // abort once the half-read message of this association is drained
    int read_depth_ = 0;          // read_stage calls on the stack (a callback may run progress)
    uint64_t nested_reads_ = 0;   // read_stage calls made from inside another (stall report)
    int64_t last_work_us_ = 0;    // when progress last did something (stall report)
    bool stall_reported_ = false;
    bool closing_ = false;            // shutdown() runs: no new association for check_unproven
    UpcallTarget* upcall_ = nullptr; // usrsctp's upcall argument (transport.cpp says why)
    bool input_from_socket_ = false; // progress_'s packet input is the socket's (SctpSocket::caller_input)
};

// Addresses to bind for this process, from the settings (interface hostname, multihome file,
// bind-all, or the host name's local addresses). Empty = wildcard. Throws Error.
std::vector<std::string> choose_bind_addresses(const Settings& s, const std::string& hostname);

} // namespace sctpm
