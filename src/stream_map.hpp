// SPDX-License-Identifier: BSD-3-Clause
// Stream mapping policy: which SCTP stream a message travels on and which ordering domain its
// sequence number belongs to. Order is guaranteed per (sender, domain) by the reorder step, so a
// policy is correct for MPI as long as messages that MPI orders (same sender, same context) share a
// domain; the stream only decides head-of-line blocking inside SCTP.
#pragma once
#include <cstdint>

#include "settings.hpp"

namespace sctpm {

struct SendKey {
    int32_t context = 0;
    int32_t tag = 0;
    int32_t cls = 0; // 0 = matchable message, 1 = control packet, 2 = a reply that may overtake (kReply)
};

// A control packet that may go ahead of what its peer has queued and not started (the channel's
// clear-to-send, whose sender is waiting for it): see Transport::send.
constexpr int32_t kReply = 2;

struct Route {
    uint16_t stream = 0;
    uint16_t domain = 0;
};

// User hook (C-compatible, as the thesis exported one): must return stream < nstreams and
// domain < nstreams; the transport rejects anything else with an error.
using StreamHook = Route (*)(const SendKey* key, uint16_t nstreams, void* arg);

class StreamMap {
public:
    StreamMap(StreamPolicy policy, uint16_t nstreams);

    // single:      stream 0, domain 0 (one ordered stream, no reordering ever)
    // context:     stream = domain = context mod n (per-communicator streams, order kept by SCTP)
    // context_tag: stream = hash(context, tag) mod n, domain = context mod n (reorder restores order)
    // control packets (cls 1 and 2) always go to stream 0, domain 0 under the built-in policies.
    Route select(const SendKey& key) const;

    void set_hook(StreamHook hook, void* arg) { hook_ = hook; hook_arg_ = arg; }
    uint16_t streams() const { return nstreams_; }
    StreamPolicy policy() const { return policy_; }
    bool hooked() const { return hook_ != nullptr; }

private:
    StreamPolicy policy_;
    uint16_t nstreams_;
    StreamHook hook_ = nullptr;
    void* hook_arg_ = nullptr;
};

} // namespace sctpm
