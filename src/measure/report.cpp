#include "measure/report.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::measure {

namespace {

bool is_hv(kvm::Mechanism m) { return m == kvm::Mechanism::HvFast || m == kvm::Mechanism::HvEx; }

const KvmCase* find_case(const MeasureReport& r, kvm::Mechanism m, kvm::TargetState t, kvm::Workload w) {
  for (const auto& c : r.kvm)
    if (c.mechanism == m && c.target == t && c.workload == w && c.available && c.cycles.count > 0) return &c;
  return nullptr;
}

nlohmann::json stats_json(const SampleStats& s, std::uint64_t tsc_khz) {
  auto ns = [&](double c) { return cycles_to_ns(c, tsc_khz); };
  return {{"count", s.count},
          {"cycles", {{"median", s.median}, {"p99", s.p99}, {"mean", s.mean}, {"min", s.min}, {"max", s.max},
                      {"stddev", s.stddev}, {"batch_medians", s.batch_medians}}},
          {"ns", {{"median", ns(s.median)}, {"p99", ns(s.p99)}, {"mean", ns(s.mean)}, {"min", ns(s.min)},
                  {"max", ns(s.max)}}},
          {"cv_of_batch_medians", s.cv}};
}

std::string toml_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') { o += "\\n"; continue; }
    o += c;
  }
  return o + "\"";
}

}  // namespace

MeasureReport run_measure(const MeasureOptions& o) {
  if (o.iterations == 0 || o.batches == 0) throw InputError("--iterations", "must be > 0");
  const auto t0 = std::chrono::steady_clock::now();
  MeasureReport r;
  r.host = probe_host();
  r.options = o;
  if (o.kvm) {
    try {
      kvm::check_kvm_available(false);
    } catch (const UnavailableError& e) {
      if (!o.c2c) throw;
      r.kvm_unavailable = e.what();
    }
  }
  if (o.kvm && r.kvm_unavailable.empty()) {
    const kvm::ExitBenchResult ex = kvm::run_cpuid_exit_bench(std::max<std::uint64_t>(o.iterations, 1000));
    r.cpuid_exit = summarize(ex.samples_cycles, o.batches);
    r.tsc_khz = ex.tsc_khz;
    for (kvm::Mechanism m : o.mechanisms)
      for (kvm::Workload w : o.workloads)
        for (kvm::TargetState t : o.targets) {
          KvmCase c;
          c.mechanism = m;
          c.target = t;
          c.workload = w;
          kvm::BenchConfig bc;
          bc.mechanism = m;
          bc.target = t;
          bc.workload = w;
          bc.iterations = o.iterations;
          bc.batches = o.batches;
          bc.warmup = o.warmup;
          bc.halt_gap_us = o.halt_gap_us;
          bc.max_seconds = o.max_seconds_per_case;
          try {
            const kvm::BenchResult b = kvm::run_ipi_bench(bc);
            c.cycles = summarize(b.samples_cycles, o.batches);
            c.tsc_khz = b.tsc_khz;
            c.loop_iterations = b.loop_iterations;
            c.truncated = b.truncated;
            c.sender_loop_exits = b.sender_loop_exits;
            c.exits = b.report.exits;
            c.host_pus = b.host_pus;
          } catch (const UnavailableError& e) {
            c.available = false;
            c.unavailable_reason = e.what();
          }
          r.kvm.push_back(std::move(c));
        }
  }
  if (o.c2c) {
    C2cConfig cc;
    cc.round_trips = static_cast<unsigned>(std::min<std::uint64_t>(o.iterations, 1000000));
    cc.samples = o.c2c_samples;
    r.c2c = measure_c2c(cc);
  }
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

nlohmann::json to_json(const MeasureReport& r) {
  nlohmann::json j;
  j["host"] = to_json(r.host);
  j["tsc_khz"] = r.tsc_khz;
  j["wall_seconds"] = r.wall_seconds;
  j["options"] = {{"iterations_per_batch", r.options.iterations},
                  {"batches", r.options.batches},
                  {"warmup", r.options.warmup},
                  {"halt_gap_us", r.options.halt_gap_us},
                  {"max_seconds_per_case", r.options.max_seconds_per_case}};
  if (!r.kvm_unavailable.empty()) j["kvm_unavailable"] = r.kvm_unavailable;
  if (r.cpuid_exit) j["cpuid_exit"] = stats_json(*r.cpuid_exit, r.tsc_khz);
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : r.kvm) {
    nlohmann::json k = {{"mechanism", kvm::to_string(c.mechanism)},
                        {"target", kvm::to_string(c.target)},
                        {"workload", kvm::to_string(c.workload)},
                        {"available", c.available}};
    if (!c.available) {
      k["unavailable_reason"] = c.unavailable_reason;
    } else {
      k["stats"] = stats_json(c.cycles, c.tsc_khz);
      k["tsc_khz"] = c.tsc_khz;
      k["loop_iterations"] = c.loop_iterations;
      k["truncated_by_time_budget"] = c.truncated;
      k["sender_user_exits_in_loop"] = c.sender_loop_exits;
      k["user_exits_per_vcpu"] = c.exits;
      k["host_pus"] = c.host_pus;
      if (is_hv(c.mechanism))
        k["note"] = "Hyper-V hypercalls are emulated in ipilab's VMM: one exit to user space per hypercall";
    }
    cases.push_back(k);
  }
  j["kvm"] = cases;
  if (r.c2c) j["c2c"] = c2c_json(*r.c2c);
  return j;
}

