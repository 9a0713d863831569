// its_commands (arm64): what KVM's ITS commands cost, their completion wait included. The first
// `senders` vCPUs each run a loop of host operations that send ITS commands through the gicv4.1-vsgi
// mechanism (mechanisms/gicv4_1_its_commands.h says what each kind sends, to which ITS, and how the
// lock, the ITS and the GITS_CREADR polling are timed):
//   command = "vsgi"   the guest changes an SGI's priority (a trapped GICR SGI-frame write): VSGI +
//                      VSYNC to find_4_1_its() of the vCPU's pCPU
//   command = "invdb"  its_vpe_4_1_send_inv: INVDB + VSYNC to find_4_1_its()
//   command = "vmovp"  vgic_v4_load after the vCPU thread moved: VMOVP + VSYNC; the thread alternates
//                      between its pinned pCPU and the pCPU `migrate_offset` further on (the wait
//                      runs on the pCPU it moved to); the simulation keeps the vCPU itself on its
//                      pinned pCPU (this workload sends no vSGI, so nothing routes through the vPE)
// Between operations a sender thinks (guest work, think_ns, fixed or Poisson) or sleeps until the
// next multiple of period_ns (every sender's k-th operation starts at k x period: bursts, as when a
// host reschedules a VM's vCPUs at once). The other vCPUs idle. Each operation is host work on the
// vCPU's behalf: the guest does not run and takes no interrupt meanwhile.
// Metrics: command_latency (the operation, from the trap or vcpu_load to the return: lock wait +
// posting + completion wait), lock_wait (its->lock), completion_wait (unlock -> wait's end).
// Counters: the model's (its_commands, its_batches, its_creadr_reads, its_wait_polls, its_waits_*).
// Resources: the model's, per ITS used (its<N>.command_queue, its<N>.lock), over the measured window.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "workload/builtin.h"
#include "workload/builtin_parts.h"
#include "workload/mechanisms/gicv4_1_its_commands.h"

namespace ipilab::workload {
namespace {

constexpr auto kUnits = unit_choices(FigureUnit::Ns, FigureUnit::Us);
const EnumParam<ItsCommandKind> kCommand{"command", ItsCommandKind::Vsgi, kItsCommandKindNames,
                           "what each operation sends: vsgi (a trapped SGI priority write -> VSGI + VSYNC), invdb "
                           "(its_vpe_4_1_send_inv -> INVDB + VSYNC) or vmovp (vgic_v4_load after a migration -> VMOVP + "
                           "VSYNC)"};
const IntParam kSenders{"senders", 1, 1, 1000, "the first N vCPUs issue operations"};
const FloatParam kThink{"think_ns", 0, 0, 1e12, "guest work between a sender's operations, ns (0: back to back)"};
const EnumParam<Arrivals> kArr{"arrivals", Arrivals::Fixed, kArrivalsNames, "think_ns is fixed, or the mean of an exponential"};
const FloatParam kPeriod{"period_ns", 0, 0, 1e12,
                         "> 0: every sender's k-th operation starts at k x period_ns (bursts; excludes think_ns)"};
const IntParam kMigrate{"migrate_offset", 1, 1, 1 << 20,
                        "command = vmovp: the thread alternates between its pCPU and the host CPU this many further on "
                        "(by id, wrapping)"};
const EnumParam<FigureUnit> kUnit{"unit", FigureUnit::Ns, kUnits, "unit of the figures"};
constexpr std::string_view kDefaultMechanism = "gicv4.1-vsgi";

std::vector<ParamInfo> params() {
  return {info(kCommand), info(kSenders), info(kThink), info(kArr), info(kPeriod), info(kMigrate), info(kUnit)};
}

/// What the programs of one run share (per run, not global): the warm-up count and the figures.
struct Shared {
  std::uint64_t warmup = 0, last = 0;  // operations begun after mark `warmup` and up to `last` count
  std::uint64_t marks = 0;
  sim::Histogram latency, lock_wait, completion_wait;
  std::uint64_t timeouts = 0;
  std::vector<std::string> messages;
};

class CommandProgram final : public Program {
 public:
  CommandProgram(ItsCommandModel& model, Shared& shared, ItsOpRequest req, int partner, sim::Ps think, bool poisson,
                 sim::Ps period)
      : model_(&model), shared_(&shared), req_(req), home_(req.pcpu), partner_(partner), think_(think), poisson_(poisson),
        period_(period) {}

