// SPDX-License-Identifier: BSD-3-Clause
// A reliable connected queue pair: the verbs state machine, the send and receive queues, and the
// RDMAP/DDP engine of one DDP stream (RFC 5040/5041 over one RFC 5043 session).
//
// qp.cpp      state machine, posting, completions in order, flush
// rdmap_tx.cpp segmentation and transmission of WRs, Read Responses and Terminates
// rdmap_rx.cpp reception: DDP-SSN order, validation, placement straight from the socket, delivery
//
// Not thread-safe: the device lock covers every call.
#pragma once
#include "cq.hpp"
#include "iwarp_verbs.h"
#include "llp.hpp"
#include "memory.hpp"
#include "session.hpp"
#include "validate.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace iwarp {

// What a QP reports to its device (connection events).
struct QpEvent {
    iwv_event_type type;
    std::string detail;
    std::optional<SessionControl> control; // the peer's Accept/Reject
};

class QueuePair {
public:
    QueuePair(uint32_t qp_num, StagTable& stags, PdHandle pd, CompletionQueue& send_cq, CompletionQueue& recv_cq,
              const iwv_qp_cap& cap, bool sq_sig_all);
    ~QueuePair();

    uint32_t num() const { return num_; }
    PdHandle pd() const { return pd_; }
    iwv_qp_state state() const { return state_; }
    void* user_handle = nullptr; // the C handle, for events

    // ---- verbs ----
    int modify(iwv_qp_state to, std::string& error); // 0 or errno
    int post_send(const iwv_send_wr* wr, const iwv_send_wr** bad, std::string& error);
    int post_recv(const iwv_recv_wr* wr, const iwv_recv_wr** bad, std::string& error);
    void query(iwv_qp_attr* attr) const;
    uint64_t atomics_done() const { return atomics_done_; }
    bool atomic_original(uint64_t index, uint64_t* original) const; // the log of the peer's atomics

    // ---- connection ----
    // Attach the association and its session; active sends the Initiate now, passive the
    // Accept (the session must hold the pending request).
    void start_active(std::unique_ptr<Llp> llp, IrdOrdPair mine, std::span<const uint8_t> private_data);
    void start_passive(std::unique_ptr<Llp> llp, Session session, IrdOrdPair mine,
                       std::span<const uint8_t> private_data);
    void connecting(); // INIT -> RTR while the association is set up
    // Messages that arrived ahead of their DDP-SSN are held up to this many bytes; more ends the
    // session (a legitimate peer has at most its flight of unacknowledged data ahead of a hole).
    static constexpr size_t kDefaultEarlyLimit = IWV_EARLY_BYTES;
    void set_early_limit(size_t bytes) { early_limit_ = bytes; }
    size_t early_bytes() const { return early_bytes_; } // held now (tests, fuzzing)
    void fail_connect(const std::string& why); // the association never came up
    void disconnect(); // session Terminate, then close
    bool connected() const { return llp_ != nullptr; }
    IrdOrdPair negotiated() const { return {uint16_t(rx_.ird), uint16_t(ord_)}; }

    // ---- progress (device) ----
    int progress(); // receive, deliver, transmit; returns work done
    bool tx_blocked() const { return tx_blocked_; }
    std::vector<QpEvent> take_events() { return std::move(events_); }

private:
    struct SendWqe {
        uint64_t seq = 0;
        iwv_send_wr wr{};
        std::vector<iwv_sge> sges;
        uint64_t length = 0;     // sum of the SGEs
        uint64_t sent = 0;       // payload bytes handed to the LLP
        bool issued = false;     // every segment (or the Read Request) is out
        bool done = false;       // ready to complete (in order)
        iwv_wc_status status = IWV_WC_SUCCESS;
        uint32_t vendor_err = 0;
    };
    struct RecvWqe {
        uint64_t wr_id = 0;
        std::vector<iwv_sge> sges;
        uint64_t length = 0;
    };
    struct ReadResponseJob { // an inbound Read or Atomic Request being answered (one IRD slot)
        ReadRequestHeader rr;
        std::optional<AtomicResponseHeader> atomic; // an Atomic Request's Response: done, to send
        uint64_t src_address = 0;
        uint32_t sent = 0;
        bool started = false;
    };
    struct TxMessage {
        uint32_t ppid;
        std::vector<uint8_t> bytes;
    };

    // qp.cpp
    void complete_in_order();
    void push_send_completion(const SendWqe& w);
    void enter_error(const std::string& why, std::optional<TermCode> received);
    void flush();
    int check_sges(const iwv_sge* sg, int n, uint32_t need_access, uint64_t* total, std::string& error) const;
    void event(iwv_event_type type, std::string detail, std::optional<SessionControl> control = {});

