#!/usr/bin/env bash
# The generated zsh completion, run by zsh with the completion system's functions replaced by
# stubs that print what they were given: which candidates each command line gets.
set -uo pipefail
build=$1
ipilab=$build/bin/ipilab
script=$build/generated/_ipilab
command -v zsh >/dev/null || { echo "SKIP: no zsh (scripts/install-deps installs it)"; exit 77; }
[ -f "$script" ] || { echo "FAIL: no $script"; exit 1; }
"$ipilab" help-completion zsh | cmp -s - "$script" || { echo "FAIL: $script is stale"; exit 1; }
zsh -n "$script" || { echo "FAIL: zsh -n"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" && touch out.json mine.toml
exec zsh -f /dev/stdin "$ipilab" "$script" <<'ZSH'
ipilab=$1
compdef() { registered=$* }
compadd() {  # compadd [-a ARRAY...] [--] WORD...
  local arr=0
  while [[ $1 == -* ]]; do case $1 in (-a) arr=1 ;; (--) shift; break ;; esac; shift; done
  if (( arr )); then local n; for n in "$@"; do print -rl -- ${(P)n}; done; else print -rl -- "$@"; fi
}
_describe() { local n=${@[-1]} e; for e in ${(P)n}; do print -r -- ${e%%:*}; done }
_files() { print -r -- "<files${1:+ $*}>" }
_message() { print -r -- "<message>" }
compset() { : }
source $2
[[ $registered == "_ipilab ipilab" ]] || { print "FAIL: compdef: $registered"; exit 1 }
failures=0
expect() {  # expect "WORDS" "EXPECTED (sorted, space-separated)"
  local -a w; w=(${(z)1}); [[ $1 == *' ' ]] && w+=('')
  words=($ipilab "${w[@]}"); CURRENT=${#words}
  local got=${(j: :)${(o)${(f)"$(_ipilab)"}}}
  [[ $got == $2 ]] || { print -r "FAIL: '$1' -> '$got', expected '$2'"; (( failures++ )) }
}
expect " " "calibrate gic hv kvm list measure replay run sweep topo trace validate"
expect "run --se" "--check --details --draw-iterations --events --help --iterations --jobs --json --no-breakdown --perfetto --plot --profile --progress --seed --sensitivity --timeline-limit --uncertainty --variant -h -j -v"
expect "run --seed " "<message>"
# zsh filters by prefix itself, so every built-in name is offered: exactly the binary's own list
expect "run seed003" "<files -g *.toml> ${(j: :)${(o)${(f)"$($ipilab help-names scenarios)"}}}"
[[ " $($ipilab help-names scenarios | tr '\n' ' ') " == *" seed003-ipi-hw "* ]] || { print "FAIL: no seed003-ipi-hw"; (( failures++ )) }
expect "topo --preset k" "${(j: :)${(o)${(f)"$($ipilab help-names presets)"}}}"
[[ " $($ipilab help-names presets | tr '\n' ' ') " == *" kunpeng920-2s "* ]] || { print "FAIL: no kunpeng920-2s"; (( failures++ )) }
expect "measure " "all c2c kvm"
expect "gic " "decode encode its"
expect "gic decode --" "--dwords --help --json --sgir -h"
expect "run --variant x --json " "<files>"
expect "trace " "<files> record"
(( failures == 0 )) || { print "$failures failure(s)"; exit 1 }
print "zsh completion: all cases pass"
ZSH
