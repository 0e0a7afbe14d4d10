# SPDX-License-Identifier: BSD-3-Clause
# REPORT.md of run-thesis, sourced by it (OUT, RATE, MTU, QUICK, PART_STATUS set): thesis_report
# prints the report on stdout. Each figure: what ran, the plot, our table, the numbers the thesis
# states for that figure (Tsai 2007, chapter 4; its plots survive only as prose, so the prose's
# numbers are what we compare with), and a verdict by a stated rule:
#   the thesis gives a range [lo, hi] for a ratio (one number: a band of +-5% around it); ours is
#   "level" inside it, "ahead" beyond it on the better side, "behind" beyond it on the worse side.

# verdict VALUE LO HI lower|higher: ahead, level or behind ("no result" without a value)
verdict() {
    awk -v v="$1" -v lo="$2" -v hi="$3" -v better="$4" 'BEGIN {
        if (v == "" || v == "-") { print "no result"; exit }
        if (v + 0 >= lo && v + 0 <= hi) print "level"
        else if ((better == "lower") == (v + 0 < lo)) print "ahead"
        else print "behind"
    }'
}

# csv_col FILE BENCH SIZE COLUMN: a value of run-compare's ratios.csv ("" if absent)
csv_col() {
    awk -F, -v b="$2" -v s="$3" -v c="$4" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) col = i; next }
        col && $1 == b && $5 == s { print $col }' "$1" 2>/dev/null
}

# csv_median FILE BENCH COLUMN: the median of a ratios.csv column over all sizes
csv_median() {
    awk -F, -v b="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) col = i; next }
        col && $1 == b && $col != "" { v[++n] = $col }
        END { if (!n) exit; for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
              printf "%.2f", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }' "$1" 2>/dev/null
}

# section_head FIG TITLE PART: heading, status and command of one part
section_head() {
    echo
    echo "## Figure $1: $2"
    echo
    local cmd
    cmd=$(cat "$OUT/$3/command.txt" 2>/dev/null)
    echo "Part \`$3\`: ${PART_STATUS[$3]:-not run}${cmd:+; command: \`$cmd\`}. Raw results: \`$3/\`."
}

# table FILE [SED-RANGE]: a file (or part of it) as a fenced block
table() {
    [[ -s $1 ]] || { echo; echo "(no results: $1 is missing)"; return; }
    echo
    echo '```'
    if [[ -n ${2:-} ]]; then sed -n "$2" "$1"; else cat "$1"; fi
    echo '```'
}

image() { [[ -s $OUT/$1 ]] && { echo; echo "![$2]($1)"; }; }

fig42() {
    local csv=$OUT/fig4.2/ratios.csv put get
    section_head 4.2 "MPI_Put / MPI_Get then MPI_Win_fence, ch3:hybrid against ch3:sctp" fig4.2
    image fig4.2/fence_put.png "put + fence latency"
    image fig4.2/fence_get.png "get + fence latency"
    table "$OUT/fig4.2/summary.txt"
    put=$(csv_median "$csv" fence_put ch3-hybrid/ch3-sctp)
    get=$(csv_median "$csv" fence_get ch3-hybrid/ch3-sctp)
    echo
    echo "Thesis (Figure 4.2, 2 B to 4 MB): \"our software implementation of iWARP adds an overhead ranging from"
    echo "2% to 8%\" over ch3:sctp, and \"performs considerably worse when the message size increases into the"
    echo "Mbytes ranges\"; \"MPI_Get is typically slower than MPI_Put\"."
    echo
    echo "**Verdict 4.2: put $(verdict "$put" 1.02 1.08 lower), get $(verdict "$get" 1.02 1.08 lower)**: median over sizes"
    echo "of ch3:hybrid / ch3:sctp time, put ${put:-n/a}, get ${get:-n/a}, against the thesis' 1.02-1.08 (lower is better)."
    echo "ch3:hybrid moves puts by RDMA from 512 KiB and gets from 128 KiB (its defaults); below, both channels take the same path."
}

fig43() {
    local csv=$OUT/fig4.3/ratios.csv r
    section_head 4.3 "the mixed MPI-1/MPI-2 benchmark, ch3:hybrid against ch3:sctp" fig4.3
    image fig4.3/mixed.png "mixed benchmark"
    table "$OUT/fig4.3/summary.txt"
    r=$(csv_median "$csv" mixed ch3-hybrid/ch3-sctp)
    echo
    echo "Thesis (Figure 4.3): \"the hybrid channel under mixed usage of MPI syntax can perform better than our"
    echo "original SCTP channel\"; its two bars read 4.51761 and 3.820722 (unit lost in the text), a ratio of"
    echo "0.85 (hybrid's time over sctp's, taking the better one as hybrid's)."
    echo
    echo "**Verdict 4.3: $(verdict "$r" 0.81 0.89 lower)**: median over sizes of ch3:hybrid / ch3:sctp time ${r:-n/a},"
    echo "against the thesis' 0.85 +-5% (lower is better)."
}

