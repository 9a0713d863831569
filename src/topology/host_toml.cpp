#include "topology/host_toml.h"

#include <algorithm>
#include <array>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "topology/toml_read.h"

namespace ipilab::topology {

using toml_read::TableReader;

namespace {

std::vector<Cpu> layout_cpus(TableReader& r) {
  const auto sockets = static_cast<int>(r.req_int("sockets", 1, 4096));
  const auto nps = static_cast<int>(r.opt_int("nodes_per_socket", 1, 256).value_or(1));
  const auto cpn = static_cast<int>(r.req_int("cores_per_node", 1, 65536));
  const auto tpc = static_cast<int>(r.opt_int("threads_per_core", 1, 16).value_or(1));
  const std::string numbering = r.opt_string("numbering").value_or("siblings-adjacent");
  const bool last = numbering == "siblings-last";
  if (!last && numbering != "siblings-adjacent")
    r.fail("numbering", fmt::format("'{}' is not a numbering; use \"siblings-adjacent\" or \"siblings-last\"", numbering));
  r.finish();
  const long total = static_cast<long>(sockets) * nps * cpn * tpc;
  if (total > 1'000'000) r.fail("sockets", fmt::format("{} CPUs is more than 1000000", total));
  const int total_cores = sockets * nps * cpn;
  std::vector<Cpu> out;
  out.reserve(static_cast<std::size_t>(total));
  for (int s = 0; s < sockets; ++s)
    for (int n = 0; n < nps; ++n)
      for (int c = 0; c < cpn; ++c)
        for (int t = 0; t < tpc; ++t) {
          const int core = (s * nps + n) * cpn + c;
          const int id = last ? t * total_cores + core : core * tpc + t;
          out.push_back(Cpu{id, s, s * nps + n, core, t});
        }
  return out;
}

std::vector<Cpu> explicit_cpus(const toml::array& arr, std::string_view file, const std::string& key) {
  std::vector<Cpu> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string k = fmt::format("{}[{}]", key, i);
    const auto* t = arr.get(i)->as_table();
    if (!t)
      throw InputError(toml_read::place(file, arr.get(i)->source(), k),
                       fmt::format("expected a table {{ id, socket, node, core, thread }}, got {}", toml_read::type_name(*arr.get(i))));
    TableReader r(*t, std::string(file), k);
    Cpu c;
    c.id = static_cast<int>(r.req_int("id", 0, 1 << 24));
    c.socket = static_cast<int>(r.req_int("socket", 0, 4095));
    c.node = static_cast<int>(r.req_int("node", 0, 65535));
    c.core = static_cast<int>(r.req_int("core", 0, 1 << 24));
    c.thread = static_cast<int>(r.opt_int("thread", 0, 15).value_or(0));
    r.finish();
    out.push_back(c);
  }
  return out;
}

std::vector<double> number_row(const toml::node& n, std::string_view file, const std::string& key) {
  const auto* a = n.as_array();
  if (!a) throw InputError(toml_read::place(file, n.source(), key), fmt::format("expected an array of numbers, got {}", toml_read::type_name(n)));
  std::vector<double> row;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const double v = toml_read::node_double(*a->get(i), file, fmt::format("{}[{}]", key, i));
    if (!(v >= 0)) throw InputError(toml_read::place(file, a->get(i)->source(), fmt::format("{}[{}]", key, i)), "latency must be >= 0");
    row.push_back(v);
  }
  return row;
}

