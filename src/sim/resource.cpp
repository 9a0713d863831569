#include "sim/resource.h"

#include <stdexcept>

namespace ipilab::sim {

void Resource::negative_duration() {
  throw std::invalid_argument("sim::Resource::request: negative duration");
}

void Resource::reset_stats() noexcept {
  requests_ = 0;
  waited_ = 0;
  total_wait_ = Ps{};
  max_wait_ = Ps{};
  busy_time_ = Ps{};
}

}  // namespace ipilab::sim