std::string to_table(const MeasureReport& r) {
  const HostInfo& h = r.host;
  std::string o = fmt::format("Host: {} | {} CPUs | kernel {} | KVM backend {} | nested: {}{}\n", h.cpu_model, h.cpus,
                              h.kernel, h.kvm_backend.empty() ? "none" : h.kvm_backend, h.nested ? "yes" : "no",
                              h.nested ? fmt::format(" (L0 hypervisor \"{}\")", h.hypervisor_vendor) : "");
  if (!r.kvm_unavailable.empty()) o += fmt::format("KVM: unavailable: {}\n", r.kvm_unavailable);
  if (r.cpuid_exit)
    o += fmt::format("VM exit + entry (CPUID, handled in KVM): median {:.0f} cycles = {:.0f} ns (TSC {} kHz)\n",
                     r.cpuid_exit->median, cycles_to_ns(r.cpuid_exit->median, r.tsc_khz), r.tsc_khz);
  if (!r.kvm.empty()) {
    o += fmt::format("\n{:<14} {:<6} {:<9} {:>9} {:>9} {:>9} {:>6} {:>10} {:>10} {:>7}  {}\n", "workload", "target",
                     "mechanism", "median", "p99", "mean", "CV", "median ns", "p99 ns", "samples",
                     "user exits in loop (sender)");
    o += fmt::format("{:<14} {:<6} {:<9} {:>9} {:>9} {:>9} {:>6}\n", "", "", "", "cycles", "cycles", "cycles", "%");
    for (const auto& c : r.kvm) {
      if (!c.available) {
        o += fmt::format("{:<14} {:<6} {:<9} unavailable: {}\n", kvm::to_string(c.workload), kvm::to_string(c.target),
                         kvm::to_string(c.mechanism), c.unavailable_reason);
        continue;
      }
      std::string exits;
      for (const auto& [k, v] : c.sender_loop_exits) exits += fmt::format("{}{}={}", exits.empty() ? "" : " ", k, v);
      if (exits.empty()) exits = "0";
      o += fmt::format("{:<14} {:<6} {:<9} {:>9.0f} {:>9.0f} {:>9.0f} {:>6.1f} {:>10.0f} {:>10.0f} {:>7}{}  {}\n",
                       kvm::to_string(c.workload), kvm::to_string(c.target), kvm::to_string(c.mechanism),
                       c.cycles.median, c.cycles.p99, c.cycles.mean, c.cycles.cv * 100,
                       cycles_to_ns(c.cycles.median, c.tsc_khz), cycles_to_ns(c.cycles.p99, c.tsc_khz), c.cycles.count,
                       c.truncated ? "*" : " ", exits);
    }
    o += "Notes: hv-fast/hv-ex are executed by ipilab's VMM in user space (hv::Partition): one exit to user space\n"
         "per hypercall, an honest but higher cost than an in-kernel implementation. x2apic/kvm-pv must show 0.\n"
         "CV = coefficient of variation of the batch medians. * = the time budget cut the loop (fewer samples).\n";
    if (h.kvm_backend == "kvm_pvm")
      o += "This KVM is the PVM backend (no VMX): a spinning target sees an IPI only at its next VM exit, so\n"
           "'spin' figures measure that exit's arrival, not interrupt delivery; VMCALL is not handled.\n";
  }
  if (r.c2c) o += "\n" + c2c_table(*r.c2c);
  o += fmt::format("\n(total {:.1f} s)\n", r.wall_seconds);
  return o;
}

