// SPDX-License-Identifier: BSD-3-Clause
// The socket options of SCTP-AUTH (RFC 4895, RFC 6458 section 8) for auth=packet (packet_auth.hpp).
#include <cerrno>
#include <cstring>
#include <usrsctp.h>

#include "endpoint.hpp"
#include "error.hpp"
#include "packet_auth.hpp"

// Implemented by usrsctp 0.9.5.0 (netinet/sctp.h) but not exported by its header.
#ifndef SCTP_GET_NONCE_VALUES
#define SCTP_GET_NONCE_VALUES 0x00001105
#endif

namespace sctpm {
namespace {

// usrsctp.h leaves out the count field that its getsockopt fills (netinet/sctp_uio.h has it).
struct AuthChunks {
    sctp_assoc_t assoc;
    uint32_t count;
    uint8_t chunks[256];
};

int key_op(struct socket* so, int option, AssocId assoc, uint16_t id) {
    sctp_authkeyid k{};
    k.scact_assoc_id = assoc;
    k.scact_keynumber = id;
    return usrsctp_setsockopt(so, IPPROTO_SCTP, option, &k, sizeof k) == 0 ? 0 : errno;
}

} // namespace

void Endpoint::require_chunk_auth() {
    for (uint8_t type : authenticated_chunk_types()) {
        sctp_authchunk c{type};
        set_option(IPPROTO_SCTP, SCTP_AUTH_CHUNK, &c, sizeof c, "SCTP_AUTH_CHUNK (auth=packet)");
    }
    // HMAC-SHA-1 is the only one this usrsctp has: its userspace build never defines
    // SCTP_SUPPORT_HMAC_SHA256, and the SHA-256 id is then refused.
    struct {
        uint32_t n;
        uint16_t ids[1];
    } hmacs{1, {SCTP_AUTH_HMAC_ID_SHA1}};
    set_option(IPPROTO_SCTP, SCTP_HMAC_IDENT, &hmacs, sizeof hmacs, "SCTP_HMAC_IDENT (auth=packet)");
    uint16_t refused = 0;
    if (!subscribe_events(so_, {SCTP_AUTHENTICATION_EVENT}, &refused))
        throw Error(std::string("cannot set socket option SCTP_EVENT (SCTP_AUTHENTICATION_EVENT): ") + std::strerror(errno));
}

std::optional<bool> Endpoint::peer_requires_data_auth(AssocId assoc) {
    AuthChunks c{};
    c.assoc = assoc;
    socklen_t len = sizeof c;
    if (usrsctp_getsockopt(so_, IPPROTO_SCTP, SCTP_PEER_AUTH_CHUNKS, &c, &len) != 0)
        return std::nullopt;
    const size_t n = len > offsetof(AuthChunks, chunks) ? std::min<size_t>(len - offsetof(AuthChunks, chunks), sizeof c.chunks) : 0;
    for (size_t i = 0; i < n; ++i)
        if (c.chunks[i] == SCTP_DATA)
            return true;
    return false;
}

std::optional<std::pair<uint32_t, uint32_t>> Endpoint::tags(AssocId assoc) {
    sctp_get_nonce_values v{};
    v.gn_assoc_id = assoc;
    socklen_t len = sizeof v;
    if (usrsctp_getsockopt(so_, IPPROTO_SCTP, SCTP_GET_NONCE_VALUES, &v, &len) != 0)
        return std::nullopt;
    return std::make_pair(v.gn_local_tag, v.gn_peers_tag);
}

int Endpoint::add_auth_key(AssocId assoc, uint16_t id, const std::string& key) {
    std::vector<uint8_t> buf(sizeof(sctp_authkey) + key.size());
    auto* k = reinterpret_cast<sctp_authkey*>(buf.data());
    k->sca_assoc_id = assoc;
    k->sca_keynumber = id;
    k->sca_keylength = static_cast<uint16_t>(key.size());
    std::memcpy(buf.data() + sizeof(sctp_authkey), key.data(), key.size());
    return usrsctp_setsockopt(so_, IPPROTO_SCTP, SCTP_AUTH_KEY, buf.data(), socklen_t(buf.size())) == 0 ? 0 : errno;
}

int Endpoint::activate_auth_key(AssocId assoc, uint16_t id) { return key_op(so_, SCTP_AUTH_ACTIVE_KEY, assoc, id); }
int Endpoint::deactivate_auth_key(AssocId assoc, uint16_t id) { return key_op(so_, SCTP_AUTH_DEACTIVATE_KEY, assoc, id); }
int Endpoint::delete_auth_key(AssocId assoc, uint16_t id) { return key_op(so_, SCTP_AUTH_DELETE_KEY, assoc, id); }

int Endpoint::active_auth_key(AssocId assoc) {
    sctp_authkeyid k{};
    k.scact_assoc_id = assoc;
    socklen_t len = sizeof k;
    if (usrsctp_getsockopt(so_, IPPROTO_SCTP, SCTP_AUTH_ACTIVE_KEY, &k, &len) != 0)
        return -1;
    return k.scact_keynumber;
}

} // namespace sctpm
