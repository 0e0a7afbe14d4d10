#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build and test everything: installs missing Debian packages (as root), builds in build/,
# runs `make check`, then the same tests under ASan/UBSan in build/asan, and the iWARP tests
# under TSan in build/tsan.
#
#   ./check.sh                           all steps
#   CHECK_ONLY="build test" ./check.sh   only these steps (package install always runs)
#   ./check.sh --list                    the steps
#
# Exit status 0 only if every step passed. Build output: build/logs/<step>.log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=tools/lib/common.sh
source tools/lib/common.sh
# shellcheck source=tools/lib/mpich-step.sh
source tools/lib/mpich-step.sh

SANITIZE="-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer"

step_deps() { ensure_packages; }

step_build() {
    run_logged build_tree build
    start_mpich_builds # MPICH links the libraries just built
}

step_test() {
    run_logged build_tree build # a no-op after the build step; needed for CHECK_ONLY=test
    run_tests build
}

step_asan() {
    run_logged build_tree build/asan CFLAGS="$SANITIZE" CXXFLAGS="$SANITIZE" \
        LDFLAGS="-fsanitize=address,undefined"
    # User-supplied options come last so that they win.
    export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    run_tests build/asan
    no_sanitizer_reports build/asan/tests
}

# A report printed by one thread of a pair test's child can lose the race with the child's main
# thread, which ends the child with status 0 once its side is done: the test passes, the report is
# in its log. Any report in a test log fails the step.
no_sanitizer_reports() {
    local logs
    logs=$(grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"/*.log || true)
    [[ -z $logs ]] && return 0
    local log
    for log in $logs; do
        printf 'sanitizer report in %s:\n' "$log"
        grep -m3 -A12 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log"
    done
    return 1
}

# The libFuzzer targets of the parsers of network bytes (tests/fuzz/), deterministic: each runs
# its committed seed corpus (findings fixed earlier among them, as regress_*), then FUZZ_RUNS
# mutations from FUZZ_SEED (tools/fuzz gate), so the step fails only when the code changed, never
# on the luck of a random seed. Searches from random seeds are a report (tools/fuzz campaign),
# run before an issue that touches a parser is resolved. A finding's input is kept in
# build/fuzz/findings/<target>/.
step_fuzz() {
    run_logged make -C build -j"$JOBS" fuzz fuzz-iwarp
    run_logged tools/fuzz gate
}

# The iWARP tests (several threads on one device among them) and the transport's two-process tests
# (a thread watching an fd while another waits in progress among them) under ThreadSanitizer in
# build/tsan; any report fails. Only those three programs are built there. Suppressions (frames
# inside usrsctp, which is not instrumented): tests/tsan.supp.
TSAN_FLAGS="-g -O1 -fsanitize=thread"
step_tsan() {
    run_logged configure_tree build/tsan CFLAGS="$TSAN_FLAGS" CXXFLAGS="$TSAN_FLAGS" LDFLAGS=-fsanitize=thread
    run_logged make -C build/tsan -j"$JOBS" tests/iwarp_unit_tests tests/iwarp_pair_tests tests/transport_tests
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    # usrsctp's mbufs and clusters from malloc, not its magazines (mbuf-magazines.patch): TSan
    # takes a free and a new malloc as the end of a block's history, not a cluster one thread
    # gives back and another reuses, ordered by reference counts it cannot see.
    export USRSCTP_MBUF_MAGAZINES=0
    local t
    for t in iwarp_unit_tests iwarp_pair_tests transport_tests; do
        echo "build/tsan/tests/$t"
        build/tsan/tests/$t --gtest_brief=1
    done
    echo "build/tsan/tests/transport_tests on our own SCTP engine (stack=own)"
    TRANSPORT_TESTS=build/tsan/tests/transport_tests tests/transport_tests_own.sh --gtest_brief=1
    echo "build/tsan/tests/iwarp_pair_tests with the RNIC on our own SCTP engine (stack=own)"
    IWARP_PAIR_TESTS=build/tsan/tests/iwarp_pair_tests tests/iwarp_pair_tests_own.sh --gtest_brief=1
}

# Our MPI programs (C and Fortran) on ch3:sctp, each checking its data (tests/mpi/README.md).
# Each channel runs every test (ch3:hybrid is a complete MPI too); ch3:hybrid also the RDMA
# variants of rma_blocks, which fail unless RDMA carried puts and gets.
step_mpi() {
    local rc=0
    tests/mpi/run-tests ch3-sctp && osu-bench/run-smoke ch3-sctp || rc=1
    tests/mpi/run-tests ch3-hybrid && osu-bench/run-smoke ch3-hybrid || rc=1
    echo "tests/mpi on ch3:sctp with the transport on our own SCTP engine (stack=own)"
    MPIR_CVAR_CH3_SCTP_STACK=own tests/mpi/run-tests ch3-sctp || rc=1
    return $rc
}

# A process outside the job attacks a live 2-rank job on each channel (tests/adversary/run).
step_adversary() { tests/adversary/run ch3-sctp ch3-hybrid; }

# MPICH's own test suite: the gate is that ch3:sctp passes every test ch3:sock passes
# (exclusions with reasons: tests/mpi/testsuite-exclusions.txt). ch3:sctp runs the whole
# selection; ch3:sock then runs only the programs ch3:sctp did not pass, which is all the gate
# needs to tell a ch3:sctp defect from a test that fails on both (the install is built for that
# the first time it is needed; the programs are ch3:sctp's, with ch3:sock's libmpi loaded: the
# same headers, so the same programs: the suite is not configured and built a second time).
# The full run of both channels
# is the report (tests/mpi/README.md: tools/mpich-testsuite <install> --all).
# ch3:sctp's run has a wall-clock deadline so that check.sh stays inside CI's 90 minutes; a test
# that did not run before it counts as not passed, so running out of time fails the gate.
TESTSUITE_SUBSETS=${TESTSUITE_SUBSETS:-pt2pt,coll,comm,datatype,spawn,f77,rma,threads}
TESTSUITE_DEADLINE_SCTP=${TESTSUITE_DEADLINE_SCTP:-2400}
TESTSUITE_DEADLINE_SOCK=${TESTSUITE_DEADLINE_SOCK:-600}
TESTSUITE_DEADLINE_RETRY=${TESTSUITE_DEADLINE_RETRY:-900}
TESTSUITE_DEADLINE_HYBRID=${TESTSUITE_DEADLINE_HYBRID:-900}
# The last results table (per subset: passed, failed, skipped, time) in this step's log.
show_testsuite_table() {
    awk '/^subset +passed/ { t = "" } { t = t $0 "\n" } END { printf "%s", t }' "$LOG_DIR/$STEP.log" |
        sed -n '/^subset/,/^mpich-testsuite:/p' | sed 's/^/    /'
}
# The tests ch3:sctp did not pass run once more; one that passes then counts as passed and is
# printed as FLAKY (a step note too), so an intermittent defect stays visible. One that fails twice
# still fails the gate. (Until 2026-11-24 about one test per gate run hung: a usrsctp race that
# lost a queued message, fixed by tools/patches/usrsctp/audit-under-send-lock.patch.)
RESULTS=build/testsuite/results RETRY=build/testsuite/retry
retry_sctp_failures() {
    rm -rf "$RETRY"
    mkdir -p "$RETRY/ch3-sctp"
    cp "$RESULTS/ch3-sctp/results.tsv" "$RETRY/ch3-sctp/results.tsv" # what --only-failures-of reads
    run_logged tools/mpich-testsuite ch3-sctp --subsets "$TESTSUITE_SUBSETS" --only-failures-of ch3-sctp \
        --out "$RETRY" --deadline "$TESTSUITE_DEADLINE_RETRY"
    local first=$RESULTS/ch3-sctp/results.tsv flaky
    cp "$first" "$RESULTS/ch3-sctp/results.first-run.tsv"
    # FILENAME, not FNR == NR: the retry's results are empty when it had nothing to run, and
    # FNR == NR then holds for every line of the first run's file, which came out empty (and
    # the ch3:sock reference then built and ran all 634 programs).
    awk -F'\t' -v OFS='\t' 'FILENAME == ARGV[1] { if ($3 == "PASS") again[$2] = 1; next }
        $3 != "PASS" && $3 != "SKIP" && ($2 in again) { print "FLAKY  " $2 ": " $3 " on the first run, passed when run again" >"/dev/stderr"; $3 = "PASS" }
        { print }' "$RETRY/ch3-sctp/results.tsv" "$RESULTS/ch3-sctp/results.first-run.tsv" >"$first" 2>"$RETRY/flaky.txt"
    cat "$RETRY/flaky.txt"
    flaky=$(grep -c '^FLAKY' "$RETRY/flaky.txt" || true)
    ((flaky == 0)) || step_note "$flaky flaky on ch3:sctp (passed when run again): $(cut -d' ' -f3 "$RETRY/flaky.txt" | sed 's/:$//' | paste -sd' ')"
}
step_testsuite() {
    # runtests' time limits detect hangs; they are doubled (both channels) because on this shared
    # 2-core machine ch3:sctp needs longer than 180 s for a few oversubscribed, latency-bound
    # tests (coll/nonblocking3 with 10 ranks: ch3:sock 60 s, ch3:sctp over 180 s under load).
    # That slowness is an open performance problem, not a pass condition.
    export MPITEST_TIMEOUT_MULTIPLIER=${MPITEST_TIMEOUT_MULTIPLIER:-2}
    run_logged tools/mpich-testsuite ch3-sctp --subsets "$TESTSUITE_SUBSETS" --deadline "$TESTSUITE_DEADLINE_SCTP"
    show_testsuite_table
    retry_sctp_failures
    run_logged tools/mpich-testsuite ch3-sock --subsets "$TESTSUITE_SUBSETS" --only-failures-of ch3-sctp \
        --build-missing --programs-from ch3-sctp --deadline "$TESTSUITE_DEADLINE_SOCK"
    show_testsuite_table
    tools/mpich-testsuite --compare ch3-sctp ch3-sock --subsets "$TESTSUITE_SUBSETS" || return 1
    hybrid_rma_subset '' ch3-sctp
}

# ch3:hybrid on MPICH's rma tests, with RDMA thresholds of 1 byte: every contiguous put and get
# above CH3's 8-byte immediate size then moves by RDMA (the default 16 KiB would leave nearly all
# of them on the SCTP path, which the ch3:sctp run above already covers). Gate: it passes every
# rma test ch3:sock passes (ch3:sock runs only what ch3:hybrid did not pass; its own directory).
# On the default MPICH, the programs are those built for ch3:sctp just before (the same headers,
# so the same programs; ch3:hybrid's libmpi is loaded instead, which mpich-testsuite checks).
# hybrid_rma_subset [VERSION/ [PROGRAMS-FROM]]: the installs of VERSION (none: the default's),
# on PROGRAMS-FROM's programs when given (else built for ch3:hybrid).
hybrid_rma_subset() {
    local v=${1:-} results=build/testsuite/hybrid${1:+-${1%/}}
    local -a programs=()
    [[ -n ${2:-} ]] && programs=(--programs-from "$2")
    rm -rf "$results"
    MPIR_CVAR_CH3_HYBRID_PUT_THRESHOLD=1 MPIR_CVAR_CH3_HYBRID_GET_THRESHOLD=1 \
        run_logged tools/mpich-testsuite "${v}ch3-hybrid" --subsets rma --out "$results" \
        "${programs[@]}" --deadline "$TESTSUITE_DEADLINE_HYBRID"
    show_testsuite_table
    run_logged tools/mpich-testsuite "${v}ch3-sock" --subsets rma --only-failures-of "${v}ch3-hybrid" \
        --out "$results" --build-missing --programs-from "${2:-${v}ch3-hybrid}" --deadline "$TESTSUITE_DEADLINE_SOCK"
    tools/mpich-testsuite --compare "${v}ch3-hybrid" "${v}ch3-sock" --subsets rma --out "$results"
}

# The other MPICH versions (tools/lib/mpich-versions.sh: MPICH_OTHER_VERSIONS; the default one is
# the mpich step's): ch3:hybrid built against each, our MPI tests on it, and MPICH's rma subset
# with every put and get by RDMA. ch3:hybrid compiles every source of ch3:sctp too (with its
# extension on; all but ch3_no_ext.c, ch3:sctp's empty extension table), so one build covers both
# channels' code against that MPICH. MPICH_OTHER_CHANNELS="sctp hybrid" also runs the tests on
# ch3:sctp, a view of that build (MPICH_SCTP_VIEW below), about two minutes more.
read -r -a OTHER_CHANNELS <<<"${MPICH_OTHER_CHANNELS:-hybrid}"
MPICH_BUILDS=$LOG_DIR/mpich-builds # the background build's pid, and a status file per version

# The MPICH installs build in the background, one version after the other (the default first),
# from the end of the build step on (its libraries are what MPICH links), at the lowest CPU
# priority (SCHED_IDLE, else nice 19): the steps in between leave cores idle (MPICH's autogen
# and configure run on one core for minutes, tests wait for timers, rate-limited rails and
# process start-up), and every other process preempts the build at once, so the tests run as
# they would alone. The mpich and mpich-other steps wait for their version's build (and have
# the cores to themselves meanwhile); their output goes to build/logs/mpich-build-<version>.log.
# Built in the foreground, a cold 4.0.2 build added about 12 minutes to CI on a slow machine.
# With CHECK_ONLY naming no build step, the mpich steps build in the foreground.
wanted_step() { [[ -z ${CHECK_ONLY:-} || " $CHECK_ONLY " == *" $1 "* ]]; }
start_mpich_builds() {
    local -a versions=()
    wanted_step mpich && versions+=("$MPICH_DEFAULT_VERSION")
    if wanted_step mpich-other; then
        local v
        for v in $MPICH_OTHER_VERSIONS; do [[ $v == "$MPICH_DEFAULT_VERSION" ]] || versions+=("$v"); done
    fi
    ((${#versions[@]} > 0)) || return 0
    mkdir -p "$MPICH_BUILDS" # emptied when check.sh starts
    set -m # its own process group, which stop_mpich_builds ends
    (
        chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null 2>&1 || true
        for v in "${versions[@]}"; do
            STEP=mpich-build-$v
            : >"$LOG_DIR/$STEP.log"
            rc=0
            mpich_installs "$v" $(channels_of "$v") || rc=$?
            echo "$rc" >"$MPICH_BUILDS/$v.status"
        done
    ) >"$MPICH_BUILDS/output.log" 2>&1 </dev/null &
    echo $! >"$MPICH_BUILDS/pid"
    set +m
}

# channels_of VERSION: the channels built for it (the default: MPICH_INSTALLS, below).
channels_of() {
    if [[ $1 == "$MPICH_DEFAULT_VERSION" ]]; then echo "$MPICH_INSTALLS"; else echo "${OTHER_CHANNELS[*]}"; fi
}

# At check.sh's exit: a background build still running (a step failed, or CHECK_ONLY) ends.
stop_mpich_builds() {
    local pid
    [[ -f $MPICH_BUILDS/pid ]] || return 0
    pid=$(<"$MPICH_BUILDS/pid")
    kill -0 "$pid" 2>/dev/null || return 0
    kill -- -"$pid" 2>/dev/null || true
}

# installs_of VERSION: that version's installs, from the background build when this run started
# one, else built now.
installs_of() {
    local v=$1 pid='' log=$LOG_DIR/mpich-build-$1.log
    [[ -f $MPICH_BUILDS/pid ]] && pid=$(<"$MPICH_BUILDS/pid")
    if [[ -n $pid ]]; then
        local waited=$SECONDS
        while [[ ! -f $MPICH_BUILDS/$v.status ]] && kill -0 "$pid" 2>/dev/null; do sleep 2; done
        if [[ -f $MPICH_BUILDS/$v.status ]]; then
            echo "MPICH $v: built in the background (waited $((SECONDS - waited)) s for it; log: $log)"
            (($(<"$MPICH_BUILDS/$v.status") == 0)) && return 0
            tail -n "$TAIL_LINES" "$log"
            return 1
        fi
        echo "MPICH $v: the background build ended without a result; building it now"
    fi
    # shellcheck disable=SC2046 # the channels split into words
    mpich_installs "$v" $(channels_of "$v")
}

step_mpich_other() {
    local v ch rc=0
    for v in $MPICH_OTHER_VERSIONS; do
        if [[ $v == "$MPICH_DEFAULT_VERSION" ]]; then # MPICH_DEFAULT_VERSION=4.0.2: gated above already
            step_note "MPICH $v is the default version this run: gated by the steps above"
            continue
        fi
        if ! installs_of "$v"; then
            rc=1
            continue
        fi
        for ch in "${OTHER_CHANNELS[@]}"; do
            tests/mpi/run-tests "$v/ch3-$ch" || rc=1
        done
        hybrid_rma_subset "$v/" || rc=1
    done
    return $rc
}

# The NAS Parallel Benchmarks at class S, 4 ranks on loopback, on ch3:sctp and ch3:hybrid: all
# eight must print NPB's "Verification = SUCCESSFUL" (osu-bench/run-nas --smoke). The NPB source
# is NPB_SOURCE (NPB3.4-MPI.tar.gz from NASA, or its folder); without one, run-nas looks beside
# the repository and exits 77 when it finds none: the step is then reported as skipped, with that
# note (not as passed; check.sh still exits 0).
step_nas() {
    local rc=0
    osu-bench/run-nas --smoke ${NPB_SOURCE:+--npb "$NPB_SOURCE"} || rc=$?
    if ((rc == 77)); then
        step_note "no NPB 3.4 source (NPB_SOURCE=<NPB3.4-MPI.tar.gz or its folder>)"
        return 77
    fi
    return "$rc"
}

# The documentation (tools/check-docs): every relative link and #anchor between the Markdown files
# resolves, every page of docs/ is reachable from README.md, docs/configuration.md is what
# tools/gen-settings-doc makes of the code now (a setting missing or a default changed fails),
# and every tracked source file carries its SPDX line. Seconds, no build, no network.
step_docs() { tools/check-docs; }

# A root-only test: exit status 77 means it could not run here (not root, or a virtual cluster
# is already up); the step is then reported as skipped with that note (check.sh still exits 0).
run_root_test() {
    local rc=0
    "$@" || rc=$?
    if ((rc == 77)); then
        step_note "needs root (network namespaces), and no virtual cluster already up"
        return 77
    fi
    return "$rc"
}

# The virtual cluster (network namespaces): networks, rail failure, and one MPI job across two
# hosts on each channel.
step_vcluster() { run_root_test tests/vcluster/selftest; }

# Failover of ch3:sctp on the virtual cluster: rails taken down and brought back during checked
# traffic, a rail already down at launch, and all rails of a host lost mid-run (the job must end
# with an MPI error, not hang). Then the rail cycle once more at the standard Ethernet MTU of
# 1500, for ch3:sctp and for RDMA.
step_failover() {
    run_root_test tests/vcluster/failover || return
    FAILOVER_MTU=1500 run_root_test tests/vcluster/failover mixed rdma || return
    # The transport on our own SCTP engine (stack=own) through the same rail cycles, with CMT too.
    MPIR_CVAR_CH3_SCTP_STACK=own run_root_test tests/vcluster/failover mixed cmt down-at-start all-rails-down
}

# Jobs launched as on real machines: sshd in every host, the multihome file written over ssh by
# tools/multihome-gen, mpiexec -launcher ssh with a host file; ch3:sctp and ch3:hybrid's RDMA
# through rail failures, each rank on its host, both rails used.
step_ssh() { run_root_test tests/vcluster/ssh-launch; }

# Chaos on the virtual cluster: one 30-s job per mode (ch3:sctp, ch3:sctp with CMT, ch3:hybrid
# with RDMA) of checked traffic while a schedule fails and heals rails, cuts all rails of a host
# for less than an association's failure time, switches loss on and off and changes rail rates.
# The gate's seed is fixed (7: every kind of event, two blackouts), so a gate never fails on the
# luck of a schedule; other seeds and long runs are a report (tests/vcluster/chaos --minutes 60).
# A failed job's files are kept in build/chaos/ and its schedule replays with --schedule.
CHAOS_SEED=${CHAOS_SEED:-7}
step_chaos() { run_root_test tests/vcluster/chaos --seed "$CHAOS_SEED"; }

# Every packet fits its rail's MTU (no IP fragment) at MTU 1500, 9000 and mixed rails, for
# ch3:sctp and the RNIC's associations, and a route MTU that drops mid-run is learned.
step_mtu() { run_root_test tests/vcluster/no-fragments; }

# The steps, in order. Later work appends its own (MPICH builds, MPI tests) the same way:
# define step_<name>, then add_step <name> "Title" step_<name> [--always] [--stop].
add_step deps "Debian packages" step_deps --always --stop
add_step docs "Documentation: links and anchors, the generated settings page, SPDX lines (tools/check-docs)" step_docs
add_step build "Build (build/)" step_build --stop
add_step test "Unit and integration tests (make check in build/)" step_test
add_step asan "Tests under ASan/UBSan (build/asan)" step_asan
add_step tsan "iWARP and transport tests under ThreadSanitizer (build/tsan)" step_tsan
add_step fuzz "Fuzz targets of the network-byte parsers, seed corpora and a fixed-seed run (build/fuzz)" step_fuzz
# The gate builds our two channels only: the ch3:sock reference is built by the testsuite step
# when, and only when, a test did not pass on ch3:sctp or ch3:hybrid (--build-missing). A cold
# MPICH build costs about 15 minutes of CI's 90 here; a clean run never needs that one.
# Each MPICH version is built once, as ch3:hybrid: ch3:sctp is checked to compile as ch3:sctp
# and runs as a view of that build with ch3:hybrid's extension off, which is ch3:sctp's code
# (tools/mpich-sctp-view says why). MPICH_SCTP_VIEW=0 builds ch3:sctp for real (a second
# MPICH build: 10 to 25 minutes cold).
MPICH_INSTALLS="sctp hybrid"
export MPICH_SCTP_VIEW=${MPICH_SCTP_VIEW:-1}
step_mpich() { installs_of "$MPICH_DEFAULT_VERSION"; }
add_step mpich "MPICH $MPICH_DEFAULT_VERSION with ch3:sctp and ch3:hybrid (build/install)" step_mpich --stop
add_step mpi "MPI integration tests on ch3:sctp and ch3:hybrid, and on ch3:sctp over our own SCTP engine (tests/mpi)" step_mpi
add_step adversary "An attacker outside the job against ch3:sctp and ch3:hybrid (tests/adversary/run)" step_adversary
add_step nas "NAS Parallel Benchmarks class S on ch3:sctp and ch3:hybrid (osu-bench/run-nas --smoke)" step_nas
add_step vcluster "Virtual cluster self-test (root)" step_vcluster
add_step mtu "No IP fragment on the rails at MTU 1500, 9000 and mixed (root)" step_mtu
add_step failover "ch3:sctp (and ch3:hybrid RDMA) failover on the virtual cluster (root)" step_failover
add_step chaos "Chaos: rails failing, host blackouts, loss and rate changes under checked traffic, virtual cluster (root)" step_chaos
add_step ssh "Jobs launched over ssh with a generated multihome file, virtual cluster (root)" step_ssh
add_step testsuite "MPICH test suite, ch3:sctp (and ch3:hybrid on rma) against ch3:sock" step_testsuite
add_step mpich-other "MPICH $MPICH_OTHER_VERSIONS: ch3:hybrid built, tests/mpi and the rma subset on it" step_mpich_other

case ${1:-} in
'') ;;
--list) list_steps; exit 0 ;;
-h | --help) sed -n '3,10s/^# \{0,1\}//p' "$0"; echo; list_steps; exit 0 ;;
*) die "unknown argument '$1' (try --help)" ;;
esac

# The gate's time budget: 60 minutes on a 2-core machine from a fresh clone with empty caches,
# a margin under CI's 90 (the summary prints each step's share and the total against it).
STEP_BUDGET_S=${CHECK_BUDGET_S:-3600}
rm -rf "$MPICH_BUILDS" # a status file from an earlier run must not count
trap stop_mpich_builds EXIT
run_steps "${CHECK_ONLY:-}"
