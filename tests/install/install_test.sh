#!/usr/bin/env bash
# cmake --install into a temporary prefix P, then from /: P/bin/ipilab finds its data beside itself
# (P/share/ipilab), lists every built-in scenario of the source tree, and `ipilab run` prints the
# same as the build's binary; a copied binary finds the data through $IPILAB_DATA.
set -euo pipefail
build=$1 src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
P=$tmp/P
cmake --install "$build" --prefix "$P" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
unset IPILAB_DATA IPILAB_DATA_DIR
cd /

for f in bin/ipilab share/man/man1/ipilab.1.gz share/doc/ipilab/changelog.gz share/bash-completion/completions/ipilab share/zsh/site-functions/_ipilab \
         share/ipilab/scenarios/default.list share/ipilab/scenarios/README.md share/ipilab/profiles/README.md \
         share/ipilab/data/traces/mixed.dat share/doc/ipilab/README.md share/doc/ipilab/docs/json.md; do
  [ -f "$P/$f" ] || fail "not installed: $f"
done
# Every relative link of the installed README and docs resolves inside the installed doc folder.
for md in "$P"/share/doc/ipilab/README.md "$P"/share/doc/ipilab/docs/*.md; do
  for link in $(grep -o '](\([^)#]*\))' "$md" | sed 's/^](//; s/)$//' | grep -v '^[a-z]*:'); do
    [ -e "$(dirname "$md")/$link" ] || fail "installed ${md#$P/}: the link '$link' leads nowhere"
  done
done
for d in scenarios profiles profiles/hosts; do
  for f in "$src/$d"/*.toml; do [ -f "$P/share/ipilab/$d/$(basename "$f")" ] || fail "not installed: $d/$(basename "$f")"; done
done

[ "$("$P/bin/ipilab" list --data-dir)" = "$P/share/ipilab" ] || fail "data folder: $("$P/bin/ipilab" list --data-dir)"
# Beside the binary comes before $IPILAB_DATA and the source tree.
[ "$(IPILAB_DATA="$src" "$P/bin/ipilab" list --data-dir)" = "$P/share/ipilab" ] || fail "\$IPILAB_DATA came first"
"$P/bin/ipilab" list --data | grep -q "beside the binary  $P/share/ipilab: used (" || fail "list --data does not say it used $P/share/ipilab"

listed=$("$P/bin/ipilab" list --scenarios)
n=0
for f in "$src"/scenarios/*.toml; do
  name=$(basename "$f" .toml)
  grep -qE "^[* ] $name " <<<"$listed" || fail "'ipilab list --scenarios' from / does not list $name"
  n=$((n + 1))
done
grep -q "(invalid)" <<<"$listed" && fail "an installed scenario is invalid: $listed"

"$P/bin/ipilab" run >"$tmp/installed.txt" || fail "'ipilab run' from / exited $?"
"$build/bin/ipilab" run >"$tmp/build.txt"
cmp -s "$tmp/installed.txt" "$tmp/build.txt" || { diff "$tmp/build.txt" "$tmp/installed.txt" | head; fail "installed 'ipilab run' differs"; }
grep -q "== seed000-send-ipi-one:" "$tmp/installed.txt" || fail "no seed000-send-ipi-one in the default run"
grep -q "== seed003-ipi-hw:" "$tmp/installed.txt" || fail "no seed003-ipi-hw in the default run"
"$P/bin/ipilab" run seed003-ipi-hw --check >/dev/null || fail "'ipilab run seed003-ipi-hw --check' from / failed"

# A copied binary (no share/ipilab beside it) reads $IPILAB_DATA.
mkdir -p "$tmp/elsewhere/bin"
cp "$P/bin/ipilab" "$tmp/elsewhere/bin/"
[ "$(IPILAB_DATA="$P/share/ipilab" "$tmp/elsewhere/bin/ipilab" list --data-dir)" = "$P/share/ipilab" ] ||
  fail "a copied binary does not use \$IPILAB_DATA"
IPILAB_DATA="$P/share/ipilab" "$tmp/elsewhere/bin/ipilab" list --data | grep -q "\$IPILAB_DATA       $P/share/ipilab: used" ||
  fail "list --data does not say it used \$IPILAB_DATA"
echo "installed into $P; from /: $n built-in scenarios listed, 'ipilab run' identical to the build's"
