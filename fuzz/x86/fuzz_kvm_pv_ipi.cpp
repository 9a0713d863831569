// fuzz_kvm_pv_ipi — feeds arbitrary KVM_HC_SEND_IPI register values and VMs to the host model
// (kvm_emulate_send_ipi_hypercall) and arbitrary masks to the Linux guest policy, and traps on any
// broken invariant. Input layout (short inputs are zero-padded):
//   [0]      number of vCPUs - 1 (mod 96)
//   [1]      flags: bit0 64-bit caller, bit1 CPL 3, bit2 guest has KVM_FEATURE_PV_SEND_IPI,
//            bit3 no APIC map, bit4 host SMM support, bit5 APIC IDs from the input (else identity)
//   [2..41]  RAX, RBX, RCX, RDX, RSI, little endian
//   then per vCPU 3 bytes when bit5: APIC ID low, APIC ID high (IDs < 65536), flags (bit0 not
//   present, bit1 software-disabled); then the guest cpumask bytes, then the sending CPU.
// The same registers also run through every KVM version of kvm_emulate_pv_hypercall
// (kvm_pv_version.h) and through `ipilab kvm call`'s logic (run_kvm_call, text and JSON): v6.16
// and mainline must equal the unversioned host; only v4.19-rc2 (and v4.19 without a map) may fault;
// every speculative index is counted right.
#include <cstddef>
#include <cstdint>
#include <string>
#include <optional>
#include <set>
#include <vector>

#include "common/error.h"
#include "x86/apic_icr.h"
#include "x86/guest_x2apic.h"
#include "x86/kvm_icr.h"
#include "x86/kvm_pv_ipi.h"
#include "x86/kvm_call_tool.h"
#include "x86/kvm_pv_version.h"

namespace {

struct Reader {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t pos = 0;
  std::uint8_t u8() { return pos < size ? data[pos++] : 0; }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(u8()) << (8 * i);
    return v;
  }
};

