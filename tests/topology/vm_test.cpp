// Tests of topology/vm.h: placement, VP-index map, states, and errors that name file:line:key.
#include "topology/vm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "topology/presets.h"
#include "topology/toml_read.h"

namespace ipilab::topology {
namespace {

Vm vm_from(const std::string& text, const Host& host) {
  const toml::table doc = toml_read::parse(text, "vm.toml");
  return parse_vm(*doc["vm"].as_table(), host, "vm.toml");
}

std::string vm_error(const std::string& text, const Host& host) {
  try {
    vm_from(text, host);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST(Vm, Defaults_IdentityVpIndexRunningFirstCpusNrCpus8192) {
  const Host h = load_preset("ws2019-2s-e5-2420v2");
  const Vm vm = vm_from("[vm]\nvcpus = 2\n", h);
  ASSERT_EQ(vm.size(), 2);
  EXPECT_EQ(vm.nr_cpus, 8192);
  EXPECT_EQ(vm.pcpu_of(1), 1);
  EXPECT_EQ(vm.vp_index_of(1), 1u);
  EXPECT_EQ(vm.vcpus[0].initial_state, VcpuState::Running);
}

TEST(Vm, SocketPlacement_TakesFirstCpusOfThatSocket_Seed003) {
  const Host h = load_preset("kunpeng920-2s");
  const Vm vm = vm_from("[vm]\nvcpus = 4\npin = \"socket:1\"\n", h);
  EXPECT_EQ(vm.pcpu_of(0), 32);
  EXPECT_EQ(vm.pcpu_of(3), 35);
}

TEST(Vm, VpIndexOverride_AndHaltedList_Seed000Case) {
  const Host h = load_preset("ws2019-2s-e5-2420v2");
  const Vm vm = vm_from("[vm]\nvcpus = 2\nnr_cpus = 64\npin = [0, 1]\nhalted = [1]\nvp_index = { 1 = 64 }\n", h);
  EXPECT_EQ(vm.nr_cpus, 64);
  EXPECT_EQ(vm.vp_index_of(1), 64u);
  EXPECT_EQ(vm.cpu_of_vp_index(64), 1);
  EXPECT_EQ(vm.cpu_of_vp_index(1), -1);
  EXPECT_EQ(vm.vcpus[1].initial_state, VcpuState::Halted);
  EXPECT_EQ(vm.vcpus[0].initial_state, VcpuState::Running);
}

TEST(VmErrors, VcpuOnCpuThatDoesNotExist_NamesFileLineAndKey) {
  const Host h = load_preset("kunpeng920-2s");
  const std::string msg = vm_error("[vm]\nvcpus = 2\npin = [3, 64]\n", h);
  EXPECT_THAT(msg, ::testing::HasSubstr("vm.toml:3:11: vm.pin[1]: host CPU 64 does not exist on host 'kunpeng920-2s' (CPUs 0-63)"));
}

TEST(VmErrors, SocketTooSmall_PinListLength_UnknownKey) {
  const Host h = load_preset("kunpeng920-2s");
  EXPECT_THAT(vm_error("[vm]\nvcpus = 40\npin = \"socket:0\"\n", h), ::testing::HasSubstr("vm.pin: socket 0 has 32 CPUs, the VM needs 40"));
  EXPECT_THAT(vm_error("[vm]\nvcpus = 2\npin = [1]\n", h), ::testing::HasSubstr("vm.pin: lists 1 host CPUs for 2 vCPUs"));
  EXPECT_THAT(vm_error("[vm]\nvcpus = 2\nvp_index = { 5 = 1 }\n", h), ::testing::HasSubstr("vm.vp_index.5: key must be a guest CPU number in 0..1"));
  EXPECT_THAT(vm_error("[vm]\nvcpus = 2\npinning = [0, 1]\n", h), ::testing::HasSubstr("vm.toml:3:1: vm.pinning: unknown key"));
  EXPECT_THAT(vm_error("[vm]\nvcpus = 4\nnr_cpus = 2\n", h), ::testing::HasSubstr("vm.nr_cpus: NR_CPUS 2 is below vcpus = 4"));
  EXPECT_THAT(vm_error("[vm]\nvcpus = 2\nstate = \"sleeping\"\n", h), ::testing::HasSubstr("vm.state: 'sleeping' is not a vCPU state"));
}

// VP indices as the Hyper-V guest holds them (include/asm-generic/mshyperv.h: hv_vp_index[], VP_INVAL
// = U32_MAX, read as int by hv_cpu_number_to_vp_number). KVM allows repeats: kvm_hv_set_msr checks
// HV_X64_MSR_VP_INDEX only against KVM_MAX_VCPUS, so two vCPUs may hold one index.
TEST(Vm, VpIndex_InvalBeyond4096AndRepeatsAreInputs) {
  const Host h = load_preset("ws2019-2s-e5-2420v2");
  const Vm vm = vm_from("[vm]\nvcpus = 4\nvp_index = { 1 = \"inval\", 2 = 4096, 3 = 0 }\n", h);
  EXPECT_EQ(vm.vp_index_of(1), kVpInval);
  EXPECT_EQ(vm.vp_index_of(2), 4096u);
  EXPECT_EQ(vm.vp_index_of(3), 0u);
  EXPECT_EQ(vm.cpus_of_vp_index(0), (std::vector<int>{0, 3}));
  EXPECT_EQ(vm.cpu_of_vp_index(0), 0);
  EXPECT_EQ(vm.cpu_of_vp_index(kVpInval), -1);
  EXPECT_TRUE(vm.cpus_of_vp_index(kVpInval).empty());
  EXPECT_EQ(vp_index_text(kVpInval), "inval");
  EXPECT_EQ(vp_index_text(4096), "4096");
  EXPECT_EQ(vm.vp_index_place(2, "x.toml"), "vm.toml:3:31: vm.vp_index.2");
  EXPECT_EQ(vm.vp_index_place(0, "x.toml"), "x.toml: vm.vp_index.0");
  // The largest index Linux can hold as int.
  EXPECT_EQ(vm_from("[vm]\nvcpus = 1\nvp_index = { 0 = 2147483647 }\n", h).vp_index_of(0), 0x7FFFFFFFu);
}

TEST(VmErrors, VpIndex_NegativeIntOrUnknownWord_NamesTheKey) {
  const Host h = load_preset("ws2019-2s-e5-2420v2");
  EXPECT_THAT(vm_error("[vm]\nvcpus = 2\nvp_index = { 1 = 2147483648 }\n", h),
              ::testing::HasSubstr("vm.toml:3:18: vm.vp_index.1: VP index 2147483648 reads as a negative int in Linux"));
  EXPECT_THAT(vm_error("[vm]\nvcpus = 2\nvp_index = { 1 = 4294967295 }\n", h),
              ::testing::HasSubstr("vm.vp_index.1: 4294967295 is VP_INVAL: write \"inval\""));
  EXPECT_THAT(vm_error("[vm]\nvcpus = 2\nvp_index = { 1 = -1 }\n", h),
              ::testing::HasSubstr("vm.vp_index.1: VP index -1 is outside 0..2147483647"));
  EXPECT_THAT(vm_error("[vm]\nvcpus = 2\nvp_index = { 1 = \"invalid\" }\n", h),
              ::testing::HasSubstr("vm.vp_index.1: 'invalid' is not a VP index"));
  EXPECT_THAT(vm_error("[vm]\nvcpus = 2\nvp_index = { 1 = 1.5 }\n", h),
              ::testing::HasSubstr("vm.vp_index.1: expected an integer or \"inval\", got float"));
}

TEST(Vm, Make_ValidatesAgainstHost) {
  const Host h = load_preset("kunpeng920-2s");
  EXPECT_EQ(Vm::make(h, 2, {0, 33}).pcpu_of(1), 33);
  EXPECT_THROW(Vm::make(h, 2, {0, 99}), InputError);
}

}  // namespace
}  // namespace ipilab::topology
