// Arm hosts as the GIC mechanisms see them: ITSs in any firmware order and several per socket,
// CommonLPIAff 0-3 each meaning what the spec says, the remote-ITS penalty from the host's latency
// matrix, and hosts the model cannot represent rejected with file, line and key.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/error.h"
#include "run_helpers.h"
#include "topology/host_toml.h"
#include "workload/mechanism.h"
#include "workload/mechanisms/arm_common.h"

namespace ipilab::workload {
namespace {
using testing::counter;

struct HostRun {
  topology::Host host;
  RunSpec spec;
};

// A host of `sockets` x `nodes` NUMA nodes x `cores` CPUs, `its` = [[host.its]] tables, `gic` = the
// [host.gic] body; a 4-vCPU VM pinned to `pins`, ipi_hw from vCPU 0 to vCPU 1.
std::unique_ptr<HostRun> host_run(const std::string& layout, const std::string& latency, const std::string& its,
                                  const std::string& gic, const std::vector<int>& pins, const std::string& params) {
  auto r = std::make_unique<HostRun>();
  const std::string text = fmt::format("[host]\nname = \"t\"\n[host.layout]\n{}\n[host.latency]\nsource = \"test\"\n{}\n{}\n[host.gic]\n{}\n",
                                       layout, latency, its, gic);
  r->host = topology::load_host_text(text, "host.toml");
  r->spec.host = &r->host;
  r->spec.vm = topology::Vm::make(r->host, static_cast<int>(pins.size()), pins, 64);
  r->spec.profile = cost::Profile::load_file(testing::source_dir() + "/profiles/kunpeng920-2s.toml");
  r->spec.params = Params(toml_read::parse(params, "test.toml"), "test.toml");
  r->spec.iterations = 2000;
  r->spec.warmup = 20;
  return r;
}


double ipi_hw(HostRun& r) { return find_workload("ipi_hw", "t").make()->run(r.spec).metrics.at(0).summary.mean; }

const std::string k2s = "sockets = 2\ncores_per_node = 32";
const std::string kLat150 = "same_node_ns = 50\ncross_socket_ns = 150";

// The pre-seed find_4_1_its() takes the head of its_nodes = the LAST ITS firmware reported. With
// socket 1's ITS reported first, a VM on socket 0 is the local one.
TEST(GicHost, FirmwareOrderDecidesThePreSeedIts) {
  const std::string reversed = "[[host.its]]\nsocket = 1\n[[host.its]]\nsocket = 0\n";
  auto s0 = host_run(k2s, kLat150, reversed, "common_lpi_aff = 1", {0, 1, 2, 3}, "find_4_1_its = \"pre-seed\"\n");
  auto s1 = host_run(k2s, kLat150, reversed, "common_lpi_aff = 1", {32, 33, 34, 35}, "find_4_1_its = \"pre-seed\"\n");
  EXPECT_NEAR(ipi_hw(*s0), 750, 750 * 0.02);
  EXPECT_NEAR(ipi_hw(*s1), 850, 850 * 0.02);
}

// Two ITSs on each socket (firmware order 0a, 1a, 0b, 1b): with per-socket vPE tables every CPU's
// local_4_1_its is one of its own socket's ITSs.
TEST(GicHost, SeveralItsPerSocketStayLocalAfterTheSeed) {
  const std::string four = "[[host.its]]\nsocket = 0\n[[host.its]]\nsocket = 1\n[[host.its]]\nsocket = 0\n[[host.its]]\nsocket = 1\n";
  for (const std::vector<int>& pins : {std::vector<int>{0, 1, 2, 3}, std::vector<int>{32, 33, 34, 35}}) {
    auto r = host_run(k2s, kLat150, four, "common_lpi_aff = 1", pins, "find_4_1_its = \"post-seed\"\n");
    const RunResult res = find_workload("ipi_hw", "t").make()->run(r->spec);
    EXPECT_EQ(counter(res, "its_remote"), 0u);
    EXPECT_GT(counter(res, "its_local"), 0u);
    EXPECT_NEAR(res.metrics[0].summary.mean, 750, 750 * 0.02);
  }
}

// CommonLPIAff 0..3 on 2 sockets x 2 NUMA nodes x 32 CPUs, one ITS on each socket's first node
// (affinity: Aff3 = socket, Aff2 = node in socket, Aff1 = cluster of 16): which ITS a sender uses
// after the seed depends on how widely vPE tables are shared.
TEST(GicHost, EveryCommonLpiAffValueMeansItsOwnSharing) {
  const std::string layout = "sockets = 2\nnodes_per_socket = 2\ncores_per_node = 32";
  const std::string lat = "same_node_ns = 50\nsame_socket_ns = 80\ncross_socket_ns = 150";
  const std::string its = "[[host.its]]\nsocket = 0\nnode = 0\n[[host.its]]\nsocket = 1\nnode = 2\n";
  // Senders: CPU 16 (socket 0, node 0, cluster 1), CPU 40 (socket 0, node 1), CPU 64 (socket 1, node 2).
  auto remote = [&](int aff, int sender) {
    auto r = host_run(layout, lat, its, fmt::format("common_lpi_aff = {}", aff), {sender, sender + 1, sender + 2, sender + 3},
                      "find_4_1_its = \"post-seed\"\n");
    const RunResult res = find_workload("ipi_hw", "t").make()->run(r->spec);
    EXPECT_GT(counter(res, "its_remote") + counter(res, "its_local"), 0u);
    return counter(res, "its_remote") > 0;
  };
  // 1: per socket -> every CPU has its socket's ITS.
  EXPECT_FALSE(remote(1, 16));
  EXPECT_FALSE(remote(1, 40));
  EXPECT_FALSE(remote(1, 64));
  // 2: per NUMA node -> node 1 has no ITS: private table, the fallback (head of its_nodes = ITS1).
  EXPECT_FALSE(remote(2, 16));
  EXPECT_TRUE(remote(2, 40));
  EXPECT_FALSE(remote(2, 64));
  // 3: per cluster of 16 -> only cluster 0 of each ITS's node shares its table; CPU 16 falls back.
  EXPECT_TRUE(remote(3, 16));
  EXPECT_TRUE(remote(3, 40));
  // 0: one table for all; only socket 0's ITS (Aff3 = 0) matches it, and every CPU inherits CPU 0's.
  EXPECT_FALSE(remote(0, 16));
  EXPECT_FALSE(remote(0, 40));
  EXPECT_TRUE(remote(0, 64));
}

// The remote-ITS penalty is the topology's: doubling the cross-socket extra (150 -> 250 ns) doubles
// it (two crossings of (250 - 50) / 2 = 100 ns), and the local case does not move.
TEST(GicHost, CrossSocketLatencyMovesThePreSeedFigure) {
  const std::string its = "[[host.its]]\nsocket = 0\n[[host.its]]\nsocket = 1\n";
  auto a = host_run(k2s, kLat150, its, "common_lpi_aff = 1", {0, 1, 2, 3}, "find_4_1_its = \"pre-seed\"\n");
  auto b = host_run(k2s, "same_node_ns = 50\ncross_socket_ns = 250", its, "common_lpi_aff = 1", {0, 1, 2, 3},
                    "find_4_1_its = \"pre-seed\"\n");
  auto c = host_run(k2s, "same_node_ns = 50\ncross_socket_ns = 250", its, "common_lpi_aff = 1", {0, 1, 2, 3},
                    "find_4_1_its = \"post-seed\"\n");
  EXPECT_NEAR(ipi_hw(*a), 850, 850 * 0.02);
  EXPECT_NEAR(ipi_hw(*b), 950, 950 * 0.02);
  EXPECT_NEAR(ipi_hw(*c), 750, 750 * 0.02);
}

TEST(GicHost, AHostTheModelCannotRepresentIsAnInputErrorNamingFileLineAndKey) {
  // CPU ids with a hole (no redistributor number 2).
  const std::string text = "[host]\nname = \"holes\"\ncpus = [ { id = 0, socket = 0, node = 0, core = 0 },\n"
                           "  { id = 1, socket = 0, node = 0, core = 1 }, { id = 3, socket = 0, node = 0, core = 3 } ]\n"
                           "[host.latency]\nsource = \"t\"\nsame_node_ns = 50\n[[host.its]]\nsocket = 0\n";
  const topology::Host h = topology::load_host_text(text, "holes.toml");  // fine for x86 use
  try {
    gic_layout_of(h);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("holes.toml:"), std::string::npos) << m;
    EXPECT_NE(m.find("host.its"), std::string::npos) << m;
    EXPECT_NE(m.find("CPU 2 is missing"), std::string::npos) << m;
  }
  // socket_aff outside 2..3 is rejected when read.
  try {
    topology::load_host_text("[host]\nname = \"x\"\n[host.layout]\nsockets = 1\ncores_per_node = 2\n[host.latency]\nsource = \"t\"\n"
                             "same_node_ns = 50\n[host.gic]\nsocket_aff = 1\n",
                             "aff.toml");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("aff.toml:10:14: host.gic.socket_aff"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipilab::workload

namespace ipilab::workload {
namespace {

std::string setting(const RunResult& r, const std::string& key) {
  for (const auto& [k, v] : r.settings)
    if (k == key) return v;
  return {};
}

// CommonLPIAff 0 on 2 sockets numbered at Aff3: the RDs share one vPE table. With SVPET derived
// (1: "Aff3"), only socket 0's ITS matches, owns the table, and is every CPU's local_4_1_its. A
// firmware that sets SVPET = 0 on both ITSs shares no ITS table: the RDs allocate their own, no
// CPU has a local ITS, and find_4_1_its() falls back to the head of its_nodes (ITS1) — the local
// and remote sockets swap.
TEST(GicHost, FirmwareSvpetOnACommonLpiAff0HostDecidesTheTableOwnerAndTheLocalIts) {
  const std::string derived = "[[host.its]]\nsocket = 0\n[[host.its]]\nsocket = 1\n";
  const std::string svpet0 = "[[host.its]]\nsocket = 0\nsvpet = 0\n[[host.its]]\nsocket = 1\nsvpet = 0\n";
  auto run = [&](const std::string& its, const std::vector<int>& pins) {
    auto r = host_run(k2s, kLat150, its, "common_lpi_aff = 0", pins, "find_4_1_its = \"post-seed\"\n");
    return find_workload("ipi_hw", "t").make()->run(r->spec);
  };
  const RunResult d0 = run(derived, {0, 1, 2, 3}), d1 = run(derived, {32, 33, 34, 35});
  EXPECT_NEAR(d0.metrics[0].summary.mean, 750, 750 * 0.02);
  EXPECT_NEAR(d1.metrics[0].summary.mean, 850, 850 * 0.02);
  EXPECT_EQ(setting(d0, "vPE tables"),
            "CommonLPIAff = 0; SVPET ITS0 = 1, ITS1 = 1; table of ITS0 (used by ITS0, CPUs 0-63); "
            "table of ITS1 (used by ITS1)");
  const RunResult f0 = run(svpet0, {0, 1, 2, 3}), f1 = run(svpet0, {32, 33, 34, 35});
  EXPECT_NEAR(f0.metrics[0].summary.mean, 850, 850 * 0.02);
  EXPECT_NEAR(f1.metrics[0].summary.mean, 750, 750 * 0.02);
  EXPECT_GT(counter(f0, "its_remote"), 0u);
  EXPECT_EQ(counter(f1, "its_remote"), 0u);
  EXPECT_EQ(setting(f0, "vPE tables"),
            "CommonLPIAff = 0; SVPET ITS0 = 0, ITS1 = 0; table of ITS0 (used by ITS0); table of ITS1 (used by "
            "ITS1); table of the RDs (first CPU 0) (used by CPUs 0-63)");
}

TEST(GicHost, SvpetRoundTripsThroughTheHostFileAndIsRangeChecked) {
  const std::string text = "[host]\nname = \"s\"\n[host.layout]\nsockets = 2\ncores_per_node = 2\n[host.latency]\n"
                           "source = \"t\"\nsame_node_ns = 50\ncross_socket_ns = 150\n[[host.its]]\nsocket = 0\nsvpet = 2\n"
                           "[[host.its]]\nsocket = 1\n";
  const topology::Host h = topology::load_host_text(text, "s.toml");
  ASSERT_EQ(h.its.size(), 2u);
  EXPECT_EQ(h.its[0].svpet, 2);
  EXPECT_FALSE(h.its[1].svpet.has_value());
  EXPECT_EQ(topology::load_host_text(topology::to_toml(h), "again.toml"), h);
  EXPECT_EQ(topology::to_json(h)["its"][0]["svpet"], 2);
  std::string bad = text;
  bad.replace(bad.find("svpet = 2"), 9, "svpet = 4");
  EXPECT_THROW(topology::load_host_text(bad, "bad.toml"), InputError);
}

}  // namespace
}  // namespace ipilab::workload
