// ipilab/sweep/progress.h — the progress bar of a sweep on stderr: points done of total, failed so
// far, rate and ETA, redrawn in place at most 10 times a second. Only when enabled (the command
// enables it when stderr is a terminal); otherwise it prints nothing at all.
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <mutex>
#include <string>

namespace ipilab::sweep {

class Progress {
 public:
  Progress(std::ostream& err, bool enabled, std::string what, std::size_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// `done` of the total finished, `failed` of them failed. Thread-safe.
  void update(std::size_t done, std::size_t failed);
  /// Clears the bar (the summary line is the caller's).
  void finish();

  /// The bar's text for a state (exposed for tests): "what [#####.....] 12/40 points, 1 failed,
  /// 3.1/s, ETA 0:09".
  static std::string line(const std::string& what, std::size_t done, std::size_t total, std::size_t failed,
                          double elapsed_s, std::size_t width = 24);

 private:
  std::ostream& err_;
  bool enabled_;
  std::string what_;
  std::size_t total_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_, last_;
  bool drawn_ = false;
};

/// "0:09", "12:34", "1:02:03".
std::string format_duration(double seconds);

}  // namespace ipilab::sweep
