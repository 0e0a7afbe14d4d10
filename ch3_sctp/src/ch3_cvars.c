/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp configuration as MPICH control variables: every transport setting is a string CVAR
 * MPIR_CVAR_CH3_SCTP_<KEY> (visible and writable through MPI_T before MPI_Init). Unset (NULL)
 * leaves the transport's default or a historical variable (MPICH_SCTP_MULTIHOME_FILE, ...)
 * in force. tests/unit/test_channel_cvars.cpp checks that this block lists every setting of
 * src/settings.cpp. Strings, so that the transport's own parser (units, names, ranges) and its
 * error messages apply to every way of setting a value.

=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories:
    - name        : CH3_SCTP
      description : cvars that control the ch3:sctp channel (SCTP transport over usrsctp)

cvars:
    - name        : MPIR_CVAR_CH3_SCTP_MULTIHOME_FILE
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        file of lines 'hostname ip [ip ...]' listing each host's addresses; also MPICH_SCTP_MULTIHOME_FILE (text; empty = unset). Unset: empty.

    - name        : MPIR_CVAR_CH3_SCTP_BINDALL
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        bind to all local addresses; also MPICH_SCTP_BINDALL (set, any value = on) (boolean: 1|0|yes|no|true|false|on|off). Unset: false.

    - name        : MPIR_CVAR_CH3_SCTP_INTERFACE_HOSTNAME
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        address or host name to bind to; also MPICH_INTERFACE_HOSTNAME (text; empty = unset). Unset: empty.

    - name        : MPIR_CVAR_CH3_SCTP_RAILS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        the data networks to bind to, rail 1 first: subnets (198.18.1.0/24) or interface names (eth1), separated by commas; each process binds its host's addresses on them and announces them to its peers, so no multihome file is needed (a list; empty = unset). Unset: empty.

    - name        : MPIR_CVAR_CH3_SCTP_UDP_PORT
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        UDP encapsulation port: N, or a range A-B whose first free port each process takes (what a firewall must open), 0 = any free port (port or range, 0..65535). Unset: 0.

    - name        : MPIR_CVAR_CH3_SCTP_STREAMS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        SCTP streams per association (count, 1..1024). Unset: 16.

    - name        : MPIR_CVAR_CH3_SCTP_STREAM_POLICY
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        how messages are mapped to SCTP streams (single|context|context_tag). Unset: single.

    - name        : MPIR_CVAR_CH3_SCTP_EAGER_MAX
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        largest message sent eagerly, larger ones use rendezvous; 0 = CH3's own limit
        (MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE, 131072 unless set) (bytes, 0..64M; K/M/G suffixes). Unset: 0.

    - name        : MPIR_CVAR_CH3_SCTP_FRAGMENT_SIZE
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        largest payload per SCTP message (bytes, 1K..16M; K/M/G suffixes). Unset: 262144.

    - name        : MPIR_CVAR_CH3_SCTP_MAX_MESSAGE
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        largest message accepted from a peer (a contiguous MPI message is one) (bytes, 1K..262144G;
        K/M/G suffixes). Unset: 68719476736.

    - name        : MPIR_CVAR_CH3_SCTP_PRE_HELLO_BYTES
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        bytes held per association for its links whose hello has not arrived yet (a stranger's
        data); more aborts the association, 0 = room for one whole fragment (of fragment_size)
        (bytes, 0 or 4K..1G; K/M/G suffixes). Unset: 0.

    - name        : MPIR_CVAR_CH3_SCTP_AUTH
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        how a process proves, on each new link, that it holds the business card of the process it
        reaches (hello|packet|off): hello = a challenge with fresh nonces on both sides, answered by
        an HMAC under the key in the card; packet = the same, and then every packet of the
        association carries an SCTP-AUTH HMAC (RFC 4895, HMAC-SHA-1) under a key derived from that
        proof, so injected packets are dropped (costs bandwidth: see the README); off = the hello's
        claim is believed. Every process of a job must use the same. Unset: hello.

    - name        : MPIR_CVAR_CH3_SCTP_STACK
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        the SCTP implementation under the transport and ch3:hybrid's RNIC (usrsctp|own): own is
        this project's engine, run by the progress engine alone (a standby thread answers peers
        while the process computes); it has no SCTP-AUTH (auth=packet), coupled CMT (cmt=rpv1, rpv2, mptcp; cmt=base
        it has) or IPv6 yet and refuses them. Every
        process of a job should use the same. Unset: usrsctp.

    - name        : MPIR_CVAR_CH3_SCTP_REORDER_BYTES
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        bytes held per peer for messages that arrived ahead of an earlier one of their ordering
        domain (with a fixed overhead per message); more aborts the association (bytes, 4K..1024G;
        K/M/G suffixes). Unset: 67108864.

    - name        : MPIR_CVAR_CH3_SCTP_HEAD_BYTES
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        first read per message; the rest is placed directly (bytes, 64..1M; K/M/G suffixes). Unset: 4096.

    - name        : MPIR_CVAR_CH3_SCTP_CMT
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        concurrent multipath transfer mode (off|base|rpv1|rpv2|mptcp or 0..4). Unset: off.

    - name        : MPIR_CVAR_CH3_SCTP_PF_THRESHOLD
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        path potentially-failed threshold, 0 = CMT-PF/SCTP-PF on, 65535 = PF off (retransmissions, 0..65535). Unset: 0.

    - name        : MPIR_CVAR_CH3_SCTP_RTO_MIN_MS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        minimum retransmission timeout, <= rto_initial_ms (ms, 1..600000). Unset: 100.

    - name        : MPIR_CVAR_CH3_SCTP_RTO_MAX_MS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        maximum retransmission timeout, >= rto_initial_ms (ms, 1..600000). Unset: 300.

    - name        : MPIR_CVAR_CH3_SCTP_RTO_INITIAL_MS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        initial retransmission timeout, within rto_min_ms..rto_max_ms (ms, 1..600000). Unset: 300.

    - name        : MPIR_CVAR_CH3_SCTP_HEARTBEAT_MS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        heartbeat interval per path (ms, 1..600000). Unset: 100.

    - name        : MPIR_CVAR_CH3_SCTP_PATH_MAX_RETRANS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        retransmissions before a path is marked failed (retransmissions, 1..65535). Unset: 2.

    - name        : MPIR_CVAR_CH3_SCTP_ASSOC_MAX_RETRANS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        retransmissions before the association is aborted (retransmissions, 1..65535). Unset: 10.

    - name        : MPIR_CVAR_CH3_SCTP_INIT_MAX_ATTEMPTS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        INIT retransmissions before a connect fails (CANT_START) (attempts, 1..65535). Unset: 8.

    - name        : MPIR_CVAR_CH3_SCTP_PATH_MTU
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        largest IP packet on a path (link MTU), 0 = each path's MTU from the kernel's route (bytes, 0 or 1200..65536). Unset: 0.

    - name        : MPIR_CVAR_CH3_SCTP_SNDBUF
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        SCTP socket send buffer (bytes, 64K..1G; K/M/G suffixes). Unset: 8388608.

    - name        : MPIR_CVAR_CH3_SCTP_RCVBUF
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        SCTP socket receive buffer (bytes, 64K..1G; K/M/G suffixes). Unset: 8388608, or 524288 with CMT on.

    - name        : MPIR_CVAR_CH3_SCTP_UDP_BUFFER
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        kernel buffers of usrsctp's UDP sockets (bytes, 64K..1G; K/M/G suffixes). Unset: 4194304.

    - name        : MPIR_CVAR_CH3_SCTP_MAX_CHUNKS_ON_QUEUE
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        chunks queued per association before sends block (chunks, 256..16777216). Unset: 65536.

    - name        : MPIR_CVAR_CH3_SCTP_SACK_DELAY_MS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        delayed-SACK timer, 0 = SACK every packet (RFC 4960 caps it at 500) (ms, 0..500). Unset: 10.

    - name        : MPIR_CVAR_CH3_SCTP_SACK_PER_READ
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        the packets of one UDP GRO read (up to 64 KiB of a peer's packets) count as one for delayed
        SACKs, as kernel TCP acknowledges a GRO segment (off = a SACK every second packet)
        (boolean: 1|0|yes|no|true|false|on|off). Unset: true.

    - name        : MPIR_CVAR_CH3_SCTP_SACK_FULL_PACKETS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        the delayed-SACK rule counts full-sized packets, as kernel TCP counts full-sized segments:
        two small packets (a few MPI messages) no longer force a SACK of their own, the next packet
        to that peer carries it (off = a SACK every second packet, whatever its size) (boolean:
        1|0|yes|no|true|false|on|off). Unset: true.

    - name        : MPIR_CVAR_CH3_SCTP_NODELAY
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        disable Nagle's algorithm (boolean: 1|0|yes|no|true|false|on|off). Unset: true.

    - name        : MPIR_CVAR_CH3_SCTP_SPIN_US
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        busy-poll time before blocking on the eventfd (us, 0..10000000). Unset: 100.

    - name        : MPIR_CVAR_CH3_SCTP_SPIN_ADAPT
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        a wait spins less after waits that outlasted spin_us, the whole spin_us again after short ones
        (off = every wait spins spin_us) (boolean: 1|0|yes|no|true|false|on|off). Unset: true.

    - name        : MPIR_CVAR_CH3_SCTP_CALLER_INPUT
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        the progress engine reads the UDP socket itself while it runs (off = usrsctp's receive thread
        reads every packet) (boolean: 1|0|yes|no|true|false|on|off). Unset: true.

    - name        : MPIR_CVAR_CH3_SCTP_LOG_PATHS
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        one stderr line per path state change (boolean: 1|0|yes|no|true|false|on|off). Unset: false.

    - name        : MPIR_CVAR_CH3_SCTP_STALL_REPORT_S
      category    : CH3_SCTP
      type        : string
      default     : NULL
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        after this long blocked without any transport progress, print every peer's state to stderr
        once (a hang diagnostic), 0 = off (s, 0..86400). Unset: 0.

    - name        : MPIR_CVAR_CH3_SCTP_NOTICES
      category    : CH3_SCTP
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        print the channel's notices on stderr: a peer is lost, a queue pair broke, traffic
        recovered on another path (false: only errors, for runs that provoke failures on purpose).

    - name        : MPIR_CVAR_CH3_SCTP_PATH_REPORT
      category    : CH3_SCTP
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        at MPI_Finalize, print on stderr one line per peer rank: each path of its association
        (the peer's address, rail 1 first), the path's state, the payload bytes received over it
        and its smoothed round-trip time; shows whether traffic used every rail.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/
#include "mpidi_ch3_impl.h"

static const struct {
    const char *key;
    const char **value;
} cvars[] = {
    {"multihome_file", &MPIR_CVAR_CH3_SCTP_MULTIHOME_FILE},
    {"bindall", &MPIR_CVAR_CH3_SCTP_BINDALL},
    {"interface_hostname", &MPIR_CVAR_CH3_SCTP_INTERFACE_HOSTNAME},
    {"rails", &MPIR_CVAR_CH3_SCTP_RAILS},
    {"udp_port", &MPIR_CVAR_CH3_SCTP_UDP_PORT},
    {"streams", &MPIR_CVAR_CH3_SCTP_STREAMS},
    {"stream_policy", &MPIR_CVAR_CH3_SCTP_STREAM_POLICY},
    {"eager_max", &MPIR_CVAR_CH3_SCTP_EAGER_MAX},
    {"fragment_size", &MPIR_CVAR_CH3_SCTP_FRAGMENT_SIZE},
    {"max_message", &MPIR_CVAR_CH3_SCTP_MAX_MESSAGE},
    {"pre_hello_bytes", &MPIR_CVAR_CH3_SCTP_PRE_HELLO_BYTES},
    {"reorder_bytes", &MPIR_CVAR_CH3_SCTP_REORDER_BYTES},
    {"head_bytes", &MPIR_CVAR_CH3_SCTP_HEAD_BYTES},
    {"auth", &MPIR_CVAR_CH3_SCTP_AUTH},
    {"stack", &MPIR_CVAR_CH3_SCTP_STACK},
    {"cmt", &MPIR_CVAR_CH3_SCTP_CMT},
    {"pf_threshold", &MPIR_CVAR_CH3_SCTP_PF_THRESHOLD},
    {"rto_min_ms", &MPIR_CVAR_CH3_SCTP_RTO_MIN_MS},
    {"rto_max_ms", &MPIR_CVAR_CH3_SCTP_RTO_MAX_MS},
    {"rto_initial_ms", &MPIR_CVAR_CH3_SCTP_RTO_INITIAL_MS},
    {"heartbeat_ms", &MPIR_CVAR_CH3_SCTP_HEARTBEAT_MS},
    {"path_max_retrans", &MPIR_CVAR_CH3_SCTP_PATH_MAX_RETRANS},
    {"assoc_max_retrans", &MPIR_CVAR_CH3_SCTP_ASSOC_MAX_RETRANS},
    {"init_max_attempts", &MPIR_CVAR_CH3_SCTP_INIT_MAX_ATTEMPTS},
    {"path_mtu", &MPIR_CVAR_CH3_SCTP_PATH_MTU},
    {"sndbuf", &MPIR_CVAR_CH3_SCTP_SNDBUF},
    {"rcvbuf", &MPIR_CVAR_CH3_SCTP_RCVBUF},
    {"udp_buffer", &MPIR_CVAR_CH3_SCTP_UDP_BUFFER},
    {"max_chunks_on_queue", &MPIR_CVAR_CH3_SCTP_MAX_CHUNKS_ON_QUEUE},
    {"sack_delay_ms", &MPIR_CVAR_CH3_SCTP_SACK_DELAY_MS},
    {"sack_per_read", &MPIR_CVAR_CH3_SCTP_SACK_PER_READ},
    {"sack_full_packets", &MPIR_CVAR_CH3_SCTP_SACK_FULL_PACKETS},
    {"nodelay", &MPIR_CVAR_CH3_SCTP_NODELAY},
    {"spin_us", &MPIR_CVAR_CH3_SCTP_SPIN_US},
    {"spin_adapt", &MPIR_CVAR_CH3_SCTP_SPIN_ADAPT},
    {"caller_input", &MPIR_CVAR_CH3_SCTP_CALLER_INPUT},
    {"log_paths", &MPIR_CVAR_CH3_SCTP_LOG_PATHS},
    {"stall_report_s", &MPIR_CVAR_CH3_SCTP_STALL_REPORT_S},
};

/* Apply the CVARs that are set on top of what the environment gave cfg. Returns -1 with the
 * transport's message (naming the CVAR's key and value) in err on a bad value. */
int MPIDI_CH3I_Apply_cvars(sctpm_config * cfg, char *err, size_t errlen)
{
    size_t i;
    char why[SCTPM_ERRLEN];
    for (i = 0; i < sizeof(cvars) / sizeof(cvars[0]); i++) {
        if (*cvars[i].value && sctpm_config_set(cfg, cvars[i].key, *cvars[i].value, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "control variable for '%s' = '%s': %s", cvars[i].key, *cvars[i].value, why);
            return -1;
        }
    }
    return 0;
}
