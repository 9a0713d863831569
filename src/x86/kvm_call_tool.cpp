// `ipilab kvm call` logic: options -> (VM, host, caller, registers) -> kvm_emulate_pv_hypercall ->
// text / JSON. See kvm_call_tool.h.
#include "x86/kvm_call_tool.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/hex.h"

namespace ipilab::x86::tool {
namespace {

using nlohmann::ordered_json;

std::string hex64(std::uint64_t v) { return fmt::format("{:#018x}", v); }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string_view nr_name(std::uint64_t nr) {
  if (nr == kKvmHcSendIpi) return "KVM_HC_SEND_IPI";
  if (nr == kKvmHcSchedYield) return "KVM_HC_SCHED_YIELD";
  return "other";
}

std::string ret_name(std::int64_t ret) {
  switch (ret) {
    case -kKvmEperm: return "-KVM_EPERM";
    case -kKvmEinval: return "-KVM_EINVAL";
    case -kKvmEopnotsupp: return "-EOPNOTSUPP";
    case -kKvmEnosys: return "-KVM_ENOSYS";
    default: break;
  }
  return ret >= 0 ? fmt::format("{} APIC(s) accepted", ret) : fmt::format("{}", ret);
}

std::string_view mode_name(DeliveryMode m) {
  switch (m) {
    case DeliveryMode::Fixed: return "Fixed";
    case DeliveryMode::LowestPriority: return "LowestPriority";
    case DeliveryMode::Smi: return "SMI";
    case DeliveryMode::RemoteRead: return "RemoteRead";
    case DeliveryMode::Nmi: return "NMI";
    case DeliveryMode::Init: return "INIT";
    case DeliveryMode::StartUp: return "StartUp";
    case DeliveryMode::ExtInt: return "ExtINT";
  }
  return "?";
}

std::string_view fault_kind(KvmHostFault::Kind k) {
  switch (k) {
    case KvmHostFault::Kind::kPhysMapOutOfBounds: return "phys_map_out_of_bounds";
    case KvmHostFault::Kind::kNullPhysMapEntry: return "null_phys_map_entry";
    case KvmHostFault::Kind::kNullApicMap: return "null_apic_map";
  }
  return "?";
}

std::string fault_text(const KvmHostFault& f) {
  switch (f.kind) {
    case KvmHostFault::Kind::kPhysMapOutOfBounds:
      return fmt::format("HOST BUG: reads map->phys_map[{}] outside the array ({} entries, 0..max_apic_id) and "
                         "dereferences what it finds: undefined, typically a host oops (fixed by bdf7ffc89922)",
                         f.index, f.map_entries);
    case KvmHostFault::Kind::kNullPhysMapEntry:
      return fmt::format("HOST BUG: map->phys_map[{}] is NULL (no APIC with that ID) and ->vcpu dereferences it: "
                         "host oops (fixed by bdf7ffc89922)",
                         f.index);
    case KvmHostFault::Kind::kNullApicMap:
      return "HOST BUG: kvm->arch.apic_map is NULL and is dereferenced: host oops (fixed by \"KVM: LAPIC: Fix pv "
             "ipis use-before-initialization\", v4.20)";
  }
  return "?";
}

std::vector<std::uint32_t> parse_vcpu_list(const std::vector<std::uint32_t>& list, std::uint32_t n,
                                           const char* option) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] >= n) throw InputError(option, fmt::format("vCPU {} does not exist ({} vCPUs)", list[i], n));
    for (std::size_t j = 0; j < i; ++j)
      if (list[j] == list[i]) throw InputError(option, fmt::format("vCPU {} is named twice", list[i]));
  }
  return list;
}

X86Vm build_vm(const KvmCallOptions& o) {
  std::vector<X86Vcpu> vcpus;
  if (!o.apic_ids.empty()) {
    for (auto id : o.apic_ids) vcpus.push_back(X86Vcpu{id, true, true});
  } else {
    if (o.vcpus == 0 || o.vcpus > 4096) throw InputError("--vcpus", fmt::format("{} vCPUs: give 1..4096", o.vcpus));
    for (std::uint32_t i = 0; i < o.vcpus; ++i) vcpus.push_back(X86Vcpu{i, true, true});
  }
  const auto n = static_cast<std::uint32_t>(vcpus.size());
  for (auto v : parse_vcpu_list(o.apic_disabled, n, "--apic-disabled")) vcpus[v].apic_sw_enabled = false;
  try {
    return X86Vm(std::move(vcpus));
  } catch (const InputError& e) {
    throw InputError(o.apic_ids.empty() ? "--vcpus" : "--apic-ids", e.reason());
  }
}

