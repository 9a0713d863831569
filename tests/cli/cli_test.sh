#!/usr/bin/env bash
# Bad command lines exit 2 with nothing on stdout and a message that names the option or name and,
# where a close name exists, suggests it; `ipilab list --profiles` and `--data-dir`.
set -uo pipefail
build=$1 src=$2
ipilab=$build/bin/ipilab
unset IPILAB_DATA IPILAB_DATA_DIR
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

refused() {  # refused "MESSAGE PART" ARGS...: exit 2, empty stdout, the message on stderr
  local want=$1; shift
  "$ipilab" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "ipilab $*: exit $rc, expected 2"
  [ -s "$tmp/out" ] && fail "ipilab $*: wrote to stdout: $(head -c 200 "$tmp/out")"
  grep -qF -- "$want" "$tmp/err" || fail "ipilab $*: stderr lacks \"$want\": $(cat "$tmp/err")"
}

# --seed -1 would wrap to 2^64-1 in an unsigned option: refused, whatever the spelling.
refused "--seed: -1 is negative: a seed is a whole number from 0 to 18446744073709551615" run --seed -1
refused "--seed: -1 is negative" run --seed=-1 seed003-ipi-hw
refused "--seed: -7 is negative" replay --seed -7 "$src/data/traces/pipe.dat" --scenario seed000-send-ipi-one
refused "--seed: -1 is negative: a seed is a whole number" measure kvm --seed -1   # refused before any measuring
refused "--vcpu-cpus: -1 is negative: a whole number (0 or more) is expected" measure kvm --vcpu-cpus 0 -1
refused "--max-ipis: -3 is negative" replay --max-ipis -3 "$src/data/traces/pipe.dat" --scenario seed000-send-ipi-one
"$ipilab" run seed003-ipi-hw --seed 18446744073709551615 --iterations 10 >/dev/null || fail "the largest seed is refused"

# Did you mean: names looked up in the data folder and the registries, commands and options.
refused "ipi-hw: no such scenario file, and no built-in scenario of that name; did you mean 'arm-ipi-hw-bare-metal', 'gicv3-vs-gicv4-ipi-hw' or 'seed003-ipi-hw'?" run ipi-hw
refused "--base: no shipped profile 'kvm-skylake'; did you mean 'kvm-skylake-pv-ipi'? (shipped:" measure kvm --base kvm-skylake --profile-out p.toml
refused "did you mean 'seed000-send-ipi-one' or 'seed000-vp-index'?" replay "$src/data/traces/pipe.dat" --scenario seed000
refused "has no variant 'mainlin'; did you mean 'mainline' or 'mainline, NR_CPUS=64'? (variants:" run seed000-send-ipi-one --variant mainlin
refused "no such host preset; did you mean 'kunpeng920-2s' or 'kunpeng920-4s'? (known:" topo --preset kunpeng920-2
refused "ipilab: error: 'rn' is not an ipilab command; did you mean 'run'?" rn
refused "ipilab: error: '--sede' is not an option of 'ipilab run'; did you mean '--seed'?" run --sede 3
refused "ipilab: error: '--profile' is not an option of 'ipilab list'; did you mean '--profiles'? (--profile is an option of 'run' and 'calibrate')" list --profile
refused "ipilab: error: 'decod' is not a command of 'ipilab gic'; did you mean 'decode'? (commands: decode, encode, its)" gic decod 0x0
sed 's#workload = "multicast"#workload = "multicst"#' "$src/scenarios/pv-ipi-broadcast.toml" >wl.toml
refused "unknown workload \"multicst\"; did you mean 'multicast'?" run wl.toml
sed 's#profiles/kvm-skylake-pv-ipi.toml#profiles/kvm-skylake.toml#' "$src/scenarios/pv-ipi-broadcast.toml" >pf.toml
refused "no such file 'profiles/kvm-skylake.toml' (looked in" run pf.toml
grep -qF "; did you mean 'profiles/kvm-skylake-pv-ipi.toml'?" "$tmp/err" || fail "no suggestion for the profile file: $(cat "$tmp/err")"
# A misspelt counter in a scenario's expect is refused when the scenario is read, before any run.
sed 's#^misdelivered = { value = 0, tolerance = 0 }#misdelivred = { value = 0, tolerance = 0 }#' "$src/scenarios/hyperv-linux-on-kvm.toml" >ct.toml
refused "ct.toml:35:1: scenario.expect.exclude-self-unfixed guest, KVM v5.15.misdelivred: 'misdelivred' is neither a counter nor a metric of workload 'multicast'; did you mean 'misdelivered'?" run ct.toml
sed 's#^"hypercalls.HvCallSendSyntheticClusterIpiEx" = { value = 500#"hypercalls.HvCallSendSyntheticClusterIpiExx" = { value = 500#' "$src/scenarios/hyperv-linux-on-kvm.toml" >cf.toml
refused "'hypercalls.HvCallSendSyntheticClusterIpiExx' is neither a counter nor a metric of workload 'multicast'; did you mean 'hypercalls.HvCallSendSyntheticClusterIpiEx'," run cf.toml
# Nothing close: no suggestion.
refused "no built-in scenario of that name (built-in:" run zzzz
grep -q "did you mean" "$tmp/err" && fail "a suggestion for zzzz: $(cat "$tmp/err")"

