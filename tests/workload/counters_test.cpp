// The counter catalog: each name once, the hypercall family closed over known call names, and the
// core refusing a counter that is not in it.
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "workload/counters.h"
#include "workload/plan.h"
#include "workload/workload.h"

namespace ipilab::workload {
namespace {

TEST(Counters, Catalog_EachNameOnce_WithUnitDescriptionAndCounter) {
  std::set<std::string_view> seen;
  for (const auto& c : counter_catalog()) {
    EXPECT_TRUE(seen.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.unit.empty()) << c.name;
    EXPECT_FALSE(c.description.empty()) << c.name;
    EXPECT_FALSE(c.used_by.empty()) << c.name;
  }
  EXPECT_EQ(find_counter("vm_exits"), find_counter(counters::vm_exits));
  ASSERT_NE(find_counter("lost"), nullptr);
  EXPECT_EQ(find_counter("lost")->name, "lost");
}

TEST(Counters, PerCallFamily_KnownCallNamesOnly) {
  const CounterInfo* ex = find_counter("hypercalls.HvCallSendSyntheticClusterIpiEx");
  ASSERT_NE(ex, nullptr);
  EXPECT_EQ(ex->name, "hypercalls.<call>");
  EXPECT_NE(find_counter(per_call_counter("KVM_HC_SEND_IPI")), nullptr);
  EXPECT_EQ(find_counter("hypercalls.HvCallSendSyntheticClusterIpiExx"), nullptr);
  EXPECT_EQ(find_counter("hypercalls."), nullptr);
  EXPECT_EQ(find_counter("hypercalls.<call>"), nullptr);  // the family's label is not a counter
  EXPECT_EQ(find_counter("misdelivred"), nullptr);
  const auto names = counter_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "hypercalls.HvCallSendSyntheticClusterIpi"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "hypercalls.<call>"), names.end());
}

TEST(Counters, Interning_RefusesAnUncataloguedName) {
  Counters c;
  const CounterId a = c.id(counters::sends);
  EXPECT_EQ(c.id("sends"), a);
  const CounterId b = c.id(per_call_counter("HvCallSendSyntheticClusterIpi"));
  EXPECT_NE(a, b);
  c.add(b, 3);
  EXPECT_EQ(c.value("hypercalls.HvCallSendSyntheticClusterIpi"), 3u);
  EXPECT_THROW(c.id("sendz"), std::logic_error);
}

TEST(Counters, EveryWorkloadDeclaresItsMetrics_NoneShadowsACounter) {
  for (const WorkloadInfo* w : list_workloads()) {
    EXPECT_FALSE(w->metrics.empty()) << w->name;
    for (const auto& m : w->metrics) EXPECT_EQ(find_counter(m), nullptr) << w->name << ": " << m;
  }
}

}  // namespace
}  // namespace ipilab::workload