#define CHECK(c) \
  do {           \
    if (!(c)) __builtin_trap(); \
  } while (0)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ipilab::x86;
  Reader in{data, size};
  const std::uint32_t n = 1 + in.u8() % 96;
  const std::uint8_t flags = in.u8();
  HypercallRegs regs;
  regs.rax = in.u64();
  regs.rbx = in.u64();
  regs.rcx = in.u64();
  regs.rdx = in.u64();
  regs.rsi = in.u64();

  std::vector<X86Vcpu> vcpus(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    vcpus[i].apic_id = i;
    if (flags & 0x20) {
      const std::uint32_t lo = in.u8();
      const std::uint32_t hi = in.u8();
      const std::uint8_t f = in.u8();
      vcpus[i].apic_id = lo | (hi << 8);
      vcpus[i].apic_present = (f & 1) == 0;
      vcpus[i].apic_sw_enabled = (f & 2) == 0;
    }
  }
  std::optional<X86Vm> maybe_vm;
  try {
    maybe_vm.emplace(vcpus, (flags & 0x10) != 0);
  } catch (const ipilab::InputError&) {
    return 0;  // duplicate APIC IDs: the VM description rejects them, nothing to model
  }
  const X86Vm& vm = *maybe_vm;

  // Host side: any registers.
  HypercallCaller caller;
  caller.op_64_bit = (flags & 1) != 0;
  caller.cpl = (flags & 2) ? 3 : 0;
  caller.has_pv_send_ipi = (flags & 4) != 0;
  KvmPvIpiHostState host;
  host.apic_map_present = (flags & 8) == 0;
  const HypercallOutcome r = kvm_emulate_send_ipi_hypercall(vm, host, caller, regs);
  CHECK(r.ret >= -1000 && r.ret <= 128);
  if (!caller.op_64_bit) CHECK(r.rax <= 0xFFFFFFFFull);
  if (r.send_ipi_ran && r.ret >= 0) {
    std::int64_t accepted = 0;
    std::set<std::uint32_t> seen;
    for (const auto& t : r.ipi.targets) {
      CHECK(t.vcpu < vm.nr_vcpus());
      CHECK(vm.apic_id(t.vcpu) == t.apic_id);
      CHECK(vm.vcpu(t.vcpu).apic_present);
      CHECK(t.apic_id <= vm.kvm_max_apic_id());
      CHECK(seen.insert(t.vcpu).second);  // the two halves never overlap
      accepted += t.accepted ? 1 : 0;
    }
    CHECK(accepted == r.ret);
    CHECK(r.ipi.work.set_irq_calls == r.ipi.targets.size());
    CHECK(r.ipi.work.bits_in_range <= 128);
  }
  // Every KVM version of the call (SEND_IPI, SCHED_YIELD or another number, as RAX says).
  for (const auto& info : kvm_pv_versions()) {
    KvmCallHost vh;
    vh.version = info.version;
    vh.apic_map_present = host.apic_map_present;
    vh.vcpu_ready.assign(vm.nr_vcpus(), (flags & 0x40) != 0);
    KvmCallCaller vc;
    vc.op_64_bit = caller.op_64_bit;
    vc.cpl = caller.cpl;
    vc.has_pv_send_ipi = caller.has_pv_send_ipi;
    const KvmCallOutcome o = kvm_emulate_pv_hypercall(vm, vh, vc, regs);
    const KvmPvBehaviour b = kvm_pv_behaviour(info.version);
    if (o.fault) CHECK(!b.bounds_checked || (!b.null_map_checked && !host.apic_map_present));
    if (!caller.op_64_bit) CHECK(o.rax <= 0xFFFFFFFFull);
    std::set<std::uint32_t> seen;
    for (const auto& t : o.targets) {
      CHECK(t.vcpu < vm.nr_vcpus() && vm.apic_id(t.vcpu) == t.apic_id && vm.vcpu(t.vcpu).apic_present);
      CHECK(seen.insert(t.vcpu).second);
    }
    for (const auto& w : o.speculation) {
      std::uint32_t oob = 0;
      for (auto i : w.indices) oob += i > vm.kvm_max_apic_id() ? 1u : 0u;
      CHECK(oob == w.out_of_bounds);
      if (b.clamp != NospecClamp::kNone) CHECK(oob == 0);
    }
    if (b.halves_independent && b.clamp != NospecClamp::kExclusive && (regs.rax & 0xFFFFFFFFull) == regs.rax &&
        regs.rax == kKvmHcSendIpi && (caller.has_pv_send_ipi || b.pv_feature_cpuid_checked)) {
      CHECK(!o.fault);
      CHECK(o.rax == r.rax);
      CHECK(o.targets == r.ipi.targets);
    }
    if (o.sched_yield_ran && o.yield.target_vcpu) CHECK(*o.yield.target_vcpu < vm.nr_vcpus());
  }
  // `ipilab kvm call`'s logic on the same registers (identity or given APIC IDs, present ones).
  {
    ipilab::x86::tool::KvmCallOptions o;
    o.vcpus = n;
    if (flags & 0x20)
      for (const auto& v : vcpus) o.apic_ids.push_back(v.apic_id);
    o.rax = std::to_string(regs.rax);  // decimal digits are valid hex: a different value, fine
    o.rbx = std::to_string(regs.rbx);
    o.rcx = std::to_string(regs.rcx);
    o.rdx = std::to_string(regs.rdx);
    o.rsi = std::to_string(regs.rsi);
    o.mode32 = !caller.op_64_bit;
    o.no_apic_map = !host.apic_map_present;
    const auto& versions = kvm_pv_versions();
    o.kvm = std::string(versions[regs.rdx % versions.size()].name);
    try {
      const auto res = ipilab::x86::tool::run_kvm_call(o);
      CHECK(!res.text.empty());
      CHECK(res.json.contains("ret"));
    } catch (const ipilab::InputError&) {
      // a 20-digit register is more than 64 bits of hex: refused, as it should be
    }
  }
  // The same registers as x2APIC ICR / SELF IPI writes from vCPU 0.
  for (std::uint64_t icr : {regs.rbx, regs.rcx}) {
    const IcrWriteOutcome w = kvm_x2apic_icr_write(vm, 0, icr);
    CHECK(w.inject_gp == ((icr & 0xFFF32000ull) != 0));
    std::set<std::uint32_t> seen;
    std::int64_t acc = 0;
    for (const auto& t : w.targets) {
      CHECK(t.vcpu < vm.nr_vcpus() && vm.vcpu(t.vcpu).apic_present);
      CHECK(seen.insert(t.vcpu).second);
      acc += t.accepted ? 1 : 0;
    }
    CHECK(acc == w.accepted);
    if (decode_x2apic_icr(icr).delivery_mode == DeliveryMode::LowestPriority) CHECK(w.targets.size() <= 1);
  }
  const IcrWriteOutcome self_ipi = kvm_x2apic_self_ipi_write(vm, 0, regs.rdx);
  CHECK(self_ipi.inject_gp == (regs.rdx > 0xFF));
  CHECK(self_ipi.targets.size() <= 1);
  // The ICR word round-trips through the codec whatever it holds.
  CHECK(encode_x2apic_icr(decode_x2apic_icr(regs.rsi)) == regs.rsi);

  // Guest side: a mask from the remaining bytes, sent all-but-self, delivered exactly.
  Cpumask mask(n);
  for (std::uint32_t c = 0; c < n; c += 8) {
    const std::uint8_t b = in.u8();
    for (std::uint32_t k = 0; k < 8 && c + k < n; ++k) {
      if (b & (1u << k)) mask.set(c + k);
    }
  }
  const std::uint32_t self = in.u8() % n;
  const GuestSend s = kvm_guest_send_ipi_mask_allbutself(vm, self, mask, 0xFB);
  KvmPvGuestState guest;
  const PvIpiExecution ex = kvm_pv_execute(vm, KvmPvIpiHostState{}, true, s, guest);
  std::set<std::uint32_t> expect;
  for (auto c : mask.cpus()) {
    const X86Vcpu& v = vm.vcpu(c);
    if (c != self && v.apic_present && v.apic_sw_enabled) expect.insert(c);
  }
  const std::set<std::uint32_t> got(ex.delivered_vcpus.begin(), ex.delivered_vcpus.end());
  CHECK(got.size() == ex.delivered_vcpus.size());
  CHECK(got == expect);
  CHECK(ex.failed_calls == 0);
  // Cluster-mode ICR writes cover the same CPUs (every APIC in the mask, present or not).
  const GuestSend cl = x2apic_send_ipi_mask(vm, X2apicMode::Cluster, self, mask, 0xFB, true);
  std::uint32_t bits = 0;
  for (const auto& w : cl.msr_writes) {
    bits += static_cast<std::uint32_t>(__builtin_popcount(decode_x2apic_icr(w.value).destination & 0xFFFFu));
  }
  CHECK(bits == mask.weight() - (mask.test(self) ? 1u : 0u));
  return 0;
}
