// The mechanism registry (mechanism.h): the six shipped mechanisms, their declarations, parameter
// ownership, and the catalog: every cost key has a reader that declares it.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/error.h"
#include "cost/catalog.h"
#include "run_helpers.h"
#include "workload/mechanism.h"
#include "workload/plan.h"
#include "workload/vm_run.h"
#include "workload/workload.h"

namespace ipilab::workload {
namespace {

TEST(StepPath, KeepsEveryStepInOrderInlineAndBeyond) {
  // A delivery's path: up to kInline steps in place, more on the heap, same order either way.
  StepPath path;
  EXPECT_TRUE(path.empty());
  for (std::uint32_t i = 0; i < StepPath::kInline + 3; ++i) {
    PlanStep s;
    s.id = 100 + i;
    s.count = i + 1;
    s.lane = i % 2 ? Lane::Wire : Lane::ItsPort;
    path.push_back(s);
    ASSERT_EQ(path.size(), i + 1);
    for (std::uint32_t k = 0; k <= i; ++k) {
      EXPECT_EQ(path[k].id, 100 + k);
      EXPECT_EQ(path[k].count, k + 1);
    }
  }
  std::uint32_t k = 0;
  for (const PlanStep& s : path) EXPECT_EQ(s.id, 100 + k++);
  EXPECT_EQ(k, StepPath::kInline + 3);
  const StepPath copy = path;  // copies keep their own steps
  EXPECT_EQ(copy.size(), path.size());
  EXPECT_EQ(copy[StepPath::kInline + 2].id, path[StepPath::kInline + 2].id);
  sim::Rng rng(1);
  EXPECT_EQ(PlanStep{}.sample(rng), sim::Ps{});  // no distribution: 0 ps
  EXPECT_EQ(PlanStep{}.mean(), sim::Ps{});
}

TEST(Mechanisms, AllAreRegisteredByNameWithDeclaredKeysAndParams) {
  std::vector<std::string> names;
  for (const auto* m : list_mechanisms()) {
    names.emplace_back(m->name);
    EXPECT_FALSE(m->description.empty()) << m->name;
    EXPECT_FALSE(m->cost_keys.empty()) << m->name;
    for (const auto& k : m->cost_keys) EXPECT_NE(cost::find_cost_key(k.name), nullptr) << m->name << ": " << k.name;
    std::set<std::string> seen;
    for (const auto& p : m->params) EXPECT_TRUE(seen.insert(p.name).second) << m->name << ": " << p.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"avic", "gicv3-emulated-sgi", "gicv4.1-vsgi", "hyperv", "ipiv", "kvm-pv",
                                             "native-gicv3", "native-x86", "x2apic-cluster", "x2apic-physical", "x2avic",
                                             "xapic"}));
  EXPECT_EQ(find_mechanism("gicv4.1-vsgi", "t").arch, Arch::Arm);
  EXPECT_EQ(find_mechanism("hyperv", "t").arch, Arch::X86);
  try {
    find_mechanism("x2apic-flat", "test.toml:3:1: workload.mechanism");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown mechanism \"x2apic-flat\""), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("gicv3-emulated-sgi"), std::string::npos);
  }
}

TEST(Mechanisms, AKeyOfAnotherMechanismIsAnErrorNamingIt) {
  const Params p(toml_read::parse("mechanism = \"x2apic-physical\"\nfind_4_1_its = \"pre-seed\"\n", "s.toml"), "s.toml");
  try {
    chosen_mechanism(p, "hyperv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.toml:2:16: workload.find_4_1_its"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("only meaningful with mechanism = \"gicv4.1-vsgi\""), std::string::npos) << e.what();
  }
}

TEST(Mechanisms, VectorsPerArchitectureFollowLinux) {
  EXPECT_EQ(vector_of(Arch::X86, IpiKind::CallFunctionSingle, ""), 0xFBu);
  EXPECT_EQ(vector_of(Arch::X86, IpiKind::CallFunction, ""), 0xFCu);
  EXPECT_EQ(vector_of(Arch::X86, IpiKind::Reschedule, ""), 0xFDu);
  EXPECT_EQ(vector_of(Arch::Arm, IpiKind::Reschedule, ""), 0u);
  EXPECT_EQ(vector_of(Arch::Arm, IpiKind::CallFunction, ""), 1u);
  EXPECT_EQ(vector_of(Arch::Arm, IpiKind::CallFunctionSingle, ""), 1u);
  EXPECT_THROW(vector_of(Arch::Arm, IpiKind::Platform, "x"), InputError);
}

// Every catalog key is read by something that declares it: a mechanism, a workload, or the core.
TEST(Catalog, EveryKeyHasADeclaredReader) {
  std::set<std::string_view> declared;
  for (const auto* m : list_mechanisms())
    for (const auto& k : m->cost_keys) declared.insert(k.name);
  for (const auto* w : list_workloads())
    for (const auto& k : w->cost_keys) declared.insert(k.name);
  for (const auto& k : core_cost_keys()) declared.insert(k.name);
  for (const auto& k : cost::catalog()) {
    if (k.recorded_only) {
      EXPECT_EQ(declared.count(k.name), 0u) << k.name << " is marked recorded-only but something reads it";
      continue;
    }
    EXPECT_EQ(declared.count(k.name), 1u) << k.name << " has no reader";
  }
  for (auto name : declared) EXPECT_NE(cost::find_cost_key(name), nullptr) << name;
}

}  // namespace
}  // namespace ipilab::workload
