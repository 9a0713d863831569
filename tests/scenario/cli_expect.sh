#!/bin/sh
# cli_expect.sh EXE STATUS FRAGMENT ARGS... — runs EXE ARGS, passes when it exits with STATUS and
# its stderr contains FRAGMENT (fixed string). Used by CTest for the `ipilab run` bad-input cases.
exe=$1; want=$2; fragment=$3; shift 3
err=$("$exe" "$@" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne "$want" ]; then echo "exit status $rc, expected $want; stderr: $err"; exit 1; fi
case "$err" in
  *"$fragment"*) exit 0 ;;
  *) echo "stderr lacks '$fragment': $err"; exit 1 ;;
esac
