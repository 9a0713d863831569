// ipilab topo — show a host: a named preset, a TOML file, or this machine (hwloc).
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/output.h"
#include "common/file.h"
#include "measure/c2c.h"
#include "topology/discover.h"
#include "topology/host_toml.h"
#include "topology/measured.h"
#include "topology/presets.h"

namespace ipilab::cli {

namespace {

constexpr const char* kTopoHelp = R"(Shows a host: its sockets, NUMA nodes, CPUs (Linux numbers), ITSs in firmware
order, and the node-to-node one-way cache-line latency matrix in ns (row = from, column = to).

The host comes from exactly one of:
  --preset NAME   a shipped preset (see 'ipilab list --presets'), e.g. kunpeng920-2s
  --file F        a host TOML file ([host] table; format in profiles/README.md)
  --host          this machine, read with hwloc (the default). Its latency matrix is an
                  ESTIMATE from ACPI SLIT distances unless measured:
  --measure       (with --host) measure the one-way latency of every CPU pair with the CAS
                  ping-pong of nviennot/core-to-core-latency (--round-trips x --samples per pair;
                  pairs one at a time, so N CPUs take N(N-1)/2 measurements) and store the node
                  means, the SMT-sibling mean and, up to 64 CPUs, every pair as an override.

Outputs: a readable summary on stdout; --json prints JSON instead; --toml prints the TOML form;
--out F.toml also saves the TOML form (written atomically), ready for --file or a scenario.

Examples:
  ipilab topo --preset kunpeng920-2s
  ipilab topo --host --out myhost.toml
  ipilab topo --host --measure --samples 10 --out myhost.toml
  ipilab topo --file myhost.toml --json)";

}  // namespace

void add_topo_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("topo", "Show a host topology: preset, TOML file or this machine (hwloc)");
  cmd->footer(kTopoHelp);
  struct Opts {
    std::string preset, file, out;
    bool host = false, json = false, toml = false, measure = false;
    unsigned round_trips = 1000, samples = 30;
  };
  auto opts = std::make_shared<Opts>();
  auto* o_preset = cmd->add_option("--preset", opts->preset, "Host preset name (ipilab list --presets)");
  auto* o_file = cmd->add_option("--file", opts->file, "Host TOML file");
  auto* o_host = cmd->add_flag("--host", opts->host, "Read this machine with hwloc (default)");
  o_preset->excludes(o_file)->excludes(o_host);
  o_file->excludes(o_host);
  cmd->add_option("--out", opts->out, "Also save the host as TOML to this file");
  cmd->add_flag("--json", opts->json, "Print JSON instead of the summary");
  cmd->add_flag("--toml", opts->toml, "Print the TOML form instead of the summary");
  cmd->add_flag("--measure", opts->measure,
                "With --host: measure the core-to-core latency matrix (one-way CAS ping-pong, as "
                "nviennot/core-to-core-latency) instead of estimating it");
  cmd->add_option("--round-trips", opts->round_trips, "With --measure: round trips per sample (default 1000)")
      ->check(CLI::Range(1u, 10'000'000u));
  cmd->add_option("--samples", opts->samples, "With --measure: samples per CPU pair (default 30)")
      ->check(CLI::Range(1u, 100'000u));
  cmd->callback([opts] {
    if (opts->json && opts->toml) throw InputError("--json/--toml", "choose one output form");
    output::check_outputs({{"--out", opts->out, false}}, {{"--file", opts->file}});
    topology::Host host;
    if (!opts->preset.empty()) {
      host = topology::load_preset(opts->preset);
    } else if (!opts->file.empty()) {
      host = topology::load_host_file(opts->file);
    } else {
      host = topology::discover_host();
    }
    if (opts->measure) {
      if (!opts->preset.empty() || !opts->file.empty())
        throw InputError("--measure", "measures this machine; use it with --host (or no source)");
      measure::C2cConfig cfg;
      cfg.round_trips = opts->round_trips;
      cfg.samples = opts->samples;
      const measure::C2cMatrix m = measure::measure_c2c(cfg);
      const std::vector<int> os = topology::pu_os_indexes();
      std::vector<int> ids;
      for (unsigned pu : m.pus) ids.push_back(os.at(pu));
      topology::apply_measured_c2c(
          host, ids, m.mean_ns,
          fmt::format("measured by 'ipilab topo --host --measure': CAS ping-pong one-way latency (method of "
                      "nviennot/core-to-core-latency), {} round trips x {} samples per pair; node entries are "
                      "means over the measured CPU pairs", m.round_trips, m.samples),
          ids.size() <= 64);
    }
    if (!opts->out.empty()) output::write_file(opts->out, topology::to_toml(host), "--out");
    if (opts->json) {
      std::fputs((topology::to_json(host).dump(2) + "\n").c_str(), stdout);
    } else if (opts->toml) {
      std::fputs(topology::to_toml(host).c_str(), stdout);
    } else {
      std::fputs(topology::summary(host).c_str(), stdout);
      if (!opts->out.empty()) fmt::print("saved to {}\n", opts->out);
    }
  });
}

}  // namespace ipilab::cli
