#!/usr/bin/env bash
# Instructions of one whole-VM run (callgrind's Ir inside ipilab::workload::run_vm), for each
# benchmark matching FILTER, for each bench_sim binary given: instructions.sh FILTER BIN...
# Unlike the timings, these do not move with the machine's load (and need no PMU, which VMs often
# lack). One iteration of each benchmark (--benchmark_min_time tiny), so Ir is one run's.
set -euo pipefail
filter=$1; shift
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for bin in "$@"; do
  "$bin" --benchmark_list_tests=true --benchmark_filter="$filter" 2>/dev/null | while read -r bm; do
    valgrind --tool=callgrind --toggle-collect='ipilab::workload::run_vm*' --callgrind-out-file="$tmp/cg" \
      "$bin" --benchmark_filter="^${bm}\$" --benchmark_min_time=0.000001 >"$tmp/log" 2>&1
    ir=$(sed -n 's/^summary: //p' "$tmp/cg")
    printf '%-55s %14s Ir  %s\n' "$bm" "$ir" "$bin"
  done
done
