#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# sctp-perf's `engine` channel (our own SCTP engine over its UDP I/O, issue 48) beside the usrsctp
# transport on loopback, short, at MTU 1500 (SCTP packets of 1472 bytes: 1 MiB is ~720 packets,
# sent in UDP_SEGMENT bursts and read in GRO batches): each side checks the last message of every
# size against its pattern and the engine channel checks every message's length, so a pass means
# the engine carried every size both ways; the table must hold an engine figure at every size.
set -eu
perf=${SCTP_PERF:-bin/sctp-perf}
out=$("$perf" --quick --max-size 1048576 --only sctp,engine --set path_mtu=1500)
printf '%s\n' "$out"
rows() { # rows of section $1 whose column $2 (1: bytes) holds a positive number
    printf '%s\n' "$out" | awk -v sec="# $1" -v col="$2" '
        /^# / { on = index($0, sec) == 1; next }
        on && $1 ~ /^[0-9]+$/ && $col + 0 > 0 { n++ }
        END { print n + 0 }'
}
# columns: bytes sctp tcp udp engine ...
lat=$(rows latency 5)
bw=$(rows bandwidth 5)
[ "$lat" -eq 21 ] || { echo "sctp_perf_engine_smoke: $lat of 21 latency rows (1 B to 1 MiB) have an engine figure"; exit 1; }
[ "$bw" -eq 6 ] || { echo "sctp_perf_engine_smoke: $bw of 6 bandwidth rows (1 KiB to 1 MiB) have an engine figure"; exit 1; }
echo "sctp_perf_engine_smoke: ok"