// A register's value: hex; an empty value is an error (it would read as 0).
std::uint64_t register_value(const std::string& text, const char* option) {
  if (text.empty()) throw InputError(option, "a value is expected, the value is empty (leave the option out for 0)");
  return parse_hex_u64(text, option);
}

// --call: a name, or a hex hypercall number.
std::uint64_t call_number(const std::string& text) {
  const std::string c = lower(text);
  if (c == "send-ipi") return kKvmHcSendIpi;
  if (c == "sched-yield") return kKvmHcSchedYield;
  std::string_view digits = c;
  if (digits.size() > 2 && digits.substr(0, 2) == "0x") digits.remove_prefix(2);
  if (digits.empty() || digits.find_first_not_of("0123456789abcdef_") != std::string_view::npos)
    throw InputError("--call", fmt::format("'{}' is not a call ipilab knows: give send-ipi (KVM_HC_SEND_IPI, {:#x}), "
                                           "sched-yield (KVM_HC_SCHED_YIELD, {:#x}) or a hex hypercall number",
                                           text, kKvmHcSendIpi, kKvmHcSchedYield));
  return parse_hex_u64(text, "--call");
}

HypercallRegs build_regs(const KvmCallOptions& o) {
  HypercallRegs r;
  if (o.call && o.rax) throw InputError("--call", "give the hypercall number once: --call or --rax");
  if (o.call) {
    if (o.call->empty()) throw InputError("--call", "a value is expected, the value is empty");
    r.rax = call_number(*o.call);
  } else if (o.rax) {
    r.rax = register_value(*o.rax, "--rax");
  } else {
    throw InputError("--call", "give the hypercall: --call send-ipi|sched-yield|HEX, or a raw --rax");
  }
  r.rbx = o.rbx ? register_value(*o.rbx, "--rbx") : 0;
  r.rcx = o.rcx ? register_value(*o.rcx, "--rcx") : 0;
  r.rdx = o.rdx ? register_value(*o.rdx, "--rdx") : 0;
  r.rsi = o.rsi ? register_value(*o.rsi, "--rsi") : 0;
  return r;
}

// The registers left out (0), by name, for the report.
std::vector<std::string> registers_not_given(const KvmCallOptions& o) {
  std::vector<std::string> v;
  const std::pair<const char*, const std::optional<std::string>*> regs[] = {
      {"RBX", &o.rbx}, {"RCX", &o.rcx}, {"RDX", &o.rdx}, {"RSI", &o.rsi}};
  for (const auto& [name, value] : regs)
    if (!*value) v.emplace_back(name);
  return v;
}

// A --rax or --call number of decimal digits only, read as hex, that would name a known call read
// as decimal: the likely slip "--rax 10" for KVM_HC_SEND_IPI (0xa).
std::string decimal_slip(const KvmCallOptions& o, std::uint64_t rax) {
  const std::optional<std::string>& given = o.rax ? o.rax : o.call;
  if (!given || given->empty() || given->find_first_not_of("0123456789") != std::string::npos) return {};
  std::uint64_t dec = 0;
  for (char ch : *given) dec = dec * 10 + static_cast<std::uint64_t>(ch - '0');
  if (dec == rax || (dec != kKvmHcSendIpi && dec != kKvmHcSchedYield)) return {};
  return fmt::format("{} {} is read as hex {:#x}; {} is {:#x} ({} decimal): give {} {:x} or --call {}",
                     o.rax ? "--rax" : "--call", *given, rax, nr_name(dec), dec, dec, o.rax ? "--rax" : "--call", dec,
                     dec == kKvmHcSendIpi ? "send-ipi" : "sched-yield");
}

// The registers left at 0 and the --rax 10 note: into `j` (registers_not_given, note), and as the
// text lines under the registers.
std::string registers_given_report(const KvmCallOptions& o, std::uint64_t rax, ordered_json& j) {
  const std::vector<std::string> defaulted = registers_not_given(o);
  std::vector<std::string> names;
  for (const auto& r : defaulted) names.push_back(lower(r));
  j["registers_not_given"] = names;
  const std::string slip = decimal_slip(o, rax);
  j["note"] = slip.empty() ? ordered_json(nullptr) : ordered_json(slip);
  std::string t;
  if (!defaulted.empty()) t += fmt::format("           not given, so 0: {}\n", fmt::join(defaulted, ", "));
  if (!slip.empty()) t += fmt::format("note       {}\n", slip);
  return t;
}

