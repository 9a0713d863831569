// Field decoding helpers: symbols, cpumasks and kinds (print formats of include/trace/events/ipi.h and
// csd.h as the kernel's trace file and libtraceevent print them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "trace/event.h"
#include "trace/cpumask.h"

namespace ipilab::trace {
namespace {

TEST(NormalizeSymbol, KernelFormDropsSizeAndModule) {
  EXPECT_EQ(normalize_symbol("generic_exec_single+0x36/0x50"), "generic_exec_single+0x36");
  EXPECT_EQ(normalize_symbol("kvm_vcpu_kick+0x5e/0xa0 [kvm]"), "kvm_vcpu_kick+0x5e");
  EXPECT_EQ(normalize_symbol("generic_exec_single+0x36"), "generic_exec_single+0x36");  // libtraceevent form
  EXPECT_EQ(normalize_symbol("0x0"), "0x0");
}

TEST(CpumaskWords, MostSignificantWordFirst) {
  std::vector<std::uint32_t> cpus;
  ASSERT_TRUE(parse_cpumask_words("00000000,00000003", cpus));
  EXPECT_EQ(cpus, (std::vector<std::uint32_t>{0, 1}));
  ASSERT_TRUE(parse_cpumask_words("80000000,00000001", cpus));
  EXPECT_EQ(cpus, (std::vector<std::uint32_t>{0, 63}));
  ASSERT_TRUE(parse_cpumask_words("1,00000000,00000000", cpus));
  EXPECT_EQ(cpus, (std::vector<std::uint32_t>{64}));
  ASSERT_TRUE(parse_cpumask_words("000000f0", cpus));
  EXPECT_EQ(cpus, (std::vector<std::uint32_t>{4, 5, 6, 7}));
  // A lone short word is no kernel rendering (every word of a whole-long bitmap has 8 digits).
  EXPECT_FALSE(parse_cpumask_words("f0", cpus));
}

TEST(CpumaskWords, RejectsListFormAndJunk) {
  std::vector<std::uint32_t> cpus;
  EXPECT_FALSE(parse_cpumask_words("0-3", cpus));
  EXPECT_FALSE(parse_cpumask_words("", cpus));
  EXPECT_FALSE(parse_cpumask_words("00000000,,1", cpus));
  EXPECT_FALSE(parse_cpumask_words("123456789", cpus));  // a word is 32 bits = 8 hex digits at most
}

TEST(Kinds, FromCallbackPerKernelSmpC) {
  EXPECT_EQ(kind_from_callback("0x0"), IpiKind::Reschedule);  // smp_send_reschedule passes NULL
  EXPECT_EQ(kind_from_callback("generic_smp_call_function_single_interrupt+0x0"), IpiKind::CallFunctionSingle);
  EXPECT_EQ(kind_from_callback("generic_smp_call_function_interrupt+0x0"), IpiKind::CallFunction);
  EXPECT_EQ(kind_from_callback("rb_wake_up_waiters+0x0"), IpiKind::Unknown);
  // irq_work self-IPI as traced by Linux 6.18 (recorded on this machine).
  EXPECT_EQ(send_kind("irq_work_queue+0x29", "rb_wake_up_waiters+0x0"), IpiKind::IrqWork);
}

TEST(Kinds, FromArmReasonAndX86Vector) {
  EXPECT_EQ(kind_from_arm_reason("Rescheduling interrupts"), IpiKind::Reschedule);
  EXPECT_EQ(kind_from_arm_reason("Function call interrupts"), IpiKind::CallFunction);
  EXPECT_EQ(kind_from_arm_reason("Single function call interrupts"), IpiKind::CallFunctionSingle);
  EXPECT_EQ(kind_from_arm_reason("IRQ work interrupts"), IpiKind::IrqWork);
  EXPECT_EQ(kind_from_arm_reason("CPU stop interrupts"), IpiKind::Other);
  EXPECT_EQ(kind_from_vector_event("call_function_single"), IpiKind::CallFunctionSingle);
  EXPECT_EQ(kind_from_vector_event("reschedule"), IpiKind::Reschedule);
  EXPECT_FALSE(kind_from_vector_event("local_timer").has_value());
}

}  // namespace
}  // namespace ipilab::trace
