#include "common/suggest.h"

#include <algorithm>
#include <cctype>
#include <system_error>
#include <utility>

namespace ipilab {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t threshold(std::string_view typed) { return std::max<std::size_t>(1, std::min<std::size_t>(4, typed.size() / 4)); }

}  // namespace

std::size_t edit_distance(std::string_view a_in, std::string_view b_in) {
  const std::string a = lower(a_in), b = lower(b_in);
  const std::size_t n = a.size(), m = b.size();
  // Three rows of the dynamic-programming table: i-2, i-1 and i.
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::vector<std::string> suggestions(std::string_view typed, std::span<const std::string> candidates) {
  const std::string t = lower(typed);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string lc = lower(c);
    if (lc == t) return {c};
    std::size_t score = edit_distance(t, lc);
    const bool contains = t.size() >= 3 && (lc.find(t) != std::string::npos || (lc.size() >= 3 && t.find(lc) != std::string::npos));
    if (score > threshold(typed)) {
      if (!contains) continue;
      score = threshold(typed) + 1;  // after every close spelling
    }
    if (std::none_of(scored.begin(), scored.end(), [&](const auto& s) { return s.second == c; })) scored.emplace_back(score, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < 3; ++i) out.push_back(std::move(scored[i].second));
  return out;
}

std::string did_you_mean(std::string_view typed, std::span<const std::string> candidates) {
  return suggestion_text(suggestions(typed, candidates));
}

std::string suggestion_text(std::span<const std::string> s) {
  if (s.empty()) return {};
  std::string out = "; did you mean ";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0) out += i + 1 == s.size() ? " or " : ", ";
    out += "'" + s[i] + "'";
  }
  return out + "?";
}

std::string did_you_mean_file(const std::filesystem::path& rel, std::span<const std::filesystem::path> roots) {
  namespace fs = std::filesystem;
  const fs::path folder = rel.parent_path();
  const std::string ext = rel.extension().string();
  std::vector<std::string> stems;  // compared by file name without the extension
  for (const auto& root : roots) {
    std::error_code ec;
    for (fs::directory_iterator it(root / folder, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec) || it->path().extension().string() != ext) continue;
      const std::string stem = it->path().stem().string();
      if (std::find(stems.begin(), stems.end(), stem) == stems.end()) stems.push_back(stem);
    }
  }
  std::sort(stems.begin(), stems.end());
  std::vector<std::string> paths;
  for (const auto& s : suggestions(rel.stem().string(), stems)) paths.push_back((folder / (s + ext)).generic_string());
  return suggestion_text(paths);
}

}  // namespace ipilab