// [host.latency] same_node_range_ns / same_socket_range_ns / cross_socket_range_ns = [lo, hi]: the
// range each class value may lie in (class form only: a matrix's entries of one class may differ),
// with range_reason.
void parse_latency_ranges(TableReader& r, Latency& lat, const std::array<std::optional<double>, 3>& values) {
  static constexpr std::array<LatencyClass, 3> kClasses = {LatencyClass::SameNode, LatencyClass::SameSocket, LatencyClass::CrossSocket};
  for (std::size_t i = 0; i < kClasses.size(); ++i) {
    const std::string value_key(latency_class_key(kClasses[i]));
    const std::string key = latency_range_key(kClasses[i]);
    const toml::node* n = r.node(key);
    if (!n) continue;
    if (!values[i] && r.node("matrix_ns"))
      r.fail(key, "a range is for a class value (same_node_ns, ...): with matrix_ns the entries of one class may differ");
    if (!values[i]) r.fail(key, fmt::format("a range without its value: give {} too", value_key));
    const std::vector<double> lohi = number_row(*n, r.file(), r.key_path(key));
    if (lohi.size() != 2) r.fail(key, fmt::format("expected [low, high] in ns, got {} numbers", lohi.size()));
    if (!(lohi[0] <= *values[i] && *values[i] <= lohi[1]))
      r.fail(key, fmt::format("[{}, {}] does not contain {} = {}", lohi[0], lohi[1], value_key, *values[i]));
    lat.ranges.push_back(LatencyRange{kClasses[i], *values[i], lohi[0], lohi[1]});
  }
  if (auto reason = r.opt_string("range_reason")) {
    if (lat.ranges.empty()) r.fail("range_reason", "given without any *_range_ns");
    lat.range_reason = *reason;
  } else if (!lat.ranges.empty()) {
    r.fail("range_reason", "missing: say where the latency ranges come from");
  }
}

Latency parse_latency(TableReader& r, const std::vector<Cpu>& cpus, int sockets, int nodes,
                      const std::vector<int>& node_socket) {
  Latency lat;
  lat.source = r.req_string("source");
  auto nonneg = [&](std::string_view k) -> std::optional<double> {
    auto v = r.opt_double(k);
    if (v && !(*v >= 0)) r.fail(k, "latency must be >= 0 ns");
    return v;
  };
  const auto same_node = nonneg("same_node_ns");
  const auto same_socket = nonneg("same_socket_ns");
  const auto cross_socket = nonneg("cross_socket_ns");
  lat.smt_ns = nonneg("smt_ns");
  if (const toml::node* m = r.node("matrix_ns")) {
    const auto* a = m->as_array();
    if (!a) r.fail("matrix_ns", fmt::format("expected an array of rows, got {}", toml_read::type_name(*m)));
    if (a->size() != static_cast<std::size_t>(nodes))
      r.fail("matrix_ns", fmt::format("has {} rows; the host has {} NUMA nodes", a->size(), nodes));
    for (std::size_t i = 0; i < a->size(); ++i) {
      const std::string k = fmt::format("{}[{}]", r.key_path("matrix_ns"), i);
      auto row = number_row(*a->get(i), r.file(), k);
      if (row.size() != static_cast<std::size_t>(nodes))
        throw InputError(toml_read::place(r.file(), a->get(i)->source(), k),
                         fmt::format("has {} entries; the host has {} NUMA nodes", row.size(), nodes));
      lat.node_ns.push_back(std::move(row));
    }
    if (same_node || same_socket || cross_socket)
      r.fail("matrix_ns", "give either matrix_ns or the class values (same_node_ns, ...), not both");
  } else {
    if (!same_node) r.fail("same_node_ns", "missing: give same_node_ns (and same_socket_ns / cross_socket_ns as the host needs) or matrix_ns");
    bool multi_node_socket = false;
    for (int s = 0; s < sockets; ++s)
      if (std::count(node_socket.begin(), node_socket.end(), s) > 1) multi_node_socket = true;
    if (multi_node_socket && !same_socket) r.fail("same_socket_ns", "missing: a socket of this host holds several NUMA nodes");
    if (sockets > 1 && !cross_socket) r.fail("cross_socket_ns", "missing: this host has several sockets");
    lat.node_ns.assign(static_cast<std::size_t>(nodes), std::vector<double>(static_cast<std::size_t>(nodes), 0.0));
    for (int a = 0; a < nodes; ++a)
      for (int b = 0; b < nodes; ++b) {
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        lat.node_ns[ua][ub] = a == b ? *same_node : node_socket[ua] == node_socket[ub] ? *same_socket : *cross_socket;
      }
  }
  parse_latency_ranges(r, lat, {same_node, same_socket, cross_socket});
  if (const toml::array* pairs = r.opt_array("pairs")) {
    for (std::size_t i = 0; i < pairs->size(); ++i) {
      const std::string k = fmt::format("{}[{}]", r.key_path("pairs"), i);
      const auto* t = pairs->get(i)->as_table();
      if (!t) throw InputError(toml_read::place(r.file(), pairs->get(i)->source(), k), "expected a table { from, to, ns }");
      TableReader pr(*t, r.file(), k);
      PairLatency p;
      p.from = static_cast<int>(pr.req_int("from", 0, 1 << 24));
      p.to = static_cast<int>(pr.req_int("to", 0, 1 << 24));
      p.ns = pr.req_double("ns");
      if (!(p.ns >= 0)) pr.fail("ns", "latency must be >= 0 ns");
      auto exists = [&](int id) { return std::any_of(cpus.begin(), cpus.end(), [id](const Cpu& c) { return c.id == id; }); };
      if (!exists(p.from)) pr.fail("from", fmt::format("CPU {} does not exist on this host", p.from));
      if (!exists(p.to)) pr.fail("to", fmt::format("CPU {} does not exist on this host", p.to));
      pr.finish();
      lat.pairs.push_back(p);
    }
  }
  r.finish();
  return lat;
}

}  // namespace

