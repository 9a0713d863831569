#!/bin/sh
# Records a trace.dat that looks like the ones people publish: trace-cmd's own file (v7,
# zstd-compressed, via `trace-cmd extract`), many event systems besides the IPI ones (sched, irq,
# timer, workqueue, raw_syscalls: most of its 3 M events), trace_marker writes, every CPU of the
# machine. A tracefs instance of its own is made and removed (trace-cmd record is not used: it
# writes /proc/sys/kernel/ftrace_enabled, which some kernels refuse).
# usage: bench/trace/record_realistic.sh OUTPUT.dat [ROUNDS]      (root, tracefs, trace-cmd)
set -eu
out=$1
rounds=${2:-400}
t=/sys/kernel/tracing
[ -d $t/instances ] || mount -t tracefs nodev $t 2>/dev/null || { echo "no tracefs: cannot record" >&2; exit 3; }
command -v trace-cmd >/dev/null || { echo "trace-cmd is not installed" >&2; exit 3; }
i=$t/instances/ipilab-bench.$$
mkdir "$i"
trap 'echo 0 > "$i/tracing_on" 2>/dev/null; rmdir "$i" 2>/dev/null || true' EXIT
echo 150000 > "$i/buffer_size_kb"
for s in ipi csd irq_vectors sched irq timer workqueue raw_syscalls; do
  [ -e "$i/events/$s/enable" ] && echo 1 > "$i/events/$s/enable"
done
echo 1 > "$i/tracing_on"
ncpu=$(nproc)
m=$i/trace_marker
( r=0; while [ $r -lt "$rounds" ]; do
    echo "round $r begin" > "$m"
    c=0; while [ $c -lt 5 ]; do taskset -c $((c % ncpu)) true; c=$((c + 1)); done
    echo "round $r end" > "$m"; r=$((r + 1))
  done ) &
( c=0; while [ $c -lt $((rounds * 7)) ]; do taskset -c $((ncpu - 1)) true; c=$((c + 1)); done ) &
wait
echo 0 > "$i/tracing_on"
trace-cmd extract -B "$(basename "$i")" -o "$out" > /dev/null 2>&1
echo "recorded $out: $(du -h "$out" | cut -f1)"
