#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "sweep/exec.h"

namespace ipilab::sweep {

namespace {

class LocalExecutor final : public Executor {
 public:
  bool is_root() const override { return true; }
  int rank() const override { return 0; }
  int ranks() const override { return 1; }
  const char* kind() const override { return "threads"; }

  std::vector<std::optional<std::string>> run(const std::vector<std::size_t>& todo, const Task& task,
                                              const ExecOptions& opt) override {
    std::vector<std::optional<std::string>> out(todo.size());
    std::atomic<std::size_t> next{0};
    std::mutex done_mu;
    std::size_t finished = 0;
    auto worker = [&] {
      for (;;) {
        if (opt.stop && opt.stop->load(std::memory_order_relaxed)) return;
        const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
        if (k >= todo.size()) return;
        std::string payload = task(todo[k]);
        std::lock_guard<std::mutex> lock(done_mu);
        ++finished;
        if (opt.on_done) opt.on_done(finished, payload);
        out[k] = std::move(payload);
      }
    };
    const std::size_t n = std::min<std::size_t>(std::max(1u, opt.jobs), todo.size());
    if (n <= 1) {
      worker();  // no thread for -j 1: the same code path, one worker
      return out;
    }
    std::vector<std::jthread> threads;
    threads.reserve(n);
    for (std::size_t i = 0; i < n; ++i) threads.emplace_back(worker);
    threads.clear();  // joins
    return out;
  }

  std::string broadcast(const std::string& text) override { return text; }
};

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return end && *end == '\0' && x > 0 && x < 1'000'000 ? static_cast<int>(x) : 0;
}

}  // namespace

std::unique_ptr<Executor> local_executor() { return std::make_unique<LocalExecutor>(); }

int launched_ranks() noexcept {
  // Open MPI's mpirun, MPICH/Hydra (and srun --mpi=pmi2), PMIx launchers, Slurm's srun.
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const int n = env_int(v)) return n;
  if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK")) {
    if (const int n = env_int("SLURM_NTASKS")) return n;
    return 2;  // launched by an MPI launcher that did not say how many: treat as several
  }
  return 1;
}

unsigned available_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  const unsigned h = std::thread::hardware_concurrency();
  return h ? h : 1;
}

#ifndef IPILAB_WITH_MPI
bool mpi_built() noexcept { return false; }
std::unique_ptr<Executor> mpi_executor() {
  throw UnavailableError(
      "this ipilab was built without MPI: rebuild with cmake -DIPILAB_MPI=ON (Debian: apt-get install libopenmpi-dev "
      "openmpi-bin) to spread a sweep over MPI ranks; without it, run one process with -j N");
}
#endif

}  // namespace ipilab::sweep