Host parse_host(const toml::table& t, std::string_view file, std::string_view key) {
  TableReader r(t, std::string(file), std::string(key));
  Host h;
  h.name = r.opt_string("name").value_or("");
  h.description = r.opt_string("description").value_or("");
  h.cpu_model = r.opt_string("cpu_model").value_or("");
  h.source = r.opt_string("source").value_or("");
  if (auto g = r.opt_double("base_ghz")) {
    if (!(*g > 0 && *g < 100)) r.fail("base_ghz", "must be a clock in GHz, > 0 and < 100");
    h.base_ghz = *g;
  }
  const toml::table* layout = r.opt_table("layout");
  const toml::array* cpus = r.opt_array("cpus");
  if (layout && cpus) r.fail("cpus", "give either [host.layout] or host.cpus, not both");
  if (!layout && !cpus) r.fail("layout", "missing: give [host.layout] (sockets, cores_per_node, ...) or host.cpus");
  if (layout) {
    TableReader lr(*layout, std::string(file), r.key_path("layout"));
    h.cpus = layout_cpus(lr);
  } else {
    h.cpus = explicit_cpus(*cpus, file, r.key_path("cpus"));
    if (h.cpus.empty()) r.fail("cpus", "is empty");
  }
  int sockets = 0, nodes = 0;
  for (const Cpu& c : h.cpus) {
    sockets = std::max(sockets, c.socket + 1);
    nodes = std::max(nodes, c.node + 1);
  }
  std::vector<int> node_socket(static_cast<std::size_t>(nodes), 0);
  for (const Cpu& c : h.cpus) node_socket[static_cast<std::size_t>(c.node)] = c.socket;

  const toml::table* lat = r.opt_table("latency");
  if (!lat) r.fail("latency", "missing: [host.latency] with source and same_node_ns/... or matrix_ns");
  TableReader latr(*lat, std::string(file), r.key_path("latency"));
  h.latency = parse_latency(latr, h.cpus, sockets, nodes, node_socket);

  if (const toml::node* itsn = r.node("its")) {
    const auto* arr = itsn->as_array();
    if (!arr) r.fail("its", fmt::format("expected an array of tables ([[host.its]]), got {}", toml_read::type_name(*itsn)));
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const std::string k = fmt::format("{}[{}]", r.key_path("its"), i);
      const auto* it = arr->get(i)->as_table();
      if (!it) throw InputError(toml_read::place(file, arr->get(i)->source(), k), "expected a table { socket, node, name }");
      TableReader ir(*it, std::string(file), k);
      Its its;
      its.socket = static_cast<int>(ir.req_int("socket", 0, 4095));
      if (its.socket >= sockets) ir.fail("socket", fmt::format("socket {} does not exist (the host has {})", its.socket, sockets));
      if (auto n = ir.opt_int("node", 0, 65535)) {
        its.node = static_cast<int>(*n);
        if (its.node >= nodes) ir.fail("node", fmt::format("NUMA node {} does not exist (the host has {})", its.node, nodes));
        if (node_socket[static_cast<std::size_t>(its.node)] != its.socket)
          ir.fail("node", fmt::format("NUMA node {} is not in socket {}", its.node, its.socket));
      } else {
        its.node = static_cast<int>(std::find(node_socket.begin(), node_socket.end(), its.socket) - node_socket.begin());
      }
      its.name = ir.opt_string("name").value_or("");
      if (auto v = ir.opt_int("svpet", 0, 3)) its.svpet = static_cast<int>(*v);
      ir.finish();
      h.its.push_back(std::move(its));
    }
  }
  if (const toml::table* gic = r.opt_table("gic")) {
    TableReader gr(*gic, std::string(file), r.key_path("gic"));
    if (auto a = gr.opt_int("common_lpi_aff", 0, 3)) h.gic_common_lpi_aff = static_cast<int>(*a);
    if (auto a = gr.opt_int("socket_aff", 2, 3)) h.gic_socket_aff = static_cast<int>(*a);
    gr.finish();
  }
  r.finish();
  h.file = std::string(file);
  try {
    h.finalize();
  } catch (const InputError& e) {
    throw InputError(toml_read::place(file, t.source(), std::string(key)), e.reason());
  }
  if (h.has_gic()) h.gic_place = r.place(h.its.empty() ? "gic" : "its");
  return h;
}

