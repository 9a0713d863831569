// `ipilab hv call` logic: options -> (partition, registers, guest memory) -> Partition::execute ->
// text / JSON. See call_tool.h.
#include "hv/call_tool.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/hex.h"
#include "hv/hv_cpuid.h"
#include "hv/kvm_version.h"
#include "hv/send_tool.h"

namespace ipilab::hv::tool {
namespace {

using nlohmann::ordered_json;

constexpr std::uint64_t kMaxMemoryBytes = 64ull << 20;  // 64 MiB of modelled guest memory at most

std::string hex64(std::uint64_t v) { return fmt::format("{:#018x}", v); }

std::uint16_t parse_call(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "send-ipi") return HVCALL_SEND_IPI;
  if (lower == "send-ipi-ex") return HVCALL_SEND_IPI_EX;
  if (text.empty() || text.find_first_not_of("0123456789abcdefABCDEFxX") != std::string::npos)
    throw InputError("--call", fmt::format("'{}' is neither send-ipi, send-ipi-ex nor a hex call code (such as 0xb)", text));
  const std::uint64_t code = parse_hex_u64(text, "--call");
  if (code > 0xFFFF)
    throw InputError("--call", fmt::format("call code {:#x} does not fit in 16 bits (control word bits 15:0)", code));
  return static_cast<std::uint16_t>(code);
}

std::array<std::uint64_t, 2> parse_xmm(const std::string& text, const std::string& what) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return {parse_hex_u64(text, what), 0};
  return {parse_hex_u64(text.substr(0, colon), what), parse_hex_u64(text.substr(colon + 1), what)};
}

std::string flavor_name(ErrorFlavor f) { return f == ErrorFlavor::Kvm ? "kvm" : "xen"; }

ordered_json vpset_json(const VpSet& s) {
  ordered_json j;
  j["format"] = s.format;
  j["format_name"] = s.format == HV_GENERIC_SET_ALL       ? "HV_GENERIC_SET_ALL"
                     : s.format == HV_GENERIC_SET_SPARSE_4K ? "HV_GENERIC_SET_SPARSE_4K"
                                                            : "other (KVM: sparse)";
  j["valid_bank_mask"] = s.valid_bank_mask;
  j["bank_contents"] = s.bank_contents;
  if (s.format != HV_GENERIC_SET_ALL) j["vps"] = vpset_vps(s);
  return j;
}

ordered_json input_json(const DecodedInput& in) {
  if (const auto* a = std::get_if<SendIpiInput>(&in)) {
    ordered_json j;
    j["kind"] = "hv_send_ipi";
    j["vector"] = a->vector;
    j["reserved"] = a->reserved;
    j["processor_mask"] = a->processor_mask;
    std::vector<std::uint32_t> vps;
    for (std::uint32_t b = 0; b < 64; ++b)
      if ((a->processor_mask >> b) & 1) vps.push_back(b);
    j["vps"] = vps;
    return j;
  }
  if (const auto* e = std::get_if<SendIpiExInput>(&in)) {
    ordered_json j;
    j["kind"] = "hv_send_ipi_ex";
    j["vector"] = e->vector;
    j["reserved"] = e->reserved;
    j["vp_set"] = vpset_json(e->vp_set);
    return j;
  }
  return nullptr;
}

std::string vp_list(const std::vector<std::uint32_t>& vps) {
  return vps.empty() ? "none" : fmt::format("{}", fmt::join(vps, ","));
}

