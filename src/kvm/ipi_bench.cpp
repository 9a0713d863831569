#include "kvm/ipi_bench.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "hv/partition.h"
#include "kvm/bench_guest.h"
#include "kvm/guest_program.h"
#include "kvm/hyperv_vmm.h"
#include "common/estimator.h"

namespace ipilab::kvm {

using namespace Xbyak::util;

const char* to_string(Mechanism m) {
  switch (m) {
    case Mechanism::X2apic: return "x2apic-physical";
    case Mechanism::KvmPv: return "kvm-pv";
    case Mechanism::HvFast: return "hyperv";
    case Mechanism::HvEx: return "hyperv-ex";
  }
  return "?";
}
const char* to_string(TargetState t) { return t == TargetState::Spin ? "spin" : "halt"; }
const char* to_string(Workload w) { return w == Workload::RoundTrip ? "ipi-roundtrip" : "call-single"; }
const char* to_string(TimingRule r) {
  switch (r) {
    case TimingRule::ByDefinition: return "by-definition";
    case TimingRule::IdleGap: return "idle-gap";
    case TimingRule::LongOperation: return "long-operation";
    case TimingRule::Batch: return "batch";
  }
  return "?";
}

std::optional<Mechanism> mechanism_from_string(std::string_view s) {
  for (Mechanism m : {Mechanism::X2apic, Mechanism::KvmPv, Mechanism::HvFast, Mechanism::HvEx})
    if (s == to_string(m)) return m;
  // The names before the measure and simulator names were unified (recorded JSON, scripts).
  if (s == "x2apic") return Mechanism::X2apic;
  if (s == "hv-fast") return Mechanism::HvFast;
  if (s == "hv-ex") return Mechanism::HvEx;
  return std::nullopt;
}

std::vector<std::string_view> mechanism_names() { return {"x2apic-physical", "kvm-pv", "hyperv", "hyperv-ex"}; }
std::optional<TargetState> target_from_string(std::string_view s) {
  for (TargetState t : {TargetState::Spin, TargetState::Halt})
    if (s == to_string(t)) return t;
  return std::nullopt;
}
std::optional<Workload> workload_from_string(std::string_view s) {
  for (Workload w : {Workload::RoundTrip, Workload::CallSingle})
    if (s == to_string(w)) return w;
  return std::nullopt;
}

std::string BenchCase::name() const {
  switch (kind) {
    case CaseKind::CounterRead: return "counter-read";
    case CaseKind::Loop: return "loop";
    case CaseKind::CpuidExit: return "cpuid-exit";
    case CaseKind::Ipi: break;
  }
  return fmt::format("{}/{}/{}", to_string(mechanism), to_string(workload), to_string(target));
}

std::optional<BenchCase> case_from_name(std::string_view name) {
  for (CaseKind k : {CaseKind::CounterRead, CaseKind::Loop, CaseKind::CpuidExit})
    if (name == BenchCase::of(k).name()) return BenchCase::of(k);
  const std::size_t a = name.find('/');
  const std::size_t b = a == std::string_view::npos ? a : name.find('/', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  const auto m = mechanism_from_string(name.substr(0, a));
  const auto w = workload_from_string(name.substr(a + 1, b - a - 1));
  const auto t = target_from_string(name.substr(b + 1));
  if (!m || !w || !t) return std::nullopt;
  return BenchCase::ipi(*m, *w, *t);
}

bool kvm_hypercall_works() {
  static std::once_flag once;
  static bool works = false;
  static std::string unavailable;
  std::call_once(once, [] {
    try {
      VmConfig cfg;
      cfg.vcpus = 1;
      cfg.timeout = std::chrono::milliseconds(1000);
      Vm vm(cfg);
      GuestProgram g(1);
      Xbyak::Label e;
      g.L(e);
      g.init_cpu();
      g.mov(eax, 12345);  // no such KVM hypercall: KVM answers -KVM_ENOSYS
      g.vmcall();
      g.mov(qword[r15 + static_cast<std::uint32_t>(offsetof(SharedArea, status))], rax);
      g.done();
      g.set_entry(0, e);
      vm.load(g.image());
      vm.run();
      works = vm.shared().status[0].v == static_cast<std::uint64_t>(-1000);
    } catch (const GuestError&) {
      works = false;
    } catch (const UnavailableError& e) {
      unavailable = e.what();
    }
  });
  if (!unavailable.empty()) throw UnavailableError(unavailable);
  return works;
}

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// Host side of the chunk protocol: fills CaseCtl at chunk start, collects at chunk end.
class Conductor {
 public:
  Conductor(Vm& vm, const RoundsConfig& c, std::vector<CaseResult*> cases, std::uint64_t slice)
      : vm_(vm), c_(c), cases_(std::move(cases)), slice_(slice) {}

  void on_sync(unsigned vcpu, std::uint64_t stage) {
    if (vcpu != kSenderVcpu) return;
    const std::size_t i = stage >> 8;
    if (i >= cases_.size()) throw std::runtime_error(fmt::format("guest synced for unknown case {}", i));
    current_ = i;
    CaseResult& r = *cases_[i];
    CaseCtl& ctl = *reinterpret_cast<CaseCtl*>(vm_.memory(kCaseCtlGpa + i * sizeof(CaseCtl), sizeof(CaseCtl)));
    SharedArea& sh = vm_.shared();
    if ((stage & 0xFF) == kSyncChunkStart) {
      const bool pilot = round_ == 0;
      ctl.batch_n = pilot ? 1 : r.batch_n;
      ctl.samples_max = pilot ? c_.pilot_samples : c_.samples_per_round;
      ctl.slice = slice_;
      ctl.warmup = c_.warmup;
      ctl.records_gpa = kSamplesGpa;
      exits_at_start_ = vm_.exits_so_far(kSenderVcpu);
      irqs_at_start_ = sh.irqs[kTargetVcpu].v;
      csd_at_start_ = sh.csd_calls.v;
      return;
    }
    // Chunk end.
    const std::uint64_t n = ctl.samples_done;
    if (n > ctl.samples_max) throw std::runtime_error("guest reported more samples than it was given");
    const auto* rec = reinterpret_cast<const std::uint64_t*>(vm_.memory(kSamplesGpa, std::max<std::uint64_t>(n, 1) * 16));
    std::vector<double> values;
    values.reserve(n);
    std::uint64_t iterations = 0;
    for (std::uint64_t k = 0; k < n; ++k) {
      const std::uint64_t elapsed = rec[2 * k], iters = rec[2 * k + 1];
      if (iters == 0) throw std::runtime_error("guest wrote a sample of zero iterations");
      values.push_back(static_cast<double>(elapsed) / static_cast<double>(iters));
      iterations += iters;
    }
    const bool counts_iterations = r.bench.kind != CaseKind::CounterRead;
    r.loop_iterations += counts_iterations ? iterations + c_.warmup : 0;
    if (round_ == 0) {
      r.pilot = std::move(values);
    } else {
      r.rounds.push_back(std::move(values));
      r.iterations_run += counts_iterations ? iterations : 0;
      if (ctl.truncated) ++r.rounds_truncated;
    }
    const ExitCounts now = vm_.exits_so_far(kSenderVcpu);
    for (const auto& [k, v] : now) {
      const std::uint64_t before = exits_at_start_.count(k) ? exits_at_start_.at(k) : 0;
      const std::uint64_t extra = k == "io:ucall" ? 1 : 0;  // the chunk-end sync itself
      if (v > before + extra) r.sender_exits[k] += v - before - extra;
    }
    r.target_irqs += sh.irqs[kTargetVcpu].v - irqs_at_start_;
    r.csd_calls += sh.csd_calls.v - csd_at_start_;
    if (i + 1 == cases_.size()) {
      if (round_ == 0) calibrate();
      ++round_;
      if (c_.progress) c_.progress(round_, c_.rounds + 1);
    }
  }

  std::size_t current() const { return current_; }
  unsigned round() const { return round_; }

 private:
  // After the pilot: iterations per sample for every case (estimator.h).
  void calibrate() {
    const double counter = median_of(cases_.front()->pilot);  // counter-read is always first
    counter_read_ = counter;
    for (CaseResult* r : cases_) {
      const BenchCase& b = r->bench;
      r->pilot_op = b.kind == CaseKind::CounterRead ? counter : median_of(r->pilot) - counter;
      if (b.kind == CaseKind::CounterRead) {
        r->batch_n = 1;
        r->timing = TimingRule::ByDefinition;
      } else if (b.kind == CaseKind::Ipi && b.target == TargetState::Halt) {
        r->batch_n = 1;
        r->timing = TimingRule::IdleGap;
      } else {
        std::uint64_t n = timing::iterations_for_bias(counter, r->pilot_op, c_.max_bias, c_.max_batch);
        // Keep a sample well inside a round's slice so the budget can still stop the chunk.
        if (slice_ > 0 && r->pilot_op > 0)
          n = std::min<std::uint64_t>(n, std::max<std::uint64_t>(
                                             1, static_cast<std::uint64_t>(static_cast<double>(slice_) /
                                                                           (4.0 * r->pilot_op))));
        r->batch_n = n;
        r->timing = n == 1 ? TimingRule::LongOperation : TimingRule::Batch;
      }
      r->iterations_planned = r->bench.kind == CaseKind::CounterRead
                                  ? 0
                                  : static_cast<std::uint64_t>(c_.rounds) * c_.samples_per_round * r->batch_n;
    }
  }

 public:
  double counter_read_ = 0;

 private:
  Vm& vm_;
  const RoundsConfig& c_;
  std::vector<CaseResult*> cases_;
  std::uint64_t slice_;
  unsigned round_ = 0;
  std::size_t current_ = 0;
  ExitCounts exits_at_start_;
  std::uint64_t irqs_at_start_ = 0, csd_at_start_ = 0;
};

// The cases of a run, counter-read first, each once; the settings checked.
RoundsResult plan_cases(const RoundsConfig& c) {
  if (c.rounds == 0) throw std::invalid_argument("at least one round");
  if (c.samples_per_round == 0 || c.pilot_samples == 0) throw std::invalid_argument("at least one sample per round");
  if (c.samples_per_round > kMaxChunkRecords || c.pilot_samples > kMaxChunkRecords)
    throw std::invalid_argument(fmt::format("at most {} samples per round", kMaxChunkRecords));
  if (!(c.max_bias > 0) || c.max_batch == 0 || c.budget_seconds_per_case < 0 || c.halt_gap_us < 0)
    throw std::invalid_argument("bad estimator or budget settings");

  RoundsResult res;
  auto add = [&](const BenchCase& b) {
    CaseResult r;
    r.bench = b;
    res.cases.push_back(std::move(r));
  };
  add(BenchCase::counter_read());
  for (const BenchCase& b : c.cases) {
    if (b.kind == CaseKind::CounterRead) continue;
    for (const CaseResult& have : res.cases)
      if (have.bench == b) throw std::invalid_argument("case listed twice: " + b.name());
    add(b);
  }
  if (res.cases.size() > kMaxBenchCases)
    throw std::invalid_argument(fmt::format("at most {} cases in one run", kMaxBenchCases));
  return res;
}

// Two vCPUs on the given host CPUs, with the Hyper-V signature for Hyper-V cases, and a timeout that
// bounds the whole run.
VmConfig bench_vm_config(const RoundsConfig& c, bool hv, std::size_t cases_run) {
  VmConfig vc;
  vc.vcpus = 2;
  vc.host_pus = c.host_pus;
  if (hv) {
    vc.signature = HypervisorSignature::HyperV;
    vc.user_msrs = HypervVmm::trapped_msrs();
  }
  // The whole run: every case's budget, plus the pilot, plus a margin for slow exits.
  const double budget_total = c.budget_seconds_per_case * static_cast<double>(cases_run) *
                              (1.0 + 1.0 / static_cast<double>(c.rounds));
  // Without a budget nothing bounds a round but its sample count: allow ten minutes.
  const double bound_s = c.budget_seconds_per_case > 0 ? std::max(60.0, 3 * budget_total + 60) : 600.0;
  vc.timeout = c.timeout.count() > 0 ? c.timeout : std::chrono::milliseconds(static_cast<long long>(bound_s * 1000));
  return vc;
}

}  // namespace

RoundsResult run_bench_rounds(const RoundsConfig& c) {
  RoundsResult res = plan_cases(c);
  check_kvm_available(false);
  bool need_pv = false, hv = false;
  for (const CaseResult& r : res.cases) {
    need_pv |= r.bench.kind == CaseKind::Ipi && r.bench.mechanism == Mechanism::KvmPv;
    hv |= r.bench.is_hyperv_ipi();
  }
  const bool pv_works = need_pv && kvm_hypercall_works();
  std::vector<CaseResult*> run;
  std::vector<BenchCase> guest_cases;
  for (CaseResult& r : res.cases) {
    if (r.bench.kind == CaseKind::Ipi && r.bench.mechanism == Mechanism::KvmPv && !pv_works) {
      r.available = false;
      r.unavailable_reason =
          "VMCALL never completes on this KVM (the PVM backend, kvm_pvm, does not handle it for ordinary "
          "long-mode guests): the KVM PV send-IPI hypercall cannot be measured here";
      continue;
    }
    run.push_back(&r);
    guest_cases.push_back(r.bench);
  }

  const VmConfig vc = bench_vm_config(c, hv, run.size());
  Vm vm(vc);
  std::unique_ptr<HypervVmm> hvm;
  if (hv) {
    hvm = std::make_unique<HypervVmm>(hv::PartitionConfig::identity(2), std::vector<std::uint32_t>{0, 1});
    vm.set_exit_handler(hvm.get());
  }
  res.tsc_khz = vm.tsc_khz();
  res.host_pus = {vm.host_pu(0), vm.host_pu(1)};
  SharedArea& sh = vm.shared();
  sh.halt_gap_tsc = static_cast<std::uint64_t>(c.halt_gap_us * static_cast<double>(res.tsc_khz) / 1000.0);
  sh.target_mode.v = static_cast<std::uint64_t>(TargetMode::Halt);
  sh.rounds_total.v = c.rounds + 1;
  sh.round.v = 0;
  sh.fake_clock.v = 0;
  // Slice of the budget per round and case, in counter units (none with the fake counter).
  const std::uint64_t slice =
      c.fake_counter || c.budget_seconds_per_case == 0
          ? 0
          : std::max<std::uint64_t>(1, static_cast<std::uint64_t>(c.budget_seconds_per_case / c.rounds *
                                                                  static_cast<double>(res.tsc_khz) * 1000.0));

  BenchGuestOptions go;
  go.hyperv = hv;
  go.fake_counter = c.fake_counter;
  vm.load(build_bench_guest(guest_cases, go));
  Conductor conductor(vm, c, run, slice);
  vm.set_sync_handler([&](unsigned vcpu, std::uint64_t stage) { conductor.on_sync(vcpu, stage); });
  try {
    res.report = vm.run();
  } catch (const GuestError& e) {
    // Same error, with the case and round in front of the original detail.
    const std::string head = fmt::format("guest vCPU {}: {} at RIP {:#x}", e.vcpu(), e.exit_reason(), e.rip());
    std::string detail = e.what();
    detail = detail.rfind(head, 0) == 0 ? detail.substr(std::min(detail.size(), head.size() + 2)) : detail;
    throw GuestError(e.vcpu(), e.exit_reason(), e.rip(),
                     fmt::format("while measuring {} ({}){}{}", run.at(conductor.current())->bench.name(),
                                 conductor.round() == 0 ? std::string("pilot round")
                                                        : fmt::format("round {}", conductor.round()),
                                 detail.empty() ? "" : ": ", detail));
  }
  res.counter_read = conductor.counter_read_;
  res.rounds = conductor.round() > 0 ? conductor.round() - 1 : 0;
  return res;
}

}  // namespace ipilab::kvm
