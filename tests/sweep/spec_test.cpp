// Sweep spec parsing: values, ranges, compound axes, skips, baselines, plots, and the places errors name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "common/error.h"
#include "sweep/points.h"
#include "sweep/spec.h"

namespace ipilab::sweep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string error_of(const std::string& text) {
  try {
    (void)parse_spec(text, "s.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<std::string> labels(const Axis& a) {
  std::vector<std::string> out;
  for (const auto& v : a.values) out.push_back(v.label);
  return out;
}

constexpr const char* kHead = "[sweep]\nscenario = \"seed003-ipi-hw\"\n";

TEST(SweepSpec, ValuesRangesLabelsAndCompoundAxes) {
  const Spec s = parse_spec(std::string(kHead) + R"(
[[axis]]
key = "vm.vcpus"
range = { from = 4, to = 256, factor = 2 }
[[axis]]
name = "ghz"
key = "profile.override.'x.y'.value"
range = { from = 0.5, to = 1.0, step = 0.25 }
[[axis]]
name = "where"
key = "vm.pin"
values = ["socket:0", [32, 33]]
labels = ["s0", "list"]
[[axis]]
name = "path"
set = [{ label = "fast", workload.mechanism = "hyperv" }, { label = "native", workload.hypercall_page = false, vm.nr_cpus = 64 }]
)", "s.toml");
  ASSERT_EQ(s.axes.size(), 4u);
  EXPECT_EQ(s.axes[0].name, "vm.vcpus");
  EXPECT_THAT(labels(s.axes[0]), ElementsAre("4", "8", "16", "32", "64", "128", "256"));
  EXPECT_TRUE(s.axes[0].numeric());
  EXPECT_EQ(*s.axes[0].values[6].number, 256.0);
  EXPECT_THAT(labels(s.axes[1]), ElementsAre("0.5", "0.75", "1.0"));
  // The quoted part stays one key: profile.override["x.y"].value.
  const toml::node* v = s.axes[1].values[1].set.at_path("profile.override").node();
  ASSERT_TRUE(v && v->is_table());
  EXPECT_EQ((*v->as_table())["x.y"]["value"].value<double>(), 0.75);
  EXPECT_THAT(labels(s.axes[2]), ElementsAre("s0", "list"));
  EXPECT_FALSE(s.axes[2].numeric());
  EXPECT_EQ(s.axes[2].values[1].canonical, "[32, 33]");
  EXPECT_EQ(s.axes[3].values[1].set["workload"]["hypercall_page"].value<bool>(), false);
  EXPECT_EQ(s.axes[3].values[1].set["vm"]["nr_cpus"].value<std::int64_t>(), 64);
  EXPECT_EQ(s.point_count(), 7u * 3 * 2 * 2);
  EXPECT_TRUE(s.per_point_seeds);
  EXPECT_EQ(s.name, "s");
}

TEST(SweepSpec, SkipsBaselineAndPlotsResolveAxesAndValues) {
  const Spec s = parse_spec(std::string(kHead) + R"(baseline = { its = "pre-seed" }
[[axis]]
name = "n"
key = "vm.vcpus"
values = [4, 8, 16]
[[axis]]
name = "its"
key = "workload.find_4_1_its"
values = ["pre-seed", "post-seed"]
[[skip]]
when = { n = { gt = 4 }, its = "post-seed" }
reason = "why"
[[plot]]
kind = "heatmap"
x = "n"
y = "its"
value = "counter.lost"
)", "s.toml");
  ASSERT_EQ(s.baseline.size(), 1u);
  EXPECT_EQ(s.baseline[0], (std::pair<std::size_t, std::size_t>{1, 0}));
  ASSERT_EQ(s.skips.size(), 1u);
  EXPECT_TRUE(matches(s, s.skips[0], {1, 1}));
  EXPECT_TRUE(matches(s, s.skips[0], {2, 1}));
  EXPECT_FALSE(matches(s, s.skips[0], {0, 1}));  // 4 is not > 4
  EXPECT_FALSE(matches(s, s.skips[0], {2, 0}));
  ASSERT_EQ(s.plots.size(), 1u);
  EXPECT_EQ(s.plots[0].name, "heatmap-n-its");
  EXPECT_EQ(s.plots[0].kind, PlotSpec::Kind::Heatmap);
  EXPECT_EQ(*s.plots[0].second, 1u);
}

TEST(SweepSpec, ErrorsNameFileLineColumnAndKey) {
  const std::string ax = "[[axis]]\nname = \"n\"\nkey = \"vm.vcpus\"\nvalues = [4, 8]\n";
  EXPECT_THAT(error_of("[sweep]\n"), HasSubstr("s.toml:1:1: sweep.scenario: missing"));
  EXPECT_THAT(error_of(std::string(kHead) + "bogus = 1\n" + ax), HasSubstr("s.toml:3:1: sweep.bogus: unknown key"));
  EXPECT_THAT(error_of(std::string(kHead)), HasSubstr("no [[axis]]"));
  EXPECT_THAT(error_of(std::string(kHead) + "[[axis]]\nkey = \"scenario.seed\"\nvalues = [1]\n"),
              HasSubstr("s.toml:4:1: axis[0].key: 'scenario' is not a scenario table an axis can set"));
  EXPECT_THAT(error_of(std::string(kHead) + "[[axis]]\nkey = \"vm.vcpus\"\nvalues = []\n"),
              HasSubstr("axis[0].values: an empty list"));
  EXPECT_THAT(error_of(std::string(kHead) + "[[axis]]\nkey = \"vm.vcpus\"\nvalues = [1, 2]\nlabels = [\"a\"]\n"),
              HasSubstr("axis[0].labels: 1 labels for 2 values"));
  EXPECT_THAT(error_of(std::string(kHead) + ax + ax), HasSubstr("a second axis named 'n'"));
  EXPECT_THAT(error_of(std::string(kHead) + ax + "[[axis]]\nname = \"m\"\nset = [{ label = \"x\", vm.vcpus = 2 }]\n"),
              HasSubstr("axis 'm' sets vm.vcpus, which axis 'n' sets too"));
  EXPECT_THAT(error_of(std::string(kHead) + "baseline = { q = 1 }\n" + ax), HasSubstr("sweep.baseline.q: no axis named 'q'"));
  EXPECT_THAT(error_of(std::string(kHead) + "baseline = { n = 5 }\n" + ax), HasSubstr("axis 'n' has no value 5 (values: '4', '8')"));
  EXPECT_THAT(error_of(std::string(kHead) + ax + "[[skip]]\nwhen = { n = { near = 4 } }\nreason = \"r\"\n"),
              HasSubstr("skip[0].when.n.near: unknown operator 'near'"));
  EXPECT_THAT(error_of(std::string(kHead) + ax + "[[skip]]\nwhen = { n = 4 }\n"), HasSubstr("skip[0].reason: missing"));
  EXPECT_THAT(error_of(std::string(kHead) + ax + "[[plot]]\nx = \"n\"\nvalue = \"p42\"\n"),
              HasSubstr("plot[0].value: 'p42' is not mean"));
  EXPECT_THAT(error_of(std::string(kHead) + ax + "[[plot]]\nx = \"n\"\nvalue = \"counter.lots\"\n"),
              HasSubstr("plot[0].value: 'lots' names no counter; did you mean 'lost'? (the counters: 'ipilab list --counters')"));
  EXPECT_THAT(error_of(std::string(kHead) + "[[axis]]\nkey = \"vm.vcpus\"\nrange = { from = 1, to = 1e9, step = 1 }\n"),
              HasSubstr("more than 100000 values"));
  EXPECT_THAT(error_of(std::string(kHead) + "[[axis]]\nkey = \"vm.vcpus\"\nrange = { from = 8, to = 4, step = 1 }\n"),
              HasSubstr("to (4) is below from (8)"));
  std::string big = std::string(kHead);
  for (int i = 0; i < 3; ++i) big += fmt::format("[[axis]]\nkey = \"workload.k{}\"\nrange = {{ from = 1, to = 200, step = 1 }}\n", i);
  EXPECT_THAT(error_of(big), HasSubstr("more than 1000000 points"));
  EXPECT_THAT(error_of("[sweep\n"), HasSubstr("s.toml:1:"));
}

TEST(SweepSpec, DottedKeysWithQuotedParts) {
  EXPECT_THAT(split_dotted_key("vm.vcpus", "p"), ElementsAre("vm", "vcpus"));
  EXPECT_THAT(split_dotted_key("profile.override.\"its.sgir_write_remote\".value", "p"),
              ElementsAre("profile", "override", "its.sgir_write_remote", "value"));
  EXPECT_THAT(split_dotted_key("a.'b.c'", "p"), ElementsAre("a", "b.c"));
  EXPECT_THROW(split_dotted_key("a..b", "p"), InputError);
  EXPECT_THROW(split_dotted_key("a.\"b", "p"), InputError);
  EXPECT_THROW(split_dotted_key("a.\"b\"c", "p"), InputError);
}

TEST(SweepSpec, CanonicalTextKeepsTypesApartAndSortsTables) {
  const toml::table t = toml::parse("i = 2\nf = 2.0\ns = \"2\"\nb = true\na = [1, \"x\"]\nt = { z = 1, a = 2 }\n");
  EXPECT_EQ(canonical(*t.get("i")), "2");
  EXPECT_EQ(canonical(*t.get("f")), "2.0");
  EXPECT_EQ(canonical(*t.get("s")), "\"2\"");
  EXPECT_EQ(canonical(*t.get("b")), "true");
  EXPECT_EQ(canonical(*t.get("a")), "[1, \"x\"]");
  EXPECT_EQ(canonical(*t.get("t")), "{\"a\" = 2, \"z\" = 1}");
}

}  // namespace
}  // namespace ipilab::sweep