    // rdmap_tx.cpp
    int transmit();
    bool send_now(uint32_t ppid, std::vector<uint8_t>&& bytes); // false: queued (LLP full)
    bool build_next_segment(); // false: nothing to send now
    void build_read_response(ReadResponseJob& job);
    void build_atomic_response(const AtomicResponseHeader& resp);
    void build_wqe_segment(SendWqe& w);
    size_t gather(const std::vector<iwv_sge>& sges, uint64_t offset, uint8_t* out, size_t len) const;
    void send_terminate(const TerminateHeader& t, const std::string& why);
    void send_session_terminate();

    // rdmap_rx.cpp
    int receive();
    bool receive_message(); // false when nothing was waiting
    void handle_control(std::span<const uint8_t> message);
    void handle_segment_direct(uint8_t* head, size_t n, bool eor);
    void handle_segment_bytes(std::span<const uint8_t> message);
    void handle_segment_in_error(std::span<const uint8_t> message);
    void deliver_in_msn_order(const Accepted& a);
    void deliver_waiting(uint32_t qn);
    uint32_t first_msn(uint32_t qn) const;
    void deliver(const Accepted& a);
    void carry_out_atomic(const AtomicRequestHeader& ar);
    void reject(const Rejected& r);
    bool read_rest(std::vector<uint8_t>& into, size_t limit, bool eor_seen);
    void scatter(uint64_t mo_offset, const uint8_t* data, size_t len); // into the head receive WQE
    uint8_t* place_address(const Accepted& a, size_t offset, size_t* room);
    void drain_early();
    void llp_failed(const std::string& why);
    void session_error(const std::string& why);
    uint64_t room_hint(const Segment& seg, uint64_t bound) const;
    SendWqe* find_wqe(uint64_t seq);
    bool send_segment(size_t n); // tx_buf_[0, n) as PPID 16; false if the LLP took no more

    const uint32_t num_;
    StagTable& stags_;
    const PdHandle pd_;
    CompletionQueue& send_cq_;
    CompletionQueue& recv_cq_;
    const iwv_qp_cap cap_;
    const bool sq_sig_all_;
    iwv_qp_state state_ = IWV_QPS_RESET;

    // Send side.
    std::deque<SendWqe> sq_;    // posted and not yet completed, oldest first
    size_t sq_next_ = 0;        // index in sq_ of the next WQE to transmit
    uint64_t next_seq_ = 1;
    std::deque<uint64_t> orq_;  // seq of our RDMA Reads awaiting their Response (parallel to rx_.orq)
    std::deque<uint64_t> aq_;   // seq of our Atomic Requests awaiting their Response (parallel to rx_.atomics)
    uint32_t next_atomic_id_ = 1;     // Request Identifier of our next Atomic Request
    uint64_t atomics_done_ = 0;       // the peer's Atomic Requests carried out (iwv_qp_atomics_done)
    std::array<uint64_t, IWV_ATOMIC_LOG> atomic_log_{}; // their originals, by index % IWV_ATOMIC_LOG
    uint32_t atomic_response_msn_ = 1; // MSN of the next Atomic Response we send (QN 3)
    uint32_t ord_ = 0;
    uint32_t send_msn_ = 1, read_msn_ = 1;
    std::deque<ReadResponseJob> irq_;
    std::deque<TxMessage> tx_queue_; // built, not yet accepted by the LLP
    bool tx_blocked_ = false;
    std::vector<uint8_t> tx_buf_;

    // Receive side.
    std::deque<RecvWqe> rq_;
    ReceiverState rx_;
    std::map<uint16_t, TxMessage> early_; // messages ahead of the next DDP-SSN (bytes + ppid)
    size_t early_bytes_ = 0;              // what early_ holds
    size_t early_limit_ = kDefaultEarlyLimit;
    std::vector<uint8_t> bounce_;
    // Untagged messages that completed ahead of an earlier MSN of their queue, by (QN, MSN): they
    // wait for it (RFC 5041 §5.3). At most one per posted buffer, IRD slot or outstanding atomic.
    std::map<std::pair<uint32_t, uint32_t>, Accepted> waiting_;
    uint16_t cur_ssn_ = 0;

    // Connection.
    std::unique_ptr<Llp> llp_;
    std::optional<Session> session_;
    bool close_when_sent_ = false;
    std::optional<TermCode> terminate_sent_, terminate_received_;
    std::string terminate_text_;
    std::vector<QpEvent> events_;
};

// RFC 7306's FetchAdd and CmpSwap: one 8-byte sink, an ORD credit each, as a Read.
inline bool wr_is_atomic(iwv_wr_opcode op) {
    return op == IWV_WR_ATOMIC_CMP_AND_SWP || op == IWV_WR_ATOMIC_FETCH_AND_ADD || op == IWV_WR_ATOMIC_SWAP;
}

// Status of the WR that a received Terminate fails (RFC 5040 §7: remote errors).
iwv_wc_status status_for_terminate(const TermCode& c);
uint32_t vendor_code(const TermCode& c); // layer << 16 | etype << 8 | code

} // namespace iwarp
