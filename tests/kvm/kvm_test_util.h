// Shared helpers for the KVM tests: skip visibly when /dev/kvm cannot be used, count open fds.
#pragma once

#include <dirent.h>

#include <string>

#include <gtest/gtest.h>

#include "common/error.h"
#include "kvm/vm.h"

namespace ipilab::kvm::testing {

/// Empty string when KVM is usable, else the one-line reason.
inline std::string kvm_unavailable_reason(bool need_msr_filter = false) {
  try {
    check_kvm_available(need_msr_filter);
    return {};
  } catch (const UnavailableError& e) {
    return e.what();
  }
}

#define IPILAB_SKIP_WITHOUT_KVM(...)                                                          \
  do {                                                                                        \
    const std::string why = ::ipilab::kvm::testing::kvm_unavailable_reason(__VA_ARGS__);     \
    if (!why.empty()) GTEST_SKIP() << "KVM unavailable: " << why;                             \
  } while (0)

/// Number of entries in /proc/self/fd (open file descriptors of this process).
inline int open_fd_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d) != nullptr) ++n;
    ::closedir(d);
  }
  return n;
}

}  // namespace ipilab::kvm::testing
