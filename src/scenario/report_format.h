// ipilab/scenario/report_format.h — the building blocks of the terminal reports: plain-text tables
// whose number columns share one format, number formats, word wrapping.
//
// One number format per column: every row of a column is printed with the same number of decimals,
// chosen from the column's largest magnitude (>= 1000: 0 decimals, >= 100: 1, >= 10: 2, >= 1: 3,
// below 1: enough for 3 significant digits of the largest, at most 6), and thousands are grouped
// with ',' everywhere ("8,041", "17,965", "1,730.7%"). Counts are integers and grouped the same way.
// Not-a-number cells ("—", "") are the caller's: a column format is computed from the numbers only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace ipilab::scenario::report {

/// How the numbers of one column are printed.
struct NumberFormat {
  int decimals = 0;
};

/// The format of a column holding `values` (non-finite values are ignored; none -> 0 decimals).
NumberFormat column_format(std::span<const double> values);

/// `v` with the format's decimals and ',' between thousands ("-1,234.5"); "nan"/"inf" as such.
std::string format_fixed(double v, const NumberFormat& f);
/// A count with ',' between thousands ("20,000").
std::string format_count(std::uint64_t n);
/// A change in percent with its sign and one decimal ("+123.4%", "-3.5%", "+1,730.7%").
std::string format_percent(double pct);
/// A relative tolerance as "±2%" (0 -> "exactly").
std::string format_tolerance(double relative);

/// Width of `s` in terminal columns (UTF-8 code points: ✓, ✗, —, ± are one column each).
std::size_t text_width(const std::string& s);

/// Word-wraps `text` to lines of at most `width` columns: the first line starts with `first`,
/// continuation lines with `indent`. Words are not split. Ends with a newline.
std::string wrap(const std::string& first, const std::string& text, const std::string& indent, std::size_t width = 110);

/// A plain-text table: a header row, then rows; columns separated by two spaces, the ones listed
/// in `left` left-aligned, the others right-aligned; trailing spaces trimmed.
class Table {
 public:
  explicit Table(std::vector<std::string> header, std::set<std::size_t> left = {0});
  void add(std::vector<std::string> row);
  /// Columns wide (without indent) of the rendered table.
  std::size_t width() const;
  std::size_t rows() const { return rows_.size(); }
  std::string render(const std::string& indent) const;

 private:
  std::vector<std::size_t> widths() const;
  std::vector<std::vector<std::string>> rows_;  // [0] = header
  std::set<std::size_t> left_;
};

}  // namespace ipilab::scenario::report