  Op next(ProgramCtx& ctx) override {
    switch (phase_) {
      case Phase::Mark:
        phase_ = Phase::Pause;
        ++shared_->marks;
        measured_ = shared_->marks > shared_->warmup && shared_->marks <= shared_->last;
        return Op::mark();
      case Phase::Pause:
        phase_ = Phase::Begin;
        if (period_.v > 0) {
          ++k_;
          return Op::sleep_until(sim::Ps{period_.v * static_cast<std::int64_t>(k_)});
        }
        if (think_.v > 0) {
          if (!poisson_) return Op::compute(think_);
          const double u = ctx.rng->uniform01();
          return Op::compute(sim::Ps{static_cast<std::int64_t>(std::llround(-std::log1p(-u) * static_cast<double>(think_.v)))});
        }
        [[fallthrough]];
      case Phase::Begin: {
        phase_ = Phase::Running;
        if (req_.kind == ItsCommandKind::Vmovp) req_.pcpu = req_.pcpu == home_ ? partner_ : home_;
        return Op::host_work(model_->begin(req_, ctx.now, *ctx.rng));
      }
      case Phase::Running: {
        if (auto d = model_->next(req_.cpu, ctx.now, *ctx.rng)) return Op::host_work(*d);
        const ItsOpResult& r = model_->result(req_.cpu);
        if (measured_) {
          shared_->latency.record(r.end - r.start);
          shared_->lock_wait.record(r.lock_wait);
          shared_->completion_wait.record(r.completion_wait);
          if (!r.linux_message.empty()) {
            ++shared_->timeouts;
            if (shared_->messages.size() < 3) shared_->messages.push_back(r.linux_message);
          }
        }
        phase_ = Phase::Pause;
        ++shared_->marks;
        measured_ = shared_->marks > shared_->warmup && shared_->marks <= shared_->last;
        return Op::mark();
      }
    }
    return Op::stop();
  }

 private:
  enum class Phase { Mark, Pause, Begin, Running };
  ItsCommandModel* model_;
  Shared* shared_;
  ItsOpRequest req_;
  int home_, partner_;
  sim::Ps think_;
  bool poisson_;
  sim::Ps period_;
  Phase phase_ = Phase::Mark;
  std::uint64_t k_ = 0;
  bool measured_ = false;
};

class ItsCommands final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const int n = spec.vm.size();
    const auto senders = static_cast<int>(spec.params.get(kSenders, 1, n));
    const ItsCommandKind kind = spec.params.get(kCommand);
    const sim::Ps period = sim::from_ns(spec.params.get(kPeriod));
    if (period.v > 0 && spec.params.has(kThink.name))
      throw InputError(spec.params.place(kThink.name), "give think_ns or period_ns, not both");
    if (kind != ItsCommandKind::Vmovp && spec.params.has(kMigrate.name))
      throw InputError(spec.params.place(kMigrate.name), "only meaningful with command = \"vmovp\"");
    const sim::Ps think = sim::from_ns(spec.params.get(kThink));
    const Arrivals arrivals = spec.params.get(kArr);
    const bool poisson = arrivals == Arrivals::Poisson;
    const FigureUnit unit = spec.params.get(kUnit);
    Bound b(spec, kDefaultMechanism);
    require_arch(spec, b, Arch::Arm, "its_commands");
    auto* host = dynamic_cast<ItsCommandHost*>(b.mechanism.get());
    if (!host)
      throw InputError(spec.params.place("mechanism"),
                       fmt::format("mechanism \"{}\" sends no ITS commands; its_commands needs gicv4.1-vsgi", b.info->name));
    ItsCommandModel& model = host->its_commands();

