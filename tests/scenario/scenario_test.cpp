// Scenario files, variant merging, preparation, the run command's table/JSON/check output and its
// bad-input errors, against the deterministic FakeWorkload (fake_workload.h).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "fake_workload.h"
#include "scenario/catalog.h"
#include "scenario/command.h"
#include "scenario/plot.h"
#include "scenario/report.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace ipilab::scenario {
namespace {

namespace fs = std::filesystem;
using testing::fake_lookup;

const fs::path kData = fs::path(IPILAB_SOURCE_DIR) / "tests/scenario/data";

// A base scenario: 2 vCPUs on the kunpeng920-2s preset, the test profile (vm.exit_entry = 1000
// cycles at 2 GHz = 500 ns), fake workload with base_ns = 100 -> latency 600 ns.
constexpr const char* kBase = R"([scenario]
name = "t"
title = "test scenario"
workload = "fake"
iterations = 50
warmup = 0
reproduces = "nothing published"

[host]
preset = "kunpeng920-2s"

[vm]
vcpus = 2
pin = [0, 1]

[profile]
file = "profile.toml"

[workload]
base_ns = 100
mode = "fast"
)";

class ScenarioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "ipilab-scenario-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    fs::copy_file(kData / "profile.toml", dir_ / "profile.toml");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  Scenario parse(const std::string& text, const std::string& name = "s.toml") { return load_scenario(write(name, text)); }
  ScenarioResult run_text(const std::string& text, RunOverrides ov = {}) {
    return run(prepare(parse(text), ov, fake_lookup));
  }
  // The message of the InputError `f` throws (fails the test if it throws nothing or something else).
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
  struct Output {
    std::string out, err;
  };
  Output command(CommandOptions o) {
    std::ostringstream out, err;
    run_command(o, out, err, fake_lookup);
    return {out.str(), err.str()};
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// Line numbers below count from 1 in kBase; variants are appended after its 21 lines.
constexpr int kBaseLines = 21;

// ---------------------------------------------------------------------------------------------
// Merge semantics

TEST_F(ScenarioTest, Merge_VariantOverridesOneLeaf_KeepsBaseSiblings) {
  Scenario s = parse(std::string(kBase) + R"(
[[variant]]
name = "a"

[[variant]]
name = "b"
workload.base_ns = 200
)");
  ASSERT_EQ(s.variants.size(), 2u);
  const toml::table& a = s.variants[0].doc;
  const toml::table& b = s.variants[1].doc;
  EXPECT_EQ(a["workload"]["base_ns"].value<int64_t>(), 100);
  EXPECT_EQ(b["workload"]["base_ns"].value<int64_t>(), 200);
  EXPECT_EQ(b["workload"]["mode"].value<std::string>(), "fast");  // sibling kept
  EXPECT_EQ(b["host"]["preset"].value<std::string>(), "kunpeng920-2s");
  // The override keeps its own source line (the variant's), the sibling the base's.
  EXPECT_EQ(b["workload"]["base_ns"].node()->source().begin.line, kBaseLines + 7);
  EXPECT_EQ(b["workload"]["mode"].node()->source().begin.line, 21);
}

TEST_F(ScenarioTest, Merge_ArrayIsReplacedWholesale) {
  Scenario s = parse(std::string(kBase) + R"(
[[variant]]
name = "far"
vm.pin = [32, 33]
)");
  const toml::array* pin = s.variants[0].doc["vm"]["pin"].as_array();
  ASSERT_NE(pin, nullptr);
  ASSERT_EQ(pin->size(), 2u);
  EXPECT_EQ(pin->get(0)->value<int64_t>(), 32);
  EXPECT_EQ(s.variants[0].doc["vm"]["vcpus"].value<int64_t>(), 2);
}

TEST_F(ScenarioTest, Merge_HostPresetInVariant_ReplacesInlineBaseHost) {
  const std::string text = R"([scenario]
workload = "fake"
[host.layout]
sockets = 1
cores_per_node = 4
[host.latency]
same_node_ns = 40
source = "test"
[vm]
vcpus = 2
[profile]
file = "profile.toml"
[[variant]]
name = "inline"
[[variant]]
name = "preset"
host.preset = "kunpeng920-4s"
)";
  Scenario s = parse(text);
  EXPECT_TRUE(s.variants[0].doc["host"]["layout"].is_table());
  EXPECT_FALSE(s.variants[1].doc["host"]["layout"]);
  PreparedScenario p = prepare(std::move(s), {}, fake_lookup);
  EXPECT_EQ(p.variants[0].host->cpus.size(), 4u);
  EXPECT_EQ(p.variants[1].host->name, "kunpeng920-4s");
  EXPECT_EQ(p.variants[1].host->sockets, 4);
}

TEST_F(ScenarioTest, Merge_NoVariantTable_GivesOneImplicitBaseVariant) {
  Scenario s = parse(kBase);
  ASSERT_EQ(s.variants.size(), 1u);
  EXPECT_EQ(s.variants[0].name, "base");
  EXPECT_EQ(s.iterations, 50u);
  EXPECT_EQ(s.warmup, 0u);
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.reproduces, "nothing published");
}

TEST_F(ScenarioTest, Merge_ProfileOverride_AppliesToItsVariantOnly_WithSource) {
  ScenarioResult r = run_text(std::string(kBase) + R"(
[[variant]]
name = "profiled"
[[variant]]
name = "cheaper-exit"
profile.override."vm.exit_entry" = { value = 200, unit = "ns", source = "what if exits cost 200 ns" }
[[variant]]
name = "nested-form"
profile.override.vm.exit_entry = { value = 100, unit = "cycles" }
)");
  ASSERT_EQ(r.variants.size(), 3u);
  EXPECT_DOUBLE_EQ(r.variants[0].result.metrics[0].summary.mean, 600.0);
  EXPECT_DOUBLE_EQ(r.variants[1].result.metrics[0].summary.mean, 300.0);
  EXPECT_DOUBLE_EQ(r.variants[2].result.metrics[0].summary.mean, 150.0);  // 100 cycles at 2 GHz = 50 ns
  const auto& costs1 = r.variants[1].result.provenance["costs"];
  ASSERT_EQ(costs1.size(), 1u);
  EXPECT_EQ(costs1[0]["source"], "what if exits cost 200 ns");
  // Without a source, the override names the scenario file and line.
  EXPECT_NE(r.variants[2].result.provenance["costs"][0]["source"].get<std::string>().find("scenario override at"),
            std::string::npos);
  EXPECT_EQ(r.variants[0].result.provenance["costs"][0]["source"], "test value A");
}