std::string to_profile_toml(const MeasureReport& r) {
  const HostInfo& h = r.host;
  const std::string prov = fmt::format("measured by `ipilab measure` on {} ({}), kernel {}, KVM backend {}{}, {}",
                                       h.hostname, h.cpu_model, h.kernel, h.kvm_backend.empty() ? "none" : h.kvm_backend,
                                       h.nested ? " (nested)" : "", h.date_utc);
  std::string o = "# Cost profile written by `ipilab measure --profile-out`: every value below is a primitive measured\n"
                  "# on this host (or derived from two measurements, said in its note), with its provenance.\n";
  o += fmt::format("[profile]\nname = \"this-host\"\ndescription = {}\n",
                   toml_string(fmt::format("measured on {} ({} CPUs, {})", h.cpu_model, h.cpus, h.date_utc)));
  const double ghz = r.tsc_khz > 0 ? static_cast<double>(r.tsc_khz) / 1e6 : 0;
  if (ghz > 0)
    o += fmt::format("clock_ghz = {:.6f}\nclock_source = \"guest TSC frequency from KVM_GET_TSC_KHZ ({} kHz)\"\n", ghz,
                     r.tsc_khz);
  else
    o += "clock_ghz = 1.0\nclock_source = \"no KVM: placeholder clock, only ns values are used\"\n";

  auto entry = [&](const std::string& key, double value, const char* unit, double spread, const std::string& method,
                   const std::string& note) {
    o += fmt::format("\n[cost.{}]\nvalue = {:.2f}\nunit = \"{}\"\nspread = {:.4f}\nsource = {}\n", key, value, unit,
                     std::isfinite(spread) && spread >= 0 ? spread : 0.0, toml_string(method + "; " + prov));
    if (!note.empty()) o += fmt::format("note = {}\n", toml_string(note));
  };
  // Robust relative spread: (p90 - p10) / (2 * 1.2816 * median), the relative sigma of a normal with
  // that 10-90 range; stddev/mean would be dominated by the host's multi-ms preemption outliers.
  auto spread_of = [](const SampleStats& s) { return s.median > 0 ? (s.p90 - s.p10) / (2 * 1.2816 * s.median) : 0.0; };

  if (r.cpuid_exit && r.cpuid_exit->count > 0)
    entry("vm.exit_entry", r.cpuid_exit->median, "cycles", spread_of(*r.cpuid_exit),
          "median cycles of one CPUID (leaf 0) exit handled in KVM, kvm-unit-tests vmexit/cpuid shape",
          fmt::format("{} samples; p99 {:.0f} cycles; includes KVM's CPUID emulation", r.cpuid_exit->count,
                      r.cpuid_exit->p99));
  if (r.c2c && r.c2c->pus.size() >= 2)
    entry("mem.cacheline_same_node", r.c2c->median_pair_ns(), "ns", 0,
          "median over CPU pairs of the one-way CAS ping-pong latency (core-to-core-latency method)",
          fmt::format("{} CPUs, {} round trips x {} samples per pair", r.c2c->pus.size(), r.c2c->round_trips,
                      r.c2c->samples));
  using kvm::Mechanism, kvm::TargetState, kvm::Workload;
  const KvmCase* x_halt = find_case(r, Mechanism::X2apic, TargetState::Halt, Workload::RoundTrip);
  const KvmCase* x_spin = find_case(r, Mechanism::X2apic, TargetState::Spin, Workload::RoundTrip);
  const KvmCase* hv_halt = find_case(r, Mechanism::HvFast, TargetState::Halt, Workload::RoundTrip);
  if (x_halt && hv_halt && hv_halt->cycles.median > x_halt->cycles.median)
    entry("hv.hypercall_entry_exit", hv_halt->cycles.median - x_halt->cycles.median, "cycles", 0,
          "derived: median hv-fast halt round trip minus median x2apic halt round trip",
          "ipilab's user-space Hyper-V emulation: the exit to user space, register reads, hv::Partition::execute "
          "and KVM_SIGNAL_MSI, beyond an in-kernel ICR-write exit");
  if (x_halt && x_spin && x_spin->cycles.median < x_halt->cycles.median)
    entry("vcpu.halt_wakeup", x_halt->cycles.median - x_spin->cycles.median, "cycles", 0,
          "derived: median x2apic halt round trip minus median x2apic spin round trip", "");
  else if (x_halt && x_spin)
    o += "\n# vcpu.halt_wakeup not written: the spinning-target round trip was not faster than the halted one\n"
         "# (on a PVM host a spinning target only sees the IPI at its next VM exit).\n";

  o += "\n# Measured round trips (median TSC cycles; for the this-host scenario to compare against):\n";
  for (const auto& c : r.kvm) {
    if (!c.available) {
      o += fmt::format("#   {:<14} {:<5} {:<8} unavailable\n", kvm::to_string(c.workload), kvm::to_string(c.target),
                       kvm::to_string(c.mechanism));
      continue;
    }
    o += fmt::format("#   {:<14} {:<5} {:<8} median {:.0f} p99 {:.0f} cv {:.3f} n {}\n", kvm::to_string(c.workload),
                     kvm::to_string(c.target), kvm::to_string(c.mechanism), c.cycles.median, c.cycles.p99, c.cycles.cv,
                     c.cycles.count);
  }
  return o;
}

}  // namespace ipilab::measure
