// `ipilab hv call` logic: options -> (partition, registers, guest memory) -> Partition::execute ->
// text / JSON. See call_tool.h.
#include "hv/call_tool.h"

#include <algorithm>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/hex.h"

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

}  // namespace

void add_call_options(CLI::App& cmd, CallOptions& o) {
  cmd.add_option("--vcpus", o.vcpus, "number of vCPUs with VP index = vCPU number (decimal; default 4)");
  auto* vps = cmd.add_option("--vps", o.vps, "VP index of each vCPU, decimal, comma separated (e.g. 0,2,65)")
                  ->delimiter(',');
  vps->excludes(cmd.get_option("--vcpus"));
  cmd.add_option("--sender", o.sender, "vCPU that issues the hypercall (decimal; default 0)");
  auto* control = cmd.add_option("--control", o.control, "raw control word (RCX), hex");
  auto* call = cmd.add_option("--call", o.call, "send-ipi | send-ipi-ex | a hex call code (builds RCX)");
  auto* fast = cmd.add_flag("--fast", o.fast, "fast call: input in RDX/R8 (and XMM0..XMM5 for send-ipi-ex)");
  auto* varhead = cmd.add_option("--varhead", o.varhead, "variable header size in QWORDs (decimal)");
  auto* repc = cmd.add_option("--rep-count", o.rep_count, "rep count (decimal)");
  auto* reps = cmd.add_option("--rep-start", o.rep_start, "rep start index (decimal)");
  for (auto* opt : {call, fast, varhead, repc, reps}) control->excludes(opt);
  cmd.add_option("--rdx", o.rdx, "RDX, hex (slow: input GPA, default --input-gpa; fast: input bytes 0-7)");
  cmd.add_option("--r8", o.r8, "R8, hex (slow: output GPA; fast: input bytes 8-15)");
  for (int i = 0; i < 6; ++i)
    cmd.add_option(fmt::format("--xmm{}", i), o.xmm[static_cast<std::size_t>(i)],
                   fmt::format("XMM{} as LO:HI (hex QWORDs; LO alone means HI = 0)", i));
  auto* input = cmd.add_option("--input", o.input, "input page bytes in memory order, hex (\"fe 00 00 00 ...\")");
  auto* qwords = cmd.add_option("--input-qwords", o.input_qwords,
                                "input as hex QWORDs, comma separated, each stored little-endian")
                     ->delimiter(',');
  input->excludes(qwords);
  cmd.add_option("--input-gpa", o.input_gpa, "GPA where the input is placed, hex (default 0x1000)");
  cmd.add_option("--memory-size", o.memory_size, "bytes of guest memory from GPA 0, hex (default 0x10000)");
  cmd.add_flag("--enforce-cpuid", o.enforce_cpuid, "KVM_CAP_HYPERV_ENFORCE_CPUID: check the CPUID bits below");
  cmd.add_flag("--no-cluster-ipi", o.no_cluster_ipi, "CPUID: HV_X64_CLUSTER_IPI_RECOMMENDED not exposed");
  cmd.add_flag("--no-ex-masks", o.no_ex_masks, "CPUID: HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED not exposed");
  cmd.add_flag("--no-xmm-input", o.no_xmm_input, "CPUID: XMM fast hypercall input not available");
  cmd.add_flag("--no-lapic", o.no_lapic, "no in-kernel LAPIC (KVM returns INVALID_HYPERCALL_INPUT)");
  cmd.add_option("--apic-disabled", o.apic_disabled, "vCPUs whose APIC is disabled (decimal, comma separated)")
      ->delimiter(',');
  cmd.add_option("--max-vcpus", o.max_vcpus, "KVM_MAX_VCPUS, 1..4096 (caps VP indices and slow bank reads)");
  cmd.add_option("--flavor", o.flavor, "kvm (default) or xen (Xen viridian error codes and checks)")
      ->check(CLI::IsMember({"kvm", "xen"}));
  cmd.add_option("--cpl", o.cpl, "current privilege level of the caller (decimal; non-zero gives #UD)");
  cmd.add_flag("--real-mode", o.real_mode, "caller not in protected mode (#UD)");
  cmd.add_flag("--json", o.json, "print one JSON object instead of the text report");
}

