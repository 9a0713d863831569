// The registry of temporary paths of common/output.h, emptied on SIGINT/SIGTERM and at exit.
//
// The signal handler may only call async-signal-safe functions (POSIX.1-2017, System Interfaces,
// 2.4.3 "Signal Actions": unlink, rmdir, sigaction, raise are on the list), so the paths live in a
// fixed table of NUL-terminated buffers, each published with an atomic state after it is filled.
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/output.h"

namespace ipilab::output {

namespace {

constexpr int kSlots = 256;
enum : int { kFree = 0, kFilling = 1, kFile = 2, kFolder = 3 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
Slot g_slots[kSlots];
pid_t g_owner = 0;  // a forked child (a parser sandbox, a traced command) must not clean its parent's files

void remove_all_tracked() {
  if (::getpid() != g_owner) return;
  for (int pass = 0; pass < 2; ++pass)  // files first, then their folders
    for (Slot& s : g_slots) {
      const int st = s.state.load(std::memory_order_acquire);
      if (pass == 0 && st == kFile) ::unlink(s.path);
      if (pass == 1 && st == kFolder) ::rmdir(s.path);
    }
}

void on_signal(int sig) {
  const int saved = errno;
  remove_all_tracked();
  errno = saved;
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
  ::raise(sig);  // die of the signal, as without the handler (a shell sees 128 + sig)
}

int claim(const std::string& path, bool folder) {
  if (path.size() >= PATH_MAX) throw std::runtime_error("temporary path too long: " + path);
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(folder ? kFolder : kFile, std::memory_order_release);
    return i;
  }
  throw std::runtime_error("more than 256 temporary files open at once");
}

}  // namespace

void install_cleanup() {
  static bool done = false;
  if (done) return;
  done = true;
  g_owner = ::getpid();
  std::atexit(remove_all_tracked);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // started with the signal ignored (nohup): keep it so
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

TrackedPath::TrackedPath(const std::filesystem::path& path, bool folder)
    : path_(path), slot_(claim(path.string(), folder)), folder_(folder) {}

TrackedPath::~TrackedPath() { remove(); }

TrackedPath::TrackedPath(TrackedPath&& o) noexcept : path_(std::move(o.path_)), slot_(o.slot_), folder_(o.folder_) {
  o.slot_ = -1;
  o.path_.clear();
}

TrackedPath& TrackedPath::operator=(TrackedPath&& o) noexcept {
  if (this != &o) {
    remove();
    path_ = std::move(o.path_);
    slot_ = o.slot_;
    folder_ = o.folder_;
    o.slot_ = -1;
    o.path_.clear();
  }
  return *this;
}

void TrackedPath::release() noexcept {
  if (slot_ >= 0) g_slots[slot_].state.store(kFree, std::memory_order_release);
  slot_ = -1;
}

void TrackedPath::remove() noexcept {
  if (slot_ < 0) return;
  if (folder_) ::rmdir(path_.c_str());
  else ::unlink(path_.c_str());
  release();
}

std::size_t tracked_count() {
  std::size_t n = 0;
  for (const Slot& s : g_slots) n += s.state.load() >= kFile;
  return n;
}

}  // namespace ipilab::output
