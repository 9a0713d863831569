// `ipilab hv send` logic: options -> SendCase -> run_send_case -> text / JSON (see send_tool.h).
#include "hv/send_tool.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/enum_names.h"
#include "common/hex.h"
#include "common/le.h"
#include "hv/cpulist.h"

namespace ipilab::hv::tool {
namespace {

using nlohmann::ordered_json;

std::string hex(std::uint64_t v) { return fmt::format("{:#x}", v); }
std::string hex16(std::uint64_t v) { return fmt::format("{:#018x}", v); }

std::string list_or_none(const std::vector<unsigned>& cpus) {
  return cpus.empty() ? std::string("none") : format_cpulist(cpus);
}
std::string vps_or_none(std::vector<std::uint32_t> vps) {
  if (vps.empty()) return "none";
  return fmt::format("{}", fmt::join(vps, ","));
}
std::vector<std::uint32_t> bits_of(std::uint64_t word, std::uint32_t base) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t b = 0; b < 64; ++b)
    if ((word >> b) & 1) v.push_back(base + b);
  return v;
}

std::vector<std::uint64_t> qwords_of(const std::vector<std::uint8_t>& bytes) {
  std::vector<std::uint64_t> q(bytes.size() / 8);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = le::get_u64(bytes.data() + 8 * i);
  return q;
}

/// Maps InputError places of run_send_case (field names) onto the option that set the field.
std::string option_of(const std::string& place) {
  if (place == "cpu_vp") return "--cpu-vp";
  if (place.rfind("cpu_vp[", 0) == 0) {  // cpu_vp[N] -> the N+1-th item of --cpu-vp
    const unsigned cpu = static_cast<unsigned>(std::stoul(place.substr(7)));
    return fmt::format("--cpu-vp item {} (CPU {})", cpu + 1, cpu);
  }
  if (place == "present") return "--present";
  if (place == "online") return "--online";
  if (place == "self") return "--self";
  if (place == "target_cpu") return "--send-ipi";
  if (place == "mask") return "--send-ipi-mask";
  if (place == "max_vp_index") return "--max-vp-index";
  if (place == "nr_cpus") return "--nr-cpus";
  if (place == "lapic_in_kernel") return "--no-lapic";
  return place;
}

constexpr EnumName<SendHook> kHvEntries[] = {
    {SendHook::kSendIpi, "hv_send_ipi"},
    {SendHook::kSendIpiMask, "hv_send_ipi_mask"},
    {SendHook::kSendIpiMaskAllButSelf, "hv_send_ipi_mask_allbutself"},
    {SendHook::kSendIpiAllButSelf, "hv_send_ipi_allbutself"},
    {SendHook::kSendIpiAll, "hv_send_ipi_all"},
    {SendHook::kSendIpiSelf, "hv_send_ipi_self"},
};

std::string_view hv_entry(SendHook h) { return name_of(kHvEntries, h); }
std::string call_text(const SendCase& c) {
  const std::string v = fmt::format("vector {:#x}", c.vector);
  switch (c.hook) {
    case SendHook::kSendIpi: return fmt::format("send_IPI(cpu {}, {})", c.target_cpu, v);
    case SendHook::kSendIpiMask: return fmt::format("send_IPI_mask(mask {{{}}}, {})", format_cpulist(c.mask), v);
    case SendHook::kSendIpiMaskAllButSelf:
      return fmt::format("send_IPI_mask_allbutself(mask {{{}}}, {})", format_cpulist(c.mask), v);
    case SendHook::kSendIpiAllButSelf: return fmt::format("send_IPI_allbutself({})", v);
    case SendHook::kSendIpiAll: return fmt::format("send_IPI_all({})", v);
    case SendHook::kSendIpiSelf: return fmt::format("send_IPI_self({})", v);
  }
  return "?";
}

std::string native_text(const NativeSend& n) {
  const std::string v = fmt::format("vector {:#x}", n.vector);
  if (!n.argument) return fmt::format("{}({})", hook_name(n.hook), v);
  if (n.hook == SendHook::kSendIpi) return fmt::format("{}(cpu {}, {})", hook_name(n.hook), n.argument->at(0), v);
  return fmt::format("{}(mask {{{}}}, {})", hook_name(n.hook), format_cpulist(*n.argument), v);
}

