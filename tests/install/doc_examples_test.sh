#!/usr/bin/env bash
# Every example command of README.md and docs/*.md (a line in a ``` block that starts with
# "ipilab " or "$ ipilab ") runs against an installed prefix: cmake --install into P, PATH=P/bin,
# from / (an example that writes a file of a relative name runs in an empty folder instead, so
# nothing lands in /). Extracted from the documents, so a new example is tested too. Not run: root,
# KVM or this machine's hardware (sudo, measure, --host, --measure, trace record), a placeholder
# ("...", my-*.toml, the user's own trace.dat), jq where jq is not installed.
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
P=$tmp/P
cmake --install "$build" --prefix "$P" >"$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
unset IPILAB_DATA IPILAB_DATA_DIR
export PATH="$P/bin:$PATH"
failures=0 ran=0 skipped=0

examples() {  # FILE: "STATUS<tab>COMMAND" per example; STATUS is 0, or N when the output shown
              # under it in the document ends in "(exit N)"
  awk 'function flush() { if (cmd != "") print want "\t" cmd; cmd = "" }
       /^```/ { flush(); c = !c; next }
       !c { next }
       /^ *(\$ )?ipilab / { flush(); cmd = $0; sub(/^ *(\$ )?/, "", cmd); want = 0; next }
       cmd != "" && match($0, /\(exit [0-9]+\)/) { want = substr($0, RSTART + 6, RLENGTH - 7); flush(); next }
       { flush() }
       END { flush() }' "$1"
}

for doc in "$src"/README.md "$src"/docs/*.md; do
  while IFS=$'\t' read -r want line; do
    ex=$(sed -E 's/ +# .*$//' <<<"$line")
    if grep -qE '^sudo |ipilab measure|--measure|--host|trace record| \.\.\. |my-[a-z-]*\.toml|(^| )trace\.dat( |$)' <<<"$ex" ||
       { grep -q 'jq' <<<"$ex" && ! command -v jq >/dev/null; }; then
      skipped=$((skipped + 1)); continue
    fi
    # Relative output files (--json x.json, --plot x.svg, -o f): an empty folder, not /.
    dir=/
    if grep -qE -- '(--json|--csv|--plot|--perfetto|--events|--ipi-csv|--save|--out|--heatmap|--profile-out|-o) +[^-/ "$][^ ]*' <<<"$ex"; then
      dir=$tmp/run.$ran; mkdir -p "$dir"
    fi
    out=$(cd "$dir" && bash -o pipefail -c "$ex" 2>&1 >/dev/null)
    rc=$?
    if [ "$rc" -ne "$want" ]; then
      echo "FAIL: ${doc#"$src"/}: example exits $rc (the document says $want) from $dir against the installed prefix: $ex"
      echo "$out" | head -5 | sed 's/^/    /'
      failures=$((failures + 1))
    fi
    ran=$((ran + 1))
  done < <(examples "$doc")
done

[ "$ran" -ge 20 ] || { echo "FAIL: only $ran examples ran"; exit 1; }
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "doc examples: $ran ran against the installed prefix, $skipped not run (root, KVM, hardware, placeholders)"