ordered_json speculation_json(const std::vector<KvmSpeculativeWindow>& ws, std::uint32_t entries) {
  ordered_json a = ordered_json::array();
  for (const auto& w : ws)
    a.push_back({{"half", w.half == 0 ? "low" : "high"},
                 {"min", w.min},
                 {"effective_min", w.effective_min},
                 {"phys_map_indices", w.indices},
                 {"out_of_bounds", w.out_of_bounds},
                 {"map_entries", entries}});
  return a;
}

std::string speculation_text(const KvmSpeculativeWindow& w, std::uint32_t entries, NospecClamp clamp) {
  std::vector<std::string> shown;
  for (std::size_t k = 0; k < w.indices.size(); ++k) {
    if (w.indices.size() > 4 && k == 2) {
      shown.emplace_back("..");
      k = w.indices.size() - 2;
    }
    shown.push_back(fmt::format("{}", w.indices[k]));
  }
  const std::string range = fmt::format("phys_map[{}] ({} load{})", fmt::join(shown, ", "), w.indices.size(),
                                        w.indices.size() == 1 ? "" : "s");
  const std::string how =
      clamp == NospecClamp::kNone
          ? "min not clamped (before c87bd4dd43a6)"
          : fmt::format("min {:#x} clamped to {} by array_index_nospec", w.min, w.effective_min);
  return fmt::format("{} half skipped (min {:#x} > max_apic_id); a mispredicted test loads {}, {} of them past the "
                     "{}-entry map; {}",
                     w.half == 0 ? "low" : "high", w.min, range, w.out_of_bounds, entries, how);
}

// One call and its setting, for the two reports.
struct CallRun {
  const KvmCallOptions& o;
  const X86Vm& vm;
  KvmPvVersion version;
  KvmPvBehaviour behaviour;
  KvmCallHost host;
  KvmCallCaller caller;
  HypercallRegs regs;
  KvmCallOutcome out;
  std::uint32_t entries;  // phys_map entries: max_apic_id + 1
};

ordered_json call_json(const CallRun& cr) {
  const auto& [o, vm, version, behaviour, host, caller, regs, out, entries] = cr;
  ordered_json j;
  std::vector<std::uint32_t> ids;
  for (const auto& v : vm.vcpus()) ids.push_back(v.apic_id);
  j["vm"] = {{"apic_ids", ids},
             {"apic_disabled_vcpus", o.apic_disabled},
             {"max_apic_id", vm.kvm_max_apic_id()},
             {"apic_map_present", host.apic_map_present},
             {"ready_vcpus", o.ready}};
  j["kvm_version"] = std::string(kvm_pv_version_name(version));
  j["caller"] = {{"op_64_bit", caller.op_64_bit}, {"cpl", caller.cpl},
                 {"pv_send_ipi", caller.has_pv_send_ipi}, {"pv_sched_yield", caller.has_pv_sched_yield}};
  j["registers"] = {{"rax", regs.rax}, {"rbx", regs.rbx}, {"rcx", regs.rcx}, {"rdx", regs.rdx}, {"rsi", regs.rsi}};
  registers_given_report(o, regs.rax, j);
  j["nr"] = out.nr;
  j["nr_name"] = std::string(nr_name(out.nr));
  j["modelled"] = out.modelled;
  j["host_fault"] = out.fault ? ordered_json{{"kind", std::string(fault_kind(out.fault->kind))},
                                             {"phys_map_index", out.fault->index},
                                             {"map_entries", out.fault->map_entries}}
                              : ordered_json(nullptr);
  const bool known = !out.fault && out.modelled;
  j["ret"] = known ? ordered_json(out.ret) : ordered_json(nullptr);
  j["rax_out"] = known ? ordered_json(out.rax) : ordered_json(nullptr);
  j["rejected_by"] = out.rejected_by.empty() ? ordered_json(nullptr) : ordered_json(std::string(out.rejected_by));
  ordered_json targets = ordered_json::array();
  for (const auto& t : out.targets)
    targets.push_back({{"vcpu", t.vcpu}, {"apic_id", t.apic_id}, {"accepted", t.accepted}});
  j["targets"] = targets;
  j["delivered_vcpus"] = out.delivered_vcpus();
  j["high_half_skipped"] = out.high_half_skipped;
  ordered_json clamped = ordered_json::array();
  for (const auto& c : out.clamped)
    clamped.push_back({{"half", c.half == 0 ? "low" : "high"}, {"min", c.min}, {"effective_min", c.effective_min}});
  j["clamped"] = clamped;
  j["speculation"] = speculation_json(out.speculation, entries);
  if (out.sched_yield_ran) {
    const auto& y = out.yield;
    j["sched_yield"] = {{"dest_id", y.dest_id},
                        {"phys_map_index", y.looked_up_apic_id ? ordered_json(*y.looked_up_apic_id) : ordered_json()},
                        {"target_vcpu", y.target_vcpu ? ordered_json(*y.target_vcpu) : ordered_json()},
                        {"yield_attempted", y.yield_attempted}};
  } else {
    j["sched_yield"] = nullptr;
  }
  j["work"] = {{"bits_in_range", out.work.bits_in_range},
               {"set_bits_examined", out.work.set_bits_examined},
               {"apic_set_irq_calls", out.work.set_irq_calls}};
  return j;
}

