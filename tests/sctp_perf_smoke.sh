#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# sctp-perf's channels (the transport, kernel TCP, kernel UDP) on loopback, short: each side
# checks the last message of every size against its pattern and dies on a difference, so a pass
# means every channel carried the bytes it was given, both ways; and the table must hold a
# figure for each channel at each size (udp only has latency, up to one datagram).
set -eu
perf=${SCTP_PERF:-bin/sctp-perf}
out=$("$perf" --quick --max-size 16384)
printf '%s\n' "$out"
rows() { # rows of section $1 whose columns 2..$2+1 all hold positive numbers
    printf '%s\n' "$out" | awk -v sec="# $1" -v cols="$2" '
        /^# / { on = index($0, sec) == 1; next }
        on && $1 ~ /^[0-9]+$/ { ok = 1; for (i = 2; i <= cols + 1; i++) if (!($i + 0 > 0)) ok = 0; n += ok }
        END { print n + 0 }'
}
lat=$(rows latency 3)
bw=$(rows bandwidth 2)
[ "$lat" -eq 15 ] || { echo "sctp_perf_smoke: $lat of 15 latency rows (1 B to 16 KiB) have sctp, tcp and udp figures"; exit 1; }
[ "$bw" -eq 3 ] || { echo "sctp_perf_smoke: $bw of 3 bandwidth rows (1, 4, 16 KiB) have sctp and tcp figures"; exit 1; }
echo "sctp_perf_smoke: ok"
