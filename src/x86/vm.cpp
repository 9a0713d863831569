#include "x86/vm.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "common/error.h"
#include "x86/apic_icr.h"

namespace ipilab::x86 {

X86Vm::X86Vm(std::vector<X86Vcpu> vcpus, bool smm_supported)
    : vcpus_(std::move(vcpus)), smm_supported_(smm_supported) {
  if (vcpus_.empty()) throw InputError("vm.vcpu", "a VM needs at least one vCPU");
  std::vector<std::pair<std::uint32_t, std::uint32_t>> all;
  all.reserve(vcpus_.size());
  for (std::uint32_t i = 0; i < vcpus_.size(); ++i) {
    if (vcpus_[i].apic_id == 0xFFFFFFFFu) {
      throw InputError(fmt::format("vm.vcpu[{}].apic_id", i),
                       "0xffffffff is the x2APIC broadcast ID and cannot name a vCPU");
    }
    all.emplace_back(vcpus_[i].apic_id, i);
  }
  std::sort(all.begin(), all.end());
  for (std::size_t k = 1; k < all.size(); ++k) {
    if (all[k].first == all[k - 1].first) {
      throw InputError(fmt::format("vm.vcpu[{}].apic_id", all[k].second),
                       fmt::format("APIC ID {:#x} is already used by vCPU {}", all[k].first,
                                   all[k - 1].second));
    }
  }
  for (const auto& [id, index] : all) {
    if (!vcpus_[index].apic_present) continue;
    by_apic_id_.emplace_back(id, index);
    max_apic_id_ = std::max(max_apic_id_, id);
  }
  // cluster_masks: every vCPU, present or not, under the cluster ID of its APIC ID.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> cluster_ids;  // (cluster ID, index into clusters_)
  cluster_of_.resize(vcpus_.size());
  for (std::uint32_t i = 0; i < vcpus_.size(); ++i) {
    const std::uint32_t id = x2apic_cluster_id(vcpus_[i].apic_id);
    auto it = std::find_if(cluster_ids.begin(), cluster_ids.end(), [id](const auto& c) { return c.first == id; });
    if (it == cluster_ids.end()) {
      cluster_ids.emplace_back(id, static_cast<std::uint32_t>(clusters_.size()));
      clusters_.emplace_back(nr_vcpus());
      it = cluster_ids.end() - 1;
    }
    cluster_of_[i] = it->second;
    clusters_[it->second].set(i);
  }
}

X86Vm X86Vm::identity(std::uint32_t nr_vcpus) {
  std::vector<X86Vcpu> v(nr_vcpus);
  for (std::uint32_t i = 0; i < nr_vcpus; ++i) v[i].apic_id = i;
  return X86Vm(std::move(v));
}

X86Vm X86Vm::from_apic_ids(const std::vector<std::uint32_t>& apic_ids) {
  std::vector<X86Vcpu> v(apic_ids.size());
  for (std::size_t i = 0; i < apic_ids.size(); ++i) v[i].apic_id = apic_ids[i];
  return X86Vm(std::move(v));
}

namespace {
// QEMU apicid_bitwidth_for_count(): bits needed to number `count` items (0 for 1 item).
std::uint32_t bitwidth_for_count(std::uint32_t count) {
  std::uint32_t bits = 0;
  while ((1ull << bits) < count) ++bits;
  return bits;
}
}  // namespace

X86Vm X86Vm::qemu_topology(std::uint32_t sockets, std::uint32_t cores, std::uint32_t threads) {
  if (sockets == 0 || cores == 0 || threads == 0) {
    throw InputError("vm.topology", "sockets, cores and threads must all be >= 1");
  }
  const std::uint32_t tbits = bitwidth_for_count(threads);
  const std::uint32_t cbits = bitwidth_for_count(cores);
  if (tbits + cbits + bitwidth_for_count(sockets) > 32) {
    throw InputError("vm.topology", "the topology does not fit 32-bit APIC IDs");
  }
  std::vector<X86Vcpu> v;
  v.reserve(static_cast<std::size_t>(sockets) * cores * threads);
  for (std::uint32_t s = 0; s < sockets; ++s) {
    for (std::uint32_t c = 0; c < cores; ++c) {
      for (std::uint32_t t = 0; t < threads; ++t) {
        X86Vcpu cpu;
        cpu.apic_id = static_cast<std::uint32_t>((std::uint64_t{s} << (cbits + tbits)) |
                                                  (std::uint64_t{c} << tbits) | t);
        v.push_back(cpu);
      }
    }
  }
  return X86Vm(std::move(v));
}

std::optional<std::uint32_t> X86Vm::vcpu_of_apic_id(std::uint32_t apic_id) const {
  // IDs are unique and sorted: where the IDs are 0..n-1 (QEMU's default numbering) ID i sits at i.
  if (apic_id < by_apic_id_.size() && by_apic_id_[apic_id].first == apic_id) return by_apic_id_[apic_id].second;
  auto it = std::lower_bound(by_apic_id_.begin(), by_apic_id_.end(),
                             std::make_pair(apic_id, std::uint32_t{0}));
  if (it == by_apic_id_.end() || it->first != apic_id) return std::nullopt;
  return it->second;
}

void X86Vm::check_cpumask(const Cpumask& mask) const {
  if (mask.nbits() < nr_vcpus())
    throw std::invalid_argument(fmt::format("cpumask of {} bits is smaller than the VM ({} vCPUs)", mask.nbits(), nr_vcpus()));
  if (mask.nbits() > nr_vcpus() && mask.find_next(nr_vcpus(), nullptr) < mask.nbits())
    throw std::invalid_argument("cpumask names a CPU the VM does not have");
}

void X86Vm::check_send(std::uint32_t this_cpu, const Cpumask& mask) const {
  if (this_cpu >= nr_vcpus())
    throw std::invalid_argument(fmt::format("sending CPU {} is not a CPU of this {}-vCPU VM", this_cpu, nr_vcpus()));
  check_cpumask(mask);
}

}  // namespace ipilab::x86
