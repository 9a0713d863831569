#!/usr/bin/env bash
# Every built-in scenario's and shipped sweep's output is byte for byte the one committed under
# tests/golden/out (run-cases.sh says which runs). A change of any figure, row or field fails here;
# if it is intended, regenerate with scripts/update-golden and commit the diff with the change.
# Usage: golden_test.sh IPILAB SRC [text]
# With "text" (the sanitizer build): only each case's first form (run-cases.sh), each compared with
# its golden file; the release suite compares every form.
set -uo pipefail
ipilab=$1 src=$2 forms=${3:-all}
golden=$src/tests/golden/out
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bash "$src/tests/golden/run-cases.sh" "$ipilab" "$src" "$tmp/out" "$forms" || { echo "FAIL: the golden runs did not complete"; exit 1; }
if [ "$forms" = text ]; then
  bad=0 n=0
  for f in "$tmp/out"/*; do
    n=$((n + 1))
    cmp -s "$golden/$(basename "$f")" "$f" && continue
    echo "FAIL: $(basename "$f") differs from tests/golden/out:"; diff -u "$golden/$(basename "$f")" "$f" | head -20; bad=1
  done
  [ "$n" -ge 20 ] || { echo "FAIL: only $n outputs"; exit 1; }
  [ $bad = 0 ] && echo "golden: $n first-form outputs identical (of $(ls "$golden" | wc -l); the release suite compares all)"
  exit $bad
fi
if diff -r -q "$golden" "$tmp/out" >"$tmp/summary"; then
  echo "golden: $(ls "$golden" | wc -l) outputs identical"
  exit 0
fi
echo "FAIL: outputs differ from tests/golden/out (if the change is intended: scripts/update-golden, then commit the diff):"
cat "$tmp/summary"
diff -ru "$golden" "$tmp/out" | head -40
exit 1
