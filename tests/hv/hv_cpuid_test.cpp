// CPUID 0x40000004 as KVM_GET_SUPPORTED_HV_CPUID reports it (hv/hv_cpuid.h), one test per KVM
// version, and `hv call` giving the guest the per-vCPU answer.
#include "hv/hv_cpuid.h"

#include <gtest/gtest.h>

#include "cli/hv_options.h"
#include "common/error.h"

namespace ipilab::hv {
namespace {

// Bits 2, 3, 5, 10, 11 = 0xC2C; without bit 10 = 0x82C.
constexpr std::uint32_t kAll = 0xC2C;
constexpr std::uint32_t kNoCluster = 0x82C;

void expect_always_recommended(KvmVersion v) {
  for (bool per_vcpu : {false, true})
    for (bool lapic : {false, true}) {
      const auto l = kvm_hv_enlightenment_info(v, per_vcpu, lapic);
      EXPECT_EQ(l.eax, kAll) << per_vcpu << lapic;
      EXPECT_EQ(l.ebx, 0xFFFu);
    }
}

TEST(KvmHvCpuid, V5_15RecommendsClusterIpiWithOrWithoutLapic) { expect_always_recommended(KvmVersion::kV5_15); }
TEST(KvmHvCpuid, V5_16RecommendsClusterIpiWithOrWithoutLapic) { expect_always_recommended(KvmVersion::kV5_16); }
TEST(KvmHvCpuid, V5_18RecommendsClusterIpiWithOrWithoutLapic) { expect_always_recommended(KvmVersion::kV5_18); }

TEST(KvmHvCpuid, MainlineDropsClusterIpiPerVcpuWithoutInKernelLapicOnly) {
  EXPECT_EQ(kvm_hv_enlightenment_info(KvmVersion::kMainline, true, false).eax, kNoCluster);
  EXPECT_EQ(kvm_hv_enlightenment_info(KvmVersion::kMainline, true, true).eax, kAll);
  EXPECT_EQ(kvm_hv_enlightenment_info(KvmVersion::kMainline, false, false).eax, kAll);  // system ioctl: !vcpu
  EXPECT_FALSE(kvm_hv_enlightenment_info(KvmVersion::kMainline, true, false).cluster_ipi_recommended());
  EXPECT_TRUE(kvm_hv_enlightenment_info(KvmVersion::kMainline, true, false).ex_processor_masks_recommended());
}

TEST(KvmHvCpuid, HvCallNoLapicJsonReportsWhatKvmWould) {
  const auto j = cli::run_call_args({"--no-lapic", "--json", "--call", "send-ipi", "--fast", "--rdx", "fe", "--r8",
                                     "2"})
                     .json;
  EXPECT_EQ(j["partition"]["cluster_ipi_recommended"], false);
  EXPECT_EQ(j["partition"]["hv_cpuid"]["kvm_get_supported_hv_cpuid_vcpu"]["eax"], kNoCluster);
  EXPECT_EQ(j["partition"]["hv_cpuid"]["kvm_get_supported_hv_cpuid"]["eax"], kAll);
  EXPECT_EQ(j["status"], "HV_STATUS_INVALID_HYPERCALL_INPUT");  // the LAPIC test (no --enforce-cpuid)
  const auto enforced = cli::run_call_args({"--no-lapic", "--enforce-cpuid", "--call", "send-ipi", "--fast", "--rdx",
                                            "fe", "--r8", "2"})
                            .json;
  EXPECT_EQ(enforced["status"], "HV_STATUS_ACCESS_DENIED");
  const auto with_lapic = cli::run_call_args({"--call", "send-ipi", "--fast", "--rdx", "fe", "--r8", "2"}).json;
  EXPECT_EQ(with_lapic["partition"]["cluster_ipi_recommended"], true);
  EXPECT_EQ(with_lapic["partition"]["hv_cpuid"]["kvm_get_supported_hv_cpuid_vcpu"]["eax"], kAll);
}

TEST(KvmHvCpuid, HvCallOlderKvmReportsTheRecommendationAndRefusesNoLapic) {
  for (const char* v : {"v5.15", "v5.16", "v5.18"}) {
    const auto j = cli::run_call_args({"--kvm", v, "--call", "send-ipi", "--fast", "--rdx", "fe", "--r8", "2"}).json;
    EXPECT_EQ(j["partition"]["hv_cpuid"]["kvm_get_supported_hv_cpuid_vcpu"]["eax"], kAll) << v;
    EXPECT_THROW(cli::run_call_args({"--kvm", v, "--no-lapic", "--call", "send-ipi", "--fast", "--rdx", "fe"}),
                 InputError)
        << v;
  }
}

}  // namespace
}  // namespace ipilab::hv

namespace ipilab::hv {
namespace {

// The guest side: hv send on a host without an in-kernel LAPIC takes KVM's per-vCPU CPUID.
TEST(KvmHvCpuid, HvSendWithoutLapicOnMainlineInstallsNoHooksAndSendsNoHypercall) {
  const std::vector<std::string> base{"--linux", "mainline", "--cpu-vp", "0,1,2,3", "--self", "0",
                                      "--send-ipi-mask", "1-3", "--vector", "fb"};
  const auto with = cli::run_send_args(base);
  EXPECT_FALSE(with.json["hypercalls"].empty());
  auto args = base;
  args.push_back("--no-lapic");
  const auto without = cli::run_send_args(args);
  EXPECT_FALSE(without.run.guest.cluster_ipi_recommended);
  EXPECT_TRUE(without.json["hypercalls"].empty());
  args.insert(args.end(), {"--kvm", "v5.18"});
  try {
    cli::run_send_args(args);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--no-lapic");
  }
}

}  // namespace
}  // namespace ipilab::hv
