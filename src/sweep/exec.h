// ipilab/sweep/exec.h — where the points run: worker threads on this machine, or MPI ranks.
//
// An Executor runs a list of independent tasks (one per point; a task maps a point index to a text
// payload, sweep/result.h) with dynamic assignment — a free worker takes the next task — so long
// points do not stall the others, and gathers the payloads, by position, on the root.
//
//   local: `jobs` std::jthreads pull the next position from one atomic counter.
//   MPI:   rank 0 hands out positions on request (MPI point-to-point messages; a rank asks for a few
//          at a time so it is never idle waiting) and gathers the payloads; every rank runs `jobs`
//          threads (only each rank's main thread calls MPI: MPI_THREAD_FUNNELED). Rank 0 computes
//          too. Only rank 0 (is_root()) gets the payloads; it alone writes output.
//
// Stopping: when *stop becomes true (Ctrl-C), no new task starts anywhere; running tasks finish and
// their payloads are kept; positions never started come back as nullopt.
// Tasks must be safe to call from several threads at once and must not throw.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ipilab::sweep {

using Task = std::function<std::string(std::size_t index)>;

struct ExecOptions {
  unsigned jobs = 1;                         ///< worker threads (per rank), >= 1
  const std::atomic<bool>* stop = nullptr;   ///< set -> start no new task
  /// On the root, after each finished task with its payload (serialised: never called twice at once).
  std::function<void(std::size_t finished, const std::string& payload)> on_done;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual bool is_root() const = 0;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  /// Runs task(todo[k]) for every k. On the root: payload k at position k (nullopt: not started
  /// because of a stop); elsewhere an empty vector.
  virtual std::vector<std::optional<std::string>> run(const std::vector<std::size_t>& todo, const Task& task,
                                                      const ExecOptions& opt) = 0;
  /// The root's `text`, on every rank.
  virtual std::string broadcast(const std::string& text) = 0;
  virtual const char* kind() const = 0;  ///< "threads" or "mpi"
};

std::unique_ptr<Executor> local_executor();

/// Whether this binary was built with MPI (-DIPILAB_MPI=ON).
bool mpi_built() noexcept;
/// The number of processes a launcher (mpirun, mpiexec, srun) started this one among, from its
/// environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX/SLURM variables); 1 when not launched so.
int launched_ranks() noexcept;
/// MPI_Init_thread(FUNNELED) now, MPI_Finalize when the executor is destroyed. Without MPI support
/// in this build: UnavailableError.
std::unique_ptr<Executor> mpi_executor();

/// The CPUs this process may run on (sched_getaffinity), at least 1.
unsigned available_cpus() noexcept;

}  // namespace ipilab::sweep
