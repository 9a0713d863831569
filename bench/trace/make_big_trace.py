#!/usr/bin/env python3
"""Makes a text trace N times longer than data/traces/mixed.txt (default 100x) by concatenating
copies whose timestamps are shifted so time keeps increasing. Used by memory_check.sh to show that
`ipilab trace` keeps bounded memory; the output is large (~400 MB for 100x): do not commit it.

usage: make_big_trace.py OUTPUT [COPIES]"""
import re
import sys
from pathlib import Path

src = Path(__file__).resolve().parents[2] / "data" / "traces" / "mixed.txt"
out_path = Path(sys.argv[1])
copies = int(sys.argv[2]) if len(sys.argv) > 2 else 100
lines = src.read_text().splitlines(keepends=True)
header, body = lines[0], lines[1:]
ts_re = re.compile(r"(\] +)(\d+)\.(\d{9}):")
first = int("".join(ts_re.search(body[0]).groups()[1:]))
last = int("".join(ts_re.search(body[-1]).groups()[1:]))
step = last - first + 1_000_000  # each copy starts 1 ms after the previous one ends
parts = []
for line in body:
    m = ts_re.search(line)
    parts.append((line[: m.start(2)], int(m.group(2) + m.group(3)), line[m.end(3):]))
with out_path.open("w") as out:
    out.write(header)
    for c in range(copies):
        shift = c * step
        out.writelines(f"{pre}{(ts + shift) // 1_000_000_000}.{(ts + shift) % 1_000_000_000:09d}{post}"
                       for pre, ts, post in parts)
