// --plot: gnuplot subprocess, written through a temporary file.
#include <gtest/gtest.h>

#include "common/error.h"
#include "test_util.h"
#include "trace/analysis.h"
#include "trace/plot.h"

namespace ipilab::trace {
namespace {

TEST(Plot, ScriptHasOneCurvePerKindAndTheHeatMap) {
  IpiAnalysis a;
  analyse_trace(testing::traces_dir() / "mixed.txt", a);
  const std::string s = plot_script(a, "/d", "/o.svg", true);
  EXPECT_NE(s.find("cdf-call-function-single.dat"), std::string::npos);
  EXPECT_NE(s.find("cdf-reschedule.dat"), std::string::npos);
  EXPECT_EQ(s.find("cdf-call-function.dat"), std::string::npos);  // no such arrivals in mixed
  EXPECT_NE(s.find("pairs.dat' using 1:2:3 with image"), std::string::npos);
}

TEST(Plot, BadExtensionIsInputError) {
  IpiAnalysis a;
  analyse_trace(testing::traces_dir() / "pipe-report.txt", a);
  EXPECT_THROW(plot_trace(a, "/tmp/x.pdf"), InputError);
  EXPECT_THROW(plot_trace(a, "/nonexistent-folder/x.svg"), InputError);
}

TEST(Plot, WritesSvgAndPngAndLeavesNothingElse) {
  if (!testing::have_program("gnuplot")) GTEST_SKIP() << "gnuplot not installed";
  IpiAnalysis a;
  analyse_trace(testing::traces_dir() / "mixed.txt", a);
  testing::TempDir tmp;
  plot_trace(a, tmp.path / "p.svg");
  plot_trace(a, tmp.path / "p.png");
  const std::string svg = testing::slurp(tmp.path / "p.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_EQ(testing::slurp(tmp.path / "p.png").substr(1, 3), "PNG");
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path)) n += 1 + 0 * e.is_regular_file();
  EXPECT_EQ(n, 2u);
}

}  // namespace
}  // namespace ipilab::trace
