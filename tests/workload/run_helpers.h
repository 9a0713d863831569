// Test helpers: build a RunSpec from a preset, a shipped profile and a [workload] TOML snippet.
#pragma once

#include <string>
#include <vector>

#include "topology/presets.h"
#include "topology/toml_read.h"
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

}  // namespace ipilab::workload::testing
