#include "topology/host.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "common/cpu_list.h"
#include "common/error.h"

namespace ipilab::topology {

namespace {
std::uint64_t pair_key(int a, int b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}
}  // namespace

void Host::finalize() {
  const std::string where = name.empty() ? std::string("host") : fmt::format("host '{}'", name);
  auto bad = [&](std::string reason) { throw InputError(where, std::move(reason)); };
  if (cpus.empty()) bad("has no CPUs");
  std::sort(cpus.begin(), cpus.end(), [](const Cpu& a, const Cpu& b) { return a.id < b.id; });
  int max_id = -1, max_socket = -1, max_node = -1;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const Cpu& c = cpus[i];
    if (c.id < 0 || c.socket < 0 || c.node < 0 || c.core < 0 || c.thread < 0)
      bad(fmt::format("CPU {}: negative id, socket, node, core or thread", c.id));
    if (i > 0 && cpus[i - 1].id == c.id) bad(fmt::format("CPU {} is listed twice", c.id));
    max_id = std::max(max_id, c.id);
    max_socket = std::max(max_socket, c.socket);
    max_node = std::max(max_node, c.node);
  }
  sockets = max_socket + 1;
  nodes = max_node + 1;
  index_of_id_.assign(static_cast<std::size_t>(max_id) + 1, -1);
  for (std::size_t i = 0; i < cpus.size(); ++i) index_of_id_[static_cast<std::size_t>(cpus[i].id)] = static_cast<int>(i);

  node_socket_.assign(static_cast<std::size_t>(nodes), -1);
  std::unordered_map<int, std::pair<int, int>> core_place;  // core -> (socket, node)
  for (const Cpu& c : cpus) {
    int& s = node_socket_[static_cast<std::size_t>(c.node)];
    if (s == -1) s = c.socket;
    else if (s != c.socket) bad(fmt::format("NUMA node {} has CPUs in sockets {} and {}", c.node, s, c.socket));
    auto [it, fresh] = core_place.try_emplace(c.core, c.socket, c.node);
    if (!fresh && it->second != std::pair{c.socket, c.node})
      bad(fmt::format("core {} has CPUs in two nodes or sockets", c.core));
  }
  for (int n = 0; n < nodes; ++n)
    if (node_socket_[static_cast<std::size_t>(n)] == -1)
      bad(fmt::format("NUMA node {} has no CPU (node indexes must be dense, 0-based)", n));
  std::vector<bool> socket_seen(static_cast<std::size_t>(sockets), false);
  for (int s : node_socket_) socket_seen[static_cast<std::size_t>(s)] = true;
  for (int s = 0; s < sockets; ++s)
    if (!socket_seen[static_cast<std::size_t>(s)]) bad(fmt::format("socket {} has no CPU (socket indexes must be dense)", s));

