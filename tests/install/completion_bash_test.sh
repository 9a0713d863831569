#!/usr/bin/env bash
# The generated bash completion: subcommands, options per command, option values (built-in names
# from the binary, choices, files), and nothing for numbers.
set -uo pipefail
build=$1
ipilab=$build/bin/ipilab
script=$build/generated/ipilab.bash
[ -f "$script" ] || { echo "FAIL: no $script"; exit 1; }
"$ipilab" help-completion bash | cmp -s - "$script" || { echo "FAIL: $script is stale"; exit 1; }
# shellcheck source=/dev/null
source "$script"
complete -p ipilab | grep -q -- "-F _ipilab" || { echo "FAIL: not registered"; exit 1; }

failures=0
# complete WORD... : the candidates for the last word, sorted, one a line.
complete_words() {
  COMP_WORDS=("$ipilab" "$@")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMPREPLY=()
  _ipilab
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect() {  # expect "WORDS" "EXPECTED (space-separated, sorted)"
  local got; got=$(read -ra w <<<"$1"; [ "${1: -1}" = " " ] && w+=(""); complete_words "${w[@]}" | xargs)
  if [ "$got" != "$2" ]; then echo "FAIL: '$1' -> '$got', expected '$2'"; failures=$((failures + 1)); fi
}
has() {  # has "WORDS" CANDIDATE...: each candidate is offered
  local got; got=$(read -ra w <<<"$1"; [ "${1: -1}" = " " ] && w+=(""); complete_words "${w[@]}")
  shift
  for c in "$@"; do grep -qxF -- "$c" <<<"$got" || { echo "FAIL: '$c' not offered"; failures=$((failures + 1)); }; done
}

expect " " "calibrate gic hv kvm list measure replay run sweep topo trace validate"       # no hidden help-* command
expect "r" "replay run"
expect "run --se" "--seed --sensitivity"
expect "run --seed " ""                                     # a number: nothing to offer
expect "run seed003" "seed003-ipi-hw"                         # built-in names from the binary
expect "run --variant x --ch" "--check"                      # the value of --variant is skipped
expect "topo --preset kunpeng920-4" "kunpeng920-4s kunpeng920-4s-shared-vpe"
expect "replay --scenario pv-" "pv-ipi-broadcast"
expect "measure " "all c2c kvm"                               # {kvm,c2c,all}
expect "gic " "decode encode its"
expect "gic decode --" "--dwords --help --json --sgir"
expect "hv call --flavor " "kvm xen"
has "list --" --profiles --data --data-dir --scenarios
has "trace record --" --duration --output
has "trace " record

# Files where a file is meant: --json, a trace, and *.toml for a scenario.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
touch out.json mine.toml notes.txt
mkdir sub
expect "run --json o" "out.json"
expect "run --json = o" "out.json"          # bash splits --json=o at the = (COMP_WORDBREAKS)
expect "run --json =" "mine.toml notes.txt out.json sub"
expect "trace n" "notes.txt"
expect "run m" "mine.toml"
expect "run s" "seed000-send-ipi-one seed000-vp-index seed003-ipi-hw sub"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "bash completion: all cases pass"
