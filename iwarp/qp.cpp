// SPDX-License-Identifier: BSD-3-Clause
// Queue pair: state machine, posting, completions in order, flush; see qp.hpp.
#include "qp.hpp"

#include "error.hpp"

#include <algorithm>

namespace iwarp {

namespace {

const char* state_name(iwv_qp_state s) {
    switch (s) {
    case IWV_QPS_RESET: return "RESET";
    case IWV_QPS_INIT: return "INIT";
    case IWV_QPS_RTR: return "RTR";
    case IWV_QPS_RTS: return "RTS";
    case IWV_QPS_ERR: return "ERR";
    }
    return "?";
}

bool legal_transition(iwv_qp_state from, iwv_qp_state to) {
    if (to == IWV_QPS_ERR || to == IWV_QPS_RESET || to == from) return true;
    return (from == IWV_QPS_RESET && to == IWV_QPS_INIT) || (from == IWV_QPS_INIT && to == IWV_QPS_RTR) ||
           (from == IWV_QPS_RTR && to == IWV_QPS_RTS);
}

} // namespace

uint32_t vendor_code(const TermCode& c) { return uint32_t(c.layer) << 16 | uint32_t(c.etype) << 8 | c.code; }

iwv_wc_status status_for_terminate(const TermCode& c) {
    if (c.layer == Layer::rdmap && c.etype == uint8_t(RdmapEtype::remote_protection)) return IWV_WC_REM_ACCESS_ERR;
    if (c.layer == Layer::ddp && c.etype == uint8_t(DdpEtype::tagged)) return IWV_WC_REM_ACCESS_ERR;
    if (c.layer == Layer::ddp && c.etype == uint8_t(DdpEtype::untagged)) return IWV_WC_REM_INV_REQ_ERR;
    return IWV_WC_REM_OP_ERR;
}

QueuePair::QueuePair(uint32_t qp_num, StagTable& stags, PdHandle pd, CompletionQueue& send_cq,
                     CompletionQueue& recv_cq, const iwv_qp_cap& cap, bool sq_sig_all)
    : num_(qp_num), stags_(stags), pd_(pd), send_cq_(send_cq), recv_cq_(recv_cq), cap_(cap), sq_sig_all_(sq_sig_all) {
    rx_.stags = &stags_;
    rx_.pd = pd_;
    ++send_cq_.users;
    ++recv_cq_.users;
}

QueuePair::~QueuePair() {
    if (llp_) llp_->close(true);
    --send_cq_.users;
    --recv_cq_.users;
}

void QueuePair::event(iwv_event_type type, std::string detail, std::optional<SessionControl> control) {
    events_.push_back({type, std::move(detail), std::move(control)});
}

int QueuePair::modify(iwv_qp_state to, std::string& error) {
    if (!legal_transition(state_, to)) {
        error = std::string("iwv_modify_qp: ") + state_name(state_) + " -> " + state_name(to) + " is not allowed";
        return EINVAL;
    }
    if (to == IWV_QPS_ERR) {
        if (state_ != IWV_QPS_ERR) {
            if (session_ && session_->can_send_data()) disconnect();
            enter_error("moved to ERR by the user", std::nullopt);
        }
        return 0;
    }
    if (to == IWV_QPS_RESET) { // verbs: everything outstanding is dropped without completions
        if (llp_) llp_->close(true);
        llp_.reset();
        session_.reset();
        sq_.clear();
        sq_next_ = 0;
        atomics_done_ = 0;
        rq_.clear();
        irq_.clear();
        orq_.clear();
        aq_.clear();
        tx_queue_.clear();
        early_.clear();
        early_bytes_ = 0;
        waiting_.clear();
        const StagTable* st = rx_.stags;
        rx_ = ReceiverState{};
        rx_.stags = st;
        rx_.pd = pd_;
        send_msn_ = read_msn_ = atomic_response_msn_ = 1;
        ord_ = 0;
        terminate_sent_.reset();
        terminate_received_.reset();
        terminate_text_.clear();
        close_when_sent_ = false;
    }
    state_ = to;
    return 0;
}

int QueuePair::check_sges(const iwv_sge* sg, int n, uint32_t need_access, uint64_t* total, std::string& error) const {
    uint64_t sum = 0;
    for (int i = 0; i < n; ++i) {
        const MemoryRegion* mr = stags_.find(sg[i].lkey);
        if (!mr || !mr->valid || mr->pd != pd_) {
            error = "SGE " + std::to_string(i) + ": lkey " + std::to_string(sg[i].lkey) +
                    (mr ? (mr->valid ? " belongs to another PD" : " was invalidated") : " names no registered region");
            return EINVAL;
        }
        if ((mr->access & need_access) != need_access) {
            error = "SGE " + std::to_string(i) + ": region lacks local write access";
            return EINVAL;
        }
        if (sg[i].addr < mr->addr || sg[i].addr - mr->addr > mr->length || sg[i].length > mr->length - (sg[i].addr - mr->addr)) {
            error = "SGE " + std::to_string(i) + ": [addr, addr + length) is outside its region";
            return EINVAL;
        }
        sum += sg[i].length;
    }
    if (sum > 0xFFFFFFFFull) {
        error = "SGL longer than 2^32 - 1 bytes";
        return EINVAL;
    }
    *total = sum;
    return 0;
}

int QueuePair::post_send(const iwv_send_wr* wr, const iwv_send_wr** bad, std::string& error) {
    for (; wr; wr = wr->next) {
        *bad = wr;
        if (state_ != IWV_QPS_RTS && state_ != IWV_QPS_ERR) {
            error = std::string("iwv_post_send: QP is in ") + state_name(state_) + ", not RTS";
            return EINVAL;
        }
        if (state_ == IWV_QPS_RTS && !llp_) {
            error = "iwv_post_send: QP is in RTS but not connected (use iwv_connect/iwv_accept)";
            return ENOTCONN;
        }
        if (wr->num_sge < 0 || uint32_t(wr->num_sge) > cap_.max_send_sge) {
            error = "iwv_post_send: num_sge " + std::to_string(wr->num_sge) + " exceeds max_send_sge " +
                    std::to_string(cap_.max_send_sge);
            return EINVAL;
        }
        const auto op = wr->opcode;
        const bool atomic = wr_is_atomic(op);
        if (op != IWV_WR_SEND && op != IWV_WR_SEND_WITH_INV && op != IWV_WR_RDMA_WRITE && op != IWV_WR_RDMA_READ &&
            !atomic) {
            error = "iwv_post_send: opcode " + std::to_string(int(op)) + " is not supported";
            return EINVAL;
        }
        if (atomic && (wr->num_sge != 1 || wr->sg_list[0].length != 8)) {
            error = "iwv_post_send: an atomic returns the 8-byte original value into one SGE of 8 bytes";
            return EINVAL;
        }
        if (op == IWV_WR_RDMA_READ && wr->num_sge > 1) {
            error = "iwv_post_send: an RDMA Read has one sink buffer (one SGE): its Read Request names one STag";
            return EINVAL;
        }
        if ((op == IWV_WR_RDMA_READ || atomic) && state_ == IWV_QPS_RTS && ord_ == 0) {
            error = "iwv_post_send: no RDMA Read or atomic credits (ORD negotiated to 0; set initiator_depth and the peer's "
                    "responder_resources)";
            return EINVAL;
        }
        if (sq_.size() >= cap_.max_send_wr) {
            error = "iwv_post_send: send queue full (" + std::to_string(cap_.max_send_wr) + " WRs)";
            return ENOMEM;
        }
        SendWqe w;
        w.seq = next_seq_++;
        w.wr = *wr;
        w.wr.next = nullptr;
        w.sges.assign(wr->sg_list, wr->sg_list + wr->num_sge);
        w.wr.sg_list = nullptr;
        if (state_ == IWV_QPS_ERR) { // verbs: WRs posted to a QP in error complete flushed
            w.done = true;
            w.status = IWV_WC_WR_FLUSH_ERR;
            sq_.push_back(std::move(w));
            continue;
        }
        const uint32_t sink_access = op == IWV_WR_RDMA_READ || atomic ? uint32_t(kLocalWrite) : 0u;
        if (int rc = check_sges(w.sges.data(), wr->num_sge, sink_access, &w.length, error)) {
            error = "iwv_post_send: " + error;
            return rc;
        }
        sq_.push_back(std::move(w));
    }
    *bad = nullptr;
    complete_in_order();
    transmit();
    return 0;
}

int QueuePair::post_recv(const iwv_recv_wr* wr, const iwv_recv_wr** bad, std::string& error) {
    for (; wr; wr = wr->next) {
        *bad = wr;
        if (state_ == IWV_QPS_RESET) {
            error = "iwv_post_recv: QP is in RESET";
            return EINVAL;
        }
        if (wr->num_sge < 0 || uint32_t(wr->num_sge) > cap_.max_recv_sge) {
            error = "iwv_post_recv: num_sge " + std::to_string(wr->num_sge) + " exceeds max_recv_sge " +
                    std::to_string(cap_.max_recv_sge);
            return EINVAL;
        }
        if (rq_.size() >= cap_.max_recv_wr) {
            error = "iwv_post_recv: receive queue full (" + std::to_string(cap_.max_recv_wr) + " WRs)";
            return ENOMEM;
        }
        RecvWqe r;
        r.wr_id = wr->wr_id;
        r.sges.assign(wr->sg_list, wr->sg_list + wr->num_sge);
        if (state_ == IWV_QPS_ERR) {
            iwv_wc wc{};
            wc.wr_id = r.wr_id;
            wc.status = IWV_WC_WR_FLUSH_ERR;
            wc.opcode = IWV_WC_RECV;
            wc.qp_num = num_;
            recv_cq_.push(wc, true);
            continue;
        }
        if (int rc = check_sges(r.sges.data(), wr->num_sge, kLocalWrite, &r.length, error)) {
            error = "iwv_post_recv: " + error;
            return rc;
        }
        // The validator sees the buffer as one range of MO values; placement scatters it.
        rx_.recv.push_back(RecvBuffer{0, uint32_t(r.length)});
        rq_.push_back(std::move(r));
    }
    *bad = nullptr;
    return 0;
}

void QueuePair::query(iwv_qp_attr* a) const {
    *a = iwv_qp_attr{};
    a->state = state_;
    a->qp_num = num_;
    a->ird = uint16_t(rx_.ird);
    a->ord = uint16_t(ord_);
    a->max_segment = uint32_t(rx_.max_message == kDefaultMaxMessage ? 0 : rx_.max_message);
    a->terminate_sent = terminate_sent_.has_value();
    a->terminate_received = terminate_received_.has_value();
    const std::optional<TermCode>& t = terminate_sent_ ? terminate_sent_ : terminate_received_;
    if (t) {
        a->terminate_code = vendor_code(*t);
        std::string text = describe(*t);
        if (!terminate_text_.empty()) text += ": " + terminate_text_;
        text.copy(a->terminate_text, sizeof a->terminate_text - 1);
    }
}

bool QueuePair::atomic_original(uint64_t index, uint64_t* original) const {
    if (index >= atomics_done_ || atomics_done_ - index > IWV_ATOMIC_LOG) return false;
    *original = atomic_log_[index % IWV_ATOMIC_LOG];
    return true;
}

void QueuePair::push_send_completion(const SendWqe& w) {
    const bool signaled = sq_sig_all_ || (w.wr.send_flags & IWV_SEND_SIGNALED);
    if (!signaled && w.status == IWV_WC_SUCCESS) return;
    iwv_wc wc{};
    wc.wr_id = w.wr.wr_id;
    wc.status = w.status;
    wc.vendor_err = w.vendor_err;
    wc.opcode = w.wr.opcode == IWV_WR_RDMA_WRITE            ? IWV_WC_RDMA_WRITE
                : w.wr.opcode == IWV_WR_RDMA_READ           ? IWV_WC_RDMA_READ
                : w.wr.opcode == IWV_WR_ATOMIC_CMP_AND_SWP   ? IWV_WC_COMP_SWAP
                : w.wr.opcode == IWV_WR_ATOMIC_SWAP          ? IWV_WC_COMP_SWAP
                : w.wr.opcode == IWV_WR_ATOMIC_FETCH_AND_ADD ? IWV_WC_FETCH_ADD
                                                            : IWV_WC_SEND;
    wc.byte_len = uint32_t(w.length);
    wc.qp_num = num_;
    if (w.status == IWV_WC_WR_FLUSH_ERR && !w.issued && w.sent == 0) wc.wc_flags |= IWV_WC_NOT_SENT;
    send_cq_.push(wc, true);
}

// RFC 5040 §5.5: operations complete locally in the order they were submitted, so a Send
// posted after a Read waits for the Read's Response.
void QueuePair::complete_in_order() {
    while (!sq_.empty() && sq_.front().done) {
        push_send_completion(sq_.front());
        sq_.pop_front();
        if (sq_next_ > 0) --sq_next_;
    }
}

// Everything not yet completed completes in error, also WRs already on the wire but waiting
// behind an unfinished one (completions are in order, and after an error come only flushes).
void QueuePair::flush() {
    for (auto& w : sq_) {
        w.done = true;
        if (w.status == IWV_WC_SUCCESS) w.status = IWV_WC_WR_FLUSH_ERR;
    }
    sq_next_ = sq_.size();
    complete_in_order();
    for (auto& r : rq_) {
        iwv_wc wc{};
        wc.wr_id = r.wr_id;
        wc.status = IWV_WC_WR_FLUSH_ERR;
        wc.opcode = IWV_WC_RECV;
        wc.qp_num = num_;
        recv_cq_.push(wc, true);
    }
    rq_.clear();
    rx_.recv.clear();
    waiting_.clear();
    irq_.clear();
    orq_.clear();
    rx_.orq.clear();
    aq_.clear();
    rx_.atomics.clear();
}

void QueuePair::enter_error(const std::string& why, std::optional<TermCode> received) {
    if (state_ == IWV_QPS_ERR) return;
    state_ = IWV_QPS_ERR;
    if (received) {
        // The remote error is the oldest unfinished operation's (RFC 5040 §7); the rest flush.
        for (auto& w : sq_)
            if (!w.done) {
                w.status = status_for_terminate(*received);
                w.vendor_err = vendor_code(*received);
                break;
            }
    }
    flush();
    event(IWV_EVENT_QP_ERROR, why);
}

// ---- connection ---------------------------------------------------------------------------------

void QueuePair::connecting() {
    std::string ignored;
    if (state_ == IWV_QPS_INIT) modify(IWV_QPS_RTR, ignored);
}

void QueuePair::fail_connect(const std::string& why) {
    if (state_ == IWV_QPS_ERR) return;
    state_ = IWV_QPS_ERR;
    flush();
    event(IWV_EVENT_UNREACHABLE, why);
}

void QueuePair::start_active(std::unique_ptr<Llp> llp, IrdOrdPair mine, std::span<const uint8_t> private_data) {
    llp_ = std::move(llp);
    session_.emplace(SessionRole::active);
    rx_.max_message = llp_->max_message();
    tx_buf_.resize(llp_->max_message());
    rx_.ird = mine.ird; // until the Accept lowers them
    ord_ = mine.ord;
    send_now(kPpidSessionControl, session_->initiate(mine, private_data));
}

void QueuePair::start_passive(std::unique_ptr<Llp> llp, Session session, IrdOrdPair mine,
                              std::span<const uint8_t> private_data) {
    llp_ = std::move(llp);
    session_.emplace(std::move(session));
    rx_.max_message = llp_->max_message();
    tx_buf_.resize(llp_->max_message());
    auto accept = session_->accept(mine, private_data);
    rx_.ird = session_->negotiated().ird;
    ord_ = session_->negotiated().ord;
    std::string ignored;
    if (state_ == IWV_QPS_INIT) modify(IWV_QPS_RTR, ignored);
    modify(IWV_QPS_RTS, ignored);
    send_now(kPpidSessionControl, std::move(accept));
}

void QueuePair::disconnect() {
    if (!llp_) return;
    if (session_ && !session_->finished()) send_session_terminate(); // may find the association gone
    close_when_sent_ = true;
    if (llp_ && tx_queue_.empty()) {
        llp_->close(false);
        llp_.reset();
    }
    enter_error("disconnected locally", std::nullopt);
}

void QueuePair::llp_failed(const std::string& why) {
    if (llp_) {
        llp_->close(true);
        llp_.reset();
    }
    tx_queue_.clear();
    if (state_ != IWV_QPS_ERR) {
        enter_error(why, std::nullopt);
        event(IWV_EVENT_DISCONNECTED, why);
    }
}

int QueuePair::progress() {
    if (!llp_) return 0;
    int work = receive();
    if (llp_) work += transmit();
    return work;
}

} // namespace iwarp
