#!/bin/sh
# same_twice.sh EXE ARGS... — runs EXE ARGS twice (-j 1 and -j 2 appended) and passes when both
# exit 0 with byte-identical stdout: --uncertainty's intervals depend on the seed, not the threads.
exe=$1; shift
a=$("$exe" "$@" -j 1) || { echo "first run failed"; exit 1; }
b=$("$exe" "$@" -j 2) || { echo "second run failed"; exit 1; }
[ -n "$a" ] || { echo "no output"; exit 1; }
case "$a" in *'"interval"'*) ;; *) echo "no interval in the output"; exit 1 ;; esac
[ "$a" = "$b" ] || { echo "outputs differ between -j 1 and -j 2"; exit 1; }
