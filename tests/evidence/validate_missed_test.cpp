// evidence/validate.h: kind "missed" — a modelled figure that leaves its stated tolerance is parsed
// with its reason, reported with its error, counted apart from the predicted ones, and never
// fails the run; a predicted one that leaves its tolerance still does.
#include "evidence/validate.h"

#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "figure_errors.h"

namespace ipilab::evidence {
namespace {

const std::string kMissed = R"(
[[figure]]
id = "M1"
profile = "p"
figure = "a register read"
value = 638
unit = "ns"
source = "somewhere"
kind = "missed"
scenario = "s"
variant = "v"
metric = "mmio_read"
tolerance = 0.5
tolerance_reason = "the estimate's class default range"
)";

using testing::parse_refusal;

TEST(MissedFigure, ParsedWithItsToleranceAndReason) {
  const auto f = parse_figures(kMissed + "reason = \"gic.vgic_mmio_trap decides it\"\n", "f.toml");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, FigureKind::Missed);
  EXPECT_EQ(kind_name(f[0].kind), "missed");
  EXPECT_DOUBLE_EQ(f[0].tolerance, 0.5);
  EXPECT_EQ(f[0].reason, "gic.vgic_mmio_trap decides it");
}

TEST(MissedFigure, RefusedWithoutReasonOrTolerance) {
  EXPECT_NE(parse_refusal(kMissed).find("reason: missing"), std::string::npos) << parse_refusal(kMissed);
  std::string no_tol = kMissed;
  no_tol.replace(no_tol.find("tolerance = 0.5\n"), 16, "");
  EXPECT_NE(parse_refusal(no_tol + "reason = \"r\"\n").find("tolerance"), std::string::npos);
}

FigureResult row(FigureKind k, bool within) {
  FigureResult r;
  r.figure.id = k == FigureKind::Missed ? "M1" : "P1";
  r.figure.profile = "p";
  r.figure.kind = k;
  r.figure.scenario = "s";
  r.figure.variant = "v";
  r.figure.metric = "m";
  r.figure.unit = "ns";
  r.figure.value = 638;
  r.figure.tolerance = 0.5;
  r.figure.reason = "decided by one estimate";
  r.model = within ? 700 : 1004;
  r.error = (r.model - 638) / 638;
  r.within = within;
  return r;
}

TEST(MissedFigure, NeverFailsTheRunButAPredictedMissDoes) {
  Validation v;
  v.file = "f.toml";
  ProfileSummary p;
  p.name = "p";
  p.missed = 1;
  v.profiles.push_back(p);
  v.figures.push_back(row(FigureKind::Missed, false));
  EXPECT_TRUE(v.pass());
  const std::string text = format_validation(v);
  EXPECT_NE(text.find("MISSED (known)"), std::string::npos) << text;
  EXPECT_NE(text.find("+57.4%"), std::string::npos) << text;  // (1004 - 638) / 638
  EXPECT_NE(text.find("M1 missed:"), std::string::npos) << text;
  EXPECT_EQ(validation_json(v)["figures"][0]["kind"], "missed");
  EXPECT_EQ(validation_json(v)["profiles"][0]["missed"], 1);
  v.figures.push_back(row(FigureKind::Predicted, false));
  EXPECT_FALSE(v.pass());
}

// The overall line names the known misses beside "within tolerance"; the JSON's verdict says what the
// text says, and a profile with nothing fitted and nothing predicted is not "validated".
TEST(MissedFigure, HeadlineAndJsonVerdictNameTheMisses) {
  Validation v;
  v.file = "f.toml";
  ProfileSummary p;
  p.name = "p";
  p.fitted_values = {"a.b"};
  p.fitted = 1;
  p.predicted = 1;
  p.predicted_within = 1;
  p.missed = 1;
  v.profiles.push_back(p);
  ProfileSummary empty;
  empty.name = "example";
  v.profiles.push_back(empty);
  v.figures.push_back(row(FigureKind::Missed, false));
  const std::string text = format_validation(v);
  EXPECT_NE(text.find("every figure of kind predicted within its tolerance; 1 known miss (kind missed, above)"),
            std::string::npos)
      << text;
  const auto j = validation_json(v);
  EXPECT_EQ(j["profiles"][0]["validated"], true);
  EXPECT_EQ(j["profiles"][0]["verdict"], "validated, with misses");
  EXPECT_EQ(j["profiles"][1]["validated"], false);
  EXPECT_EQ(j["profiles"][1]["verdict"], "nothing to validate");
}

TEST(MissedFigure, SaysWhenBackWithinTolerance) {
  Validation v;
  ProfileSummary p;
  p.name = "p";
  v.profiles.push_back(p);
  v.figures.push_back(row(FigureKind::Missed, true));
  EXPECT_NE(format_validation(v).find("now WITHIN tolerance: make it predicted"), std::string::npos);
}

}  // namespace
}  // namespace ipilab::evidence
