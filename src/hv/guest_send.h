// ipilab/hv/guest_send.h — the Linux guest's Hyper-V IPI send paths (arch/x86/hyperv/hv_apic.c) as a
// state machine: one call per `struct apic` hook, producing the exact hypercalls (control word,
// RDX/R8, input page bytes), the native APIC fallback, and the WorkRecord the simulator prices.
//
// Which code runs is GuestPolicy (guest_policy.h: pre-seed / seed v2 / seed v3 __send_ipi_one; v5.4 /
// Sep-2021 / mainline mask paths); what the guest knows is GuestConfig (guest_config.h). Sources read
// for the order of every check: hv_apic.c of v5.4 (pre-seed), the seed patch v2 and v3 mails (LKML
// <20191025131546.18794-1-vkuznets@redhat.com>, <20191027151938.7296-1-vkuznets@redhat.com>), Wei
// Liu's Sep 2021 patch (dfb5c1e12c28), Vitaly Kuznetsov's Oct 2021 fix, and a current upstream
// hv_apic.c (intel-lab-lkp/linux 4499d3cb0d88); include/asm-generic/mshyperv.h for __cpumask_to_vpset
// and hv_do_rep_hypercall; arch/x86/include/asm/trace/hyperv.h for the tracepoints.
//
// Hooks and their fallbacks (hv_apic_init and the hv_send_ipi* wrappers in hv_apic.c):
//   send_IPI(cpu)                  __send_ipi_one(cpu)             -> orig_apic.send_IPI(cpu)
//   send_IPI_mask(m)               __send_ipi_mask(m, false)       -> orig_apic.send_IPI_mask(m)
//   send_IPI_mask_allbutself(m)    v5.4: copy m to the stack, clear self, __send_ipi_mask(copy);
//                                  later: __send_ipi_mask(m, true) -> orig_apic.send_IPI_mask_allbutself(m)
//   send_IPI_allbutself()          hv_send_ipi_mask_allbutself(cpu_online_mask)
//   send_IPI_all()                 __send_ipi_mask(cpu_online_mask, false) -> orig_apic.send_IPI_all()
//   send_IPI_self()                __send_ipi_one(smp_processor_id())      -> orig_apic.send_IPI_self()
// A hypercall whose status the caller judges a failure also falls back (after the hypercall).
//
// Hypercall encoding (Linux helpers): hv_do_fast_hypercall16(code, in1, in2): RCX = code | fast bit,
// RDX = in1, R8 = in2. hv_do_rep_hypercall(code, rep_count = 0, varhead = nr_bank, input, NULL):
// RCX = code | varhead << 17, RDX = GPA of the sender's per-CPU input page, R8 = 0; it repeats only
// while reps completed < rep count, so exactly one call for IPIs. Input page layout (hv_send_ipi_ex):
// +0 vector (u32), +4 reserved = 0, +8 format, +16 valid_bank_mask, +24 bank_contents[].
//
// Usage (simulator): build once, send many times; a send is deterministic for a given (config,
// policy, request, hypervisor answers), so its WorkRecord can be memoised per (hook, sender, target).
//   LinuxHvGuest guest(GuestConfig::identity(2, 8192), GuestPolicy::pre_seed());
//   Partition host(partition_config_for(guest.config()));
//   GuestHostSend s = run_on_partition(guest, host, {SendHook::kSendIpi, /*sender*/0, 0xFB, /*cpu*/1, {}});
//   s.send.work            -> WorkRecord to price;   s.send.hypercalls / s.send.native -> what went out
//   s.outcomes[i].work     -> host-side HostWork;   s.oracle.missing / .extra -> lost / misdelivered
// Without a host model, pass any HypervisorCall to LinuxHvGuest::send (e.g. one returning 0 = SUCCESS).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hv/guest_config.h"
#include "hv/guest_cpumask.h"
#include "hv/guest_policy.h"
#include "hv/guest_record.h"
#include "hv/hypercall.h"

