// Tests of cost/catalog.h and cost/profile.h: loading, units, provenance, and errors that name
// file:line:key.
#include "profile_head.h"
#include "cost/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/error.h"
#include "cost/catalog.h"

namespace ipilab::cost {
namespace {

using ::testing::HasSubstr;
using testdata::kProfileHead;

const std::string kExample = std::string(IPILAB_SOURCE_DIR) + "/profiles/example.toml";


std::string load_error(const std::string& body) {
  try {
    Profile::parse(std::string(kProfileHead) + body, "p.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST(Catalog, KeysAreUniqueNamespacedAndDescribed) {
  std::set<std::string_view> seen;
  for (const CostKeyInfo& k : catalog()) {
    EXPECT_TRUE(seen.insert(k.name).second) << k.name;
    EXPECT_NE(k.name.find('.'), std::string_view::npos) << k.name;
    EXPECT_FALSE(k.description.empty()) << k.name;
    EXPECT_FALSE(k.used_by.empty()) << k.name;
  }
  // The primitive costs the seed models are built from are all declared.
  for (const char* key : {"hv.hypercall_entry_exit", "hv.slow_input_copy_per_8b", "hv.vpset_bank_decode",
                          "x2apic.icr_write_exit", "apic.interrupt_injection", "guest.irq_entry", "guest.cpumask_word",
                          "its.sgir_write", "its.rd_hop", "mem.cacheline_same_node", "vcpu.halt_wakeup",
                          "kvm.pv_send_ipi_per_dest"})
    EXPECT_NE(find_cost_key(key), nullptr) << key;
  EXPECT_EQ(find_cost_key("hv.nope"), nullptr);
}

TEST(Profile, ExampleLoads_ValuesConvertedToPs) {
  const Profile p = Profile::load_file(kExample);
  EXPECT_EQ(p.name(), "example");
  EXPECT_DOUBLE_EQ(p.clock_ghz(), 2.0);
  EXPECT_EQ(p.host(), "kunpeng920-2s");
  const Cost& exit = p.get("vm.exit_entry");
  EXPECT_EQ(exit.mean, sim::Ps{500'000});  // 1000 cycles at 2 GHz
  EXPECT_DOUBLE_EQ(exit.spread, 0.05);
  EXPECT_EQ(exit.unit, Unit::Cycles);
  EXPECT_EQ(p.get("guest.irq_entry").mean, sim::Ps{120'000});  // inline-table form
  EXPECT_EQ(p.get("mem.cacheline_same_node").mean, sim::Ps{150'000});  // 0.15 us
  EXPECT_THAT(p.get("its.rd_hop").note, HasSubstr("850"));
  EXPECT_DOUBLE_EQ(p.to_cycles(sim::Ps{500'000}), 1000.0);
  EXPECT_EQ(p.keys().size(), 6u);
}

TEST(Profile, Provenance_ListsExactlyTheUsedCostsItHas) {
  const Profile p = Profile::load_file(kExample);
  p.get("its.rd_hop");  // reading marks nothing: the run's pricer keeps what it used
  EXPECT_TRUE(p.provenance({}).empty());
  const UsedCosts used{"vm.exit_entry", "its.rd_hop", "guest.not_in_this_profile"};
  const auto prov = p.provenance(used);
  ASSERT_EQ(prov.size(), 2u);
  EXPECT_EQ(prov[0].key, "its.rd_hop");
  EXPECT_EQ(prov[0].unit, "ns");
  EXPECT_EQ(prov[0].ps, 250'000);
  EXPECT_EQ(prov[1].key, "vm.exit_entry");
  EXPECT_EQ(prov[1].value, 1000.0);
  EXPECT_EQ(prov[1].unit, "cycles");
  const auto j = p.provenance_json(used);
  EXPECT_EQ(j["profile"], "example");
  EXPECT_EQ(j["costs"].size(), 2u);
  EXPECT_THAT(j["costs"][0]["source"].get<std::string>(), HasSubstr("seed 003"));
}

TEST(Profile, Require_NamesProfileFileAndEveryMissingCost) {
  const Profile p = Profile::load_file(kExample);
  EXPECT_NO_THROW(p.require({"vm.exit_entry", "guest.eoi"}));
  try {
    p.require({"vm.exit_entry", "hv.hypercall_entry_exit", "guest.cpumask_word"}, "smp_call_function_single");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.place(), HasSubstr("profiles/example.toml"));
    EXPECT_THAT(e.reason(), HasSubstr("lacks 2 cost(s) needed by smp_call_function_single"));
    EXPECT_THAT(e.reason(), HasSubstr("cost.hv.hypercall_entry_exit"));
    EXPECT_THAT(e.reason(), HasSubstr("cost.guest.cpumask_word"));
  }
  try {
    p.get("hv.vpset_bank_decode");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("example.toml: cost.hv.vpset_bank_decode: profile 'example' has no value"));
  }
}

TEST(Profile, Set_OverridesAndValidates) {
  Profile p = Profile::load_file(kExample);
  p.set("hv.vpset_bank_decode", 30, Unit::Cycles, 0.0, "variant override", "scenario.toml:12");
  EXPECT_EQ(p.get("hv.vpset_bank_decode").mean, sim::Ps{15'000});
  EXPECT_THROW(p.set("hv.bogus", 1, Unit::Ns, 0, "x"), InputError);
  EXPECT_THROW(p.set("hv.vpset_bank_decode", -1, Unit::Ns, 0, "x"), InputError);
  EXPECT_THROW(p.set("hv.vpset_bank_decode", 1, Unit::Ns, 0, ""), InputError);
}

TEST(ProfileErrors, UnknownCostKey_NamesFileLineAndKey) {
  EXPECT_THAT(load_error("[cost.hv.hypercal_entry_exit]\nvalue = 1\nunit = \"ns\"\nsource = \"s\"\n"),
              HasSubstr("p.toml:5:10: cost.hv.hypercal_entry_exit: unknown cost key"));
  EXPECT_THAT(load_error("[cost.nosuchlayer]\nx = 1\n"), HasSubstr("p.toml:5:7: cost.nosuchlayer: unknown cost key"));
}

TEST(ProfileErrors, UnknownField_WrongType_MissingSource_UnitMismatch_Negative) {
  EXPECT_THAT(load_error("[cost.guest.eoi]\nvalue = 1\nunit = \"ns\"\nsource = \"s\"\nvaleu = 2\n"),
              HasSubstr("p.toml:9:1: cost.guest.eoi.valeu: unknown key"));
  EXPECT_THAT(load_error("[cost.guest.eoi]\nvalue = \"12\"\nunit = \"ns\"\nsource = \"s\"\n"),
              HasSubstr("p.toml:6:9: cost.guest.eoi.value: expected a number, got string"));
  EXPECT_THAT(load_error("[cost.guest.eoi]\nvalue = 12\nunit = \"ns\"\n"),
              HasSubstr("p.toml:5:1: cost.guest.eoi.source: missing"));
  EXPECT_THAT(load_error("[cost.guest.eoi]\nvalue = 12\nunit = \"bytes\"\nsource = \"s\"\n"),
              HasSubstr("p.toml:7:1: cost.guest.eoi.unit: unit mismatch: guest.eoi is a duration, so unit must be cycles, ns, ps or us; got 'bytes'"));
  EXPECT_THAT(load_error("[cost.guest.eoi]\nvalue = -3\nunit = \"ns\"\nsource = \"s\"\n"),
              HasSubstr("p.toml:6:1: cost.guest.eoi.value: must be >= 0, got -3"));
  // TOML's nan and inf literals are numbers to toml++, never a cost.
  EXPECT_THAT(load_error("[cost.guest.eoi]\nvalue = nan\nunit = \"ns\"\nsource = \"s\"\n"),
              HasSubstr("p.toml:6:9: cost.guest.eoi.value: not a finite number: nan"));
  EXPECT_THAT(load_error("[cost.guest.eoi]\nvalue = 3\nunit = \"ns\"\nspread = inf\nsource = \"s\"\n"),
              HasSubstr("cost.guest.eoi.spread: not a finite number: inf"));
  EXPECT_THAT(load_error("[cost.guest.eoi]\nvalue = 3\nunit = \"ns\"\nspread = -0.1\nsource = \"s\"\n"),
              HasSubstr("cost.guest.eoi.spread: relative standard deviation must be >= 0"));
  EXPECT_THAT(load_error("[cost.guest]\neoi = 3\n"), HasSubstr("p.toml:6:1: cost.guest.eoi: expected a table"));
}

TEST(ProfileErrors, MissingFile_MissingProfileTable_BadClock) {
  try {
    Profile::load_file("/nonexistent/profile.toml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/profile.toml: no such file"));
  }
  try {
    Profile::parse("[cost.guest.eoi]\nvalue = 1\nunit = \"ns\"\nsource = \"s\"\n", "q.toml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("q.toml"));
    EXPECT_THAT(e.what(), HasSubstr("profile: missing"));
  }
  try {
    Profile::parse("[profile]\nname = \"x\"\nclock_ghz = 0\nclock_source = \"s\"\n", "c.toml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("c.toml:3:1: profile.clock_ghz: must be a clock in GHz"));
  }
  try {
    Profile::parse("[profile]\nname = \"x\"\nclock_ghz = 2\nclock_source = \"s\"\n[extra]\n", "e.toml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("e.toml:5:2: extra: unknown key"));
  }
}

}  // namespace
}  // namespace ipilab::cost
