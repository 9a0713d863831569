// The whole-VM core's vCPU state machine (workload/vcpu_state.h): the table of legal moves is the
// one its header documents, every state has a name, an illegal move throws naming both states.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "workload/vcpu_state.h"

namespace ipilab::workload {
namespace {

using S = VcpuState;

std::set<std::pair<S, S>> legal_moves() {
  std::set<std::pair<S, S>> m;
  for (std::size_t a = 0; a < kVcpuStates; ++a)
    for (std::size_t b = 0; b < kVcpuStates; ++b)
      if (vcpu_move_legal(static_cast<S>(a), static_cast<S>(b))) m.insert({static_cast<S>(a), static_cast<S>(b)});
  return m;
}

TEST(VcpuState, TheLegalMovesAreExactlyTheDocumentedOnes) {
  const std::set<std::pair<S, S>> want = {
      {S::Running, S::Interrupt}, {S::Running, S::Halted},   {S::Running, S::Polling},  {S::Running, S::IdleSpin},
      {S::Halted, S::Interrupt},  {S::Polling, S::Interrupt}, {S::IdleSpin, S::Interrupt},
      {S::Halted, S::Running},    {S::Polling, S::Running},   {S::IdleSpin, S::Running},
      {S::Interrupt, S::Running}, {S::Interrupt, S::Halted},  {S::Interrupt, S::Polling}, {S::Interrupt, S::IdleSpin},
  };
  EXPECT_EQ(legal_moves(), want);
}

TEST(VcpuState, EveryStateHasADistinctName) {
  std::set<std::string> names;
  for (std::size_t a = 0; a < kVcpuStates; ++a) {
    const auto n = std::string(vcpu_state_name(static_cast<S>(a)));
    EXPECT_NE(n, "?") << a;
    names.insert(n);
  }
  EXPECT_EQ(names.size(), kVcpuStates);
  EXPECT_TRUE(is_idle(S::Halted) && is_idle(S::Polling) && is_idle(S::IdleSpin));
  EXPECT_FALSE(is_idle(S::Running) || is_idle(S::Interrupt));
}

TEST(VcpuState, AnIllegalMoveThrowsNamingTheVcpuAndBothStates) {
  S s = S::Halted;
  try {
    move_vcpu(7, s, S::Polling);  // one idle state straight to another: never
    FAIL() << "no throw";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "vm_run: vCPU 7 cannot move from 'halted (HLT/WFI)' to 'polling idle'");
  }
  EXPECT_EQ(s, S::Halted);  // unchanged
  S r = S::Running;
  EXPECT_THROW(move_vcpu(0, r, S::Running), std::logic_error);  // nothing moves to where it is
  move_vcpu(0, r, S::Interrupt);
  EXPECT_EQ(r, S::Interrupt);
  move_vcpu(0, r, S::Halted);  // a handler taken in HLT returns there
  EXPECT_EQ(r, S::Halted);
}

}  // namespace
}  // namespace ipilab::workload