std::string input_text(const DecodedInput& in) {
  if (const auto* a = std::get_if<SendIpiInput>(&in)) {
    std::vector<std::uint32_t> vps;
    for (std::uint32_t b = 0; b < 64; ++b)
      if ((a->processor_mask >> b) & 1) vps.push_back(b);
    return fmt::format("hv_send_ipi: vector {:#x}, reserved (TargetVtl+padding) {:#x}, processor_mask {:#x} = VPs {{{}}}",
                       a->vector, a->reserved, a->processor_mask, vp_list(vps));
  }
  if (const auto* e = std::get_if<SendIpiExInput>(&in)) {
    const VpSet& s = e->vp_set;
    std::string set;
    if (s.format == HV_GENERIC_SET_ALL) {
      set = fmt::format("format 1 (HV_GENERIC_SET_ALL), valid_bank_mask {:#x}", s.valid_bank_mask);
    } else {
      std::vector<std::string> banks;
      for (auto b : s.bank_contents) banks.push_back(fmt::format("{:#x}", b));
      const auto announced = static_cast<std::size_t>(vpset_bank_count(s));
      set = fmt::format("format {} ({}), valid_bank_mask {:#x}, bank_contents [{}]{} = VPs {{{}}}", s.format,
                        s.format == HV_GENERIC_SET_SPARSE_4K ? "HV_GENERIC_SET_SPARSE_4K" : "unknown; KVM: sparse",
                        s.valid_bank_mask, fmt::join(banks, ", "),
                        banks.size() == announced ? std::string()
                                                  : fmt::format(" ({} of {} banks read)", banks.size(), announced),
                        vp_list(vpset_vps(s)));
    }
    return fmt::format("hv_send_ipi_ex: vector {:#x}, reserved (TargetVtl+padding) {:#x}, {}", e->vector, e->reserved,
                       set);
  }
  return "not decoded (rejected before the input was read)";
}

ordered_json leaf_json(const HvEnlightenmentInfo& l) {
  return {{"eax", l.eax},
          {"ebx", l.ebx},
          {"cluster_ipi_recommended", l.cluster_ipi_recommended()},
          {"ex_processor_masks_recommended", l.ex_processor_masks_recommended()}};
}

// CPUID 0x40000004 as KVM reports it (hv_cpuid.h): the system ioctl and the per-vCPU ioctl (every
// vCPU of the partition shares lapic_in_kernel), and what the partition's guest sees.
ordered_json hv_cpuid_json(const PartitionConfig& cfg) {
  if (cfg.flavor != ErrorFlavor::Kvm) return nullptr;
  ordered_json j;
  j["leaf"] = kHypervCpuidEnlightmentInfo;
  j["eax_modelled_mask"] = kHvEnlightmentInfoModelledMask;
  j["kvm_get_supported_hv_cpuid"] = leaf_json(kvm_hv_enlightenment_info(cfg.kvm_version, false, cfg.lapic_in_kernel));
  j["kvm_get_supported_hv_cpuid_vcpu"] =
      leaf_json(kvm_hv_enlightenment_info(cfg.kvm_version, true, cfg.lapic_in_kernel));
  return j;
}

