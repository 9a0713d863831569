#include "kvm/fd.h"

#include <sys/mman.h>
#include <unistd.h>

namespace ipilab::kvm {

void Fd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Mapping::reset() noexcept {
  if (addr_ != nullptr && addr_ != MAP_FAILED) ::munmap(addr_, size_);
  addr_ = nullptr;
  size_ = 0;
}

}  // namespace ipilab::kvm
