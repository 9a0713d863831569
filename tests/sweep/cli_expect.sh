#!/bin/sh
# cli_expect.sh EXE STATUS FRAGMENT ARGS... — runs EXE ARGS in an empty folder, passes when it exits
# with STATUS, its stderr contains FRAGMENT (fixed string) and it wrote no file there.
exe=$1; want=$2; fragment=$3; shift 3
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
err=$(cd "$dir" && "$exe" "$@" --csv out.csv --json out.json 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne "$want" ]; then echo "exit status $rc, expected $want; stderr: $err"; exit 1; fi
if [ -n "$(ls -A "$dir")" ]; then echo "files left behind: $(ls -A "$dir")"; exit 1; fi
case "$err" in
  *"$fragment"*) exit 0 ;;
  *) echo "stderr lacks '$fragment': $err"; exit 1 ;;
esac
