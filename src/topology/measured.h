// ipilab/topology/measured.h — folding a measured core-to-core matrix into a host's latency.
#pragma once

#include <string>
#include <vector>

#include "topology/host.h"

namespace ipilab::topology {

/// Replaces host.latency with a measured one. `cpu_ids[i]` is the Linux CPU of row/column i of
/// `one_way_ns` (one-way ns from row to column; the diagonal and NaN entries are ignored).
/// node_ns[a][b] becomes the mean over measured pairs from node a to node b that are not SMT
/// siblings (entries with no measured pair keep their previous value); smt_ns the mean over
/// sibling pairs (if any); and, when `keep_pairs`, every measured pair becomes a per-pair override.
/// `source` describes the method. Throws InputError if a CPU id is not on the host or the matrix
/// is not square of size cpu_ids.size().
void apply_measured_c2c(Host& host, const std::vector<int>& cpu_ids, const std::vector<std::vector<double>>& one_way_ns,
                        std::string source, bool keep_pairs);

}  // namespace ipilab::topology