/// The QWORDs of a slow call's input, each with its TLFS meaning (hv_send_ipi / hv_send_ipi_ex).
std::string input_qwords_text(std::uint16_t code, const std::vector<std::uint64_t>& q, const std::string& indent) {
  std::string t;
  std::uint64_t vbm = 0;
  std::vector<std::uint32_t> banks;
  for (std::size_t i = 0; i < q.size(); ++i) {
    std::string what;
    if (i == 0) {
      what = fmt::format("vector {:#x}, reserved (TargetVtl + padding) {:#x}", q[0] & 0xFFFFFFFFu, q[0] >> 32);
    } else if (code == HVCALL_SEND_IPI && i == 1) {
      what = fmt::format("processor_mask: VPs {}", vps_or_none(bits_of(q[1], 0)));
    } else if (code == HVCALL_SEND_IPI_EX && i == 1) {
      what = fmt::format("vp_set.format {}", q[1] == HV_GENERIC_SET_ALL         ? "1 HV_GENERIC_SET_ALL"
                                             : q[1] == HV_GENERIC_SET_SPARSE_4K ? "0 HV_GENERIC_SET_SPARSE_4K"
                                                                                : "other (KVM: sparse)");
    } else if (code == HVCALL_SEND_IPI_EX && i == 2) {
      vbm = q[2];
      banks = bits_of(vbm, 0);
      what = fmt::format("vp_set.valid_bank_mask: banks {}", vps_or_none(banks));
    } else if (code == HVCALL_SEND_IPI_EX) {
      const std::size_t k = i - 3;  // compact: element k is the k-th valid bank
      if (k < banks.size())
        what = fmt::format("bank_contents[{}] = bank {}: VPs {}", k, banks[k], vps_or_none(bits_of(q[i], 64 * banks[k])));
      else
        what = fmt::format("bank_contents[{}]: beyond the banks valid_bank_mask names", k);
    }
    t += fmt::format("{}[{}] {}  {}\n", indent, i, hex16(q[i]), what);
  }
  return t;
}

std::string host_text(const HypercallOutcome& o, const SendCaseRun& run, KvmVersion kvm) {
  std::string t = fmt::format("KVM {}: ", kvm_version_name(kvm));
  if (o.inject_ud) {
    t += "#UD injected (no RAX)";
  } else {
    t += fmt::format("{} ({:#06x}), RAX {}", status_name(o.status), o.status_code(), hex(o.rax));
  }
  if (!o.rejected_by.empty()) t += fmt::format("; rejected: {}", o.rejected_by);
  if (!o.delivered.empty()) {
    std::vector<std::string> ds;
    for (const auto& d : o.delivered)
      ds.push_back(fmt::format("VP {} (CPU {})", d.vp_index, run.host_map.cpu_of_vcpu.at(d.vcpu)));
    t += fmt::format("; vector {:#x} to {}", o.delivered.front().vector, fmt::join(ds, ", "));
  } else if (o.success()) {
    t += "; delivered to nobody";
  }
  if (!o.dropped_vcpus.empty()) t += fmt::format("; dropped (APIC disabled): vCPU {}", fmt::join(o.dropped_vcpus, ","));
  return t;
}

}  // namespace

