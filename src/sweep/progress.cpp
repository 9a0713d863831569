#include "sweep/progress.h"

#include <cmath>
#include <ostream>

#include <fmt/format.h>

namespace ipilab::sweep {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto t = static_cast<long long>(std::llround(s));
  if (t >= 3600) return fmt::format("{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60);
  return fmt::format("{}:{:02}", t / 60, t % 60);
}

Progress::Progress(std::ostream& err, bool enabled, std::string what, std::size_t total)
    : err_(err), enabled_(enabled), what_(std::move(what)), total_(total), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { finish(); }

std::string Progress::line(const std::string& what, std::size_t done, std::size_t total, std::size_t failed,
                           double elapsed_s, std::size_t width) {
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const auto fill = static_cast<std::size_t>(std::floor(frac * static_cast<double>(width)));
  std::string bar = std::string(fill, '#') + std::string(width - std::min(fill, width), '.');
  std::string s = fmt::format("{} [{}] {}/{} points", what, bar, done, total);
  if (failed) s += fmt::format(", {} failed", failed);
  if (done > 0 && elapsed_s > 0) {
    const double rate = static_cast<double>(done) / elapsed_s;
    s += fmt::format(", {:.1f}/s, ETA {}", rate, format_duration(static_cast<double>(total - done) / rate));
  }
  return s;
}

void Progress::update(std::size_t done, std::size_t failed) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double el = std::chrono::duration<double>(now - start_).count();
  err_ << "\r\033[K" << line(what_, done, total_, failed, el) << std::flush;
  drawn_ = true;
}

void Progress::finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (drawn_) err_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace ipilab::sweep
