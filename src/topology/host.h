// ipilab/topology/host.h — a physical host: sockets, NUMA nodes, CPUs, ITSs, core-to-core latency.
//
// Terms: a CPU is a hardware thread as Linux numbers it (the "cpu" of /sys/devices/system/cpu and
// hwloc's PU os_index). A core holds 1+ SMT threads; a NUMA node holds cores and sits in one socket
// (package). An ITS (GICv3/v4 Interrupt Translation Service, Arm only) sits on a socket/node; its
// firmware order is the order firmware lists it (ACPI MADT / DT), which is the order Linux probes
// ITSs and hence which one the pre-seed-003 find_4_1_its() picks (drivers/irqchip/irq-gic-v3-its.c:
// its_probe_one() adds each ITS at the head of its_nodes, so the list is in reverse firmware order).
//
// Latency: c2c_ns(a, b) is the one-way cache-line transfer time from CPU a to CPU b, the quantity
// nviennot/core-to-core-latency measures (its README: one-way, CAS ping-pong): a per-CPU-pair
// override if one was measured, else smt_ns for SMT siblings (if set), else the node-to-node matrix
// entry [node(a)][node(b)] (asymmetric allowed; the diagonal is "same node, different core").
//
// Interconnect: hop_ns(a, b) is what a posted message (an MMIO write, an ITS -> redistributor
// message, an interrupt notification) from NUMA node a to node b costs beyond one that stays in node
// a: half of c2c's extra, (node_ns[a][b] - node_ns[a][a]) / 2, because a cache-line transfer (what
// the matrix holds) is a request and a data response, two traversals, while a posted write is one.
// This is a modelling assumption, checked against "irqchip/gic-v4.1: Use local 4_1 ITS to generate
// VSGI" (Linux commit f1a3fac4095c): a remote ITS is two crossings of (150 - 50) / 2 = 50 ns on the
// kunpeng920-2s matrix, the +100 ns the patch's posting reports (lore.kernel.org,
// 20250515145359.2795959-1-tangnianyao@huawei.com).
//
// GIC (Arm hosts with [[host.its]] or [host.gic]): every CPU has a redistributor whose index is the
// CPU number (so CPU ids must be 0..N-1), and an MPIDR affinity built from the layout:
//   gic_socket_aff = 3 (default): Aff3 = socket, Aff2 = NUMA node within the socket, Aff1 = cluster
//                    of 16 CPUs within the node, Aff0 = position in the cluster;
//   gic_socket_aff = 2:           Aff3 = 0, Aff2 = socket, Aff1 = cluster of 16 within the socket,
//                    Aff0 = position in the cluster.
// An ITS's GITS_MPIDR holds Aff3.Aff2.Aff1 of its socket and node (cluster 0). CommonLPIAff then
// decides which redistributors share a vPE table: 0 all, 1 the same Aff3, 2 the same Aff3.Aff2,
// 3 the same Aff3.Aff2.Aff1 (GICv4.1 spec, GICR_TYPER.CommonLPIAff; Linux compute_common_aff).
//
// Text form: see topology/host_toml.h and profiles/README.md ("Hosts").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/time.h"

namespace ipilab::topology {

struct Cpu {
  int id = 0;      ///< Linux CPU number
  int socket = 0;  ///< package index, 0-based, dense
  int node = 0;    ///< NUMA node index, 0-based, dense
  int core = 0;    ///< core index across the host, 0-based
  int thread = 0;  ///< SMT thread index within the core (0 = first)
  friend bool operator==(const Cpu&, const Cpu&) = default;
};

struct Its {
  int socket = 0;
  int node = 0;
  std::string name;  ///< free text, e.g. "ITS0 @ 0x202100000"; may be empty
  /// GITS_TYPER.SVPET as the firmware sets it (0 = the ITS shares its vPE table with no RD, 1..3 a
  /// CommonLPIAff-style affinity level, Arm IHI 0069 GITS_TYPER); unset: derived from CommonLPIAff
  /// (gic::build_host_gic).
  std::optional<int> svpet;
  friend bool operator==(const Its&, const Its&) = default;
};

/// A measured one-way latency between two specific CPUs, overriding the node matrix.
struct PairLatency {
  int from = 0, to = 0;
  double ns = 0;
  friend bool operator==(const PairLatency&, const PairLatency&) = default;
};

/// The classes of a latency matrix written by class ([host.latency] same_node_ns, same_socket_ns,
/// cross_socket_ns): the diagonal, two nodes of one socket, two sockets.
enum class LatencyClass { SameNode, SameSocket, CrossSocket };
/// "same_node_ns", "same_socket_ns", "cross_socket_ns" (the host file's key).
std::string_view latency_class_key(LatencyClass c);
/// "same_node_range_ns", ...: the key of its range.
std::string latency_range_key(LatencyClass c);

/// An uncertain class value ([host.latency] cross_socket_range_ns = [lo, hi]): the value written
/// for the class and the range it may lie in, ns. `ipilab run --uncertainty` draws it as it draws a
/// cost (evidence/draws.h); runs without draws use `ns`.
struct LatencyRange {
  LatencyClass cls = LatencyClass::SameNode;
  double ns = 0, lo = 0, hi = 0;
  friend bool operator==(const LatencyRange&, const LatencyRange&) = default;
};

struct Latency {
  /// [from node][to node], ns, one-way cache-line transfer; nodes x nodes.
  std::vector<std::vector<double>> node_ns;
  /// Between SMT siblings of one core; unset = use the node matrix diagonal.
  std::optional<double> smt_ns;
  std::vector<PairLatency> pairs;
  /// Where the numbers come from (measurement, paper, assumption).
  std::string source;
  /// With the class form only: the class values with a range, in class order, and why the ranges
  /// are what they are (required with any range).
  std::vector<LatencyRange> ranges;
  std::string range_reason;
  friend bool operator==(const Latency&, const Latency&) = default;
};

class Host {
 public:
  std::string name;
  std::string description;
  std::string cpu_model;
  double base_ghz = 0;  ///< nominal core clock in GHz; 0 = unknown
  std::string source;   ///< where the layout comes from
  /// CPUs sorted by id (ids may have holes, e.g. offline CPUs).
  std::vector<Cpu> cpus;
  int sockets = 0;
  int nodes = 0;
  Latency latency;
  /// ITSs in firmware order (index = firmware order). Empty on x86.
  std::vector<Its> its;
  /// GICR_TYPER.CommonLPIAff of the redistributors, if the host has a GIC and it is known
  /// (0 = all redistributors share one vPE table; Arm IHI 0069 GICR_TYPER, Linux compute_common_aff).
  std::optional<int> gic_common_lpi_aff;
  /// The MPIDR affinity level that numbers sockets (3 or 2), see the file comment.
  int gic_socket_aff = 3;
  /// Where the host was read from ("profiles/hosts/x.toml", a path), and "FILE:LINE:COL: host.its"
  /// of its GIC description, for messages ("" when unknown).
  std::string file;
  std::string gic_place;

