// Test helpers: build a RunSpec from a preset, a shipped profile and a [workload] TOML snippet.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "topology/presets.h"
#include "topology/toml_read.h"
#include "workload/mechanism.h"
#include "workload/vm_run.h"
#include "workload/workload.h"

namespace ipilab::workload::testing {

inline std::string source_dir() { return IPILAB_SOURCE_DIR; }

struct Setup {
  topology::Host host;
  RunSpec spec;
};

/// vCPU i pinned to pcpus[i]; `halted` vCPUs start in HLT; vp overrides as (cpu, vp).
inline Setup make_setup(const std::string& preset, const std::string& profile, const std::vector<int>& pcpus,
                        int nr_cpus, const std::vector<int>& halted, const std::string& workload_toml,
                        const std::vector<std::pair<int, std::uint32_t>>& vp = {}, std::uint64_t iterations = 4000) {
  Setup s;
  s.host = topology::load_preset(preset);
  s.spec.host = &s.host;
  s.spec.vm = topology::Vm::make(s.host, static_cast<int>(pcpus.size()), pcpus, nr_cpus);
  for (int h : halted) s.spec.vm.vcpus[static_cast<std::size_t>(h)].initial_state = topology::VcpuState::Halted;
  for (auto [cpu, v] : vp) s.spec.vm.vcpus[static_cast<std::size_t>(cpu)].vp_index = v;
  s.spec.profile = cost::Profile::load_file(source_dir() + "/profiles/" + profile);
  s.spec.params = Params(toml_read::parse(workload_toml, "test.toml"), "test.toml");
  s.spec.iterations = iterations;
  s.spec.warmup = 50;
  s.spec.seed = 7;
  return s;
}

inline RunResult run(Setup& s, const std::string& workload) {
  s.spec.host = &s.host;
  return find_workload(workload, "test").make()->run(s.spec);
}

/// Every cost key that `workload`, the x86 mechanisms and the core read is fixed: the listed ones
/// to these ns, the rest to 0.
inline void fix_x86_costs(cost::Profile& p, const std::string& workload, const std::map<std::string, double>& ns) {
  std::set<std::string> keys;
  for (const auto* m : list_mechanisms())
    if (m->arch == Arch::X86)
      for (const auto& k : m->cost_keys) keys.emplace(k.name);
  for (const auto& k : find_workload(workload, "test").cost_keys) keys.emplace(k.name);
  for (const auto& k : core_cost_keys()) keys.emplace(k.name);
  for (const std::string& k : keys) {
    const auto it = ns.find(k);
    p.set(k, it == ns.end() ? 0.0 : it->second, cost::Unit::Ns, 0, "test");
  }
}

/// The counter `name` of a run, 0 when the run did not count it.
inline std::uint64_t counter(const RunResult& r, const std::string& name) {
  const auto it = r.counters.find(name);
  return it == r.counters.end() ? 0 : it->second;
}

/// CPUs 0 .. n-1, the pCPU list of a VM pinned one vCPU per CPU from CPU 0.
inline std::vector<int> first_n(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

}  // namespace ipilab::workload::testing
