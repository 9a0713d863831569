#include "sim/breakdown.h"

#include <stdexcept>

namespace ipilab::sim {

Breakdown::StepId Breakdown::step(std::string_view name) {
  for (std::size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].name == name) return static_cast<StepId>(i);
  rows_.push_back(Row{std::string(name), Ps{}, 0, 0.0});
  return static_cast<StepId>(rows_.size() - 1);
}

void Breakdown::bad_add() {
  throw std::invalid_argument("sim::Breakdown::add: unknown step id or negative duration");
}

void Breakdown::merge(const Breakdown& other) {
  for (const Row& r : other.rows_) {
    Row& mine = rows_[step(r.name)];
    mine.total += r.total;
    mine.count += r.count;
  }
}

void Breakdown::reset() {
  for (Row& r : rows_) {
    r.total = Ps{};
    r.count = 0;
  }
}

Ps Breakdown::total() const {
  Ps t{};
  for (const Row& r : rows_) t += r.total;
  return t;
}

Ps Breakdown::total_of(std::string_view name) const {
  for (const Row& r : rows_)
    if (r.name == name) return r.total;
  return Ps{};
}

std::vector<Breakdown::Row> Breakdown::rows() const {
  std::vector<Row> out = rows_;
  const Ps sum = total();
  for (Row& r : out)
    r.share = sum.v > 0 ? static_cast<double>(r.total.v) / static_cast<double>(sum.v) : 0.0;
  return out;
}

}  // namespace ipilab::sim
