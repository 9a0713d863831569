#!/usr/bin/env bash
# The whole-VM speed figures of two bench_sim binaries side by side, in alternating rounds of one
# run, as ratios: compare.sh BASE NEW [ROUNDS] [FILTER]. BASE is bench_sim built from the commit
# compared against (e.g. git archive <commit> | tar -x -C /tmp/base, then cmake --preset release and
# cmake --build --preset release --target bench_sim there). Prints, per benchmark, the items per CPU
# second of each binary in each round and the median of NEW/BASE over the rounds.
set -euo pipefail
base=$1 new=$2 rounds=${3:-3}
filter=${4:-'IpiHwUnicast|MulticastTo4095|/storm'}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  for which in base new; do
    bin=$base; [ "$which" = new ] && bin=$new
    "$bin" --benchmark_filter="$filter" --benchmark_out="$tmp/out.csv" --benchmark_out_format=csv >/dev/null 2>&1
    awk -F, -v w="$which" -v r="$r" '$1 ~ /^"/ && $7 != "" {gsub(/"/, "", $1); print r, w, $1, $7}' "$tmp/out.csv" >>"$tmp/all"
  done
done
awk '{ key = $3; v[key, $1, $2] = $4; names[key] = 1; if ($1 > R) R = $1 }
     END {
       for (k in names) {
         line = sprintf("%-50s", k); n = 0
         for (r = 1; r <= R; r++) {
           b = v[k, r, "base"]; x = v[k, r, "new"]
           line = line sprintf("  %.3gM -> %.3gM", b / 1e6, x / 1e6)
           ratio[++n] = x / b
         }
         for (i = 2; i <= n; i++) for (j = i; j > 1 && ratio[j - 1] > ratio[j]; j--) { t = ratio[j]; ratio[j] = ratio[j - 1]; ratio[j - 1] = t }
         printf "%s  median %.2fx\n", line, ratio[int((n + 1) / 2)]
         delete ratio
       }
     }' "$tmp/all" | sort
