// Work records of the seed-000 setups (built-in scenario seed000-send-ipi-one): a 2-vCPU guest, CPU 0 sends
// CALL_FUNCTION_SINGLE (0xFB) to CPU 1 through send_IPI, under the pre-seed and mainline
// __send_ipi_one, with NR_CPUS = 8192 and 64. Exact counts, each derived in the comments from the
// kernel loops (hv_apic.c v5.4 / mainline; lib/find_bit.c; include/linux/cpumask.h).
#include <gtest/gtest.h>

#include "hv/guest_send.h"
#include "hv/oracle.h"
#include "hv/partition.h"

namespace ipilab::hv {
namespace {

SendResult seed000_send(GuestConfig cfg, GuestPolicy pol) {
  LinuxHvGuest g(cfg, pol);
  Partition p(partition_config_for(cfg));
  GuestHostSend s = run_on_partition(g, p, {SendHook::kSendIpi, 0, 0xFB, 1, std::nullopt});
  EXPECT_TRUE(s.oracle.ok());
  EXPECT_EQ(s.oracle.delivered, (std::vector<unsigned>{1}));
  EXPECT_FALSE(s.send.native.has_value());
  // Both paths end in the same single fast call: HvCallSendSyntheticClusterIpi, RDX = vector, R8 = VP 1.
  EXPECT_EQ(s.send.hypercalls.size(), 1u);
  if (!s.send.hypercalls.empty()) {
    EXPECT_EQ(s.send.hypercalls[0].regs.rcx, 0x0001'000Bull);
    EXPECT_EQ(s.send.hypercalls[0].regs.rdx, 0xFBull);
    EXPECT_EQ(s.send.hypercalls[0].regs.r8, 0b10ull);
  }
  return s.send;
}

WorkRecord fast_call_only() {
  WorkRecord w;
  w.hypercalls.send_ipi_fast = 1;
  w.tracepoint_sites = 1;
  return w;
}

TEST(Seed000Work, PreSeed_NrCpus8192_DistributionKernel) {
  // NR_CPUS = 8192 on x86_64 forces CONFIG_CPUMASK_OFFSTACK (MAXSMP), so v5.4's nr_cpumask_bits =
  // nr_cpu_ids = 2. CPU_MASK_NONE still zeroes the whole 1024-byte struct cpumask on the stack.
  const GuestConfig cfg = GuestConfig::identity(2, 8192);
  ASSERT_TRUE(cfg.cpumask_offstack);
  ASSERT_EQ(cfg.scan_bits(), 2u);
  const SendResult s = seed000_send(cfg, GuestPolicy::pre_seed());
  WorkRecord w = fast_call_only();
  w.stack_cpumask_bytes = 1024;         // struct cpumask mask (NR_CPUS / 8)
  w.stack_cpumask_bytes_zeroed = 1024;  // = CPU_MASK_NONE
  w.cpumask_words.set_clear = 1;        // cpumask_set_cpu(1, &mask)
  w.cpumask_words.empty = 1;            // cpumask_empty: word 0 is non-zero
  w.cpumask_words.last = 1;             // cpumask_last: (2-1)/64 = word 0 only
  w.cpumask_words.for_each = 1;         // next(-1) loads word 0 -> CPU 1; next(1): start 2 >= 2, no load
  w.vp_lookups = 2;                     // VP of cpumask_last, VP of CPU 1 in the loop
  EXPECT_EQ(s.work, w);
  EXPECT_EQ(s.work.cpumask_words.total(), 4u);
}

TEST(Seed000Work, PreSeed_NrCpus8192_FullLengthScans_Hypothetical) {
  // Not buildable on x86_64 (NR_CPUS > 512 needs OFFSTACK), shown for what full scans would cost.
  GuestConfig cfg = GuestConfig::identity(2, 8192);
  cfg.cpumask_offstack = false;
  ASSERT_EQ(cfg.scan_bits(), 8192u);
  const SendResult s = seed000_send(cfg, GuestPolicy::pre_seed());
  EXPECT_EQ(s.work.stack_cpumask_bytes_zeroed, 1024u);
  EXPECT_EQ(s.work.cpumask_words.empty, 1u);        // word 0 non-zero
  EXPECT_EQ(s.work.cpumask_words.last, 128u);       // words 127 down to 0
  EXPECT_EQ(s.work.cpumask_words.for_each, 129u);   // next(-1): word 0; next(1): words 0..127
  EXPECT_EQ(s.work.cpumask_words.total(), 1u + 128u + 129u + 1u);
}

TEST(Seed000Work, PreSeed_NrCpus64_Shrinks) {
  const GuestConfig cfg = GuestConfig::identity(2, 64);
  ASSERT_FALSE(cfg.cpumask_offstack);
  ASSERT_EQ(cfg.scan_bits(), 64u);
  const SendResult s = seed000_send(cfg, GuestPolicy::pre_seed());
  WorkRecord w = fast_call_only();
  w.stack_cpumask_bytes = 8;
  w.stack_cpumask_bytes_zeroed = 8;
  w.cpumask_words.set_clear = 1;
  w.cpumask_words.empty = 1;
  w.cpumask_words.last = 1;
  w.cpumask_words.for_each = 2;  // next(1): start 2 < 64, loads word 0 again, then ends
  w.vp_lookups = 2;
  EXPECT_EQ(s.work, w);
}

TEST(Seed000Work, Mainline_TouchesNoCpumask_AtAnyNrCpus) {
  for (unsigned nr_cpus : {64u, 8192u}) {
    const SendResult s = seed000_send(GuestConfig::identity(2, nr_cpus), GuestPolicy::mainline());
    WorkRecord w = fast_call_only();
    w.vp_lookups = 1;  // hv_cpu_number_to_vp_number(cpu)
    EXPECT_EQ(s.work, w) << "NR_CPUS " << nr_cpus;
    EXPECT_EQ(s.work.cpumask_words.total(), 0u);
  }
  // The seed's own v3 (v5.5) does the same work.
  const SendResult v3 = seed000_send(GuestConfig::identity(2, 8192), GuestPolicy::seed_v3());
  EXPECT_EQ(v3.work.cpumask_words.total(), 0u);
  EXPECT_EQ(v3.work.stack_cpumask_bytes, 0u);
}

TEST(Seed000Work, TracepointsEnabled_MaskEventWeighsTheMask) {
  GuestConfig cfg = GuestConfig::identity(2, 8192);
  cfg.tracepoints_enabled = true;
  const SendResult pre = seed000_send(cfg, GuestPolicy::pre_seed());
  EXPECT_EQ(pre.work.tracepoints_emitted, 1u);
  EXPECT_EQ(pre.work.cpumask_words.weight, 1u);  // cpumask_weight over nr_cpu_ids = 2 bits
  const SendResult now = seed000_send(cfg, GuestPolicy::mainline());
  EXPECT_EQ(now.work.tracepoints_emitted, 1u);   // hyperv_send_ipi_one: two ints, no cpumask
  EXPECT_EQ(now.work.cpumask_words.weight, 0u);
}

TEST(ExWork, SingleTargetVp70_Mainline) {
  // __send_ipi_mask_ex(cpumask_of(1)) on a 2-CPU guest, NR_CPUS = 8192 (scan 2 bits).
  GuestConfig cfg = GuestConfig::identity(2, 8192);
  cfg.hv_vp_index = {0, 70};
  LinuxHvGuest g(cfg, GuestPolicy::mainline());
  Partition p(partition_config_for(cfg));
  const auto s = run_on_partition(g, p, {SendHook::kSendIpi, 0, 0xFB, 1, std::nullopt});
  WorkRecord w;
  w.tracepoint_sites = 1;
  w.vp_lookups = 2;                 // __send_ipi_one, then __cpumask_to_vpset for CPU 1
  w.cpumask_words.equal = 1;        // cpumask_equal(cpumask_of(1), present): word 0 differs
  w.cpumask_words.for_each = 1;     // CPU 1 found in word 0; next(1) starts at 2 = nbits
  w.irq_save_restore = 1;
  w.vpset_banks_cleared = 2;        // hv_max_vp_index 70 -> banks 0..1
  w.vpset_banks_built = 2;
  w.hypercalls.send_ipi_ex_slow = 1;
  w.varhead_qwords = 2;
  w.slow_input_bytes = 40;          // 24-byte header + 2 banks
  EXPECT_EQ(s.send.work, w);
}

TEST(ExWork, V54AllButSelfCopiesTheMaskToTheStack) {
  const GuestConfig cfg = GuestConfig::identity(4, 8192);  // scan/copy 4 bits = 1 word
  LinuxHvGuest g(cfg, GuestPolicy::pre_seed());
  Partition p(partition_config_for(cfg));
  const auto s = run_on_partition(g, p, {SendHook::kSendIpiAllButSelf, 0, 0xFB, 0, std::nullopt});
  EXPECT_EQ(s.send.work.stack_cpumask_bytes, 1024u);       // struct cpumask new_mask
  EXPECT_EQ(s.send.work.stack_cpumask_bytes_zeroed, 0u);   // not initialised, only copied into
  EXPECT_EQ(s.send.work.cpumask_words.copy, 1u);
  EXPECT_EQ(s.send.work.cpumask_words.set_clear, 1u);      // cpumask_clear_cpu(self)
  EXPECT_EQ(s.send.hypercalls.at(0).regs.r8, 0b1110ull);
  const GuestConfig cfg2 = GuestConfig::identity(4, 8192);
  LinuxHvGuest now(cfg2, GuestPolicy::mainline());
  const auto m = run_on_partition(now, p, {SendHook::kSendIpiAllButSelf, 0, 0xFB, 0, std::nullopt});
  EXPECT_EQ(m.send.work.stack_cpumask_bytes, 0u);
  EXPECT_EQ(m.send.work.cpumask_words.copy, 0u);
  EXPECT_EQ(m.send.hypercalls.at(0).regs.r8, 0b1110ull);
}

TEST(WorkRecord, AddsUp) {
  WorkRecord a = fast_call_only();
  a.cpumask_words.last = 3;
  WorkRecord b = a;
  b += a;
  EXPECT_EQ(b.hypercalls.send_ipi_fast, 2u);
  EXPECT_EQ(b.cpumask_words.last, 6u);
  EXPECT_EQ(b.tracepoint_sites, 2u);
}

}  // namespace
}  // namespace ipilab::hv