CallRequest build_request(const CallOptions& o) {
  CallRequest r;
  // Partition.
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
  r.config.flavor = o.flavor == "xen" ? ErrorFlavor::XenViridian : ErrorFlavor::Kvm;
  if (!o.apic_disabled.empty()) {
    r.config.apic_enabled.assign(n, true);
    for (auto v : o.apic_disabled) {
      if (v >= n) throw InputError("--apic-disabled", fmt::format("vCPU {} does not exist ({} vCPUs)", v, n));
      r.config.apic_enabled[v] = false;
    }
  }
  try {
    (void)Partition(r.config);
  } catch (const std::invalid_argument& e) {
    throw InputError(o.vps.empty() ? "--vcpus" : "--vps", e.what());
  }
  if (o.sender >= n) throw InputError("--sender", fmt::format("vCPU {} does not exist ({} vCPUs)", o.sender, n));
  r.sender_vcpu = o.sender;

  // Control word.
  if (!o.control.empty()) {
    r.regs.rcx = parse_hex_u64(o.control, "--control");
  } else if (!o.call.empty()) {
    if (o.varhead > 0x3FF) throw InputError("--varhead", fmt::format("{} does not fit in 10 bits (0..1023)", o.varhead));
    if (o.rep_count > 0xFFF) throw InputError("--rep-count", fmt::format("{} does not fit in 12 bits", o.rep_count));
    if (o.rep_start > 0xFFF) throw InputError("--rep-start", fmt::format("{} does not fit in 12 bits", o.rep_start));
    r.regs.rcx = encode_control({parse_call(o.call), o.fast, static_cast<std::uint16_t>(o.varhead),
                                 static_cast<std::uint16_t>(o.rep_count), static_cast<std::uint16_t>(o.rep_start), 0});
  } else {
    throw InputError("--call", "give the hypercall: --call send-ipi|send-ipi-ex|CODE, or a raw --control word");
  }
  const bool fast_call = (r.regs.rcx & HV_HYPERCALL_FAST_BIT) != 0;

  // Guest memory and input.
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

  // Registers.
  if (!o.rdx.empty())
    r.regs.rdx = parse_hex_u64(o.rdx, "--rdx");
  else if (!fast_call)
    r.regs.rdx = r.input_gpa;
  if (!o.r8.empty()) r.regs.r8 = parse_hex_u64(o.r8, "--r8");
  for (std::size_t i = 0; i < 6; ++i)
    if (!o.xmm[i].empty()) r.regs.xmm[i] = parse_xmm(o.xmm[i], fmt::format("--xmm{}", i));
  r.regs.cpl = o.cpl;
  r.regs.protected_mode = !o.real_mode;
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
                    {"enforce_cpuid", cfg.enforce_cpuid},
                    {"cluster_ipi_recommended", cfg.cluster_ipi_recommended},
                    {"ex_processor_masks_recommended", cfg.ex_processor_masks_recommended},
                    {"xmm_input_available", cfg.xmm_input_available},
                    {"lapic_in_kernel", cfg.lapic_in_kernel},
                    {"apic_disabled_vcpus", options.apic_disabled},
                    {"max_vcpus", cfg.max_vcpus}};
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
                   cfg.flavor == ErrorFlavor::Kvm ? "KVM" : "Xen viridian",
                   cfg.enforce_cpuid ? ", enforce_cpuid" : "", fmt::join(map, " "), req.sender_vcpu,
                   partition.vp_index(req.sender_vcpu));
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

CallResult run_call_args(const std::vector<std::string>& args) {
  CLI::App app{"hv call", "call"};
  CallOptions options;
  add_call_options(app, options);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last-first
  app.parse(reversed);
  return run_call(options);
}

std::string call_help() {
  return R"(Run one Hyper-V hypercall against a modelled partition and show what the host does with it.

The host follows KVM (arch/x86/kvm/hyperv.c, kvm_hv_hypercall + kvm_hv_send_ipi) bit for bit:
validation order, HV_STATUS codes and quirks; --flavor xen follows Xen viridian instead.
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
  ipilab hv call --vps 0,2,65 --control 0x20015 --input-qwords fe,0,3,4,2)";
}

}  // namespace ipilab::hv::tool