# Every refused command line: exactly "ipilab: error: REASON" (the option or word and why, with the
# close names) and "Run 'ipilab CMD --help' for more.", on stderr, exit 2.
refused_exactly() {  # refused_exactly "COMMAND" "REASON" ARGS...
  local cmd=$1 want=$2; shift 2
  "$ipilab" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "ipilab $*: exit $rc, expected 2"
  [ -s "$tmp/out" ] && fail "ipilab $*: wrote to stdout: $(head -c 200 "$tmp/out")"
  [ "$(cat "$tmp/err")" = "ipilab: error: $want
Run '$cmd --help' for more." ] || fail "ipilab $*: stderr is
$(cat "$tmp/err")
expected
ipilab: error: $want
Run '$cmd --help' for more."
}
refused_exactly "ipilab" "'frobnicate' is not an ipilab command" frobnicate
refused_exactly "ipilab" "'sweeep' is not an ipilab command; did you mean 'sweep'?" sweeep
refused_exactly "ipilab run" "--seed: -1 is negative: a seed is a whole number from 0 to 18446744073709551615" run --seed -1
refused_exactly "ipilab run" "--seed: not a whole number: abc" run --seed abc
refused_exactly "ipilab run" "--seed: a value is missing (UINT)" run --seed
refused_exactly "ipilab run" "--iterations: 0 is outside the range 1 to 1000000000" run --iterations 0
refused_exactly "ipilab sweep" "--jobs: 0 is outside the range 1 to 4096" sweep hyperv-send-path --jobs 0
# Every numeric option through the one number parser: the reason, never "outside the range" for
# what is no number at all.
refused_exactly "ipilab measure kvm" "--budget: not a finite number: nan" measure kvm --budget nan
refused_exactly "ipilab measure kvm" "--budget: not a finite number: -inf" measure kvm --budget -inf
refused_exactly "ipilab measure kvm" "--halt-gap-us: '3us' has characters after the number: 'us'" measure kvm --halt-gap-us 3us
refused_exactly "ipilab run" "--iterations: not a whole number: abc" run --iterations abc
refused_exactly "ipilab run" "--iterations: not a whole number as written: 1e3 (write it in digits: 1000)" run --iterations 1e3
refused_exactly "ipilab run" "--iterations: not a whole number: 2.5" run --iterations 2.5
# A real-valued range is printed as its bounds are written, not as CLI11's "%f" (0.000000 to 86400.000000).
refused_exactly "ipilab measure kvm" "--budget: -1 is outside the range 0 to 86400" measure kvm --budget -1
refused_exactly "ipilab run" "--iterations: '12x' has characters after the number: 'x'" run --iterations 12x
refused_exactly "ipilab run" "--seed: 99999999999999999999 exceeds the largest whole number 18446744073709551615" \
  run --seed 99999999999999999999
refused_exactly "ipilab measure c2c" "--round-trips: 5000000000000 is outside the range 1 to 10000000" \
  measure c2c --round-trips 5000000000000
refused_exactly "ipilab run" "--json is given 2 times: give it once" run --json a.json --json b.json
refused_exactly "ipilab" "'nosuch' is not an ipilab command" nosuch --help
refused_exactly "ipilab kvm" "'nosuch' is not a command of 'ipilab kvm'" kvm nosuch --help
refused_exactly "ipilab" "'rnu' is not an ipilab command; did you mean 'run'?" rnu --seed 3 --help
refused_exactly "ipilab gic" "'decod' is not a command of 'ipilab gic'; did you mean 'decode'?" gic decod --help
"$ipilab" run --seed 3 --help >/dev/null || fail "run --seed 3 --help: help refused"
"$ipilab" topo --preset kunpeng920-2s --help >/dev/null || fail "topo --preset X --help: help refused"
# Semantic nonsense: a CPU against itself.
refused "--cpus: CPU 0 is named twice: a CPU against itself is no core-to-core latency" measure c2c --cpus 0,0
refused "is a folder, not a scenario file" run /tmp
refused "--call: 'bogus' is neither send-ipi, send-ipi-ex nor a hex call code" hv call --call bogus
refused_exactly "ipilab sweep" "'--jbos' is not an option of 'ipilab sweep'; did you mean '--jobs'?" sweep hyperv-send-path --jbos 2
# Numbers too large for what they name, and hex too long for a register: the bound, not "not a
# whole number" or "odd number of hex digits".
refused_exactly "ipilab hv call" "--vps: 5000 exceeds the largest VP index 4095 (64 sparse banks of 64 VPs)" \
  hv call --vps 0,5000 --call send-ipi
refused_exactly "ipilab hv call" "--vps: 99999999999 exceeds the largest VP index 4095 (64 sparse banks of 64 VPs)" \
  hv call --vps 99999999999 --call send-ipi
refused_exactly "ipilab hv call" "--vcpus: 99999999999 is too large for this option" hv call --vcpus 99999999999 --call send-ipi
refused "ipilab: error: HEX: '0x10000000000000005' is too long for a 64-bit register: 17 significant hex digits, 16 at most" \
  gic decode 0x10000000000000005
refused "ipilab: error: HEX: '10000000000000005' is too long for a 64-bit register: 17 significant hex digits, 16 at most" \
  gic decode 10000000000000005
"$ipilab" gic decode 0x00000000000000005 | grep -qF "GITS_SGIR 0x0000000000000005" || fail "gic decode: a leading zero made it too long"
# A CPU against itself: the sender and target vCPUs of measure kvm on one host CPU (before any measuring).
refused "ipilab: error: --vcpu-cpus: CPU 0 is named twice: the sender and the target vCPU would take turns on one host CPU" \
  measure kvm --vcpu-cpus 0 0
refused "ipilab: error: --vcpu-cpus: CPU 1 is named twice" measure all --vcpu-cpus 1,1
# kvm call: an unknown call is named with the known ones; an empty register is no 0; registers are
# hex, and "--rax 10" (0x10) says what KVM_HC_SEND_IPI is.
refused "ipilab: error: --call: 'nosuch' is not a call ipilab knows: give send-ipi (KVM_HC_SEND_IPI, 0xa), sched-yield (KVM_HC_SCHED_YIELD, 0xb) or a hex hypercall number" \
  kvm call --call nosuch
refused "ipilab: error: --rbx: a value is expected, the value is empty (leave the option out for 0)" kvm call --call send-ipi --rbx ""
refused "ipilab: error: --call: a value is expected, the value is empty" kvm call --call ""
out=$("$ipilab" kvm call --rax 10) || fail "kvm call --rax 10 exited $?"
grep -qF "note       --rax 10 is read as hex 0x10; KVM_HC_SEND_IPI is 0xa (10 decimal): give --rax a or --call send-ipi" <<<"$out" ||
  fail "kvm call --rax 10: no note: $out"
grep -qF "           not given, so 0: RBX, RCX, RDX, RSI" <<<"$out" || fail "kvm call --rax 10: defaulted registers not named: $out"
out=$("$ipilab" kvm call --call send-ipi --rbx 1 --rcx 0 --rdx 0 --rsi fb) || fail "kvm call with every register exited $?"
grep -q "not given\|^note" <<<"$out" && fail "kvm call with every register given: $out"
refused "ipilab: error: --ready: vCPU 1 is named twice" kvm call --call sched-yield --rbx 1 --ready 1,1
refused "ipilab: error: --apic-disabled: vCPU 2 is named twice" kvm call --call send-ipi --apic-disabled 2,0,2
refused "ipilab: error: --apic-disabled: vCPU 1 is named twice" hv call --call send-ipi --fast --rdx fe --apic-disabled 1,1
# A sweep axis with one value twice would run each point twice.
sed 's#values = \["socket:0", "socket:1", "socket:3"\]#values = ["socket:0", "socket:1", "socket:0"]#' "$src/tests/sweep/data/small.toml" >rep.toml
refused "rep.toml:15:35: axis[1].values[2]: axis 'placement' has the label 'socket:0' twice (values 0 and 2)" sweep rep.toml
sed 's#{ label = "4", host.preset = "kunpeng920-4s" }#{ label = "2 again", host.preset = "kunpeng920-2s" }#' "$src/tests/sweep/data/small.toml" >rep2.toml
refused "axis 'sockets' has the value" sweep rep2.toml
grep -qF "twice (values 0 and 1): each point would be run twice" "$tmp/err" || fail "sweep: the same setting twice: $(cat "$tmp/err")"

refused_exactly "ipilab hv" "'ipilab hv' needs a command: call, send" hv
refused_exactly "ipilab hv call" "--vcpus: not together with --vps: give one of them" hv call --vps 0,1 --vcpus 2
# An option of another command says whose it is.
refused_exactly "ipilab measure kvm" "--heatmap is not an option of 'ipilab measure kvm': it is an option of 'measure c2c' and 'measure all'" \
  measure kvm --heatmap x.gif
refused_exactly "ipilab run" "--heatmap is not an option of 'ipilab run': it is an option of 'measure c2c' and 'measure all'" \
  run seed003-ipi-hw --heatmap x.png
refused_exactly "ipilab sweep" "--variant is not an option of 'ipilab sweep': it is an option of 'run' and 'replay'" sweep hyperv-send-path --variant x
# --help and --version are not errors.
"$ipilab" run --help >/dev/null 2>"$tmp/err" || fail "run --help exited $?"
[ -s "$tmp/err" ] && fail "run --help wrote to stderr: $(cat "$tmp/err")"

# In every list of subcommands ('ipilab --help', 'ipilab hv --help', ...) each command is one line:
# its summary; the long text is the command's own --help.
for cmd in "" $("$ipilab" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z0-9-]*\) .*/\1/p'); do
  help=$("$ipilab" $cmd --help) || fail "ipilab $cmd --help exited $?"
  list=$(sed -n '/^Subcommands:/,/^$/p' <<<"$help" | sed '1d;/^$/d')
  [ -n "$cmd" ] || [ "$(wc -l <<<"$list")" -ge 9 ] || fail "ipilab --help lists $(wc -l <<<"$list") commands"
  bad=$(grep -vE '^  [a-z0-9-]+ {2,}[^ ]' <<<"$list")
  [ -z "$list" ] || [ -z "$bad" ] || fail "ipilab $cmd --help: a subcommand's summary is not one line: $bad"
