# SPDX-License-Identifier: BSD-3-Clause
# The tables and plots of run-nas, sourced by it: nas_report reads OUT/runs.tsv ("where config
# bench rep seconds status") and writes
#   times.tsv     median seconds of the verified runs per (where, config, bench), ratio to the
#                 reference configuration of that setting, runs verified / runs made
#   summary.txt   per setting a table: benchmarks as rows, configurations as columns, each cell
#                 "seconds (ratio)", and a total row (sum of the medians; ratio of the sums)
#   nas-<where>.png  one panel per benchmark, a bar per configuration (seconds; less is better),
#                 in the manner of the thesis' Figure 4.8
# The reference of a setting is ch3-sock on loopback (the last of --loopback) and sock-1rail on
# the cluster (else the first configuration). Failed runs are left out of the medians; a cell
# with no verified run reads FAILED.

# shellcheck source=osu-bench/median-awk.sh
source "$REPO/osu-bench/median-awk.sh"

# nas_reference WHERE: the reference configuration of a setting
nas_reference() {
    local -a cfgs
    if [[ $1 == loopback ]]; then
        cfgs=("${loop_cfgs[@]}")
        echo "${cfgs[-1]}"
    else
        cfgs=("${vcl_cfgs[@]}")
        [[ " ${cfgs[*]} " == *" sock-1rail "* ]] && echo sock-1rail || echo "${cfgs[0]}"
    fi
}

nas_times() {
    awk -F'\t' -v OFS='\t' -v lref="$(nas_reference loopback 2>/dev/null)" -v vref="$(nas_reference vcluster 2>/dev/null)" \
        "$MEDIAN_AWK"'
        { k = $1 "\t" $2 "\t" $3; made[k]++; if (!(k in seen)) { seen[k] = 1; order[++m] = k }
          if ($6 == "ok") { n[k]++; t[k, n[k]] = $5 } }
        END {
            print "where", "config", "bench", "median_s", "ratio", "verified"
            for (i = 1; i <= m; i++) { k = order[i]; if (n[k]) med[k] = median(t, k, n[k]) }
            for (i = 1; i <= m; i++) {
                k = order[i]; split(k, p, "\t"); ref = p[1] "\t" (p[1] == "loopback" ? lref : vref) "\t" p[3]
                r = (k in med && ref in med && med[ref] > 0) ? sprintf("%.2f", med[k] / med[ref]) : "-"
                print p[1], p[2], p[3], (k in med ? sprintf("%.2f", med[k]) : "FAILED"), r, (n[k] + 0) "/" made[k]
            }
        }' "$OUT/runs.tsv" >"$OUT/times.tsv"
}

# nas_table WHERE: the summary table of one setting
nas_table() {
    local where=$1 ref
    ref=$(nas_reference "$where")
    awk -F'\t' -v w="$where" -v ref="$ref" '
        NR > 1 && $1 == w {
            if (!($2 in isc)) { isc[$2] = 1; cfg[++nc] = $2 }
            if (!($3 in isb)) { isb[$3] = 1; bench[++nb] = $3 }
            cell[$3, $2] = $4 == "FAILED" ? "FAILED" : $4 " (" $5 ")"
            if ($4 != "FAILED") sum[$2] += $4; else bad[$2] = 1
        }
        END {
            printf "bench"; for (c = 1; c <= nc; c++) printf "\t%s", cfg[c]; print ""
            for (b = 1; b <= nb; b++) {
                printf "%s", toupper(bench[b]); for (c = 1; c <= nc; c++) printf "\t%s", cell[bench[b], cfg[c]]; print ""
            }
            printf "total"
            for (c = 1; c <= nc; c++)
                if (bad[cfg[c]] || bad[ref]) printf "\t-"
                else printf "\t%.2f (%.2f)", sum[cfg[c]], (sum[ref] > 0 ? sum[cfg[c]] / sum[ref] : 0)
            print ""
        }' "$OUT/times.tsv" | column -t -s $'\t'
}

# nas_plot WHERE: nas-WHERE.png, a panel per benchmark (data per panel in plot/WHERE-BENCH.dat)
nas_plot() {
    local where=$1 png=$OUT/nas-$1.png b dat
    mkdir -p "$OUT/plot"
    {
        echo "set terminal png size 1400,700"
        echo "set output '$png'"
        echo "set multiplot layout 2,4 title 'NAS Parallel Benchmarks, class $CLASS, $NP ranks, $where (seconds, less is better)'"
        echo "set style fill solid 0.8 border -1"
        echo "set boxwidth 0.7"
        echo "set offsets 0.5, 0.5, 0, 0"
        echo "set yrange [0:*]"
        echo "set xtics rotate by -45 font ',8'"
        echo "set datafile separator '\t'"
        echo "unset key"
        for b in "${benches[@]}"; do
            dat=$OUT/plot/$where-$b.dat
            awk -F'\t' -v w="$where" -v b="$b" '$1 == w && $3 == b && $4 != "FAILED" { print $2 "\t" $4 }' \
                "$OUT/times.tsv" >"$dat"
            echo "set title '${b^^}'"
            echo "plot '$dat' using 0:2:xtic(1) with boxes linecolor rgb '#4472c4'"
        done
        echo "unset multiplot"
    } >"$OUT/plot/nas-$where.gp"
    gnuplot "$OUT/plot/nas-$where.gp" >"$OUT/plot/gnuplot-$where.log" 2>&1 && echo "run-nas: plot: $png"
}

nas_report() {
    nas_times
    local w
    {
        echo "NAS Parallel Benchmarks 3.4 (MPI), class $CLASS, $NP ranks; medians of $REPEATS runs taken in turns;"
        echo "seconds (NPB's 'Time in seconds'), ratio to the reference configuration; only verified runs count"
        for w in "${wheres[@]}"; do
            [[ $w == loopback ]] && ((${#loop_cfgs[@]} == 0)) && continue
            [[ $w == vcluster ]] && ((${#vcl_cfgs[@]} == 0)) && continue
            echo
            if [[ $w == loopback ]]; then
                echo "loopback (one host), reference $(nas_reference loopback):"
            else
                echo "virtual cluster (2 hosts x $((NP / 2)) ranks, 2 rails of $RATE, MTU $MTU), reference $(nas_reference vcluster):"
            fi
            nas_table "$w"
        done
    } | tee "$OUT/summary.txt"
    for w in "${wheres[@]}"; do
        [[ $w == loopback ]] && ((${#loop_cfgs[@]} == 0)) && continue
        [[ $w == vcluster ]] && ((${#vcl_cfgs[@]} == 0)) && continue
        nas_plot "$w"
    done
    echo "run-nas: results in $OUT (summary.txt, times.tsv, runs.tsv, raw/)"
}
