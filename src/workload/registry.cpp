#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "common/registry.h"
#include "common/suggest.h"
#include "workload/builtin.h"
#include "workload/workload.h"

namespace ipilab::workload {
namespace {

const std::vector<WorkloadInfo>& registry() {
  // One line per workload (builtin.h); sorted by name for listings.
  static const std::vector<WorkloadInfo> all = sorted_by_name(std::vector<WorkloadInfo>{
      describe_smp_call_function_single(), describe_ipi_hw(), describe_multicast(), describe_kick(),
      describe_storm(), describe_wakeup(), describe_its_commands(), describe_kvm_bench(), describe_ipi_benchmark(),
      describe_mmio_read_vgic()});
  return all;
}

}  // namespace

std::vector<const WorkloadInfo*> list_workloads() { return entries_of(registry()); }

const WorkloadInfo& find_workload(std::string_view name, std::string_view place) {
  if (const WorkloadInfo* w = entry_named(registry(), name)) return *w;
  throw InputError(std::string(place),
                   fmt::format("unknown workload \"{}\"{} (known: {})", name,
                               did_you_mean_in(name, registry(), [](const auto& w) { return w.name; }),
                               names_of(registry())));
}

}  // namespace ipilab::workload