fig44() {
    local s=$OUT/fig4.4/summary.txt mh cmtpf
    section_head 4.4 "bandwidth through a rail failure" fig4.4
    image fig4.4/failover.png "bandwidth per 100 ms through a rail failure"
    table "$s"
    mh=$(awk '$1 == "sctp-mh" { print $4 / 1000 }' "$s" 2>/dev/null)
    cmtpf=$(awk '$1 == "sctp-cmtpf" { print $4 / 1000 }' "$s" 2>/dev/null)
    echo
    echo "Thesis (Figure 4.4, iperf over SCTP, 1 s samples): \"the bandwidth for multihoming will drop to zero for"
    echo "about 2-3s while CMT will transmit data in short bursts (about 62 Mbps) and CMT-PF can smoothly adapt to"
    echo "link failures\"; averages over 120 s with both rails failed in turn: multihoming 911 Mbps, CMT 1.27 Gbps,"
    echo "CMT-PF 1.32 Gbps (its second rail was slower than the first)."
    echo
    echo "**Verdict 4.4: multihoming $(verdict "$mh" 2 3 lower), CMT-PF $(verdict "$cmtpf" 2 3 lower)**: the longest"
    echo "stretch below half the surviving rail's rate after the failure, multihoming ${mh:-n/a} s, CMT-PF ${cmtpf:-n/a} s,"
    echo "against the thesis' 2-3 s outage of multihoming (lower is better). Every message is checked (result column)."
}

