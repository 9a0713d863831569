#include "measure/c2c.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "common/estimator.h"
#include "measure/outputs.h"
#include "measure/stats.h"

namespace ipilab::measure {

namespace {

class Topology {
 public:
  Topology() {
    hwloc_topology_init(&t_);
    hwloc_topology_load(t_);
  }
  ~Topology() { hwloc_topology_destroy(t_); }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  unsigned pu_count() const { return static_cast<unsigned>(std::max(0, hwloc_get_nbobjs_by_type(t_, HWLOC_OBJ_PU))); }
  hwloc_topology_t get() const { return t_; }
  bool pin_current_thread(unsigned pu) const {
    hwloc_obj_t o = hwloc_get_obj_by_type(t_, HWLOC_OBJ_PU, pu);
    return o != nullptr && hwloc_set_cpubind(t_, o->cpuset, HWLOC_CPUBIND_THREAD) == 0;
  }

 private:
  hwloc_topology_t t_;
};

double steady_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Where two PUs meet in the topology (hwloc objects by logical index).
PairClass classify(hwloc_topology_t t, unsigned a, unsigned b) {
  hwloc_obj_t pa = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, a), pb = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, b);
  if (!pa || !pb) return PairClass::SameNode;
  hwloc_obj_t ca = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pa);
  if (ca && ca == hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pb)) return PairClass::Smt;
  if (pa->nodeset && pb->nodeset && hwloc_bitmap_isequal(pa->nodeset, pb->nodeset)) return PairClass::SameNode;
  hwloc_obj_t sa = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pa);
  if (sa && sa == hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pb)) return PairClass::SameSocket;
  return PairClass::CrossSocket;
}

struct alignas(64) Flag {
  std::atomic<std::uint32_t> v{0};
  char pad[60];
};

// One sample of one pair: a discarded warm-up exchange, then `round_trips` round trips timed with one
// clock pair (the batch estimator). Returns one-way ns.
double ping_pong(const Topology& topo, unsigned pu_a, unsigned pu_b, unsigned round_trips) {
  Flag flag;
  std::atomic<bool> ready{false}, pin_failed{false};
  const unsigned warmup = std::max(1u, round_trips / 10);
  const std::uint64_t total = static_cast<std::uint64_t>(round_trips) + warmup;
  std::thread responder([&] {
    if (!topo.pin_current_thread(pu_b)) pin_failed = true;
    ready = true;
    if (pin_failed) return;
    for (std::uint64_t k = 0; k < total; ++k) {
      std::uint32_t expected = 1;
      while (!flag.v.compare_exchange_weak(expected, 0, std::memory_order_acq_rel)) expected = 1;
    }
  });
  while (!ready) std::this_thread::yield();
  const bool pinned = topo.pin_current_thread(pu_a);
  auto one_round_trip = [&] {
    std::uint32_t expected = 0;
    while (!flag.v.compare_exchange_weak(expected, 1, std::memory_order_acq_rel)) expected = 0;
  };
  if (pin_failed || !pinned) {
    // Let the responder finish: it only runs when pinned; if it is, feed it so it returns.
    if (!pin_failed)
      for (std::uint64_t k = 0; k < total; ++k) one_round_trip();
    responder.join();
    throw UnavailableError(fmt::format("cannot pin a thread to PU {} or {}", pu_a, pu_b));
  }
  for (unsigned k = 0; k < warmup; ++k) one_round_trip();
  const timing::TimedBatch b = timing::time_batch(steady_ns, one_round_trip, round_trips);
  responder.join();
  return b.per_iteration() / 2.0;
}

}  // namespace

double C2cMatrix::median_pair_ns() const {
  std::vector<double> v;
  for (std::size_t i = 0; i < pus.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) v.push_back(mean_ns[i][j]);
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : median(v);
}

const char* cost_key(PairClass c) {
  switch (c) {
    case PairClass::Smt: return "mem.cacheline_smt";
    case PairClass::SameNode: return "mem.cacheline_same_node";
    case PairClass::SameSocket: return "mem.cacheline_same_socket";
    case PairClass::CrossSocket: return "mem.cacheline_cross_socket";
  }
  return "mem.cacheline_same_node";
}

