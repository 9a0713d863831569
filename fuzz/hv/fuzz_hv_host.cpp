// fuzz_hv_host — Partition::execute on arbitrary registers, partition shapes and guest memory.
//
// Input layout (little-endian; missing bytes read as zero), kHeaderBytes = 149:
//   [0]      flags: bit0 enforce_cpuid, bit1 cluster_ipi, bit2 ex_masks, bit3 xmm_input,
//            bit4 lapic_in_kernel, bit5 Xen flavour, bit6 CPL 3, bit7 real mode
//   [1]      bit0 remote_tlb_flush; bits 7:1 APIC-disabled pattern for vCPUs 0..6
//   [2]      vCPU count - 1 (mod 8)
//   [3]      bits 1:0 max_vcpus selector {64, 65, 1024, 4096}; bits 3:2 KVM version, newest first
//            (0 mainline, 1 v5.18, 2 v5.16, 3 v5.15); bit 4 keep duplicate VP indices (not with Xen)
//   [4..19]  u16 VP index of vCPU 0..7 (mod max_vcpus; without bit 4 duplicates move to the next free index)
//   [20]     sender vCPU (mod count)
//   [21..44] RCX, RDX, R8
//   [45..140] XMM0..XMM5 {lo, hi}
//   [141..148] base GPA of the memory image
//   [149..]  guest memory image
// Invariants checked: no exception; a non-success outcome delivers nothing and names its check;
// RAX == status; every delivery names an existing vCPU with its VP index and a legal vector; and
// the delivered + dropped vCPUs are exactly the vCPUs whose VP index is in the decoded target set
// (none for SET_ALL without banks on KVM before 3244867af8c0).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <set>
#include <vector>

#include "hv/partition.h"

namespace {

using namespace ipilab::hv;

constexpr std::size_t kHeaderBytes = 149;

std::uint64_t u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_hv_host invariant violated: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint8_t h[kHeaderBytes] = {};
  for (std::size_t i = 0; i < kHeaderBytes && i < size; ++i) h[i] = data[i];

  PartitionConfig cfg;
  cfg.enforce_cpuid = h[0] & 1;
  cfg.cluster_ipi_recommended = h[0] & 2;
  cfg.ex_processor_masks_recommended = h[0] & 4;
  cfg.xmm_input_available = h[0] & 8;
  cfg.lapic_in_kernel = h[0] & 16;
  cfg.flavor = (h[0] & 32) ? ErrorFlavor::XenViridian : ErrorFlavor::Kvm;
  cfg.remote_tlb_flush_recommended = h[1] & 1;
  const std::uint32_t maxes[] = {64, 65, 1024, 4096};
  cfg.max_vcpus = maxes[h[3] % 4];
  cfg.kvm_version = static_cast<KvmVersion>(3 - ((h[3] >> 2) & 3));  // 0 = mainline, 3 = v5.15
  const bool duplicates = (h[3] & 16) && cfg.flavor == ErrorFlavor::Kvm;
  // KVM versions without the in-kernel-LAPIC check would oops the host: the model refuses them.
  if (!cfg.lapic_in_kernel && cfg.flavor == ErrorFlavor::Kvm && !kvm_behaviour(cfg.kvm_version).lapic_in_kernel_checked)
    return 0;
  const std::uint32_t n = 1u + h[2] % 8;
  std::vector<bool> used(cfg.max_vcpus, false);
  for (std::uint32_t v = 0; v < n; ++v) {
    std::uint32_t vp = (h[4 + 2 * v] | (h[5 + 2 * v] << 8)) % cfg.max_vcpus;
    while (used[vp] && !duplicates) vp = (vp + 1) % cfg.max_vcpus;
    used[vp] = true;
    cfg.vp_index_of_vcpu.push_back(vp);
  }
  cfg.apic_enabled.resize(n, true);
  for (std::uint32_t v = 0; v < n && v < 7; ++v) cfg.apic_enabled[v] = !((h[1] >> (v + 1)) & 1);
  const std::uint32_t sender = h[20] % n;

  HypercallRegs regs;
  regs.rcx = u64(h + 21);
  regs.rdx = u64(h + 29);
  regs.r8 = u64(h + 37);
  for (std::size_t i = 0; i < 6; ++i) regs.xmm[i] = {u64(h + 45 + 16 * i), u64(h + 53 + 16 * i)};
  regs.cpl = (h[0] & 64) ? 3 : 0;
  regs.protected_mode = !(h[0] & 128);
  const std::uint64_t base = u64(h + 141);
  std::vector<std::uint8_t> image;
  if (size > kHeaderBytes) image.assign(data + kHeaderBytes, data + size);
  const FlatGuestMemory memory(base, std::move(image));

  const Partition partition(cfg);
  const HypercallOutcome out = partition.execute(sender, regs, memory);

  if (!out.success()) {
    if (!out.delivered.empty() || !out.dropped_vcpus.empty()) fail("delivery without SUCCESS");
    if (out.rejected_by.empty()) fail("failure without rejected_by");
  } else if (!out.rejected_by.empty()) {
    fail("SUCCESS with rejected_by");
  }
  if (!out.inject_ud && out.rax != out.status_code()) fail("RAX != status");
  if (out.work.guest_bytes_read > 24 + 64 * 8) fail("read more than a header and 64 banks");
  for (const auto& d : out.delivered) {
    if (d.vcpu >= n) fail("delivery to a nonexistent vCPU");
    if (partition.vp_index(d.vcpu) != d.vp_index) fail("delivery with the wrong VP index");
    if (!ipi_vector_valid(d.vector)) fail("delivery of an illegal vector");
    if (!cfg.apic_enabled[d.vcpu]) fail("delivery to a disabled APIC");
  }
  if (out.success()) {
    // Oracle: the targets named by the decoded input.
    std::set<std::uint32_t> expect, got;
    const auto* ex = std::get_if<SendIpiExInput>(&out.input);
    const bool old_set_all_no_banks = cfg.flavor == ErrorFlavor::Kvm &&
                                      !partition.behaviour().set_all_ignores_bank_count && ex &&
                                      ex->vp_set.format == HV_GENERIC_SET_ALL && ex->vp_set.valid_bank_mask == 0;
    for (std::uint32_t v = 0; v < n && !old_set_all_no_banks; ++v) {
      const std::uint32_t vp = cfg.vp_index_of_vcpu[v];
      bool in = false;
      if (const auto* a = std::get_if<SendIpiInput>(&out.input)) {
        in = vp < 64 && ((a->processor_mask >> vp) & 1);
      } else if (const auto* e = std::get_if<SendIpiExInput>(&out.input)) {
        in = vpset_contains(e->vp_set, vp);
      }
      if (in) expect.insert(v);
    }
    for (const auto& d : out.delivered) got.insert(d.vcpu);
    for (const auto v : out.dropped_vcpus) got.insert(v);
    if (out.delivered.size() + out.dropped_vcpus.size() != got.size()) fail("a vCPU selected twice");
    if (expect != got) fail("delivered set differs from the decoded target set");
  }
  return 0;
}
