// workload::EnumParam: a choice named by the model's own table (hv::kKvmVersionNames,
// gic::kFind41PolicyNames, ...) — the value comes back, aliases are accepted, the listing and the
// error name every spelling and the place.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "topology/toml_read.h"
#include "gic/linux_its.h"
#include "hv/guest_policy.h"
#include "hv/kvm_version.h"
#include "workload/params.h"

namespace ipilab::workload {
namespace {

const EnumParam<hv::KvmVersion> kKvm{"kvm", hv::KvmVersion::kMainline, hv::kKvmVersionNames, "the host's KVM"};
const EnumParam<gic::Find41Policy> kFind41{"find_4_1_its", gic::Find41Policy::PostSeed, gic::kFind41PolicyNames,
                                           "the ITS choice"};

Params params_of(const std::string& text) { return Params(toml_read::parse(text, "s.toml"), "s.toml"); }

TEST(EnumParam, ReturnsTheModelsValueForItsName) {
  EXPECT_EQ(params_of("kvm = \"v5.15\"").get(kKvm), hv::KvmVersion::kV5_15);
  EXPECT_EQ(params_of("find_4_1_its = \"pre-seed\"").get(kFind41), gic::Find41Policy::PreSeed);
  EXPECT_EQ(params_of("").get(kFind41), gic::Find41Policy::PostSeed);
  EXPECT_EQ(params_of("").get(kKvm, hv::KvmVersion::kV5_18), hv::KvmVersion::kV5_18);
}

TEST(EnumParam, AcceptsAnAliasAndPrintsTheCanonicalName) {
  EXPECT_EQ(params_of("kvm = \"v5.17\"").get(kKvm), hv::KvmVersion::kV5_16);
  EXPECT_EQ(params_of("kvm = \"v6.14\"").get(kKvm), hv::KvmVersion::kMainline);
  EXPECT_EQ(hv::kvm_version_name(hv::KvmVersion::kMainline), "mainline");
  EXPECT_EQ(hv::kvm_version_name(hv::KvmVersion::kV5_16), "v5.16");
}

TEST(EnumParam, ListsEverySpellingInTableOrderAndTheDefault) {
  const ParamInfo i = info(kKvm);
  EXPECT_EQ(i.type, "string");
  EXPECT_EQ(i.default_text, "\"mainline\"");
  EXPECT_EQ(i.description, "the host's KVM (one of: v5.15, v5.16, v5.17, v5.18, v6.14, mainline)");
}

TEST(EnumParam, AnUnknownNameIsAnInputErrorNamingThePlaceAndTheChoices) {
  try {
    params_of("\n find_4_1_its = \"first\"").get(kFind41);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "s.toml:2:17: workload.find_4_1_its: \"first\" is not one of \"pre-seed\", \"post-seed\"");
  }
}

TEST(EnumParam, TheModelsNameFunctionsReadTheSameTables) {
  EXPECT_EQ(gic::find41_policy_name(gic::Find41Policy::PreSeed), "pre-seed");
  EXPECT_EQ(hv::policy_name(hv::GuestPolicy::seed_v3()), "seed-v3");
  EXPECT_EQ(hv::policy_from_name("mainline"), hv::GuestPolicy::mainline());
  EXPECT_EQ(hv::linux_version_from_name("v5.10"), hv::LinuxVersion::kV5_10);
  EXPECT_EQ(hv::linux_version_info(hv::LinuxVersion::kExcludeSelfUnfixed).name, "exclude-self-unfixed");
  EXPECT_FALSE(hv::linux_version_from_name("v5.11").has_value());
}

}  // namespace
}  // namespace ipilab::workload