done
grep -qF "ipilab measure all   both; a bare" <<<"$("$ipilab" measure --help)" || fail "measure --help lost its long text"

# list --profiles: every shipped profile, by file name, with its own [profile] name; JSON too.
out=$("$ipilab" list --profiles) || fail "list --profiles exited $?"
for f in "$src"/profiles/*.toml; do
  n=$(basename "$f" .toml)
  grep -qE "^  $n " <<<"$out" || fail "list --profiles does not list $n"
done
grep -q "(invalid)" <<<"$out" && fail "list --profiles: an invalid shipped profile: $out"
"$ipilab" list --profiles --json >p.json || fail "list --profiles --json exited $?"
if command -v jq >/dev/null; then
  [ "$(jq -r '.profiles | map(.name) | join(",")' p.json)" = "$(cd "$src/profiles" && ls *.toml | sed 's/\.toml$//' | paste -sd,)" ] ||
    fail "list --profiles --json names: $(jq -c '.profiles | map(.name)' p.json)"
  [ "$(jq -r '.profiles[] | select(.name == "hyperv-ws2019") | .host' p.json)" = ws2019-2s-e5-2420v2 ] || fail "hyperv-ws2019 host"
fi
# list --counters: the catalog, each counter with its unit and who counts it; JSON too.
out=$("$ipilab" list --counters) || fail "list --counters exited $?"
for c in sends ipis_delivered lost misdelivered vm_exits hypercalls "hypercalls.<call>" its_commands its_local; do
  grep -qE "^  $c " <<<"$out" || fail "list --counters does not list $c"
done
grep -qF "counted by: mechanism gicv4.1-vsgi" <<<"$out" || fail "list --counters: no 'counted by' for sgir_writes: $out"
if command -v jq >/dev/null; then
  "$ipilab" list --counters --json >c.json || fail "list --counters --json exited $?"
  [ "$(jq -r '.counters[] | select(.name == "vm_exits") | .unit' c.json)" = "VM exits" ] || fail "vm_exits unit: $(cat c.json)"
  jq -e '.counters[] | select(.name == "hypercalls.<call>") | .calls | index("KVM_HC_SEND_IPI")' c.json >/dev/null ||
    fail "list --counters --json: hypercalls.<call> lacks KVM_HC_SEND_IPI"
fi
# The build's binary finds the source tree it was built from, and says so.
[ "$("$ipilab" list --data-dir)" = "$src" ] || fail "list --data-dir: $("$ipilab" list --data-dir), expected $src"
"$ipilab" list --data | grep -qF "source tree        $src: used" || fail "list --data: $("$ipilab" list --data)"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "cli: every refused command line exits 2 and says where, with the close names"
