#!/bin/sh
# determinism.sh EXE SPEC [MPI_EXE] — the same spec with -j 1, -j 2 (and, given an MPI build,
# mpirun -np 2) must give byte-identical CSV and JSON. The CI runs it with the MPI build too.
set -eu
exe=$1; spec=$2; mpi_exe=${3:-}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$exe" sweep "$spec" -j 1 --csv "$dir/j1.csv" --json "$dir/j1.json" >/dev/null 2>"$dir/j1.err"
"$exe" sweep "$spec" -j 2 --csv "$dir/j2.csv" --json "$dir/j2.json" >/dev/null 2>"$dir/j2.err"
cmp "$dir/j1.csv" "$dir/j2.csv"
cmp "$dir/j1.json" "$dir/j2.json"
rows=$(($(wc -l <"$dir/j1.csv") - 1))
echo "-j 1 and -j 2: identical CSV and JSON ($rows points)"
if [ -n "$mpi_exe" ]; then
  mpirun --allow-run-as-root --oversubscribe -np 2 "$mpi_exe" sweep "$spec" --csv "$dir/m.csv" --json "$dir/m.json" \
    >/dev/null 2>"$dir/m.err" || { cat "$dir/m.err"; exit 1; }
  grep -q "2 MPI ranks" "$dir/m.err" || { echo "mpirun did not run 2 ranks:"; cat "$dir/m.err"; exit 1; }
  cmp "$dir/j1.csv" "$dir/m.csv"
  cmp "$dir/j1.json" "$dir/m.json"
  echo "mpirun -np 2: identical CSV and JSON"
fi
