#!/usr/bin/env bash
# Writes every golden output of the built-in scenarios and shipped sweeps into OUTDIR, one file per
# (case, form); used by scripts/update-golden (to regenerate tests/golden/out) and by golden_test.sh
# (to compare against it). Usage: run-cases.sh IPILAB SRC OUTDIR [text]
# With "text": only the first form of each case (the scenario's text table, the sweep's CSV): the
# same model runs, a third and a half of the work (golden_test.sh in the sanitizer build).
#
# Scenarios: every name `ipilab list --scenarios` prints, each as the text table, `--json -` and
# `--details`. Sweeps: every scenarios/sweeps/*.toml as `--csv -` and `--json -`. Seeds are fixed
# (--seed 1) and iterations reduced (below) so that the whole set runs in well under a minute on
# two busy cores; the figures are the model's, so they are exact whatever the machine.
#
# Nothing is stripped: no output of these commands holds a wall-clock time or an absolute path
# (file names are given relative to the data folder, IPILAB_DATA_DIR=SRC). If one ever does, remove
# that field here, with the reason.
set -euo pipefail
ipilab=$1 src=$2 out=$3 forms=${4:-all}
export IPILAB_DATA_DIR=$src
unset IPILAB_DATA
mkdir -p "$out"
cd "$src"

# Iterations per scenario run and per sweep point: enough for every code path of the core (warm-up,
# coalescing, lost IPIs, idle states) to run many times, few enough to stay fast.
scenario_iterations=2000
sweep_iterations=200

run_to() {  # run_to FILE ARGS...: stdout to FILE; a failing command is a failure of the case
  local file=$1; shift
  if ! "$ipilab" "$@" >"$out/$file" 2>"$out/$file.stderr"; then
    echo "golden: 'ipilab $*' failed (exit $?):" >&2
    cat "$out/$file.stderr" >&2
    exit 1
  fi
  rm -f "$out/$file.stderr"
}

# The names: the lines "  NAME  title" / "* NAME  title" (in the default set) of the listing.
scenarios=$("$ipilab" list --scenarios | sed -nE 's/^[* ] ([a-z0-9][a-z0-9-]*) .*/\1/p')
[ -n "$scenarios" ] || { echo "golden: 'ipilab list --scenarios' listed nothing" >&2; exit 1; }
for s in $scenarios; do
  common=(run "$s" --seed 1 --iterations "$scenario_iterations")
  if [ "$forms" = text ]; then run_to "scenario.$s.txt" "${common[@]}"; continue; fi
  run_to "scenario.$s.txt" "${common[@]}" & p1=$!
  run_to "scenario.$s.json" "${common[@]}" --json - & p2=$!
  run_to "scenario.$s.details.txt" "${common[@]}" --details
  wait "$p1" && wait "$p2"
done
for f in scenarios/sweeps/*.toml; do
  w=$(basename "$f" .toml)
  common=(sweep "$f" --seed 1 --iterations "$sweep_iterations" -j 1 --no-progress)
  if [ "$forms" = text ]; then run_to "sweep.$w.csv" "${common[@]}" --csv -; continue; fi
  run_to "sweep.$w.csv" "${common[@]}" --csv - & p1=$!
  run_to "sweep.$w.json" "${common[@]}" --json -
  wait "$p1"
done
