// ipilab/topology/host.h — a physical host: sockets, NUMA nodes, CPUs, ITSs, core-to-core latency.
//
// Terms: a CPU is a hardware thread as Linux numbers it (the "cpu" of /sys/devices/system/cpu and
// hwloc's PU os_index). A core holds 1+ SMT threads; a NUMA node holds cores and sits in one socket
// (package). An ITS (GICv3/v4 Interrupt Translation Service, Arm only) sits on a socket/node; its
// firmware order is the order firmware lists it (ACPI MADT / DT), which is the order Linux probes
// ITSs and hence which one the pre-seed-003 find_4_1_its() picks (gicv41-vsgi.md section 4).
//
// Latency: c2c_ns(a, b) is the one-way cache-line transfer time from CPU a to CPU b, the quantity
// nviennot/core-to-core-latency measures (anchors.md 1.1): a per-CPU-pair override if one was
// measured, else smt_ns for SMT siblings (if set), else the node-to-node matrix entry
// [node(a)][node(b)] (asymmetric allowed; the diagonal is "same node, different core").
//
// Text form: see topology/host_toml.h and profiles/README.md ("Hosts").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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
  friend bool operator==(const Its&, const Its&) = default;
};

/// A measured one-way latency between two specific CPUs, overriding the node matrix.
struct PairLatency {
  int from = 0, to = 0;
  double ns = 0;
  friend bool operator==(const PairLatency&, const PairLatency&) = default;
};

struct Latency {
  /// [from node][to node], ns, one-way cache-line transfer; nodes x nodes.
  std::vector<std::vector<double>> node_ns;
  /// Between SMT siblings of one core; unset = use the node matrix diagonal.
  std::optional<double> smt_ns;
  std::vector<PairLatency> pairs;
  /// Where the numbers come from (measurement, paper, assumption).
  std::string source;
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
  /// (0 = all redistributors share one vPE table; gicv41-vsgi.md section 1.4).
  std::optional<int> gic_common_lpi_aff;

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

  /// Indexes into `its` (firmware order) of the ITSs on a socket / a node.
  std::vector<int> its_on_socket(int socket) const;
  std::vector<int> its_on_node(int node) const;

  /// "0-5,12-17" style list of the ids (for summaries and messages).
  static std::string format_cpu_list(const std::vector<int>& ids);

  friend bool operator==(const Host& a, const Host& b) {
    return a.name == b.name && a.description == b.description && a.cpu_model == b.cpu_model &&
           a.base_ghz == b.base_ghz && a.source == b.source && a.cpus == b.cpus && a.sockets == b.sockets &&
           a.nodes == b.nodes && a.latency == b.latency && a.its == b.its &&
           a.gic_common_lpi_aff == b.gic_common_lpi_aff;
  }

 private:
  std::vector<int> index_of_id_;   // id -> index into cpus, -1 for holes
  std::vector<int> node_socket_;   // node -> socket
  std::unordered_map<std::uint64_t, double> pair_ns_;
};

}  // namespace ipilab::topology
