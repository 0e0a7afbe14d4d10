// SPDX-License-Identifier: BSD-3-Clause
// Transport settings: defaults chosen by measurement, loaded from MPICH-style CVARs
// (MPIR_CVAR_CH3_SCTP_<KEY>) and the historical MPICH2 ch3:sctp environment names.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sctpm {

enum class CmtMode { off = 0, base = 1, rpv1 = 2, rpv2 = 3, mptcp = 4 };
enum class StreamPolicy { single, context, context_tag };
enum class AuthMode { off, hello, packet };
enum class StackChoice { usrsctp, own };

struct Settings {
    // Addresses
    std::string multihome_file;      // key "multihome_file" (also MPICH_SCTP_MULTIHOME_FILE)
    bool bind_all = false;           // key "bindall"        (also MPICH_SCTP_BINDALL, any value = on)
    std::string interface_hostname;  // key "interface_hostname" (also MPICH_INTERFACE_HOSTNAME): an address or a name
    std::string rails;               // key "rails": subnets or interface names, rail 1 first (rails.hpp); no multihome file
    uint16_t udp_port = 0;           // key "udp_port": 0 = pick a free one (probe, then verify);
    uint16_t udp_port_last = 0;      //   "A-B": the first free port of A..B (udp_port A, udp_port_last B)

    // Streams and messages
    uint16_t streams = 16;                       // key "streams": SCTP streams per association (1..1024)
    StreamPolicy stream_policy = StreamPolicy::single; // key "stream_policy": single|context|context_tag
    uint32_t eager_max = 0;                      // key "eager_max": channel eager/rendezvous switch (bytes); 0 = CH3's own
    uint32_t fragment_size = 262144;             // key "fragment_size": max payload per SCTP message (bytes)
    uint64_t max_message = 64ull << 30;          // key "max_message": largest message accepted from a peer
    // Bounds on what a remote can make this process hold (a breach aborts its association):
    uint64_t pre_hello_bytes = 0;                // key "pre_hello_bytes": per association before its hello; 0 = one fragment
    uint64_t reorder_bytes = 64ull << 20;        // key "reorder_bytes": per peer, held out of order
    uint32_t head_bytes = 4096;                  // key "head_bytes": first read per message (rest placed directly)
    AuthMode auth = AuthMode::hello;             // key "auth": hello|packet|off, proof of membership per link (hello_auth.hpp), packet: plus SCTP-AUTH (packet_auth.hpp)

    // SCTP tuning
    StackChoice stack = StackChoice::usrsctp; // key "stack": usrsctp|own (our own engine, src/sctp/)
    CmtMode cmt = CmtMode::off;        // key "cmt": off|base|rpv1|rpv2|mptcp
    uint16_t pf_threshold = 0;         // key "pf_threshold": path PF threshold (0 = CMT-PF / SCTP-PF on); 65535 = off
    uint32_t rto_min_ms = 100;         // key "rto_min_ms"
    uint32_t rto_max_ms = 300;         // key "rto_max_ms"
    uint32_t rto_initial_ms = 300;     // key "rto_initial_ms"
    uint32_t heartbeat_ms = 100;       // key "heartbeat_ms"
    uint32_t path_max_retrans = 2;     // key "path_max_retrans"
    uint32_t assoc_max_retrans = 10;   // key "assoc_max_retrans"
    uint32_t init_max_attempts = 8;    // key "init_max_attempts": INIT retransmissions before CANT_START
    uint32_t path_mtu = 0;             // key "path_mtu": link MTU cap; 0 = each path's route MTU (path_params.hpp)
    uint32_t sndbuf = 8u << 20;        // key "sndbuf" (bytes)
    uint32_t rcvbuf = 8u << 20;        // key "rcvbuf" (bytes); with CMT on, kCmtRcvbuf unless set
    uint32_t udp_buffer = 4u << 20;    // key "udp_buffer": kernel buffers of usrsctp's UDP sockets
    uint32_t max_chunks_on_queue = 65536; // key "max_chunks_on_queue"
    uint32_t sack_delay_ms = 10;       // key "sack_delay_ms": delayed-SACK timer (0 = SACK every packet)
    bool sack_per_read = true;         // key "sack_per_read": one SACK per UDP GRO read (with CMT, per read and path)
    bool sack_full_packets = true;     // key "sack_full_packets": only packets worth more than a path MTU force a SACK
    bool nodelay = true;               // key "nodelay": disable Nagle

    // Progress
    uint32_t spin_us = 100;            // key "spin_us": busy-poll before blocking on the eventfd
    bool spin_adapt = true;            // key "spin_adapt": the spin follows the waits seen (spin_budget.hpp)
    bool caller_input = true;          // key "caller_input": progress reads usrsctp's UDP socket (progress.hpp)
    bool log_paths = false;            // key "log_paths": one stderr line per path state change
    uint32_t stall_report_s = 0;       // key "stall_report_s": report every peer's state once after this long without progress (0 = off)
};

// The receive buffer load_settings uses with CMT when none is set (settings.cpp says why).
constexpr uint32_t kCmtRcvbuf = 512u << 10;
// Packets the sender may send at once after a SACK with sack_per_read (usrsctp's default is 4,
// sized for a SACK every second packet; stack.cpp says why 32).
constexpr uint32_t kSackPerReadBurst = 32;

// Key list with descriptions, in the order of the struct above.
struct SettingKey {
    const char* key;
    const char* description;
};
const std::vector<SettingKey>& setting_keys();

// Set one key from text; throws Error naming the key, the value and what is allowed.
void set_setting(Settings& s, const std::string& key, const std::string& value);
// Current value as text; throws Error for an unknown key.
std::string get_setting(const Settings& s, const std::string& key);

// Load from an environment lookup (std::getenv by default). For every key K the CVAR
// MPIR_CVAR_CH3_SCTP_<K uppercased> is read; the historical names are read first so that a
// CVAR overrides them. Throws Error naming the variable and value.
using EnvLookup = std::function<const char*(const char*)>;
// Also checks between keys (rto_min_ms <= rto_initial_ms <= rto_max_ms).
Settings load_settings(const EnvLookup& env);
Settings load_settings_from_environment();
// The checks between keys that load_settings makes, for settings built with set_setting.
void validate_settings(const Settings& s);

const char* to_string(CmtMode m);
const char* to_string(StreamPolicy p);
const char* to_string(AuthMode m);
const char* to_string(StackChoice c);

} // namespace sctpm
