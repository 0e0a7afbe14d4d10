# shellcheck shell=bash
# The MPICH installs step of check.sh and quickstart.sh (sourced, never run; after
# tools/lib/common.sh, whose run_logged, LOG_DIR and TAIL_LINES it uses). MPICH-specific, so
# not in the generic step runner.

# step_mpich_installs: MPICH 4.0.2 from Debian's source with the channels named in
# MPICH_INSTALLS (default "sctp hybrid sock": our two, build/install/ch3-sctp and ch3-hybrid, and
# the stock ch3:sock reference beside them), cached (tools/mpich-build), after one integration of
# our channels into the shared source tree. The last one builds in the background while the
# others build in order in the foreground (each configure is single-threaded for minutes;
# together they keep both cores busy).
step_mpich_installs() {
    run_logged tools/mpich-fetch
    run_logged tools/mpich-integrate build/mpich-src/mpich-4.0.2
    local -a channels
    read -r -a channels <<<"${MPICH_INSTALLS:-sctp hybrid sock}"
    local last=${channels[-1]} ch rc=0 last_rc=0
    local last_log=$LOG_DIR/mpich-$last.log last_pid
    MPICH_INTEGRATE=0 tools/mpich-build "$last" >"$last_log" 2>&1 </dev/null &
    last_pid=$!
    for ch in "${channels[@]:0:${#channels[@]}-1}"; do
        MPICH_INTEGRATE=0 run_logged tools/mpich-build "$ch" || rc=$?
    done
    wait "$last_pid" || last_rc=$?
    if ((last_rc != 0)); then
        echo "failed (exit $last_rc): tools/mpich-build $last; last lines of $last_log:"
        tail -n "$TAIL_LINES" "$last_log"
    fi
    tail -n 1 "$last_log"
    ((rc == 0 && last_rc == 0))
}
