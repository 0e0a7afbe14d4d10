// SPDX-License-Identifier: BSD-3-Clause
// Receive side of the RDMAP/DDP engine; see qp.hpp.
//
// Messages are handled in DDP-SSN order (RFC 5043 §10: chunks travel unordered). The next
// expected message is read header first and validated (validate_segment_head) against the room
// its target has; its payload is then read from the socket straight into the registered region
// or the posted receive buffer. Messages that arrive ahead of their turn (loss, multipath) and
// Read Requests, Terminates and session control are read whole and handled from that copy.
#include "qp.hpp"

#include "byte_order.hpp"
#include "error.hpp"

#include <cerrno>
#include <cstring>

namespace iwarp {
namespace be = sctpm::be;

namespace {

constexpr size_t kHeadRead = kSsnSize + kUntaggedHeaderSize + kReadRequestHeaderSize; // 48
constexpr size_t kMaxWholeMessage = 64u << 20; // sanity bound for messages read whole

bool is_send(Opcode op) {
    return op == Opcode::send || op == Opcode::send_inv || op == Opcode::send_se || op == Opcode::send_se_inv;
}

} // namespace

int QueuePair::receive() {
    int work = 0;
    for (int i = 0; i < 64 && llp_; ++i) {
        if (!receive_message()) break;
        ++work;
    }
    return work;
}

bool QueuePair::read_rest(std::vector<uint8_t>& into, size_t limit, bool eor_seen) {
    bool eor = eor_seen;
    while (!eor) {
        const size_t at = into.size();
        if (at >= limit) {
            llp_failed("a message longer than " + std::to_string(limit) + " bytes arrived");
            return false;
        }
        into.resize(std::min(limit, at + 65536));
        LlpRead r = llp_->read(into.data() + at, into.size() - at);
        if (r.closed || r.n < 0) {
            into.resize(at);
            llp_failed(r.closed ? r.why : r.n == -EWOULDBLOCK ? "message cut short" : std::strerror(int(-r.n)));
            return false;
        }
        into.resize(at + size_t(r.n));
        eor = r.eor;
    }
    return true;
}

bool QueuePair::receive_message() {
    alignas(8) uint8_t head[kHeadRead];
    LlpRead r = llp_->read(head, sizeof head);
    if (r.closed) {
        llp_failed(r.why);
        return false;
    }
    if (r.n == -EWOULDBLOCK) return false;
    if (r.n < 0) {
        llp_failed(std::string("receive failed: ") + std::strerror(int(-r.n)));
        return false;
    }
    const size_t n = size_t(r.n);
    const bool live = state_ != IWV_QPS_ERR && session_ && !session_->finished();
    const bool known_ppid = r.ppid == kPpidDdpSegment || r.ppid == kPpidSessionControl;
    if (!live || n < kSsnSize || !known_ppid) {
        bounce_.assign(head, head + n);
        if (!read_rest(bounce_, kMaxWholeMessage, r.eor)) return true;
        if (!live) {
            // After an error only a Terminate is of interest (to report it); the rest is dropped.
            if (r.ppid == kPpidDdpSegment) handle_segment_in_error(bounce_);
            else if (r.ppid == kPpidSessionControl && session_) session_->on_control(bounce_);
            return true;
        }
        session_error(n < kSsnSize ? "message shorter than its DDP-SSN (RFC 5043 §5.2.1)"
                                   : "payload protocol identifier " + std::to_string(r.ppid) +
                                         " is neither 16 nor 17 (RFC 5043 §5.2)");
        return true;
    }
    const uint16_t ssn = be::load16(head);
    cur_ssn_ = ssn;
    const SsnOrder order = session_->order_of(ssn);
    if (order == SsnOrder::invalid) {
        bounce_.clear();
        read_rest(bounce_, kMaxWholeMessage, r.eor);
        session_error("DDP-SSN " + std::to_string(ssn) + " is behind or too far ahead of the expected " +
                      std::to_string(session_->expected_ssn()) + " (RFC 5043 §10)");
        return true;
    }
    if (order == SsnOrder::ahead || r.ppid == kPpidSessionControl) {
        bounce_.assign(head, head + n);
        if (!read_rest(bounce_, kMaxWholeMessage, r.eor)) return true;
        if (order == SsnOrder::ahead) {
            if (early_bytes_ + bounce_.size() > early_limit_) {
                session_error("messages ahead of the expected DDP-SSN " + std::to_string(session_->expected_ssn()) +
                              " would hold " + std::to_string(early_bytes_ + bounce_.size()) +
                              " bytes, over the bound of " + std::to_string(early_limit_));
                return true;
            }
            early_bytes_ += bounce_.size();
            early_[ssn] = TxMessage{r.ppid, std::move(bounce_)};
            bounce_ = {};
            return true;
        }
        handle_control(bounce_);
    } else {
        handle_segment_direct(head, n, r.eor);
    }
    drain_early();
    return true;
}

void QueuePair::drain_early() {
    while (llp_ && session_ && !session_->finished() && state_ != IWV_QPS_ERR) {
        auto it = early_.find(session_->expected_ssn());
        if (it == early_.end()) return;
        TxMessage m = std::move(it->second);
        early_.erase(it);
        early_bytes_ -= m.bytes.size();
        cur_ssn_ = be::load16(m.bytes.data());
        if (m.ppid == kPpidSessionControl) {
            handle_control(m.bytes);
        } else if (auto e = session_->on_segment(cur_ssn_)) {
            session_error(*e);
        } else {
            handle_segment_bytes(m.bytes);
        }
    }
}

void QueuePair::handle_control(std::span<const uint8_t> message) {
    auto out = session_->on_control(message);
    switch (out.event) {
    case Session::Event::accepted: {
        rx_.ird = session_->negotiated().ird;
        ord_ = session_->negotiated().ord;
        std::string ignored;
        if (state_ == IWV_QPS_RTR) modify(IWV_QPS_RTS, ignored);
        event(IWV_EVENT_ESTABLISHED, "", out.message);
        break;
    }
    case Session::Event::rejected:
        state_ = IWV_QPS_ERR;
        flush();
        event(IWV_EVENT_REJECTED, "peer rejected the connection", out.message);
        break;
    case Session::Event::terminated:
        if (state_ != IWV_QPS_ERR) {
            enter_error("peer terminated the session", std::nullopt);
            event(IWV_EVENT_DISCONNECTED, "peer terminated the session");
        }
        break;
    case Session::Event::request: session_error("Initiate on an established QP"); break;
    case Session::Event::sequence_error: session_error(out.error); break;
    }
}

void QueuePair::session_error(const std::string& why) {
    if (session_ && session_->can_terminate() && llp_) send_now(kPpidSessionControl, session_->terminate());
    enter_error("session protocol error: " + why, std::nullopt);
}

// How much payload the segment's target can take from its TO or MO on: the bound that
// validate_segment_head is asked to approve before the payload is read into place.
uint64_t QueuePair::room_hint(const Segment& seg, uint64_t bound) const {
    const DdpHeader& h = seg.hdr;
    uint64_t room = bound;
    const Opcode op = Opcode(h.opcode);
    if (op == Opcode::rdma_write) {
        if (const MemoryRegion* mr = stags_.find(h.stag))
            if (h.to >= mr->to_base && h.to - mr->to_base <= mr->length) room = mr->length - (h.to - mr->to_base);
    } else if (op == Opcode::read_response) {
        for (const OutstandingRead& e : rx_.orq)
            if (e.sink_stag == h.stag && h.to >= e.sink_to && h.to - e.sink_to <= e.size) {
                room = e.size - (h.to - e.sink_to);
                break;
            }
    } else if (is_send(op)) {
        const uint32_t index = h.msn - rx_.recv_msn;
        if (index < rx_.recv.size() && h.mo <= rx_.recv[index].length) room = rx_.recv[index].length - h.mo;
    }
    return std::min(room, bound);
}

// Where payload byte `offset` of an accepted segment goes, and how many bytes fit contiguously.
uint8_t* QueuePair::place_address(const Accepted& a, size_t offset, size_t* room) {
    const Placement& p = *a.placement;
    if (offset >= p.length) {
        *room = 0;
        return nullptr;
    }
    if (a.segment.hdr.tagged) {
        *room = p.length - offset;
        return reinterpret_cast<uint8_t*>(p.address + offset);
    }
    // Untagged: the validator's address is the MO (receive buffers are registered with base 0);
    // walk the receive WR's SGL to it.
    uint64_t mo = p.address + offset;
    const RecvWqe& r = rq_[a.buffer_index];
    for (const iwv_sge& s : r.sges) {
        if (mo < s.length) {
            *room = size_t(std::min<uint64_t>(s.length - mo, p.length - offset));
            return reinterpret_cast<uint8_t*>(s.addr + mo);
        }
        mo -= s.length;
    }
    *room = 0;
    return nullptr;
}

void QueuePair::handle_segment_direct(uint8_t* head, size_t n, bool eor) {
    if (auto e = session_->on_segment(cur_ssn_)) {
        bounce_.clear();
        read_rest(bounce_, kMaxWholeMessage, eor);
        session_error(*e);
        return;
    }
    auto hdr = decode_ddp_header(std::span<const uint8_t>(head + kSsnSize, n - kSsnSize));
    const bool direct = !eor && hdr && n >= kSsnSize + hdr->size() && payload_is_data(*hdr) &&
                        rx_.max_message > kSsnSize + hdr->size();
    if (!direct) {
        bounce_.assign(head, head + n);
        if (read_rest(bounce_, kMaxWholeMessage, eor)) handle_segment_bytes(bounce_);
        return;
    }
    Segment seg{cur_ssn_, *hdr, {}};
    const size_t hsize = kSsnSize + hdr->size();
    const size_t extra = n - hsize; // payload bytes that came with the header read
    const uint64_t bound = room_hint(seg, rx_.max_message - hsize);
    Verdict v = validate_segment_head(rx_, seg, bound);
    auto* ok = std::get_if<Accepted>(&v);
    if (!ok || !ok->placement || ok->placement->length < extra) {
        // Not placeable as is (an error, or no room): read it whole; the full check decides.
        bounce_.assign(head, head + n);
        if (read_rest(bounce_, kMaxWholeMessage, eor)) handle_segment_bytes(bounce_);
        return;
    }
    const Accepted bounded = *ok;
    size_t placed = 0;
    while (placed < extra) {
        size_t room = 0;
        uint8_t* dst = place_address(bounded, placed, &room);
        const size_t take = std::min(room, extra - placed);
        std::memcpy(dst, head + hsize + placed, take);
        placed += take;
    }
    bool done = false;
    while (!done) {
        size_t room = 0;
        uint8_t* dst = place_address(bounded, placed, &room);
        if (room == 0) {
            // Longer than its target allows: read the rest aside so the check sees the true length.
            std::vector<uint8_t> rest;
            if (!read_rest(rest, kMaxWholeMessage, false)) return;
            Verdict too_long = validate_segment_head(rx_, seg, placed + rest.size());
            if (auto* rej = std::get_if<Rejected>(&too_long)) reject(*rej);
            else session_error("segment exceeded its validated room yet passed the check");
            return;
        }
        LlpRead r = llp_->read(dst, room);
        if (r.closed || r.n < 0) {
            llp_failed(r.closed ? r.why : r.n == -EWOULDBLOCK ? "message cut short" : std::strerror(int(-r.n)));
            return;
        }
        placed += size_t(r.n);
        done = r.eor;
    }
    Verdict exact = validate_segment_head(rx_, seg, placed);
    if (auto* rej = std::get_if<Rejected>(&exact)) {
        reject(*rej);
        return;
    }
    deliver_in_msn_order(std::get<Accepted>(exact));
}

void QueuePair::handle_segment_bytes(std::span<const uint8_t> message) {
    Verdict v = validate_segment(rx_, message);
    if (auto* rej = std::get_if<Rejected>(&v)) {
        reject(*rej);
        return;
    }
    const Accepted& a = std::get<Accepted>(v);
    if (a.placement) {
        const uint8_t* src = a.segment.payload.data();
        size_t placed = 0;
        while (placed < a.placement->length) {
            size_t room = 0;
            uint8_t* dst = place_address(a, placed, &room);
            if (!dst) break;
            std::memcpy(dst, src + placed, room);
            placed += room;
        }
    }
    deliver_in_msn_order(a);
}

void QueuePair::handle_segment_in_error(std::span<const uint8_t> message) {
    auto s = decode_segment(message);
    if (!s || s->hdr.tagged || s->hdr.opcode != uint8_t(Opcode::terminate) || terminate_received_) return;
    if (auto t = decode_terminate(s->payload)) {
        terminate_received_ = t->code;
        if (terminate_text_.empty()) terminate_text_ = "received after this side's error";
    }
}

QueuePair::SendWqe* QueuePair::find_wqe(uint64_t seq) {
    if (sq_.empty() || seq < sq_.front().seq) return nullptr;
    const uint64_t i = seq - sq_.front().seq;
    return i < sq_.size() ? &sq_[size_t(i)] : nullptr;
}

// RFC 5041 §5.3: the Data Sink may place in any order but MUST Deliver messages in the order they
// were sent, which on an untagged queue is MSN order (§4.3). The validator accepts any MSN that has
// a buffer, so a message that completes before an earlier MSN of its queue (a peer that sent them
// out of order) waits for it: Delivered now, it would complete the earlier MSN's WR.
void QueuePair::deliver_in_msn_order(const Accepted& a) {
    const DdpHeader& h = a.segment.hdr;
    if (h.tagged || !a.message_length) return deliver(a); // tagged: paired by order; untagged: not complete
    if (h.msn != first_msn(h.qn)) {
        Accepted later = a;
        later.segment.payload = {}; // placed, or decoded into its header fields
        waiting_[{h.qn, h.msn}] = later; // a repeated last segment replaces it: Delivered at most once
        return;
    }
    deliver(a);
    deliver_waiting(h.qn);
}

void QueuePair::deliver_waiting(uint32_t qn) {
    while (state_ != IWV_QPS_ERR) { // an error flushes what waits
        auto it = waiting_.find({qn, first_msn(qn)});
        if (it == waiting_.end()) return;
        const Accepted next = std::move(it->second);
        waiting_.erase(it);
        deliver(next);
    }
}

// The MSN of the oldest message of queue `qn` not yet Delivered.
uint32_t QueuePair::first_msn(uint32_t qn) const {
    switch (qn) {
    case kQnSend: return rx_.recv_msn;
    case kQnReadRequest: return rx_.read_msn;
    case kQnAtomicResponse: return rx_.atomic_msn;
    default: return rx_.terminate_msn;
    }
}

// Delivery, in DDP-SSN order (MSN order within an untagged queue): what a complete message means to
// RDMAP (RFC 5040 §5.5).
void QueuePair::deliver(const Accepted& a) {
    const DdpHeader& h = a.segment.hdr;
    const Opcode op = Opcode(h.opcode);
    if (op == Opcode::rdma_write) return; // placed; the target learns of it only through a later Send
    if (op == Opcode::read_response) {
        if (!h.last || orq_.empty()) return;
        // Responses come back in request order: the last segment completes the oldest Read.
        SendWqe* w = find_wqe(orq_.front());
        orq_.pop_front();
        rx_.orq.pop_front();
        if (w) w->done = true;
        complete_in_order();
        return;
    }
    if (is_send(op)) {
        if (!a.message_length) return;
        RecvWqe r = std::move(rq_.front());
        rq_.pop_front();
        rx_.recv.pop_front();
        ++rx_.recv_msn;
        iwv_wc wc{};
        wc.wr_id = r.wr_id;
        wc.status = IWV_WC_SUCCESS;
        wc.opcode = IWV_WC_RECV;
        wc.byte_len = *a.message_length;
        wc.qp_num = num_;
        if (a.invalidate_stag) { // RFC 5040 §5.3: invalidate, then deliver
            stags_.invalidate(*a.invalidate_stag);
            wc.wc_flags |= IWV_WC_WITH_INV;
            wc.invalidated_rkey = *a.invalidate_stag;
        }
        const bool solicited = op == Opcode::send_se || op == Opcode::send_se_inv;
        if (solicited) wc.wc_flags |= IWV_WC_SOLICITED;
        recv_cq_.push(wc, solicited);
        return;
    }
    if (op == Opcode::read_request) {
        ReadResponseJob job;
        job.rr = *a.read_request;
        ++rx_.read_msn;
        ++rx_.reads_active;
        irq_.push_back(job);
        return;
    }
    if (op == Opcode::atomic_request) {
        ++rx_.read_msn; // QN 1, shared with the Read Requests
        carry_out_atomic(*a.atomic_request);
        return;
    }
    if (op == Opcode::atomic_response) {
        // Responses come back in request order (RFC 7306 §5.2.2 item 8): this one answers the oldest.
        if (aq_.empty()) return; // flushed since it was checked
        SendWqe* w = find_wqe(aq_.front());
        aq_.pop_front();
        rx_.atomics.pop_front();
        ++rx_.atomic_msn;
        if (w) {
            // The sink SGE was checked (local write, 8 bytes) when the WR was posted.
            const uint64_t original = a.atomic_response->original;
            std::memcpy(reinterpret_cast<void*>(uintptr_t(w->sges[0].addr)), &original, sizeof original);
            w->done = true;
        }
        complete_in_order();
        return;
    }
    if (op == Opcode::terminate) {
        rx_.terminate_seen = true;
        terminate_received_ = a.terminate->code;
        terminate_text_ = "received from the peer";
        enter_error("peer sent Terminate: " + describe(a.terminate->code), a.terminate->code);
    }
}

// RFC 7306 §5.1: read, modify and write the 8 bytes, atomically against every other atomic of this
// device (its lock covers every QP) and, through the CPU's own atomics, against the local process's.
// The target was checked when the request arrived; it is checked again here, where it counts.
void QueuePair::carry_out_atomic(const AtomicRequestHeader& ar) {
    TagCheck c = check_atomic_target(stags_, pd_, ar);
    if (!c.ok()) {
        TerminateHeader t;
        t.code = *c.error;
        send_terminate(t, "Atomic Request target no longer valid when carried out (RFC 7306 §8.2)");
        enter_error("Atomic Request target no longer valid when carried out", std::nullopt);
        return;
    }
    auto* word = reinterpret_cast<uint64_t*>(uintptr_t(c.address));
    uint64_t original = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    for (;;) { // a failed compare leaves the word unwritten
        const uint64_t next = atomic_result(ar, original);
        if (next == original ||
            __atomic_compare_exchange_n(word, &original, next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            break;
    }
    atomic_log_[atomics_done_++ % IWV_ATOMIC_LOG] = original;
    ReadResponseJob job;
    job.atomic = AtomicResponseHeader{ar.request_id, original};
    ++rx_.reads_active; // an IRD slot until its Response is out (§5.2.2 item 4)
    irq_.push_back(job);
}

void QueuePair::reject(const Rejected& r) {
    send_terminate(r.terminate, std::string(r.reason));
    enter_error("sent Terminate: " + describe(r.terminate.code) + ": " + std::string(r.reason), std::nullopt);
}

} // namespace iwarp