// KVM_HC_SEND_IPI: who got the interrupt, what was clamped, skipped or loaded speculatively.
std::string send_ipi_text(const CallRun& cr) {
  const auto& [o, vm, version, behaviour, host, caller, regs, out, entries] = cr;
  std::string t;
  std::vector<std::string> ds, dropped;
  for (const auto& tg : out.targets)
    (tg.accepted ? ds : dropped).push_back(fmt::format("vCPU {} (APIC {})", tg.vcpu, tg.apic_id));
  t += fmt::format("delivered  {}{}\n", ds.empty() ? "nothing" : fmt::format("{}", fmt::join(ds, ", ")),
                   out.fault ? " (before the fault)" : "");
  if (!dropped.empty()) t += fmt::format("dropped    not accepted by {}\n", fmt::join(dropped, ", "));
  for (const auto& c : out.clamped)
    t += fmt::format("clamped    {} half: min {:#x} (== max_apic_id) -> {} by array_index_nospec(min, max_apic_id), an "
                     "exclusive bound for an inclusive maximum: the bits now name APIC IDs {}+i\n",
                     c.half == 0 ? "low" : "high", c.min, c.effective_min, c.effective_min);
  if (out.high_half_skipped)
    t += "skipped    high half: the low half's min > max_apic_id returned before it (KVM before v5.5)\n";
  for (const auto& w : out.speculation) t += fmt::format("speculate  {}\n", speculation_text(w, cr.entries, cr.behaviour.clamp));
  t += fmt::format("host work  {} bitmap bits in range, {} set bits examined, {} kvm_apic_set_irq calls\n",
                   out.work.bits_in_range, out.work.set_bits_examined, out.work.set_irq_calls);
  return t;
}

// KVM_HC_SCHED_YIELD: the phys_map lookup and the yield.
std::string sched_yield_text(const CallRun& cr) {
  const auto& [o, vm, version, behaviour, host, caller, regs, out, entries] = cr;
  std::string t;
  const auto& y = out.yield;
  std::string s;
  if (!y.looked_up_apic_id)
    s = fmt::format("dest_id {:#x} > max_apic_id {} (or no map): no target", y.dest_id, vm.kvm_max_apic_id());
  else if (!y.target_vcpu)
    s = fmt::format("phys_map[{}] is empty: no target", *y.looked_up_apic_id);
  else
    s = fmt::format("phys_map[{}] -> vCPU {}{}", *y.looked_up_apic_id, *y.target_vcpu,
                    y.yield_attempted ? ", ready: kvm_vcpu_yield_to(vCPU)" : ", not ready (see --ready): no yield");
  if (y.looked_up_apic_id && *y.looked_up_apic_id != y.dest_id)
    s += fmt::format(" [dest_id {:#x} clamped to {} by array_index_nospec]", y.dest_id, *y.looked_up_apic_id);
  t += fmt::format("yield      {}\n", s);
  t += "note       host scheduler checks (single_task_running(), yield to self) are not modelled\n";
  return t;
}

