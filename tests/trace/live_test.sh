#!/bin/bash
# `ipilab trace --live --duration 5 --save x.dat` under an IPI load this test starts itself (two
# processes pinned to CPUs 0 and 1 waking each other through pipes: a reschedule IPI per wake-up):
# the counts it streamed live (its --json) equal those of `ipilab trace x.dat` afterwards, trace-cmd
# reads the saved file (when installed), and no tracefs instance is left behind.
# Skips (exit 77) where tracefs is not usable: not root, not mounted, no IPI events, one CPU.
# With "sanitized" as second argument (an ASan/UBSan build, several times slower): the live reader
# falls behind the tracer, so the one-line-a-second check is not asserted. Nor, yet, are the pairing
# checks: lines are now released only once every CPU is drained past them, which should make
# pairing exact in a slow reader too, but that has not been run under a sanitizer. The events and
# the sends and arrivals read live must still equal the saved file's, and no instance may be left.
set -u
ipilab=$1
mode=${2:-exact}
tmp=$(mktemp -d)
trap 'kill "$load" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
tracing=/sys/kernel/tracing
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (tracefs)"
[ -w "$tracing/instances" ] || mount -t tracefs nodev "$tracing" 2>/dev/null
[ -w "$tracing/instances" ] || skip "tracefs is not mounted at $tracing and cannot be mounted here"
[ -d "$tracing/events/ipi" ] || skip "this kernel has no ipi:* events"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"

# The load runs until this script stops it (after the live trace), not for a fixed time: under a
# sanitizer on a loaded machine ipilab can take seconds to start tracing.
python3 - <<'PY' &
import os
r1, w1 = os.pipe(); r2, w2 = os.pipe()
if os.fork() == 0:
    os.close(w1); os.close(r2)
    os.sched_setaffinity(0, {1})
    while os.read(r1, 1):
        os.write(w2, b"x")
    os._exit(0)
os.close(r1); os.close(w2)
os.sched_setaffinity(0, {0})
while True:  # until killed; the child then reads end-of-file and exits
    os.write(w1, b"x"); os.read(r2, 1)
PY
load=$!
sleep 0.5
fail=0
"$ipilab" trace --live --duration 5 --save "$tmp/x.dat" --json "$tmp/live.json" >"$tmp/live.txt" 2>"$tmp/live.err"
rc=$?
kill "$load" 2>/dev/null; wait "$load" 2>/dev/null
cat "$tmp/live.err"
[ $rc = 0 ] || { echo "FAIL: trace --live exited $rc"; exit 1; }
ls "$tracing/instances" | grep -q '^ipilab-live$' && { echo "FAIL: instance ipilab-live left behind"; fail=1; }
lines=$(grep -c '^ipilab: live [0-9]* s: ' "$tmp/live.err")
[ "$mode" = sanitized ] || [ "$lines" -ge 3 ] || { echo "FAIL: $lines interval lines on stderr (no terminal), expected one a second"; fail=1; }
grep -q '^== ' "$tmp/live.txt" || grep -q 'IPI' "$tmp/live.txt" || { echo "FAIL: no report on stdout"; fail=1; }
"$ipilab" trace "$tmp/x.dat" --json "$tmp/after.json" >/dev/null || { echo "FAIL: ipilab trace x.dat"; exit 1; }
python3 - "$tmp/live.json" "$tmp/after.json" "$mode" <<'PY' || fail=1
import json, sys
live, after = (json.load(open(p)) for p in sys.argv[1:3])
exact = sys.argv[3] != "sanitized"
keys = ["ipis_sent", "matched", "coalesced", "unmatched_sends", "unmatched_arrivals", "arrivals", "events"]
if not exact:
    keys = ["ipis_sent", "arrivals", "events"]
    print("sanitized build: pairing and per-second lines not asserted (the reader falls behind the tracer)")
bad = [k for k in keys if live[k] != after[k]]
for k in (("by_kind", "calls") if exact else ()):
    for name, row in live[k].items():
        if row["count"] != after[k][name]["count"]:
            bad.append(f"{k}.{name}")
print("live vs afterwards:", {k: (live[k], after[k]) for k in keys if k != "events"})
if live["ipis_sent"] < 1000:
    print(f"FAIL: only {live['ipis_sent']} IPIs under the load"); sys.exit(1)
if bad:
    print("FAIL: differ:", bad); sys.exit(1)
PY
if command -v trace-cmd >/dev/null; then
  n=$(trace-cmd report "$tmp/x.dat" 2>/dev/null | grep -c ' ipi_send_cpu: ')
  want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['events'].get('ipi_send_cpu', 0))" "$tmp/live.json")
  [ "$n" = "$want" ] || { echo "FAIL: trace-cmd report reads $n ipi_send_cpu, live counted $want"; fail=1; }
fi
[ $fail = 0 ] && echo "PASS"
exit $fail