std::vector<std::pair<unsigned, unsigned>> C2cMatrix::noisy_pairs() const {
  std::vector<std::pair<unsigned, unsigned>> out;
  for (std::size_t i = 0; i < pus.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (stddev_ns[i][j] > mean_ns[i][j]) out.emplace_back(pus[i], pus[j]);
  return out;
}

C2cMatrix measure_c2c(const C2cConfig& cfg) {
  if (cfg.round_trips == 0 || cfg.samples == 0) throw InputError("--round-trips", "must be > 0");
  Topology topo;
  C2cMatrix m;
  m.pus = cfg.pus;
  if (m.pus.empty())
    for (unsigned i = 0; i < topo.pu_count(); ++i) m.pus.push_back(i);
  for (unsigned pu : m.pus)
    if (pu >= topo.pu_count())
      throw InputError("--cpus", fmt::format("PU {} does not exist (this machine has {})", pu, topo.pu_count()));
  for (std::size_t i = 0; i < m.pus.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (m.pus[i] == m.pus[j])
        throw InputError("--cpus", fmt::format("CPU {} is named twice: a CPU against itself is no core-to-core latency", m.pus[i]));
  if (m.pus.size() < 2) throw UnavailableError("core-to-core latency needs at least 2 CPUs");
  m.size_for_pus();
  const std::size_t n = m.pus.size();
  m.round_trips = cfg.round_trips;
  m.samples = cfg.samples;
  m.clock_overhead_ns = timing::counter_overhead(steady_ns);
  // Interleaved rounds: every pair once per round.
  for (unsigned round = 0; round < cfg.samples; ++round)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j)
        m.samples_ns[i][j].push_back(ping_pong(topo, m.pus[i], m.pus[j], cfg.round_trips));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const std::vector<double>& s = m.samples_ns[i][j];
      double mean = 0, var = 0, mn = s.front();
      for (double x : s) { mean += x; mn = std::min(mn, x); }
      mean /= static_cast<double>(s.size());
      for (double x : s) var += (x - mean) * (x - mean);
      const double sd = std::sqrt(var / static_cast<double>(s.size()));
      m.mean_ns[i][j] = m.mean_ns[j][i] = mean;
      m.stddev_ns[i][j] = m.stddev_ns[j][i] = sd;
      m.min_ns[i][j] = m.min_ns[j][i] = mn;
      m.samples_ns[j][i] = s;
      m.pair_class[i][j] = m.pair_class[j][i] = classify(topo.get(), m.pus[i], m.pus[j]);
    }
  return m;
}

std::string c2c_table(const C2cMatrix& m) {
  std::string out = fmt::format("One-way core-to-core latency, ns (CAS ping-pong, {} round trips per sample, {} "
                                "interleaved rounds; mean ± stddev)\n{:>8}", m.round_trips, m.samples, "CPU");
  for (std::size_t j = 0; j + 1 < m.pus.size(); ++j) out += fmt::format(" {:>16}", m.pus[j]);
  out += '\n';
  for (std::size_t i = 1; i < m.pus.size(); ++i) {
    out += fmt::format("{:>8}", m.pus[i]);
    for (std::size_t j = 0; j < i; ++j)
      out += fmt::format(" {:>16}", fmt::format("{:.1f} ± {:.1f}", m.mean_ns[i][j], m.stddev_ns[i][j]));
    out += '\n';
  }
  out += fmt::format("median over pairs: {:.1f} ns; clock read {:.1f} ns = {:.3f} % of a sample "
                     "(one steady_clock pair per {} round trips)\n",
                     m.median_pair_ns(), m.clock_overhead_ns,
                     100.0 * m.clock_overhead_ns / (2.0 * m.round_trips) / std::max(1e-9, m.median_pair_ns()),
                     m.round_trips);
  return out;
}

std::string c2c_csv(const C2cMatrix& m) {
  std::string out = "cpu";
  for (unsigned pu : m.pus) out += fmt::format(",{}", pu);
  out += '\n';
  for (std::size_t i = 0; i < m.pus.size(); ++i) {
    out += fmt::format("{}", m.pus[i]);
    for (std::size_t j = 0; j < m.pus.size(); ++j)
      out += i == j ? std::string(",") : fmt::format(",{:.2f}", m.mean_ns[i][j]);
    out += '\n';
  }
  return out;
}

