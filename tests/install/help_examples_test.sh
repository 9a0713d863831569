#!/usr/bin/env bash
# Every example in every --help (a line that starts with "ipilab ") works from any directory: none
# names a path inside the source tree (data/, scenarios/, profiles/, docs/, build/, src/), and each
# one that needs neither root, KVM, this machine's hardware nor a file of the user's own runs with
# exit 0 from an empty temporary folder.
# With "paths-only" as third argument (the sanitizer build) the examples are checked for source-tree
# paths but not run: running them all is the release suite's job (it runs every one), and under
# ASan+UBSan their sweeps took 10-25 minutes of CI, one example after another.
set -uo pipefail
build=$1
mode=${3:-run}
ipilab=$build/bin/ipilab
export PATH="$build/bin:$PATH"
unset IPILAB_DATA IPILAB_DATA_DIR
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
failures=0 ran=0 skipped=0

commands() {  # every command path, one a line ("" for the root)
  local c s
  echo ""
  for c in $("$ipilab" --help | sed -n '/^Subcommands:/,/^$/p' | awk '/^  [^ ]/ { print $1 }'); do
    echo "$c"
    for s in $("$ipilab" "$c" --help | sed -n '/^Subcommands:/,/^$/p' | awk '/^  [^ ]/ { print $1 }'); do echo "$c $s"; done
  done
}

while IFS= read -r cmd; do
  # shellcheck disable=SC2086
  while IFS= read -r line; do
    ex=$(sed -E 's/^ +//; s/ {2,}\(.*\)$//; s/ +# .*$//' <<<"$line")
    if grep -qE '(^| |=|")(data|scenarios|profiles|docs|build|src)/' <<<"$ex"; then
      echo "FAIL: 'ipilab $cmd --help' example names a source-tree path: $ex"; failures=$((failures + 1)); continue
    fi
    # Not run: root, KVM or this machine's hardware; a placeholder for the user's own file; jq absent.
    if grep -qE '^sudo |ipilab measure|--measure|--host|(^| )(my[a-z]*\.[a-z]+|trace\.dat|ipis\.txt)( |$)' <<<"$ex" ||
       { grep -q '| *jq' <<<"$ex" && ! command -v jq >/dev/null; }; then
      skipped=$((skipped + 1)); continue
    fi
    if [ "$mode" = paths-only ]; then ran=$((ran + 1)); continue; fi
    if ! out=$(bash -o pipefail -c "$ex" 2>&1 >/dev/null); then
      echo "FAIL: 'ipilab $cmd --help' example exits non-zero from an empty folder: $ex"
      echo "$out" | head -5; failures=$((failures + 1))
    fi
    ran=$((ran + 1))
  done < <("$ipilab" $cmd --help | grep -E '^ *(sudo )?ipilab ')
done < <(commands)

[ "$ran" -ge 10 ] || { echo "FAIL: only $ran examples ran"; exit 1; }
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
[ "$mode" = paths-only ] && { echo "help examples: $ran checked for source-tree paths, not run (sanitizer build: the release suite runs them), $skipped not run (root, KVM, hardware, your own files)"; exit 0; }
echo "help examples: $ran ran from an empty folder, $skipped not run (root, KVM, hardware, your own files)"
