// SPDX-License-Identifier: BSD-3-Clause
// The C ABI (sctpmpi.h): exceptions stop here and become error strings and return codes.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "card.hpp"
#include "error.hpp"
#include "sctpmpi.h"
#include "settings.hpp"
#include "transport.hpp"

struct sctpm_config {
    sctpm::Settings settings;
};

struct sctpm_transport {
    std::unique_ptr<sctpm::Transport> impl;
    std::string last_error;
};

namespace {

void set_error(char* err, size_t errlen, const char* what) {
    if (err && errlen)
        std::snprintf(err, errlen, "%s", what);
}

sctpm::SendKey to_key(const sctpm_key* key) {
    sctpm::SendKey k;
    if (key) {
        k.context = key->context;
        k.tag = key->tag;
        k.cls = key->cls;
    }
    return k;
}

std::vector<const char*> build_key_list() {
    std::vector<const char*> keys;
    for (const auto& k : sctpm::setting_keys())
        keys.push_back(k.key);
    keys.push_back(nullptr);
    return keys;
}

} // namespace

extern "C" {

sctpm_config* sctpm_config_from_env(char* err, size_t errlen) {
    try {
        return new sctpm_config{sctpm::load_settings_from_environment()};
    } catch (const std::exception& e) {
        set_error(err, errlen, e.what());
        return nullptr;
    }
}

int sctpm_config_set(sctpm_config* cfg, const char* key, const char* value, char* err, size_t errlen) {
    try {
        sctpm::set_setting(cfg->settings, key ? key : "", value ? value : "");
        return 0;
    } catch (const std::exception& e) {
        set_error(err, errlen, e.what());
        return -1;
    }
}

int sctpm_config_get(const sctpm_config* cfg, const char* key, char* out, size_t outlen) {
    try {
        set_error(out, outlen, sctpm::get_setting(cfg->settings, key ? key : "").c_str());
        return 0;
    } catch (const std::exception&) {
        return -1;
    }
}

const char* const* sctpm_config_keys(void) {
    static const std::vector<const char*> keys = build_key_list();
    return keys.data();
}

const char* sctpm_config_describe(const char* key) {
    for (const auto& k : sctpm::setting_keys())
        if (key && std::strcmp(k.key, key) == 0)
            return k.description;
    return nullptr;
}

void sctpm_config_free(sctpm_config* cfg) { delete cfg; }

sctpm_transport* sctpm_open(const sctpm_config* cfg, const char* hostname, const void* hello, size_t hello_len,
                            const sctpm_callbacks* cb, char* err, size_t errlen) {
    try {
        sctpm::Settings s = cfg ? cfg->settings : sctpm::load_settings_from_environment();
        std::string blob(static_cast<const char*>(hello), hello ? hello_len : 0);
        auto* t = new sctpm_transport;
        try {
            t->impl = std::make_unique<sctpm::Transport>(s, hostname ? hostname : "", blob, cb ? *cb : sctpm_callbacks{});
        } catch (...) {
            delete t;
            throw;
        }
        return t;
    } catch (const std::exception& e) {
        set_error(err, errlen, e.what());
        return nullptr;
    }
}

void sctpm_close(sctpm_transport* t, int timeout_ms) {
    if (!t)
        return;
    try {
        t->impl->shutdown(timeout_ms);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sctpm: error while closing: %s\n", e.what());
    }
    delete t;
}

const char* sctpm_card(const sctpm_transport* t) { return t->impl->card().c_str(); }
const char* sctpm_last_error(const sctpm_transport* t) { return t->last_error.c_str(); }

const char* sctpm_redact_key(const char* text, char* out, size_t outlen) {
    if (!out || !outlen)
        return out;
    try {
        std::snprintf(out, outlen, "%s", sctpm::redact_key(text ? text : "").c_str());
    } catch (const std::exception&) {
        std::snprintf(out, outlen, "<redacted>"); // no memory: show nothing rather than the key
    }
    return out;
}

sctpm_peer sctpm_peer_add(sctpm_transport* t, const char* card) {
    try {
        return t->impl->add_peer(card ? card : "");
    } catch (const std::exception& e) {
        t->last_error = e.what();
        return -1;
    }
}

int sctpm_peer_connect(sctpm_transport* t, sctpm_peer p) { return t->impl->connect(p); }

int sctpm_peer_connect_as(sctpm_transport* t, sctpm_peer p, const void* hello, size_t hello_len) {
    if (!hello || hello_len == 0 || hello_len > 1024)
        return -EINVAL;
    std::string h(static_cast<const char*>(hello), hello_len);
    return t->impl->connect(p, &h);
}

int sctpm_peer_failed(const sctpm_transport* t, sctpm_peer p) { return t->impl->peer_failed(p) ? 1 : 0; }
void sctpm_peer_remove(sctpm_transport* t, sctpm_peer p) { t->impl->remove_peer(p); }
void sctpm_peer_release(sctpm_transport* t, sctpm_peer p) { t->impl->release_peer(p); }

int sctpm_send(sctpm_transport* t, sctpm_peer p, const sctpm_key* key, const struct iovec* iov, int iovcnt,
               void* cookie) {
    return sctpm_send_batch(t, p, key, iov, iovcnt, cookie, 0);
}

int sctpm_send_batch(sctpm_transport* t, sctpm_peer p, const sctpm_key* key, const struct iovec* iov, int iovcnt,
                     void* cookie, int more) {
    try {
        const sctpm::SendKey k = to_key(key);
        return t->impl->send(p, k, iov, iovcnt, cookie, false, more != 0);
    } catch (const std::exception& e) {
        t->last_error = e.what();
        return -EINVAL;
    }
}

int sctpm_send_copy(sctpm_transport* t, sctpm_peer p, const sctpm_key* key, const struct iovec* iov, int iovcnt) {
    try {
        const sctpm::SendKey k = to_key(key);
        return t->impl->send(p, k, iov, iovcnt, nullptr, true);
    } catch (const std::exception& e) {
        t->last_error = e.what();
        return -EINVAL;
    }
}

// An exception here is a defect of ours, not a peer's doing (those fail the peer): the caller's
// wait must fail with it rather than wait on for work the broken pass did not do.
int sctpm_progress(sctpm_transport* t, int64_t timeout_us) {
    try {
        return t->impl->progress(timeout_us);
    } catch (const std::exception& e) {
        t->last_error = std::string("internal error in the transport's progress: ") + e.what();
    } catch (...) {
        t->last_error = "internal error in the transport's progress (an exception of unknown type)";
    }
    return -EIO;
}

void sctpm_wakeup(sctpm_transport* t) { t->impl->wakeup(); }

int sctpm_add_stage(sctpm_transport* t, const char* name, int (*fn)(void*), void* arg) {
    if (!fn)
        return -1;
    t->impl->add_stage(name ? name : "stage", fn, arg);
    return 0;
}

int sctpm_watch_fd(sctpm_transport* t, int fd) {
    if (fd < 0)
        return -1;
    t->impl->watch_fd(fd);
    return 0;
}

int sctpm_add_spin_probe(sctpm_transport* t, int (*ready)(void*), void* arg) {
    if (!ready)
        return -1;
    t->impl->add_spin_probe(ready, arg);
    return 0;
}

int sctpm_add_busy(sctpm_transport* t, int (*busy)(void*), void* arg) {
    if (!busy)
        return -1;
    t->impl->add_busy(busy, arg);
    return 0;
}

int sctpm_sends_pending(const sctpm_transport* t) { return t->impl->sends_pending() ? 1 : 0; }

int sctpm_peer_paths(sctpm_transport* t, sctpm_peer p, sctpm_path_info* out, int max) {
    return t->impl->peer_paths(p, out, max);
}

int sctpm_peer_stats_get(const sctpm_transport* t, sctpm_peer p, sctpm_peer_stats* out) {
    return t->impl->peer_stats(p, out) ? 0 : -1;
}

int sctpm_packet_auth_get(const sctpm_transport* t, sctpm_peer p, sctpm_packet_auth* out) {
    return t->impl->packet_auth(p, out) ? 0 : -1;
}

void sctpm_held_stats_get(const sctpm_transport* t, sctpm_held_stats* out) { *out = t->impl->held_stats(); }

int sctpm_link_key_mac(const sctpm_transport* t, sctpm_peer p, const iovec* parts, int n, unsigned char out[32]) {
    const std::optional<sctpm::Digest> d = t->impl->link_key_mac(p, parts, n);
    if (!d)
        return -1;
    std::memcpy(out, d->data(), d->size());
    return 0;
}

int sctpm_link_key_mac_check(const sctpm_transport* t, sctpm_peer p, const iovec* parts, int n,
                             const unsigned char mac[32]) {
    const std::optional<sctpm::Digest> d = t->impl->link_key_mac(p, parts, n);
    return d && sctpm::same_digest(d->data(), mac, d->size()) ? 1 : 0;
}

} // extern "C"
