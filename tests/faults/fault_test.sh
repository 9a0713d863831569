#!/usr/bin/env bash
# Fault injection over every command that writes: outputs to /dev/full, to a 40 KiB tmpfs, to a
# read-only folder and to a missing one, two outputs on one path, an output that is an input, and
# SIGINT at several points of run, sweep, trace and measure. Each must exit non-zero with a clear
# message and leave no temporary file and either a complete output or none.
#
# Prints the table command x fault -> exit, message, files left (also written to
# $build/fault-table.md). The tmpfs and read-only cases need mount(2) (CI runs as root); where it is
# not permitted they are skipped with a message, the others still run.
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
ipilab=$build/bin/ipilab
traces=$src/data/traces
unset IPILAB_DATA IPILAB_DATA_DIR
tmp=$(mktemp -d)
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
export TMPDIR=$tmp/tmpdir  # gnuplot's data folders: checked for debris too
mkdir -p "$TMPDIR" "$tmp/work" "$tmp/missing-parent"
rmdir "$tmp/missing-parent"
cd "$tmp/work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
table=$build/fault-table.md
{
  echo "| command | fault | exit | message | files left |"
  echo "|---|---|---|---|---|"
} >"$table"

# A folder on a 40 KiB tmpfs and a read-only one (tmpfs mounted ro: as root, permissions alone do
# not stop a write).
small="" ro=""
mkdir -p "$tmp/small" "$tmp/ro"
if mount -t tmpfs -o size=40k tmpfs "$tmp/small" 2>/dev/null; then
  mounts+=("$tmp/small")
  small=$tmp/small
else
  echo "SKIP: the 40 KiB tmpfs cases: mount -t tmpfs is not permitted here (run as root)"
fi
if mount -t tmpfs -o ro,size=40k tmpfs "$tmp/ro" 2>/dev/null; then
  mounts+=("$tmp/ro")
  ro=$tmp/ro
else
  echo "SKIP: the read-only folder cases: mount -t tmpfs -o ro is not permitted here (run as root)"
fi

# Whether FILE is a complete output of its kind (by extension).
complete() {
  case $1 in
    *.json) python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null ;;
    *.png) [ "$(tail -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "49454e44ae426082" ] ;;
    *.svg) tail -c 16 "$1" | grep -q '</svg>' ;;
    *.csv | *.toml) [ -s "$1" ] && [ "$(tail -c 1 "$1" | od -An -tx1 | tr -d ' ')" = "0a" ] ;;
    *.dat) [ "$(head -c 10 "$1" | tail -c 7)" = tracing ] && [ "$(wc -c <"$1")" -gt 4096 ] ;;  # trace.dat magic
    *) [ -s "$1" ] ;;
  esac
}

# What is left in FOLDER: "none", or the names; a hidden (temporary) file or an incomplete output
# is a failure. Also the gnuplot temporary folder.
left_in() {
  local dir=$1 what="" f
  for f in "$dir"/* "$dir"/.[!.]*; do
    [ -e "$f" ] || continue
    local b=${f##*/}
    case $b in
      .*) fail "$CASE: temporary file left: $b"; what+="$b(TEMP) " ;;
      *) if complete "$f"; then what+="$b(complete) "; else fail "$CASE: incomplete output $b"; what+="$b(PARTIAL) "; fi ;;
    esac
  done
  for f in "$TMPDIR"/*; do
    [ -e "$f" ] || continue
    fail "$CASE: temporary folder left: $f"
    what+="${f##*/}(TEMP) "
    rm -rf "$f"
  done
  echo "${what:-none}"
}

