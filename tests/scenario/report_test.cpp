// The terminal report: number formats per column, and the summary of every built-in scenario with
// the real workloads (one screen each, the table first, details only with --details).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "scenario/catalog.h"
#include "scenario/report.h"
#include "scenario/report_format.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "workload/workload.h"

namespace ipilab::scenario {
namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(ReportFormat, OneFormatPerColumnFromTheLargestValue) {
  using report::column_format;
  const double big[] = {850.4, 17965.2, 7.5};
  EXPECT_EQ(column_format(big).decimals, 0);
  const double hundreds[] = {849.94, 749.91, 12.0};
  EXPECT_EQ(column_format(hundreds).decimals, 1);
  const double tens[] = {12.345, 1.5};
  EXPECT_EQ(column_format(tens).decimals, 2);
  const double ones[] = {1.2345};
  EXPECT_EQ(column_format(ones).decimals, 3);
  const double small[] = {0.01234, 0.002};
  EXPECT_EQ(column_format(small).decimals, 4);  // 3 significant digits of 0.0123
  const double none[] = {0.0};
  EXPECT_EQ(column_format(none).decimals, 0);
  // The same decimals on every row, thousands grouped.
  const report::NumberFormat f = column_format(hundreds);
  EXPECT_EQ(report::format_fixed(849.94, f), "849.9");
  EXPECT_EQ(report::format_fixed(12.0, f), "12.0");
  EXPECT_EQ(report::format_fixed(266475.4, {0}), "266,475");
  EXPECT_EQ(report::format_fixed(-1234.56, {1}), "-1,234.6");
  EXPECT_EQ(report::format_fixed(-0.04, {1}), "0.0");
  EXPECT_EQ(report::format_count(509987), "509,987");
  EXPECT_EQ(report::format_count(20000), "20,000");
  EXPECT_EQ(report::format_count(999), "999");
  EXPECT_EQ(report::format_percent(1730.71), "+1,730.7%");
  EXPECT_EQ(report::format_percent(-3.54), "-3.5%");
  EXPECT_EQ(report::format_percent(-0.01), "+0.0%");
  EXPECT_EQ(report::format_tolerance(0.02), "±2%");
  EXPECT_EQ(report::format_tolerance(0), "exactly");
}

TEST(ReportFormat, TableAlignsAndTrims) {
  report::Table t({"variant", "mean", "check"}, {0, 2});
  t.add({"a", "8,041", "✓ 8,043 ±2%"});
  t.add({"longer name", "750", ""});
  EXPECT_EQ(t.render("  "),
            "  variant       mean  check\n"
            "  a            8,041  ✓ 8,043 ±2%\n"
            "  longer name    750\n");
  EXPECT_EQ(t.width(), 11 + 2 + 5 + 2 + 11u);
}

// Every built-in scenario: the summary fits one screen (at most 30 lines, the table at most 124
// columns before its check column), starts with the header and the table, names the published
// figure, ends with the hint; --details adds the sections and names repeated steps once.
TEST(ReportBuiltin, SummaryIsOneScreenPerScenario_DetailsOnlyWithTheFlag) {
  const auto list = list_builtin();
  ASSERT_GE(list.size(), 11u);
  std::map<std::string, std::size_t> counts;
  for (const auto& b : list) {
    ASSERT_TRUE(b.error.empty()) << b.name << ": " << b.error;
    RunOverrides ov;
    ov.iterations = 200;
    const ScenarioResult r = run(prepare(load_scenario(b.file), ov, workload::find_workload));
    const std::string text = format_text(r);
    const auto lines = lines_of(text);
    counts[b.name] = lines.size();
    EXPECT_LE(lines.size(), 30u) << b.name << ":\n" << text;
    EXPECT_GE(lines.size(), r.variants.size() + 8) << b.name << ":\n" << text;
    EXPECT_EQ(lines.front().rfind("== " + r.name + ": ", 0), 0u) << text;
    EXPECT_NE(text.find("\n  reproduces  "), std::string::npos) << b.name;
    // The hint comes last (wrapped: its continuation lines are indented by four).
    const auto hint = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("  --details (-v): ", 0) == 0; });
    ASSERT_NE(hint, lines.end()) << b.name << ":\n" << text;
    for (auto l = hint + 1; l != lines.end(); ++l) EXPECT_EQ(l->rfind("    ", 0), 0u) << b.name << ": " << *l;
    EXPECT_EQ(text.find("first hypercall exactly") != std::string::npos,
              std::any_of(r.variants.begin(), r.variants.end(), [](const VariantResult& v) { return v.result.sample_hypercall.has_value(); }))
        << b.name;
    // The table: a header row "variant ... mean p50 p99 vs first", then one row per variant.
    const auto head = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("  variant ", 0) == 0; });
    ASSERT_NE(head, lines.end()) << text;
    EXPECT_NE(head->find("mean"), std::string::npos);
    for (std::size_t i = 0; i < r.variants.size(); ++i)
      EXPECT_EQ((head + 1 + static_cast<std::ptrdiff_t>(i))->rfind("  " + r.variants[i].name, 0), 0u) << text;
    const std::size_t check_col = head->find("  check");
    for (auto l = head; l != head + 1 + static_cast<std::ptrdiff_t>(r.variants.size()); ++l) {
      const std::string before_check = check_col == std::string::npos ? *l : l->substr(0, std::min(l->size(), check_col));
      EXPECT_LE(report::text_width(before_check), 124u) << b.name << ": " << *l;
    }
    // No per-variant sections in the summary.
    EXPECT_EQ(text.find("    settings  "), std::string::npos) << b.name;
    EXPECT_EQ(text.find("    time      "), std::string::npos) << b.name;
    EXPECT_EQ(text.find("---- details ----"), std::string::npos) << b.name;

    TextOptions d;
    d.details = true;
    const std::string details = format_text(r, d);
    EXPECT_NE(details.find("---- details ----"), std::string::npos) << b.name;
    EXPECT_NE(details.find("\n  resources: "), std::string::npos) << b.name;
    for (const auto& v : r.variants) EXPECT_NE(details.find("\n  " + v.name), std::string::npos) << b.name << " / " << v.name;
  }
  // The two default scenarios printed 144 and 99 lines before the summary existed (seed 003's
  // "reproduces" line wraps since it names the seed's commit).
  EXPECT_LE(counts["seed000-send-ipi-one"], 22u);
  EXPECT_LE(counts["seed003-ipi-hw"], 20u);
}