  /// Checks internal consistency and builds the lookup tables; the parsers call it. Throws
  /// InputError(place = name, reason) on an inconsistent host (a node in two sockets, a latency
  /// matrix of the wrong size, an ITS on a socket that does not exist...).
  void finalize();

  /// The CPU with Linux number `id`, or nullptr.
  const Cpu* find_cpu(int id) const noexcept;
  /// The CPU with Linux number `id`; std::out_of_range if absent (use find_cpu for input).
  const Cpu& cpu(int id) const;
  /// Socket of a NUMA node.
  int node_socket(int node) const { return node_socket_.at(static_cast<std::size_t>(node)); }
  /// CPU ids in a socket / a node, ascending.
  std::vector<int> cpus_of_socket(int socket) const;
  std::vector<int> cpus_of_node(int node) const;
  /// Other threads of the core of `cpu`.
  std::vector<int> smt_siblings(int cpu) const;
  /// Highest CPU id + 1 (0 when empty).
  int cpu_id_limit() const noexcept { return static_cast<int>(index_of_id_.size()); }

  /// One-way cache-line transfer from CPU a to CPU b, ns (see the file comment). a == b gives 0.
  double c2c_ns(int from_cpu, int to_cpu) const;
  sim::Ps c2c(int from_cpu, int to_cpu) const { return sim::from_ns(c2c_ns(from_cpu, to_cpu)); }
  /// Node-to-node entry, ns.
  double node_latency_ns(int from_node, int to_node) const;

  /// Extra latency of one posted message from NUMA node a to node b (see the file comment), ns.
  double hop_ns(int from_node, int to_node) const;
  /// The class of the matrix entry [from node][to node].
  LatencyClass latency_class(int from_node, int to_node) const;
  /// Every matrix entry of class `c` set to `ns` (a draw of latency.ranges; a host written by
  /// class only, whose entries of one class are equal). SMT and CPU-pair overrides stay.
  void set_class_latency(LatencyClass c, double ns);

  /// True when the host has an Arm GIC ([[host.its]] or [host.gic]).
  bool has_gic() const noexcept { return !its.empty() || gic_common_lpi_aff.has_value(); }
  /// MPIDR affinity (Aff3 in [31:24] ... Aff0 in [7:0]) of CPU `id` / GITS_MPIDR affinity of ITS
  /// `index` (firmware order), per the layout in the file comment. Only for has_gic() hosts.
  std::uint32_t gic_affinity(int cpu_id) const;
  std::uint32_t its_affinity(int its_index) const;
  /// Why this host's GIC cannot be represented ("" if it can): CPU ids with holes, more than 256
  /// sockets / nodes per socket / clusters at one affinity level. The Arm mechanisms check it (an
  /// x86 workload on such a host does not need the GIC).
  std::string gic_unrepresentable() const;

  /// Indexes into `its` (firmware order) of the ITSs on a socket / a node.
  std::vector<int> its_on_socket(int socket) const;
  std::vector<int> its_on_node(int node) const;

  /// "0-5,12-17" style list of the ids (for summaries and messages).
  static std::string format_cpu_list(const std::vector<int>& ids);

  friend bool operator==(const Host& a, const Host& b) {
    return a.name == b.name && a.description == b.description && a.cpu_model == b.cpu_model &&
           a.base_ghz == b.base_ghz && a.source == b.source && a.cpus == b.cpus && a.sockets == b.sockets &&
           a.nodes == b.nodes && a.latency == b.latency && a.its == b.its &&
           a.gic_common_lpi_aff == b.gic_common_lpi_aff && a.gic_socket_aff == b.gic_socket_aff;
  }

 private:
  std::vector<int> index_of_id_;   // id -> index into cpus, -1 for holes
  std::vector<int> node_socket_;   // node -> socket
  std::unordered_map<std::uint64_t, double> pair_ns_;
  std::vector<int> node_index_in_socket_;  // node -> its index among its socket's nodes
  std::vector<int> pos_in_node_;           // cpu index -> position among its node's CPUs (by id)
  std::vector<int> pos_in_socket_;         // cpu index -> position among its socket's CPUs (by id)
};

}  // namespace ipilab::topology
