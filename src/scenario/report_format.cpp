#include "scenario/report_format.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ipilab::scenario::report {

namespace {

// "1234567.89" -> "1,234,567.89" (the digits before the point, after an optional sign).
std::string group(std::string s) {
  const std::size_t start = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  std::size_t end = s.find('.');
  if (end == std::string::npos) end = s.size();
  for (std::size_t i = end; i > start + 3; i -= 3) s.insert(i - 3, 1, ',');
  return s;
}

}  // namespace

NumberFormat column_format(std::span<const double> values) {
  double top = 0;
  for (double v : values)
    if (std::isfinite(v)) top = std::max(top, std::fabs(v));
  if (top == 0 || top >= 1000) return {0};
  if (top >= 100) return {1};
  if (top >= 10) return {2};
  if (top >= 1) return {3};
  // Below 1: 3 significant digits of the largest (0.0123 -> 4 decimals), at most 6.
  const int lead = static_cast<int>(std::floor(std::log10(top)));  // -1 for 0.1..0.99
  return {std::min(6, 2 - lead)};
}

std::string format_fixed(double v, const NumberFormat& f) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  std::string s = fmt::format("{:.{}f}", v, f.decimals);
  if (s == "-0" || (s.rfind("-0.", 0) == 0 && s.find_first_not_of("0.", 1) == std::string::npos)) s.erase(0, 1);
  return group(std::move(s));
}

std::string format_count(std::uint64_t n) { return group(std::to_string(n)); }

std::string format_percent(double pct) {
  if (!std::isfinite(pct)) return fmt::format("{}", pct);
  std::string s = fmt::format("{:+.1f}", pct);
  if (s == "-0.0") s = "+0.0";
  return group(std::move(s)) + "%";
}

std::string format_tolerance(double relative) {
  return relative == 0 ? std::string("exactly") : fmt::format("±{:g}%", relative * 100);
}

std::size_t text_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string wrap(const std::string& first, const std::string& text, const std::string& indent, std::size_t width) {
  std::string out = first;
  std::size_t used = text_width(first);
  std::size_t pos = 0;
  bool first_word = true;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (!first_word && used + 1 + text_width(word) > width) {
      out += "\n" + indent;
      used = text_width(indent);
    } else if (!first_word || !out.empty()) {
      out += ' ';
      ++used;
    }
    out += word;
    used += text_width(word);
    first_word = false;
  }
  return out + "\n";
}

Table::Table(std::vector<std::string> header, std::set<std::size_t> left) : left_(std::move(left)) {
  rows_.push_back(std::move(header));
}

void Table::add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

std::vector<std::size_t> Table::widths() const {
  std::vector<std::size_t> w;
  for (const auto& row : rows_) {
    if (w.size() < row.size()) w.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], text_width(row[i]));
  }
  return w;
}

std::size_t Table::width() const {
  const auto w = widths();
  std::size_t n = 0;
  for (std::size_t i = 0; i < w.size(); ++i) n += w[i] + (i ? 2 : 0);
  return n;
}

std::string Table::render(const std::string& indent) const {
  const auto w = widths();
  std::string out;
  for (const auto& row : rows_) {
    std::string line = indent;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(w[i] - text_width(row[i]), ' ');
      if (i > 0) line += "  ";
      line += left_.count(i) ? row[i] + pad : pad + row[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace ipilab::scenario::report
