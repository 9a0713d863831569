#!/bin/bash
# `ipilab trace --live --duration 5 --save x.dat` under an IPI load this test starts itself (two
# processes pinned to CPUs 0 and 1 waking each other through pipes: a reschedule IPI per wake-up):
# the counts it streamed live (its --json) equal those of `ipilab trace x.dat` afterwards, trace-cmd
# reads the saved file (when installed), and no tracefs instance is left behind.
# Skips (exit 77) where tracefs is not usable: not root, not mounted, no IPI events, one CPU.
# With "sanitized" as second argument (an ASan/UBSan build, several times slower): the reader falls
# behind the tracer, so the one-line-a-second check is not asserted; everything else is, the
# pairing too (lines are released only once every CPU has been read past them, however slow the
# reader), and `--duration 5` must still end the trace (a read round leaves a CPU after 250 ms).
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
# sanitizer on a loaded machine ipilab can take seconds to start tracing. It must never outlive the
# script: if ctest kills the script on its timeout, the EXIT trap does not run, and a left-over load
# would hold both CPUs for every test after it. So each of its two processes also stops when its
# parent dies (PR_SET_PDEATHSIG; the child also reads end-of-file) and after 150 s in any case.
python3 - <<'PY' &
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1
deadline = time.monotonic() + 150
script = os.getppid()
libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
if os.getppid() != script:  # the script died before the line above
    os._exit(0)
r1, w1 = os.pipe(); r2, w2 = os.pipe()
me = os.getpid()
if os.fork() == 0:
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != me:
        os._exit(0)
    os.close(w1); os.close(r2)
    os.sched_setaffinity(0, {1})
    while os.read(r1, 1):
        os.write(w2, b"x")
    os._exit(0)
os.close(r1); os.close(w2)
os.sched_setaffinity(0, {0})
n = 0
while True:  # until killed; the child then reads end-of-file and exits
    os.write(w1, b"x"); os.read(r2, 1)
    n += 1
    if n % 4096 == 0 and time.monotonic() > deadline:
        os._exit(0)
PY
load=$!
sleep 0.5
fail=0
t0=$(date +%s)
"$ipilab" trace --live --duration 5 --save "$tmp/x.dat" --json "$tmp/live.json" >"$tmp/live.txt" 2>"$tmp/live.err"
rc=$?
took=$(( $(date +%s) - t0 ))
kill "$load" 2>/dev/null; wait "$load" 2>/dev/null
cat "$tmp/live.err"
[ $rc = 0 ] || { echo "FAIL: trace --live exited $rc"; exit 1; }
# 5 s of tracing, then what is left in the ring buffer decoded (seconds under ASan): not minutes.
[ "$took" -le 60 ] || { echo "FAIL: trace --live --duration 5 took $took s"; fail=1; }
ls "$tracing/instances" | grep -q '^ipilab-live$' && { echo "FAIL: instance ipilab-live left behind"; fail=1; }
lines=$(grep -c '^ipilab: live [0-9]* s: ' "$tmp/live.err")
[ "$mode" = sanitized ] || [ "$lines" -ge 3 ] || { echo "FAIL: $lines interval lines on stderr (no terminal), expected one a second"; fail=1; }
grep -q '^== ' "$tmp/live.txt" || grep -q 'IPI' "$tmp/live.txt" || { echo "FAIL: no report on stdout"; fail=1; }
"$ipilab" trace "$tmp/x.dat" --json "$tmp/after.json" >/dev/null || { echo "FAIL: ipilab trace x.dat"; exit 1; }
python3 - "$tmp/live.json" "$tmp/after.json" "$mode" <<'PY' || fail=1
import json, sys
live, after = (json.load(open(p)) for p in sys.argv[1:3])
keys = ["ipis_sent", "matched", "coalesced", "unmatched_sends", "unmatched_arrivals", "arrivals", "events"]
if sys.argv[3] == "sanitized":
    print("sanitized build: the per-second lines not asserted (the reader falls behind the tracer)")
bad = [k for k in keys if live[k] != after[k]]
for k in ("by_kind", "calls"):
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
