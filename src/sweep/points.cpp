#include "sweep/points.h"

#include <algorithm>

#include <fmt/format.h>

#include "scenario/scenario.h"

namespace ipilab::sweep {

namespace {

void flatten(const toml::table& t, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [k, n] : t) {
    // Key parts quoted as TOML would (so "a.b" stays one part), joined by dots.
    std::string part(k.str());
    const bool bare = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
    if (!bare) part = canonical(toml::value<std::string>(part));
    const std::string p = prefix.empty() ? part : prefix + "." + part;
    if (const auto* sub = n.as_table(); sub && !sub->empty()) flatten(*sub, p, out);
    else out.push_back(fmt::format("{} = {}", p, canonical(n)));
  }
}

bool cond_holds(const Spec& spec, const Condition& c, const std::vector<std::size_t>& v) {
  const std::size_t j = v[c.axis];
  const auto in = [&] { return std::find(c.values.begin(), c.values.end(), j) != c.values.end(); };
  const auto& num = spec.axes[c.axis].values[j].number;
  switch (c.op) {
    case Condition::Op::Eq:
    case Condition::Op::In: return in();
    case Condition::Op::Ne: return !in();
    case Condition::Op::Lt: return num && *num < c.number;
    case Condition::Op::Le: return num && *num <= c.number;
    case Condition::Op::Gt: return num && *num > c.number;
    case Condition::Op::Ge: return num && *num >= c.number;
  }
  return false;
}

}  // namespace

std::uint64_t fnv1a64(std::string_view s) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t point_seed(std::uint64_t base, std::string_view key) noexcept {
  // Scenario seeds are TOML integers (>= 0, < 2^63): keep derived seeds in that range too.
  return splitmix64(base ^ splitmix64(fnv1a64(key))) >> 1;
}

bool matches(const Spec& spec, const Skip& s, const std::vector<std::size_t>& v) {
  return std::all_of(s.when.begin(), s.when.end(), [&](const Condition& c) { return cond_holds(spec, c, v); });
}

toml::table point_overrides(const Spec& spec, const Point& p) {
  toml::table over;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    toml::table t = spec.axes[a].values[p.value[a]].set;  // a copy: the spec keeps its own
    scenario::deep_merge(over, std::move(t));
  }
  return over;
}

std::vector<Point> expand(const Spec& spec, std::uint64_t base_seed) {
  const std::size_t n = spec.point_count();
  const std::size_t na = spec.axes.size();
  std::vector<Point> out;
  out.reserve(n);
  std::vector<std::size_t> v(na, 0);
  for (std::size_t i = 0; i < n; ++i) {
    Point p;
    p.index = i;
    p.value = v;
    for (std::size_t a = 0; a < na; ++a)
      p.label += fmt::format("{}{}={}", a ? ", " : "", spec.axes[a].name, spec.axes[a].values[v[a]].label);
    std::vector<std::string> lines;
    flatten(point_overrides(spec, p), "", lines);
    std::sort(lines.begin(), lines.end());
    for (const auto& l : lines) p.key += l + "\n";
    p.seed = spec.per_point_seeds ? point_seed(base_seed, p.key) : base_seed;
    for (const auto& s : spec.skips)
      if (matches(spec, s, v)) {
        p.skip = s.reason;
        break;
      }
    // Baseline: this point's values with the named axes replaced (the first point by default).
    std::size_t b = 0;
    if (!spec.baseline.empty()) {
      std::vector<std::size_t> bv = v;
      for (const auto& [a, j] : spec.baseline) bv[a] = j;
      for (std::size_t a = 0; a < na; ++a) b = b * spec.axes[a].values.size() + bv[a];
    }
    p.baseline = b;
    out.push_back(std::move(p));
    // Next combination: the last axis varies fastest.
    for (std::size_t a = na; a-- > 0;) {
      if (++v[a] < spec.axes[a].values.size()) break;
      v[a] = 0;
    }
  }
  return out;
}

}  // namespace ipilab::sweep
