#!/usr/bin/env bash
# Build and test everything: installs missing Debian packages (as root), builds in build/,
# runs `make check`, then the same tests under ASan/UBSan in build/asan.
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

SANITIZE="-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer"

step_deps() { ensure_packages; }

step_build() { run_logged build_tree build; }

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
}

# The steps, in order. Later work appends its own (MPICH builds, MPI tests) the same way:
# define step_<name>, then add_step <name> "Title" step_<name> [--always] [--stop].
add_step deps "Debian packages" step_deps --always --stop
add_step build "Build (build/)" step_build --stop
add_step test "Unit and integration tests (make check in build/)" step_test
add_step asan "Tests under ASan/UBSan (build/asan)" step_asan

case ${1:-} in
'') ;;
--list) list_steps; exit 0 ;;
-h | --help) sed -n '2,9s/^# \{0,1\}//p' "$0"; echo; list_steps; exit 0 ;;
*) die "unknown argument '$1' (try --help)" ;;
esac

run_steps "${CHECK_ONLY:-}"
