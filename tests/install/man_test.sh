#!/usr/bin/env bash
# The generated ipilab(1) renders without a warning (groff -ww, man -l at 80 columns) and has a
# section for every command and every option that --help shows.
set -euo pipefail
build=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
ipilab=$build/bin/ipilab
page=$build/generated/ipilab.1
[ -f "$page" ] || fail "no $page (the ipilab-docs target makes it)"
"$ipilab" help-man | cmp -s - "$page" || fail "$page is stale: it differs from 'ipilab help-man'"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
groff -man -Tutf8 -ww -z "$page" 2>"$tmp/groff.err"
[ -s "$tmp/groff.err" ] && { cat "$tmp/groff.err"; fail "groff warnings"; }
if command -v man >/dev/null; then
  MANWIDTH=80 man -l "$page" >"$tmp/page.txt" 2>"$tmp/man.err"
  [ -s "$tmp/man.err" ] && { cat "$tmp/man.err"; fail "man -l warnings"; }
else
  groff -man -Tutf8 "$page" | sed 's/.\x08//g' >"$tmp/page.txt"
fi
for s in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" ENVIRONMENT FILES; do
  grep -q "^$s" "$tmp/page.txt" || fail "no $s section"
done
# Every command and subcommand from --help, with every option of it.
commands() {  # the names under "Subcommands:" in `ipilab $* --help`
  "$ipilab" "$@" --help | sed -n '/^Subcommands:/,/^$/p' | awk '/^  [^ ]/ { print $1 }'
}
check() {
  grep -qE "^   ipilab $*\$" "$tmp/page.txt" || fail "no section 'ipilab $*'"
  for opt in $("$ipilab" "$@" --help | sed -n '/^Options:/,/^$/p' | grep -oE '^  (-[a-zA-Z],)?--[a-z0-9-]+' | sed 's/.*,//; s/^ *//'); do
    [ "$opt" = --help ] && continue
    # the option's line within this command's section
    awk -v sec="   ipilab $*" -v opt="$opt" '$0 == sec { on = 1; next } /^   ipilab / { on = 0 } on && index($0, opt) { found = 1 } END { exit !found }' \
        "$tmp/page.txt" || fail "'ipilab $*': no $opt in its section"
  done
}
n=0
for c in $(commands); do
  check "$c"; n=$((n + 1))
  for s in $(commands "$c"); do check "$c" "$s"; n=$((n + 1)); done
done
[ "$n" -ge 8 ] || fail "only $n commands found in --help"
grep -q "help-man" "$tmp/page.txt" && fail "the hidden help-* commands are in the page"
echo "man page: $n command sections with every option, no warnings"