fig45() {
    local t=$OUT/fig4.5/bw.tsv cmt om
    section_head 4.5 "osu_bw by size, one rail and two" fig4.5
    image fig4.5/bw.png "osu_bw by message size"
    table "$OUT/fig4.5/summary.txt"
    read -r cmt om < <(awk -F'\t' 'NR == 1 { for (i = 2; i <= NF; i++) c[$i] = i; next }
        $1 == 1048576 { one = $c["sctp-1rail"]; cmt = $c["sctp-cmt"]; om = $c["ompi-2rail"]
                        printf "%s %s\n", (one > 0 && cmt > 0 ? sprintf("%.2f", cmt / one) : "-"), (om > 0 && cmt > 0 ? sprintf("%.2f", cmt / om) : "-") }' "$t" 2>/dev/null)
    echo
    echo "Thesis (Figure 4.5, MTU 9000): \"At a message size of 1 Mbytes, MPICH2-ch3:sctp with CMT is almost"
    echo "achieving twice the bandwidth (1.7 versus 0.98 Gbps) in comparison to using one interface, and it is"
    echo "outperforming Open MPI (1.56 Gbps)\": 1.73x one rail and 1.09x Open MPI on two rails."
    echo
    echo "**Verdict 4.5: CMT over one rail $(verdict "${cmt:-}" 1.65 1.82 higher), over Open MPI $(verdict "${om:-}" 1.04 1.14 higher)**:"
    echo "at 1 MiB ch3:sctp with CMT / ch3:sctp on one rail ${cmt:-n/a}, / Open MPI on two rails ${om:-n/a}, against the"
    echo "thesis' 1.73 and 1.09 +-5% (higher is better)."
}

fig467() {
    local csv=$OUT/fig4.6-7/ratios.csv l8 l1m b8 b1m h8
    section_head "4.6 and 4.7" "latency and bi-directional bandwidth against ch3:sock" fig4.6-7
    image fig4.6-7/lat.png "latency"
    image fig4.6-7/bibw.png "bi-directional bandwidth"
    table "$OUT/fig4.6-7/summary.txt"
    l8=$(csv_col "$csv" lat 8 ch3-sctp/ch3-sock)
    l1m=$(csv_col "$csv" lat 1048576 ch3-sctp/ch3-sock)
    h8=$(csv_col "$csv" lat 8 ch3-hybrid/ch3-sock)
    b8=$(csv_col "$csv" bibw 8 ch3-sctp/ch3-sock)
    b1m=$(csv_col "$csv" bibw 1048576 ch3-sctp/ch3-sock)
    echo
    echo "Thesis (Figures 4.6 and 4.7): \"our implementation performs similar to the ch3:sock in both latency and"
    echo "bi-directional tests. However, the TCP implementation seems to perform slightly better when the message"
    echo "size is small [...] Overall, the difference is fairly insignificant and is within 5% of each other.\""
    echo
    echo "**Verdict 4.6: latency 8 B $(verdict "$l8" 0.95 1.05 lower), 1 MiB $(verdict "$l1m" 0.95 1.05 lower)**: ch3:sctp /"
    echo "ch3:sock ${l8:-n/a} at 8 B and ${l1m:-n/a} at 1 MiB (ch3:hybrid / ch3:sock at 8 B: ${h8:-n/a}), against 1.00 +-5%"
    echo "(lower is better)."
    echo
    echo "**Verdict 4.7: bi-directional bandwidth 8 B $(verdict "$b8" 0.95 1.05 higher), 1 MiB $(verdict "$b1m" 0.95 1.05 higher)**:"
    echo "ch3:sctp / ch3:sock ${b8:-n/a} at 8 B and ${b1m:-n/a} at 1 MiB, against 1.00 +-5% (higher is better)."
}

fig48() {
    local t=$OUT/fig4.8/times.tsv total worst hyb
    section_head 4.8 "NAS Parallel Benchmarks" fig4.8
    image fig4.8/nas-vcluster.png "NAS Parallel Benchmarks"
    table "$OUT/fig4.8/summary.txt"
    # total of sctp-1rail / sock-1rail, the worst benchmark's ratio, and hybrid-1rail / sctp-1rail in total
    read -r total worst hyb < <(awk -F'\t' 'NR > 1 && $4 != "FAILED" { t[$2, $3] = $4; b[$3] = 1 }
        END { for (k in b) { if ((("sock-1rail", k) in t) && (("sctp-1rail", k) in t)) { s += t["sctp-1rail", k]; r += t["sock-1rail", k]
                                 q = t["sctp-1rail", k] / t["sock-1rail", k]; if (q > w) w = q }
                             if ((("hybrid-1rail", k) in t) && (("sctp-1rail", k) in t)) { h += t["hybrid-1rail", k]; hs += t["sctp-1rail", k] } }
              printf "%s %s %s\n", (r > 0 ? sprintf("%.2f", s / r) : "-"), (w > 0 ? sprintf("%.2f", w) : "-"), (hs > 0 ? sprintf("%.2f", h / hs) : "-") }' "$t" 2>/dev/null)
    echo
    echo "Thesis (Figure 4.8, NPB 3.2, BT EP LU IS MG SP, classes A and B, 4 nodes): \"TCP performs slightly better"
    echo "than ch3:sctp and the difference is typically within 25% of each other\"; \"Our hybrid design does impose"
    echo "some minor overhead to ch3:sctp which is within 5%\"; MG and IS ran faster on SCTP."
    echo
    echo "**Verdict 4.8: ch3:sctp against TCP $(verdict "${total:-}" 1.00 1.25 lower), ch3:hybrid against ch3:sctp $(verdict "${hyb:-}" 1.00 1.05 lower)**:"
    echo "one rail, total time ch3:sctp / ch3:sock ${total:-n/a} (worst benchmark ${worst:-n/a}) against the thesis' up to"
    echo "1.25; ch3:hybrid / ch3:sctp ${hyb:-n/a} against up to 1.05 (lower is better)."
}

thesis_report() {
    echo "# The thesis' evaluation, re-done"
    echo
    echo "Tsai, *Hybrid Design of MPI over SCTP* (UBC, 2007), chapter 4, on a virtual cluster of network"
    echo "namespaces on one machine ($(nproc) cores, $(uname -sr)): 2 hosts, 2 ranks (NAS: 4), a control network"
    echo "and two rails of $RATE at MTU $MTU (the thesis: 4 Pentium-4 nodes, two GbE rails, FreeBSD 6.2's"
    echo "kernel SCTP with CMT, MPICH2 1.0.5, Open MPI 1.2.1). Ours: MPICH $(
        "$REPO/build/install/ch3-sctp/bin/mpichversion" 2>/dev/null | awk -F: '/Version/ { gsub(/[ \t]/, "", $2); print $2; exit }'
    ) with ch3:sctp over usrsctp, ch3:hybrid, ch3:sock; Debian's Open MPI; Linux MPTCP."
    echo "Run $(date -Is)$( ((QUICK)) && echo ', --quick (fewer sizes, iterations and repeats; NAS class S)')."
    echo
    echo "The thesis' plots did not survive in its text; its prose states the numbers quoted below. Verdict"
    echo "rule: the thesis' range for a ratio (one number: +-5% around it) is \"level\"; better is \"ahead\", worse"
    echo "\"behind\". Our hosts share $(nproc) cores, so CPU-bound figures are the machine's as much as the"
    echo "channel's; ratios are taken between peers measured in the same run."
    fig42
    fig43
    fig44
    fig45
    fig467
    fig48
}
