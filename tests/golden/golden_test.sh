#!/usr/bin/env bash
# Every built-in scenario's and shipped sweep's output is byte for byte the one committed under
# tests/golden/out (run-cases.sh says which runs). A change of any figure, row or field fails here;
# if it is intended, regenerate with scripts/update-golden and commit the diff with the change.
# Usage: golden_test.sh IPILAB SRC
set -uo pipefail
ipilab=$1 src=$2
golden=$src/tests/golden/out
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bash "$src/tests/golden/run-cases.sh" "$ipilab" "$src" "$tmp/out" || { echo "FAIL: the golden runs did not complete"; exit 1; }
if diff -r -q "$golden" "$tmp/out" >"$tmp/summary"; then
  echo "golden: $(ls "$golden" | wc -l) outputs identical"
  exit 0
fi
echo "FAIL: outputs differ from tests/golden/out (if the change is intended: scripts/update-golden, then commit the diff):"
cat "$tmp/summary"
diff -ru "$golden" "$tmp/out" | head -40
exit 1
