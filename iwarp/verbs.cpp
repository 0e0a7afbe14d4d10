// SPDX-License-Identifier: BSD-3-Clause
// The C ABI of iwarp_verbs.h: argument checks, the device lock, and a call into the device or
// the object. Nothing here knows the protocol.
#include "device.hpp"
#include "error.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>

using iwarp::Device;
using iwarp::IrdOrdPair;

namespace {

using Lock = std::unique_lock<std::mutex>;

// Standby mode: the owner counts as present for the whole of a call that may run long.
class OwnerInside {
public:
    explicit OwnerInside(Device& d) : d_(d) { d_.owner_inside(true); }
    ~OwnerInside() { d_.owner_inside(false); }
    OwnerInside(const OwnerInside&) = delete;
    OwnerInside& operator=(const OwnerInside&) = delete;

private:
    Device& d_;
};

IrdOrdPair ird_ord(const iwv_conn_param* p) {
    return p ? IrdOrdPair{std::min<uint16_t>(p->responder_resources, iwarp::kIrdOrdMax),
                          std::min<uint16_t>(p->initiator_depth, iwarp::kIrdOrdMax)}
             : IrdOrdPair{};
}

std::vector<uint8_t> private_data(const iwv_conn_param* p) {
    if (!p || !p->private_data || !p->private_data_len) return {};
    auto* b = static_cast<const uint8_t*>(p->private_data);
    return {b, b + p->private_data_len};
}

bool private_data_ok(Device& d, const iwv_conn_param* p, const char* who) {
    if (p && p->private_data_len > IWV_MAX_PRIVATE_DATA) {
        d.last_error = std::string(who) + ": private data of " + std::to_string(p->private_data_len) +
                       " bytes exceeds " + std::to_string(IWV_MAX_PRIVATE_DATA);
        return false;
    }
    return true;
}

} // namespace

