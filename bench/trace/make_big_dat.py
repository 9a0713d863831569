#!/usr/bin/env python3
"""Synthesises a long trace.dat from a real one by repeating its ring-buffer pages.

The source (default data/traces/mixed.dat, 35004 events recorded on a Linux VM) is first converted
to an uncompressed version-6 file with `trace-cmd convert` (trace-cmd.dat.v6(5): the header is
followed by a "flyrecord" table of per-CPU (offset, size) and page-aligned raw pages). The output
keeps the source's header (event formats, kallsyms, cmdlines) and, for each CPU, writes the source
pages COPIES times, adding (copy * shift) to each page's 64-bit base timestamp so that time keeps
increasing; the events inside a page carry deltas and stay valid. The result is a real trace.dat
that trace-cmd and ipilab both read: COPIES x the source's events. Do not commit it (60 copies of
mixed.dat = 2.1 M events, ~68 MB).

usage: make_big_dat.py OUTPUT [COPIES] [SOURCE.dat]"""
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

root = Path(__file__).resolve().parents[2]
out_path = Path(sys.argv[1])
copies = int(sys.argv[2]) if len(sys.argv) > 2 else 60
src = Path(sys.argv[3]) if len(sys.argv) > 3 else root / "data" / "traces" / "mixed.dat"

with tempfile.TemporaryDirectory() as tmp:
    v6 = Path(tmp) / "v6.dat"
    subprocess.run(["trace-cmd", "convert", "--file-version", "6", "--compression", "none", "-i", str(src), "-o", str(v6)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = v6.read_bytes()

assert d[:10] == b"\x17\x08\x44tracing", "not a trace.dat"
pos = 10
ver_end = d.index(b"\0", pos)
assert d[pos:ver_end] == b"6"
pos = ver_end + 1
big = d[pos] == 1
long_size = d[pos + 1]
pos += 2
E = ">" if big else "<"
page_size = struct.unpack_from(E + "I", d, pos)[0]
pos += 4


def u(fmt):
    global pos
    v = struct.unpack_from(E + fmt, d, pos)[0]
    pos += struct.calcsize(fmt)
    return v


def skip(n):
    global pos
    pos += n


def skip_string():
    global pos
    pos = d.index(b"\0", pos) + 1


# (u() moves pos, so "skip(u(...))", never "pos += u(...)", which would add to the old pos.)
skip(12); skip(u("Q"))            # header_page
skip(13); skip(u("Q"))            # header_event
for _ in range(u("I")):           # ftrace formats
    skip(u("Q"))
for _ in range(u("I")):           # event systems
    skip_string()
    for _ in range(u("I")):
        skip(u("Q"))
skip(u("I"))                      # kallsyms
skip(u("I"))                      # printk formats
skip(u("Q"))                      # saved cmdlines
cpus = u("I")
while d[pos:pos + 10] == b"options  \0":
    pos += 10
    while True:
        opt = u("H")
        if opt == 0:
            break
        skip(u("I"))
assert d[pos:pos + 10] == b"flyrecord\0", "expected flyrecord (a file with instances is not supported here)"
pos += 10
table = pos
cpu_data = [struct.unpack_from(E + "QQ", d, table + 16 * c) for c in range(cpus)]
header = bytearray(d[:table])
first_data = table + 16 * cpus
first_data = (first_data + page_size - 1) // page_size * page_size

# Time span of the source (page base timestamps), to shift each copy after the previous one.
lo, hi = None, 0
for off, size in cpu_data:
    for p in range(off, off + size, page_size):
        ts = struct.unpack_from(E + "Q", d, p)[0]
        lo = ts if lo is None else min(lo, ts)
        hi = max(hi, ts)
shift = (hi - lo) + 10_000_000  # +10 ms between copies

offsets = []
cur = first_data
for off, size in cpu_data:
    offsets.append((cur, size * copies))
    cur += size * copies
with out_path.open("wb") as f:
    f.write(header)
    for o, s in offsets:
        f.write(struct.pack(E + "QQ", o, s))
    f.write(b"\0" * (first_data - f.tell()))
    for (off, size), (o, _) in zip(cpu_data, offsets):
        assert f.tell() == o
        pages = [bytearray(d[p:p + page_size]) for p in range(off, off + size, page_size)]
        base = [struct.unpack_from(E + "Q", pg, 0)[0] for pg in pages]
        for c in range(copies):
            for pg, b in zip(pages, base):
                struct.pack_into(E + "Q", pg, 0, b + c * shift)
                f.write(pg)
print(f"{out_path}: {copies} copies of {src.name}, {cpus} CPUs, {os.path.getsize(out_path)} bytes")