TEST(ReportBuiltin, Seed000_TableRowsAndRepeatedStepsNamedOnce) {
  RunOverrides ov;
  ov.iterations = 2000;
  const ScenarioResult r = run(prepare(load_scenario(resolve_scenario("seed000-send-ipi-one")), ov, workload::find_workload));
  const std::string text = format_text(r);
  // Mean, p50, p99 with one format (largest > 1000: whole cycles, grouped), the key counters that
  // differ, the expected value of the published figure beside the model's.
  EXPECT_NE(text.find("  variant                   mean     p50     p99  vs first  hypercalls  native_fallbacks  icr_writes  check\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  native APIC fallback"), std::string::npos);
  EXPECT_NE(text.find("  ✓ 8,043 ±2%\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  ✓ send_cost 26,000 ±3%\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  in every variant: sends 2,000, vm_exits 2,000\n"), std::string::npos) << text;
  TextOptions d;
  d.details = true;
  const std::string details = format_text(r, d);
  // "mainline, NR_CPUS=64" runs exactly the steps of "mainline": one line, not six.
  EXPECT_NE(details.find("\n  mainline, NR_CPUS=64\n    settings  linux=mainline, NR_CPUS=64, CPUMASK_OFFSTACK=n\n"),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("    time      the same steps as 'mainline'\n"), std::string::npos) << details;
  EXPECT_NE(details.find("  settings in every variant: mechanism=hyperv, kvm=mainline, target idle=halted\n"), std::string::npos) << details;
  EXPECT_NE(details.find("\n  send_cost (cycles): time inside the send hook"), std::string::npos) << details;
}

}  // namespace
}  // namespace ipilab::scenario