// An override of a cost the variant never reads changes nothing; the run says so in a note that names
// the override's place, and says nothing for an override that was read.
TEST_F(ScenarioTest, Override_OfACostTheVariantNeverReads_IsNoted) {
  ScenarioResult r = run_text(std::string(kBase) + R"(
[[variant]]
name = "read"
profile.override."vm.exit_entry" = { value = 200, unit = "ns" }
[[variant]]
name = "unread"
profile.override."hv.slow_input_map" = { value = 99999, unit = "ns" }
)");
  ASSERT_EQ(r.variants.size(), 2u);
  EXPECT_TRUE(r.variants[0].result.notes.empty());
  ASSERT_EQ(r.variants[1].result.notes.size(), 1u);
  EXPECT_NE(r.variants[1].result.notes[0].find(
                "profile.override.hv.slow_input_map.value: the override of hv.slow_input_map changes nothing here: "
                "this variant never reads that cost"),
            std::string::npos)
      << r.variants[1].result.notes[0];
  EXPECT_DOUBLE_EQ(r.variants[1].result.metrics[0].summary.mean, 600.0);
}

TEST_F(ScenarioTest, Prepare_OverridesFromCommandLine_SeedIterationsVariant) {
  RunOverrides ov;
  ov.seed = 7;
  ov.iterations = 5;
  ov.variants = {"b"};
  PreparedScenario p = prepare(parse(std::string(kBase) + "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n"), ov,
                               fake_lookup);
  ASSERT_EQ(p.variants.size(), 1u);
  EXPECT_EQ(p.variants[0].name, "b");
  EXPECT_EQ(p.variants[0].spec.seed, 7u);
  EXPECT_EQ(p.variants[0].spec.iterations, 5u);
  EXPECT_EQ(p.variants[0].spec.warmup, 0u);
  EXPECT_EQ(p.variants[0].vm_label, "2 vCPUs on host CPUs 0-1, NR_CPUS=8192");
  EXPECT_EQ(p.variants[0].host_label, "kunpeng920-2s (2 sockets, 64 CPUs, 2 ITSs)");
}

