#!/bin/sh
# stdout_has.sh EXE FRAGMENT ARGS... — runs EXE ARGS, passes when it exits 0 and its standard output
# contains FRAGMENT (fixed string).
exe=$1; fragment=$2; shift 2
out=$("$exe" "$@") || { echo "exit status $?"; exit 1; }
case "$out" in
  *"$fragment"*) exit 0 ;;
  *) echo "stdout lacks '$fragment'"; exit 1 ;;
esac
