#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install missing Debian packages (as root), build, run the transport benchmark
# build/bin/sctp-perf (both sides on loopback), then build the default MPICH (5.0.1) with ch3:sctp, ch3:hybrid
# and the stock ch3:sock beside them (about 20 minutes the first time, cached afterwards) and run
# MPI jobs: OSU-style latency and bandwidth between two ranks, with sctp/sock ratios; then
# one-sided put bandwidth, get latency and the mixed benchmark, with hybrid/sctp ratios.
#
#   ./quickstart.sh            full run
#   ./quickstart.sh --quick    shorter runs (fewer sizes and iterations)
#
# Exit status 0 only if the build and every run succeeded.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=tools/lib/common.sh
source tools/lib/common.sh
# shellcheck source=tools/lib/mpich-step.sh
source tools/lib/mpich-step.sh

PERF_ARGS=("$@")

step_deps() { ensure_packages; }

step_build() { run_logged build_tree build; }

step_perf() {
    local bin=build/bin/sctp-perf rc=0
    if [[ ! -x $bin ]]; then
        echo "$bin was not built"
        return 1
    fi
    echo "\$ $bin ${PERF_ARGS[*]}"
    "$bin" "${PERF_ARGS[@]}" || rc=$?
    if ((rc != 0)); then
        echo "sctp-perf failed (exit $rc)"
    fi
    return "$rc"
}

# The OSU runner measures both installs in one run and prints per-size ratios (sctp/sock).
step_mpi() {
    local quick=()
    [[ " ${PERF_ARGS[*]} " == *' --quick '* ]] && quick=(--quick)
    echo "\$ osu-bench/run-compare --installs ch3-sctp,ch3-sock --only lat,bw ${quick[*]}"
    osu-bench/run-compare --installs ch3-sctp,ch3-sock --only lat,bw "${quick[@]}"
}

# As root: the multirail job on a 2-host virtual cluster (two rails at 1 Gbit/s): bandwidth by
# size on one rail and with CMT on both, then bandwidth over time while a rail is pulled and
# brought back, with plots (osu-bench/run-multirail; the full comparison with MPTCP and Open MPI
# is `osu-bench/run-multirail` without --only).
# One-sided: ch3:hybrid (MPI_Put/MPI_Get by RDMA over iWARP) beside ch3:sctp, the reference of
# the ratios, and ch3:sock.
step_onesided() {
    local quick=()
    [[ " ${PERF_ARGS[*]} " == *' --quick '* ]] && quick=(--quick)
    echo "\$ osu-bench/run-compare --installs ch3-hybrid,ch3-sock,ch3-sctp --only put_bw,get_lat,mixed ${quick[*]}"
    osu-bench/run-compare --installs ch3-hybrid,ch3-sock,ch3-sctp --only put_bw,get_lat,mixed "${quick[@]}"
}

step_multirail() {
    if ((EUID != 0)); then
        echo "skipped: the virtual cluster needs root (network namespaces)"
        step_note "skipped: needs root"
        return 0
    fi
    local out=build/multirail/quickstart
    rm -rf "$out"
    echo "\$ osu-bench/run-multirail --quick --only sock-1rail,sctp-1rail,sctp-cmt,sctp-mh --out $out"
    osu-bench/run-multirail --quick --only sock-1rail,sctp-1rail,sctp-cmt,sctp-mh --out "$out" || return
    echo "tables: $out/summary.txt; plots: $out/bw.png, $out/failover.png"
}

# The steps, in order.
add_step deps "Debian packages" step_deps --always --stop
add_step build "Build (build/)" step_build --stop
add_step sctp-perf "SCTP transport benchmark on loopback" step_perf
add_step mpich "MPICH $MPICH_DEFAULT_VERSION with ch3:sctp, ch3:hybrid and ch3:sock (build/install)" step_mpich_installs --stop
add_step mpi "MPI latency and bandwidth, ch3:sctp beside ch3:sock" step_mpi
add_step onesided "MPI one-sided: ch3:hybrid and ch3:sock against ch3:sctp" step_onesided
add_step multirail "Two rails on a virtual cluster, a rail pulled mid-run (root)" step_multirail

run_steps "" # every step
