// ipilab/hv/send_tool.h — the logic of `ipilab hv send`: from the command's option values to a
// SendCase (send_case.h), run it, and render the result as text or as the JSON contract of
// docs/hv.md. Pure: src/cli/hv_options.h maps the CLI11 options onto SendOptions.
//
// Formats: --cpu-vp and the cpulists as in cpulist.h; --vector and --hypercall-status are hex
// (common/hex.h: "fb" == "0xfb"); CPU numbers, --nr-cpus and --max-vp-index decimal.
// Errors: InputError naming the option (the CLI exits 2, printing nothing else).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hv/send_case.h"

namespace ipilab::hv::tool {

/// Raw option values of `ipilab hv send`. Optional ones are unset unless given (an empty string is
/// a given, empty cpulist).
struct SendOptions {
  std::string linux_version;                   ///< --linux VERSION (required)
  std::string kvm = "mainline";                ///< --kvm VERSION: the modelled host
  std::optional<std::string> cpu_vp;           ///< --cpu-vp VP0,VP1,... (required)
  std::optional<std::string> present;          ///< --present CPUS
  std::optional<std::string> online;           ///< --online CPUS
  std::optional<unsigned> self;                ///< --self CPU (required)
  std::optional<unsigned> send_ipi;            ///< --send-ipi CPU
  std::optional<std::string> send_ipi_mask;    ///< --send-ipi-mask CPUS
  std::optional<std::string> send_ipi_mask_allbutself;  ///< --send-ipi-mask-allbutself CPUS
  bool send_ipi_allbutself = false;            ///< --send-ipi-allbutself
  bool send_ipi_all = false;                   ///< --send-ipi-all
  bool send_ipi_self = false;                  ///< --send-ipi-self
  std::optional<std::string> vector;           ///< --vector HEX (required)
  unsigned nr_cpus = 8192;                     ///< --nr-cpus N (CONFIG_NR_CPUS)
  std::optional<std::uint32_t> max_vp_index;   ///< --max-vp-index N
  bool no_ex_masks = false;                    ///< --no-ex-masks
  bool no_cluster_ipi = false;                 ///< --no-cluster-ipi
  bool no_lapic = false;                       ///< --no-lapic
  bool no_hypercall_page = false;              ///< --no-hypercall-page
  std::optional<std::string> hypercall_status; ///< --hypercall-status HEX
  bool json = false;                           ///< --json
};

/// Validates the options and builds the case. Throws InputError naming the option.
SendCase build_send_case(const SendOptions& options);

struct SendToolResult {
  SendCaseRun run;
  nlohmann::ordered_json json;  ///< exactly {"hypercalls", "fallback", "returned", "oracle"} (docs/hv.md)
  std::string text;             ///< the human report
};

/// build_send_case + run_send_case + both renderings. Throws InputError naming the option.
SendToolResult run_send(const SendOptions& options);

/// The JSON contract of one run (docs/hv.md "hv send --json").
nlohmann::ordered_json send_json(const SendCaseRun& run);
/// The text report of one run. `kvm` names the host version in it.
std::string send_text(const SendCase& c, const SendCaseRun& run);

/// `text` broken at spaces into lines of at most `width` columns, each indented by `indent`.
std::string wrap(std::string_view text, std::size_t indent, std::size_t width);

/// `ipilab hv send --linux list`: every Linux version with its commits and what it changes.
std::string linux_list_text();
/// The --help description (what it does, formats, examples that work from any directory).
std::string send_help();

}  // namespace ipilab::hv::tool
