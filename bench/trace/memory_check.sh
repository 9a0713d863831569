#!/bin/sh
# Bounded memory of `ipilab trace`: peak RSS on mixed.txt and on a 100x longer trace made from it,
# and on trace.dat files 60x and 120x mixed.dat.
# usage: bench/trace/memory_check.sh [path/to/ipilab] [copies]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ipilab=${1:-$root/build/release/bin/ipilab}
copies=${2:-100}
big=$(mktemp /tmp/ipilab-big-trace.XXXXXX)
trap 'rm -f "$big"' EXIT
python3 "$here/make_big_trace.py" "$big" "$copies"
echo "big trace: $(wc -l < "$big") lines, $(du -h "$big" | cut -f1)"
/usr/bin/time -f "mixed.txt      : %e s, peak RSS %M KiB" "$ipilab" trace "$root/data/traces/mixed.txt" > /dev/null
/usr/bin/time -f "${copies}x mixed.txt : %e s, peak RSS %M KiB" "$ipilab" trace "$big" > /dev/null
"$ipilab" trace "$big" --json - | python3 -c 'import json,sys; d=json.load(sys.stdin); print("ipis_sent", d["ipis_sent"], "matched", d["matched"], "unmatched_sends", d["unmatched_sends"])'
# trace.dat: 60x and 120x mixed.dat (2.1 M and 4.2 M events): the peak must not grow with the length.
if command -v trace-cmd >/dev/null; then
  for n in 60 120; do
    python3 "$here/make_big_dat.py" "$big.dat" "$n" > /dev/null
    /usr/bin/time -f "${n}x mixed.dat : %e s, peak RSS %M KiB" "$ipilab" trace "$big.dat" > /dev/null
  done
  rm -f "$big.dat"
fi
