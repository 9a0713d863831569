// The run's pricer keeps which costs the run priced with (its provenance); the profile is only read.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "cost/profile.h"
#include "workload/plan.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
const std::string kExampleProfile = std::string(IPILAB_SOURCE_DIR) + "/profiles/example.toml";

TEST(Pricer, RecordsEveryCostItPricesWith_AndOnlyThose) {
  const cost::Profile profile = cost::Profile::load_file(kExampleProfile);
  sim::Breakdown bd;
  Counters counters;
  Pricer p(profile, bd, counters);
  EXPECT_TRUE(p.used().empty());
  (void)p.step("sender", "exit", vm_exit_entry);
  (void)p.step("sender", "exit again, cached", vm_exit_entry, 2);
  EXPECT_EQ(p.mean(its_rd_hop), sim::Ps{250'000});
  EXPECT_EQ(p.use(guest_irq_entry).mean, sim::Ps{120'000});
  EXPECT_EQ(p.used(), (cost::UsedCosts{"guest.irq_entry", "its.rd_hop", "vm.exit_entry"}));
  // The provenance of the run is the profile's entries of exactly those keys, sorted.
  const auto prov = profile.provenance(p.used());
  ASSERT_EQ(prov.size(), 3u);
  EXPECT_EQ(prov[0].key, "guest.irq_entry");
  EXPECT_EQ(prov[2].key, "vm.exit_entry");
}

TEST(Pricer, AbsentCost_ThrowsNamingIt_AndIsNotRecorded) {
  const cost::Profile profile = cost::Profile::load_file(kExampleProfile);
  sim::Breakdown bd;
  Counters counters;
  Pricer p(profile, bd, counters);
  try {
    (void)p.use(vcpu_halt_wakeup);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cost.vcpu.halt_wakeup"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(p.used().empty());
}

TEST(Pricer, OnlyUsed_ReplacesTheRecordWithTheGivenKeys) {
  const cost::Profile profile = cost::Profile::load_file(kExampleProfile);
  sim::Breakdown bd;
  Counters counters;
  Pricer p(profile, bd, counters);
  (void)p.step("target", "entry", guest_irq_entry);
  p.only_used({vm_exit_entry, its_rd_hop});
  EXPECT_EQ(p.used(), (cost::UsedCosts{"its.rd_hop", "vm.exit_entry"}));
}

}  // namespace
}  // namespace ipilab::workload
