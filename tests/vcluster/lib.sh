# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Helpers of the virtual-cluster MPI tests tests/vcluster/failover and tests/vcluster/ssh-launch
# (sourced, never run). The test sets REPO (the repository) before sourcing; this file sets VC,
# INST (ch3:sctp's install), HYBRID (ch3:hybrid's), and, after vcl_setup, TMP (the test's temporary
# folder, removed at exit with the cluster). Before it launches, the test sets LAUNCH: mpiexec's
# arguments that say where and how to start the ranks, ending where the program's path goes, e.g.
#   LAUNCH=(-launcher rsh -launcher-exec "$REPO/tools/vcluster-rsh" -hosts h1,h2 -ppn 1)

VC=$REPO/tools/vcluster
INST=$REPO/build/install/ch3-sctp
HYBRID=$REPO/build/install/ch3-hybrid
LAUNCH=()
JOB_ENV=() # more environment for failover_stream's job (VAR=value words)
# shellcheck disable=SC2034 # JOB (the pid of the job launch started) and T0 are the tests' too
JOB='' T0=0
failures=0

# vcl_setup NAME: exit 77 unless root with no virtual cluster up; then TMP and the cleanup trap.
vcl_setup() {
    if ((EUID != 0)); then
        echo "skipped: needs root (network namespaces)"
        exit 77
    fi
    if ip netns list | grep -q '^vcl-' || [[ -e $REPO/build/vcluster/state ]]; then
        echo "skipped: a virtual cluster is up; run 'tools/vcluster down' first"
        exit 77
    fi
    [[ -x $INST/bin/mpicc ]] || { echo "$1: no ch3:sctp install at $INST (tools/mpich-build sctp)" >&2; exit 1; }
    cd "$REPO" || exit 1
    TMP=$(mktemp -d "/tmp/vcluster-$1.XXXXXX")
    trap vcl_cleanup EXIT
    trap 'exit 1' INT TERM
}

# Processes of the test (their command lines name TMP), then the cluster (`down` also ends
# every process left in its namespaces, sshds included).
vcl_cleanup() {
    pkill -TERM -f "$TMP/" 2>/dev/null
    "$VC" down >/dev/null 2>&1
    rm -rf "$TMP"
}

pass() { echo "ok   - $*"; }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }

# vcl_finish NAME: the summary line and the exit status.
vcl_finish() {
    if ((failures)); then
        echo "$1: $failures check(s) FAILED"
        exit 1
    fi
    echo "$1: all checks passed"
    exit 0
}

# compile_stream / compile_rma: tests/mpi/failover_stream with ch3:sctp's mpicc, tests/mpi/rma_blocks
# with ch3:hybrid's, into TMP.
compile_stream() {
    "$INST/bin/mpicc" -std=c99 -O2 -o "$TMP/failover_stream" tests/mpi/failover_stream.c || { fail "mpicc"; exit 1; }
}
compile_rma() {
    [[ -x $HYBRID/bin/mpicc ]] || { fail "rdma: no ch3:hybrid install at $HYBRID (tools/mpich-build hybrid)"; exit 1; }
    "$HYBRID/bin/mpicc" -std=c99 -O2 -Itests/mpi -o "$TMP/rma_blocks" tests/mpi/rma_blocks.c || { fail "mpicc rma_blocks"; exit 1; }
}

# A rank that waits 10 s without any transport progress prints what the transport and CH3 wait
# for (a rail's failover takes a few seconds), so a hang the timeout ends leaves its cause in OUT.
STALL_ENV=(MPIR_CVAR_CH3_SCTP_STALL_REPORT_S=10)

# launch MODE SECONDS OUT: failover_stream on ch3:sctp in the background (its pid in JOB), mpiexec
# inside h1, T0 the launch time (ms).
launch() {
    T0=$(($(date +%s%N) / 1000000))
    timeout -k 5 120 "$VC" exec h1 env MPIR_CVAR_CH3_SCTP_LOG_PATHS=1 "${STALL_ENV[@]}" "${JOB_ENV[@]}" "$INST/bin/mpiexec" \
        "${LAUNCH[@]}" "$TMP/failover_stream" "$1" "$2" >"$3" 2>&1 &
    # shellcheck disable=SC2034
    JOB=$!
}

# The environment of the rdma scenario: CMT on, every contiguous put and get above CH3's 8-byte
# immediate size by RDMA; rma_blocks fails unless RDMA carried puts and gets, and if any RDMA
# transfer had to fall back to SCTP (the queue pairs' associations are multihomed too).
RMA_ENV=(MPIR_CVAR_CH3_SCTP_CMT=base MPIR_CVAR_CH3_HYBRID_PUT_THRESHOLD=1 MPIR_CVAR_CH3_HYBRID_GET_THRESHOLD=1
    RMA_EXPECT_RDMA=1 RMA_EXPECT_NO_FALLBACK=1)

# launch_rma SECONDS OUT: ch3:hybrid running rma_blocks for at least SECONDS, as launch does.
launch_rma() {
    T0=$(($(date +%s%N) / 1000000))
    timeout -k 5 120 "$VC" exec h1 env "${STALL_ENV[@]}" "${RMA_ENV[@]}" "$HYBRID/bin/mpiexec" \
        "${LAUNCH[@]}" "$TMP/rma_blocks" 1 "$1" >"$2" 2>&1 &
    # shellcheck disable=SC2034
    JOB=$!
}

# at SECONDS CMD...: wait until SECONDS after the launch, then run CMD (logged).
at() {
    local t=$1
    shift
    while (($(date +%s%N) / 1000000 - T0 < t * 1000)); do sleep 0.05; done
    echo "  t=${t}s: $*"
    "$@"
}

# The rail cycle during a job of 20 s: rail 1 of h1 down at 3 s, up at 7 s, rail 2 down at 11 s,
# up at 15 s.
cycle_rails() {
    at 3 "$VC" fail h1 1
    at 7 "$VC" heal h1 1
    at 11 "$VC" fail h1 2
    at 15 "$VC" heal h1 2
}

show() { sed 's/^/    /' "$1"; }

# expect_ok NAME OUT RC: failover_stream's job must have completed with every message checked.
expect_ok() {
    local name=$1 out=$2 rc=$3
    show "$out"
    if ((rc == 0)) && grep -q '^failover_stream: OK' "$out" && ! grep -q FAIL "$out"; then
        pass "$name: completed, every message checked ($(grep -o 'OK .*' "$out"))"
    else
        fail "$name: exit $rc$( ((rc == 124)) && echo ' (killed by the timeout: hung)')"
    fi
}

# expect_rma_ok NAME OUT RC: rma_blocks' job must have completed with every window checked.
expect_rma_ok() {
    local name=$1 out=$2 rc=$3
    tail -n 4 "$out" | sed 's/^/    /' # one line per window otherwise
    if ((rc == 0)) && grep -q '^rma_blocks: OK' "$out" && ! grep -q FAIL "$out"; then
        pass "$name: completed, every window checked, $(grep -o 'RDMA carried .*' "$out")"
    else
        fail "$name: exit $rc$( ((rc == 124)) && echo ' (killed by the timeout: hung)')"
    fi
}
