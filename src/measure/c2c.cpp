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
  bool pin_current_thread(unsigned pu) const {
    hwloc_obj_t o = hwloc_get_obj_by_type(t_, HWLOC_OBJ_PU, pu);
    return o != nullptr && hwloc_set_cpubind(t_, o->cpuset, HWLOC_CPUBIND_THREAD) == 0;
  }

 private:
  hwloc_topology_t t_;
};

struct alignas(64) Flag {
  std::atomic<std::uint32_t> v{0};
  char pad[60];
};

// One pair: returns the `samples` one-way latencies in ns.
std::vector<double> ping_pong(const Topology& topo, unsigned pu_a, unsigned pu_b, unsigned round_trips,
                              unsigned samples) {
  Flag flag;
  std::atomic<bool> ready{false}, pin_failed{false};
  const std::uint64_t total = static_cast<std::uint64_t>(round_trips) * (samples + 1);
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
  if (pin_failed || !pinned) {
    // Let the responder finish: it only runs when pinned; if it is, feed it so it returns.
    if (!pin_failed) {
      for (std::uint64_t k = 0; k < total; ++k) {
        std::uint32_t expected = 0;
        while (!flag.v.compare_exchange_weak(expected, 1, std::memory_order_acq_rel)) expected = 0;
      }
    }
    responder.join();
    throw UnavailableError(fmt::format("cannot pin a thread to PU {} or {}", pu_a, pu_b));
  }
  std::vector<double> out;
  for (unsigned s = 0; s < samples + 1; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned r = 0; r < round_trips; ++r) {
      std::uint32_t expected = 0;
      while (!flag.v.compare_exchange_weak(expected, 1, std::memory_order_acq_rel)) expected = 0;
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (s > 0)  // the first sample is the warm-up
      out.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * round_trips));
  }
  responder.join();
  return out;
}

}  // namespace

double C2cMatrix::median_pair_ns() const {
  std::vector<double> v;
  for (std::size_t i = 0; i < pus.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) v.push_back(mean_ns[i][j]);
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : median(v);
}

C2cMatrix measure_c2c(const C2cConfig& cfg) {
  if (cfg.round_trips == 0 || cfg.samples == 0) throw InputError("--iterations", "must be > 0");
  Topology topo;
  C2cMatrix m;
  m.pus = cfg.pus;
  if (m.pus.empty())
    for (unsigned i = 0; i < topo.pu_count(); ++i) m.pus.push_back(i);
  for (unsigned pu : m.pus)
    if (pu >= topo.pu_count())
      throw InputError("--cpus", fmt::format("PU {} does not exist (this machine has {})", pu, topo.pu_count()));
  if (m.pus.size() < 2) throw UnavailableError("core-to-core latency needs at least 2 CPUs");
  const std::size_t n = m.pus.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  m.mean_ns.assign(n, std::vector<double>(n, nan));
  m.stddev_ns = m.min_ns = m.mean_ns;
  m.round_trips = cfg.round_trips;
  m.samples = cfg.samples;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const std::vector<double> s = ping_pong(topo, m.pus[i], m.pus[j], cfg.round_trips, cfg.samples);
      double mean = 0, var = 0, mn = s.front();
      for (double x : s) { mean += x; mn = std::min(mn, x); }
      mean /= static_cast<double>(s.size());
      for (double x : s) var += (x - mean) * (x - mean);
      const double sd = std::sqrt(var / static_cast<double>(s.size()));
      m.mean_ns[i][j] = m.mean_ns[j][i] = mean;
      m.stddev_ns[i][j] = m.stddev_ns[j][i] = sd;
      m.min_ns[i][j] = m.min_ns[j][i] = mn;
    }
  return m;
}