Host load_host_text(std::string_view text, std::string_view file) {
  const toml::table doc = toml_read::parse(text, file);
  TableReader r(doc, std::string(file), "");
  const toml::table* h = r.opt_table("host");
  if (!h) r.fail("host", "missing: a host file holds one [host] table");
  r.finish();
  return parse_host(*h, file, "host");
}

Host load_host_file(const std::string& path) {
  const toml::table doc = toml_read::parse_file(path);
  TableReader r(doc, path, "");
  const toml::table* h = r.opt_table("host");
  if (!h) r.fail("host", "missing: a host file holds one [host] table");
  r.finish();
  return parse_host(*h, path, "host");
}

namespace {

// The class form of a latency written by class with ranges (a matrix cannot carry them).
std::string class_latency_toml(const Host& h) {
  std::string o;
  for (LatencyClass c : {LatencyClass::SameNode, LatencyClass::SameSocket, LatencyClass::CrossSocket}) {
    std::optional<double> v;
    for (int a = 0; a < h.nodes && !v; ++a)
      for (int b = 0; b < h.nodes && !v; ++b)
        if (h.latency_class(a, b) == c) v = h.node_latency_ns(a, b);
    if (v) o += fmt::format("{} = {}\n", latency_class_key(c), *v);
  }
  for (const LatencyRange& r : h.latency.ranges) o += fmt::format("{} = [{}, {}]\n", latency_range_key(r.cls), r.lo, r.hi);
  o += fmt::format("range_reason = {}\n", toml_read::quoted(h.latency.range_reason));
  return o;
}

}  // namespace

