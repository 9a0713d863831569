// ipilab/topology/host_toml.h — hosts as text: TOML in and out, JSON out, a readable summary.
//
// TOML form (documented with examples in profiles/README.md, "Hosts"):
//
//   [host]
//   name = "kunpeng920-2s"            # optional strings: name, description, cpu_model, source
//   base_ghz = 2.6                    # optional, nominal clock (GHz)
//   [host.layout]                     # a regular layout ...
//   sockets = 2                       #   1..4096
//   nodes_per_socket = 1              #   default 1
//   cores_per_node = 32
//   threads_per_core = 1              #   default 1
//   numbering = "siblings-adjacent"   #   or "siblings-last" (see below)
//   # ... or an explicit list (what `ipilab topo --host` writes), exactly one of the two:
//   # cpus = [ { id = 0, socket = 0, node = 0, core = 0, thread = 0 }, ... ]
//   [host.latency]                    # one-way cache-line transfer, ns (required)
//   source = "..."                    # required
//   same_node_ns = 40                 # class values, or a full matrix_ns = [[..], ..]
//   same_socket_ns = 60               #   (needed when a socket has several nodes)
//   cross_socket_ns = 130             #   (needed when there are several sockets)
//   smt_ns = 8                        # optional, SMT siblings
//   pairs = [ { from = 0, to = 33, ns = 142.5 } ]   # optional measured per-CPU-pair overrides
//   [[host.its]]                      # ITSs in firmware order; node defaults to the socket's first
//   socket = 0
//   svpet = 1                         # optional, GITS_TYPER.SVPET as the firmware sets it (0..3)
//   [host.gic]
//   common_lpi_aff = 1                # optional, GICR_TYPER.CommonLPIAff
//
// Numbering of a layout: "siblings-adjacent" gives the threads of a core consecutive ids
// (cpu = core * threads + thread; how Arm servers and many BIOSes number CPUs); "siblings-last"
// numbers the first thread of every core first, then the second threads (Linux on most Intel
// servers: cpu = thread * total_cores + core). Cores and nodes are numbered socket by socket.
//
// Errors: InputError with place "FILE:LINE:COLUMN: host.key" for unknown keys, wrong types,
// out-of-range values, a matrix of the wrong size, an ITS on a socket that does not exist, etc.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "topology/host.h"

namespace ipilab::topology {

/// Parses a [host] table found at dotted key `key` of a document read from `file`.
Host parse_host(const toml::table& host_table, std::string_view file, std::string_view key = "host");
/// Parses a document holding exactly one top-level table, [host].
Host load_host_text(std::string_view text, std::string_view file);
/// Reads and parses a host file (InputError if missing).
Host load_host_file(const std::string& path);

/// The host in the explicit TOML form above (cpus list + matrix); parse(to_toml(h)) == h.
std::string to_toml(const Host& host);
/// The same content as JSON: {name, description, cpu_model, base_ghz, source, sockets, nodes,
/// cpus:[{id,socket,node,core,thread}], latency:{unit:"ns", source, node_ns, smt_ns?, pairs},
/// its:[{index, socket, node, name, svpet|null}], gic:{common_lpi_aff}?}.
nlohmann::json to_json(const Host& host);
/// Readable multi-line summary: sockets, nodes and their CPUs, ITSs, the latency matrix.
std::string summary(const Host& host);

}  // namespace ipilab::topology
