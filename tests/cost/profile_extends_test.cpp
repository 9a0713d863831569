// Tests of layered profiles (cost/profile.h, [profile] extends): a shipped name and relative paths,
// what is inherited and what is replaced, clocks per layer, provenance per entry, and the errors
// (missing base, cycles, depth) with file:line:col: key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "common/error.h"
#include "cost/profile.h"

namespace ipilab::cost {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A temporary folder of profile files, removed afterwards.
class Dir {
 public:
  Dir() {
    std::string tmpl = (fs::temp_directory_path() / "ipilab-extends-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  Dir(const Dir&) = delete;
  Dir& operator=(const Dir&) = delete;
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  fs::path path_;
};

std::string extends_error_of(const std::string& file) {
  try {
    Profile::load_file(file);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << file;
  return {};
}

const std::string kBase =
    "[profile]\nname = \"base\"\ndescription = \"the base\"\nhost = \"kunpeng920-2s\"\nclock_ghz = 2.0\n"
    "clock_source = \"base clock\"\n"
    "[cost.guest]\n"
    "eoi = { value = 100, unit = \"cycles\", source = \"ESTIMATE: base eoi\" }\n"           // 50 ns at 2 GHz
    "irq_entry = { value = 120, unit = \"ns\", spread = 0.1, source = \"SOURCED: base irq\" }\n"
    "callback = { value = 20, unit = \"ns\", source = \"ESTIMATE: base callback\" }\n";

TEST(ProfileExtends, RelativePath_InheritsEntriesUnlessSet_ClockPerLayer) {
  Dir d;
  d.write("base.toml", kBase);
  const std::string top = d.write("top.toml",
      "[profile]\nname = \"measured\"\nextends = \"base.toml\"\nclock_ghz = 4.0\nclock_source = \"this host\"\n"
      "[cost.guest]\n"
      "irq_entry = { value = 715, unit = \"ns\", dist = \"empirical\", bins = [[700, 730, 5]], source = \"MEASURED: here\" }\n"
      "callback = { value = 100, unit = \"cycles\", source = \"MEASURED: here\" }\n");
  const Profile p = Profile::load_file(top);
  EXPECT_EQ(p.name(), "measured");
  EXPECT_EQ(p.description(), "the base");     // inherited
  EXPECT_EQ(p.host(), "kunpeng920-2s");       // inherited
  EXPECT_DOUBLE_EQ(p.clock_ghz(), 4.0);       // set here
  EXPECT_EQ(p.clock_source(), "this host");
  ASSERT_EQ(p.layers().size(), 2u);
  EXPECT_EQ(p.layers()[0].name, "measured");
  EXPECT_EQ(p.layers()[1].name, "base");
  // Inherited, in cycles: converted with the base's clock (100 cycles at 2 GHz = 50 ns), not 4 GHz.
  EXPECT_EQ(p.get("guest.eoi").mean, sim::Ps{50'000});
  EXPECT_EQ(p.get("guest.eoi").from, d.write("base.toml", kBase));
  // Replaced whole: the empirical entry, and the callback in this file's cycles (100 at 4 GHz).
  EXPECT_EQ(p.get("guest.irq_entry").dist, sim::DistKind::Empirical);
  EXPECT_EQ(p.get("guest.irq_entry").spread, 0.0);  // nothing of the base's entry is merged in
  EXPECT_EQ(p.get("guest.callback").mean, sim::Ps{25'000});
  EXPECT_EQ(p.get("guest.callback").from, top);
  EXPECT_EQ(p.keys().size(), 3u);
}

TEST(ProfileExtends, ClockInheritedWhenNotSet_ThreeLayers_ProvenanceNamesEachFile) {
  Dir d;
  d.write("lib/base.toml", kBase);
  d.write("lib/mid.toml",
          "[profile]\nname = \"mid\"\nextends = \"base.toml\"\n"
          "[cost.guest.callback]\nvalue = 30\nunit = \"ns\"\nsource = \"FITTED: mid\"\n");
  const std::string top = d.write("top.toml",
      "[profile]\nname = \"top\"\nextends = \"lib/mid.toml\"\n"
      "[cost.guest.eoi]\nvalue = 10\nunit = \"cycles\"\nsource = \"MEASURED: top\"\n");
  const Profile p = Profile::load_file(top);
  EXPECT_DOUBLE_EQ(p.clock_ghz(), 2.0);  // from base, through mid
  EXPECT_EQ(p.clock_source(), "base clock");
  EXPECT_EQ(p.get("guest.eoi").mean, sim::Ps{5'000});      // top's cycles at the inherited 2 GHz
  EXPECT_EQ(p.get("guest.callback").mean, sim::Ps{30'000}); // mid's
  EXPECT_EQ(p.get("guest.irq_entry").mean, sim::Ps{120'000}); // base's
  const auto j = p.provenance_json({"guest.eoi", "guest.callback", "guest.irq_entry"});
  ASSERT_EQ(j["extends"].size(), 2u);
  EXPECT_EQ(j["extends"][0]["profile"], "mid");
  EXPECT_EQ(j["extends"][1]["profile"], "base");
  ASSERT_EQ(j["costs"].size(), 3u);
  EXPECT_EQ(j["costs"][0]["key"], "guest.callback");
  EXPECT_THAT(j["costs"][0]["from"].get<std::string>(), HasSubstr("lib/mid.toml"));
  EXPECT_THAT(j["costs"][1]["from"].get<std::string>(), HasSubstr("top.toml"));
  EXPECT_THAT(j["costs"][2]["from"].get<std::string>(), HasSubstr("lib/base.toml"));
  EXPECT_EQ(j["costs"][2]["class"], "sourced");
}

TEST(ProfileExtends, ShippedName_ResolvedInTheDataFolder_ShownRelativeToIt) {
  Dir d;
  const std::string top = d.write("mine.toml",
      "[profile]\nname = \"mine\"\nextends = \"kunpeng920-2s\"\n"
      "[cost.its.sgir_write]\nvalue = 90\nunit = \"ns\"\nsource = \"MEASURED: mine\"\n");
  const Profile p = Profile::load_file(top);
  const Profile shipped = Profile::load_file(std::string(IPILAB_SOURCE_DIR) + "/profiles/kunpeng920-2s.toml");
  EXPECT_DOUBLE_EQ(p.clock_ghz(), shipped.clock_ghz());
  EXPECT_EQ(p.keys(), shipped.keys());
  EXPECT_EQ(p.get("its.sgir_write").mean, sim::Ps{90'000});
  EXPECT_EQ(p.get("its.sgir_process").mean, shipped.get("its.sgir_process").mean);
  EXPECT_EQ(p.layers()[1].shown, "profiles/kunpeng920-2s.toml");
  const auto costs = p.provenance_json({"its.sgir_write", "its.sgir_process"})["costs"];  // sorted by key: its.sgir_process (shipped), its.sgir_write (mine)
  ASSERT_EQ(costs.size(), 2u);
  EXPECT_EQ(costs[0]["key"], "its.sgir_process");
  EXPECT_EQ(costs[0]["from"], "profiles/kunpeng920-2s.toml");
  EXPECT_EQ(costs[1]["key"], "its.sgir_write");
  EXPECT_EQ(costs[1]["from"], top);
}

TEST(ProfileExtends, Errors_MissingBase_Cycle_Depth_ClockHalf) {
  Dir d;
  EXPECT_THAT(extends_error_of(d.write("a.toml", "[profile]\nname = \"a\"\nextends = \"nosuch\"\n")),
              HasSubstr("a.toml:3:1: profile.extends: no shipped profile 'nosuch' (shipped: "));
  EXPECT_THAT(extends_error_of(d.write("a.toml", "[profile]\nname = \"a\"\nextends = \"nosuch\"\n")), HasSubstr("kunpeng920-2s"));
  EXPECT_THAT(extends_error_of(d.write("m.toml", "[profile]\nname = \"m\"\nextends = \"kunpeng920\"\n")),
              HasSubstr("no shipped profile 'kunpeng920'; did you mean 'kunpeng920-2s'?"));
  EXPECT_THAT(extends_error_of(d.write("b.toml", "[profile]\nname = \"b\"\nextends = \"sub/none.toml\"\n")),
              HasSubstr("b.toml:3:1: profile.extends: no such profile file '"));
  // a cycle of two, and one of one
  d.write("x.toml", "[profile]\nname = \"x\"\nextends = \"y.toml\"\n");
  const std::string y = d.write("y.toml", "[profile]\nname = \"y\"\nextends = \"x.toml\"\n");
  const std::string err = extends_error_of(y);
  EXPECT_THAT(err, HasSubstr("x.toml:3:1: profile.extends: cycle: "));
  EXPECT_THAT(err, HasSubstr("y.toml -> "));
  EXPECT_THAT(err, HasSubstr("x.toml -> "));
  EXPECT_THAT(extends_error_of(d.write("self.toml", "[profile]\nname = \"s\"\nextends = \"self.toml\"\n")),
              HasSubstr("self.toml:3:1: profile.extends: cycle: "));
  // a chain of 9 files: one too many
  d.write("l0.toml", kBase);
  for (int i = 1; i <= 8; ++i)
    d.write("l" + std::to_string(i) + ".toml",
            "[profile]\nname = \"l" + std::to_string(i) + "\"\nextends = \"l" + std::to_string(i - 1) + ".toml\"\n");
  EXPECT_NO_THROW(Profile::load_file(d.write("l7.toml", "[profile]\nname = \"l7\"\nextends = \"l6.toml\"\n")));  // 8 levels
  EXPECT_THAT(extends_error_of(d.write("l8.toml", "[profile]\nname = \"l8\"\nextends = \"l7.toml\"\n")),
              HasSubstr("l1.toml:3:1: profile.extends: more than 8 levels of extends"));
  // clock: both halves or none; none is only allowed with a base
  EXPECT_THAT(extends_error_of(d.write("c1.toml", "[profile]\nname = \"c\"\nextends = \"l0.toml\"\nclock_ghz = 3.0\n")),
              HasSubstr("c1.toml:1:1: profile.clock_source: missing"));
  EXPECT_THAT(extends_error_of(d.write("c2.toml", "[profile]\nname = \"c\"\nclock_source = \"s\"\n")),
              HasSubstr("c2.toml:3:1: profile.clock_source: needs clock_ghz beside it"));
  EXPECT_THAT(extends_error_of(d.write("c3.toml", "[profile]\nname = \"c\"\n")),
              HasSubstr("c3.toml:1:1: profile.clock_ghz: missing (a number is required; a profile that extends another may inherit it)"));
  // an error inside the base names the base's file and line
  d.write("bad.toml", kBase + "[cost.guest.irq_exit]\nvalue = 1\nunit = \"parsecs\"\nsource = \"s\"\n");
  EXPECT_THAT(extends_error_of(d.write("ok.toml", "[profile]\nname = \"ok\"\nextends = \"bad.toml\"\n")),
              HasSubstr("bad.toml:13:1: cost.guest.irq_exit.unit: unit mismatch"));
}

}  // namespace
}  // namespace ipilab::cost
