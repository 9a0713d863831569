// Tests of topology/host.h, host_toml.h, presets.h and discover.h.
#include "topology/host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/error.h"
#include "topology/discover.h"
#include "topology/host_toml.h"
#include "topology/measured.h"
#include "topology/presets.h"

namespace ipilab::topology {
namespace {

const std::string kFixtures = std::string(IPILAB_SOURCE_DIR) + "/tests/topology/fixtures/";

// Runs `f`, expects an InputError, returns its message.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST(Presets, Seed000Host_IsTwoSocketsOfSixCoresTwelveThreads) {
  const Host h = load_preset("ws2019-2s-e5-2420v2");
  EXPECT_EQ(h.sockets, 2);
  EXPECT_EQ(h.nodes, 2);
  EXPECT_EQ(h.cpus.size(), 24u);
  EXPECT_DOUBLE_EQ(h.base_ghz, 2.2);
  // siblings-last numbering: CPU 0 and CPU 12 are the two threads of core 0.
  EXPECT_EQ(h.smt_siblings(0), std::vector<int>{12});
  EXPECT_EQ(h.cpu(6).socket, 1);
  EXPECT_EQ(Host::format_cpu_list(h.cpus_of_socket(0)), "0-5,12-17");
  EXPECT_DOUBLE_EQ(h.c2c_ns(0, 12), 7.0);
  EXPECT_DOUBLE_EQ(h.c2c_ns(0, 1), 44.0);
  EXPECT_DOUBLE_EQ(h.c2c_ns(0, 6), 118.0);
  EXPECT_TRUE(h.its.empty());
}

TEST(Presets, Seed003Host_HasOneItsPerSocketInFirmwareOrder) {
  const Host h = load_preset("kunpeng920-2s");
  EXPECT_EQ(h.sockets, 2);
  EXPECT_EQ(h.cpus.size(), 64u);
  ASSERT_EQ(h.its.size(), 2u);
  EXPECT_EQ(h.its[0].socket, 0);
  EXPECT_EQ(h.its[1].socket, 1);
  EXPECT_EQ(h.its_on_socket(1), std::vector<int>{1});
  EXPECT_EQ(Host::format_cpu_list(h.cpus_of_socket(1)), "32-63");
  EXPECT_EQ(h.gic_common_lpi_aff, 1);
}

TEST(Presets, FourSocketAndBigX86Hosts_Load) {
  const Host k4 = load_preset("kunpeng920-4s");
  EXPECT_EQ(k4.sockets, 4);
  EXPECT_EQ(k4.cpus.size(), 128u);
  EXPECT_EQ(k4.its.size(), 4u);
  const Host big = load_preset("x86-16s-4096t");
  EXPECT_EQ(big.cpus.size(), 4096u);
  EXPECT_EQ(big.sockets, 16);
  EXPECT_EQ(big.smt_siblings(0), std::vector<int>{2048});
}

TEST(Presets, ListHasEveryShippedHostWithDescription) {
  const auto list = list_presets();
  std::vector<std::string> names;
  for (const auto& p : list) {
    names.push_back(p.name);
    EXPECT_FALSE(p.description.empty()) << p.name;
  }
  EXPECT_THAT(names, ::testing::IsSupersetOf({"ws2019-2s-e5-2420v2", "kunpeng920-2s", "kunpeng920-4s", "x86-16s-4096t"}));
}

TEST(Presets, UnknownName_IsInputErrorListingNames) {
  const std::string msg = input_error([] { load_preset("nope"); });
  EXPECT_THAT(msg, ::testing::HasSubstr("preset 'nope'"));
  EXPECT_THAT(msg, ::testing::HasSubstr("kunpeng920-2s"));
}

TEST(HostToml, ExplicitCpusAsymmetricMatrixSmtAndPairOverride) {
  const Host h = load_host_file(kFixtures + "asym-3node.toml");
  EXPECT_EQ(h.sockets, 2);
  EXPECT_EQ(h.nodes, 3);
  EXPECT_EQ(h.cpu_id_limit(), 5);
  EXPECT_EQ(h.find_cpu(3), nullptr);
  EXPECT_DOUBLE_EQ(h.c2c_ns(0, 1), 5.0);     // SMT siblings
  EXPECT_DOUBLE_EQ(h.c2c_ns(0, 2), 60.0);    // node 0 -> node 1
  EXPECT_DOUBLE_EQ(h.c2c_ns(2, 0), 65.0);    // asymmetric
  EXPECT_DOUBLE_EQ(h.c2c_ns(0, 4), 142.5);   // measured pair override
  EXPECT_DOUBLE_EQ(h.c2c_ns(4, 0), 155.0);   // override is one-way
  EXPECT_EQ(h.c2c(2, 4), sim::Ps{160'000});
  ASSERT_EQ(h.its.size(), 2u);
  EXPECT_EQ(h.its[0].node, 2);  // default: first node of socket 1
  EXPECT_EQ(h.its[1].node, 1);
  EXPECT_EQ(h.its[1].name, "second");
}

TEST(HostToml, ToTomlRoundTrips) {
  for (const char* name : {"ws2019-2s-e5-2420v2", "kunpeng920-2s"}) {
    const Host h = load_preset(name);
    EXPECT_EQ(load_host_text(to_toml(h), "roundtrip.toml"), h) << name;
  }
  const Host a = load_host_file(kFixtures + "asym-3node.toml");
  EXPECT_EQ(load_host_text(to_toml(a), "roundtrip.toml"), a);
}

// Latency class ranges: read with their reason, drawn by --uncertainty through set_class_latency.
TEST(HostToml, LatencyRanges_AreReadAndMoveTheirClassOnly) {
  Host h = load_preset("kunpeng920-2s");
  ASSERT_EQ(h.latency.ranges.size(), 2u);
  EXPECT_EQ(h.latency.ranges[0].cls, LatencyClass::SameNode);
  EXPECT_EQ(h.latency.ranges[1].cls, LatencyClass::CrossSocket);
  EXPECT_DOUBLE_EQ(h.latency.ranges[1].ns, 150.0);
  EXPECT_DOUBLE_EQ(h.latency.ranges[1].lo, 138.6);
  EXPECT_DOUBLE_EQ(h.latency.ranges[1].hi, 230.0);
  EXPECT_FALSE(h.latency.range_reason.empty());
  EXPECT_EQ(to_json(h)["latency"]["ranges"][1]["class"], "cross_socket_ns");
  h.set_class_latency(LatencyClass::CrossSocket, 230.0);
  EXPECT_DOUBLE_EQ(h.node_latency_ns(0, 1), 230.0);
  EXPECT_DOUBLE_EQ(h.node_latency_ns(1, 0), 230.0);
  EXPECT_DOUBLE_EQ(h.node_latency_ns(0, 0), 50.0);
  EXPECT_DOUBLE_EQ(h.hop_ns(0, 1), 90.0);  // (230 - 50) / 2
  EXPECT_DOUBLE_EQ(h.latency.ranges[1].ns, 230.0);
}

TEST(HostTomlErrors, LatencyRanges_RefusedWhereTheyCannotMeanAnything) {
  const std::string head = "[host]\n[host.layout]\nsockets = 2\ncores_per_node = 2\n[host.latency]\nsource = \"t\"\n";
  auto err = [&](const std::string& body) { return input_error([&] { load_host_text(head + body, "r.toml"); }); };
  EXPECT_THAT(err("same_node_ns = 50\ncross_socket_ns = 150\ncross_socket_range_ns = [160, 230]\nrange_reason = \"x\"\n"),
              ::testing::HasSubstr("host.latency.cross_socket_range_ns: [160, 230] does not contain cross_socket_ns = 150"));
  EXPECT_THAT(err("same_node_ns = 50\ncross_socket_ns = 150\ncross_socket_range_ns = [100, 230]\n"),
              ::testing::HasSubstr("host.latency.range_reason: missing"));
  EXPECT_THAT(err("same_node_ns = 50\ncross_socket_ns = 150\nrange_reason = \"x\"\n"),
              ::testing::HasSubstr("host.latency.range_reason: given without any *_range_ns"));
  EXPECT_THAT(err("same_node_ns = 50\ncross_socket_ns = 150\ncross_socket_range_ns = [100]\nrange_reason = \"x\"\n"),
              ::testing::HasSubstr("expected [low, high] in ns, got 1 numbers"));
  EXPECT_THAT(err("matrix_ns = [[50, 150], [150, 50]]\ncross_socket_range_ns = [100, 230]\nrange_reason = \"x\"\n"),
              ::testing::HasSubstr("with matrix_ns the entries of one class may differ"));
}

TEST(HostToml, Json_HasCpusMatrixAndIts) {
  const auto j = to_json(load_preset("kunpeng920-2s"));
  EXPECT_EQ(j["cpus"].size(), 64u);
  EXPECT_EQ(j["latency"]["unit"], "ns");
  EXPECT_EQ(j["latency"]["node_ns"][0][1], 150.0);
  EXPECT_EQ(j["its"][1]["socket"], 1);
}

TEST(HostToml, Summary_ShowsSocketsItsAndMatrix) {
  const std::string s = summary(load_preset("kunpeng920-2s"));
  EXPECT_THAT(s, ::testing::HasSubstr("2 socket(s), 2 NUMA node(s), 64 CPUs"));
  EXPECT_THAT(s, ::testing::HasSubstr("socket 1  node 1  CPUs 32-63"));
  EXPECT_THAT(s, ::testing::HasSubstr("#1  socket 1  node 1"));
  EXPECT_THAT(s, ::testing::HasSubstr("150.0"));
}

TEST(HostTomlErrors, UnknownKey_NamesFileLineAndKey) {
  const std::string msg = input_error([] { load_host_file(kFixtures + "bad-unknown-key.toml"); });
  EXPECT_THAT(msg, ::testing::HasSubstr("bad-unknown-key.toml:6:1: host.layout.corez_per_node: unknown key"));
}

TEST(HostTomlErrors, WrongType_NamesFileLineAndKey) {
  const std::string msg = input_error([] { load_host_file(kFixtures + "bad-wrong-type.toml"); });
  EXPECT_THAT(msg, ::testing::HasSubstr("bad-wrong-type.toml:4:11: host.layout.sockets: expected an integer, got string"));
}

TEST(HostTomlErrors, MissingFile_NamesThePath) {
  const std::string msg = input_error([] { load_host_file(kFixtures + "does-not-exist.toml"); });
  EXPECT_THAT(msg, ::testing::HasSubstr("does-not-exist.toml: no such file"));
}

TEST(HostTomlErrors, SyntaxError_NamesLineAndColumn) {
  const std::string msg = input_error([] { load_host_text("[host]\nname = \n", "x.toml"); });
  EXPECT_THAT(msg, ::testing::HasSubstr("x.toml:2:"));
  EXPECT_THAT(msg, ::testing::HasSubstr("TOML syntax error"));
}

TEST(HostTomlErrors, MatrixOfWrongSize_IsRejectedAtTheKey) {
  const char* text = R"([host]
[host.layout]
sockets = 2
cores_per_node = 2
[host.latency]
source = "t"
matrix_ns = [[1, 2, 3], [4, 5, 6]]
)";
  const std::string msg = input_error([&] { load_host_text(text, "m.toml"); });
  EXPECT_THAT(msg, ::testing::HasSubstr("m.toml:7:14: host.latency.matrix_ns[0]: has 3 entries; the host has 2 NUMA nodes"));
}

TEST(HostTomlErrors, MissingCrossSocketLatency_And_ItsOnMissingSocket) {
  const char* no_cross = "[host]\n[host.layout]\nsockets = 2\ncores_per_node = 2\n[host.latency]\nsource = \"t\"\nsame_node_ns = 1\n";
  EXPECT_THAT(input_error([&] { load_host_text(no_cross, "c.toml"); }), ::testing::HasSubstr("host.latency.cross_socket_ns: missing"));
  const char* bad_its = "[host]\n[host.layout]\nsockets = 1\ncores_per_node = 2\n[host.latency]\nsource = \"t\"\nsame_node_ns = 1\n"
                        "[[host.its]]\nsocket = 3\n";
  EXPECT_THAT(input_error([&] { load_host_text(bad_its, "i.toml"); }),
              ::testing::HasSubstr("i.toml:9:1: host.its[0].socket: socket 3 does not exist"));
  const char* no_source = "[host]\n[host.layout]\nsockets = 1\ncores_per_node = 2\n[host.latency]\nsame_node_ns = 1\n";
  EXPECT_THAT(input_error([&] { load_host_text(no_source, "s.toml"); }), ::testing::HasSubstr("host.latency.source: missing"));
}

TEST(Discover, ThisMachine_HasAtLeastOneCpuAndRoundTrips) {
  const Host h = discover_host();
  ASSERT_GE(h.cpus.size(), 1u);
  EXPECT_GE(h.sockets, 1);
  EXPECT_GE(h.nodes, 1);
  EXPECT_EQ(h.latency.node_ns.size(), static_cast<std::size_t>(h.nodes));
  EXPECT_THAT(h.latency.source, ::testing::HasSubstr("ESTIMATE"));
  EXPECT_EQ(load_host_text(to_toml(h), "host.toml"), h);
}

}  // namespace
}  // namespace ipilab::topology