// The partition: its vCPUs and VP indices, the CPUID the guest sees, the KVM version, the sender.
void build_partition(const CallOptions& o, CallRequest& r) {
  if (!o.vps.empty()) {
    r.config.vp_index_of_vcpu = o.vps;
  } else {
    if (o.vcpus == 0 || o.vcpus > KVM_MAX_VCPUS_MAXSMP)
      throw InputError("--vcpus", fmt::format("{} vCPUs: give 1..{}", o.vcpus, KVM_MAX_VCPUS_MAXSMP));
    r.config = PartitionConfig::identity(o.vcpus);
  }
  const auto n = static_cast<std::uint32_t>(r.config.vp_index_of_vcpu.size());
  r.config.enforce_cpuid = o.enforce_cpuid;
  r.config.cluster_ipi_recommended = !o.no_cluster_ipi;
  r.config.ex_processor_masks_recommended = !o.no_ex_masks;
  r.config.xmm_input_available = !o.no_xmm_input;
  r.config.lapic_in_kernel = !o.no_lapic;
  r.config.max_vcpus = o.max_vcpus;
  if (o.flavor != "kvm" && o.flavor != "xen")
    throw InputError("--flavor", fmt::format("'{}': give kvm or xen", o.flavor));
  r.config.flavor = o.flavor == "xen" ? ErrorFlavor::XenViridian : ErrorFlavor::Kvm;
  const auto kvm = kvm_version_from_name(o.kvm);
  if (!kvm) throw InputError("--kvm", fmt::format("unknown KVM version '{}' (see --kvm list)", o.kvm));
  if (*kvm != KvmVersion::kMainline && r.config.flavor != ErrorFlavor::Kvm)
    throw InputError("--kvm", "a KVM version applies to --flavor kvm only");
  r.config.kvm_version = *kvm;
  // The VMM gives the guest the leaf KVM reports for this vCPU (KVM_GET_SUPPORTED_HV_CPUID on the
  // vCPU): without an in-kernel LAPIC, KVM v6.14+ leaves HV_X64_CLUSTER_IPI_RECOMMENDED out.
  if (r.config.flavor == ErrorFlavor::Kvm &&
      !kvm_hv_enlightenment_info(*kvm, true, r.config.lapic_in_kernel).cluster_ipi_recommended())
    r.config.cluster_ipi_recommended = false;
  if (!o.apic_disabled.empty()) {
    r.config.apic_enabled.assign(n, true);
    for (auto v : o.apic_disabled) {
      if (v >= n) throw InputError("--apic-disabled", fmt::format("vCPU {} does not exist ({} vCPUs)", v, n));
      if (!r.config.apic_enabled[v]) throw InputError("--apic-disabled", fmt::format("vCPU {} is named twice", v));
      r.config.apic_enabled[v] = false;
    }
  }
  try {
    (void)Partition(r.config);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    throw InputError(what.find("LAPIC") != std::string::npos ? "--no-lapic" : o.vps.empty() ? "--vcpus" : "--vps",
                     what);
  }
  if (o.sender >= n) throw InputError("--sender", fmt::format("vCPU {} does not exist ({} vCPUs)", o.sender, n));
  r.sender_vcpu = o.sender;
}

// The hypercall control word (RCX): raw, or composed from --call and its fields.
std::uint64_t build_control(const CallOptions& o) {
  if (!o.control.empty()) {
    return parse_hex_u64(o.control, "--control");
  } else if (!o.call.empty()) {
    if (o.varhead > 0x3FF) throw InputError("--varhead", fmt::format("{} does not fit in 10 bits (0..1023)", o.varhead));
    if (o.rep_count > 0xFFF) throw InputError("--rep-count", fmt::format("{} does not fit in 12 bits", o.rep_count));
    if (o.rep_start > 0xFFF) throw InputError("--rep-start", fmt::format("{} does not fit in 12 bits", o.rep_start));
    return encode_control({parse_call(o.call), o.fast, static_cast<std::uint16_t>(o.varhead),
                          static_cast<std::uint16_t>(o.rep_count), static_cast<std::uint16_t>(o.rep_start), 0});
  } else {
    throw InputError("--call", "give the hypercall: --call send-ipi|send-ipi-ex|CODE, or a raw --control word");
  }
}

// In the --call form the options of the other form are a mistake, not a request: a slow call
// reads its input from guest memory (RDX = input GPA, R8 = output GPA; TLFS "Hypercall Inputs"),
// a fast one from RDX/R8/XMM. Taking `--rdx fe` as a GPA would read a zero page and report a bad
// vector. (--control is the raw form: the registers are taken as given, whatever the fast bit.)
void check_call_form(const CallOptions& o, bool fast_call) {
  if (!o.control.empty()) return;
  if (!fast_call) {
    std::string regs;
    if (!o.rdx.empty()) regs = "--rdx";
    if (!o.r8.empty()) regs += regs.empty() ? "--r8" : ", --r8";
    for (std::size_t i = 0; i < 6; ++i)
      if (!o.xmm[i].empty()) regs += fmt::format("{}--xmm{}", regs.empty() ? "" : ", ", i);
    if (!regs.empty())
      throw InputError(regs, "register input is for a fast call: add --fast (without it this is a slow call, "
                             "which reads its input from guest memory: --input or --input-qwords at "
                             "--input-gpa, and RDX is that GPA)");
  } else if (!o.input.empty() || !o.input_qwords.empty()) {
    throw InputError(o.input.empty() ? "--input-qwords" : "--input",
                     "an input page is for a slow (memory) call, but --fast makes this a fast call, which "
                     "takes its input in RDX/R8 (and XMM): drop --fast, or give the input as --rdx/--r8/--xmmN");
  }
}

