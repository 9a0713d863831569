// The VMM boots a 64-bit guest, hands values back through shared memory, and stops broken guests with
// a clear error and no leaked fds.
#include <gtest/gtest.h>

#include "kvm/guest_program.h"
#include "kvm/vm.h"
#include "kvm_test_util.h"

namespace ipilab::kvm {
namespace {

using namespace Xbyak::util;

TEST(KvmVm, BootsLongModeAndReturnsValueThroughSharedMemory) {
  IPILAB_SKIP_WITHOUT_KVM();
  VmConfig cfg;
  cfg.vcpus = 2;
  Vm vm(cfg);
  GuestProgram g(2);
  Xbyak::Label entry;
  g.L(entry);
  g.init_cpu();
  // status[vcpu] = 0x1234'0000 + x2APIC ID read back from MSR 0x802.
  g.mov(rbx, rdi);
  g.mov(ecx, kMsrX2apicId);
  g.rdmsr();
  g.add(rax, 0x12340000);
  g.shl(rbx, 6);
  g.mov(qword[r15 + rbx + offsetof(SharedArea, status)], rax);
  g.done();
  g.set_entry(0, entry);
  g.set_entry(1, entry);
  vm.load(g.image());
  const RunReport rep = vm.run();
  EXPECT_EQ(vm.shared().status[0].v, 0x12340000u);
  EXPECT_EQ(vm.shared().status[1].v, 0x12340001u);
  ASSERT_EQ(rep.exits.size(), 2u);
  EXPECT_EQ(rep.exits[0].at("io:ucall"), 1u);
  EXPECT_GT(vm.tsc_khz(), 100000u);
}

}  // namespace
}  // namespace ipilab::kvm

namespace ipilab::kvm {
namespace {

using namespace Xbyak::util;

// Builds a 1-vCPU VM whose guest runs `body` after init_cpu(), runs it with a 1 s bound and returns the
// GuestError message (empty if the guest finished).
template <typename Body>
std::string run_broken_guest(Body body, unsigned* vcpu_out = nullptr, std::uint64_t* rip_out = nullptr) {
  VmConfig cfg;
  cfg.vcpus = 1;
  cfg.timeout = std::chrono::milliseconds(1000);
  Vm vm(cfg);
  GuestProgram g(1);
  Xbyak::Label entry;
  g.L(entry);
  g.init_cpu();
  body(g);
  g.done();
  g.set_entry(0, entry);
  vm.load(g.image());
  try {
    vm.run();
  } catch (const GuestError& e) {
    if (vcpu_out) *vcpu_out = e.vcpu();
    if (rip_out) *rip_out = e.rip();
    return e.what();
  }
  return {};
}

TEST(KvmVm, UndefinedOpcodeIsReportedWithVectorAndRip) {
  IPILAB_SKIP_WITHOUT_KVM();
  std::uint64_t ud_rip = 0, rip = 0;
  unsigned vcpu = 99;
  const std::string msg = run_broken_guest([&](GuestProgram& g) { ud_rip = g.here(); g.ud2(); }, &vcpu, &rip);
  EXPECT_NE(msg.find("#UD (vector 6)"), std::string::npos) << msg;
  EXPECT_EQ(rip, ud_rip);
  EXPECT_EQ(vcpu, 0u);
}

TEST(KvmVm, TripleFaultIsReportedAsShutdown) {
  IPILAB_SKIP_WITHOUT_KVM();
  // An IDT with limit 0: the #UD cannot be delivered, nor the #DF, so the CPU shuts down.
  const std::string msg = run_broken_guest([](GuestProgram& g) {
    g.sub(rsp, 16);
    g.mov(qword[rsp], 0);
    g.mov(qword[rsp + 8], 0);
    g.mov(rax, rsp); g.lidt_rax();
    g.ud2();
  });
  EXPECT_NE(msg.find("shutdown (triple fault)"), std::string::npos) << msg;
}

TEST(KvmVm, UndefinedOpcodeLoopIsStoppedByTheTimeout) {
  IPILAB_SKIP_WITHOUT_KVM();
  // The guest's own #UD handler returns to the faulting ud2: a fault loop that never exits to the VMM.
  const std::string msg = run_broken_guest([](GuestProgram& g) {
    Xbyak::Label handler, body;
    g.jmp(body, Xbyak::CodeGenerator::T_NEAR);
    g.L(handler);
    g.iretq();
    g.set_vector(6, handler);
    g.L(body);
    g.ud2();
  });
  EXPECT_NE(msg.find("timeout: did not finish within 1000 ms"), std::string::npos) << msg;
}

TEST(KvmVm, InfiniteLoopIsStoppedByTheTimeoutNamingVcpuAndRip) {
  IPILAB_SKIP_WITHOUT_KVM();
  std::uint64_t loop_rip = 0, rip = 0;
  unsigned vcpu = 99;
  const std::string msg = run_broken_guest([&](GuestProgram& g) {
    Xbyak::Label self;
    loop_rip = g.here();
    g.L(self);
    g.jmp(self);
  }, &vcpu, &rip);
  EXPECT_NE(msg.find("timeout"), std::string::npos) << msg;
  EXPECT_EQ(rip, loop_rip);
  EXPECT_EQ(vcpu, 0u);
}

TEST(KvmVm, HaltWithInterruptsOffIsStoppedByTheTimeout) {
  IPILAB_SKIP_WITHOUT_KVM();
  const std::string msg = run_broken_guest([](GuestProgram& g) { g.cli(); g.hlt(); });
  EXPECT_NE(msg.find("timeout"), std::string::npos) << msg;
}

TEST(KvmVm, AccessToUnbackedMemoryNamesTheAddress) {
  IPILAB_SKIP_WITHOUT_KVM();
  const std::string msg = run_broken_guest([](GuestProgram& g) {
    g.mov(rax, 0x20000000);  // 512 MiB: mapped by the page tables, not backed by the memslot
    g.mov(qword[rax], 1);
  });
  EXPECT_NE(msg.find("GPA 0x20000000"), std::string::npos) << msg;
}

TEST(KvmVm, BrokenGuestsLeakNoFileDescriptors) {
  IPILAB_SKIP_WITHOUT_KVM();
  // One warm-up run so lazily opened process-wide fds (hwloc, gtest) are already counted.
  run_broken_guest([](GuestProgram& g) { g.ud2(); });
  const int before = testing::open_fd_count();
  for (int i = 0; i < 3; ++i) {
    run_broken_guest([](GuestProgram& g) { g.ud2(); });
    run_broken_guest([](GuestProgram& g) { Xbyak::Label l; g.L(l); g.jmp(l); });
    run_broken_guest([](GuestProgram& g) { g.sub(rsp, 16); g.mov(qword[rsp], 0); g.mov(qword[rsp + 8], 0);
                                           g.mov(rax, rsp); g.lidt_rax(); g.ud2(); });
  }
  EXPECT_EQ(testing::open_fd_count(), before);
}

}  // namespace
}  // namespace ipilab::kvm