std::string to_toml(const Host& h) {
  std::string o = "[host]\n";
  o += fmt::format("name = {}\n", toml_read::quoted(h.name));
  if (!h.description.empty()) o += fmt::format("description = {}\n", toml_read::quoted(h.description));
  if (!h.cpu_model.empty()) o += fmt::format("cpu_model = {}\n", toml_read::quoted(h.cpu_model));
  if (h.base_ghz > 0) o += fmt::format("base_ghz = {}\n", h.base_ghz);
  if (!h.source.empty()) o += fmt::format("source = {}\n", toml_read::quoted(h.source));
  o += "cpus = [\n";
  for (const Cpu& c : h.cpus)
    o += fmt::format("  {{ id = {}, socket = {}, node = {}, core = {}, thread = {} }},\n", c.id, c.socket, c.node, c.core, c.thread);
  o += "]\n\n[host.latency]\n";
  o += fmt::format("source = {}\n", toml_read::quoted(h.latency.source));
  if (h.latency.smt_ns) o += fmt::format("smt_ns = {}\n", *h.latency.smt_ns);
  if (h.latency.ranges.empty()) {
    o += "# one-way cache-line transfer, ns; row = from NUMA node, column = to NUMA node\nmatrix_ns = [\n";
    for (const auto& row : h.latency.node_ns) o += fmt::format("  [{}],\n", fmt::join(row, ", "));
    o += "]\n";
  } else {
    o += class_latency_toml(h);
  }
  if (!h.latency.pairs.empty()) {
    o += "pairs = [\n";
    for (const PairLatency& p : h.latency.pairs) o += fmt::format("  {{ from = {}, to = {}, ns = {} }},\n", p.from, p.to, p.ns);
    o += "]\n";
  }
  for (const Its& t : h.its) {
    o += fmt::format("\n[[host.its]]\nsocket = {}\nnode = {}\n", t.socket, t.node);
    if (!t.name.empty()) o += fmt::format("name = {}\n", toml_read::quoted(t.name));
    if (t.svpet) o += fmt::format("svpet = {}\n", *t.svpet);
  }
  if (h.gic_common_lpi_aff || h.gic_socket_aff != 3) {
    o += "\n[host.gic]\n";
    if (h.gic_common_lpi_aff) o += fmt::format("common_lpi_aff = {}\n", *h.gic_common_lpi_aff);
    if (h.gic_socket_aff != 3) o += fmt::format("socket_aff = {}\n", h.gic_socket_aff);
  }
  return o;
}

nlohmann::json to_json(const Host& h) {
  nlohmann::json j;
  j["name"] = h.name;
  j["description"] = h.description;
  j["cpu_model"] = h.cpu_model;
  j["base_ghz"] = h.base_ghz;
  j["source"] = h.source;
  j["sockets"] = h.sockets;
  j["nodes"] = h.nodes;
  auto& cpus = j["cpus"] = nlohmann::json::array();
  for (const Cpu& c : h.cpus)
    cpus.push_back({{"id", c.id}, {"socket", c.socket}, {"node", c.node}, {"core", c.core}, {"thread", c.thread}});
  auto& lat = j["latency"];
  lat["unit"] = "ns";
  lat["source"] = h.latency.source;
  lat["node_ns"] = h.latency.node_ns;
  if (h.latency.smt_ns) lat["smt_ns"] = *h.latency.smt_ns;
  lat["pairs"] = nlohmann::json::array();
  for (const PairLatency& p : h.latency.pairs) lat["pairs"].push_back({{"from", p.from}, {"to", p.to}, {"ns", p.ns}});
  if (!h.latency.ranges.empty()) {
    for (const LatencyRange& r : h.latency.ranges)
      lat["ranges"].push_back({{"class", latency_class_key(r.cls)}, {"ns", r.ns}, {"range_ns", {r.lo, r.hi}}});
    lat["range_reason"] = h.latency.range_reason;
  }
  auto& its = j["its"] = nlohmann::json::array();
  for (std::size_t i = 0; i < h.its.size(); ++i)
    its.push_back({{"index", i},
                   {"socket", h.its[i].socket},
                   {"node", h.its[i].node},
                   {"name", h.its[i].name},
                   {"svpet", h.its[i].svpet ? nlohmann::json(*h.its[i].svpet) : nlohmann::json()}});
  if (h.gic_common_lpi_aff) j["gic"] = {{"common_lpi_aff", *h.gic_common_lpi_aff}, {"socket_aff", h.gic_socket_aff}};
  return j;
}

