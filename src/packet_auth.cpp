// SPDX-License-Identifier: BSD-3-Clause
// Keys, key ids and the retire frame of auth=packet (packet_auth.hpp).
#include "packet_auth.hpp"

namespace sctpm {
namespace {

Digest retire_mac(std::string_view key, AuthRole sender) {
    // The sender's role on the key's link is covered, so that a retire reflected back to its
    // sender does not verify there.
    const std::string_view role = sender == AuthRole::opener ? "o" : "a";
    return hmac_sha256(key, {std::string_view("sctpm retire"), role});
}

} // namespace

std::string packet_auth_key(std::string_view key_acceptor, std::string_view nonce_opener, std::string_view nonce_acceptor) {
    const Digest d = hmac_sha256(key_acceptor, {std::string_view("sctpm sctp-auth"), nonce_opener, nonce_acceptor});
    return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

uint16_t packet_key_id(uint8_t link_number, uint32_t opener_tag, uint32_t acceptor_tag) {
    // Both sides opened link n at once: the verification tags (each side's own, random) tell the
    // two links apart the same way on both sides.
    return uint16_t(1 + (link_number & 0x7f) + (opener_tag > acceptor_tag ? 128 : 0));
}

const std::vector<uint8_t>& authenticated_chunk_types() {
    // DATA, SACK, HEARTBEAT, HEARTBEAT-ACK, ABORT, SHUTDOWN, SHUTDOWN-ACK, ERROR, ECNE, CWR, NR-SACK,
    // I-DATA, PKTDROP, RE-CONFIG, FORWARD-TSN, I-FORWARD-TSN (ASCONF and ASCONF-ACK usrsctp adds itself).
    static const std::vector<uint8_t> types{0x00, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
                                            0x0c, 0x0d, 0x10, 0x40, 0x81, 0x82, 0xc0, 0xc2};
    return types;
}

std::string format_retire(uint16_t key_id, std::string_view key, AuthRole sender) {
    const Digest mac = retire_mac(key, sender);
    std::string out{char(key_id >> 8), char(key_id & 0xff)};
    return out + std::string(reinterpret_cast<const char*>(mac.data()), mac.size());
}

uint16_t retire_key_id(const uint8_t* payload) { return uint16_t(payload[0] << 8 | payload[1]); }

bool check_retire(const uint8_t* payload, std::string_view key, AuthRole sender) {
    const Digest want = retire_mac(key, sender);
    return same_digest(want.data(), payload + 2, kMacBytes);
}

} // namespace sctpm