std::string call_text(const CallRun& cr) {
  const auto& [o, vm, version, behaviour, host, caller, regs, out, entries] = cr;
  std::string t;
  std::vector<std::string> map;
  for (std::uint32_t v = 0; v < vm.nr_vcpus(); ++v) map.push_back(fmt::format("{}->{}", v, vm.apic_id(v)));
  t += fmt::format("vm         {} vCPUs, KVM {}; vCPU->APIC ID {}; max_apic_id {}{}\n", vm.nr_vcpus(),
                   kvm_pv_version_name(version), fmt::join(map, " "), vm.kvm_max_apic_id(),
                   host.apic_map_present ? "" : "; no APIC map");
  t += fmt::format("registers  RAX {} ({})  RBX {}  RCX {}\n           RDX {}  RSI {}  ({}, CPL {})\n", hex64(regs.rax),
                   nr_name(out.nr), hex64(regs.rbx), hex64(regs.rcx), hex64(regs.rdx), hex64(regs.rsi),
                   caller.op_64_bit ? "64-bit caller" : "32-bit caller: registers truncated to 32 bits", caller.cpl);
  ordered_json given;  // registers_given_report fills the JSON's fields too; only its lines are kept here
  t += registers_given_report(o, regs.rax, given);
  if (out.send_ipi_ran) {
    const Icr irq = decode_x2apic_icr(out.nr == kKvmHcSendIpi ? (caller.op_64_bit ? regs.rsi : regs.rsi & 0xFFFFFFFF)
                                                              : 0);
    t += fmt::format("input      bitmap low {:#x} = APIC IDs min+i, high {:#x} = min+{}+i, min {:#x}; ICR: vector "
                     "{:#x}, {}, {}\n",
                     caller.op_64_bit ? regs.rbx : regs.rbx & 0xFFFFFFFF,
                     caller.op_64_bit ? regs.rcx : regs.rcx & 0xFFFFFFFF, caller.op_64_bit ? 64 : 32,
                     static_cast<std::uint32_t>(regs.rdx), irq.vector, mode_name(irq.delivery_mode),
                     irq.trigger == TriggerMode::Level ? "level" : "edge");
  }
  if (out.fault) {
    t += fmt::format("fault      {}\n", fault_text(*out.fault));
    t += "ret        undefined (the host faulted before returning)\n";
  } else if (!out.modelled) {
    t += "ret        not modelled\n";
  } else {
    t += fmt::format("ret        {} ({}), RAX {}\n", out.ret,
                     out.sched_yield_ran ? std::string("KVM_HC_SCHED_YIELD returns 0") : ret_name(out.ret),
                     hex64(out.rax));
  }
  if (!out.rejected_by.empty()) t += fmt::format("rejected   {}\n", out.rejected_by);
  if (out.send_ipi_ran) t += send_ipi_text(cr);
  if (out.sched_yield_ran) t += sched_yield_text(cr);
  return t;
}

}  // namespace

KvmCallResult run_kvm_call(const KvmCallOptions& o) {
  const auto version = kvm_pv_version_from_name(o.kvm);
  if (!version) throw InputError("--kvm", fmt::format("unknown KVM version '{}' (see --kvm list)", o.kvm));
  const KvmPvBehaviour b = kvm_pv_behaviour(*version);
  const X86Vm vm = build_vm(o);
  const HypercallRegs regs = build_regs(o);
  if (o.cpl > 3) throw InputError("--cpl", fmt::format("{}: give 0..3", o.cpl));
  if ((o.no_pv_send_ipi || o.no_pv_sched_yield) && !b.pv_feature_cpuid_checked)
    throw InputError(o.no_pv_send_ipi ? "--no-pv-send-ipi" : "--no-pv-sched-yield",
                     fmt::format("KVM {} does not check the guest's PV feature CPUID (KVM_CAP_ENFORCE_PV_FEATURE_CPUID "
                                 "came with v5.10): the call runs whatever the CPUID says",
                                 kvm_pv_version_name(*version)));
  KvmCallHost host;
  host.version = *version;
  host.apic_map_present = !o.no_apic_map;
  host.vcpu_ready.assign(vm.nr_vcpus(), false);
  for (auto v : parse_vcpu_list(o.ready, vm.nr_vcpus(), "--ready")) host.vcpu_ready[v] = true;
  KvmCallCaller caller;
  caller.op_64_bit = !o.mode32;
  caller.cpl = o.cpl;
  caller.has_pv_send_ipi = !o.no_pv_send_ipi;
  caller.has_pv_sched_yield = !o.no_pv_sched_yield;

  const KvmCallOutcome out = kvm_emulate_pv_hypercall(vm, host, caller, regs);
  const std::uint32_t entries = vm.kvm_max_apic_id() + 1;

  const CallRun c{o, vm, *version, b, host, caller, regs, out, entries};
  return KvmCallResult{call_json(c), call_text(c)};
}

