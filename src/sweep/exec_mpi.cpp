// The MPI executor (built with -DIPILAB_MPI=ON). Protocol, all point-to-point on MPI_COMM_WORLD:
//   rank r -> 0  kRequest  one int: how many positions it wants (it keeps up to 2 x jobs queued)
//   0 -> rank r  kWork     int64 positions (none: no more work; the rank then drains and finishes)
//   rank r -> 0  kResult   int64 position, then the payload bytes
//   rank r -> 0  kFinished no data: the rank has sent every result it will send
// Rank 0 serves requests and results from its main thread (polling with MPI_Iprobe and short sleeps,
// so the poll does not take a core from the workers) while its own worker threads take positions
// from the same counter. Only main threads call MPI (MPI_THREAD_FUNNELED).
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "sweep/exec.h"

namespace ipilab::sweep {

namespace {

enum Tag : int { kRequest = 1, kWork = 2, kResult = 3, kFinished = 4 };
constexpr auto kPoll = std::chrono::microseconds(200);

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(fmt::format("MPI: {} failed (error {})", what, rc));
}

// Positions handed to this rank's worker threads, and the results they produced.
struct LocalQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::size_t> todo;
  std::deque<std::pair<std::size_t, std::string>> done;
  bool no_more = false;  // nothing more will be queued
  unsigned busy = 0;     // tasks running now
};

class MpiExecutor final : public Executor {
 public:
  MpiExecutor() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      throw UnavailableError("this MPI library does not support threads (MPI_THREAD_FUNNELED)");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiExecutor() override { MPI_Finalize(); }

  bool is_root() const override { return rank_ == 0; }
  int rank() const override { return rank_; }
  int ranks() const override { return size_; }
  const char* kind() const override { return "mpi"; }

