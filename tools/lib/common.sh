# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Shared by check.sh and quickstart.sh (sourced, never run): the Debian packages the project
# needs, the autotools build, and a small step runner (progress lines, logs, summary).
#
# Scripts using it: `set -euo pipefail`, cd to the repository root, source this file, declare
# steps with add_step, then call run_steps. See check.sh for an example.

# Compiles through ccache hit what another clone of the repository compiled (the scripts run
# from the repository's root).
# shellcheck source=tools/lib/ccache-env.sh
REPO=$PWD source tools/lib/ccache-env.sh

# ---- Debian 12 packages (the one list) ------------------------------------------------------
# g++ make autoconf automake libtool pkg-config: the project's autotools build
# usrsctp is built from Debian's source (tools/usrsctp-build);  libgtest-dev libgmock-dev googletest: unit tests
# clang libclang-rt-14-dev: libFuzzer and the sanitizer runtimes
# gfortran dpkg-dev python3: MPICH build (Fortran bindings, `apt-get source`, its scripts)
# ccache: faster rebuilds;  iproute2 iptables: virtual cluster;  gnuplot-nox: plots
# openssh-server openssh-client: the virtual cluster's sshds (tools/vcluster up --ssh) and ssh launches
# libssl-dev: OpenSSL's libcrypto, HMAC-SHA-256 of our own SCTP engine's state cookie (src/sctp/)
DEBIAN_PACKAGES=(
    g++ make autoconf automake libtool pkg-config
    libgtest-dev libgmock-dev googletest
    clang libclang-rt-14-dev
    gfortran dpkg-dev patch python3
    ccache iproute2 iptables gnuplot-nox
    openssh-server openssh-client
    libssl-dev
)

# die, say, fmt_duration; die's messages read "check.sh: error: ...".
PROG=$(basename "$0")
# shellcheck source=tools/lib/log.sh
source "$(dirname "${BASH_SOURCE[0]}")/log.sh"

LOG_DIR=build/logs
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
TAIL_LINES=40

if [[ -t 1 && -z ${NO_COLOR:-} ]]; then
    C_BOLD=$'\e[1m' C_RED=$'\e[31m' C_GREEN=$'\e[32m' C_YELLOW=$'\e[33m' C_OFF=$'\e[0m'
else
    C_BOLD='' C_RED='' C_GREEN='' C_YELLOW='' C_OFF=''
fi

# Print a file whole if short, else its head and tail (the reason is usually at the end).
show_capped() {
    local file=$1 n
    n=$(wc -l <"$file")
    if ((n <= 300)); then
        cat "$file"
    else
        head -n 50 "$file"
        printf '... (%d lines left out; whole file: %s) ...\n' $((n - 300)) "$file"
        tail -n 250 "$file"
    fi
}

# ---- Debian packages ------------------------------------------------------------------------
missing_packages() {
    local p
    for p in "${DEBIAN_PACKAGES[@]}"; do
        # "install ok installed" (or "hold ok installed"); anything else counts as missing.
        [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *' installed' ]] || printf '%s\n' "$p"
    done
}

apt_lists_present() { compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; }

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    # Try the package lists the machine has; refresh them only when that is not enough
    # (no lists yet, or stale lists pointing at files the mirror no longer has).
    if apt_lists_present && apt-get install -y "$@"; then
        return 0
    fi
    apt-get update
    apt-get install -y "$@"
}