namespace ipilab::hv {

/// One call of a `struct apic` IPI hook on `sender_cpu` (smp_processor_id()).
struct SendRequest {
  SendHook hook = SendHook::kSendIpi;
  unsigned sender_cpu = 0;
  std::uint32_t vector = 0;       ///< Linux `int vector`; NMI_VECTOR is 0x02
  unsigned target_cpu = 0;        ///< send_IPI only
  std::optional<Cpumask> mask;    ///< send_IPI_mask / send_IPI_mask_allbutself only (NR_CPUS bits)
};

class LinuxHvGuest {
 public:
  /// Throws InputError (GuestConfig::validate).
  LinuxHvGuest(GuestConfig config, GuestPolicy policy);

  const GuestConfig& config() const noexcept { return config_; }
  const GuestPolicy& policy() const noexcept { return policy_; }

  /// Runs one hook. `hv` executes each hypercall and returns RAX. Throws InputError for a request the
  /// kernel could not make: sender not online, target CPU >= nr_cpu_ids, a mask whose NR_CPUS differs
  /// from the config's or with a CPU >= nr_cpu_ids, a missing mask, or a mask given to a non-mask hook.
  SendResult send(const SendRequest& request, const HypervisorCall& hv);

  SendResult send_IPI(unsigned sender, unsigned cpu, std::uint32_t vector, const HypervisorCall& hv);
  SendResult send_IPI_mask(unsigned sender, const Cpumask& mask, std::uint32_t vector, const HypervisorCall& hv);
  SendResult send_IPI_mask_allbutself(unsigned sender, const Cpumask& mask, std::uint32_t vector,
                                      const HypervisorCall& hv);
  SendResult send_IPI_allbutself(unsigned sender, std::uint32_t vector, const HypervisorCall& hv);
  SendResult send_IPI_all(unsigned sender, std::uint32_t vector, const HypervisorCall& hv);
  SendResult send_IPI_self(unsigned sender, std::uint32_t vector, const HypervisorCall& hv);

  /// `cpu`'s per-CPU input page (4 KiB at GuestConfig::input_page_gpa(cpu)), as the last send left it.
  const FlatGuestMemory& input_page(unsigned cpu);

 private:
  struct Ctx;
  bool send_ipi_one(Ctx& c, unsigned cpu, std::uint32_t vector);
  bool send_ipi_mask(Ctx& c, const Cpumask& mask, std::uint32_t vector, bool exclude_self);
  bool send_ipi_mask_ex(Ctx& c, const Cpumask& mask, std::uint32_t vector, bool exclude_self);
  void hv_send_ipi_mask_allbutself(Ctx& c, const Cpumask& mask, std::uint32_t vector);
  std::uint64_t fast_hypercall16(Ctx& c, std::uint16_t code, std::uint64_t in1, std::uint64_t in2);
  std::uint64_t rep_hypercall(Ctx& c, std::uint16_t code, std::uint16_t rep_count, std::uint16_t varhead);
  void trace_one(Ctx& c);
  void trace_mask(Ctx& c, const Cpumask& mask);
  /// How the guest judges a send hypercall's status: the mask paths' rule, or __send_ipi_one's (`one`).
  bool judge_status(Ctx& c, std::uint64_t status, bool one);
  bool hypercall_page_usable() const noexcept;
  void native(Ctx& c, SendHook hook, std::vector<unsigned> cpus, std::optional<std::vector<unsigned>> argument);
  FlatGuestMemory& page_of(unsigned cpu);

  GuestConfig config_;
  GuestPolicy policy_;
  Cpumask present_;
  Cpumask online_;
  std::uint32_t max_vp_index_;  // config_.max_vp_index() (the config does not change)
  std::vector<std::optional<FlatGuestMemory>> pages_;  // by CPU, created on first use
};

}  // namespace ipilab::hv
