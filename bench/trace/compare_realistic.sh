#!/bin/sh
# ipilab trace vs trace-cmd report on a realistic trace.dat (record_realistic.sh, or FILE), side by
# side in one run: runs interleaved (ipilab, trace-cmd, ipilab, ...), median CPU seconds (user+sys,
# GNU time) and wall seconds of each, the ratio, events per CPU second; then, with perf, where
# ipilab's time goes: trace.dat's zstd chunks (libzstd), the metadata and ring-buffer pages
# (libtraceevent, libc's sscanf of kallsyms), ipilab's own decoding and pairing.
# usage: bench/trace/compare_realistic.sh [FILE.dat] [path/to/ipilab] [runs]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ipilab=${2:-$root/build/release/bin/ipilab}
runs=${3:-5}
command -v trace-cmd >/dev/null || { echo "trace-cmd is not installed: nothing to compare against" >&2; exit 3; }
tmp=$(mktemp -d /tmp/ipilab-bench-real.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
dat=${1:-}
if [ -z "$dat" ]; then
  dat=$tmp/real.dat
  sh "$here/record_realistic.sh" "$dat"
fi
trace-cmd report "$dat" > "$tmp/report.txt" 2>/dev/null
events=$(($(wc -l < "$tmp/report.txt") - 1))
types=$(awk '{for(i=1;i<=NF;i++) if ($i ~ /^[a-z_0-9]+:$/ && $(i-1) ~ /^[0-9]+\.[0-9]+:$/) {print $i; break}}' "$tmp/report.txt" | sort -u | wc -l)
markers=$(grep -c ' print: ' "$tmp/report.txt" || true)
echo "trace.dat: $events events of $types event types ($markers trace_marker writes), $(du -h "$dat" | cut -f1)"
trace-cmd dump --summary "$dat" 2>&1 | grep -E 'Version|Compression algorithm|cpus,' | sed 's/^[[:space:]]*/  /'
measure() {  # label command...
  label=$1; shift
  /usr/bin/time -f "%U %S %e" -o "$tmp/t" "$@" > /dev/null 2>&1
  read -r u s e < "$tmp/t"
  echo "$label $(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}') $e"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: > "$tmp/rows"
i=0
while [ $i -lt "$runs" ]; do
  measure ipilab "$ipilab" trace "$dat" >> "$tmp/rows"
  measure trace-cmd trace-cmd report "$dat" >> "$tmp/rows"
  i=$((i + 1))
done
get() { awk -v l="$1" -v c="$2" '$1 == l {print $c}' "$tmp/rows" | median; }
for l in ipilab trace-cmd; do printf "%-10s median cpu %7.3f s  wall %7.3f s  (%s runs)\n" "$l" "$(get $l 2)" "$(get $l 3)" "$runs"; done
div() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a / b}'; }
echo "ratio trace-cmd report / ipilab trace: cpu $(div "$(get trace-cmd 2)" "$(get ipilab 2)")x, wall $(div "$(get trace-cmd 3)" "$(get ipilab 3)")x"
echo "ipilab trace: $(div "$events" "$(get ipilab 2)" | awk '{printf "%.1f", $1 / 1e6}') M events per CPU second"
if command -v perf >/dev/null && perf record -q -o "$tmp/perf.data" -- "$ipilab" trace "$dat" > /dev/null 2>&1; then
  echo "where ipilab's time goes (perf samples by library; the forked format check included):"
  perf report -i "$tmp/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep '%' | head -6 | sed 's/^/  /'
  pairing=$(perf report -i "$tmp/perf.data" --no-children --sort sym --stdio --dsos ipilab 2>/dev/null |
            awk '/IpiAnalysis|Histogram/ {gsub("%", "", $1); s += $1} END {printf "%.1f", s}')
  echo "  of which pairing and statistics (IpiAnalysis, Histogram): ${pairing}%"
fi
