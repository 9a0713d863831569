#!/usr/bin/env python3
"""Writes fuzz/corpus/hv_host/: the ten KVM selftest hyperv_ipi cases (fact sheet §5.2) plus a few
validation cases, in fuzz_hv_host's input layout (see fuzz_hv_host.cpp). Run from the repo root."""
import os
import struct

OUT = os.path.join(os.path.dirname(__file__), "..", "corpus", "hv_host")
GPA = 0x1000


def control(code, fast=False, varhead=0, rep_count=0):
    return code | (int(fast) << 16) | (varhead << 17) | (rep_count << 32)


def seed(name, rcx, rdx=GPA, r8=0, xmm=(), page=b"", flags=0x1E, vps=(0, 2, 65), max_sel=3, flags1=1):
    h = bytearray(149)
    h[0], h[1], h[2], h[3] = flags, flags1, len(vps) - 1, max_sel
    for i, vp in enumerate(vps):
        struct.pack_into("<H", h, 4 + 2 * i, vp)
    struct.pack_into("<QQQ", h, 21, rcx, rdx, r8)
    x = list(xmm) + [0] * (12 - len(xmm))
    struct.pack_into("<12Q", h, 45, *x)
    struct.pack_into("<Q", h, 141, GPA)  # memory image starts at the input GPA
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes(h) + page)


def ipi(vector, mask, reserved=0):
    return struct.pack("<IIQ", vector, reserved, mask)


def ipi_ex(vector, fmt, vbm, banks, reserved=0):
    return struct.pack("<IIQQ", vector, reserved, fmt, vbm) + b"".join(struct.pack("<Q", b) for b in banks)


os.makedirs(OUT, exist_ok=True)
seed("selftest01_slow", control(0x0B), page=ipi(0xFE, 1 << 2))
seed("selftest02_fast", control(0x0B, True), rdx=0xFE, r8=1 << 2)
seed("selftest03_ex_slow", control(0x15, False, 1), page=ipi_ex(0xFE, 0, 1, [1 << 2]))
seed("selftest04_ex_xmm", control(0x15, True, 1), rdx=0xFE, r8=0, xmm=[1, 1 << 2])
seed("selftest05_ex_slow_bank1", control(0x15, False, 1), page=ipi_ex(0xFE, 0, 2, [1 << 1]))
seed("selftest06_ex_xmm_bank1", control(0x15, True, 1), rdx=0xFE, r8=0, xmm=[2, 1 << 1])
seed("selftest07_ex_slow_two", control(0x15, False, 2), page=ipi_ex(0xFE, 0, 3, [1 << 2, 1 << 1]))
seed("selftest08_ex_xmm_two", control(0x15, True, 2), rdx=0xFE, r8=0, xmm=[3, 1 << 2, 1 << 1, 0])
seed("selftest09_ex_slow_all", control(0x15, False, 0), page=ipi_ex(0xFE, 1, 0, []))
seed("selftest10_ex_xmm_all", control(0x15, True, 0), rdx=0xFE, r8=1)
seed("stage14_sparse_no_banks", control(0x15), page=bytes(64), flags=0x1F)
seed("xmm_ud_enforce", control(0x15, True, 1), rdx=0xFE, xmm=[1, 4], flags=0x17)
seed("varhead_mismatch", control(0x15, False, 1), page=ipi_ex(0xFE, 0, 3, [4, 2]))
seed("xen_slow_vtl", control(0x0B), page=ipi(0xFE, 4, 1), flags=0x3E)
seed("ex_bank63_vp4095", control(0x15, False, 1), page=ipi_ex(0xFE, 0, 1 << 63, [1 << 63]), vps=(0, 4095))
seed("cap64_two_banks", control(0x15, False, 2), page=ipi_ex(0xFE, 0, 3, [2]), vps=(0, 1), max_sel=0)
