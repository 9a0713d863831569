// The interval plot of `ipilab run --uncertainty --plot` (interval_plot.h): the data gnuplot draws
// holds each variant's point value and 90 % interval (error bar) and each difference's interval in %,
// the first variant on top; the difference panel has the zero line; a variant without an interval
// is drawn as a dot that says so. The tornado gets the interval as a band when there is one.
#include "evidence/interval_plot.h"

#include <gtest/gtest.h>

#include "evidence/tornado_plot.h"

namespace ipilab::evidence {
namespace {

Propagation two_variants() {
  Propagation p;
  p.draws = 16;
  MetricInterval a{"round_trip", "ns", 1000, {}, true, Interval{900, 1150}, 1010};
  MetricInterval b{"round_trip", "ns", 800, {}, true, Interval{700, 950}, 805};
  p.variants = {VariantIntervals{"before", {a}}, VariantIntervals{"after", {b}}};
  DifferenceInterval d;
  d.variant = "after";
  d.metric = "round_trip";
  d.unit = "ns";
  d.point = -200;
  d.has_interval = true;
  d.interval = Interval{-260, -140};
  d.point_pct = -20;
  d.interval_pct = Interval{-24.5, -15.25};
  p.differences = {d};
  return p;
}

TEST(IntervalPlot, DataHoldsEachIntervalAndTheDifferences) {
  scenario::ScenarioResult r;
  r.name = "s";
  const IntervalScript s = interval_script(r, two_variants(), "/tmp/d.tsv", "/tmp/x.png", true);
  EXPECT_EQ(s.data,
            "2\t1000\t900\t1150\tbefore\t[900 - 1150]\n"
            "1\t800\t700\t950\tafter\t[700 - 950]\n\n\n"
            "1\t-20\t-24.5\t-15.25\tafter\t[-24.5 - -15.25]\n\n\n");
  EXPECT_NE(s.script.find("set multiplot layout 2,1"), std::string::npos);
  EXPECT_NE(s.script.find("index 0 using 2:1:3:4:ytic(5) with xerrorbars"), std::string::npos);
  EXPECT_NE(s.script.find("index 1 using 2:1:3:4:ytic(5) with xerrorbars"), std::string::npos);
  // The zero line in the difference panel only.
  const auto diff_panel = s.script.find("difference against 'before'");
  ASSERT_NE(diff_panel, std::string::npos);
  EXPECT_EQ(s.script.find("set arrow 1 from 0, graph 0"), s.script.find("set arrow 1 from 0, graph 0", diff_panel));
  EXPECT_NE(s.script.find("set terminal pngcairo"), std::string::npos);
}

TEST(IntervalPlot, OneVariantOnePanelAndNoIntervalSaid) {
  Propagation p = two_variants();
  p.variants.resize(1);
  p.differences.clear();
  p.variants[0].metrics[0].has_interval = false;
  scenario::ScenarioResult r;
  r.name = "s";
  const IntervalScript s = interval_script(r, p, "d.tsv", "x.svg", false);
  EXPECT_EQ(s.data, "1\t1000\t1000\t1000\tbefore\tno interval\n\n\n");
  EXPECT_NE(s.script.find("set multiplot layout 1,1"), std::string::npos);
  EXPECT_EQ(s.script.find("index 1"), std::string::npos);
}

TEST(TornadoPlot, IntervalBandBehindTheBars) {
  Sensitivity sens;
  VariantSensitivity v;
  v.variant = "after";
  v.metric = "round_trip";
  v.unit = "ns";
  v.point = 800;
  Swing w;
  w.key = "vm.exit_entry";
  w.low = 750;
  w.high = 860;
  v.swings = {w};
  sens.variants = {v};
  scenario::ScenarioResult r;
  r.name = "s";
  const Propagation p = two_variants();
  const TornadoScript with = tornado_script(r, sens, "d.tsv", "x.svg", false, &p);
  EXPECT_NE(with.script.find("set object 1 rect from 700, graph 0 to 950, graph 1 behind"), std::string::npos);
  const TornadoScript without = tornado_script(r, sens, "d.tsv", "x.svg", false);
  EXPECT_EQ(without.script.find("set object 1 rect"), std::string::npos);
}

}  // namespace
}  // namespace ipilab::evidence
