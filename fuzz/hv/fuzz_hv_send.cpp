// fuzz_hv_send — the `ipilab hv send` parsers (cpulist, --cpu-vp: src/hv/cpulist.h) and the send
// they feed (run_send_case, src/hv/send_case.h) on arbitrary text and settings.
//
// Input layout: a 22-byte header (missing bytes read as zero), then text fields separated by '\n':
//   cpu_vp \n present \n online \n mask
//   [0] hook (mod 6, SendHook order)   [1] Linux version (mod 5)   [2] KVM version (mod 4)
//   [3] flags: bit0 no cluster IPI, bit1 no Ex masks, bit2 no hypercall page, bit3 forced status,
//       bit4 present given, bit5 online given, bit6 max_vp_index given, bit7 NR_CPUS 64 (else 8192)
//   [4] self   [5] target CPU   [6..9] u32 vector   [10..17] u64 forced RAX   [18..21] u32 max_vp_index
// Invariants: parsers throw only InputError; a parsed cpulist is ascending, unique, below the limit
// and survives format_cpulist -> parse_cpulist; run_send_case throws only InputError; every hypercall
// is SEND_IPI (fast) or SEND_IPI_EX (memory, 24 + 8 * varhead input bytes); no hooks -> no hypercall
// and a native send; a false return -> a native send; the oracle's intended set is what was asked.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "hv/cpulist.h"
#include "hv/send_case.h"

namespace {

using namespace ipilab::hv;

constexpr std::size_t kHeaderBytes = 22;

std::uint64_t le(const std::uint8_t* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_hv_send invariant violated: %s\n", what);
  std::abort();
}

/// Parses a cpulist and checks its invariants; false when the text is (rightly) refused.
bool cpulist(std::string_view text, unsigned limit, std::vector<unsigned>& out) {
  try {
    out = parse_cpulist(text, limit, "fuzz");
  } catch (const ipilab::InputError&) {
    return false;
  }
  if (!std::is_sorted(out.begin(), out.end())) fail("cpulist not ascending");
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) fail("cpulist not unique");
  if (!out.empty() && out.back() >= limit) fail("cpulist CPU beyond the limit");
  if (parse_cpulist(format_cpulist(out), limit, "fuzz") != out) fail("format_cpulist does not round-trip");
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint8_t h[kHeaderBytes] = {};
  for (std::size_t i = 0; i < kHeaderBytes && i < size; ++i) h[i] = data[i];
  std::vector<std::string_view> fields;
  if (size > kHeaderBytes) {
    const std::string_view text(reinterpret_cast<const char*>(data + kHeaderBytes), size - kHeaderBytes);
    std::size_t start = 0;
    while (fields.size() < 4) {
      const std::size_t nl = text.find('\n', start);
      fields.push_back(text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
  }
  fields.resize(4);

  SendCase c;
  try {
    c.cpu_vp = parse_vp_list(fields[0], "fuzz");
  } catch (const ipilab::InputError&) {
    // still exercise the cpulist parser with a fixed limit
    std::vector<unsigned> v;
    (void)cpulist(fields[1], 64, v);
    return 0;
  }
  if (c.cpu_vp.empty()) fail("parse_vp_list returned no item");
  const auto n = static_cast<unsigned>(c.cpu_vp.size());
  std::vector<unsigned> present, online, mask;
  const bool present_ok = cpulist(fields[1], n, present);
  const bool online_ok = cpulist(fields[2], n, online);
  const bool mask_ok = cpulist(fields[3], n, mask);

  c.hook = static_cast<SendHook>(h[0] % 6);
  c.linux_version = static_cast<LinuxVersion>(h[1] % 5);
  c.kvm_version = static_cast<KvmVersion>(h[2] % 4);
  c.cluster_ipi = !(h[3] & 1);
  c.ex_processor_masks = !(h[3] & 2);
  c.hypercall_page = !(h[3] & 4);
  if (h[3] & 8) c.hypercall_status = le(h + 10, 8);
  if ((h[3] & 16) && present_ok) c.present = present;
  if ((h[3] & 32) && online_ok) c.online = online;
  if (h[3] & 64) c.max_vp_index = static_cast<std::uint32_t>(le(h + 18, 4));
  c.nr_cpus = (h[3] & 128) ? 64 : 8192;
  c.self = h[4] % (n + 1);  // sometimes one past the end: must be refused
  c.target_cpu = h[5] % (n + 1);
  c.vector = static_cast<std::uint32_t>(le(h + 6, 4));
  if (mask_ok) c.mask = mask;

  SendCaseRun r;
  try {
    r = run_send_case(c);
  } catch (const ipilab::InputError&) {
    return 0;
  }
  for (const auto& call : r.send.hypercalls) {
    const HypercallControl hc = decode_control(call.regs.rcx);
    if (hc.call_code == HVCALL_SEND_IPI) {
      if (!hc.fast || hc.var_header_qwords != 0 || !call.input.empty()) fail("SEND_IPI not in the fast form");
    } else if (hc.call_code == HVCALL_SEND_IPI_EX) {
      if (hc.fast) fail("Linux never sends a fast SEND_IPI_EX");
      if (call.input.size() != 24u + 8u * hc.var_header_qwords) fail("Ex input size != 24 + 8 * varhead");
      if (hc.var_header_qwords > 64) fail("more than 64 banks");
    } else {
      fail("a hypercall other than SEND_IPI / SEND_IPI_EX");
    }
  }
  if (r.host.size() != r.send.hypercalls.size()) fail("one host outcome per hypercall");
  if (!c.cluster_ipi) {
    if (!r.send.hypercalls.empty() || !r.send.native || r.send.hv_returned) fail("no hooks but Hyper-V code ran");
  } else {
    if (!r.send.hv_returned) fail("hooks installed but no return value");
    if (!*r.send.hv_returned && !r.send.native) fail("false return without a native fallback");
    if (*r.send.hv_returned && r.send.native) fail("true return with a native fallback");
  }
  if (r.oracle) {
    std::vector<unsigned> want = r.send.intended_cpus;
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    if (r.oracle->intended != want) fail("oracle intended != the request");
  } else if (r.oracle_reason.empty()) {
    fail("oracle neither ran nor said why");
  }
  return 0;
}