namespace ipilab::topology {
namespace {

TEST(Measured, FoldsPairsIntoNodeMeansSmtAndOverrides) {
  Host h = load_host_file(kFixtures + "asym-3node.toml");
  const double nan = std::nan("");
  // CPUs 0,1 (SMT siblings, node 0), 2 (node 1), 4 (node 2).
  const std::vector<int> ids = {0, 1, 2, 4};
  const std::vector<std::vector<double>> m = {
      {nan, 6, 30, 100},
      {8, nan, 34, 110},
      {31, 35, nan, 120},
      {101, 111, 121, nan},
  };
  apply_measured_c2c(h, ids, m, "unit test", true);
  EXPECT_DOUBLE_EQ(*h.latency.smt_ns, 7.0);
  EXPECT_DOUBLE_EQ(h.node_latency_ns(0, 1), 32.0);   // (30 + 34) / 2
  EXPECT_DOUBLE_EQ(h.node_latency_ns(1, 0), 33.0);   // (31 + 35) / 2
  EXPECT_DOUBLE_EQ(h.node_latency_ns(0, 0), 20.0);   // no non-SMT pair inside node 0: kept
  EXPECT_DOUBLE_EQ(h.c2c_ns(1, 4), 110.0);           // per-pair override
  EXPECT_EQ(h.latency.pairs.size(), 12u);
  EXPECT_EQ(h.latency.source, "unit test");
  EXPECT_THROW(apply_measured_c2c(h, {0, 3}, {{nan, 1}, {1, nan}}, "x", false), InputError);
}

}  // namespace
}  // namespace ipilab::topology
