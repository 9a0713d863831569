// Guest policy names (see guest_policy.h).
#include "hv/guest_policy.h"

#include "common/error.h"

namespace ipilab::hv {

std::string_view to_string(SendIpiOneVersion v) noexcept {
  switch (v) {
    case SendIpiOneVersion::kPreSeed: return "pre-seed";
    case SendIpiOneVersion::kSeedV2: return "seed-v2";
    case SendIpiOneVersion::kSeedV3: return "seed-v3";
  }
  return "?";
}

std::string_view to_string(MaskPathVersion v) noexcept {
  switch (v) {
    case MaskPathVersion::kV54: return "v5.4";
    case MaskPathVersion::kExcludeSelfUnfixed: return "exclude-self-unfixed";
    case MaskPathVersion::kMainline: return "mainline";
  }
  return "?";
}

std::string policy_name(const GuestPolicy& p) {
  if (p == GuestPolicy::pre_seed()) return "pre-seed";
  if (p == GuestPolicy::seed_v2()) return "seed-v2";
  if (p == GuestPolicy::seed_v3()) return "seed-v3";
  if (p == GuestPolicy::mainline()) return "mainline";
  return std::string(to_string(p.send_ipi_one)) + "/" + std::string(to_string(p.mask_path));
}

GuestPolicy policy_from_name(std::string_view name) {
  if (name == "pre-seed") return GuestPolicy::pre_seed();
  if (name == "seed-v2") return GuestPolicy::seed_v2();
  if (name == "seed-v3") return GuestPolicy::seed_v3();
  if (name == "mainline") return GuestPolicy::mainline();
  throw InputError("policy", "unknown guest policy '" + std::string(name) +
                                 "' (known: pre-seed, seed-v2, seed-v3, mainline)");
}

}  // namespace ipilab::hv
