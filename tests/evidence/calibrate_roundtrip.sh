#!/bin/sh
# calibrate_roundtrip.sh EXE OUTDIR — `ipilab calibrate` refits seed 000's four fitted values from a
# start 50 % off, says that no leave-one-out prediction exists (four values, four figures), and the
# profile layer it writes runs seed 000 within its published figures (`run --profile ... --check`).
# A third argument, N: the fit's model runs take N iterations (the sanitizer build: 2,000, not the
# scenario's 20,000, which took three minutes there); every check below still holds of that fit.
exe=$1; dir=$2; iters=${3:+--iterations $3}
mkdir -p "$dir" || exit 1
out=$("$exe" calibrate --profile hyperv-ws2019 --start 1.5 --profile-out "$dir/hv-calibrated.toml" -j 2 $iters) || { echo "calibrate failed: $out"; exit 1; }
case "$out" in *"leave-one-out:"*"none possible. 4 values and 4 figures"*) ;; *) echo "no leave-one-out statement: $out"; exit 1 ;; esac
case "$out" in *converged*) ;; *) echo "not converged: $out"; exit 1 ;; esac
grep -q '^extends = "hyperv-ws2019"' "$dir/hv-calibrated.toml" || { echo "the layer does not extend the base"; exit 1; }
grep -q '^range = \[' "$dir/hv-calibrated.toml" || { echo "the layer has no fitted ranges"; exit 1; }
"$exe" run seed000-send-ipi-one --profile "$dir/hv-calibrated.toml" --check --iterations 20000 >/dev/null || { echo "the calibrated profile misses seed 000's figures"; exit 1; }
