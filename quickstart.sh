#!/usr/bin/env bash
# Install missing Debian packages (as root), build, then run the transport benchmark
# build/bin/sctp-perf (both sides on loopback). Arguments go to sctp-perf unchanged:
#
#   ./quickstart.sh            full run
#   ./quickstart.sh --quick    a shorter run
#
# Exit status 0 only if the build and every run succeeded.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=tools/lib/common.sh
source tools/lib/common.sh

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

# The steps, in order; the MPI runs are appended here the same way (see check.sh).
add_step deps "Debian packages" step_deps --always --stop
add_step build "Build (build/)" step_build --stop
add_step sctp-perf "SCTP transport benchmark on loopback" step_perf

run_steps "" # every step
