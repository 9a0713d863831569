// evidence/published_figures.h: `ipilab run` holds a shipped scenario's published figures against
// its run, each with its kind; a fitted figure is never presented as a test of the model, and a
// run that changes what the figures describe (a copy of the file, --profile, a variant left out)
// says that it did not hold them.
#include "evidence/published_figures.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "common/file.h"
#include "common/output.h"
#include "cost/profile.h"
#include "scenario/catalog.h"
#include "scenario/runner.h"
#include "workload/workload.h"

namespace ipilab::evidence {
namespace {

scenario::PreparedScenario prepared(const std::string& file, scenario::RunOverrides ov = {}) {
  ov.iterations = 2000;
  return scenario::prepare(scenario::load_scenario(file), ov, workload::find_workload);
}

std::string kunpeng() { return (data_dir() / "profiles" / "kunpeng920-2s.toml").string(); }

const FigureResult* held(const ScenarioFigures& s, const std::string& id) {
  for (const auto& r : s.held)
    if (r.figure.id == id) return &r;
  return nullptr;
}

TEST(PublishedFigures, ShippedSeed003HoldsOnePredictedAndThreeFitted) {
  const auto figures = load_figures(shipped_figures_file());
  const auto p = prepared(scenario::resolve_scenario("seed003-ipi-hw"));
  const auto s = scenario_figures(figures, p, scenario::run(p));
  ASSERT_EQ(s.held.size(), 4u);
  EXPECT_FALSE(s.copy);
  EXPECT_EQ(s.other_profile, 0u);
  EXPECT_EQ(s.not_run, 0u);
  const auto* g1 = held(s, "G1");
  ASSERT_NE(g1, nullptr);
  EXPECT_EQ(g1->figure.kind, FigureKind::Predicted);
  EXPECT_EQ(g1->figure.variant, "pre-seed, VM on socket 0");
  EXPECT_NEAR(g1->model, 850.0, 850.0 * 0.03);  // the figure's own stated tolerance
  EXPECT_TRUE(g1->within);
  const auto* g2 = held(s, "G2");
  ASSERT_NE(g2, nullptr);
  EXPECT_EQ(g2->figure.kind, FigureKind::Fitted);
  const std::string text = format_scenario_figures(s, "validation/figures.toml");
  EXPECT_NE(text.find("fitted (its.sgir_process): reproduced by construction"), std::string::npos) << text;
  EXPECT_NE(text.find("predicted: ✓ within tolerance"), std::string::npos) << text;
  EXPECT_NE(text.find("(here 1 of 4)"), std::string::npos) << text;
  nlohmann::ordered_json j;
  add_scenario_figures_json(j, s, "validation/figures.toml");
  ASSERT_EQ(j["published_figures"]["held"].size(), 4u);
  EXPECT_EQ(j["published_figures"]["held"][3]["id"], "G1");
  EXPECT_EQ(j["published_figures"]["held"][3]["kind"], "predicted");
  EXPECT_EQ(j["published_figures"]["held"][3]["within"], true);
  EXPECT_FALSE(j["published_figures"]["held"][0].contains("within"));  // fitted: nothing to be within
}

TEST(PublishedFigures, MissedFigureShowsItsErrorAndReason) {
  const auto figures = load_figures(shipped_figures_file());
  const auto p = prepared(scenario::resolve_scenario("avic-rome-broadcast"));
  const auto s = scenario_figures(figures, p, scenario::run(p));
  const auto* r2 = held(s, "R2");
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(r2->figure.kind, FigureKind::Missed);
  EXPECT_FALSE(r2->within);
  EXPECT_LT(r2->error, -0.5);  // the model is far below 191 us
  const std::string text = format_scenario_figures(s, "validation/figures.toml");
  EXPECT_NE(text.find("missed (known): ✗ outside tolerance"), std::string::npos) << text;
  EXPECT_NE(text.find("R2 missed:"), std::string::npos) << text;
  EXPECT_NE(text.find("(here 0 of 3)"), std::string::npos) << text;
}

TEST(PublishedFigures, ACopyOfTheFileIsNotHeldAgainstThem) {
  std::ifstream in(scenario::resolve_scenario("seed003-ipi-hw"));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  // Relative paths in the copy would not resolve: point the profile at the shipped one.
  const std::string key = "file = \"profiles/kunpeng920-2s.toml\"";
  const auto at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  output::TempDir dir("ipilab-figures");
  text.replace(at, key.size(), "file = \"" + kunpeng() + "\"");
  const auto copy = dir.write("seed003-ipi-hw.toml", text);
  const auto p = prepared(copy.string());
  const auto s = scenario_figures(load_figures(shipped_figures_file()), p, scenario::run(p));
  EXPECT_TRUE(s.copy);
  EXPECT_EQ(s.copy_figures, 4u);
  EXPECT_TRUE(s.held.empty());
  EXPECT_NE(format_scenario_figures(s, "validation/figures.toml").find("not the shipped scenario of its name"), std::string::npos);
}

TEST(PublishedFigures, ReplacedProfileAndUnselectedVariantsAreCountedNotHeld) {
  const auto figures = load_figures(shipped_figures_file());
  scenario::RunOverrides ov;
  ov.variants = {"pre-seed, VM on socket 0"};
  const auto one = prepared(scenario::resolve_scenario("seed003-ipi-hw"), ov);
  const auto s1 = scenario_figures(figures, one, scenario::run(one));
  ASSERT_EQ(s1.held.size(), 1u);
  EXPECT_EQ(s1.held[0].figure.id, "G1");
  EXPECT_EQ(s1.not_run, 3u);

  scenario::RunOverrides other;
  other.profile = std::make_shared<const cost::Profile>(cost::Profile::load_file(kunpeng()));
  other.profile_shown = "k.toml";
  const auto p = prepared(scenario::resolve_scenario("seed003-ipi-hw"), other);
  const auto s2 = scenario_figures(figures, p, scenario::run(p));
  EXPECT_TRUE(s2.held.empty());
  EXPECT_EQ(s2.other_profile, 4u);
  EXPECT_NE(format_scenario_figures(s2, "validation/figures.toml").find("4 figures not held against this run: --profile replaces"),
            std::string::npos);
}

}  // namespace
}  // namespace ipilab::evidence
