// Per-path SCTP parameters; see path_params.hpp.
#include "path_params.hpp"

#include "settings.hpp"

#include <cerrno>
#include <sys/socket.h>
#include <usrsctp.h>

namespace sctpm {

PathParams path_params(const Settings& s, uint32_t mtu) { return {mtu, s.heartbeat_ms, s.path_max_retrans}; }

int set_path_params(struct socket* so, int family, uint32_t assoc, const PathParams& p) {
    sctp_paddrparams pp{};
    pp.spp_address.ss_family = static_cast<sa_family_t>(family); // wildcard: every path
    pp.spp_assoc_id = assoc;
    pp.spp_flags = SPP_HB_ENABLE | SPP_PMTUD_DISABLE;
    pp.spp_hbinterval = p.heartbeat_ms;
    pp.spp_pathmtu = p.mtu;
    pp.spp_pathmaxrxt = static_cast<uint16_t>(p.path_max_retrans);
    return usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof pp) == 0 ? 0 : errno;
}

} // namespace sctpm
