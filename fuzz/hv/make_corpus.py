#!/usr/bin/env python3
"""Writes fuzz/corpus/hv_host/: the ten KVM selftest hyperv_ipi cases
(tools/testing/selftests/kvm/x86/hyperv_ipi.c) plus a few
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
# KVM versions (byte 3 bits 3:2: 0 mainline .. 3 v5.15) and duplicate VP indices (byte 3 bit 4).
seed("kvm515_set_all_no_banks", control(0x15, False, 0), page=ipi_ex(0xFE, 1, 0, []), max_sel=3 | (3 << 2))
seed("kvm516_xmm_ex_rejected", control(0x15, True, 1), rdx=0xFE, r8=0, xmm=[1, 1 << 2], max_sel=3 | (2 << 2))
seed("kvm516_varhead_ignored", control(0x15, False, 0), page=ipi_ex(0xFE, 0, 3, [4, 2]), max_sel=3 | (2 << 2))
seed("kvm_duplicate_vp5", control(0x0B, True), rdx=0xFE, r8=1 << 5, vps=(5, 5, 7), max_sel=3 | 16)

# fuzz_hv_send: 22-byte header (hook, linux, kvm, flags, self, target, vector u32, status u64, max_vp u32)
# then "cpu_vp\npresent\nonline\nmask".
SEND = os.path.join(os.path.dirname(__file__), "..", "corpus", "hv_send")
os.makedirs(SEND, exist_ok=True)


def send_seed(name, hook, linux, text, kvm=3, flags=0, self_cpu=0, target=1, vector=0xFB, status=0, max_vp=0):
    h = struct.pack("<BBBBBBIQI", hook, linux, kvm, flags, self_cpu, target, vector, status, max_vp)
    with open(os.path.join(SEND, name), "wb") as f:
        f.write(h + text.encode())


send_seed("v510_vp70_send_ipi", 0, 2, "0,70,2,3\n\n\n")
send_seed("seedv2_vp70_wrap", 0, 1, "0,70,2,3,4,5,6,7\n\n\n")
send_seed("unfixed_allbutself_set_all", 3, 3, "0,1,2,70\n\n\n", vector=0xFD)
send_seed("v54_vp4096_set_all", 0, 0, "0,1,4096\n\n\n", target=2)
send_seed("v510_forced_reps_completed", 0, 2, "0,1\n\n\n", flags=8, status=1 << 32)
send_seed("mainline_online_subset_all", 4, 4, "0,1,2,70\n0-3\n0,1,3\n", flags=16 | 32, vector=0xFD)
send_seed("mask_inval_v54", 1, 0, "0,1,inval\n\n\n1-2")
send_seed("empty_mask", 1, 4, "0,1\n\n\n")
send_seed("no_cluster_ipi", 1, 4, "0,1,2,3\n\n\n2-3", flags=1)
send_seed("kvm515_send_all", 4, 4, "0,1,2,70\n\n\n", kvm=0, vector=0xFD)
send_seed("max_vp_4096", 0, 4, "0,70\n\n\n", flags=64, max_vp=4096)
send_seed("duplicate_vp", 0, 4, "0,5,5\n\n\n")
