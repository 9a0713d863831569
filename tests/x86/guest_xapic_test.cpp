// Linux's xAPIC drivers (apic_flat / apic_physflat) as the MMIO writes they make, and KVM's delivery
// of an xAPIC ICR write: the bits on the wire and who gets the interrupt.
#include <gtest/gtest.h>

#include <stdexcept>

#include "x86/guest_xapic.h"
#include "x86/linux_kvm_guest.h"

namespace ipilab::x86 {
namespace {

std::vector<std::uint32_t> got(const IcrWriteOutcome& o) {
  std::vector<std::uint32_t> v;
  for (const auto& t : o.targets)
    if (t.accepted) v.push_back(t.vcpu);
  return v;
}

TEST(GuestXapic, LinuxPicksFlatUpToEightCpusThenPhysflat) {
  EXPECT_EQ(linux_xapic_driver(1), XapicDriver::Flat);
  EXPECT_EQ(linux_xapic_driver(8), XapicDriver::Flat);
  EXPECT_EQ(linux_xapic_driver(9), XapicDriver::Physflat);
}

TEST(GuestXapic, FlatMaskIsOneLogicalWriteWithTheLdrBits) {
  const X86Vm vm = X86Vm::identity(8);
  Cpumask mask(8);
  for (unsigned c : {0u, 1u, 3u, 5u}) mask.set(c);
  const GuestSend s = xapic_send_ipi_mask(vm, XapicDriver::Flat, 0, mask, 0xFC, /*exclude_self=*/true);
  ASSERT_EQ(s.mmio_writes.size(), 1u);
  EXPECT_TRUE(s.msr_writes.empty());
  EXPECT_EQ(s.mmio_writes[0].icr2, 0x2Au << 24);  // CPUs 1, 3, 5: LDR bits 1 << cpu
  EXPECT_EQ(s.mmio_writes[0].icr, 0x800u | 0xFC);  // APIC_DEST_LOGICAL | APIC_DM_FIXED | vector
  EXPECT_EQ(s.exits(), 1u);
  IcrWriteOutcome o;
  kvm_xapic_icr_write(vm, XapicDriver::Flat, 0, s.mmio_writes[0], o);
  EXPECT_EQ(got(o), (std::vector<std::uint32_t>{1, 3, 5}));
  EXPECT_FALSE(o.fastpath);
}

TEST(GuestXapic, PhysflatWritesOncePerTarget) {
  const X86Vm vm = X86Vm::identity(16);
  Cpumask mask(16);
  for (unsigned c : {2u, 9u, 15u}) mask.set(c);
  const GuestSend s = xapic_send_ipi_mask(vm, XapicDriver::Physflat, 0, mask, 0xFB, false);
  ASSERT_EQ(s.mmio_writes.size(), 3u);
  EXPECT_EQ(s.mmio_writes[1].icr2, 9u << 24);
  EXPECT_EQ(s.mmio_writes[1].icr, 0xFBu);  // physical, fixed
  IcrWriteOutcome o;
  kvm_xapic_icr_write(vm, XapicDriver::Physflat, 0, s.mmio_writes[2], o);
  EXPECT_EQ(got(o), (std::vector<std::uint32_t>{15}));
}

TEST(GuestXapic, ShorthandAndBroadcastReachEveryOther) {
  const X86Vm vm = X86Vm::identity(4);
  const GuestSend s = xapic_send_ipi_shorthand(0xFC, Shorthand::AllExcludingSelf);
  ASSERT_EQ(s.mmio_writes.size(), 1u);
  EXPECT_EQ(s.mmio_writes[0].icr, 0xC0000u | 0xFC);
  EXPECT_EQ(s.mmio_writes[0].icr2, 0u);
  IcrWriteOutcome o;
  kvm_xapic_icr_write(vm, XapicDriver::Physflat, 2, s.mmio_writes[0], o);
  EXPECT_EQ(got(o), (std::vector<std::uint32_t>{0, 1, 3}));
  kvm_xapic_icr_write(vm, XapicDriver::Physflat, 2, XapicIcr{0xFB, 0xFFu << 24}, o);  // physical 0xFF
  EXPECT_EQ(got(o), (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

TEST(GuestXapic, TheGuestDispatchUsesTheXapicDriverAndItsShorthand) {
  const X86Vm vm = X86Vm::identity(4);
  LinuxKvmGuestConfig cfg;
  cfg.xapic = true;
  cfg.xapic_driver = XapicDriver::Flat;
  Cpumask others(4);
  for (unsigned c : {1u, 2u, 3u}) others.set(c);
  EXPECT_EQ(linux_send_call_func_ipi(vm, cfg, 0, others).mmio_writes.at(0).icr & icr_bits::kShortMask, icr_bits::kShortAllBut);
  cfg.ipi_shorthand = false;
  const GuestSend m = linux_send_call_func_ipi(vm, cfg, 0, others);
  ASSERT_EQ(m.mmio_writes.size(), 1u);
  EXPECT_EQ(m.mmio_writes[0].icr2, 0x0Eu << 24);
  EXPECT_EQ(linux_send_ipi(vm, cfg, 3, 0xFD).mmio_writes.at(0).icr2, 0x08u << 24);
}

// apic_flat's send_IPI is default_send_IPI_single -> apic->send_IPI_mask(cpumask_of(cpu)), which
// kvm_setup_pv_ipi replaced by kvm_send_ipi_mask: one target is a KVM_HC_SEND_IPI (bitmap bit 0 at
// min = its APIC ID, icr = APIC_DM_FIXED | vector). physflat's default_send_IPI_single_phys writes the
// ICR itself.
TEST(GuestXapic, WithPvSendIpiFlatSendsOneTargetAsAHypercallPhysflatAsAnIcrWrite) {
  const X86Vm vm = X86Vm::identity(4);
  LinuxKvmGuestConfig cfg;
  cfg.xapic = true;
  cfg.pv_send_ipi = true;
  cfg.xapic_driver = XapicDriver::Flat;
  const GuestSend flat = linux_send_ipi(vm, cfg, 3, 0xFD);
  EXPECT_TRUE(flat.mmio_writes.empty());
  ASSERT_EQ(flat.hypercalls.size(), 1u);
  EXPECT_EQ(flat.hypercalls[0], (PvIpiHypercall{1, 0, 3, 0xFD}));
  cfg.xapic_driver = XapicDriver::Physflat;
  const GuestSend phys = linux_send_ipi(vm, cfg, 3, 0xFD);
  EXPECT_TRUE(phys.hypercalls.empty());
  ASSERT_EQ(phys.mmio_writes.size(), 1u);
  EXPECT_EQ(phys.mmio_writes[0].icr2, 3u << 24);
  EXPECT_THROW(linux_send_ipi(vm, LinuxKvmGuestConfig{.pv_send_ipi = true, .xapic = true, .xapic_driver = XapicDriver::Flat}, 4, 0xFD),
               std::invalid_argument);
}

TEST(GuestXapic, FlatCannotAddressANinthCpuAndXapicStopsAt255Ids) {
  const X86Vm vm = X86Vm::identity(9);
  EXPECT_THROW(xapic_send_ipi_one(vm, XapicDriver::Flat, 8, 0xFB), std::invalid_argument);
  EXPECT_THROW(xapic_send_ipi_one(X86Vm::identity(256), XapicDriver::Physflat, 1, 0xFB), std::invalid_argument);
}

}  // namespace
}  // namespace ipilab::x86