// Guest memory and the input page written into it.
void build_memory(const CallOptions& o, CallRequest& r) {
  const std::uint64_t mem_size = parse_hex_u64(o.memory_size, "--memory-size");
  if (mem_size > kMaxMemoryBytes)
    throw InputError("--memory-size", fmt::format("{:#x} bytes is more than the {:#x} this tool models", mem_size,
                                                  kMaxMemoryBytes));
  r.memory = FlatGuestMemory(0, std::vector<std::uint8_t>(mem_size, 0));
  r.input_gpa = parse_hex_u64(o.input_gpa, "--input-gpa");
  if (!o.input.empty()) {
    r.input = parse_hex_bytes(o.input, "--input");
    r.input_given = true;
  } else if (!o.input_qwords.empty()) {
    for (std::size_t i = 0; i < o.input_qwords.size(); ++i) {
      const std::uint64_t q = parse_hex_u64(o.input_qwords[i], fmt::format("--input-qwords item {}", i + 1));
      for (int b = 0; b < 8; ++b) r.input.push_back(static_cast<std::uint8_t>(q >> (8 * b)));
    }
    r.input_given = true;
  }
  if (r.input_given && !r.memory.write(r.input_gpa, r.input))
    throw InputError(o.input.empty() ? "--input-qwords" : "--input",
                     fmt::format("{} bytes at GPA {:#x} do not fit in guest memory [0, {:#x}) (see --memory-size)",
                                 r.input.size(), r.input_gpa, mem_size));
}

// The registers of a fast call (and RDX = the input GPA of a slow one).
void build_registers(const CallOptions& o, bool fast_call, CallRequest& r) {
  if (!o.rdx.empty())
    r.regs.rdx = parse_hex_u64(o.rdx, "--rdx");
  else if (!fast_call)
    r.regs.rdx = r.input_gpa;
  if (!o.r8.empty()) r.regs.r8 = parse_hex_u64(o.r8, "--r8");
  for (std::size_t i = 0; i < 6; ++i)
    if (!o.xmm[i].empty()) r.regs.xmm[i] = parse_xmm(o.xmm[i], fmt::format("--xmm{}", i));
  r.regs.cpl = o.cpl;
  r.regs.protected_mode = !o.real_mode;
}

}  // namespace

CallRequest build_request(const CallOptions& o) {
  CallRequest r;
  build_partition(o, r);
  r.regs.rcx = build_control(o);
  const bool fast_call = (r.regs.rcx & HV_HYPERCALL_FAST_BIT) != 0;
  check_call_form(o, fast_call);
  build_memory(o, r);
  build_registers(o, fast_call, r);
  return r;
}