  if (latency.node_ns.size() != static_cast<std::size_t>(nodes))
    bad(fmt::format("latency matrix has {} rows, the host has {} NUMA nodes", latency.node_ns.size(), nodes));
  for (const auto& row : latency.node_ns) {
    if (row.size() != static_cast<std::size_t>(nodes))
      bad(fmt::format("latency matrix row has {} entries, the host has {} NUMA nodes", row.size(), nodes));
    for (double v : row)
      if (!(v >= 0)) bad("latency matrix holds a negative or NaN value");
  }
  if (latency.smt_ns && !(*latency.smt_ns >= 0)) bad("smt latency is negative");
  pair_ns_.clear();
  for (const PairLatency& p : latency.pairs) {
    if (!find_cpu(p.from) || !find_cpu(p.to)) bad(fmt::format("latency pair {} -> {} names a CPU that does not exist", p.from, p.to));
    if (!(p.ns >= 0)) bad(fmt::format("latency pair {} -> {} is negative", p.from, p.to));
    pair_ns_[pair_key(p.from, p.to)] = p.ns;
  }
  for (std::size_t i = 0; i < its.size(); ++i) {
    const Its& t = its[i];
    if (t.socket < 0 || t.socket >= sockets) bad(fmt::format("ITS {} is on socket {}, which does not exist", i, t.socket));
    if (t.node < 0 || t.node >= nodes) bad(fmt::format("ITS {} is on NUMA node {}, which does not exist", i, t.node));
    if (node_socket_[static_cast<std::size_t>(t.node)] != t.socket)
      bad(fmt::format("ITS {}: NUMA node {} is not in socket {}", i, t.node, t.socket));
  }
  if (gic_common_lpi_aff && (*gic_common_lpi_aff < 0 || *gic_common_lpi_aff > 3))
    bad("gic common_lpi_aff must be 0..3");
  if (gic_socket_aff != 2 && gic_socket_aff != 3) bad("gic socket_aff must be 2 or 3");
  // Positions used by the GIC affinity layout.
  node_index_in_socket_.assign(static_cast<std::size_t>(nodes), 0);
  {
    std::vector<int> seen(static_cast<std::size_t>(sockets), 0);
    for (int n = 0; n < nodes; ++n) node_index_in_socket_[static_cast<std::size_t>(n)] = seen[static_cast<std::size_t>(node_socket_[static_cast<std::size_t>(n)])]++;
  }
  pos_in_node_.assign(cpus.size(), 0);
  pos_in_socket_.assign(cpus.size(), 0);
  {
    std::vector<int> in_node(static_cast<std::size_t>(nodes), 0), in_socket(static_cast<std::size_t>(sockets), 0);
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      pos_in_node_[i] = in_node[static_cast<std::size_t>(cpus[i].node)]++;
      pos_in_socket_[i] = in_socket[static_cast<std::size_t>(cpus[i].socket)]++;
    }
  }
  if (base_ghz < 0) bad("base_ghz is negative");
}

const Cpu* Host::find_cpu(int id) const noexcept {
  if (id < 0 || static_cast<std::size_t>(id) >= index_of_id_.size()) return nullptr;
  const int i = index_of_id_[static_cast<std::size_t>(id)];
  return i < 0 ? nullptr : &cpus[static_cast<std::size_t>(i)];
}

const Cpu& Host::cpu(int id) const {
  const Cpu* c = find_cpu(id);
  if (!c) throw std::out_of_range(fmt::format("topology::Host::cpu: no CPU {}", id));
  return *c;
}

std::vector<int> Host::cpus_of_socket(int socket) const {
  std::vector<int> out;
  for (const Cpu& c : cpus)
    if (c.socket == socket) out.push_back(c.id);
  return out;
}

std::vector<int> Host::cpus_of_node(int node) const {
  std::vector<int> out;
  for (const Cpu& c : cpus)
    if (c.node == node) out.push_back(c.id);
  return out;
}

std::vector<int> Host::smt_siblings(int id) const {
  const Cpu& me = cpu(id);
  std::vector<int> out;
  for (const Cpu& c : cpus)
    if (c.core == me.core && c.id != id) out.push_back(c.id);
  return out;
}

double Host::node_latency_ns(int from_node, int to_node) const {
  return latency.node_ns.at(static_cast<std::size_t>(from_node)).at(static_cast<std::size_t>(to_node));
}

double Host::c2c_ns(int from_cpu, int to_cpu) const {
  if (from_cpu == to_cpu) return 0.0;
  if (!pair_ns_.empty())
    if (auto it = pair_ns_.find(pair_key(from_cpu, to_cpu)); it != pair_ns_.end()) return it->second;
  const Cpu& a = cpu(from_cpu);
  const Cpu& b = cpu(to_cpu);
  if (latency.smt_ns && a.core == b.core) return *latency.smt_ns;
  return latency.node_ns[static_cast<std::size_t>(a.node)][static_cast<std::size_t>(b.node)];
}

double Host::hop_ns(int from_node, int to_node) const {
  if (from_node == to_node) return 0.0;
  const double extra = node_latency_ns(from_node, to_node) - node_latency_ns(from_node, from_node);
  return extra > 0 ? extra / 2.0 : 0.0;
}

