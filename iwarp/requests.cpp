// SPDX-License-Identifier: BSD-3-Clause
// Incoming associations waiting for their Initiate; see requests.hpp.
#include "requests.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace iwarp {

namespace {
constexpr size_t kMaxInitiateBytes = 2048; // a legal one has at most 516 (RFC 5043 §9)
}

void ConnRequests::add(std::unique_ptr<Llp> llp, Device* device, Clock::time_point now) {
    auto req = std::make_unique<iwv_conn_request>();
    req->device = device;
    req->llp = std::move(llp);
    req->since = now;
    drop_oldest_beyond(max_waiting_ ? max_waiting_ - 1 : 0);
    list_.push_back(std::move(req));
}

size_t ConnRequests::waiting() const {
    return size_t(std::count_if(list_.begin(), list_.end(), [](auto& r) { return !r->announced; }));
}

// Aborts the oldest associations still waiting for their Initiate until at most `keep` wait.
void ConnRequests::drop_oldest_beyond(size_t keep) {
    size_t n = waiting();
    for (auto it = list_.begin(); n > keep && it != list_.end();) {
        if ((*it)->announced) {
            ++it;
            continue;
        }
        (*it)->llp->close(true);
        it = list_.erase(it);
        --n;
    }
}

int ConnRequests::progress(Clock::time_point now, std::deque<iwv_event>& events) {
    int announced = 0;
    for (auto it = list_.begin(); it != list_.end();) {
        iwv_conn_request* req = it->get();
        bool drop = !req->announced && now - req->since > timeout_;
        while (!req->announced && !drop) {
            uint8_t buf[1024];
            LlpRead r = req->llp->read(buf, sizeof buf);
            if (r.n == -EWOULDBLOCK) break;
            if (r.closed || r.n < 0) {
                drop = true;
                break;
            }
            if (req->partial.empty() && r.ppid != kPpidSessionControl) {
                drop = true; // data before the Initiate: not a legal sequence
                break;
            }
            req->partial.insert(req->partial.end(), buf, buf + r.n);
            if (req->partial.size() > kMaxInitiateBytes) drop = true;
            if (!r.eor) continue;
            auto out = req->session.on_control(req->partial);
            if (out.event != Session::Event::request) {
                drop = true;
                break;
            }
            req->announced = true;
            iwv_event ev{};
            ev.type = IWV_EVENT_CONNECT_REQUEST;
            ev.request = req;
            if (out.message.ird_ord) {
                ev.ird = out.message.ird_ord->ird;
                ev.ord = out.message.ird_ord->ord;
            }
            ev.private_data_len = uint16_t(std::min<size_t>(out.message.private_data.size(), IWV_MAX_PRIVATE_DATA));
            if (ev.private_data_len) // an Initiate without private data has no data() to copy from
                std::memcpy(ev.private_data, out.message.private_data.data(), ev.private_data_len);
            events.push_back(ev);
            ++announced;
        }
        if (drop && !req->announced) {
            req->llp->close(true);
            it = list_.erase(it);
        } else {
            ++it;
        }
    }
    return announced;
}

iwv_conn_request* ConnRequests::find_announced(iwv_conn_request* req) const {
    auto it = std::find_if(list_.begin(), list_.end(), [&](auto& r) { return r.get() == req; });
    return it != list_.end() && req->announced ? req : nullptr;
}

std::unique_ptr<iwv_conn_request> ConnRequests::take(iwv_conn_request* req) {
    auto it = std::find_if(list_.begin(), list_.end(), [&](auto& r) { return r.get() == req; });
    if (it == list_.end()) return nullptr;
    std::unique_ptr<iwv_conn_request> owned = std::move(*it);
    list_.erase(it);
    return owned;
}

} // namespace iwarp
