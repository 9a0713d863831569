// Tests of cost entries as distributions (cost/profile.h): each `dist` form, its sampler, its class
// and provenance, and every validation error with its file:line:col: key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "profile_head.h"
#include "common/error.h"
#include "cost/profile.h"

namespace ipilab::cost {
namespace {

using ::testing::HasSubstr;
using testdata::parse_after_head;



std::string error_of(const std::string& body) {
  try {
    parse_after_head(body);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for:\n" << body;
  return {};
}

TEST(ProfileDist, DefaultsAsBefore_FixedWithoutSpread_LognormalWithIt) {
  const Profile p = parse_after_head(
      "[cost.guest]\n"
      "eoi = { value = 40, unit = \"ns\", source = \"ESTIMATE: x\" }\n"
      "irq_entry = { value = 100, unit = \"ns\", spread = 0.1, source = \"SOURCED: paper\" }\n");
  const Cost& eoi = p.get("guest.eoi");
  EXPECT_EQ(eoi.dist, sim::DistKind::Fixed);
  EXPECT_EQ(eoi.jitter().kind(), sim::DistKind::Fixed);
  EXPECT_EQ(eoi.cls, CostClass::Estimate);
  const Cost& irq = p.get("guest.irq_entry");
  EXPECT_EQ(irq.dist, sim::DistKind::Lognormal);
  EXPECT_EQ(irq.jitter().kind(), sim::DistKind::Lognormal);
  EXPECT_DOUBLE_EQ(irq.jitter().cv(), 0.1);
  EXPECT_EQ(irq.jitter().mean(), sim::Ps{100'000});
  EXPECT_EQ(irq.cls, CostClass::Sourced);
}

TEST(ProfileDist, EveryForm_ParsesToItsSampler) {
  const Profile p = parse_after_head(
      "[cost.guest.eoi]\nvalue = 40\nunit = \"ns\"\ndist = \"normal\"\nspread = 0.2\nsource = \"s\"\n"
      "[cost.guest.callback]\nvalue = 1000\nunit = \"cycles\"\ndist = \"exponential\"\nsource = \"s\"\n"
      "[cost.guest.irq_entry]\nvalue = 715\nunit = \"ns\"\ndist = \"empirical\"\n"
      "bins = [[700, 710, 12], [710, 720, 40]]\nclass = \"measured\"\nsource = \"ipilab measure, 2025-01-01\"\n"
      "[cost.guest.irq_exit]\nvalue = 50\nunit = \"ns\"\ndist = \"fixed\"\nsource = \"s\"\n"
      "[cost.guest.csd_queue]\nvalue = 50\nunit = \"ns\"\ndist = \"lognormal\"\nspread = 0.3\nsource = \"s\"\n");
  EXPECT_EQ(p.get("guest.eoi").jitter().kind(), sim::DistKind::Normal);
  EXPECT_DOUBLE_EQ(p.get("guest.eoi").jitter().cv(), 0.2);
  const Cost& cb = p.get("guest.callback");
  EXPECT_EQ(cb.jitter().kind(), sim::DistKind::Exponential);
  EXPECT_EQ(cb.mean, sim::Ps{500'000});  // 1000 cycles at 2 GHz
  const Cost& irq = p.get("guest.irq_entry");
  EXPECT_EQ(irq.jitter().kind(), sim::DistKind::Empirical);
  EXPECT_EQ(irq.mean, sim::Ps{715'000});
  ASSERT_EQ(irq.bins.size(), 2u);
  EXPECT_DOUBLE_EQ(irq.bins[1].count, 40);
  // Bins' mean (705 x 12 + 715 x 40) / 52 = 712.69 ns; value 715 is 0.32 % above: scale 1.0032.
  EXPECT_NEAR(irq.jitter().scale(), 715.0 / ((705.0 * 12 + 715.0 * 40) / 52), 1e-12);
  const auto bins = irq.jitter().bins();  // in ps
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_DOUBLE_EQ(bins[0].lo, 700'000);
  EXPECT_EQ(irq.cls, CostClass::Measured);
  EXPECT_EQ(p.get("guest.irq_exit").jitter().kind(), sim::DistKind::Fixed);
  EXPECT_EQ(p.get("guest.csd_queue").jitter().kind(), sim::DistKind::Lognormal);
  // Sampling the empirical entry stays inside its (scaled) bins.
  sim::Rng rng(1);
  const sim::Distribution d = irq.jitter();
  const double scale = 715.0 / (37060.0 / 52);
  for (int i = 0; i < 10000; ++i) {
    const auto v = d.sample(rng).v;
    EXPECT_GE(v, 700'000 * scale - 1);
    EXPECT_LE(v, 720'000 * scale + 1);
  }
}

TEST(ProfileDist, Empirical_BinsInCyclesUseTheClock) {
  const Profile p = parse_after_head(
      "[cost.guest.eoi]\nvalue = 150\nunit = \"cycles\"\ndist = \"empirical\"\nbins = [[100, 200, 1]]\nsource = \"s\"\n");
  const auto bins = p.get("guest.eoi").jitter().bins();
  ASSERT_EQ(bins.size(), 1u);
  EXPECT_DOUBLE_EQ(bins[0].lo, 50'000);   // 100 cycles at 2 GHz
  EXPECT_DOUBLE_EQ(bins[0].hi, 100'000);
  EXPECT_EQ(p.get("guest.eoi").mean, sim::Ps{75'000});
}

TEST(ProfileDist, Class_FromSourceWordOrDeclared_ContradictionIsAnError) {
  const Profile p = parse_after_head(
      "[cost.guest]\n"
      "eoi = { value = 1, unit = \"ns\", source = \"FITTED to F2\" }\n"
      "irq_exit = { value = 1, unit = \"ns\", source = \"MEASURED: ipilab measure\" }\n"
      "callback = { value = 1, unit = \"ns\", source = \"illustrative\" }\n"
      "csd_queue = { value = 1, unit = \"ns\", source = \"Estimated by hand\", class = \"estimate\" }\n"
      "irq_entry = { value = 1, unit = \"ns\", source = \"ESTIMATES: word continues\" }\n");
  EXPECT_EQ(p.get("guest.eoi").cls, CostClass::Fitted);
  EXPECT_EQ(p.get("guest.irq_exit").cls, CostClass::Measured);
  EXPECT_EQ(p.get("guest.callback").cls, CostClass::Unclassified);
  EXPECT_EQ(p.get("guest.csd_queue").cls, CostClass::Estimate);
  EXPECT_EQ(p.get("guest.irq_entry").cls, CostClass::Unclassified);  // "ESTIMATES" is not the word
  EXPECT_THAT(error_of("[cost.guest.eoi]\nvalue = 1\nunit = \"ns\"\nclass = \"measured\"\nsource = \"ESTIMATE: x\"\n"),
              HasSubstr("p.toml:8:1: cost.guest.eoi.class: 'measured' contradicts the source, which starts with estimate"));
  EXPECT_THAT(error_of("[cost.guest.eoi]\nvalue = 1\nunit = \"ns\"\nclass = \"guess\"\nsource = \"x\"\n"),
              HasSubstr("p.toml:8:1: cost.guest.eoi.class: 'guess' is not a class: sourced, estimate, fitted or measured"));
}

TEST(ProfileDist, Provenance_CarriesDistClassFromAndBins) {
  const Profile p = parse_after_head(
      "[cost.guest.eoi]\nvalue = 715\nunit = \"ns\"\ndist = \"empirical\"\nbins = [[700, 710, 12], [710, 720, 40]]\n"
      "source = \"MEASURED: x\"\n"
      "[cost.guest.irq_exit]\nvalue = 50\nunit = \"ns\"\ndist = \"exponential\"\nsource = \"ESTIMATE: y\"\n");
  const auto j = p.provenance_json({"guest.eoi", "guest.irq_exit"});
  ASSERT_EQ(j["costs"].size(), 2u);
  const auto& eoi = j["costs"][0];
  EXPECT_EQ(eoi["key"], "guest.eoi");
  EXPECT_EQ(eoi["dist"], "empirical");
  EXPECT_EQ(eoi["class"], "measured");
  EXPECT_EQ(eoi["from"], "p.toml");
  EXPECT_EQ(eoi["bins"].dump(), "[[700.0,710.0,12.0],[710.0,720.0,40.0]]");
  const auto& ex = j["costs"][1];
  EXPECT_EQ(ex["dist"], "exponential");
  EXPECT_EQ(ex["class"], "estimate");
  EXPECT_FALSE(ex.contains("bins"));
  EXPECT_FALSE(j.contains("extends"));
}

TEST(ProfileDist, Errors_NameFileLineColumnAndKey) {
  // (line numbers: the 4-line [profile] head, then the entry's table header on line 5)
  const std::string e = "[cost.guest.eoi]\nvalue = 10\nunit = \"ns\"\nsource = \"s\"\n";
  EXPECT_THAT(error_of(e + "dist = \"gamma\"\n"),
              HasSubstr("p.toml:9:1: cost.guest.eoi.dist: 'gamma' is not a distribution: fixed, lognormal, normal, exponential or empirical"));
  EXPECT_THAT(error_of(e + "dist = \"fixed\"\nspread = 0.1\n"), HasSubstr("p.toml:10:1: cost.guest.eoi.spread: dist = \"fixed\" takes no spread"));
  EXPECT_THAT(error_of(e + "dist = \"lognormal\"\n"), HasSubstr("p.toml:9:1: cost.guest.eoi.dist: dist = \"lognormal\" needs spread > 0"));
  EXPECT_THAT(error_of(e + "dist = \"normal\"\nspread = 0\n"), HasSubstr("p.toml:10:1: cost.guest.eoi.spread: dist = \"normal\" needs spread > 0"));
  EXPECT_THAT(error_of(e + "dist = \"normal\"\nspread = 0.5\n"), HasSubstr("cost.guest.eoi.spread: dist = \"normal\" allows spread <= 0.3"));
  EXPECT_THAT(error_of(e + "dist = \"exponential\"\nspread = 1\n"),
              HasSubstr("p.toml:10:1: cost.guest.eoi.spread: dist = \"exponential\" takes no spread"));
  EXPECT_THAT(error_of(e + "bins = [[1, 2, 3]]\n"), HasSubstr("p.toml:9:1: cost.guest.eoi.bins: bins belong to dist = \"empirical\" (this entry is fixed)"));
  EXPECT_THAT(error_of(e + "dist = \"empirical\"\n"), HasSubstr("p.toml:9:1: cost.guest.eoi.dist: dist = \"empirical\" needs bins"));
  EXPECT_THAT(error_of(e + "dist = \"empirical\"\nspread = 0.1\nbins = [[5, 15, 1]]\n"),
              HasSubstr("cost.guest.eoi.spread: dist = \"empirical\" takes no spread"));
  const std::string emp = e + "dist = \"empirical\"\n";
  EXPECT_THAT(error_of(emp + "bins = 3\n"), HasSubstr("p.toml:10:8: cost.guest.eoi.bins: expected an array of [lo, hi, count], got integer"));
  EXPECT_THAT(error_of(emp + "bins = []\n"), HasSubstr("cost.guest.eoi.bins: is empty"));
  EXPECT_THAT(error_of(emp + "bins = [[5, 15, 1], [1, 2]]\n"), HasSubstr("p.toml:10:21: cost.guest.eoi.bins[1]: expected [lo, hi, count]"));
  EXPECT_THAT(error_of(emp + "bins = [[5, \"x\", 1]]\n"), HasSubstr("cost.guest.eoi.bins[0][1]: expected a number, got string"));
  EXPECT_THAT(error_of(emp + "bins = [[15, 5, 1]]\n"), HasSubstr("p.toml:10:9: cost.guest.eoi.bins[0]: hi must be above lo, got [15, 5]"));
  EXPECT_THAT(error_of(emp + "bins = [[-5, 5, 1]]\n"), HasSubstr("cost.guest.eoi.bins[0]: lo must be >= 0, got -5"));
  EXPECT_THAT(error_of(emp + "bins = [[5, 15, -1]]\n"), HasSubstr("cost.guest.eoi.bins[0]: count must be >= 0, got -1"));
  EXPECT_THAT(error_of(emp + "bins = [[5, 15, 1], [10, 20, 1]]\n"),
              HasSubstr("p.toml:10:21: cost.guest.eoi.bins[1]: bins must be ascending and must not overlap: [10, ...) starts before the previous bin ends at 15"));
  EXPECT_THAT(error_of(emp + "bins = [[5, 15, 0]]\n"), HasSubstr("p.toml:10:8: cost.guest.eoi.bins: the counts add up to 0"));
  EXPECT_THAT(error_of(emp + "bins = [[20, 30, 1]]\n"),
              HasSubstr("p.toml:6:1: cost.guest.eoi.value: value 10 ns is not the mean of the bins (25 ns) within 1 %"));
  EXPECT_THAT(error_of("[cost.guest.eoi]\nvalue = 2e12\nunit = \"ms\"\nsource = \"s\"\n"), HasSubstr("cost.guest.eoi.unit: unit mismatch"));
  EXPECT_THAT(error_of("[cost.guest.eoi]\nvalue = 1e15\nunit = \"ns\"\nsource = \"s\"\n"),
              HasSubstr("p.toml:6:1: cost.guest.eoi.value: 1000000000000000 ns is out of range for a primitive cost (above 1 s)"));
  EXPECT_THAT(error_of(e + "spread = 50\n"), HasSubstr("cost.guest.eoi.spread: a relative standard deviation of 50 is not a plausible cost spread"));
}

TEST(ProfileDist, Set_KeepsTheFamilyOfTheEntryItReplaces) {
  Profile p = parse_after_head(
      "[cost.guest.eoi]\nvalue = 100\nunit = \"ns\"\ndist = \"exponential\"\nsource = \"s\"\n"
      "[cost.guest.irq_entry]\nvalue = 15\nunit = \"ns\"\ndist = \"empirical\"\nbins = [[10, 20, 1]]\nsource = \"s\"\n"
      "[cost.guest.irq_exit]\nvalue = 10\nunit = \"ns\"\ndist = \"normal\"\nspread = 0.1\nsource = \"s\"\n");
  p.set("guest.eoi", 200, Unit::Ns, 0, "what-if");
  EXPECT_EQ(p.get("guest.eoi").jitter().kind(), sim::DistKind::Exponential);
  EXPECT_EQ(p.get("guest.eoi").mean, sim::Ps{200'000});
  EXPECT_THROW(p.set("guest.eoi", 200, Unit::Ns, 0.1, "what-if"), InputError);
  p.set("guest.irq_entry", 30, Unit::Ns, 0, "what-if: twice");
  const Cost& irq = p.get("guest.irq_entry");
  EXPECT_EQ(irq.jitter().kind(), sim::DistKind::Empirical);
  ASSERT_EQ(irq.bins.size(), 1u);
  EXPECT_NEAR(irq.bins[0].lo, 20, 1e-9);  // the shape, scaled to the new mean
  EXPECT_NEAR(irq.bins[0].hi, 40, 1e-9);
  EXPECT_EQ(irq.from, "override");
  EXPECT_THROW(p.set("guest.irq_entry", 30, Unit::Ns, 0.2, "what-if"), InputError);
  p.set("guest.irq_exit", 12, Unit::Ns, 0.2, "what-if");
  EXPECT_EQ(p.get("guest.irq_exit").jitter().kind(), sim::DistKind::Normal);
  EXPECT_THROW(p.set("guest.irq_exit", 12, Unit::Ns, 0.5, "what-if"), InputError);
  EXPECT_THROW(p.set("guest.irq_exit", 1e16, Unit::Ns, 0, "what-if"), InputError);  // out of range
}

}  // namespace
}  // namespace ipilab::cost
