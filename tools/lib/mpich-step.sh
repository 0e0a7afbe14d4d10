# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The MPICH installs step of check.sh and quickstart.sh (sourced, never run; after
# tools/lib/common.sh, whose run_logged, LOG_DIR and TAIL_LINES it uses). MPICH-specific, so
# not in the generic step runner.

# shellcheck source=tools/lib/mpich-versions.sh
source tools/lib/mpich-versions.sh

# mpich_installs VERSION CHANNEL...: MPICH VERSION (tools/mpich-source says where its source
# comes from: Debian's package for 4.0.2) with the given channels, cached (tools/mpich-build),
# after one integration of our channels into that version's source tree. The last channel builds
# in the background while the others build in order in the foreground (each configure is
# single-threaded for minutes; together they keep both cores busy).
# With MPICH_SCTP_VIEW=1 (check.sh's default) and both sctp and hybrid asked for, sctp is not
# built: once hybrid is, tools/mpich-sctp-view checks that ch3:sctp's sources compile as ch3:sctp
# and makes its install a view of ch3:hybrid's run as ch3:sctp (one MPICH build for both).
mpich_installs() {
    local version=$1 tree view=0
    shift
    local -a channels=("$@")
    if [[ ${MPICH_SCTP_VIEW:-0} == 1 && " ${channels[*]} " == *" sctp "* && " ${channels[*]} " == *" hybrid "* ]]; then
        view=1
        local -a built=()
        local c
        for c in "${channels[@]}"; do [[ $c == sctp ]] || built+=("$c"); done
        channels=("${built[@]}")
    fi
    run_logged tools/mpich-source "$version" || return
    tree=$(tail -n 1 "$LOG_DIR/$STEP.log")
    run_logged tools/mpich-integrate "$tree" || return
    local last=${channels[-1]} ch rc=0 last_rc=0
    local last_log=$LOG_DIR/mpich-$version-$last.log last_pid
    MPICH_INTEGRATE=0 tools/mpich-build --mpich "$version" "$last" >"$last_log" 2>&1 </dev/null &
    last_pid=$!
    for ch in "${channels[@]:0:${#channels[@]}-1}"; do
        MPICH_INTEGRATE=0 run_logged tools/mpich-build --mpich "$version" "$ch" || rc=$?
    done
    wait "$last_pid" || last_rc=$?
    if ((last_rc != 0)); then
        echo "failed (exit $last_rc): tools/mpich-build --mpich $version $last; last lines of $last_log:"
        tail -n "$TAIL_LINES" "$last_log"
    fi
    tail -n 1 "$last_log"
    ((rc == 0 && last_rc == 0)) || return 1
    ((view == 0)) || run_logged tools/mpich-sctp-view --mpich "$version"
}

# step_mpich_installs: the default MPICH version (tools/lib/mpich-versions.sh) with the channels
# named in MPICH_INSTALLS (default "sctp hybrid sock": our two, build/install/ch3-sctp and
# ch3-hybrid, and the stock ch3:sock reference beside them).
step_mpich_installs() {
    local -a channels
    read -r -a channels <<<"${MPICH_INSTALLS:-sctp hybrid sock}"
    mpich_installs "$MPICH_DEFAULT_VERSION" "${channels[@]}"
}
