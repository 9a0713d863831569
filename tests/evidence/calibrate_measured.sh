#!/usr/bin/env bash
# calibrate_measured.sh EXE FIXTURE.json — `ipilab calibrate --measured` on a real recording (taken on
# the development host: nested, PVM backend, loaded). The recording's profile comes from
# `measure --from --profile-out`, whose own fit of vcpu.halt_wakeup to the x2APIC halted round trip
# is a root search on the same model; calibrate's least squares, started 50 % off, must find the same
# value (within 1 %: both stop within the simulated median's 1/256 resolution) and reproduce that
# median within 0.5 %. Then four halt-path values, started 50 % off, to the six halted cases: every case gets a
# leave-one-out error, the layer extends the measured profile by its absolute path, and `run this-host
# --profile` runs it.
# A third argument, N: the four-value fit runs N iterations per model run (the sanitizer build, where
# the scenario's 2,000 took five minutes); its checks are of the report's and the layer's shape, which
# do not depend on N. The one-value fit and its figures run as in the release build.
set -uo pipefail
ipilab=$1 fixture=$2
fit4=()
[ -n "${3:-}" ] && fit4=(--iterations "$3")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$ipilab" measure --from "$fixture" --profile-out "$tmp/host.toml" >/dev/null 2>"$tmp/err" || fail "measure --from exited $?: $(cat "$tmp/err")"
root=$(awk '/^\[cost.vcpu.halt_wakeup\]/{f=1} f&&/^value = /{print $3; exit}' "$tmp/host.toml")
[ -n "$root" ] || fail "the measured profile has no vcpu.halt_wakeup"

out=$("$ipilab" calibrate --measured "$fixture" --profile "$tmp/host.toml" --fit vcpu.halt_wakeup \
      --figure x2apic-physical/ipi-roundtrip/halt --start 1.5 -j 2 2>&1) || fail "calibrate (one value) exited $?: $out"
grep -q "converged" <<<"$out" || fail "not converged: $out"
fitted=$(awk '$1=="vcpu.halt_wakeup"{print $4; exit}' <<<"$out" | tr -d ,)
res=$(awk '$1=="x2apic-physical/ipi-roundtrip/halt"{for(i=1;i<=NF;i++) if($i ~ /%$/){print $i; exit}}' <<<"$out")
awk -v a="$fitted" -v b="$root" 'BEGIN{d=(a-b)/b; if (d<0) d=-d; exit !(d < 0.01)}' ||
  fail "least squares found vcpu.halt_wakeup = $fitted ns, measure's root search $root ns: $out"
awk -v r="${res%\%}" 'BEGIN{if (r<0) r=-r; exit !(r < 0.5)}' || fail "residual $res of the fitted figure: $out"
grep -q "left out" <<<"$out" && fail "a named figure must not list left-out cases: $out"

out=$("$ipilab" calibrate --measured "$fixture" --profile "$tmp/host.toml" --fit vcpu.halt_wakeup --fit guest.callback \
      --fit hv.hypercall_entry_exit --fit hv.slow_input_map --start 1.5 --profile-out "$tmp/fit.toml" -j 2 "${fit4[@]}" 2>&1) ||
  fail "calibrate (four values) exited $?: $out"
grep -q "4 values to 6 figures" <<<"$out" || fail "not 4 values to the 6 halted cases: $out"
grep -q "leave-one-out: each figure predicted by the fit to the others" <<<"$out" || fail "no leave-one-out: $out"
[ "$(grep -cE '^  [a-z0-9-]+/[a-z-]+/halt .*\([+-][0-9.]+%\)$' <<<"$out")" = 6 ] || fail "not every case has a leave-one-out error: $out"
grep -q "left out: x2apic-physical/ipi-roundtrip/spin: a spinning target on the PVM backend" <<<"$out" || fail "spin case not listed as left out: $out"
grep -q "left out: kvm-pv/ipi-roundtrip/halt: nothing measured (status unavailable" <<<"$out" || fail "unavailable case not listed: $out"
grep -q "^extends = \"$tmp/host.toml\"" "$tmp/fit.toml" || fail "the layer does not extend the measured profile: $(head -5 "$tmp/fit.toml")"
[ "$(grep -c '^class = "fitted"' "$tmp/fit.toml")" = 4 ] || fail "the layer does not hold the four fitted values"
"$ipilab" run this-host --profile "$tmp/fit.toml" --variant hyperv/call-single/halt >/dev/null 2>"$tmp/err" ||
  fail "run this-host --profile fit.toml exited $?: $(cat "$tmp/err")"
echo "calibrate from a measurement: ok (vcpu.halt_wakeup $fitted ns vs root search $root ns, residual $res)"
