// micro-bench mmio_read_vgic from the model: one trapped vGIC read per iteration, priced by
// gic.vgic_mmio_trap and the loop; nothing is sent, every read is one exit.
#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "run_helpers.h"

namespace ipilab::workload {
namespace {

using testing::make_setup;
using testing::run;

testing::Setup kunpeng(const std::string& workload_toml = "") {
  return make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {}, workload_toml);
}

TEST(MmioReadVgic, OneReadIsTheTrapPlusTheLoop) {
  auto s = kunpeng();
  // Fixed values (no spread): the mean is their sum exactly, and it follows the trap's value.
  s.spec.profile.set("gic.vgic_mmio_trap", 600, cost::Unit::Ns, 0, "test");
  s.spec.profile.set("guest.bench_loop", 5, cost::Unit::Ns, 0, "test");
  const RunResult r = run(s, "mmio_read_vgic");
  ASSERT_EQ(r.metrics[0].name, "mmio_read");
  EXPECT_EQ(r.metrics[0].unit, "ns");
  EXPECT_NEAR(r.metrics[0].summary.mean, 605, 0.01);
  EXPECT_EQ(r.counters.at("vm_exits"), 4000u);  // one exit per measured read
  EXPECT_EQ(r.counters.at("sends"), 0u);
}

TEST(MmioReadVgic, ShippedProfilePricesTheEstimate) {
  auto s = kunpeng();
  const RunResult r = run(s, "mmio_read_vgic");
  // gic.vgic_mmio_trap 1000 ns (spread 0.1, its mean kept) + guest.bench_loop 5 ns.
  EXPECT_NEAR(r.metrics[0].summary.mean, 1005, 1005 * 0.01);
}

TEST(MmioReadVgic, ProvenanceListsOnlyTheTwoStepsItRan) {
  auto s = kunpeng();
  const RunResult r = run(s, "mmio_read_vgic");
  std::set<std::string> keys;
  for (const auto& c : r.provenance.at("costs")) keys.insert(c.at("key").get<std::string>());
  EXPECT_EQ(keys, (std::set<std::string>{"gic.vgic_mmio_trap", "guest.bench_loop"}));
}

TEST(MmioReadVgic, RefusesAnX86MechanismAndAReaderOutsideTheVm) {
  auto x86 = kunpeng("mechanism = \"xapic\"\n");
  EXPECT_THROW(run(x86, "mmio_read_vgic"), InputError);
  auto far = kunpeng("cpu = 2\n");
  EXPECT_THROW(run(far, "mmio_read_vgic"), InputError);
}

}  // namespace
}  // namespace ipilab::workload