row() {  # row COMMAND FAULT EXIT MESSAGE FILES
  local msg=${4//|/\\|}
  echo "| $1 | $2 | $3 | ${msg:0:160} | $5 |" >>"$table"
}

# expect CMDNAME FAULT DIR RC "MESSAGE" ARGS...: runs ipilab ARGS (stdout to a file in the work
# folder unless the fault is on stdout), checks the exit status and the message, and what DIR holds.
expect() {
  local name=$1 fault=$2 dir=$3 want_rc=$4 want=$5; shift 5
  CASE="$name / $fault"
  local out=$tmp/stdout
  [ "$fault" = "stdout to /dev/full" ] && out=/dev/full
  "$ipilab" "$@" >"$out" 2>"$tmp/err"
  local rc=$?
  local msg
  msg=$(grep -m1 'ipilab: error' "$tmp/err" || head -1 "$tmp/err")
  [ "$rc" -eq "$want_rc" ] || fail "$CASE: ipilab $*: exit $rc, expected $want_rc ($(head -c 300 "$tmp/err"))"
  grep -qF -- "$want" "$tmp/err" || fail "$CASE: ipilab $*: stderr lacks \"$want\": $(head -c 300 "$tmp/err")"
  local files=none
  [ -n "$dir" ] && files=$(left_in "$dir")
  row "$name" "$fault" "$rc" "$msg" "$files"
  [ -n "$dir" ] && [ "$dir" != /dev ] && find "$dir" -mindepth 1 -delete 2>/dev/null
}

run_args=(run seed003-ipi-hw --iterations 2000)
sweep_args=(sweep its-local-gain --iterations 10)
trace_args=(trace "$traces/pipe.dat")
c2c_args=(measure c2c --cpus 0,1 --round-trips 200 --rounds 2)
enospc="No space left on device"
stdout_full="cannot write standard output: $enospc"

# 1. Standard output on a full device: every command that prints.
expect run "stdout to /dev/full" "" 2 "$stdout_full" "${run_args[@]}"
expect "run --json -" "stdout to /dev/full" "" 2 "$stdout_full" "${run_args[@]}" --json -
expect sweep "stdout to /dev/full" "" 2 "$stdout_full" "${sweep_args[@]}"
expect trace "stdout to /dev/full" "" 2 "$stdout_full" "${trace_args[@]}"
expect "trace --json -" "stdout to /dev/full" "" 2 "$stdout_full" "${trace_args[@]}" --json -
expect replay "stdout to /dev/full" "" 2 "$stdout_full" replay "$traces/pipe.dat" --scenario seed000-send-ipi-one
expect "measure c2c" "stdout to /dev/full" "" 2 "$stdout_full" "${c2c_args[@]}"
expect "list --scenarios" "stdout to /dev/full" "" 2 "$stdout_full" list --scenarios
expect "topo --preset" "stdout to /dev/full" "" 2 "$stdout_full" topo --preset kunpeng920-2s --json
expect "gic decode" "stdout to /dev/full" "" 2 "$stdout_full" gic decode 0x0b
expect "hv --help" "stdout to /dev/full" "" 2 "$stdout_full" hv --help
expect "--help" "stdout to /dev/full" "" 2 "$stdout_full" --help

# 2. A file output naming /dev/full (written straight through: the device stays a device).
expect "run --json" "--json /dev/full" "" 2 "$enospc" "${run_args[@]}" --json /dev/full
expect "run --perfetto" "--perfetto /dev/full" "" 2 "$enospc" "${run_args[@]}" --perfetto /dev/full
expect "sweep --csv" "--csv /dev/full" "" 2 "$enospc" "${sweep_args[@]}" --csv /dev/full
expect "trace --json" "--json /dev/full" "" 2 "$enospc" "${trace_args[@]}" --json /dev/full
expect "topo --out" "--out /dev/full" "" 2 "$enospc" topo --preset kunpeng920-2s --out /dev/full
[ -c /dev/full ] || fail "/dev/full is no longer a character device"

# 3. A 40 KiB tmpfs: the outputs do not fit; nothing partial, no temporary file.
if [ -n "$small" ]; then
  expect "run --json --plot --perfetto" "40 KiB tmpfs" "$small" 2 "$enospc" "${run_args[@]}" \
    --json "$small/r.json" --plot "$small/r.png" --perfetto "$small/r-tl.json"
  expect "run --events" "40 KiB tmpfs" "$small" 2 "$enospc" "${run_args[@]}" --events "$small/r.csv"
  expect "sweep --json --plot" "40 KiB tmpfs" "$small" 2 "" "${sweep_args[@]}" --json "$small/s.json" --plot "$small/s.png"
  expect "trace --perfetto --events" "40 KiB tmpfs" "$small" 2 "$enospc" trace "$traces/mixed.dat" \
    --perfetto "$small/t.json" --events "$small/t.csv"
  expect "trace --plot --json" "40 KiB tmpfs" "$small" 2 "$enospc" "${trace_args[@]}" --plot "$small/t.png" --json "$small/t-r.json"
  expect "replay --perfetto" "40 KiB tmpfs" "$small" 2 "$enospc" replay "$traces/pipe.dat" \
    --scenario seed000-send-ipi-one --perfetto "$small/p.json"
  # A tmpfs already almost full: even small outputs fail whole.
  nearly_full() {  # nearly_full NAME ARGS...: the same checks with 32 KiB of the 40 taken
    local name=$1; shift
    head -c 32k /dev/zero >"$small/.filler"
    expect "$name" "tmpfs nearly full" "" 2 "$enospc" "$@"
    rm -f "$small/.filler"
    CASE="$name / tmpfs nearly full"
    local left
    left=$(left_in "$small")
    [ "$left" = none ] || fail "$CASE: left $left"
    find "$small" -mindepth 1 -delete
  }
  nearly_full "measure c2c --json --csv --heatmap" "${c2c_args[@]}" --json "$small/m.json" --heatmap "$small/m.svg" \
    --csv "$small/m.csv"
  nearly_full "run --plot (svg)" "${run_args[@]}" --plot "$small/r.svg"
  nearly_full "trace --plot (svg)" "${trace_args[@]}" --plot "$small/t.svg"
  nearly_full "topo --out" topo --preset kunpeng920-4s --out "$small/h.toml"
fi

# 4. A read-only folder: refused at once, before any work.
if [ -n "$ro" ]; then
  expect "run --json" "read-only folder" "$ro" 2 "is not writable: Read-only file system" "${run_args[@]}" --json "$ro/r.json"
  expect "sweep --plot" "read-only folder" "$ro" 2 "is not writable" "${sweep_args[@]}" --plot "$ro/s.png"
  expect "trace --perfetto" "read-only folder" "$ro" 2 "is not writable" "${trace_args[@]}" --perfetto "$ro/t.json"
  expect "measure c2c --csv" "read-only folder" "$ro" 2 "is not writable" "${c2c_args[@]}" --csv "$ro/m.csv"
  expect "topo --out" "read-only folder" "$ro" 2 "is not writable" topo --preset kunpeng920-2s --out "$ro/h.toml"
fi

# 5. A missing folder: refused at once.
miss=$tmp/missing-parent/x
expect "run --plot" "missing folder" "" 2 "does not exist" "${run_args[@]}" --plot "$miss.png"
expect "sweep --csv" "missing folder" "" 2 "does not exist" "${sweep_args[@]}" --csv "$miss.csv"
expect "trace --events" "missing folder" "" 2 "does not exist" "${trace_args[@]}" --events "$miss.csv"
expect "replay --json" "missing folder" "" 2 "does not exist" replay "$traces/pipe.dat" --scenario seed000-send-ipi-one --json "$miss.json"
expect "measure c2c --heatmap" "missing folder" "" 2 "does not exist" "${c2c_args[@]}" --heatmap "$miss.png"
expect "topo --out" "missing folder" "" 2 "does not exist" topo --preset kunpeng920-2s --out "$miss.toml"

# 6. Two outputs on one path, and an output that is an input: refused before any work.
w=$tmp/work
expect "run --json --perfetto" "two outputs, one path" "$w" 2 "'$w/x.json' is also the file of --json" "${run_args[@]}" \
  --json "$w/x.json" --perfetto "$w/x.json"
expect "run --json --perfetto" "two outputs, one path (via ./)" "$w" 2 "is also the file of --json" "${run_args[@]}" \
  --json x.json --perfetto ./x.json
expect "sweep --csv --json" "two outputs, one path" "$w" 2 "is also the file of --csv" "${sweep_args[@]}" \
  --csv "$w/x.out" --json "$w/x.out"
expect "trace --json --perfetto" "two outputs, one path" "$w" 2 "is also the file of --json" "${trace_args[@]}" \
  --json "$w/x.json" --perfetto "$w/x.json"
expect "measure c2c --csv --json" "two outputs, one path" "$w" 2 "is also the file of --json" "${c2c_args[@]}" \
  --json "$w/x.csv" --csv "$w/x.csv"
cp "$traces/pipe-report.txt" "$w/in.txt"
expect "trace FILE --json FILE" "output is the input" "" 2 "is also the input FILE" trace "$w/in.txt" --json "$w/in.txt"
cmp -s "$w/in.txt" "$traces/pipe-report.txt" || fail "trace --json over its input changed the input"
cp "$src/scenarios/seed003-ipi-hw.toml" "$w/sc.toml"
expect "run SCENARIO --json SCENARIO" "output is the input" "" 2 "is also the input scenario" run "$w/sc.toml" --json "$w/sc.toml"
cmp -s "$w/sc.toml" "$src/scenarios/seed003-ipi-hw.toml" || fail "run --json over its scenario changed it"
find "$w" -mindepth 1 -delete

# 7. SIGINT at several points: nothing but complete outputs remains.
interrupt() {  # interrupt NAME DELAY ARGS...: SIGINT after DELAY s
  local name=$1 delay=$2; shift 2
  CASE="$name / SIGINT after $delay s"
  # Started with SIGINT at its default (bash starts background jobs with it ignored), as from a
  # terminal; the status as a shell reports it (128 + signal when killed by one).
  python3 - "$delay" "$tmp/err" "$ipilab" "$@" <<'PY'
import signal, subprocess, sys, time
err = open(sys.argv[2], "w")
p = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL, stderr=err,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
time.sleep(float(sys.argv[1]))
p.send_signal(signal.SIGINT)
rc = p.wait()
sys.exit(128 - rc if rc < 0 else rc)
PY
  local rc=$?
  local msg
  msg=$(grep -m1 'ipilab' "$tmp/err" | head -c 160)
  local files
  files=$(left_in "$w")
  row "$name" "SIGINT after $delay s" "$rc" "${msg:-(none)}" "$files"
  find "$w" -mindepth 1 -delete
}
for d in 0.05 0.3 1.0; do
  interrupt "run --json --plot --perfetto --events" "$d" run seed003-ipi-hw --iterations 400000 --json "$w/r.json" \
    --plot "$w/r.png" --perfetto "$w/r-tl.json" --events "$w/r.csv"
done
for d in 0.05 0.5 1.0; do
  interrupt "sweep --json --csv --plot" "$d" sweep its-local-gain --iterations 2000 --json "$w/s.json" --csv "$w/s.csv" \
    --plot "$w/s.png"
done
for d in 0.02 0.1 0.3; do
  interrupt "trace --json --events --perfetto --plot" "$d" trace "$traces/mixed.txt" --json "$w/t.json" \
    --events "$w/t.csv" --perfetto "$w/t-tl.json" --plot "$w/t.png"
done
for d in 0.05 0.3 0.6; do
  interrupt "measure c2c --json --csv --heatmap" "$d" measure c2c --cpus 0,1 --round-trips 2000 --rounds 20 \
    --json "$w/m.json" --csv "$w/m.csv" --heatmap "$w/m.png"
done

# 8. trace record (tracefs, root): the recording goes through the same output layer. SIGINT stops
# the recording and the trace is written whole. Its own tracefs instance, so that no other
# recording on this machine makes it busy.
if [ -w /sys/kernel/tracing/instances ] || [ -w /sys/kernel/debug/tracing/instances ]; then
  rec_args=(trace record --duration 0.3 --instance "ipilab-faults-$$")
  expect "trace record" "-o /dev/full" "" 2 "$enospc" "${rec_args[@]}" -o /dev/full
  expect "trace record --text" "-o /dev/full" "" 2 "$enospc" "${rec_args[@]}" --text -o /dev/full
  [ -n "$small" ] && expect "trace record" "40 KiB tmpfs" "$small" 2 "$enospc" "${rec_args[@]}" -o "$small/r.dat"
  [ -n "$ro" ] && expect "trace record" "read-only folder" "$ro" 2 "is not writable" "${rec_args[@]}" -o "$ro/r.dat"
  expect "trace record" "missing folder" "" 2 "does not exist" "${rec_args[@]}" -o "$miss.dat"
  for d in 0.1 2.0; do  # while tracefs is set up, and while recording: it stops and writes the trace
    interrupt "trace record -o" "$d" trace record --duration 5 --instance "ipilab-faults-$$" -o "$w/r.dat"
  done
else
  echo "SKIP: the trace record cases: tracefs is not writable here (run as root)"
fi

echo
cat "$table"
echo
[ "$failures" -eq 0 ] && echo "fault injection: every case left complete outputs or none"
exit $((failures > 0))
