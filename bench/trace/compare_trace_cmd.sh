#!/bin/sh
# ipilab trace vs trace-cmd report, side by side in one run, on the same >= 2 M-event trace.dat and
# on its text, with the ratio and events per second; peak memory of each (GNU time's maximum RSS).
#
# The trace.dat is synthesised from the shipped data/traces/mixed.dat (make_big_dat.py: its real
# ring-buffer pages repeated COPIES times, default 60 = 2.1 M events), or, with RECORD=1 on a
# machine with tracefs and root, recorded for real with `ipilab trace record` while a workload of
# cross-CPU wakeups runs. Nothing large is kept: the files live in a temporary folder.
#
# usage: bench/trace/compare_trace_cmd.sh [path/to/ipilab] [copies] [runs]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ipilab=${1:-$root/build/release/bin/ipilab}
copies=${2:-60}
runs=${3:-5}
command -v trace-cmd >/dev/null || { echo "trace-cmd is not installed: nothing to compare against" >&2; exit 3; }
tmp=$(mktemp -d /tmp/ipilab-bench-trace.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
dat=$tmp/big.dat
if [ "${RECORD:-0}" = 1 ]; then
  "$ipilab" trace record -o "$dat" --buffer-kb 262144 -- sh -c \
    'i=0; while [ $i -lt 30000 ]; do taskset -c 0 true; taskset -c 1 true; i=$((i+1)); done' 2>&1 | tail -1
else
  python3 "$here/make_big_dat.py" "$dat" "$copies"
fi
trace-cmd report "$dat" > "$tmp/big.txt" 2>/dev/null
events=$(($(wc -l < "$tmp/big.txt") - 1))
echo "trace.dat: $events events, $(du -h "$dat" | cut -f1); its trace-cmd report text: $(du -h "$tmp/big.txt" | cut -f1)"

# CPU seconds (user + sys) and wall seconds of one run, GNU time.
measure() {  # label command...
  label=$1; shift
  /usr/bin/time -f "%U %S %e %M" -o "$tmp/t" "$@" > /dev/null 2>&1
  read -r u s e m < "$tmp/t"
  echo "$label $(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}') $e $m"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

: > "$tmp/rows"
i=0
while [ $i -lt "$runs" ]; do  # interleaved: A B A B ... so drift hits both alike
  measure ipilab_dat "$ipilab" trace "$dat" >> "$tmp/rows"
  measure tracecmd_dat trace-cmd report "$dat" >> "$tmp/rows"
  measure ipilab_txt "$ipilab" trace "$tmp/big.txt" >> "$tmp/rows"
  i=$((i + 1))
done
get() { awk -v l="$1" -v c="$2" '$1 == l {print $c}' "$tmp/rows" | median; }
for l in ipilab_dat tracecmd_dat ipilab_txt; do
  printf "%-13s median cpu %6.3f s  wall %6.3f s  peak %6d KiB\n" "$l" "$(get $l 2)" "$(get $l 3)" "$(get $l 4)"
done
a=$(get ipilab_dat 2); b=$(get tracecmd_dat 2); t=$(get ipilab_txt 2)
aw=$(get ipilab_dat 3); bw=$(get tracecmd_dat 3)
div() { awk -v a="$1" -v b="$2" -v k="$3" 'BEGIN {printf "%.1f", a / b / k}'; }
echo "ratio trace-cmd report / ipilab trace on trace.dat: cpu $(div "$b" "$a" 1)x, wall $(div "$bw" "$aw" 1)x"
echo "ipilab trace: $(div "$events" "$a" 1000000) M events/s on trace.dat, $(div "$events" "$t" 1000000) M events/s on text (per CPU second)"
