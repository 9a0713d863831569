#!/usr/bin/env bash
# The measure -> model path from the command line, without KVM: a recorded measurement (the fixture)
# gives the side-by-side table, a profile that `ipilab run this-host --profile` runs, and the JSON's
# compare section.
set -uo pipefail
ipilab=$1 fixture=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$ipilab" measure --from "$fixture" --compare --profile-out "$tmp/x.toml" --json "$tmp/m.json" 2>"$tmp/err") ||
  fail "measure --from --compare exited $?: $(cat "$tmp/err")"
grep -q "^Measured vs modelled" <<<"$out" || fail "no side-by-side table"
grep -qE "^hyperv/call-single/halt .* predicted ✓" <<<"$out" || fail "hyperv/call-single/halt is not a prediction within the target"
grep -q "4 values fitted to 4 measured figures (one each); 2 figures predicted" <<<"$out" || fail "counts missing"
grep -q "run it: ipilab run this-host --profile $tmp/x.toml" "$tmp/err" || fail "no hint to run the profile"
grep -q '^class = "fitted"' "$tmp/x.toml" || fail "the profile holds no fitted entry"

run=$("$ipilab" run this-host --profile "$tmp/x.toml" --variant hyperv/call-single/halt 2>&1) || fail "run this-host --profile exited $?: $run"
grep -q "this-host ($tmp/x.toml, from --profile instead of" <<<"$run" || fail "the run does not name the profile"
grep -q '"compare"' "$tmp/m.json" || fail "the JSON has no compare section"
grep -q '"recorded_from"' "$tmp/m.json" || fail "the JSON does not say it was recorded"
# (That the run gives the comparison's medians exactly is tests/measure/this_host_test.cpp's.)
echo "compare from a recording, then run this-host --profile: ok"
