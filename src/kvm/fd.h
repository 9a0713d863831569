// ipilab/kvm/fd.h — an owning file descriptor and an owning mmap, so a VM never leaks either.
#pragma once

#include <cstddef>
#include <utility>

namespace ipilab::kvm {

/// Owns one file descriptor; closes it on destruction. Move-only.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) { reset(); fd_ = std::exchange(o.fd_, -1); }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

/// Owns one mmap'd region; munmaps it on destruction. Move-only.
class Mapping {
 public:
  Mapping() = default;
  Mapping(void* addr, std::size_t size) noexcept : addr_(addr), size_(size) {}
  Mapping(Mapping&& o) noexcept
      : addr_(std::exchange(o.addr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  Mapping& operator=(Mapping&& o) noexcept {
    if (this != &o) {
      reset();
      addr_ = std::exchange(o.addr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { reset(); }

  void* get() const noexcept { return addr_; }
  std::size_t size() const noexcept { return size_; }
  void reset() noexcept;

 private:
  void* addr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace ipilab::kvm
