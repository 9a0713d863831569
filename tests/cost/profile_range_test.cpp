// cost/profile.h ranges: `range = [low, high]` or a relative `range = r` with its reason, the class
// defaults, overrides held fixed, errors naming file:line:key, and scale_mean keeping the shape.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "profile_head.h"
#include "common/error.h"
#include "cost/profile.h"

namespace ipilab::cost {
namespace {

using ::testing::HasSubstr;
using testdata::parse_after_head;



std::string range_error_of(const std::string& body) {
  try {
    parse_after_head(body);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST(ProfileRange, AbsoluteAndRelative) {
  const Profile p = parse_after_head(R"([cost.vm.exit_entry]
value = 1000
unit = "cycles"
range = [800, 1500]
range_reason = "two published figures"
source = "ESTIMATE: x"
[cost.guest.eoi]
value = 100
unit = "ns"
range = 0.3
range_reason = "r"
source = "SOURCED: y"
)");
  const CostRange& a = p.get("vm.exit_entry").range;
  EXPECT_DOUBLE_EQ(a.lo, 0.8);
  EXPECT_DOUBLE_EQ(a.hi, 1.5);
  EXPECT_EQ(a.reason, "two published figures");
  EXPECT_FALSE(a.is_default);
  const CostRange& b = p.get("guest.eoi").range;
  EXPECT_DOUBLE_EQ(b.lo, 0.7);
  EXPECT_DOUBLE_EQ(b.hi, 1.3);
}

TEST(ProfileRange, ClassDefaults) {
  const Profile p = parse_after_head(R"([cost.vm.exit_entry]
value = 1
unit = "ns"
source = "ESTIMATE: x"
[cost.guest.eoi]
value = 1
unit = "ns"
source = "FITTED to F1"
)");
  EXPECT_TRUE(p.get("vm.exit_entry").range.is_default);
  EXPECT_DOUBLE_EQ(p.get("vm.exit_entry").range.lo, 0.5);
  EXPECT_DOUBLE_EQ(p.get("guest.eoi").range.hi, 1.1);
  EXPECT_THAT(p.get("guest.eoi").range.reason, HasSubstr("default for class fitted"));
}

TEST(ProfileRange, OverrideIsHeldFixed) {
  Profile p = parse_after_head("[cost.vm.exit_entry]\nvalue = 1\nunit = \"ns\"\nsource = \"ESTIMATE: x\"\n");
  p.set("vm.exit_entry", 5, Unit::Ns, 0, "variant");
  EXPECT_TRUE(p.get("vm.exit_entry").range.fixed());
}

TEST(ProfileRange, Errors) {
  const std::string e = "[cost.vm.exit_entry]\nvalue = 100\nunit = \"ns\"\nsource = \"ESTIMATE: x\"\n";
  EXPECT_THAT(range_error_of(e + "range = [110, 200]\nrange_reason = \"r\"\n"),
              HasSubstr("p.toml:9:1: cost.vm.exit_entry.range: [110, 200] ns must hold the value 100"));
  EXPECT_THAT(range_error_of(e + "range = 0.3\n"), HasSubstr("cost.vm.exit_entry.range_reason: missing"));
  EXPECT_THAT(range_error_of(e + "range_reason = \"r\"\n"), HasSubstr("range_reason: needs range beside it"));
  EXPECT_THAT(range_error_of(e + "range = 1.5\nrange_reason = \"r\"\n"), HasSubstr("a relative range must be in (0, 1]"));
  EXPECT_THAT(range_error_of(e + "range = [1, 2, 3]\nrange_reason = \"r\"\n"), HasSubstr("expected [low, high]"));
}

TEST(ProfileRange, ScaleMeanKeepsTheShape) {
  Profile p = parse_after_head(R"([cost.vm.exit_entry]
value = 1000
unit = "cycles"
spread = 0.1
source = "ESTIMATE: x"
[cost.guest.eoi]
value = 15
unit = "ns"
dist = "empirical"
bins = [[10, 20, 1]]
source = "MEASURED: x"
)");
  p.scale_mean("vm.exit_entry", 1.5);
  EXPECT_EQ(p.get("vm.exit_entry").mean.v, 750'000);  // 1500 cycles at 2 GHz
  EXPECT_DOUBLE_EQ(p.get("vm.exit_entry").spread, 0.1);
  p.scale_mean("guest.eoi", 2);
  EXPECT_EQ(p.get("guest.eoi").mean.v, 30'000);
  EXPECT_DOUBLE_EQ(p.get("guest.eoi").bins[0].lo, 20);
  EXPECT_DOUBLE_EQ(p.get("guest.eoi").bins[0].hi, 40);
}

}  // namespace
}  // namespace ipilab::cost
