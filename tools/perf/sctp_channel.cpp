// SPDX-License-Identifier: BSD-3-Clause
// The transport core as a benchmark channel; see sctp_channel.hpp.
#include "sctp_channel.hpp"

#include <cstring>
#include <fstream>
#include <unistd.h>

namespace perf {

struct SctpChannel::Callbacks {
    static size_t on_message(void* ctx, sctpm_peer, uint64_t total, const void* head, size_t head_len, void** msg) {
        auto* s = static_cast<SctpChannel*>(ctx);
        s->sink_ = s->sinks_[s->done_ % 2].data();
        if (total > s->sinks_[0].size())
            die("sctp: message of " + std::to_string(total) + " bytes is larger than the sink");
        std::memcpy(s->sink_, head, head_len); // kept for the data check
        s->at_ = head_len;
        if (head_len == total) {
            ++s->done_;
            *msg = nullptr;
            return head_len;
        }
        *msg = s;
        return head_len;
    }
    static int on_dest(void* ctx, void*, iovec* iov, int) {
        auto* s = static_cast<SctpChannel*>(ctx);
        iov[0].iov_base = s->sink_ + s->at_;
        iov[0].iov_len = s->sinks_[0].size() - s->at_;
        return 1;
    }
    static void on_placed(void* ctx, void*, size_t filled, int last) {
        auto* s = static_cast<SctpChannel*>(ctx);
        s->at_ += filled;
        if (last)
            ++s->done_;
    }
    static void on_sent(void* ctx, void*, int status) {
        if (status != 0)
            die("sctp: send failed: " + std::string(std::strerror(-status)));
        --static_cast<SctpChannel*>(ctx)->pending_;
    }
    static void on_event(void*, const sctpm_event* ev) {
        if (ev->type != SCTPM_EV_ASSOC_UP && ev->type != SCTPM_EV_PATH_CHANGE && ev->type != SCTPM_EV_SHUTDOWN)
            die(std::string("sctp: transport event: ") + ev->detail);
    }
    static sctpm_peer on_hello(void* ctx, const void*, size_t, const char* card) {
        auto* s = static_cast<SctpChannel*>(ctx);
        if (s->peer_ < 0)
            s->peer_ = sctpm_peer_add(s->t_, card);
        return s->peer_;
    }
};

SctpChannel::SctpChannel(const SctpOptions& o) : sinks_{std::vector<char>(4u << 20), std::vector<char>(4u << 20)} {
    char err[SCTPM_ERRLEN];
    sctpm_config* cfg = sctpm_config_from_env(err, sizeof err);
    if (!cfg)
        die(err);
    if (!o.addr.empty()) {
        // Several addresses: through a multihome file, the way users configure multihoming.
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        std::string path = "/tmp/sctp-perf-multihome." + std::to_string(getpid());
        std::string list = o.addr;
        for (auto& c : list)
            if (c == ',')
                c = ' ';
        std::ofstream(path) << host << " " << list << "\n";
        if (sctpm_config_set(cfg, "multihome_file", path.c_str(), err, sizeof err) != 0)
            die(err);
    }
    for (const auto& [k, v] : o.settings)
        if (sctpm_config_set(cfg, k.c_str(), v.c_str(), err, sizeof err) != 0)
            die(err);
    sctpm_callbacks cb{this,
                       Callbacks::on_message,
                       Callbacks::on_dest,
                       Callbacks::on_placed,
                       Callbacks::on_sent,
                       Callbacks::on_event,
                       Callbacks::on_hello,
                       nullptr};
    t_ = sctpm_open(cfg, nullptr, "perf", 4, &cb, err, sizeof err);
    sctpm_config_free(cfg);
    if (!t_)
        die(err);
}

SctpChannel::~SctpChannel() { sctpm_close(t_, 5000); }

void SctpChannel::connect(const std::string& card) {
    peer_ = sctpm_peer_add(t_, card.c_str());
    if (peer_ < 0)
        die(std::string("bad card: ") + sctpm_last_error(t_));
}

void SctpChannel::send(const char* data, size_t len) {
    sctpm_key key{0, 0, 0};
    iovec v{const_cast<char*>(data), len};
    int rc = sctpm_send(t_, peer_, &key, &v, 1, nullptr);
    if (rc < 0)
        die("sctpm_send: " + std::string(std::strerror(-rc)));
    pending_ += rc;
}

void SctpChannel::progress() {
    if (sctpm_progress(t_, -1) < 0)
        die(std::string("sctpm_progress: ") + sctpm_last_error(t_));
}

void SctpChannel::recv(size_t) {
    const size_t want = ++expected_;
    while (done_ < want)
        progress();
}

void SctpChannel::flush() {
    while (pending_ > 0)
        progress();
}

} // namespace perf