# Install what is missing (as root), or print the command to run and fail.
ensure_packages() {
    if ! command -v dpkg-query >/dev/null; then
        printf '%swarning:%s no dpkg-query (not Debian?): make sure these are installed: %s\n' \
            "$C_YELLOW" "$C_OFF" "${DEBIAN_PACKAGES[*]}"
        return 0
    fi
    local -a missing
    mapfile -t missing < <(missing_packages)
    if ((${#missing[@]} == 0)); then
        echo "all ${#DEBIAN_PACKAGES[@]} Debian packages are installed"
        return 0
    fi
    if ((EUID != 0)); then
        echo "missing Debian packages: ${missing[*]}" >&2
        echo "as root, run:" >&2
        echo "  apt-get install -y ${missing[*]}" >&2
        return 1
    fi
    echo "installing: ${missing[*]}"
    run_logged apt_install "${missing[@]}"
    mapfile -t missing < <(missing_packages)
    if ((${#missing[@]} != 0)); then
        echo "still missing after apt-get: ${missing[*]} (see $LOG_DIR/$STEP.log)" >&2
        return 1
    fi
}

# ---- the project's autotools build ----------------------------------------------------------
# Regenerate only when configure is missing or older than an input: regenerating rewrites
# configure, which would force every tree to reconfigure.
bootstrap_needed() {
    [[ -e configure ]] || return 0
    local f
    for f in configure.ac acinclude.m4 Makefile.am */Makefile.am */local.mk; do
        if [[ -e $f && $f -nt configure ]]; then
            echo "autoreconf: $f is newer than configure"
            return 0
        fi
    done
    return 1
}

bootstrap() {
    if bootstrap_needed; then
        mkdir -p m4 # AC_CONFIG_MACRO_DIRS names it; a fresh clone has none
        autoreconf -fi
    fi
}

# configure_tree DIR [VAR=value ...]: configure out of tree in DIR, but only when DIR has no
# Makefile yet or configure changed since. Otherwise make's own rules keep the tree current.
# Every tree links the optimised usrsctp of tools/usrsctp-build (built first; quick when current).
# A tree configured with other arguments (or before this rule) is configured again.
configure_tree() {
    local dir=$1
    shift
    bootstrap
    tools/usrsctp-build || return 1
    set -- --with-usrsctp="$PWD/build/usrsctp" "$@"
    if [[ -e $dir/Makefile && ! configure -nt $dir/Makefile && -f $dir/.configure-args &&
        $(<"$dir/.configure-args") == "$*" ]]; then
        return 0
    fi
    local -a cc=()
    if command -v ccache >/dev/null; then
        cc=(CC="ccache gcc" CXX="ccache g++")
    fi
    mkdir -p "$dir"
    local srcdir
    srcdir=$(realpath --relative-to="$dir" .)
    echo "configure in $dir: ${cc[*]} $*"
    (cd "$dir" && "$srcdir/configure" "${cc[@]}" "$@")
    printf '%s' "$*" >"$dir/.configure-args"
}

# build_tree DIR [VAR=value ...]: configure if needed, then build (make's own checks decide
# what is out of date).
build_tree() {
    local dir=$1
    configure_tree "$@"
    make -C "$dir" -j"$JOBS" all
}

# Configured trees nested in DIR (build/asan in build/, other engineers' trees) are not DIR's.
find_in_tree() {
    local dir=$1
    shift
    find "$dir" -mindepth 1 -type d -exec test -e '{}/config.status' ';' -prune -o "$@" -print
}

# run_tests DIR: build the test programs (logged: `check TESTS=` builds them and runs none),
# then `make check` with its output shown directly; on failure print the failing tests' logs
# so that CI output carries the reason.
run_tests() {
    local dir=$1 rc=0
    run_logged make -C "$dir" -j"$JOBS" check TESTS=
    rm -f "$dir/test-suite.log" # that run's empty summary must not pass for this one's
    make -s --no-print-directory -C "$dir" -j"$JOBS" check || rc=$?
    if [[ $dir/test-suite.log -nt $STEP_STAMP ]]; then
        # Automake's counts ("# TOTAL: 2", "# PASS: 2", ...) become the step's summary note.
        step_note "$(awk '/^# [A-Z]+: +[0-9]+$/ {
                k = tolower(substr($2, 1, length($2) - 1))
                if (k == "total") t = $3; else if ($3 > 0 || k == "fail") s = s ", " $3 " " k
            } END { print t " tests" s }' "$dir/test-suite.log")"
    fi
    if ((rc != 0)); then
        show_test_logs "$dir"
    fi
    return "$rc"
}

show_test_logs() {
    local dir=$1 trs log shown=0
    while IFS= read -r trs; do
        grep -qE '^:test-result: (FAIL|ERROR|XPASS)' "$trs" || continue
        log=${trs%.trs}.log
        [[ -f $log ]] || continue
        printf '%s----- %s -----%s\n' "$C_BOLD" "$log" "$C_OFF"
        show_capped "$log"
        shown=1
    done < <(find_in_tree "$dir" -name '*.trs' -newer "$STEP_STAMP" | sort)
    if ((shown == 0)) && [[ -f $dir/test-suite.log && $dir/test-suite.log -nt $STEP_STAMP ]]; then
        printf '%s----- %s -----%s\n' "$C_BOLD" "$dir/test-suite.log" "$C_OFF"
        show_capped "$dir/test-suite.log"
    elif ((shown == 0)); then
        echo "(no test logs from this run: the failure is in the output above)"
    fi
}

# ---- progress and logs ----------------------------------------------------------------------
# While a logged command runs: on a terminal, one line that shows the step's elapsed time and
# the log's last line; elsewhere (CI), one line a minute so that the output shows it is alive.
start_ticker() {
    local log=$1 start=$STEP_START parent=$BASHPID
    (
        exec </dev/null
        n=0
        # Background jobs ignore Ctrl-C: end with the shell that started it, however it ends.
        while sleep 1 >/dev/null 2>&1 && kill -0 "$parent" 2>/dev/null; do
            n=$((n + 1))
            took=$(fmt_duration $((SECONDS - start)))
            if [[ -t 1 ]]; then
                last=$(tail -n 1 "$log" 2>/dev/null | tr -d '\r\t' | cut -c1-60)
                printf '\r\e[K    [%s] %s  %s' "$STEP" "$took" "$last"
            elif ((n % 60 == 0)); then
                # with the log's last line, so that a CI log shows where a long step spends its time
                last=$(tail -n 1 "$log" 2>/dev/null | tr -d '\r\t' | cut -c1-100)
                printf '    [%s] still running (%s): %s\n' "$STEP" "$took" "$last"
            fi
        done
    ) &
    TICKER_PID=$!
}

stop_ticker() {
    kill "$TICKER_PID" 2>/dev/null || true
    wait "$TICKER_PID" 2>/dev/null || true
    if [[ -t 1 ]]; then printf '\r\e[K'; fi
}

# Ctrl-C must stop the script even when the running program catches SIGINT and exits 0 (bash
# carries on then): exit once the current command returns. Set again in every subshell, since
# subshells reset traps.
on_signal_exit() {
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# run_logged CMD...: run CMD (a program or a function) with its output appended to
# build/logs/<step>.log; on failure print the log's tail and return CMD's status.
# Call it as a plain command, never inside `if`, `||` or `&&`: bash ignores `set -e` in
# functions called there, even inside subshells, and a failed command would go unnoticed.
run_logged() {
    local log=$LOG_DIR/$STEP.log rc
    printf '\n### %s\n' "$*" >>"$log"
    start_ticker "$log"
    set +e
    (on_signal_exit; set -e; "$@") >>"$log" 2>&1 </dev/null
    rc=$?
    set -e
    stop_ticker
    if ((rc != 0)); then
        printf '%sfailed (exit %d):%s %s\n' "$C_RED" "$rc" "$C_OFF" "$*"
        printf -- '----- last %d lines of %s -----\n' "$TAIL_LINES" "$log"
        tail -n "$TAIL_LINES" "$log"
        printf -- '----- end of %s -----\n' "$log"
    fi
    return "$rc"
}

# ---- steps ----------------------------------------------------------------------------------
STEP_NAMES=()
declare -A STEP_TITLE=() STEP_FN=() STEP_FLAGS=() STEP_STATUS=() STEP_TIME=() STEP_NOTE=() STEP_SECONDS=()
STEP=''
STEP_START=0
STEP_STAMP=''

# add_step NAME "Title" FUNCTION [--always] [--stop]
#   --always  runs even when CHECK_ONLY does not name it (e.g. installing packages)
#   --stop    if it fails, the steps after it are skipped (nothing to test without a build)
# FUNCTION runs in a subshell with `set -e`; its output is shown directly. Wrap long, noisy
# commands in run_logged. Steps run in the order they were added.
add_step() {
    local name=$1 title=$2 fn=$3
    shift 3
    [[ -z ${STEP_FN[$name]:-} ]] || die "step '$name' declared twice"
    STEP_NAMES+=("$name")
    STEP_TITLE[$name]=$title
    STEP_FN[$name]=$fn
    STEP_FLAGS[$name]=" $* "
}

# step_note TEXT: a short note for the summary line of the running step.
step_note() { printf '%s' "$1" >"$LOG_DIR/.$STEP.note"; }

list_steps() {
    local name
    for name in "${STEP_NAMES[@]}"; do
        printf '  %-12s %s\n' "$name" "${STEP_TITLE[$name]}"
    done
}

# Runs one step; records its status instead of returning it (see run_logged on `set -e`).
run_step() {
    local name=$1 rc took
    STEP=$name
    STEP_START=$SECONDS
    mkdir -p "$LOG_DIR"
    : >"$LOG_DIR/$name.log"
    rm -f "$LOG_DIR/.$name.note"
    STEP_STAMP=$LOG_DIR/.$name.start
    : >"$STEP_STAMP"
    printf '%s==> [%s] %s ...%s\n' "$C_BOLD" "$name" "${STEP_TITLE[$name]}" "$C_OFF"
    set +e
    (on_signal_exit; set -e; "${STEP_FN[$name]}")
    rc=$?
    set -e
    took=$(fmt_duration $((SECONDS - STEP_START)))
    STEP_TIME[$name]=$took
    STEP_SECONDS[$name]=$((SECONDS - STEP_START))
    if [[ -f $LOG_DIR/.$name.note ]]; then STEP_NOTE[$name]=$(<"$LOG_DIR/.$name.note"); fi
    if ((rc == 0)); then
        STEP_STATUS[$name]=ok
        printf '%s<== [%s] %s: ok (%s)%s\n' "$C_GREEN" "$name" "${STEP_TITLE[$name]}" "$took" "$C_OFF"
    elif ((rc == 77)); then # could not run here (its note says why): not a pass, not a failure
        STEP_STATUS[$name]=skipped
        printf '%s<== [%s] %s: skipped (%s) %s%s\n' "$C_YELLOW" "$name" "${STEP_TITLE[$name]}" "$took" \
            "${STEP_NOTE[$name]:-}" "$C_OFF"
    else
        STEP_STATUS[$name]=FAILED
        printf '%s<== [%s] %s: FAILED (exit %d, %s)%s\n' "$C_RED" "$name" "${STEP_TITLE[$name]}" "$rc" "$took" "$C_OFF"
    fi
}

# The time budget (STEP_BUDGET_S, set by the caller; none: no budget shown): CI stops a run at
# 90 minutes, so the gate keeps a margin below that, and the summary shows each step's share of
# the budget, so that growth shows before a run fails on time. Printed, never a failure: the
# machine's load decides the time as much as the code does.
# budget_share SECONDS: "12%" of the budget, or nothing without one.
budget_share() {
    ((${STEP_BUDGET_S:-0} > 0)) && [[ -n $1 ]] || return 0
    printf '%d%%' $(($1 * 100 / STEP_BUDGET_S))
}

# budget_line TOTAL_SECONDS: the total against the budget, with a warning above it.
budget_line() {
    ((${STEP_BUDGET_S:-0} > 0)) || return 0
    local verdict="within it"
    (($1 <= STEP_BUDGET_S)) || verdict="${C_YELLOW}OVER IT by $(fmt_duration $(($1 - STEP_BUDGET_S)))${C_OFF}"
    echo "  time budget: $(fmt_duration "$1") of $(fmt_duration "$STEP_BUDGET_S") ($(budget_share "$1")), $verdict"
}

# run_steps "NAME ...": run the declared steps (all of them when the list is empty, else the
# named ones plus --always ones), print a summary, and return 0 only if every step passed.
run_steps() {
    local only=${1:-} name color stopped='' passed=0 failed=0 skipped=0 start=$SECONDS
    on_signal_exit
    for name in $only; do
        [[ -n ${STEP_FN[$name]:-} ]] || die "unknown step '$name'; steps are: ${STEP_NAMES[*]}"
    done
    local -a ran=()
    for name in "${STEP_NAMES[@]}"; do
        if [[ -n $only && " $only " != *" $name "* && ${STEP_FLAGS[$name]} != *' --always '* ]]; then
            continue
        fi
        ran+=("$name")
        if [[ -n $stopped ]]; then
            STEP_STATUS[$name]=skipped
            continue
        fi
        run_step "$name"
        if [[ ${STEP_STATUS[$name]} != ok && ${STEP_FLAGS[$name]} == *' --stop '* ]]; then
            stopped=$name
        fi
    done

    printf '\n%s==> summary%s\n' "$C_BOLD" "$C_OFF"
    for name in "${ran[@]}"; do
        case ${STEP_STATUS[$name]} in
        ok) passed=$((passed + 1)) color=$C_GREEN ;;
        FAILED) failed=$((failed + 1)) color=$C_RED ;;
        *) skipped=$((skipped + 1)) color=$C_YELLOW ;;
        esac
        printf '  %-12s %s%-8s%s %6s %5s  %s\n' "$name" "$color" "${STEP_STATUS[$name]}" "$C_OFF" \
            "${STEP_TIME[$name]:-}" "$(budget_share "${STEP_SECONDS[$name]:-}")" "${STEP_NOTE[$name]:-}"
    done
    [[ -z $stopped ]] || echo "  (skipped because '$stopped' failed)"
    [[ -z $only ]] || echo "  (only the steps named in CHECK_ONLY=\"$only\")"
    echo "  total $(fmt_duration $((SECONDS - start))); logs in $LOG_DIR/"
    budget_line $((SECONDS - start))
    # The closing line in the "N passed, N failed" form that CI reads.
    if ((skipped > 0)); then
        echo "steps: $passed passed, $failed failed, $skipped skipped"
    else
        echo "steps: $passed passed, $failed failed"
    fi
    ((failed == 0))
}