std::string kvm_pv_list_text() {
  std::string t = "KVM versions of KVM_HC_SEND_IPI / KVM_HC_SCHED_YIELD (arch/x86/kvm/lapic.c, x86.c), oldest first:\n";
  for (const auto& v : kvm_pv_versions()) {
    t += fmt::format("  {:<10} {} ({})\n", v.name, v.releases, v.commits);
    t += fmt::format("             {}\n", v.changes);
  }
  t += "Alias: v6.17 = mainline. Stable trees (5.4.y .. 6.16.y) took c87bd4dd43a6 in Sep 2025: pick mainline for them.\n";
  return t;
}

std::string kvm_call_help() {
  return R"(Run one KVM paravirtual hypercall against a modelled VM and show what the host does with it.

The host follows KVM (arch/x86/x86.c ____kvm_emulate_hypercall, lapic.c kvm_pv_send_ipi /
__pv_send_ipi, x86.c kvm_sched_yield) as of --kvm VERSION (default mainline; --kvm list names the
versions and the fixes between them). KVM_HC_SEND_IPI (RAX = 10 decimal = 0xa): RBX and RCX are
the two 64-bit halves of the bitmap (bit i = APIC ID min+i, and min+64+i for RCX), RDX = min, RSI =
the ICR low word (vector | delivery mode). KVM_HC_SCHED_YIELD (RAX = 11 = 0xb): RBX = the APIC ID
to yield to.
It prints the return value (RAX), who received the IPI, host memory-safety bugs of old versions
(the model stops there), and the phys_map loads a mispredicted bounds test allows (Spectre v1).
The exit status is 0 whatever RAX is (the call ran); 2 for a bad option.

Numbers: --vcpus, --apic-ids, --apic-disabled, --ready, --cpl are decimal; --call CODE, --rax ..
--rsi are hex ("ff" == "0xff"), so --rax 10 is 0x10 (the report says so): KVM_HC_SEND_IPI is
--rax a or --call send-ipi. A register left out is 0 (the report names those); an empty value is
an error.

Examples:
  # bdf7ffc89922's reproducer (RBX = RDX = 0xFFFFFFFF, min = -1 as an int): phys_map[-1]
  ipilab kvm call --kvm v4.19-rc2 --call send-ipi --rbx ffffffff --rdx ffffffff
      -> fault: HOST BUG: reads map->phys_map[-1] outside the array
  ipilab kvm call --kvm v4.19 --call send-ipi --rbx ffffffff --rdx ffffffff
      -> ret 0, delivered nothing
  # the inclusive clamp of c87bd4dd43a6: the highest APIC ID (300) as min
  ipilab kvm call --apic-ids 0,1,2,300 --kvm nospec-v1 --call send-ipi --rbx 1 --rdx 12c --rsi fb
      -> delivered vCPU 0 (APIC 0)       (min 300 clamped to 0)
  ipilab kvm call --apic-ids 0,1,2,300 --kvm mainline --call send-ipi --rbx 1 --rdx 12c --rsi fb
      -> delivered vCPU 3 (APIC 300)
  # the same clamp on a directed yield to APIC ID 300
  ipilab kvm call --apic-ids 0,1,2,300 --kvm nospec-v1 --call sched-yield --rbx 12c --ready 0,3
  # min beyond the map: what a mispredicted bounds test may load, before and after c87bd4dd43a6
  ipilab kvm call --kvm v6.16 --call send-ipi --rbx 3 --rdx 1000 --rsi fb
  ipilab kvm call --kvm mainline --call send-ipi --rbx 3 --rdx 1000 --rsi fb
  # min = 0xFFFFFFC0: the high half wraps to APIC IDs 0..63 from v5.5 on, skipped before
  ipilab kvm call --kvm v5.4 --call send-ipi --rcx 2 --rdx ffffffc0 --rsi fb)";
}

}  // namespace ipilab::x86::tool