nlohmann::json c2c_json(const C2cMatrix& m) {
  auto mat = [&](const std::vector<std::vector<double>>& x) {
    nlohmann::json a = nlohmann::json::array();
    for (std::size_t i = 0; i < x.size(); ++i) {
      nlohmann::json row = nlohmann::json::array();
      for (std::size_t j = 0; j < x.size(); ++j)
        row.push_back(i == j ? nlohmann::json(nullptr) : nlohmann::json(x[i][j]));
      a.push_back(row);
    }
    return a;
  };
  nlohmann::json pairs = nlohmann::json::array();
  for (std::size_t i = 0; i < m.pus.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      pairs.push_back({{"cpus", {m.pus[i], m.pus[j]}},
                       {"cost_key", cost_key(m.pair_class[i][j])},
                       {"mean_ns", m.mean_ns[i][j]},
                       {"stddev_ns", m.stddev_ns[i][j]},
                       {"min_ns", m.min_ns[i][j]},
                       {"samples_ns", m.samples_ns[i][j]}});
  return {{"method", "CAS ping-pong on one cache line, one-way = round-trip time / 2 (core-to-core-latency); "
                     "one steady_clock pair per sample of round_trips_per_sample round trips; pairs visited in "
                     "interleaved rounds"},
          {"unit", "ns"},
          {"cpus", m.pus},
          {"round_trips_per_sample", m.round_trips},
          {"samples", m.samples},
          {"rounds", m.samples},
          {"clock_overhead_ns", m.clock_overhead_ns},
          {"mean_ns", mat(m.mean_ns)},
          {"stddev_ns", mat(m.stddev_ns)},
          {"min_ns", mat(m.min_ns)},
          {"median_pair_ns", m.pus.size() >= 2 ? nlohmann::json(m.median_pair_ns()) : nlohmann::json(nullptr)},
          {"pairs", pairs}};
}

void c2c_heatmap(const C2cMatrix& m, const std::string& path, output::OutputSet& outs) {
  const ImageFormat format = image_format_of(path, "--heatmap");
  output::require_gnuplot("--heatmap");
  output::AtomicFile& image = outs.add(path, "--heatmap");
  output::TempDir tmp("ipilab-c2c");
  std::string data;
  for (std::size_t i = 0; i < m.pus.size(); ++i) {
    for (std::size_t j = 0; j < m.pus.size(); ++j)
      data += i == j ? std::string("NaN ") : fmt::format("{:.2f} ", m.mean_ns[i][j]);
    data += '\n';
  }
  const std::string data_file = tmp.write("c2c.dat", data).string();
  std::string labels;
  for (std::size_t i = 0; i < m.pus.size(); ++i)
    labels += fmt::format("{}{} {}", i ? ", " : "", output::gp_quote(fmt::format("{}", m.pus[i])), i);
  output::render(image, format, tmp, "--heatmap", [&](const std::string& image_file) {
    // A NaN cell (the diagonal) is drawn blank, with no label: NaN != NaN in gnuplot as in C.
    return fmt::format(
        "set terminal {4}\nset output {0}\n"
        "set title 'One-way core-to-core latency (ns), CAS ping-pong'\n"
        "set xlabel \"CPU\\n(diagonal blank: a CPU against itself is not measured)\"\nset ylabel 'CPU'\n"
        "set xtics ({1})\nset ytics ({1})\n"
        "set palette rgbformulae 22,13,10\nset cbrange [0:*]\nset size ratio -1\n"
        "set xrange [-0.5:{2}]\nset yrange [-0.5:{2}] reverse\n"
        "plot {3} matrix with image notitle, {3} matrix using 1:2:(($3 == $3) ? sprintf('%.0f', $3) : '') with labels notitle\n",
        output::gp_quote(image_file), labels, static_cast<double>(m.pus.size()) - 0.5, output::gp_quote(data_file),
        gnuplot_terminal(format));
  });
}

void C2cMatrix::size_for_pus() {
  const std::size_t n = pus.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  mean_ns.assign(n, std::vector<double>(n, nan));
  stddev_ns = min_ns = mean_ns;
  samples_ns.assign(n, std::vector<std::vector<double>>(n));
  pair_class.assign(n, std::vector<PairClass>(n, PairClass::SameNode));
}

}  // namespace ipilab::measure