std::uint32_t Host::gic_affinity(int cpu_id) const {
  const int i = index_of_id_.at(static_cast<std::size_t>(cpu_id));
  const Cpu& c = cpus.at(static_cast<std::size_t>(i));
  if (gic_socket_aff == 3) {
    const int p = pos_in_node_[static_cast<std::size_t>(i)];
    return (static_cast<std::uint32_t>(c.socket & 0xFF) << 24) |
           (static_cast<std::uint32_t>(node_index_in_socket_[static_cast<std::size_t>(c.node)] & 0xFF) << 16) |
           (static_cast<std::uint32_t>((p / 16) & 0xFF) << 8) | static_cast<std::uint32_t>(p % 16);
  }
  const int p = pos_in_socket_[static_cast<std::size_t>(i)];
  return (static_cast<std::uint32_t>(c.socket & 0xFF) << 16) | (static_cast<std::uint32_t>((p / 16) & 0xFF) << 8) |
         static_cast<std::uint32_t>(p % 16);
}

std::uint32_t Host::its_affinity(int index) const {
  const Its& t = its.at(static_cast<std::size_t>(index));
  if (gic_socket_aff == 3)
    return (static_cast<std::uint32_t>(t.socket & 0xFF) << 24) |
           (static_cast<std::uint32_t>(node_index_in_socket_.at(static_cast<std::size_t>(t.node)) & 0xFF) << 16);
  return static_cast<std::uint32_t>(t.socket & 0xFF) << 16;
}

std::string Host::gic_unrepresentable() const {
  for (std::size_t i = 0; i < cpus.size(); ++i)
    if (cpus[i].id != static_cast<int>(i))
      return fmt::format("CPU ids must be 0..{} without holes (a redistributor per CPU number); CPU {} is missing",
                         cpus.size() - 1, i);
  if (sockets > 256) return fmt::format("{} sockets do not fit one 8-bit affinity level", sockets);
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const int p = gic_socket_aff == 3 ? pos_in_node_[i] : pos_in_socket_[i];
    if (p / 16 > 255)
      return fmt::format("CPU {} is in cluster {} of its {}: Aff1 holds 256 clusters of 16", cpus[i].id, p / 16,
                         gic_socket_aff == 3 ? "NUMA node" : "socket");
  }
  if (gic_socket_aff == 3)
    for (int n : node_index_in_socket_)
      if (n > 255) return "more than 256 NUMA nodes in one socket do not fit Aff2";
  return {};
}

std::vector<int> Host::its_on_socket(int socket) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < its.size(); ++i)
    if (its[i].socket == socket) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<int> Host::its_on_node(int node) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < its.size(); ++i)
    if (its[i].node == node) out.push_back(static_cast<int>(i));
  return out;
}

std::string Host::format_cpu_list(const std::vector<int>& ids) { return format_cpu_ranges(ids); }

std::string_view latency_class_key(LatencyClass c) {
  switch (c) {
    case LatencyClass::SameNode: return "same_node_ns";
    case LatencyClass::SameSocket: return "same_socket_ns";
    case LatencyClass::CrossSocket: return "cross_socket_ns";
  }
  return "?";
}

std::string latency_range_key(LatencyClass c) {
  const std::string_view k = latency_class_key(c);
  return std::string(k.substr(0, k.size() - 3)) + "_range_ns";  // "..._ns" -> "..._range_ns"
}

LatencyClass Host::latency_class(int from_node, int to_node) const {
  if (from_node == to_node) return LatencyClass::SameNode;
  return node_socket(from_node) == node_socket(to_node) ? LatencyClass::SameSocket : LatencyClass::CrossSocket;
}

void Host::set_class_latency(LatencyClass c, double ns) {
  for (int a = 0; a < nodes; ++a)
    for (int b = 0; b < nodes; ++b)
      if (latency_class(a, b) == c) latency.node_ns[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = ns;
  for (auto& r : latency.ranges)
    if (r.cls == c) r.ns = ns;
}

}  // namespace ipilab::topology
