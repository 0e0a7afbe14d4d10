# SPDX-License-Identifier: BSD-3-Clause
# MEDIAN_AWK: an awk function median(a, k, c), the median of a[k, 1..c], for the runners' awk
# programs (sourced by run-speeds and nas-report.sh; prepend it to an awk program text).
MEDIAN_AWK='
    function median(a, k, c,   i, j, t, v) {
        for (i = 1; i <= c; i++) v[i] = a[k, i]
        for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
        return c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
    }'
