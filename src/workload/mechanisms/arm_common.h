// ipilab/workload/mechanisms/arm_common.h — what the Arm mechanisms share: the host's GIC as the
// src/gic model (topology::Host -> gic::HostGicLayout -> GicSystem, brought up by Linux's ITS driver
// model with every vCPU's vPE mapped and resident on its pCPU), and the guest's ICC_SGI1R_EL1 writes.
//
// Guest side (Linux drivers/irqchip/irq-gic-v3.c gic_ipi_send_mask / gic_compute_target_list): one
// ICC_SGI1R_EL1 write per cluster of target CPUs that share Aff3.Aff2.Aff1, with a 16-bit target list
// of Aff0 values. KVM gives vCPU n the MPIDR Aff0 = n % 16, Aff1 = (n / 16) % 256, Aff2 = n / 4096
// (arch/arm64/kvm/sys_regs.c reset_mpidr), so a write covers up to 16 consecutive vCPUs. Every write
// traps to EL2 (the SGI generation registers always trap, IMO/FMO set).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "gic/gic_system.h"
#include "gic/linux_its.h"
#include "gic/topology_builder.h"
#include "workload/mechanism.h"

namespace ipilab::workload {

/// The GIC layout of `host` (Host::gic_affinity / its_affinity). InputError naming the host file and
/// key when the host has no GIC or cannot be represented.
gic::HostGicLayout gic_layout_of(const topology::Host& host);

/// The host's GIC with the VM's vPEs (vPE id = vCPU number) mapped and resident on their pCPUs, and
/// SGIs 0..15 of every vPE configured through find_4_1_its() of the vCPU's own pCPU under `policy`.
struct VmGic {
  VmGic(const topology::Host& host, const topology::Vm& vm, gic::Find41Policy policy);
  std::unique_ptr<gic::GicSystem> system;
  std::unique_ptr<gic::LinuxItsDriver> driver;
};

/// The guest's ICC_SGI1R_EL1 writes for `targets` (ascending vCPU numbers): [begin, end) ranges of
/// `targets`, one per cluster of 16 vCPUs.
std::vector<std::pair<std::size_t, std::size_t>> sgi1r_writes(std::span<const unsigned> targets);

/// What every Arm mechanism keeps: the host and VM it sends on, the run's pricer, and the target-side
/// steps (arrival()) its constructor fills in.
class ArmMechanism : public Mechanism {
 public:
  explicit ArmMechanism(MechanismContext& ctx) : host_(&ctx.host), vm_(&ctx.vm), pricer_(&ctx.pricer) {}
  const ArrivalSteps& arrival() const override { return arrival_; }

 protected:
  /// The sender's side of every ICC_SGI1R_EL1 write of `r` (sgi1r_writes): the trap to EL2
  /// (gic.sgi_trap_entry, a VM exit), `per_target(target)` for each vCPU of the write's target list
  /// in order (KVM's vgic_v3_dispatch_sgi loop), then the return to the guest (gic.sgi_trap_return).
  void plan_trapped_sgi1r_writes(SendPlan& p, const SendRequest& r, const std::function<void(unsigned)>& per_target) const;

  const topology::Host* host_;
  const topology::Vm* vm_;
  Pricer* pricer_;
  ArrivalSteps arrival_;
};

}  // namespace ipilab::workload
