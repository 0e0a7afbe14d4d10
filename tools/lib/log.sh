# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Messages and exit statuses shared by the repository's scripts (sourced, never run), so that
# every script reports the same way. A script names itself, then sources this file:
#
#   PROG=mpich-build
#   # shellcheck source=tools/lib/log.sh
#   source "$REPO/tools/lib/log.sh"
#
# Exit statuses: 2 for usage and setup errors (a bad argument, a missing install, tool or file),
# which is what die exits with; 1 stays for "it ran, and something failed" (a test, a run), and
# 77 for "cannot run here" (Automake's skip). A script whose callers expect another status for
# its own errors sets DIE_STATUS (tools/vcluster-rsh: 255, what ssh returns on its own errors).

: "${PROG:=$(basename "$0")}"

# die MSG...: "PROG: error: MSG" on stderr, then exit. "error:" is red where the script has
# colours (C_RED and C_OFF: tools/lib/common.sh sets them on a terminal).
die() {
    printf '%s: %serror:%s %s\n' "$PROG" "${C_RED:-}" "${C_OFF:-}" "$*" >&2
    exit "${DIE_STATUS:-2}"
}

# say MSG...: "PROG: MSG" on stdout (progress and results).
say() { printf '%s: %s\n' "$PROG" "$*"; }

# fmt_duration SECONDS: e.g. 3m05s.
fmt_duration() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# usage_from_header: the --help text, i.e. the running script's comment block after the #! line
# (up to its first line that is not a comment), without the "# " prefixes and the SPDX line.
usage_from_header() { awk 'NR > 1 && !/^#/ { exit } NR > 1 && !/SPDX-License-Identifier/ { sub(/^# ?/, ""); print }' "$0"; }
