#include "workload/plan.h"

#include <stdexcept>

#include <fmt/format.h>

#include "workload/counters.h"

namespace ipilab::workload {

CounterId Counters::id(std::string_view name) {
  auto it = index_.find(name);
  if (it != index_.end()) return it->second;
  // Checked once per name and run (ids are interned before the hot path).
  if (!find_counter(name))
    throw std::logic_error(fmt::format("counter '{}' is not in the counter catalog (workload/counters.h)", name));
  const auto id = static_cast<CounterId>(names_.size());
  names_.emplace_back(name);
  values_.push_back(0);
  index_.emplace(std::string(name), id);
  return id;
}

std::uint64_t Counters::value(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? 0 : values_[it->second];
}

std::map<std::string, std::uint64_t> Counters::to_map() const {
  std::map<std::string, std::uint64_t> out;
  for (std::size_t i = 0; i < names_.size(); ++i) out[names_[i]] += values_[i];
  return out;
}

void Counters::reset() {
  for (auto& v : values_) v = 0;
}

sim::Ps SendPlan::sender_mean() const {
  sim::Ps t{};
  for (const auto& s : sender) t += s.mean();
  return t;
}

sim::Ps SendPlan::arrival_mean(std::size_t i) const {
  const PlannedDelivery& d = deliveries.at(i);
  sim::Ps t{};
  for (std::size_t k = 0; k <= d.after_sender_step && k < sender.size(); ++k) t += sender[k].mean();
  for (const auto& s : d.path) t += s.mean();
  return t;
}

std::size_t Pricer::recent_slot(std::string_view who, std::string_view what, std::string_view source, int lane,
                                std::int64_t extra) noexcept {
  // Where the strings are (callers pass literals and catalog names) and their lengths; a slot is
  // only a guess: its entry's copies are compared with the arguments before it is used.
  std::uint64_t h = reinterpret_cast<std::uintptr_t>(who.data()) * 0x9E3779B97F4A7C15ull;
  h ^= reinterpret_cast<std::uintptr_t>(what.data()) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= reinterpret_cast<std::uintptr_t>(source.data()) + 0x94D049BB133111EBull + (h << 6) + (h >> 2);
  h ^= (static_cast<std::uint64_t>(what.size()) << 20) ^ (static_cast<std::uint64_t>(lane) << 8) ^
       static_cast<std::uint64_t>(extra);
  h *= 0xBF58476D1CE4E5B9ull;
  return static_cast<std::size_t>(h >> 57) & (kRecent - 1);
}

PlanStep Pricer::step(std::string_view who, std::string_view what, cost::CostKey key, std::uint32_t count, Lane lane,
                      int its) {
  Recent& r = recent_[recent_slot(who, what, key.name, static_cast<int>(lane), its)];
  if (r.used && r.duration < 0 && r.lane == lane && r.its == its && r.what == what && r.who == who && r.source == key.name) {
    PlanStep s = r.step;
    s.count = count;
    return s;
  }
  std::string& cache_key = scratch_;
  cache_key.clear();
  cache_key.append(who).push_back('\x1f');
  cache_key.append(what).push_back('\x1f');
  cache_key.append(key.name).push_back('\x1f');
  cache_key.push_back(static_cast<char>('0' + static_cast<int>(lane)));
  cache_key.append(std::to_string(its));
  auto it = cache_.find(cache_key);
  if (it == cache_.end()) {
    const cost::Cost& c = use(key);
    PlanStep s;
    s.id = breakdown_->step(fmt::format("{}: {} [{}]", who, what, key.name));
    jitters_.push_back(c.jitter());
    s.jitter = &jitters_.back();
    s.lane = lane;
    s.its = its;
    it = cache_.emplace(cache_key, s).first;
  }
  r.used = true;
  r.duration = -1;
  r.lane = lane;
  r.its = its;
  r.who.assign(who);
  r.what.assign(what);
  r.source.assign(key.name);
  r.step = it->second;
  PlanStep s = it->second;
  s.count = count;
  return s;
}

PlanStep Pricer::fixed(std::string_view who, std::string_view what, std::string_view source, sim::Ps duration,
                       Lane lane) {
  Recent& r = recent_[recent_slot(who, what, source, 16 + static_cast<int>(lane), duration.v)];
  if (r.used && r.duration == duration.v && r.lane == lane && r.what == what && r.who == who && r.source == source)
    return r.step;
  const auto remember = [&](const PlanStep& s) {
    r.used = true;
    r.duration = duration.v;
    r.lane = lane;
    r.its = -1;
    r.who.assign(who);
    r.what.assign(what);
    r.source.assign(source);
    r.step = s;
  };
  std::string& key = scratch_;
  key.clear();
  key.append("\x1e").append(who).push_back('\x1f');
  key.append(what).push_back('\x1f');
  key.append(source).push_back('\x1f');
  key.append(std::to_string(duration.v)).push_back(static_cast<char>('0' + static_cast<int>(lane)));
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    remember(it->second);
    return it->second;
  }
  PlanStep s;
  s.id = breakdown_->step(fmt::format("{}: {} [{}]", who, what, source));
  jitters_.push_back(sim::Jitter(duration, 0.0));
  s.jitter = &jitters_.back();
  s.lane = lane;
  cache_.emplace(key, s);
  remember(s);
  return s;
}

sim::Ps Pricer::mean(cost::CostKey key) { return use(key).mean; }

const cost::Cost& Pricer::use(cost::CostKey key) {
  const cost::Cost& c = profile_->get(key.name);  // throws before recording an absent key
  if (!used_.contains(key.name)) used_.emplace(key.name);
  return c;
}

void Pricer::only_used(std::initializer_list<cost::CostKey> keys) {
  used_.clear();
  for (const cost::CostKey& k : keys) use(k);
}

void add_counter(SendPlan& plan, Pricer& pricer, std::string_view name, std::uint64_t n) {
  if (n == 0) return;
  const CounterId id = pricer.counter(name);
  for (auto& [cid, v] : plan.counters)
    if (cid == id) {
      v += n;
      return;
    }
  plan.counters.emplace_back(id, n);
}

}  // namespace ipilab::workload
