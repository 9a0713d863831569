#include "common/suggest.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace ipilab {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kScenarios = {"example-multicast", "predict-its-4socket", "pv-ipi-broadcast",
                                             "seed000-send-ipi-one", "seed000-vp-index", "seed003-ipi-hw"};

TEST(EditDistance, CountsInsertDeleteSubstituteAndNeighbourSwapAsOne) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("kick", ""), 4u);
  EXPECT_EQ(edit_distance("", "kick"), 4u);
  EXPECT_EQ(edit_distance("mainline", "mainline"), 0u);
  EXPECT_EQ(edit_distance("mainlin", "mainline"), 1u);     // insertion
  EXPECT_EQ(edit_distance("mainlinee", "mainline"), 1u);   // deletion
  EXPECT_EQ(edit_distance("ipi_hw", "ipi-hw"), 1u);        // substitution
  EXPECT_EQ(edit_distance("mainlnie", "mainline"), 1u);    // swap of neighbours
  EXPECT_EQ(edit_distance("MainLine", "mainline"), 0u);    // case is ignored
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);               // optimal string alignment: no edit of a swapped pair
}

TEST(Suggestions, CloseSpellingsAndContainedNamesClosestFirst) {
  EXPECT_EQ(suggestions("seed003-ipihw", kScenarios), std::vector<std::string>{"seed003-ipi-hw"});
  EXPECT_EQ(suggestions("ipi-hw", kScenarios), std::vector<std::string>{"seed003-ipi-hw"});  // contained
  EXPECT_EQ(suggestions("seed00-vp-index", kScenarios), std::vector<std::string>{"seed000-vp-index"});
  // A close spelling (distance 1) before a name that merely contains what was typed.
  const std::vector<std::string> c = {"kick-all", "kicks", "multicast"};
  EXPECT_EQ(suggestions("kick", c), (std::vector<std::string>{"kicks", "kick-all"}));
  // Both seed000 scenarios contain "seed000"; ties are sorted by name.
  EXPECT_EQ(suggestions("seed000", kScenarios), (std::vector<std::string>{"seed000-send-ipi-one", "seed000-vp-index"}));
  // The typed name may contain the candidate ("multicast-15" -> "multicast").
  EXPECT_EQ(suggestions("multicast-15", c), std::vector<std::string>{"multicast"});
}

TEST(Suggestions, ExactMatchIgnoringCaseIsTheOnlyOne) {
  const std::vector<std::string> c = {"Mainline", "mainline-v2"};
  EXPECT_EQ(suggestions("MAINLINE", c), std::vector<std::string>{"Mainline"});
}

TEST(Suggestions, NothingForFarNamesShortContainsOrEmptyLists) {
  EXPECT_TRUE(suggestions("beta", std::vector<std::string>{"alpha"}).empty());
  EXPECT_TRUE(suggestions("totally-unrelated", kScenarios).empty());
  EXPECT_TRUE(suggestions("ip", std::vector<std::string>{"ipi_hw"}).empty());  // too short to count as contained
  EXPECT_TRUE(suggestions("x", std::vector<std::string>{}).empty());
  // Distance 2 on a 6-letter name is beyond its threshold (1).
  EXPECT_TRUE(suggestions("kvmpx", std::vector<std::string>{"kvm-pv"}).empty());
  EXPECT_EQ(suggestions("kvmpv", std::vector<std::string>{"kvm-pv"}), std::vector<std::string>{"kvm-pv"});
}

TEST(Suggestions, AtMostThree) {
  const std::vector<std::string> c = {"vara", "varb", "varc", "vard"};
  EXPECT_EQ(suggestions("varx", c), (std::vector<std::string>{"vara", "varb", "varc"}));
}

TEST(DidYouMean, TextForOneTwoThreeAndNone) {
  EXPECT_EQ(did_you_mean("ipi-hw", kScenarios), "; did you mean 'seed003-ipi-hw'?");
  EXPECT_EQ(did_you_mean("seed000", kScenarios), "; did you mean 'seed000-send-ipi-one' or 'seed000-vp-index'?");
  const std::vector<std::string> c = {"vara", "varb", "varc"};
  EXPECT_EQ(did_you_mean("varx", c), "; did you mean 'vara', 'varb' or 'varc'?");
  EXPECT_EQ(did_you_mean("beta", std::vector<std::string>{"alpha"}), "");
}

TEST(DidYouMean, FileNamesInTheSameFolderOfEachRootWithTheSameExtension) {
  const std::string pid = std::to_string(::getpid());
  const fs::path a = fs::path(::testing::TempDir()) / ("ipilab-suggest-a-" + pid);
  const fs::path b = fs::path(::testing::TempDir()) / ("ipilab-suggest-b-" + pid);
  fs::remove_all(a);
  fs::remove_all(b);
  fs::create_directories(a / "profiles");
  fs::create_directories(b / "profiles");
  std::ofstream(a / "profiles" / "kvm-skylake-pv-ipi.toml") << "";
  std::ofstream(a / "profiles" / "kvm-skylake-pv-ipi.md") << "";     // other extension: not offered
  std::ofstream(b / "profiles" / "kvm-skylake-pv-ipi.toml") << "";   // same name in both: offered once
  std::ofstream(b / "profiles" / "hyperv-ws2019.toml") << "";
  const std::vector<fs::path> roots = {a, b, a / "missing"};
  EXPECT_EQ(did_you_mean_file("profiles/kvm-skylake.toml", roots), "; did you mean 'profiles/kvm-skylake-pv-ipi.toml'?");
  EXPECT_EQ(did_you_mean_file("profiles/hyperv-ws2016.toml", roots), "; did you mean 'profiles/hyperv-ws2019.toml'?");
  EXPECT_EQ(did_you_mean_file("profiles/zzz.toml", roots), "");
  EXPECT_EQ(did_you_mean_file("nowhere/kvm-skylake.toml", roots), "");
  fs::remove_all(a);
  fs::remove_all(b);
}

}  // namespace
}  // namespace ipilab