ordered_json outcome_json(const HypercallOutcome& out) {
  ordered_json j;
  j["status"] = out.inject_ud ? std::string("#UD") : status_name(out.status);
  j["status_code"] = out.inject_ud ? ordered_json(nullptr) : ordered_json(out.status_code());
  j["inject_ud"] = out.inject_ud;
  j["rax"] = out.inject_ud ? ordered_json(nullptr) : ordered_json(out.rax);
  j["modelled"] = out.modelled;
  j["rejected_by"] = out.rejected_by.empty() ? ordered_json(nullptr) : ordered_json(std::string(out.rejected_by));
  const auto& c = out.control;
  j["control"] = {{"word", encode_control(c)},
                  {"call_code", c.call_code},
                  {"call_name", std::string(call_code_name(c.call_code))},
                  {"fast", c.fast},
                  {"varhead", c.var_header_qwords},
                  {"rep_count", c.rep_count},
                  {"rep_start", c.rep_start},
                  {"reserved", c.reserved}};
  j["input"] = input_json(out.input);
  std::vector<std::uint32_t> vps, vcpus;
  for (const auto& d : out.delivered) {
    vps.push_back(d.vp_index);
    vcpus.push_back(d.vcpu);
  }
  j["delivered"] = vps;
  j["delivered_vcpus"] = vcpus;
  j["vector"] = out.delivered.empty() ? ordered_json(nullptr) : ordered_json(out.delivered.front().vector);
  ordered_json deliveries = ordered_json::array();
  for (const auto& d : out.delivered)
    deliveries.push_back({{"vcpu", d.vcpu}, {"vp_index", d.vp_index}, {"vector", d.vector}});
  j["deliveries"] = deliveries;
  j["dropped_vcpus"] = out.dropped_vcpus;
  const auto& w = out.work;
  j["work"] = {{"guest_reads", w.guest_reads},
               {"guest_bytes_read", w.guest_bytes_read},
               {"xmm_registers_read", w.xmm_registers_read},
               {"banks_read", w.banks_read},
               {"vcpus_scanned", w.vcpus_scanned},
               {"apic_set_irq_calls", w.apic_set_irq_calls}};
  return j;
}