  std::string broadcast(const std::string& text) override {
    std::uint64_t n = text.size();
    check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    std::string out = rank_ == 0 ? text : std::string(n, '\0');
    if (n) check(MPI_Bcast(out.data(), static_cast<int>(n), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return out;
  }

  std::vector<std::optional<std::string>> run(const std::vector<std::size_t>& todo, const Task& task,
                                              const ExecOptions& opt) override {
    if (rank_ == 0) return run_root(todo, task, opt);
    run_worker(todo, task, opt);
    return {};
  }

 private:
  static bool stopped(const ExecOptions& opt) { return opt.stop && opt.stop->load(std::memory_order_relaxed); }

  std::vector<std::optional<std::string>> run_root(const std::vector<std::size_t>& todo, const Task& task,
                                                   const ExecOptions& opt) {
    std::vector<std::optional<std::string>> out(todo.size());
    std::atomic<std::size_t> next{0};
    std::mutex mu;  // out, finished, on_done
    std::size_t finished = 0;
    auto record = [&](std::size_t k, std::string payload) {
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      if (opt.on_done) opt.on_done(finished, payload);
      out[k] = std::move(payload);
    };
    auto take = [&]() -> std::optional<std::size_t> {
      if (stopped(opt)) return std::nullopt;
      const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= todo.size()) return std::nullopt;
      return k;
    };
    std::vector<std::jthread> threads;
    for (unsigned i = 0; i < std::max(1u, opt.jobs); ++i)
      threads.emplace_back([&] {
        while (auto k = take()) record(*k, task(todo[*k]));
      });

    int active = size_ - 1;
    std::vector<char> buf;
    while (active > 0) {
      int flag = 0;
      MPI_Status st;
      check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
      if (!flag) {
        std::this_thread::sleep_for(kPoll);
        continue;
      }
      int count = 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      buf.resize(static_cast<std::size_t>(count) + 1);
      check(MPI_Recv(buf.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      if (st.MPI_TAG == kRequest) {
        int want = 0;
        if (count == sizeof(int)) std::memcpy(&want, buf.data(), sizeof(int));
        std::vector<std::int64_t> give;
        for (int i = 0; i < want; ++i) {
          auto k = take();
          if (!k) break;
          give.push_back(static_cast<std::int64_t>(*k));
        }
        check(MPI_Send(give.data(), static_cast<int>(give.size() * sizeof(std::int64_t)), MPI_BYTE, st.MPI_SOURCE, kWork,
                       MPI_COMM_WORLD),
              "MPI_Send");
      } else if (st.MPI_TAG == kResult) {
        std::int64_t k = -1;
        if (count < static_cast<int>(sizeof k)) throw std::runtime_error("MPI: short result message");
        std::memcpy(&k, buf.data(), sizeof k);
        if (k < 0 || static_cast<std::size_t>(k) >= todo.size()) throw std::runtime_error("MPI: result for an unknown position");
        record(static_cast<std::size_t>(k), std::string(buf.data() + sizeof k, static_cast<std::size_t>(count) - sizeof k));
      } else if (st.MPI_TAG == kFinished) {
        --active;
      }
    }
    threads.clear();  // joins the local workers
    return out;
  }

  void run_worker(const std::vector<std::size_t>& todo, const Task& task, const ExecOptions& opt) {
    LocalQueue q;
    const unsigned jobs = std::max(1u, opt.jobs);
    std::vector<std::jthread> threads;
    for (unsigned i = 0; i < jobs; ++i)
      threads.emplace_back([&] {
        for (;;) {
          std::size_t k = 0;
          {
            std::unique_lock<std::mutex> lock(q.mu);
            q.cv.wait(lock, [&] { return !q.todo.empty() || q.no_more; });
            if (q.todo.empty()) return;
            k = q.todo.front();
            q.todo.pop_front();
            ++q.busy;
          }
          std::string payload = task(todo[k]);
          std::lock_guard<std::mutex> lock(q.mu);
          q.done.emplace_back(k, std::move(payload));
          --q.busy;
        }
      });

    bool requested = false, no_more = false;
    std::vector<std::int64_t> work;
    for (;;) {
      bool progress = false;
      std::deque<std::pair<std::size_t, std::string>> done;
      std::size_t queued = 0;
      bool idle = false;
      {
        std::lock_guard<std::mutex> lock(q.mu);
        done.swap(q.done);
        queued = q.todo.size() + q.busy;
        idle = q.todo.empty() && q.busy == 0;
      }
      for (auto& [k, payload] : done) {
        std::string msg(sizeof(std::int64_t), '\0');
        const auto k64 = static_cast<std::int64_t>(k);
        std::memcpy(msg.data(), &k64, sizeof k64);
        msg += payload;
        check(MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_BYTE, 0, kResult, MPI_COMM_WORLD), "MPI_Send");
        progress = true;
      }
      if (no_more && idle && done.empty()) {
        std::lock_guard<std::mutex> lock(q.mu);
        if (q.done.empty()) break;
        continue;
      }
      const std::size_t want = 2 * static_cast<std::size_t>(jobs);
      if (!no_more && !requested && queued < want && !stopped(opt)) {
        const int n = static_cast<int>(want - queued);
        check(MPI_Send(&n, sizeof n, MPI_BYTE, 0, kRequest, MPI_COMM_WORLD), "MPI_Send");
        requested = true;
        progress = true;
      }
      if (requested) {
        int flag = 0;
        MPI_Status st;
        check(MPI_Iprobe(0, kWork, MPI_COMM_WORLD, &flag, &st), "MPI_Iprobe");
        if (flag) {
          int count = 0;
          MPI_Get_count(&st, MPI_BYTE, &count);
          work.assign(static_cast<std::size_t>(count) / sizeof(std::int64_t), 0);
          check(MPI_Recv(work.data(), count, MPI_BYTE, 0, kWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
          requested = false;
          progress = true;
          std::lock_guard<std::mutex> lock(q.mu);
          if (work.empty()) no_more = true;
          for (auto k : work) {
            if (k < 0 || static_cast<std::size_t>(k) >= todo.size()) throw std::runtime_error("MPI: work for an unknown position");
            q.todo.push_back(static_cast<std::size_t>(k));
          }
          q.no_more = no_more;
          q.cv.notify_all();
        }
      }
      if (stopped(opt) && !requested && !no_more) {
        std::lock_guard<std::mutex> lock(q.mu);
        no_more = true;
        q.no_more = true;
        q.cv.notify_all();
      }
      if (!progress) std::this_thread::sleep_for(kPoll);
    }
    {
      std::lock_guard<std::mutex> lock(q.mu);
      q.no_more = true;
      q.cv.notify_all();
    }
    threads.clear();
    check(MPI_Send(nullptr, 0, MPI_BYTE, 0, kFinished, MPI_COMM_WORLD), "MPI_Send");
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

bool mpi_built() noexcept { return true; }
std::unique_ptr<Executor> mpi_executor() { return std::make_unique<MpiExecutor>(); }

}  // namespace ipilab::sweep