std::string summary(const Host& h) {
  std::string o = fmt::format("host {}", h.name.empty() ? "(unnamed)" : h.name);
  if (!h.cpu_model.empty()) o += fmt::format(" — {}", h.cpu_model);
  o += "\n";
  if (!h.description.empty()) o += fmt::format("  {}\n", h.description);
  std::map<int, int> threads_per_core;
  for (const Cpu& c : h.cpus) ++threads_per_core[c.core];
  int max_t = 0;
  for (auto& [core, n] : threads_per_core) max_t = std::max(max_t, n);
  o += fmt::format("  {} socket(s), {} NUMA node(s), {} CPUs ({} cores, up to {} thread(s) per core)", h.sockets, h.nodes,
                   h.cpus.size(), threads_per_core.size(), max_t);
  if (h.base_ghz > 0) o += fmt::format(", {} GHz", h.base_ghz);
  o += "\n";
  for (int s = 0; s < h.sockets; ++s)
    for (int n = 0; n < h.nodes; ++n)
      if (h.node_socket(n) == s)
        o += fmt::format("  socket {}  node {}  CPUs {}\n", s, n, Host::format_cpu_list(h.cpus_of_node(n)));
  if (h.its.empty()) {
    o += "  ITS: none\n";
  } else {
    o += "  ITSs in firmware order:\n";
    for (std::size_t i = 0; i < h.its.size(); ++i)
      o += fmt::format("    #{}  socket {}  node {}{}{}\n", i, h.its[i].socket, h.its[i].node,
                       h.its[i].svpet ? fmt::format("  SVPET {}", *h.its[i].svpet) : std::string(),
                       h.its[i].name.empty() ? "" : "  " + h.its[i].name);
  }
  if (h.gic_common_lpi_aff)
    o += fmt::format("  GICR_TYPER.CommonLPIAff = {}, sockets numbered at Aff{}\n", *h.gic_common_lpi_aff, h.gic_socket_aff);
  o += "  one-way cache-line latency, ns (row = from node, column = to node):\n        ";
  for (int b = 0; b < h.nodes; ++b) o += fmt::format("{:>7}", fmt::format("n{}", b));
  o += "\n";
  for (int a = 0; a < h.nodes; ++a) {
    o += fmt::format("  {:>6}", fmt::format("n{}", a));
    for (int b = 0; b < h.nodes; ++b) o += fmt::format("{:>7}", fmt::format("{:.1f}", h.node_latency_ns(a, b)));
    o += "\n";
  }
  if (h.latency.smt_ns) o += fmt::format("  SMT siblings: {} ns\n", *h.latency.smt_ns);
  if (!h.latency.pairs.empty()) o += fmt::format("  {} measured CPU-pair override(s)\n", h.latency.pairs.size());
  for (const LatencyRange& r : h.latency.ranges)
    o += fmt::format("  {} = {} ns, uncertain over [{} - {}] ns (drawn by ipilab run --uncertainty)\n", latency_class_key(r.cls), r.ns, r.lo, r.hi);
  o += fmt::format("  latency source: {}\n", h.latency.source);
  if (!h.latency.ranges.empty()) o += fmt::format("  latency ranges: {}\n", h.latency.range_reason);
  if (!h.source.empty()) o += fmt::format("  layout source: {}\n", h.source);
  return o;
}

}  // namespace ipilab::topology