extern "C" {

void iwv_device_attr_init(iwv_device_attr* attr) { *attr = iwv_device_attr{}; }

iwv_device* iwv_open_device(const iwv_device_attr* attr, char* err, size_t errlen) {
    iwv_device_attr defaults{};
    auto* dev = new iwv_device;
    try {
        dev->impl = std::make_unique<Device>(attr ? *attr : defaults, dev);
        return dev;
    } catch (const std::exception& e) {
        if (err && errlen) std::snprintf(err, errlen, "iwv_open_device: %s", e.what());
        delete dev;
        return nullptr;
    }
}

int iwv_close_device(iwv_device* dev) {
    {
        Lock l(dev->impl->mu);
        if (dev->impl->pds || dev->impl->cqs || dev->impl->qps) {
            dev->impl->last_error = "iwv_close_device: PDs, CQs or QPs still exist";
            return EBUSY;
        }
    }
    delete dev;
    return 0;
}

const char* iwv_last_error(iwv_device* dev) {
    // A copy per thread: another thread's failing call may replace the device's text meanwhile.
    thread_local std::string copy;
    Lock l(dev->impl->mu);
    copy = dev->impl->last_error;
    return copy.c_str();
}
uint16_t iwv_device_sctp_port(iwv_device* dev) { return dev->impl->sctp_port(); }
uint16_t iwv_device_udp_port(iwv_device* dev) { return dev->impl->udp_port(); }
uint64_t iwv_device_activity(iwv_device* dev) { return dev->impl->activity(); }
int iwv_device_fd(iwv_device* dev) { return dev->impl->fd(); }
void iwv_device_owner_present(iwv_device* dev) { dev->impl->owner_present(); }
void iwv_device_owner_back(iwv_device* dev) { dev->impl->owner_back(); }
void iwv_device_owner_waiting(iwv_device* dev, int waiting) { dev->impl->owner_waiting(waiting != 0); }
void iwv_device_owner_inside(iwv_device* dev, int inside) { dev->impl->owner_inside(inside != 0); }

int iwv_device_tx_blocked(iwv_device* dev) {
    Device& d = *dev->impl;
    Lock l(d.mu);
    return d.any_tx_blocked() ? 1 : 0;
}

int iwv_progress(iwv_device* dev, int timeout_ms) {
    Device& d = *dev->impl;
    d.owner_present(); // before the lock: a standby thread serving under it steps aside
    Lock l(d.mu);
    if (d.mode() == IWV_PROGRESS_THREAD) {
        if (timeout_ms) d.changed.wait_for(l, std::chrono::milliseconds(timeout_ms < 0 ? 100 : timeout_ms));
        return 0;
    }
    int work = d.poll_locked();
    if (work == 0 && timeout_ms != 0) {
        d.wait_for_work(l, timeout_ms); // one wait for an upcall, then one more round
        d.owner_present();
        work = d.poll_locked();
    }
    return work;
}

// ---- PD / MR ------------------------------------------------------------------------------------

iwv_pd* iwv_alloc_pd(iwv_device* dev) {
    Lock l(dev->impl->mu);
    try {
        auto* pd = new iwv_pd{dev, dev->impl->stags.alloc_pd(), 0};
        ++dev->impl->pds;
        return pd;
    } catch (const std::exception& e) {
        dev->impl->last_error = e.what();
        return nullptr;
    }
}

int iwv_dealloc_pd(iwv_pd* pd) {
    Device& d = *pd->dev->impl;
    Lock l(d.mu);
    if (pd->users) {
        d.last_error = "iwv_dealloc_pd: MRs or QPs still use the PD";
        return EBUSY;
    }
    d.stags.dealloc_pd(pd->handle);
    --d.pds;
    delete pd;
    return 0;
}

iwv_mr* iwv_reg_mr(iwv_pd* pd, void* addr, size_t length, int access) {
    Device& d = *pd->dev->impl;
    Lock l(d.mu);
    try {
        const uint32_t stag = d.stags.register_region(pd->handle, reinterpret_cast<uintptr_t>(addr), length, uint32_t(access));
        ++pd->users;
        return new iwv_mr{pd->dev, pd, addr, length, stag, stag};
    } catch (const std::exception& e) {
        d.last_error = std::string("iwv_reg_mr: ") + e.what();
        return nullptr;
    }
}

int iwv_dereg_mr(iwv_mr* mr) {
    Device& d = *mr->device->impl;
    Lock l(d.mu);
    d.stags.deregister(mr->lkey);
    --mr->pd->users;
    delete mr;
    return 0;
}

int iwv_invalidate_mr(iwv_mr* mr) {
    Device& d = *mr->device->impl;
    Lock l(d.mu);
    if (!d.stags.invalidate(mr->lkey)) {
        d.last_error = "iwv_invalidate_mr: the STag is already invalid";
        return EINVAL;
    }
    return 0;
}

int iwv_mr_valid(iwv_mr* mr) {
    Device& d = *mr->device->impl;
    Lock l(d.mu);
    const iwarp::MemoryRegion* r = d.stags.find(mr->lkey);
    return r && r->valid;
}

// ---- CQ -----------------------------------------------------------------------------------------

iwv_cq* iwv_create_cq(iwv_device* dev, int cqe) {
    Device& d = *dev->impl;
    Lock l(d.mu);
    if (cqe <= 0) {
        d.last_error = "iwv_create_cq: cqe must be positive";
        return nullptr;
    }
    try {
        auto* cq = new iwv_cq{dev, std::make_unique<iwarp::CompletionQueue>(size_t(cqe))};
        ++d.cqs;
        return cq;
    } catch (const std::exception& e) {
        d.last_error = e.what();
        return nullptr;
    }
}

int iwv_destroy_cq(iwv_cq* cq) {
    Device& d = *cq->dev->impl;
    Lock l(d.mu);
    if (cq->q->users) {
        d.last_error = "iwv_destroy_cq: QPs still use the CQ";
        return EBUSY;
    }
    --d.cqs;
    delete cq;
    return 0;
}

int iwv_poll_cq(iwv_cq* cq, int num_entries, iwv_wc* wc) {
    Device& d = *cq->dev->impl;
    d.owner_present();
    // The device thread fills the CQ: an empty one needs no lock (polling loops would otherwise
    // contend with the thread that moves the data).
    if (d.mode() == IWV_PROGRESS_THREAD && cq->q->seems_empty()) return 0;
    Lock l(d.mu);
    if (d.owner_drives() && cq->q->size() < size_t(num_entries)) d.poll_locked();
    return cq->q->poll(num_entries, wc);
}

int iwv_req_notify_cq(iwv_cq* cq, int solicited_only) {
    Lock l(cq->dev->impl->mu);
    cq->q->arm(solicited_only != 0);
    return 0;
}

int iwv_cq_fd(iwv_cq* cq) { return cq->q->fd(); }
int iwv_cq_pending(iwv_cq* cq) { return cq->q->seems_empty() ? 0 : 1; }

void iwv_cq_ack_event(iwv_cq* cq) {
    Lock l(cq->dev->impl->mu);
    cq->q->ack_event();
}

int iwv_cq_wait(iwv_cq* cq, int timeout_ms) {
    Device& d = *cq->dev->impl;
    Lock l(d.mu);
    return d.wait(l, timeout_ms, [&] { return cq->q->size() > 0 || cq->q->overflowed(); }) ? 1 : 0;
}

// ---- QP -----------------------------------------------------------------------------------------

iwv_qp* iwv_create_qp(iwv_pd* pd, const iwv_qp_init_attr* attr) {
    Device& d = *pd->dev->impl;
    Lock l(d.mu);
    if (!attr || !attr->send_cq || !attr->recv_cq || attr->send_cq->dev != pd->dev || attr->recv_cq->dev != pd->dev) {
        d.last_error = "iwv_create_qp: send_cq and recv_cq must be CQs of the PD's device";
        return nullptr;
    }
    if (attr->cap.max_send_wr == 0 || attr->cap.max_recv_wr == 0) {
        d.last_error = "iwv_create_qp: max_send_wr and max_recv_wr must be positive";
        return nullptr;
    }
    static std::atomic<uint32_t> next_num{1}; // shared by all devices, each under its own lock
    auto* qp = new iwv_qp{pd->dev, pd, attr->send_cq, attr->recv_cq, attr->qp_context, nullptr};
    qp->q = std::make_unique<iwarp::QueuePair>(next_num++, d.stags, pd->handle, *attr->send_cq->q, *attr->recv_cq->q,
                                               attr->cap, attr->sq_sig_all != 0);
    qp->q->user_handle = qp;
    qp->q->set_early_limit(d.early_bytes());
    ++pd->users;
    ++d.qps;
    d.add_qp(qp);
    return qp;
}

int iwv_destroy_qp(iwv_qp* qp) {
    Device& d = *qp->dev->impl;
    Lock l(d.mu);
    d.remove_qp(qp);
    --qp->pd->users;
    --d.qps;
    delete qp;
    return 0;
}

int iwv_modify_qp(iwv_qp* qp, iwv_qp_state state) {
    Device& d = *qp->dev->impl;
    Lock l(d.mu);
    int rc = qp->q->modify(state, d.last_error);
    d.after_user_call();
    return rc;
}

int iwv_query_qp(iwv_qp* qp, iwv_qp_attr* attr) {
    Lock l(qp->dev->impl->mu);
    qp->q->query(attr);
    return 0;
}

uint32_t iwv_qp_num(iwv_qp* qp) { return qp->q->num(); }

uint64_t iwv_qp_atomics_done(iwv_qp* qp) {
    Lock l(qp->dev->impl->mu);
    return qp->q->atomics_done();
}

int iwv_qp_atomic_original(iwv_qp* qp, uint64_t index, uint64_t* original) {
    Lock l(qp->dev->impl->mu);
    return qp->q->atomic_original(index, original) ? 0 : ENOENT;
}

int iwv_post_send(iwv_qp* qp, iwv_send_wr* wr, iwv_send_wr** bad_wr) {
    Device& d = *qp->dev->impl;
    // It posts: it is there (standby mode) however long the post copies, and will drive progress.
    OwnerInside inside(d);
    Lock l(d.mu);
    const iwv_send_wr* bad = nullptr;
    int rc = qp->q->post_send(wr, &bad, d.last_error);
    if (bad_wr) *bad_wr = const_cast<iwv_send_wr*>(bad);
    d.after_user_call();
    return rc;
}

int iwv_post_recv(iwv_qp* qp, iwv_recv_wr* wr, iwv_recv_wr** bad_wr) {
    Device& d = *qp->dev->impl;
    d.owner_present();
    Lock l(d.mu);
    const iwv_recv_wr* bad = nullptr;
    int rc = qp->q->post_recv(wr, &bad, d.last_error);
    if (bad_wr) *bad_wr = const_cast<iwv_recv_wr*>(bad);
    d.after_user_call();
    return rc;
}

// ---- connections --------------------------------------------------------------------------------

int iwv_connect(iwv_qp* qp, const char* address, uint16_t sctp_port, uint16_t udp_port, const iwv_conn_param* param) {
    Device& d = *qp->dev->impl;
    Lock l(d.mu);
    if (!address) {
        d.last_error = "iwv_connect: no address";
        return EINVAL;
    }
    if (!private_data_ok(d, param, "iwv_connect")) return EINVAL;
    int rc = d.connect(qp, address, sctp_port, udp_port, ird_ord(param), private_data(param));
    d.after_user_call();
    return rc;
}

int iwv_adopt(iwv_device* dev, iwv_qp* qp, void* so, int one_to_many, uint32_t assoc, int active,
              const iwv_conn_param* param) {
    Device& d = *dev->impl;
    Lock l(d.mu);
    if (!private_data_ok(d, param, "iwv_adopt")) return EINVAL;
    try {
        auto llp = d.adopt_socket(static_cast<struct socket*>(so), one_to_many != 0, assoc);
        int rc = d.adopt(qp, std::move(llp), active != 0, ird_ord(param), private_data(param));
        d.after_user_call();
        return rc;
    } catch (const std::exception& e) {
        d.last_error = e.what();
        return EINVAL;
    }
}

int iwv_get_event(iwv_device* dev, iwv_event* ev, int timeout_ms) {
    Device& d = *dev->impl;
    if (timeout_ms == 0 && d.mode() == IWV_PROGRESS_THREAD && !d.events_waiting()) return 0; // as in iwv_poll_cq
    Lock l(d.mu);
    std::optional<iwv_event> e;
    d.wait(l, timeout_ms, [&] { return (e = d.next_event()).has_value(); });
    if (!e) return 0;
    *ev = *e;
    return 1;
}

int iwv_accept(iwv_conn_request* req, iwv_qp* qp, const iwv_conn_param* param) {
    Device& d = *qp->dev->impl;
    Lock l(d.mu);
    if (!private_data_ok(d, param, "iwv_accept")) return EINVAL;
    auto pd = private_data(param);
    int rc = d.accept(req, qp, ird_ord(param), pd);
    d.after_user_call();
    return rc;
}

int iwv_reject(iwv_conn_request* req, const void* data, uint16_t len) {
    Device& d = *req->device;
    Lock l(d.mu);
    if (len > IWV_MAX_PRIVATE_DATA) {
        d.last_error = "iwv_reject: private data of " + std::to_string(len) + " bytes exceeds " +
                       std::to_string(IWV_MAX_PRIVATE_DATA);
        return EINVAL;
    }
    auto* b = static_cast<const uint8_t*>(data);
    std::vector<uint8_t> pd(b, b + (b ? len : 0));
    int rc = d.reject(req, pd);
    d.after_user_call();
    return rc;
}

int iwv_disconnect(iwv_qp* qp) {
    Device& d = *qp->dev->impl;
    Lock l(d.mu);
    qp->q->disconnect();
    d.after_user_call();
    return 0;
}

} // extern "C"
