// Points: cartesian order, labels, per-point seeds that depend only on the point's settings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "sweep/points.h"
#include "sweep/spec.h"

namespace ipilab::sweep {
namespace {

constexpr const char* kAB = R"([sweep]
scenario = "x"
baseline = { b = "q" }
[[axis]]
name = "a"
key = "vm.vcpus"
values = [1, 2, 3]
[[axis]]
name = "b"
key = "workload.mode"
values = ["p", "q"]
)";

constexpr const char* kBA = R"([sweep]
scenario = "x"
[[axis]]
name = "b"
key = "workload.mode"
values = ["q", "p"]
[[axis]]
name = "a"
key = "vm.vcpus"
values = [3, 2, 1, 4]
)";

TEST(SweepPoints, CartesianOrderFirstAxisSlowestWithLabelsAndBaselines) {
  const Spec s = parse_spec(kAB, "ab.toml");
  const auto pts = expand(s, 1);
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(pts[0].label, "a=1, b=p");
  EXPECT_EQ(pts[1].label, "a=1, b=q");
  EXPECT_EQ(pts[5].label, "a=3, b=q");
  EXPECT_EQ(pts[3].value, (std::vector<std::size_t>{1, 1}));
  // Baseline b=q with the point's own a.
  EXPECT_EQ(pts[0].baseline, 1u);
  EXPECT_EQ(pts[4].baseline, 5u);
  EXPECT_EQ(pts[5].baseline, 5u);
  EXPECT_EQ(pts[2].key, "vm.vcpus = 2\nworkload.mode = \"p\"\n");
}

TEST(SweepPoints, SeedDependsOnThePointsSettingsNotOnOrderOrOtherValues) {
  // The same settings in another spec (axes swapped, values reordered, another value added) get the
  // same seed; a different base seed gives different seeds.
  std::map<std::string, std::uint64_t> first;
  for (const auto& p : expand(parse_spec(kAB, "ab.toml"), 7)) first[p.key] = p.seed;
  std::size_t same = 0;
  for (const auto& p : expand(parse_spec(kBA, "ba.toml"), 7)) {
    auto it = first.find(p.key);
    if (it == first.end()) continue;
    EXPECT_EQ(it->second, p.seed) << p.key;
    ++same;
  }
  EXPECT_EQ(same, 6u);
  const auto a = expand(parse_spec(kAB, "ab.toml"), 7);
  const auto b = expand(parse_spec(kAB, "ab.toml"), 8);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NE(a[i].seed, b[i].seed);
  // Distinct points, distinct seeds; all of them TOML integers (< 2^63).
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_LT(a[i].seed, 1ull << 63);
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(a[i].seed, a[j].seed);
  }
}

TEST(SweepPoints, SeedFunctionIsTheDocumentedOne) {
  // Reference values: FNV-1a 64 of "a" and splitmix64's first output for state 0 (published test vectors).
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafull);
  EXPECT_EQ(point_seed(5, "k"), splitmix64(5 ^ splitmix64(fnv1a64("k"))) >> 1);
}

TEST(SweepPoints, CommonSeedsGiveEveryPointTheBaseSeed) {
  const Spec s = parse_spec(std::string(kAB) + "\n", "ab.toml");
  Spec c = s;
  c.per_point_seeds = false;
  for (const auto& p : expand(c, 42)) EXPECT_EQ(p.seed, 42u);
}

TEST(SweepPoints, SkipsCarryTheirReason) {
  const Spec s = parse_spec(std::string(kAB) + "[[skip]]\nwhen = { a = { ge = 2 }, b = \"p\" }\nreason = \"no\"\n", "ab.toml");
  const auto pts = expand(s, 1);
  std::vector<std::string> skipped;
  for (const auto& p : pts)
    if (p.skip) skipped.push_back(p.label + ": " + *p.skip);
  EXPECT_THAT(skipped, ::testing::ElementsAre("a=2, b=p: no", "a=3, b=p: no"));
}

}  // namespace
}  // namespace ipilab::sweep