    const int ncpus = static_cast<int>(spec.host->cpus.size());
    const auto offset = static_cast<int>(spec.params.get(kMigrate));
    Shared shared;
    shared.warmup = spec.warmup;
    shared.last = spec.warmup + spec.iterations;
    RunConfig cfg = run_config(spec, b);
    cfg.programs.resize(static_cast<std::size_t>(n));
    std::map<std::string, std::string> where;  // ITSs per issuing socket, for the settings
    for (int c = 0; c < senders; ++c) {
      ItsOpRequest req;
      req.cpu = static_cast<unsigned>(c);
      req.kind = kind;
      req.pcpu = spec.vm.pcpu_of(c);
      int partner = req.pcpu;
      if (kind == ItsCommandKind::Vmovp) {
        const auto it = std::find_if(spec.host->cpus.begin(), spec.host->cpus.end(),
                                     [&](const topology::Cpu& x) { return x.id == req.pcpu; });
        const auto idx = static_cast<int>(it - spec.host->cpus.begin());
        partner = spec.host->cpus[static_cast<std::size_t>((idx + offset) % ncpus)].id;
        if (partner == req.pcpu)
          throw InputError(spec.params.place(kMigrate.name),
                           fmt::format("vCPU {}'s thread would move from host CPU {} to itself (the host has {} CPUs)", c,
                                       req.pcpu, ncpus));
      }
      std::string its;
      for (int i : model.targets(kind, req.pcpu)) its += fmt::format("{}ITS{}", its.empty() ? "" : ",", i);
      where[fmt::format("socket {}", spec.host->cpu(req.pcpu).socket)] = its.empty() ? "none" : its;
      cfg.programs[static_cast<std::size_t>(c)] =
          std::make_unique<CommandProgram>(model, shared, req, partner, think, poisson, period);
    }
    RunOutput out = run_vm(cfg, b.pricer);

    MetricList m(spec, unit);
    m.add("command_latency",
          fmt::format("one {} operation on a sender, from its start (trap / vcpu_load) to the return: its->lock wait, "
                      "posting, completion wait",
                      its_command_kind_name(kind)),
          std::move(shared.latency));
    m.add("lock_wait", "waiting for its->lock behind other CPUs posting to the ITS", std::move(shared.lock_wait));
    m.add("completion_wait", "its_wait_for_range_completion: from the unlock to the read that ended the wait",
          std::move(shared.completion_wait));
    std::string w;
    for (const auto& [sock, its] : where) w += fmt::format("{}{} -> {}", w.empty() ? "" : "; ", sock, its);
    Settings settings{{"command", std::string(its_command_kind_name(kind))}, {"senders", std::to_string(senders)}, {"commands go to", w}};
    if (kind == ItsCommandKind::Vmovp) settings.emplace_back("migrate_offset", std::to_string(offset));
    settings.emplace_back("traffic", period.v > 0 ? fmt::format("every {} ns (bursts)", spec.params.get(kPeriod))
                                     : think.v > 0 ? fmt::format("think {} ns ({})", spec.params.get(kThink), name_of(kArrivalsNames, arrivals))
                                                   : std::string("back to back"));
    RunResult r = finish(spec, b, std::move(out), std::move(m), std::move(settings));
    if (shared.timeouts) {
      r.notes.push_back(fmt::format("{} of the measured operations' completion waits ran out of reads (1,000,000 "
                                    "GITS_CREADR reads); Linux reports: {}",
                                    shared.timeouts, fmt::join(shared.messages, " | ")));
    }
    return r;
  }
};

}  // namespace

WorkloadInfo describe_its_commands() {
  return builtin_workload<ItsCommands>(
      {"its_commands",
       "arm64 host driver ITS commands (VSGI, INVDB, VMOVP) from N vCPUs, each waiting for completion by polling "
       "GITS_CREADR; main metric: the operation's latency, completion wait included",
       params(),
       kDefaultMechanism,
       Arch::Arm,
       {"command_latency", "lock_wait", "completion_wait"}});
}

}  // namespace ipilab::workload