// `ipilab run --profile FILE`: every variant runs on the given profile instead of the scenario's, the
// scenario's [profile.override] entries still apply on top, and the label names both files.
TEST_F(ScenarioTest, Prepare_ProfileFromCommandLine_ReplacesTheScenariosProfileOverridesStillApply) {
  const std::string other = write("other.toml", R"([profile]
name = "other"
clock_ghz = 1.0
clock_source = "illustrative"
[cost.vm.exit_entry]
value = 300
unit = "ns"
source = "other value"
)");
  const std::string text = std::string(kBase) + R"(
[[variant]]
name = "as is"
[[variant]]
name = "overridden"
[variant.profile.override."vm.exit_entry"]
value = 50
unit = "ns"
source = "what if"
)";
  RunOverrides ov;
  ov.profile = std::make_shared<const cost::Profile>(cost::Profile::load_file(other));
  ov.profile_shown = "other.toml";
  const ScenarioResult r = run(prepare(parse(text), ov, fake_lookup));
  ASSERT_EQ(r.variants.size(), 2u);
  EXPECT_DOUBLE_EQ(r.variants[0].result.metrics[0].summary.mean, 400.0);  // 100 + the other profile's 300 ns
  EXPECT_DOUBLE_EQ(r.variants[1].result.metrics[0].summary.mean, 150.0);  // the scenario's override on top
  EXPECT_EQ(r.variants[0].profile_file, "other.toml");
  EXPECT_EQ(r.variants[0].profile_label, "other (other.toml, from --profile instead of " + file("profile.toml") + ")");
  EXPECT_EQ(r.variants[0].result.provenance["costs"][0]["source"], "other value");

  // Through the command: a missing file is an error naming --profile, before anything runs.
  CommandOptions o;
  o.scenarios = {write("s.toml", kBase)};
  o.profile = file("missing.toml");
  EXPECT_NE(input_error([&] { command(o); }).find("--profile: '" + file("missing.toml") + "': no such profile file"),
            std::string::npos);
  o.profile = other;
  EXPECT_NE(command(o).out.find("other (" + other + ", from --profile instead of"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Errors in values a variant set name the variant's line

TEST_F(ScenarioTest, VariantError_BadPin_NamesVariantLine) {
  const std::string text = std::string(kBase) + "\n[[variant]]\nname = \"ok\"\n[[variant]]\nname = \"far\"\nvm.pin = [0, 64]\n";
  const std::string msg = input_error([&] { prepare(parse(text), {}, fake_lookup); });
  EXPECT_NE(msg.find(fmt::format("s.toml:{}:14: vm.pin[1]: host CPU 64 does not exist", kBaseLines + 6)), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("[scenario 't', variant 'far']"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, VariantError_WrongParamType_NamesVariantLineFromWorkload) {
  const std::string text = std::string(kBase) + "\n[[variant]]\nname = \"v\"\nworkload.base_ns = \"fast\"\n";
  const std::string msg = input_error([&] { run_text(text); });
  EXPECT_NE(msg.find(fmt::format("s.toml:{}:20: workload.base_ns: expected an integer, got string", kBaseLines + 4)),
            std::string::npos)
      << msg;
}

TEST_F(ScenarioTest, VariantError_UnknownParam_NamesVariantLineAndDeclaredParams) {
  const std::string text = std::string(kBase) + "\n[[variant]]\nname = \"v\"\nworkload.bsae_ns = 3\n";
  const std::string msg = input_error([&] { prepare(parse(text), {}, fake_lookup); });
  EXPECT_NE(msg.find(fmt::format("s.toml:{}:10: workload.bsae_ns: unknown key", kBaseLines + 4)), std::string::npos) << msg;
  EXPECT_NE(msg.find("parameters: base_ns, cost, jitter, mode, lost, drop"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, VariantError_UnknownPreset_NamesVariantLine) {
  const std::string text = std::string(kBase) + "\n[[variant]]\nname = \"v\"\nhost.preset = \"nope\"\n";
  const std::string msg = input_error([&] { prepare(parse(text), {}, fake_lookup); });
  EXPECT_NE(msg.find(fmt::format("s.toml:{}:6: host.preset: no such host preset", kBaseLines + 4)), std::string::npos) << msg;
}

TEST_F(ScenarioTest, VariantError_UnknownKeyInVariant) {
  const std::string text = std::string(kBase) + "\n[[variant]]\nname = \"v\"\nseed = 3\n";
  const std::string msg = input_error([&] { parse(text); });
  EXPECT_NE(msg.find(fmt::format("s.toml:{}:1: variant[0].seed: unknown key", kBaseLines + 4)), std::string::npos) << msg;
}

// ---------------------------------------------------------------------------------------------
// Bad input (each through run_command, the function the CLI calls; InputError = exit status 2)

TEST_F(ScenarioTest, BadInput_UnknownTopLevelKey_NamesFileLineKey) {
  const std::string path = kData / "bad-unknown-key.toml";
  const std::string msg = input_error([&] { command({.scenarios = {path}}); });
  EXPECT_NE(msg.find(path + ":5:1: bogus: unknown key"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_UnknownScenarioKey) {
  std::string text = kBase;
  text.replace(text.find("warmup = 0"), 10, "warmpu = 0");
  const std::string msg = input_error([&] { parse(text); });
  EXPECT_NE(msg.find("s.toml:6:1: scenario.warmpu: unknown key"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_WrongType) {
  const std::string path = kData / "bad-wrong-type.toml";
  const std::string msg = input_error([&] { command({.scenarios = {path}}); });
  EXPECT_NE(msg.find(path + ":4:14: scenario.iterations: expected an integer, got string"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_MissingScenarioFile) {
  const std::string msg = input_error([&] { command({.scenarios = {file("nope.toml")}}); });
  EXPECT_NE(msg.find(file("nope.toml") + ": no such scenario file"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_MissingProfileFile_NamesScenarioLineAndPlacesLooked) {
  std::string text = kBase;
  text.replace(text.find("profile.toml"), 12, "profiles/missing.toml");
  const std::string msg = input_error([&] { prepare(parse(text), {}, fake_lookup); });
  EXPECT_NE(msg.find("s.toml:17:1: profile.file: no such file 'profiles/missing.toml' (looked in"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_ImpossiblePlacement) {
  std::string text = kBase;
  text.replace(text.find("pin = [0, 1]"), 12, "pin = [0, 999]");
  const std::string path = write("s.toml", text);
  const std::string msg = input_error([&] { command({.scenarios = {path}}); });
  EXPECT_NE(msg.find(path + ":14:11: vm.pin[1]: host CPU 999 does not exist on host 'kunpeng920-2s' (CPUs 0-63)"),
            std::string::npos)
      << msg;
}

TEST_F(ScenarioTest, BadInput_ProfileLacksCostTheWorkloadNeeds_NamesProfileFileAndKey) {
  const std::string text = std::string(kBase) + "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"its\"\nworkload.cost = \"its.sgir_write\"\n";
  const std::string msg = input_error([&] { run_text(text); });
  EXPECT_NE(msg.find(file("profile.toml") + ": cost.its.sgir_write: profile 'scenario-test' has no value for this cost"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("variant 'its'"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_DuplicateVariantNames) {
  const std::string text = std::string(kBase) + "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n";
  const std::string msg = input_error([&] { parse(text); });
  EXPECT_NE(msg.find(fmt::format("s.toml:{}:1: variant[1].name: duplicate variant name 'a' (first defined at", kBaseLines + 4)),
            std::string::npos)
      << msg;
}

TEST_F(ScenarioTest, BadInput_UnknownWorkload) {
  std::string text = kBase;
  text.replace(text.find("\"fake\""), 6, "\"nope\"");
  const std::string msg = input_error([&] { prepare(parse(text), {}, fake_lookup); });
  EXPECT_NE(msg.find("s.toml:4:1: scenario.workload: unknown workload 'nope'"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_ExpectForUnknownVariant) {
  std::string text = std::string(kBase) + "[scenario.expect.nope]\nlatency = 600\n";
  // [scenario.expect.x] after [workload] is a new table under scenario: valid TOML.
  const std::string msg = input_error([&] { parse(text); });
  EXPECT_NE(msg.find("scenario.expect.nope: no variant named 'nope' (variants: 'base')"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_UnknownVariantOnCommandLine) {
  const std::string path = write("s.toml", kBase);
  const std::string msg = input_error([&] { command({.scenarios = {path}, .variants = {"zzz"}}); });
  EXPECT_NE(msg.find("--variant: scenario 't'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("has no variant 'zzz' (variants: 'base')"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_TomlSyntaxError_NamesLine) {
  const std::string msg = input_error([&] { parse("[scenario]\nworkload = \"fake\nx=1\n"); });
  EXPECT_NE(msg.find("s.toml:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("TOML syntax error"), std::string::npos) << msg;
}

TEST_F(ScenarioTest, BadInput_NothingWrittenWhenAVariantFails) {
  const std::string path = write("s.toml", std::string(kBase) + "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nworkload.cost = \"its.sgir_write\"\n");
  CommandOptions o{.scenarios = {path}, .json = file("out.json"), .plot = file("out.svg")};
  std::ostringstream out, err;
  EXPECT_THROW(run_command(o, out, err, fake_lookup), InputError);
  EXPECT_FALSE(fs::exists(file("out.json")));
  EXPECT_FALSE(fs::exists(file("out.svg")));
  EXPECT_EQ(out.str(), "");
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().string().find("out."), std::string::npos) << e.path();
}

TEST_F(ScenarioTest, BadInput_JsonIntoMissingFolder_BeforeRunning) {
  const std::string path = write("s.toml", kBase);
  const std::string msg = input_error([&] { command({.scenarios = {path}, .json = file("no/dir/x.json")}); });
  EXPECT_NE(msg.find("--json: '" + file("no/dir/x.json") + "': folder '" + file("no/dir") + "' does not exist"),
            std::string::npos)
      << msg;
}

TEST_F(ScenarioTest, BadInput_PlotExtension) {
  const std::string path = write("s.toml", kBase);
  const std::string msg = input_error([&] { command({.scenarios = {path}, .plot = file("x.pdf")}); });
  EXPECT_NE(msg.find("--plot: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("must end in .png or .svg (the image format follows the name)"), std::string::npos) << msg;
}

// ---------------------------------------------------------------------------------------------
// Table, JSON, checks

constexpr const char* kTwoVariants = R"(
[[variant]]
name = "fast"
description = "the quick one"
[[variant]]
name = "slow"
workload.base_ns = 160
workload.mode = "slow"
)";

TEST_F(ScenarioTest, Table_ShowsChangeVsFirstAndNonZeroCounters) {
  const std::string path = write("s.toml", std::string(kBase) + kTwoVariants);
  const auto o = command({.scenarios = {path}});
  if (std::getenv("SCENARIO_TEST_PRINT")) std::fputs(o.out.c_str(), stdout);
  // 600 ns -> 660 ns: +10.0 %; one format for mean/p50/p99 (largest 660: one decimal).
  EXPECT_NE(o.out.find("  fast     600.0  600.0  600.0         —           0\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  slow     660.0  660.0  660.0    +10.0%          50\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("== t: test scenario =="), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("reproduces  nothing published"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("hypercalls"), std::string::npos);        // differs between variants: a column
  EXPECT_NE(o.out.find("  in every variant: sends 50\n"), std::string::npos) << o.out;  // the same in both
  EXPECT_EQ(o.out.find("misdelivered"), std::string::npos);      // zero everywhere: no column
  EXPECT_EQ(o.out.find("lost"), std::string::npos);
  // The per-variant sections only with --details; the hint says so.
  EXPECT_EQ(o.out.find("HvCallSendSyntheticClusterIpiEx"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("cost (vm.exit_entry)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  --details (-v): settings, other metrics, counters"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("costs: 1 used from " + file("profile.toml") + ", 1 distinct source; 0 of them estimates\n"), std::string::npos)
      << o.out;  // not below the data folder: shown as resolved
  EXPECT_EQ(o.err, "");  // no progress unless asked
}

TEST_F(ScenarioTest, Details_SettingsCountersOtherMetricsAndSteps) {
  const std::string path = write("s.toml", std::string(kBase) + kTwoVariants);
  const auto o = command({.scenarios = {path}, .details = true});
  if (std::getenv("SCENARIO_TEST_PRINT")) std::fputs(o.out.c_str(), stdout);
  EXPECT_NE(o.out.find("  settings in every variant: vcpus=2\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\n  slow\n    settings  mode=slow\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("    counters  hypercalls=50, hypercalls.HvCallSendSyntheticClusterIpiEx=50, sends=50\n"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("\n  send_cost (ns): fake: sender side\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  fast     500.0  500.0  500.0         —\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cost (vm.exit_entry)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("83.3%"), std::string::npos) << o.out;  // 500 of 600 ns
  EXPECT_NE(o.out.find("  --json FILE: all of it"), std::string::npos) << o.out;
}

TEST_F(ScenarioTest, Table_VariantWithoutSamples_ShowsDashes_JsonChangeNull) {
  const std::string path = write("s.toml", std::string(kBase) + kTwoVariants +
                                               "[[variant]]\nname = \"all-lost\"\nworkload.drop = true\nworkload.lost = 50\n");
  const auto o = command({.scenarios = {path}});
  EXPECT_NE(o.out.find("  all-lost      —      —      —         —           0    50\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  — no samples: all-lost (no latency figure; not a 0)\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  note [all-lost] 50 IPIs lost\n"), std::string::npos) << o.out;  // notes always show
  const auto j = nlohmann::json::parse(command({.scenarios = {path}, .json = "-"}).out);
  EXPECT_TRUE(j["variants"][2]["change_vs_first_pct"].is_null());
  EXPECT_EQ(j["variants"][2]["metrics"]["latency"]["count"], 0);
}

TEST_F(ScenarioTest, Table_NoBreakdownFlag_HidesSteps) {
  const std::string path = write("s.toml", std::string(kBase) + kTwoVariants);
  const auto o = command({.scenarios = {path}, .breakdown = false, .details = true});
  EXPECT_EQ(o.out.find("cost (vm.exit_entry)"), std::string::npos);
  EXPECT_NE(o.out.find("    counters  hypercalls=50"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("+10.0%"), std::string::npos);
}

TEST_F(ScenarioTest, Progress_OneLinePerVariantOnErr) {
  const std::string path = write("s.toml", std::string(kBase) + kTwoVariants);
  const auto o = command({.scenarios = {path}, .progress = true});
  EXPECT_NE(o.err.find("[t] fast (1/2): "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("[t] slow (2/2): "), std::string::npos) << o.err;
}

TEST_F(ScenarioTest, Json_ShapeOfTheContract) {
  const std::string path = write("s.toml", std::string(kBase) + kTwoVariants);
  command({.scenarios = {path}, .json = file("out.json")});
  const auto j = nlohmann::json::parse(read_text_file(file("out.json")));
  EXPECT_EQ(j["scenario"], "t");
  EXPECT_EQ(j["title"], "test scenario");
  EXPECT_EQ(j["workload"], "fake");
  EXPECT_EQ(j["seed"], 1);
  EXPECT_EQ(j["iterations"], 50);
  ASSERT_EQ(j["variants"].size(), 2u);
  const auto& v = j["variants"][1];
  EXPECT_EQ(v["name"], "slow");
  const auto& m = v["metrics"]["latency"];
  for (const char* k : {"mean", "p50", "p90", "p99", "p999", "min", "max", "stddev", "count", "unit", "description"})
    EXPECT_TRUE(m.contains(k)) << k;
  EXPECT_DOUBLE_EQ(m["mean"].get<double>(), 660.0);
  EXPECT_EQ(m["unit"], "ns");
  EXPECT_EQ(m["count"], 50);
  EXPECT_EQ(v["counters"]["sends"], 50);
  EXPECT_EQ(v["counters"]["hypercalls"], 50);
  EXPECT_EQ(v["counters"]["lost"], 0);
  EXPECT_NEAR(v["change_vs_first_pct"].get<double>(), 10.0, 1e-9);
  EXPECT_DOUBLE_EQ(j["variants"][0]["change_vs_first_pct"].get<double>(), 0.0);
  ASSERT_EQ(v["breakdown"].size(), 2u);
  EXPECT_EQ(v["breakdown"][1]["step"], "cost (vm.exit_entry)");
  EXPECT_DOUBLE_EQ(v["breakdown"][1]["mean_per_iteration"].get<double>(), 500.0);
  EXPECT_EQ(v["settings"]["mode"], "slow");
  EXPECT_TRUE(v["notes"].is_array());
  EXPECT_EQ(v["provenance"]["costs"][0]["key"], "vm.exit_entry");
  EXPECT_EQ(v["provenance"]["costs"][0]["source"], "test value A");
  EXPECT_FALSE(j.contains("check"));
  // Key order as documented: "scenario" first.
  EXPECT_EQ(read_text_file(file("out.json")).rfind("{\n  \"scenario\": \"t\"", 0), 0u);
}

TEST_F(ScenarioTest, Json_SameSeed_ByteIdentical_DifferentSeed_Differs) {
  // jitter on for every variant, so the seed matters:
  const std::string path = write("s.toml", std::string(kBase) + "jitter = true\n" + kTwoVariants);
  const auto a = command({.scenarios = {path}, .json = file("a.json")});
  const auto b = command({.scenarios = {path}, .json = file("b.json")});
  const auto c = command({.scenarios = {path}, .seed = 2, .json = file("c.json")});
  EXPECT_EQ(read_text_file(file("a.json")), read_text_file(file("b.json")));
  EXPECT_NE(read_text_file(file("a.json")), read_text_file(file("c.json")));
  // stdout equal apart from the line naming the JSON file.
  auto strip = [](std::string s) { return s.substr(0, s.find("\nJSON written to")); };
  EXPECT_EQ(strip(a.out), strip(b.out));
  EXPECT_NE(strip(a.out), strip(c.out));
}

TEST_F(ScenarioTest, Json_ToStdout_ReplacesTable) {
  const std::string path = write("s.toml", std::string(kBase) + kTwoVariants);
  const auto o = command({.scenarios = {path}, .json = "-"});
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["scenario"], "t");
}

TEST_F(ScenarioTest, Json_SeveralScenarios_WrappedInScenariosList) {
  const std::string p1 = write("one.toml", std::string(kBase) + kTwoVariants);
  std::string second = kBase;
  second.replace(second.find("name = \"t\""), 10, "name = \"u\"");
  const std::string p2 = write("two.toml", second);
  const auto o = command({.scenarios = {p1, p2}, .json = "-"});
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_TRUE(j.contains("scenarios"));
  ASSERT_EQ(j["scenarios"].size(), 2u);
  EXPECT_EQ(j["scenarios"][0]["scenario"], "t");
  EXPECT_EQ(j["scenarios"][1]["scenario"], "u");
}

constexpr const char* kExpect = R"(
[scenario.expect.fast]
latency = 600
sends = 50
[scenario.expect.slow]
latency = { value = 640, tolerance = 0.05 }
tolerance = 0.01
)";

TEST_F(ScenarioTest, Check_Pass_ShowsTicksAndReturns) {
  // 660 vs 640 within 5 %: pass.
  std::string text = kBase;
  text.insert(text.find("[host]"), kExpect);
  const std::string path = write("s.toml", text + kTwoVariants);
  const auto o = command({.scenarios = {path}, .check = true});
  EXPECT_NE(o.out.find("check"), std::string::npos);
  EXPECT_NE(o.out.find("✓"), std::string::npos);
  EXPECT_EQ(o.out.find("✗"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("checks: 3 of 3 expectations hold"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  fast     600.0  600.0  600.0         —           0  ✓ 600.0 ±2%; sends 50 ±2%\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  slow     660.0  660.0  660.0    +10.0%          50  ✓ 640.0 ±5%\n"), std::string::npos) << o.out;
  // --details: one row per expectation, a counter without a stat.
  const auto d = command({.scenarios = {path}, .details = true});
  EXPECT_NE(d.out.find("  fast     sends            50        50        ±2%  ✓\n"), std::string::npos) << d.out;
}

TEST_F(ScenarioTest, Check_Fail_ThrowsCheckFailedAfterOutput_OnlyWithFlag) {
  std::string text = kBase;
  std::string expect = kExpect;
  expect.replace(expect.find("tolerance = 0.05"), 16, "tolerance = 0.01");  // 660 vs 640: 3.1 % off
  text.insert(text.find("[host]"), expect);
  const std::string path = write("s.toml", text + kTwoVariants);
  const auto o = command({.scenarios = {path}});  // without --check: no error, ✗ shown
  EXPECT_NE(o.out.find("✗"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  slow     660.0  660.0  660.0    +10.0%          50  ✗ 640.0 ±1% (off +3.1%)\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("checks: 2 of 3 expectations hold (--check makes this exit 1)"), std::string::npos) << o.out;
  std::ostringstream out, err;
  try {
    run_command({.scenarios = {path}, .json = file("c.json"), .check = true}, out, err, fake_lookup);
    ADD_FAILURE() << "no CheckFailed";
  } catch (const CheckFailed& e) {
    EXPECT_NE(std::string(e.what()).find("1 of 3 expectations missed; first: t / slow: latency mean = 660.0 vs expected 640.0"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::exists(file("c.json")));  // results are written, then the check fails
  const auto j = nlohmann::json::parse(read_text_file(file("c.json")));
  EXPECT_EQ(j["check"]["pass"], false);
  EXPECT_EQ(j["check"]["passed"], 2);
  EXPECT_EQ(j["variants"][1]["check"][0]["actual"], 660.0);
}

// A counter of the catalog that a run does not report counted nothing (the tables show it as 0): a
// check on it compares 0 (and can fail, exit 1); a name outside the catalog is unknown.
TEST(ObservedValue, AbsentCatalogCounterIsZero_UnknownNamesAreNot) {
  workload::RunResult r;
  r.counters = {{"hypercalls", 50}, {"hypercalls.HvCallSendSyntheticClusterIpi", 50}, {"sends", 50}};
  Expectation e;
  e.key = "hypercalls.HvCallSendSyntheticClusterIpiEx";
  EXPECT_EQ(observed_value(r, e), std::optional<double>(0.0));
  e.key = "hypercalls.HvCallSendSyntheticClusterIpi";
  EXPECT_EQ(observed_value(r, e), std::optional<double>(50.0));
  r.counters.erase("hypercalls");  // another member alone says the family is reported
  e.key = "hypercalls.HvCallSendSyntheticClusterIpiEx";
  EXPECT_EQ(observed_value(r, e), std::optional<double>(0.0));
  r.counters = {{"hypercalls", 0}, {"sends", 50}};  // the family total alone, zero
  EXPECT_EQ(observed_value(r, e), std::optional<double>(0.0));
  r.counters = {{"sends", 50}};  // no trace of the family: still a catalogued name, so 0
  EXPECT_EQ(observed_value(r, e), std::optional<double>(0.0));
  e.key = "icr_writes";  // a mechanism counter the run never registered (a Hyper-V send without fallback)
  EXPECT_EQ(observed_value(r, e), std::optional<double>(0.0));
  for (const char* unknown : {"hypercals.HvCallSendSyntheticClusterIpiEx", "sendz", "vmexits.cpuid", ".sends", "hypercalls_x"}) {
    e.key = unknown;
    EXPECT_EQ(observed_value(r, e), std::nullopt) << unknown;
  }
  e.key = "hypercalls.HvCallSendSyntheticClusterIpiEx";
  e.stat = "p99";  // a stat is for metrics only
  EXPECT_EQ(observed_value(r, e), std::nullopt);
}

TEST_F(ScenarioTest, Check_AbsentFamilyMember_FailsTheCheck_TypoIsBadInput) {
  // The fake workload reports hypercalls and hypercalls.HvCallSendSyntheticClusterIpiEx (50 each).
  std::string text = kBase;
  text.insert(text.find("[host]"), "[scenario.expect.base]\n\"hypercalls.HvCallSendSyntheticClusterIpi\" = 50\n");
  const std::string path = write("fam.toml", text);
  std::ostringstream out, err;
  try {
    run_command({.scenarios = {path}, .check = true}, out, err, fake_lookup);
    ADD_FAILURE() << "no CheckFailed";
  } catch (const CheckFailed& e) {
    EXPECT_NE(std::string(e.what()).find("hypercalls.HvCallSendSyntheticClusterIpi = 0 vs expected 50"), std::string::npos)
        << e.what();
  }
  std::string typo = kBase;
  typo.insert(typo.find("[host]"), "[scenario.expect.base]\n\"hypercals.HvCallSendSyntheticClusterIpi\" = 50\n");
  const std::string msg = input_error([&] { run_text(typo); });
  EXPECT_NE(msg.find("variant 'base' reports no metric or counter 'hypercals.HvCallSendSyntheticClusterIpi'"), std::string::npos)
      << msg;
}

// For a registered workload the expectation's name is checked when the file is read: a counter of
// the catalog or one of the workload's metrics, else exit 2 naming it with the close names.
TEST_F(ScenarioTest, Expect_MisspeltCounter_RefusedWhenRead_WithSuggestion) {
  const std::string head = "[scenario]\nworkload = \"ipi_hw\"\n[scenario.expect.base]\n";
  const std::string msg = input_error([&] { parse(head + "sgir_writs = 4\n"); });
  EXPECT_NE(msg.find("s.toml:4:1: scenario.expect.base.sgir_writs: 'sgir_writs' is neither a counter nor a metric of "
                     "workload 'ipi_hw'; did you mean 'sgir_writes' or 'sgi1r_writes'? (its metrics: ipi_round_trip, send_cost, "
                     "delivery_latency; counters: 'ipilab list --counters')"),
            std::string::npos)
      << msg;
  EXPECT_NE(input_error([&] { parse(head + "ipi_round_trp = 4\n"); }).find("did you mean 'ipi_round_trip'?"), std::string::npos);
  const Scenario ok = parse(head + "sgir_writes = 4\nipi_round_trip = { value = 800, stat = \"p50\" }\n"
                                   "\"hypercalls.KVM_HC_SEND_IPI\" = 0\n");
  ASSERT_EQ(ok.expect.size(), 3u);
  EXPECT_EQ(ok.expect[2].key, "sgir_writes");  // in key order
}

TEST_F(ScenarioTest, Check_ExpectationOnUnreportedMetric_IsBadInput) {
  std::string text = kBase;
  text.insert(text.find("[host]"), "[scenario.expect.base]\nlatnecy = 1\n");
  const std::string msg = input_error([&] { run_text(text); });
  EXPECT_NE(msg.find("scenario.expect.base.latnecy: variant 'base' reports no metric or counter 'latnecy'"), std::string::npos)
      << msg;
}

// ---------------------------------------------------------------------------------------------
// Built-in scenarios, default list, plot

TEST_F(ScenarioTest, Catalog_BuiltinNameAndDefaultList_FromDataDir) {
  const char* old = std::getenv("IPILAB_DATA_DIR");
  const std::string saved = old ? old : "";
  fs::create_directories(dir_ / "scenarios");
  // profile.toml is not beside the scenario: it is found under the data folder.
  std::ofstream(dir_ / "scenarios" / "alpha.toml") << kBase;
  std::ofstream(dir_ / "scenarios" / "default.list") << "# the default\nalpha\n";
  ::setenv("IPILAB_DATA_DIR", dir_.c_str(), 1);
  EXPECT_EQ(resolve_scenario("alpha"), (dir_ / "scenarios" / "alpha.toml").string());
  EXPECT_EQ(default_scenarios(), std::vector<std::string>{"alpha"});
  const auto list = list_builtin();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].title, "test scenario");
  EXPECT_TRUE(list[0].in_default);
  EXPECT_EQ(list[0].error, "");
  // A bare `ipilab run` runs the default list; the profile is found under the data folder and
  // shown relative to it.
  const auto o = command({});
  EXPECT_NE(o.out.find("== t: test scenario =="), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("costs: 1 used from profile.toml,"), std::string::npos) << o.out;
  const std::string msg = input_error([&] { resolve_scenario("beta"); });
  EXPECT_NE(msg.find("beta: no such scenario file, and no built-in scenario of that name (built-in: alpha)"), std::string::npos)
      << msg;
  if (old) ::setenv("IPILAB_DATA_DIR", saved.c_str(), 1);
  else ::unsetenv("IPILAB_DATA_DIR");
}

TEST_F(ScenarioTest, Plot_PathsSuffixedWithScenarioNameWhenSeveral) {
  std::vector<ScenarioResult> rs(2);
  rs[0].name = "a";
  rs[1].name = "b/c d";
  const auto p = plot_paths(rs, "out/x.svg");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], fs::path("out/x-a.svg"));
  EXPECT_EQ(p[1], fs::path("out/x-b_c_d.svg"));
  EXPECT_EQ(plot_paths({rs[0]}, "x.png"), std::vector<fs::path>{"x.png"});
}

TEST_F(ScenarioTest, Plot_ScriptHasOneCurvePerVariant_InMetricUnit) {
  const ScenarioResult r = run_text(std::string(kBase) + kTwoVariants);
  const PlotScript ps = plot_script(r, "/tmp/d.txt", "/tmp/o.svg", false);
  EXPECT_NE(ps.script.find("set terminal svg"), std::string::npos);
  EXPECT_NE(ps.script.find("index 0 using 1:2 with lines lw 2 lc rgb '#1f77b4' dt 1 title 'fast'"), std::string::npos) << ps.script;
  EXPECT_NE(ps.script.find("index 1 using 1:2 with lines lw 2 lc rgb '#d62728' dt 2 title 'slow'"), std::string::npos) << ps.script;
  EXPECT_NE(ps.script.find("set xlabel \"latency (ns)\\naxis cut at the largest p99.9, 660.0 ns\""), std::string::npos) << ps.script;
  // Every point of the "fast" curve sits at 600 ns (exact samples), the q column runs 0..100.
  EXPECT_NE(ps.data.find("# fast\n600 0\n600 0.5\n"), std::string::npos) << ps.data.substr(0, 80);
  EXPECT_NE(ps.data.find("660 100\n"), std::string::npos);
}

TEST_F(ScenarioTest, Plot_VariantWithoutSamples_LeftOutOfTheCurves_NamedInTitleAndLegend) {
  const ScenarioResult r = run_text(std::string(kBase) + kTwoVariants +
                                    "[[variant]]\nname = \"all-lost\"\nworkload.drop = true\nworkload.lost = 50\n");
  const PlotScript ps = plot_script(r, "/tmp/d.txt", "/tmp/o.png", true);
  EXPECT_EQ(ps.drawn, (std::vector<std::string>{"fast", "slow"}));
  EXPECT_EQ(ps.no_samples, std::vector<std::string>{"all-lost"});
  // No data block, no curve: two curve blocks and two mean dots, nothing at 0.
  EXPECT_EQ(ps.data.find("# all-lost"), std::string::npos) << ps.data.substr(0, 200);
  EXPECT_EQ(ps.data.find("\n0 "), std::string::npos);
  EXPECT_EQ(ps.script.find("title 'all-lost'"), std::string::npos) << ps.script;
  EXPECT_NE(ps.script.find("; not drawn (no samples): all-lost\""), std::string::npos) << ps.script;
  EXPECT_NE(ps.script.find("keyentry with lines lc rgb 'white' title 'all-lost: no samples, not drawn'"), std::string::npos) << ps.script;
  EXPECT_NE(ps.script.find("set xrange [597.6:662.4]"), std::string::npos) << ps.script;  // 600..660 ns, padded 4 %
  // The mean dots: 600 and 660 ns, on vertical curves (one value each): in the middle of the jump.
  EXPECT_NE(ps.data.find("# mean of fast\n600 50\n"), std::string::npos) << ps.data;
  EXPECT_NE(ps.data.find("# mean of slow\n660 50\n"), std::string::npos) << ps.data;
  // Nothing to draw at all: a plot that says so, no curve.
  const ScenarioResult none = run_text(std::string(kBase) + "drop = true\n");
  const PlotScript pn = plot_script(none, "/tmp/d.txt", "/tmp/o.png", true);
  EXPECT_TRUE(pn.drawn.empty());
  EXPECT_EQ(pn.data, "");
  EXPECT_NE(pn.script.find("no variant has a sample of latency: nothing to draw"), std::string::npos) << pn.script;
}

TEST_F(ScenarioTest, Plot_PublishedFiguresMarked_OthersNamedUnderTheAxis) {
  std::string text = kBase;
  text.insert(text.find("[host]"), kExpect);  // fast: latency 600, sends 50; slow: latency 640 ±5 %
  const ScenarioResult r = run_text(text + kTwoVariants);
  const PlotScript ps = plot_script(r, "/tmp/d.txt", "/tmp/o.svg", false);
  // A mean: a vertical line over the whole height, its tolerance band behind the curves.
  EXPECT_NE(ps.data.find("# published mean\n600 0\n600 100\n"), std::string::npos) << ps.data;
  EXPECT_NE(ps.data.find("# published mean\n640 0\n640 100\n"), std::string::npos) << ps.data;
  EXPECT_NE(ps.script.find("title 'published mean 600 ns ±2%: fast'"), std::string::npos) << ps.script;
  EXPECT_NE(ps.script.find("title 'published mean 640 ns ±5%: slow'"), std::string::npos) << ps.script;
  EXPECT_NE(ps.script.find("set object 2 rect from 608, graph 0 to 672, graph 1 fc rgb '#d62728'"), std::string::npos) << ps.script;
  // The range reaches the bands (600 ±2 %: 588..612 ns; 640 ±5 %: 608..672 ns) beyond the curves
  // (600..660), padded 4 %.
  EXPECT_NE(ps.script.find("set xrange [584.64:675.36]"), std::string::npos) << ps.script;
  // A counter expectation cannot sit on this axis: named under it.
  EXPECT_NE(ps.script.find("expected values of sends: checked in the table, not on this axis"), std::string::npos) << ps.script;
  // A percentile: a point at its height with the tolerance as an error bar.
  std::string p99 = kBase;
  p99.insert(p99.find("[host]"), "[scenario.expect.base]\nlatency = { value = 610, stat = \"p99\", tolerance = 0.1 }\n");
  const PlotScript pp = plot_script(run_text(p99), "/tmp/d.txt", "/tmp/o.svg", false);
  EXPECT_NE(pp.data.find("# published p99\n610 99 549 671\n"), std::string::npos) << pp.data;
  EXPECT_NE(pp.script.find("using 1:2:3:4 with xerrorbars"), std::string::npos) << pp.script;
}

TEST_F(ScenarioTest, Plot_AxisInMicrosecondsAbove10000ns_LogarithmicOverAWideRange) {
  EXPECT_EQ(axis_unit("ns", 9999).unit, "ns");
  EXPECT_EQ(axis_unit("ns", 10001).unit, "us");
  EXPECT_DOUBLE_EQ(axis_unit("ns", 10001).divisor, 1000);
  EXPECT_EQ(axis_unit("ns", 2e7).unit, "ms");
  EXPECT_EQ(axis_unit("us", 20000).unit, "ms");
  EXPECT_EQ(axis_unit("ps", 5e6).unit, "ns");
  EXPECT_EQ(axis_unit("cycles", 1e6).unit, "cycles");  // a count of cycles keeps its unit
  EXPECT_DOUBLE_EQ(axis_unit("cycles", 1e6).divisor, 1);
  // 20,500 ns and 20,560 ns: the axis in us, the data too.
  std::string big = kBase;
  big.replace(big.find("base_ns = 100"), 13, "base_ns = 20000");
  std::string variants = kTwoVariants;
  variants.replace(variants.find("workload.base_ns = 160"), 22, "workload.base_ns = 20060");
  const PlotScript ps = plot_script(run_text(big + variants), "/tmp/d.txt", "/tmp/o.svg", false);
  EXPECT_EQ(ps.axis.unit, "us");
  EXPECT_FALSE(ps.log_x);
  EXPECT_NE(ps.script.find("set xlabel \"latency (us)\\naxis cut at the largest p99.9, 20.56 us\""), std::string::npos) << ps.script;
  EXPECT_NE(ps.data.find("# fast\n20.5 0\n"), std::string::npos) << ps.data.substr(0, 60);
  // 600 ns next to 60,600 ns: a factor of 100, a logarithmic axis with 1-2-5 ticks.
  std::string wide = std::string(kBase) + kTwoVariants;
  wide.replace(wide.find("workload.base_ns = 160"), 22, "workload.base_ns = 60100");
  const PlotScript pw = plot_script(run_text(wide), "/tmp/d.txt", "/tmp/o.svg", false);
  EXPECT_TRUE(pw.log_x);
  EXPECT_EQ(pw.axis.unit, "us");
  EXPECT_NE(pw.script.find("set logscale x 10\n"), std::string::npos) << pw.script;
  EXPECT_NE(pw.script.find("set xtics (1, 2, 5, 10, 20, 50)\n"), std::string::npos) << pw.script;
}

TEST_F(ScenarioTest, Plot_WritesSvgAndPng_WhenGnuplotIsInstalled) {
  try {
    require_gnuplot();
  } catch (const UnavailableError&) {
    GTEST_SKIP() << "gnuplot not installed";
  }
  const std::string path = write("s.toml", std::string(kBase) + "jitter = true\n" + kTwoVariants);
  command({.scenarios = {path}, .plot = file("p.svg")});
  ASSERT_TRUE(fs::exists(file("p.svg")));
  EXPECT_NE(read_text_file(file("p.svg")).find("<svg"), std::string::npos);
  command({.scenarios = {path}, .plot = file("p.png")});
  ASSERT_TRUE(fs::exists(file("p.png")));
  EXPECT_EQ(read_text_file(file("p.png")).substr(1, 3), "PNG");
  // gnuplot takes the published marks, the left-out variants and a plot with nothing to draw.
  std::string marked = kBase;
  marked.insert(marked.find("[host]"), kExpect);
  const std::string mp = write("m.toml", marked + kTwoVariants + "[[variant]]\nname = \"all-lost\"\nworkload.drop = true\n");
  command({.scenarios = {mp}, .plot = file("m.png")});
  EXPECT_EQ(read_text_file(file("m.png")).substr(1, 3), "PNG");
  const std::string np = write("n.toml", std::string(kBase) + "drop = true\n");
  command({.scenarios = {np}, .plot = file("n.svg")});
  EXPECT_NE(read_text_file(file("n.svg")).find("nothing to draw"), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << "temporary left: " << e.path();
}

TEST_F(ScenarioTest, Plot_WithoutGnuplot_IsUnavailable_BeforeRunning) {
  const std::string path = write("s.toml", kBase);
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", dir_.c_str(), 1);  // a folder without gnuplot
  try {
    command({.scenarios = {path}, .json = file("x.json"), .plot = file("x.svg")});
    ADD_FAILURE() << "no UnavailableError";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get install gnuplot-nox"), std::string::npos) << e.what();
  }
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_FALSE(fs::exists(file("x.json")));
}

TEST_F(ScenarioTest, BadInput_ZeroIterations) {
  const std::string path = write("s.toml", kBase);
  const std::string msg = input_error([&] { command({.scenarios = {path}, .iterations = 0}); });
  EXPECT_NE(msg.find("--iterations: must be at least 1"), std::string::npos) << msg;
}

TEST(ScenarioFormat, NumbersInTable) {
  EXPECT_EQ(format_number(8043.2), "8043");
  EXPECT_EQ(format_number(850.44), "850.4");
  EXPECT_EQ(format_number(12.345), "12.35");
  EXPECT_EQ(format_number(0.01234), "0.0123");
  EXPECT_EQ(format_number(0), "0");
  EXPECT_DOUBLE_EQ(change_pct(7761, 8043), (7761.0 - 8043.0) / 8043.0 * 100);
  EXPECT_DOUBLE_EQ(change_pct(5, 0), 0.0);
}

TEST(ScenarioMerge, DeepMerge_MovesNodesWithSources) {
  auto base = toml::parse(std::string_view("a = 1\n[t]\nx = 1\ny = 2\n"), std::string_view("b.toml"));
  auto over = toml::parse(std::string_view("\n\n[t]\ny = \"s\"\nz = [1]\n"), std::string_view("o.toml"));
  deep_merge(base, std::move(over));
  EXPECT_EQ(base["t"]["x"].value<int64_t>(), 1);
  EXPECT_EQ(base["t"]["y"].value<std::string>(), "s");
  EXPECT_EQ(base["t"]["y"].node()->source().begin.line, 4u);
  EXPECT_EQ(*base["t"]["y"].node()->source().path, "o.toml");
  EXPECT_TRUE(base["t"]["z"].is_array());
  EXPECT_EQ(base["a"].value<int64_t>(), 1);
}

}  // namespace
}  // namespace ipilab::scenario
