// SPDX-License-Identifier: BSD-3-Clause
// Transmit side of the RDMAP/DDP engine: WRs and Read Responses cut into DDP segments of at most
// the adaptation's size (RFC 5043 §9), each led by its DDP-SSN; Terminates. See qp.hpp.
//
// usrsctp_sendv takes one contiguous buffer, so each segment's header and payload are gathered
// into one segment-sized buffer (tx_buf_) and handed over; there is no message-sized staging.
#include "qp.hpp"

#include "byte_order.hpp"
#include "error.hpp"

#include <cerrno>
#include <cstring>

namespace iwarp {
namespace be = sctpm::be;

namespace {

Opcode send_opcode(const iwv_send_wr& wr) {
    const bool se = wr.send_flags & IWV_SEND_SOLICITED;
    if (wr.opcode == IWV_WR_SEND_WITH_INV) return se ? Opcode::send_se_inv : Opcode::send_inv;
    return se ? Opcode::send_se : Opcode::send;
}

} // namespace

bool QueuePair::send_now(uint32_t ppid, std::vector<uint8_t>&& bytes) {
    if (!llp_) return false;
    if (tx_queue_.empty()) {
        long r = llp_->send(ppid, bytes.data(), bytes.size());
        if (r >= 0) return true;
        if (r != -EWOULDBLOCK) {
            llp_failed(std::string("send failed: ") + std::strerror(int(-r)));
            return false;
        }
        tx_blocked_ = true;
    }
    tx_queue_.push_back({ppid, std::move(bytes)});
    return false;
}

bool QueuePair::send_segment(size_t n) {
    long r = llp_->send(kPpidDdpSegment, tx_buf_.data(), n);
    if (r >= 0) return true;
    if (r != -EWOULDBLOCK) {
        llp_failed(std::string("send failed: ") + std::strerror(int(-r)));
        return false;
    }
    // The segment is built and its DDP-SSN taken: keep it for the retry.
    tx_queue_.push_back({kPpidDdpSegment, std::vector<uint8_t>(tx_buf_.begin(), tx_buf_.begin() + ptrdiff_t(n))});
    tx_blocked_ = true;
    return false;
}

size_t QueuePair::gather(const std::vector<iwv_sge>& sges, uint64_t offset, uint8_t* out, size_t len) const {
    size_t done = 0;
    for (const iwv_sge& s : sges) {
        if (done == len) break;
        if (offset >= s.length) {
            offset -= s.length;
            continue;
        }
        const size_t take = std::min<uint64_t>(s.length - offset, len - done);
        std::memcpy(out + done, reinterpret_cast<const uint8_t*>(s.addr) + offset, take);
        done += take;
        offset = 0;
    }
    return done;
}

int QueuePair::transmit() {
    int work = 0;
    for (;;) {
        if (!llp_) return work;
        while (!tx_queue_.empty()) {
            TxMessage& m = tx_queue_.front();
            long r = llp_->send(m.ppid, m.bytes.data(), m.bytes.size());
            if (r == -EWOULDBLOCK) {
                tx_blocked_ = true;
                return work;
            }
            if (r < 0) {
                llp_failed(std::string("send failed: ") + std::strerror(int(-r)));
                return work;
            }
            tx_queue_.pop_front();
            ++work;
        }
        tx_blocked_ = false;
        if (close_when_sent_) {
            llp_->close(false);
            llp_.reset();
            return work;
        }
        if (state_ != IWV_QPS_RTS || !session_ || !session_->can_send_data()) return work;
        if (llp_->too_many_unacked()) { // RFC 5043 §10; SCTP's acks will wake us
            tx_blocked_ = true;
            return work;
        }
        if (!build_next_segment()) return work;
        ++work;
    }
}

// One segment of the most urgent job: Read Responses first (the peer's Read waits on them and
// they free IRD slots), then the send queue in order.
bool QueuePair::build_next_segment() {
    if (!irq_.empty()) {
        if (irq_.front().atomic)
            build_atomic_response(*irq_.front().atomic);
        else
            build_read_response(irq_.front());
        return llp_ && tx_queue_.empty();
    }
    if (sq_next_ >= sq_.size()) return false;
    SendWqe& w = sq_[sq_next_];
    const bool takes_credit = w.wr.opcode == IWV_WR_RDMA_READ || wr_is_atomic(w.wr.opcode);
    const size_t outstanding = orq_.size() + aq_.size();
    if (takes_credit && outstanding >= ord_) return false;                   // ORD credits (RFC 6581, RFC 7306 §5.2)
    if ((w.wr.send_flags & IWV_SEND_FENCE) && outstanding) return false;     // fence: earlier Reads and atomics first
    build_wqe_segment(w);
    return llp_ && tx_queue_.empty();
}

void QueuePair::build_wqe_segment(SendWqe& w) {
    const size_t max = llp_->max_message();
    uint8_t* out = tx_buf_.data();
    switch (w.wr.opcode) {
    case IWV_WR_SEND:
    case IWV_WR_SEND_WITH_INV: {
        const size_t room = max - kSsnSize - kUntaggedHeaderSize;
        const size_t chunk = size_t(std::min<uint64_t>(room, w.length - w.sent));
        const bool last = w.sent + chunk == w.length;
        const uint32_t inval = w.wr.opcode == IWV_WR_SEND_WITH_INV ? w.wr.invalidate_rkey : 0;
        DdpHeader h = make_untagged_header(send_opcode(w.wr), send_msn_, uint32_t(w.sent), last, inval);
        be::store16(out, session_->take_data_ssn());
        encode(h, std::span(out + kSsnSize, kUntaggedHeaderSize));
        gather(w.sges, w.sent, out + kSsnSize + kUntaggedHeaderSize, chunk);
        w.sent += chunk;
        if (last) {
            ++send_msn_;
            w.issued = w.done = true;
            ++sq_next_;
        }
        send_segment(kSsnSize + kUntaggedHeaderSize + chunk);
        break;
    }
    case IWV_WR_RDMA_WRITE: {
        const size_t room = max - kSsnSize - kTaggedHeaderSize;
        const size_t chunk = size_t(std::min<uint64_t>(room, w.length - w.sent));
        const bool last = w.sent + chunk == w.length;
        DdpHeader h = make_tagged_header(Opcode::rdma_write, w.wr.rdma.rkey, w.wr.rdma.remote_addr + w.sent, last);
        be::store16(out, session_->take_data_ssn());
        encode(h, std::span(out + kSsnSize, kTaggedHeaderSize));
        gather(w.sges, w.sent, out + kSsnSize + kTaggedHeaderSize, chunk);
        w.sent += chunk;
        if (last) {
            w.issued = w.done = true;
            ++sq_next_;
        }
        send_segment(kSsnSize + kTaggedHeaderSize + chunk);
        break;
    }
    case IWV_WR_RDMA_READ: {
        ReadRequestHeader rr;
        if (!w.sges.empty()) {
            rr.sink_stag = w.sges[0].lkey; // iWARP: the region's one STag names it locally and remotely
            rr.sink_to = w.sges[0].addr;   // regions are not zero-based: TO = virtual address
        }
        rr.size = uint32_t(w.length);
        rr.src_stag = w.wr.rdma.rkey;
        rr.src_to = w.wr.rdma.remote_addr;
        DdpHeader h = make_untagged_header(Opcode::read_request, read_msn_++, 0, true);
        be::store16(out, session_->take_data_ssn());
        encode(h, std::span(out + kSsnSize, kUntaggedHeaderSize));
        encode(rr, std::span(out + kSsnSize + kUntaggedHeaderSize, kReadRequestHeaderSize));
        w.issued = true;
        ++sq_next_;
        orq_.push_back(w.seq);
        rx_.orq.push_back(OutstandingRead{rr.sink_stag, rr.sink_to, rr.size});
        send_segment(kSsnSize + kUntaggedHeaderSize + kReadRequestHeaderSize);
        break;
    }
    case IWV_WR_ATOMIC_CMP_AND_SWP:
    case IWV_WR_ATOMIC_SWAP:
    case IWV_WR_ATOMIC_FETCH_AND_ADD: {
        AtomicRequestHeader ar;
        const bool swap = w.wr.opcode == IWV_WR_ATOMIC_SWAP;
        const bool cas = w.wr.opcode == IWV_WR_ATOMIC_CMP_AND_SWP || swap;
        ar.aopcode = uint8_t(cas ? AtomicOp::cmp_swap : AtomicOp::fetch_add);
        ar.request_id = next_atomic_id_++;
        ar.stag = w.wr.atomic.rkey;
        ar.to = w.wr.atomic.remote_addr;
        // Unmasked, as verbs' atomics (Fig. 5: the fields an operation does not use are sent as
        // compare 0 and masks all ones); SWAP alone masks the compare out.
        ar.add_swap = cas ? w.wr.atomic.swap : w.wr.atomic.compare_add;
        ar.add_swap_mask = cas ? ~0ull : 0;
        ar.compare = cas && !swap ? w.wr.atomic.compare_add : 0;
        ar.compare_mask = swap ? 0 : ~0ull; // SWAP: no bit is compared, so it always swaps
        DdpHeader h = make_untagged_header(Opcode::atomic_request, read_msn_++, 0, true); // QN 1, with the Reads
        be::store16(out, session_->take_data_ssn());
        encode(h, std::span(out + kSsnSize, kUntaggedHeaderSize));
        encode(ar, std::span(out + kSsnSize + kUntaggedHeaderSize, kAtomicRequestHeaderSize));
        w.issued = true;
        ++sq_next_;
        aq_.push_back(w.seq);
        rx_.atomics.push_back(OutstandingAtomic{ar.request_id});
        send_segment(kSsnSize + kUntaggedHeaderSize + kAtomicRequestHeaderSize);
        break;
    }
    default: throw sctpm::Error("iwarp: unsupported WR opcode reached the transmitter");
    }
    complete_in_order();
}

void QueuePair::build_read_response(ReadResponseJob& job) {
    if (!job.started) {
        // The source was valid when the Request was delivered; it may have been invalidated or
        // deregistered since (RFC 5040 §7.2 applies at Response time too).
        TagCheck c = check_read_source(stags_, pd_, job.rr);
        if (!c.ok()) {
            TerminateHeader t;
            t.code = *c.error;
            t.rdma = job.rr;
            send_terminate(t, "Read source no longer valid when answering (RFC 5040 §7.2)");
            enter_error("Read source no longer valid when answering", std::nullopt);
            return;
        }
        job.src_address = c.address;
        job.started = true;
    }
    const size_t room = llp_->max_message() - kSsnSize - kTaggedHeaderSize;
    const size_t chunk = std::min<size_t>(room, job.rr.size - job.sent);
    const bool last = job.sent + chunk == job.rr.size;
    uint8_t* out = tx_buf_.data();
    DdpHeader h = make_tagged_header(Opcode::read_response, job.rr.sink_stag, job.rr.sink_to + job.sent, last);
    be::store16(out, session_->take_data_ssn());
    encode(h, std::span(out + kSsnSize, kTaggedHeaderSize));
    if (chunk) std::memcpy(out + kSsnSize + kTaggedHeaderSize, reinterpret_cast<const uint8_t*>(job.src_address) + job.sent, chunk);
    job.sent += uint32_t(chunk);
    if (last) {
        irq_.pop_front();
        --rx_.reads_active; // the IRD slot is free once the Response is out (RFC 5040 §5.2.2)
    }
    send_segment(kSsnSize + kTaggedHeaderSize + chunk);
}

// The Response of an Atomic Request carried out at delivery (RFC 7306 §5.2.2): QN 3, one segment,
// in request order with the Read Responses ahead of it.
void QueuePair::build_atomic_response(const AtomicResponseHeader& resp) {
    uint8_t* out = tx_buf_.data();
    DdpHeader h = make_untagged_header(Opcode::atomic_response, atomic_response_msn_++, 0, true);
    be::store16(out, session_->take_data_ssn());
    encode(h, std::span(out + kSsnSize, kUntaggedHeaderSize));
    encode(resp, std::span(out + kSsnSize + kUntaggedHeaderSize, kAtomicResponseHeaderSize));
    irq_.pop_front();
    --rx_.reads_active; // its IRD slot is free once the Response is out, as a Read's
    send_segment(kSsnSize + kUntaggedHeaderSize + kAtomicResponseHeaderSize);
}

// RFC 5040 §5.4 / §7.1: the first error only; one Terminate (QN 2, MSN 1), then the session's
// own Terminate (RFC 5043 §6.2: it follows any RDMAP Terminate). The association stays open so
// that both reach the peer; nothing else is sent on the stream.
void QueuePair::send_terminate(const TerminateHeader& t, const std::string& why) {
    if (terminate_sent_ || !session_ || !llp_) return;
    terminate_sent_ = t.code;
    terminate_text_ = why;
    if (session_->can_send_data()) {
        std::vector<uint8_t> m(kSsnSize + kUntaggedHeaderSize + t.size());
        be::store16(m.data(), session_->take_data_ssn());
        encode(make_untagged_header(Opcode::terminate, 1, 0, true), std::span(m).subspan(kSsnSize));
        encode(t, std::span(m).subspan(kSsnSize + kUntaggedHeaderSize));
        send_now(kPpidDdpSegment, std::move(m));
    }
    send_session_terminate();
}

void QueuePair::send_session_terminate() {
    if (session_ && session_->can_terminate() && llp_) send_now(kPpidSessionControl, session_->terminate());
}

} // namespace iwarp
