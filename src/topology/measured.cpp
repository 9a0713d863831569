#include "topology/measured.h"

#include <cmath>

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::topology {

void apply_measured_c2c(Host& host, const std::vector<int>& cpu_ids, const std::vector<std::vector<double>>& m,
                        std::string source, bool keep_pairs) {
  const std::size_t n = cpu_ids.size();
  if (m.size() != n) throw InputError("c2c matrix", fmt::format("{} rows for {} CPUs", m.size(), n));
  for (const auto& row : m)
    if (row.size() != n) throw InputError("c2c matrix", fmt::format("a row has {} entries for {} CPUs", row.size(), n));
  std::vector<const Cpu*> cpus;
  for (int id : cpu_ids) {
    const Cpu* c = host.find_cpu(id);
    if (!c) throw InputError("c2c matrix", fmt::format("CPU {} is not on host '{}'", id, host.name));
    cpus.push_back(c);
  }
  const auto nodes = static_cast<std::size_t>(host.nodes);
  std::vector<std::vector<double>> sum(nodes, std::vector<double>(nodes, 0.0));
  std::vector<std::vector<int>> cnt(nodes, std::vector<int>(nodes, 0));
  double smt_sum = 0;
  int smt_cnt = 0;
  Latency lat;
  lat.source = std::move(source);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double v = m[i][j];
      if (i == j || !std::isfinite(v) || v < 0) continue;
      if (cpus[i]->core == cpus[j]->core) {
        smt_sum += v;
        ++smt_cnt;
      } else {
        const auto a = static_cast<std::size_t>(cpus[i]->node), b = static_cast<std::size_t>(cpus[j]->node);
        sum[a][b] += v;
        ++cnt[a][b];
      }
      if (keep_pairs) lat.pairs.push_back(PairLatency{cpus[i]->id, cpus[j]->id, v});
    }
  lat.node_ns = host.latency.node_ns;
  for (std::size_t a = 0; a < nodes; ++a)
    for (std::size_t b = 0; b < nodes; ++b)
      if (cnt[a][b] > 0) lat.node_ns[a][b] = sum[a][b] / cnt[a][b];
  if (smt_cnt > 0) lat.smt_ns = smt_sum / smt_cnt;
  host.latency = std::move(lat);
  host.finalize();
}

}  // namespace ipilab::topology
