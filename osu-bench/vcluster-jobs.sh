# SPDX-License-Identifier: BSD-3-Clause
# The 2-host jobs of the multirail runners (run-multirail, run-speeds, run-nas), sourced by them.
# They set VC, RSH, INST, OSU, OUT and CMT (and PPN, ranks per host, default 1), bring the
# cluster up (tools/vcluster up 2 --rails 2 ...), then call vcl_prepare once and vcl_launch for
# each job. A program PROG of install I is OSU/I/PROG (OSU/openmpi/PROG for Open MPI).

# vcl_prepare: the rail-1 multihome file, and MPTCP's second subflow path on each host.
vcl_prepare() {
    RAIL1_FILE=$OUT/multihome-rail1 # ch3:sctp bound to rail 1 only
    printf 'h1 198.18.1.1\nh2 198.18.1.2\n' >"$RAIL1_FILE"
    # MPTCP: each host announces its rail-2 address; the peer opens a second subflow to it.
    local h
    for h in 1 2; do
        ip netns exec "vcl-h$h" sysctl -qw net.mptcp.enabled=1
        ip -n "vcl-h$h" mptcp limits set subflow 4 add_addr_accepted 4
        ip -n "vcl-h$h" mptcp endpoint add "198.18.2.$h" dev r2 signal
    done
}

# vcl_launch CONFIG TIMEOUT PROGRAM ARGS...: one job across h1 and h2 (PPN ranks on each),
# output to stdout.
vcl_launch() {
    local cfg=$1 limit=$2 prog=$3 ppn=${PPN:-1}
    shift 3
    local -a cmd hydra=(-launcher rsh -launcher-exec "$RSH" -hosts h1,h2 -ppn "$ppn" -n $((2 * ppn)))
    case $cfg in
    sock-1rail) cmd=("$INST/ch3-sock/bin/mpiexec" "${hydra[@]}" "$OSU/ch3-sock/$prog") ;;
    sock-mptcp) cmd=(mptcpize run "$INST/ch3-sock/bin/mpiexec" "${hydra[@]}" "$OSU/ch3-sock/$prog") ;;
    sctp-* | hybrid-* | own-*)
        local -a genv=()
        local inst=ch3-${cfg%%-*}
        if [[ $cfg == own-* ]]; then # ch3:sctp on our own SCTP engine
            inst=ch3-sctp
            genv=(-genv MPIR_CVAR_CH3_SCTP_STACK own)
        fi
        case ${cfg#*-} in
        1rail) genv+=(-genv MPIR_CVAR_CH3_SCTP_MULTIHOME_FILE "$RAIL1_FILE") ;;
        mh) genv+=(-genv MPIR_CVAR_CH3_SCTP_CMT off) ;;
        cmt) genv+=(-genv MPIR_CVAR_CH3_SCTP_CMT "$CMT" -genv MPIR_CVAR_CH3_SCTP_PF_THRESHOLD 65535) ;;
        cmtpf) genv+=(-genv MPIR_CVAR_CH3_SCTP_CMT "$CMT" -genv MPIR_CVAR_CH3_SCTP_PF_THRESHOLD 0) ;;
        *) echo "unknown configuration $cfg" >&2; return 2 ;;
        esac
        cmd=("$INST/$inst/bin/mpiexec" "${hydra[@]}" "${genv[@]}" "$OSU/$inst/$prog")
        ;;
    ompi-*)
        local nets=198.18.1.0/24
        [[ $cfg == ompi-1rail ]] || nets=198.18.1.0/24,198.18.2.0/24
        # Several ranks per host share this machine's cores with the other host: Open MPI would
        # busy-poll (it only yields when it knows it is oversubscribed), so tell it.
        local -a yield=()
        ((ppn > 1)) && yield=(--mca mpi_yield_when_idle 1)
        cmd=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --allow-run-as-root
            --host "h1:$ppn,h2:$ppn" -np $((2 * ppn)) --mca plm_rsh_agent "$RSH" --mca btl tcp,self --mca btl_tcp_if_include "$nets"
            --mca oob_tcp_if_include 198.18.0.0/24 "${yield[@]}" -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
            "$OSU/openmpi/$prog")
        ;;
    *) echo "unknown configuration $cfg" >&2; return 2 ;;
    esac
    echo "$cfg: $VC exec h1 ${cmd[*]} $*" >>"$OUT/commands.txt"
    timeout -k 5 "$limit" "$VC" exec h1 "${cmd[@]}" "$@"
}
