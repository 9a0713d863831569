#include "topology/discover.h"

#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::topology {

namespace {

struct TopologyHandle {
  hwloc_topology_t t = nullptr;
  ~TopologyHandle() {
    if (t) hwloc_topology_destroy(t);
  }
};

constexpr double kLocalNs = 45.0;   // see discover.h
constexpr double kRemoteNs = 130.0;

double read_base_ghz() {
  for (const char* f : {"/sys/devices/system/cpu/cpu0/cpufreq/base_frequency",
                        "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"}) {
    std::ifstream in(f);
    long khz = 0;
    if (in >> khz && khz > 0) return static_cast<double>(khz) / 1e6;
  }
  return 0.0;
}

}  // namespace

Host discover_host() {
  TopologyHandle h;
  if (hwloc_topology_init(&h.t) != 0) throw UnavailableError("hwloc: cannot initialise a topology");
  if (hwloc_topology_load(h.t) != 0) throw UnavailableError("hwloc: cannot load this machine's topology");
  hwloc_topology_t topo = h.t;

  Host host;
  char hostname[256] = {};
  if (::gethostname(hostname, sizeof hostname - 1) != 0) hostname[0] = '\0';
  host.name = hostname[0] ? fmt::format("host-{}", hostname) : "this-host";
  host.description = "read from this machine with hwloc by 'ipilab topo --host'";
  host.source = fmt::format("hwloc {} discovery", HWLOC_API_VERSION >= 0x20000 ? "2.x" : "1.x");
  host.base_ghz = read_base_ghz();

  // NUMA nodes holding CPUs, densely re-indexed in hwloc logical order.
  std::map<unsigned, int> pu_node;  // PU os_index -> dense node
  const int n_numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  std::vector<int> dense_of_logical(static_cast<std::size_t>(std::max(n_numa, 0)), -1);
  int dense_nodes = 0;
  for (int i = 0; i < n_numa; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (!node || !node->cpuset || hwloc_bitmap_iszero(node->cpuset)) continue;
    dense_of_logical[static_cast<std::size_t>(i)] = dense_nodes;
    unsigned idx;
    hwloc_bitmap_foreach_begin(idx, node->cpuset) {
      pu_node.emplace(idx, dense_nodes);
    }
    hwloc_bitmap_foreach_end();
    ++dense_nodes;
  }

  const int n_pu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  if (n_pu <= 0) throw UnavailableError("hwloc: no CPU found");
  std::map<unsigned, int> socket_dense, core_dense;
  for (int i = 0; i < n_pu; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    Cpu c;
    c.id = static_cast<int>(pu->os_index);
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
    const unsigned pkg_key = pkg ? pkg->logical_index : 0;
    c.socket = socket_dense.try_emplace(pkg_key, static_cast<int>(socket_dense.size())).first->second;
    if (pkg && host.cpu_model.empty())
      if (const char* m = hwloc_obj_get_info_by_name(pkg, "CPUModel")) host.cpu_model = m;
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    const unsigned core_key = core ? core->logical_index : 0x80000000u + pu->logical_index;
    c.core = core_dense.try_emplace(core_key, static_cast<int>(core_dense.size())).first->second;
    c.thread = 0;
    if (core && core->cpuset) {
      unsigned idx;
      hwloc_bitmap_foreach_begin(idx, core->cpuset) {
        if (idx < pu->os_index) ++c.thread;
      }
      hwloc_bitmap_foreach_end();
    }
    auto it = pu_node.find(pu->os_index);
    c.node = it != pu_node.end() ? it->second : 0;
    host.cpus.push_back(c);
  }
  const int nodes = std::max(dense_nodes, 1);

  // Latency estimate from SLIT when present.
  host.latency.node_ns.assign(static_cast<std::size_t>(nodes), std::vector<double>(static_cast<std::size_t>(nodes), kRemoteNs));
  for (int a = 0; a < nodes; ++a) host.latency.node_ns[static_cast<std::size_t>(a)][static_cast<std::size_t>(a)] = kLocalNs;
  host.latency.source = fmt::format(
      "ESTIMATE, not measured: {} ns same node, {} ns between nodes (no ACPI SLIT); replace with "
      "'ipilab topo --host --measure' or nviennot/core-to-core-latency figures", kLocalNs, kRemoteNs);
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (n_numa > 1 &&
      hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
      nr >= 1 && dist) {
    bool used = false;
    for (unsigned a = 0; a < dist->nbobjs; ++a)
      for (unsigned b = 0; b < dist->nbobjs; ++b) {
        const hwloc_obj_t oa = dist->objs[a], ob = dist->objs[b];
        if (!oa || !ob || oa->logical_index >= dense_of_logical.size() || ob->logical_index >= dense_of_logical.size()) continue;
        const int da = dense_of_logical[oa->logical_index], db = dense_of_logical[ob->logical_index];
        if (da < 0 || db < 0) continue;
        host.latency.node_ns[static_cast<std::size_t>(da)][static_cast<std::size_t>(db)] =
            kLocalNs * static_cast<double>(dist->values[a * dist->nbobjs + b]) / 10.0;
        used = true;
      }
    if (used)
      host.latency.source = fmt::format(
          "ESTIMATE, not measured: ACPI SLIT distances from hwloc scaled so 10 (local) = {} ns; replace "
          "with 'ipilab topo --host --measure' or nviennot/core-to-core-latency figures", kLocalNs);
    hwloc_distances_release(topo, dist);
  }
  host.finalize();
  return host;
}

std::vector<int> pu_os_indexes() {
  TopologyHandle h;
  if (hwloc_topology_init(&h.t) != 0 || hwloc_topology_load(h.t) != 0)
    throw UnavailableError("hwloc: cannot load this machine's topology");
  std::vector<int> out;
  const int n = hwloc_get_nbobjs_by_type(h.t, HWLOC_OBJ_PU);
  for (int i = 0; i < n; ++i) out.push_back(static_cast<int>(hwloc_get_obj_by_type(h.t, HWLOC_OBJ_PU, static_cast<unsigned>(i))->os_index));
  return out;
}

}  // namespace ipilab::topology