std::string wrap(std::string_view text, std::size_t indent, std::size_t width) {
  std::string out, line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
    pos = end + 1;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

SendCase build_send_case(const SendOptions& o) {
  SendCase c;
  const auto lv = linux_version_from_name(o.linux_version);
  if (o.linux_version.empty()) throw InputError("--linux", "give the Linux version (see --linux list)");
  if (!lv) throw InputError("--linux", fmt::format("unknown Linux version '{}' (see --linux list)", o.linux_version));
  c.linux_version = *lv;
  const auto kv = kvm_version_from_name(o.kvm);
  if (!kv) throw InputError("--kvm", fmt::format("unknown KVM version '{}' (see ipilab hv call --kvm list)", o.kvm));
  c.kvm_version = *kv;
  if (!o.cpu_vp) throw InputError("--cpu-vp", "give the VP index of CPU 0, 1, ... (e.g. --cpu-vp 0,1,70,inval)");
  c.cpu_vp = parse_vp_list(*o.cpu_vp, "--cpu-vp");
  const auto n = static_cast<unsigned>(c.cpu_vp.size());
  if (o.present) c.present = parse_cpulist(*o.present, n, "--present");
  if (o.online) c.online = parse_cpulist(*o.online, n, "--online");
  c.nr_cpus = o.nr_cpus;
  c.max_vp_index = o.max_vp_index;
  c.cluster_ipi = !o.no_cluster_ipi;
  c.lapic_in_kernel = !o.no_lapic;
  c.ex_processor_masks = !o.no_ex_masks;
  c.hypercall_page = !o.no_hypercall_page;
  if (!o.self) throw InputError("--self", "give the sending CPU (smp_processor_id())");
  c.self = *o.self;

  int hooks = 0;
  if (o.send_ipi) {
    ++hooks;
    c.hook = SendHook::kSendIpi;
    c.target_cpu = *o.send_ipi;
  }
  if (o.send_ipi_mask) {
    ++hooks;
    c.hook = SendHook::kSendIpiMask;
    c.mask = parse_cpulist(*o.send_ipi_mask, n, "--send-ipi-mask");
  }
  if (o.send_ipi_mask_allbutself) {
    ++hooks;
    c.hook = SendHook::kSendIpiMaskAllButSelf;
    c.mask = parse_cpulist(*o.send_ipi_mask_allbutself, n, "--send-ipi-mask-allbutself");
  }
  if (o.send_ipi_allbutself) ++hooks, c.hook = SendHook::kSendIpiAllButSelf;
  if (o.send_ipi_all) ++hooks, c.hook = SendHook::kSendIpiAll;
  if (o.send_ipi_self) ++hooks, c.hook = SendHook::kSendIpiSelf;
  if (hooks != 1)
    throw InputError("--send-ipi", fmt::format("give exactly one of --send-ipi CPU, --send-ipi-mask CPUS, "
                                               "--send-ipi-mask-allbutself CPUS, --send-ipi-allbutself, "
                                               "--send-ipi-all, --send-ipi-self ({} given)",
                                               hooks));

  if (!o.vector) throw InputError("--vector", "give the vector in hex (e.g. fb for CALL_FUNCTION_SINGLE_VECTOR)");
  const std::uint64_t v = parse_hex_u64(*o.vector, "--vector");
  if (v > 0xFFFFFFFFu)
    throw InputError("--vector", fmt::format("{:#x} does not fit Linux's 32-bit int vector", v));
  c.vector = static_cast<std::uint32_t>(v);
  if (o.hypercall_status) c.hypercall_status = parse_hex_u64(*o.hypercall_status, "--hypercall-status");
  return c;
}

ordered_json send_json(const SendCaseRun& run) {
  ordered_json j;
  ordered_json calls = ordered_json::array();
  for (const auto& h : run.send.hypercalls) {
    const bool fast = (h.regs.rcx & HV_HYPERCALL_FAST_BIT) != 0;
    ordered_json x;
    x["control"] = hex(h.regs.rcx);
    x["fast"] = fast;
    if (fast) {
      x["rdx"] = hex(h.regs.rdx);
      x["r8"] = hex(h.regs.r8);
    } else {
      ordered_json q = ordered_json::array();
      for (const auto w : qwords_of(h.input)) q.push_back(hex(w));
      x["input_qwords"] = q;
    }
    calls.push_back(x);
  }
  j["hypercalls"] = calls;
  if (run.send.native) {
    const NativeSend& n = *run.send.native;
    j["fallback"] = {{"function", std::string(hook_name(n.hook))},
                     {"cpus", n.argument ? ordered_json(*n.argument) : ordered_json(nullptr)},
                     {"vector", n.vector}};
  } else {
    j["fallback"] = nullptr;
  }
  j["returned"] = run.send.hv_returned ? ordered_json(*run.send.hv_returned) : ordered_json(nullptr);

  ordered_json oj;
  oj["ran"] = run.oracle.has_value();
  oj["reason"] = run.oracle ? ordered_json(nullptr) : ordered_json(run.oracle_reason);
  oj["host"] = std::string("kvm ") + std::string(kvm_version_name(run.host_map.config.kvm_version));
  std::vector<std::uint32_t> intended_vps;
  for (unsigned cpu : run.send.intended_cpus)
    if (cpu < run.guest.hv_vp_index.size() && run.guest.hv_vp_index[cpu] != VP_INVAL)
      intended_vps.push_back(run.guest.hv_vp_index[cpu]);
  std::sort(intended_vps.begin(), intended_vps.end());
  intended_vps.erase(std::unique(intended_vps.begin(), intended_vps.end()), intended_vps.end());
  oj["intended"] = run.send.intended_cpus;
  oj["intended_vps"] = intended_vps;
  ordered_json per = ordered_json::array();
  std::vector<std::uint32_t> delivered_vps;
  for (std::size_t i = 0; i < run.send.hypercalls.size(); ++i) {
    const auto& h = run.send.hypercalls[i];
    ordered_json x;
    if (i < run.host.size() && run.host[i]) {
      const HypercallOutcome& o = *run.host[i];
      x["status"] = o.inject_ud ? std::string("#UD") : status_name(o.status);
      x["host_rax"] = o.inject_ud ? ordered_json(nullptr) : ordered_json(hex(o.rax));
      x["rejected_by"] = o.rejected_by.empty() ? ordered_json(nullptr) : ordered_json(std::string(o.rejected_by));
      std::vector<std::uint32_t> vps;
      for (const auto& d : o.delivered) vps.push_back(d.vp_index);
      x["delivered_vps"] = vps;
      delivered_vps.insert(delivered_vps.end(), vps.begin(), vps.end());
    } else {
      x["status"] = nullptr;
      x["host_rax"] = nullptr;
      x["rejected_by"] = nullptr;
      x["delivered_vps"] = nullptr;
    }
    x["guest_rax"] = hex(h.result);
    x["judged_success"] = h.judged_success;
    per.push_back(x);
  }
  oj["hypercalls"] = per;
  oj["delivered_vps"] = delivered_vps;
  oj["native_cpus"] = run.send.native ? ordered_json(run.send.native->cpus) : ordered_json::array();
  if (run.oracle) {
    const OracleReport& r = *run.oracle;
    oj["delivered"] = r.delivered;
    oj["lost"] = r.missing;
    oj["misdelivered"] = r.extra;
    oj["duplicated"] = r.duplicated;
    oj["unmapped_vps"] = r.unmapped_vps;
    oj["ok"] = r.ok();
  } else {
    for (const char* k : {"delivered", "lost", "misdelivered", "duplicated", "unmapped_vps", "ok"}) oj[k] = nullptr;
  }
  oj["notes"] = run.notes;
  j["oracle"] = oj;
  return j;
}

std::string send_text(const SendCase& c, const SendCaseRun& run) {
  const GuestConfig& g = run.guest;
  const LinuxVersionInfo& lv = linux_version_info(c.linux_version);
  std::string t;
  t += fmt::format("linux      {}: {}\n", lv.name, lv.commits);
  std::vector<std::string> map;
  for (unsigned cpu = 0; cpu < g.hv_vp_index.size(); ++cpu)
    map.push_back(fmt::format("{}:{}", cpu, g.hv_vp_index[cpu] == VP_INVAL ? std::string("inval")
                                                                            : std::to_string(g.hv_vp_index[cpu])));
  t += fmt::format("guest      {} CPUs (NR_CPUS {}), present {}, online {}, hv_max_vp_index {}\n", g.nr_cpu_ids,
                   g.nr_cpus, list_or_none(g.present), list_or_none(g.online), g.max_vp_index());
  t += fmt::format("           hv_vp_index (CPU:VP) {}\n", fmt::join(map, " "));
  std::vector<std::string> feats;
  if (!g.cluster_ipi_recommended) feats.push_back("no HV_X64_CLUSTER_IPI_RECOMMENDED (no hooks)");
  if (!g.ex_processor_masks_recommended) feats.push_back("no HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED");
  if (!g.hypercall_page) feats.push_back("no hypercall page");
  if (!feats.empty()) t += fmt::format("features   {}\n", fmt::join(feats, "; "));
  if (g.cluster_ipi_recommended)
    t += fmt::format("call       {} on CPU {} -> {} -> {}\n", call_text(c), c.self, hv_entry(c.hook),
                     run.send.hv_function.empty() ? std::string_view("?") : run.send.hv_function);
  else
    t += fmt::format("call       {} on CPU {} -> the native APIC callback (hv_apic_init hooked nothing)\n",
                     call_text(c), c.self);

  for (std::size_t i = 0; i < run.send.hypercalls.size(); ++i) {
    const IssuedHypercall& h = run.send.hypercalls[i];
    const HypercallControl hc = decode_control(h.regs.rcx);
    const std::string in = "             ";
    t += fmt::format("hypercall  #{} {} ({:#06x}), {}\n", i + 1, call_code_name(hc.call_code), hc.call_code,
                     hc.fast ? "fast (input in RDX, R8)" : "memory input (hv_do_rep_hypercall)");
    t += fmt::format("{}RCX {}: {}, varhead {}, rep count {}, rep start {}\n", in, hex(h.regs.rcx),
                     hc.fast ? "fast" : "slow", hc.var_header_qwords, hc.rep_count, hc.rep_start);
    if (hc.fast) {
      t += fmt::format("{}RDX {}: vector {:#x}, TargetVtl/reserved (RDX[63:32]) {:#x}\n", in, hex(h.regs.rdx),
                       h.regs.rdx & 0xFFFFFFFFu, h.regs.rdx >> 32);
      t += fmt::format("{}R8  {}: processor_mask, VPs {}\n", in, hex(h.regs.r8), vps_or_none(bits_of(h.regs.r8, 0)));
    } else {
      t += fmt::format("{}RDX {} (input GPA: CPU {}'s per-CPU input page), R8 {} (no output)\n", in, hex(h.regs.rdx),
                       c.self, hex(h.regs.r8));
      const auto q = qwords_of(h.input);
      t += fmt::format("{}input, {} QWORDs (header + varhead):\n", in, q.size());
      t += input_qwords_text(hc.call_code, q, in + "  ");
    }
    if (i < run.host.size() && run.host[i])
      t += fmt::format("{}host  {}\n", in, host_text(*run.host[i], run, c.kvm_version));
    else
      t += fmt::format("{}host  not run (no modelled host for this sender)\n", in);
    t += fmt::format("{}guest RAX {}{} judged {}: {}\n", in, hex(h.result), c.hypercall_status ? " (forced)" : "",
                     h.judged_success ? "success" : "FAILURE", h.judged_by);
  }
  if (run.send.hypercalls.empty()) t += "hypercall  none\n";

  if (run.send.hv_returned)
    t += fmt::format("returned   {} returned {}\n", run.send.hv_function, *run.send.hv_returned ? "true" : "false");
  else
    t += "returned   no Hyper-V code ran\n";
  if (run.send.native)
    t += fmt::format("{}{}\n", g.cluster_ipi_recommended ? "fallback   orig_apic." : "native     apic->",
                     native_text(*run.send.native));
  else
    t += "fallback   none\n";

  const WorkRecord& w = run.send.work;
  t += fmt::format("guest work stack cpumask {} B ({} zeroed), {} cpumask words, {} VP lookups, {} vpset banks "
                   "cleared + {} built, {} irq save/restore\n",
                   w.stack_cpumask_bytes, w.stack_cpumask_bytes_zeroed, w.cpumask_words.total(), w.vp_lookups,
                   w.vpset_banks_cleared, w.vpset_banks_built, w.irq_save_restore);

  if (run.oracle) {
    const OracleReport& r = *run.oracle;
    std::vector<std::uint32_t> ivps, dvps;
    for (unsigned cpu : r.intended)
      if (g.hv_vp_index[cpu] != VP_INVAL) ivps.push_back(g.hv_vp_index[cpu]);
    for (const auto& o : run.host)
      if (o)
        for (const auto& d : o->delivered) dvps.push_back(d.vp_index);
    t += fmt::format("oracle     host KVM {}: intended CPUs {} (VPs {}); delivered CPUs {} (hypercalls to VPs {}; native "
                     "APIC to CPUs {})\n",
                     kvm_version_name(c.kvm_version), list_or_none(r.intended), vps_or_none(ivps),
                     list_or_none(r.delivered), vps_or_none(dvps),
                     run.send.native ? list_or_none(run.send.native->cpus) : std::string("none"));
    t += fmt::format("           lost {}; misdelivered {}; duplicated {}{} -> {}\n", list_or_none(r.missing),
                     list_or_none(r.extra), list_or_none(r.duplicated),
                     r.unmapped_vps.empty()
                         ? std::string()
                         : fmt::format("; to VPs no CPU owns {}", vps_or_none(r.unmapped_vps)),
                     r.ok() ? "OK" : "WRONG");
  } else {
    t += fmt::format("oracle     {}\n", run.oracle_reason);
  }
  for (const auto& n : run.notes) t += fmt::format("note       {}\n", n);
  return t;
}

SendToolResult run_send(const SendOptions& options) {
  SendToolResult r;
  const SendCase c = build_send_case(options);
  try {
    r.run = run_send_case(c);
  } catch (const InputError& e) {
    throw InputError(option_of(e.place()), e.reason());
  }
  r.json = send_json(r.run);
  r.text = send_text(c, r.run);
  return r;
}

std::string linux_list_text() {
  std::string t = "Linux versions of arch/x86/hyperv/hv_apic.c (ipilab hv send --linux NAME), oldest first:\n";
  for (const LinuxVersionInfo* v = linux_versions_begin(); v != linux_versions_end(); ++v) {
    t += fmt::format("  {:<21} {}\n", v->name, v->commits);
    t += wrap(v->changes, 24, 104);
  }
  return t;
}

std::string send_help() {
  return R"(Show what one Linux guest IPI send does on Hyper-V enlightenments, as a given kernel version's
arch/x86/hyperv/hv_apic.c does it: every hypercall it emits (control word, RDX/R8 or the input
page as QWORDs, decoded per the TLFS), or the native APIC callback it falls back to with its
argument, the value the inner __send_ipi_one / __send_ipi_mask returned, and the delivery
oracle's verdict when the hypercalls also run against a modelled KVM host (--kvm, default mainline).

--linux: v5.4, seed-v2, v5.10, exclude-self-unfixed, mainline (--linux list: the commits).
--cpu-vp: the VP index of CPU 0, 1, ...; its length is nr_cpu_ids. 'inval' = VP_INVAL (not read
yet); values up to 2^31-1 (4096 and above too: handled as each version does). Repeats allowed.
CPUS are cpulists ("0-3,8"; '' is the empty mask); --present defaults to every CPU, --online to
the present ones. --vector and --hypercall-status are hex; any 32-bit vector is taken (Linux falls
back to the native APIC outside 0x10..0xff). --hypercall-status forces the full 64-bit RAX every
hypercall returns (status in bits 15:0, reps completed in 43:32), so the fallback paths run.
Exit status 0 whatever the verdict; 2 for a bad option.

Examples:
  # the seed patch's fix: CPU 1 has VP 70. v5.10 sends HvCallSendSyntheticClusterIpiEx (2 banks)
  ipilab hv send --linux v5.10 --cpu-vp 0,70,2,3 --self 0 --send-ipi 1 --vector fb
  # seed v2 tests the CPU number: BIT_ULL(70) wraps to VP 6 -> CPU 1 lost, CPU 6 misdelivered
  ipilab hv send --linux seed-v2 --cpu-vp 0,70,2,3,4,5,6,7 --self 0 --send-ipi 1 --vector fb
  # the 2021 regression: allbutself with mask == present uses SET_ALL and hits the sender too
  ipilab hv send --linux exclude-self-unfixed --cpu-vp 0,1,2,70 --self 0 --send-ipi-allbutself --vector fd
  # v5.10 judges __send_ipi_one's result on all 64 bits: reps-completed bits make it fall back
  ipilab hv send --linux v5.10 --cpu-vp 0,1 --self 0 --send-ipi 1 --vector fb --hypercall-status 100000000
  # a VP index >= 4096: v5.4 falls to SET_ALL, mainline to the native APIC
  ipilab hv send --linux v5.4 --cpu-vp 0,1,4096 --self 0 --send-ipi 2 --vector fb --json)";
}

}  // namespace ipilab::hv::tool