CallResult run_call(const CallOptions& options) {
  const CallRequest req = build_request(options);
  const Partition partition(req.config);
  const HypercallOutcome out = partition.execute(req.sender_vcpu, req.regs, req.memory);
  const auto& cfg = partition.config();

  CallResult res;
  ordered_json j;
  j["partition"] = {{"vp_index_of_vcpu", cfg.vp_index_of_vcpu},
                    {"flavor", flavor_name(cfg.flavor)},
                    {"kvm_version", std::string(kvm_version_name(cfg.kvm_version))},
                    {"enforce_cpuid", cfg.enforce_cpuid},
                    {"cluster_ipi_recommended", cfg.cluster_ipi_recommended},
                    {"ex_processor_masks_recommended", cfg.ex_processor_masks_recommended},
                    {"xmm_input_available", cfg.xmm_input_available},
                    {"lapic_in_kernel", cfg.lapic_in_kernel},
                    {"apic_disabled_vcpus", options.apic_disabled},
                    {"max_vcpus", cfg.max_vcpus}};
  j["partition"]["hv_cpuid"] = hv_cpuid_json(cfg);
  j["sender_vcpu"] = req.sender_vcpu;
  ordered_json xmm = ordered_json::array();
  for (const auto& x : req.regs.xmm) xmm.push_back({x[0], x[1]});
  j["registers"] = {{"rcx", req.regs.rcx}, {"rdx", req.regs.rdx}, {"r8", req.regs.r8},  {"xmm", xmm},
                    {"cpl", req.regs.cpl}, {"protected_mode", req.regs.protected_mode}};
  const ordered_json outcome = outcome_json(out);
  for (const auto& [k, v] : outcome.items()) j[k] = v;
  res.json = std::move(j);

  // Text report.
  const auto& c = out.control;
  std::string t;
  std::vector<std::string> map;
  for (std::uint32_t v = 0; v < partition.vcpu_count(); ++v)
    map.push_back(fmt::format("{}->{}", v, partition.vp_index(v)));
  t += fmt::format("partition  {} vCPUs, {} semantics{}; vCPU->VP {}; sender vCPU {} (VP {})\n", partition.vcpu_count(),
                   cfg.flavor == ErrorFlavor::Kvm ? "KVM " + std::string(kvm_version_name(cfg.kvm_version))
                                                  : std::string("Xen viridian"),
                   cfg.enforce_cpuid ? ", enforce_cpuid" : "", fmt::join(map, " "), req.sender_vcpu,
                   partition.vp_index(req.sender_vcpu));
  if (cfg.flavor == ErrorFlavor::Kvm) {
    const auto sys = kvm_hv_enlightenment_info(cfg.kvm_version, false, cfg.lapic_in_kernel);
    const auto vcpu = kvm_hv_enlightenment_info(cfg.kvm_version, true, cfg.lapic_in_kernel);
    t += fmt::format("cpuid      0x40000004 EAX from KVM: system {:#x}, per vCPU {:#x} (cluster IPI {}recommended{}); "
                     "guest sees cluster IPI {}, Ex masks {}\n",
                     sys.eax, vcpu.eax, vcpu.cluster_ipi_recommended() ? "" : "NOT ",
                     vcpu.cluster_ipi_recommended() == sys.cluster_ipi_recommended() ? "" : ": no in-kernel LAPIC",
                     cfg.cluster_ipi_recommended ? "on" : "off", cfg.ex_processor_masks_recommended ? "on" : "off");
  }
  t += fmt::format("control    RCX {} = {} ({:#06x}), {}, varhead {}, rep count {}, rep start {}, reserved bits {}\n",
                   hex64(req.regs.rcx), call_code_name(c.call_code), c.call_code, c.fast ? "fast" : "slow (memory)",
                   c.var_header_qwords, c.rep_count, c.rep_start,
                   c.reserved ? fmt::format("{:#x} SET", c.reserved) : std::string("clear"));
  t += fmt::format("registers  RDX {}  R8 {}", hex64(req.regs.rdx), hex64(req.regs.r8));
  if (c.fast && c.call_code != HVCALL_SEND_IPI)
    for (std::size_t i = 0; i < 6; ++i)
      t += fmt::format("{}XMM{} {:#x}:{:#x}", i % 3 == 0 ? "\n           " : "  ", i, req.regs.xmm[i][0],
                       req.regs.xmm[i][1]);
  t += "\n";
  if (req.input_given)
    t += fmt::format("memory     {} input bytes at GPA {:#x}: {}\n", req.input.size(), req.input_gpa,
                     format_hex_bytes(req.input.data(), std::min<std::size_t>(req.input.size(), 64)) +
                         (req.input.size() > 64 ? " ..." : ""));
  t += fmt::format("input      {}\n", input_text(out.input));
  if (out.inject_ud) {
    t += "status     #UD injected (no status; RAX not written)\n";
  } else {
    t += fmt::format("status     {} ({:#06x}), RAX {}\n", status_name(out.status), out.status_code(), hex64(out.rax));
  }
  if (!out.rejected_by.empty()) t += fmt::format("rejected   {}\n", out.rejected_by);
  if (!out.modelled) t += "note       ipilab does not model this call; real KVM would execute it\n";
  if (out.delivered.empty()) {
    t += "delivered  nothing\n";
  } else {
    std::vector<std::string> ds;
    for (const auto& d : out.delivered) ds.push_back(fmt::format("VP {} (vCPU {})", d.vp_index, d.vcpu));
    t += fmt::format("delivered  vector {:#x} to {}\n", out.delivered.front().vector, fmt::join(ds, ", "));
  }
  if (!out.dropped_vcpus.empty())
    t += fmt::format("dropped    APIC disabled on vCPU {}\n", fmt::join(out.dropped_vcpus, ", "));
  const auto& w = out.work;
  t += fmt::format("host work  {} guest reads ({} bytes), {} XMM registers read, {} sparse banks read, {} vCPUs scanned, {} "
                   "kvm_apic_set_irq calls\n",
                   w.guest_reads, w.guest_bytes_read, w.xmm_registers_read, w.banks_read, w.vcpus_scanned,
                   w.apic_set_irq_calls);
  res.text = std::move(t);
  return res;
}