std::string c2c_table(const C2cMatrix& m) {
  std::string out = fmt::format("One-way core-to-core latency, ns (CAS ping-pong, {} round trips x {} samples; "
                                "mean ± stddev)\n{:>8}", m.round_trips, m.samples, "CPU");
  for (std::size_t j = 0; j + 1 < m.pus.size(); ++j) out += fmt::format(" {:>16}", m.pus[j]);
  out += '\n';
  for (std::size_t i = 1; i < m.pus.size(); ++i) {
    out += fmt::format("{:>8}", m.pus[i]);
    for (std::size_t j = 0; j < i; ++j)
      out += fmt::format(" {:>16}", fmt::format("{:.1f} ± {:.1f}", m.mean_ns[i][j], m.stddev_ns[i][j]));
    out += '\n';
  }
  out += fmt::format("median over pairs: {:.1f} ns\n", m.median_pair_ns());
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
  return {{"method", "CAS ping-pong on one cache line, one-way = round-trip time / 2 (core-to-core-latency)"},
          {"unit", "ns"},
          {"cpus", m.pus},
          {"round_trips_per_sample", m.round_trips},
          {"samples", m.samples},
          {"mean_ns", mat(m.mean_ns)},
          {"stddev_ns", mat(m.stddev_ns)},
          {"min_ns", mat(m.min_ns)},
          {"median_pair_ns", m.pus.size() >= 2 ? nlohmann::json(m.median_pair_ns()) : nlohmann::json(nullptr)}};
}

void c2c_heatmap_png(const C2cMatrix& m, const std::string& png_path) {
  if (png_path.find('\'') != std::string::npos || png_path.find('\n') != std::string::npos)
    throw InputError(png_path, "the heat map path must not contain quotes or newlines");
  const std::filesystem::path target(png_path);
  const std::filesystem::path dir = target.parent_path().empty() ? "." : target.parent_path();
  if (!std::filesystem::is_directory(dir)) throw InputError(png_path, "folder does not exist");
  if (::access("/usr/bin/gnuplot", X_OK) != 0 && std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    throw UnavailableError("gnuplot is not installed (Debian: gnuplot-nox); the heat map needs it");
  // Data through a temporary file; the image to a temporary name in the target folder, then renamed.
  char data_tmpl[] = "/tmp/ipilab-c2c-XXXXXX";
  const int fd = ::mkstemp(data_tmpl);
  if (fd < 0) throw UnavailableError("cannot create a temporary file for gnuplot");
  std::string data;
  for (std::size_t i = 0; i < m.pus.size(); ++i) {
    for (std::size_t j = 0; j < m.pus.size(); ++j)
      data += i == j ? std::string("NaN ") : fmt::format("{:.2f} ", m.mean_ns[i][j]);
    data += '\n';
  }
  const bool wrote = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  ::close(fd);
  const std::string tmp_png = (dir / ("." + target.filename().string() + ".tmp")).string();
  std::string labels;
  for (std::size_t i = 0; i < m.pus.size(); ++i) labels += fmt::format("{}\"{}\" {}", i ? ", " : "", m.pus[i], i);
  const std::string script = fmt::format(
      "set terminal pngcairo size 900,800\nset output '{0}'\n"
      "set title 'One-way core-to-core latency (ns), CAS ping-pong'\n"
      "set xlabel 'CPU'\nset ylabel 'CPU'\nset xtics ({1})\nset ytics ({1})\n"
      "set palette rgbformulae 22,13,10\nset cbrange [0:*]\nset size ratio -1\n"
      "set xrange [-0.5:{2}]\nset yrange [-0.5:{2}] reverse\n"
      "plot '{3}' matrix with image notitle, '{3}' matrix using 1:2:(sprintf('%.0f', $3)) with labels notitle\n",
      tmp_png, labels, static_cast<double>(m.pus.size()) - 0.5, data_tmpl);
  int rc = -1;
  if (wrote) {
    if (FILE* p = ::popen("gnuplot 2>/dev/null", "w")) {
      std::fputs(script.c_str(), p);
      rc = ::pclose(p);
    }
  }
  std::filesystem::remove(data_tmpl);
  std::error_code ec;
  if (rc != 0 || !std::filesystem::exists(tmp_png)) {
    std::filesystem::remove(tmp_png, ec);
    throw InputError(png_path, "gnuplot could not write the heat map");
  }
  std::filesystem::rename(tmp_png, target, ec);
  if (ec) {
    std::filesystem::remove(tmp_png, ec);
    throw InputError(png_path, "cannot write the heat map there");
  }
}

}  // namespace ipilab::measure
