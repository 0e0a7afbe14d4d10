// The two MACs of a link's proof of membership (hello_auth.hpp).
#include "hello_auth.hpp"

namespace sctpm {

Digest link_mac(AuthRole who, std::string_view key, std::string_view nonce_opener, std::string_view nonce_acceptor,
                std::string_view blob) {
    // Distinct labels: the acceptor's answer can never be reflected back as the opener's proof.
    const std::string_view label = who == AuthRole::acceptor ? std::string_view("sctpm accept", 13)
                                                             : std::string_view("sctpm open", 11);
    return hmac_sha256(key, {label, nonce_opener, nonce_acceptor, blob});
}

} // namespace sctpm