std::string call_help() {
  return R"(Run one Hyper-V hypercall against a modelled partition and show what the host does with it.

The host follows KVM (arch/x86/kvm/hyperv.c, kvm_hv_hypercall + kvm_hv_send_ipi) bit for bit:
validation order, HV_STATUS codes and quirks, as of --kvm VERSION (default mainline; --kvm list
names the versions and the fixes between them); --flavor xen follows Xen viridian instead.
VP indices may repeat (--vps 5,5,7): KVM allows it and every vCPU with the index receives.
It prints the decoded control word, the decoded input, the status (name and code, or #UD) and the
VPs (and vCPUs) that received which vector. The exit status is 0 whatever the HV_STATUS is (the
call ran); 2 for a bad option.

Numbers: --vcpus, --vps, --sender, --varhead, --rep-count, --rep-start, --cpl, --max-vcpus are
decimal; --control, --call CODE, --rdx, --r8, --xmmN, --input*, --input-gpa, --memory-size are hex
("fe" == "0xfe"). Slow calls read their input from guest memory: give it with --input (bytes in
memory order) or --input-qwords (QWORDs, each stored little-endian); it is placed at --input-gpa
(default 0x1000) and RDX defaults to that GPA.

Input layouts: hv_send_ipi = u32 vector, u32 reserved, u64 processor_mask (bit n = VP n).
hv_send_ipi_ex = u32 vector, u32 reserved, u64 format (0 sparse, 1 all), u64 valid_bank_mask,
then one u64 per set bit of valid_bank_mask (bank b holds VPs 64b..64b+63). Fast Ex: RDX = vector,
R8 = format, XMM0.lo = valid_bank_mask, banks from XMM0.hi on.

Examples (the partition of the KVM selftest hyperv_ipi: vCPUs 0,1,2 with VP indices 0,2,65):
  # selftest case 5: slow Ex, only bank 1 valid (compact array), bit 1 -> VP 65
  ipilab hv call --vps 0,2,65 --call send-ipi-ex --varhead 1 --input-qwords fe,0,2,2
      -> HV_STATUS_SUCCESS (0x0000), vector 0xfe to VP 65 (vCPU 2)
  # selftest case 2: fast non-Ex, RDX = vector, R8 = processor mask
  ipilab hv call --vps 0,2,65 --call send-ipi --fast --rdx fe --r8 4
      -> HV_STATUS_SUCCESS, vector 0xfe to VP 2 (vCPU 1)
  # selftest case 8: XMM fast Ex, XMM0 = {valid_bank_mask 0x3, bank0 1<<2}, XMM1.lo = bank1 1<<1
  ipilab hv call --vps 0,2,65 --call send-ipi-ex --fast --varhead 2 --rdx fe --r8 0 --xmm0 3:4 --xmm1 2 --json
  # a KVM quirk: varhead 1 but valid_bank_mask has two bits -> HV_STATUS_INVALID_HYPERCALL_INPUT
  ipilab hv call --vps 0,2,65 --control 0x20015 --input-qwords fe,0,3,4,2
  # Linux's SET_ALL (format 1, no banks) on KVM before 3244867af8c0: SUCCESS, nothing delivered
  ipilab hv call --vps 0,2,65 --kvm v5.15 --call send-ipi-ex --input-qwords fe,1,0
  # selftest case 4 (XMM fast Ex) on KVM before 47d3e5cdfe60 -> HV_STATUS_INVALID_HYPERCALL_INPUT
  ipilab hv call --vps 0,2,65 --kvm v5.16 --call send-ipi-ex --fast --varhead 1 --rdx fe --xmm0 1:4
  # duplicate VP index 5: vCPUs 0 and 1 both receive
  ipilab hv call --vps 5,5,7 --call send-ipi --fast --rdx fb --r8 20)";
}

std::string kvm_list_text() {
  std::string t = "KVM versions of the Hyper-V IPI hypercalls (arch/x86/kvm/hyperv.c), oldest first:\n";
  for (const auto& v : kvm_versions())
    t += fmt::format("  {:<9} {} ({})\n", v.name, v.releases, v.commits) + wrap(v.changes, 12, 104);
  t += "Aliases: v5.17 = v5.16, v6.14 = mainline. Stable trees took some of these fixes without the others\n"
       "(5.4.y got 3244867af8c0; 5.16.y got 47d3e5cdfe60 without bd1ba5732bb9): such mixtures are not named.\n";
  return t;
}

}  // namespace ipilab::hv::tool
