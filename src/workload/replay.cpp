#include "workload/replay.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "workload/program.h"
#include "workload/run_common.h"
#include "workload/vm_run.h"

namespace ipilab::workload {
namespace {

/// One vCPU's recorded sends, in time order.
class ReplayProgram final : public Program {
 public:
  ReplayProgram(const std::vector<ReplaySend>& sends, std::vector<std::size_t> mine, std::uint64_t t0,
                std::vector<std::uint32_t> vectors, std::vector<std::uint16_t> tags)
      : sends_(&sends), mine_(std::move(mine)), t0_(t0), vectors_(std::move(vectors)), tags_(std::move(tags)) {}
  Op next(ProgramCtx&) override {
    if (i_ >= mine_.size()) return Op::stop();
    const ReplaySend& s = (*sends_)[mine_[i_]];
    if (!slept_) {
      slept_ = true;
      return Op::sleep_until(sim::from_ns(static_cast<double>(s.time_ns - t0_)));
    }
    slept_ = false;
    const std::size_t k = i_++;
    return Op::ipi(s.targets, vectors_[k], 0, false, tags_[k]);
  }

 private:
  const std::vector<ReplaySend>* sends_;
  std::vector<std::size_t> mine_;
  std::uint64_t t0_;
  std::vector<std::uint32_t> vectors_;
  std::vector<std::uint16_t> tags_;
  std::size_t i_ = 0;
  bool slept_ = false;
};

}  // namespace

ReplayResult replay(const RunSpec& spec, const std::vector<ReplaySend>& sends, std::string_view default_mechanism) {
  Bound b(spec, default_mechanism);
  const auto n = static_cast<std::size_t>(spec.vm.size());
  std::vector<std::string> kind_names;
  std::vector<std::vector<std::size_t>> per_cpu(n);
  std::vector<std::vector<std::uint32_t>> vectors(n);
  std::vector<std::vector<std::uint16_t>> tags(n);
  std::uint64_t skipped_no_vector = 0;
  const std::uint64_t t0 = sends.empty() ? 0 : sends.front().time_ns;
  for (std::size_t i = 0; i < sends.size(); ++i) {
    const ReplaySend& s = sends[i];
    if (s.targets.empty() || s.src >= n) continue;
    std::uint32_t vector = 0;
    try {
      vector = vector_of(b.arch(), s.kind, "replay");
    } catch (const InputError&) {
      ++skipped_no_vector;
      continue;
    }
    auto it = std::find(kind_names.begin(), kind_names.end(), s.kind_name);
    if (it == kind_names.end()) it = kind_names.insert(kind_names.end(), s.kind_name);
    per_cpu[s.src].push_back(i);
    vectors[s.src].push_back(vector);
    tags[s.src].push_back(static_cast<std::uint16_t>(it - kind_names.begin()));
  }
  RunConfig cfg;
  cfg.spec = &spec;
  cfg.mechanism = b.mechanism.get();
  cfg.ipi_bodies = {HandlerBody{}};
  cfg.delivery_tags = kind_names.size();
  cfg.programs.resize(n);
  for (std::size_t c = 0; c < n; ++c)
    if (!per_cpu[c].empty())
      cfg.programs[c] = std::make_unique<ReplayProgram>(sends, std::move(per_cpu[c]), t0, std::move(vectors[c]), std::move(tags[c]));
  RunOutput out = run_vm(cfg, b.pricer);

  ReplayResult r;
  for (std::size_t k = 0; k < kind_names.size(); ++k) r.latency_by_kind[kind_names[k]] = std::move(out.delivery_by_tag[k]);
  r.counters = out.counters;
  r.settings = b.mechanism->settings();
  r.provenance = spec.profile.provenance_json(b.pricer.used());
  r.provenance["host"] = {{"name", spec.host->name}, {"latency_source", spec.host->latency.source}};
  r.notes = out.notes;
  if (skipped_no_vector)
    r.notes.push_back(fmt::format("{} sends skipped: their kind has no vector on {} (the mechanism's architecture)",
                                  skipped_no_vector, arch_name(b.arch())));
  r.events = out.events;
  return r;
}

}  // namespace ipilab::workload
