#include "trace/record.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "trace/tracefs_compat.h"

extern "C" {
#include <traceevent/kbuffer.h>
}

#include "common/error.h"
#include "common/output.h"
#include "trace/dat_writer.h"
#include "trace/live.h"
#include "trace/text_reader.h"
#include "trace/tracepoints.h"

namespace ipilab::trace {

namespace {

volatile sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

struct Line {
  std::uint64_t ts;
  int cpu;
  std::string text;
};

struct Recorder {
  tep_handle* tep = nullptr;
  std::vector<Line> batch;
  std::unordered_map<int, std::string> comms;
  std::unordered_map<int, bool> wanted;  // event id -> ours
  trace_seq seq{};
  std::uint64_t lost = 0;
  bool discard = false;  // draining what the top-level buffer held before the recording

  Recorder() { trace_seq_init(&seq); }
  ~Recorder() {
    trace_seq_destroy(&seq);
    if (tep) tep_free(tep);
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  const std::string& comm(int pid) {
    auto it = comms.find(pid);
    if (it != comms.end()) return it->second;
    std::string c;
    if (pid == 0) c = "<idle>";
    else {
      std::ifstream f(fmt::format("/proc/{}/comm", pid));
      std::getline(f, c);
      if (c.empty()) {
        const char* t = tep_data_comm_from_pid(tep, pid);
        c = t ? t : "<...>";
      }
    }
    if (comms.size() > 100000) comms.clear();
    return comms.emplace(pid, c).first->second;
  }
};

int on_raw_event(tep_event* event, tep_record* rec, int cpu, void* data) {
  auto* r = static_cast<Recorder*>(data);
  if (r->discard) return 0;
  if (rec->missed_events > 0) r->lost += static_cast<std::uint64_t>(rec->missed_events);
  if (!event || !r->wanted.count(event->id)) return 0;
  trace_seq_reset(&r->seq);
  tep_print_event(r->tep, &r->seq, rec, "%s", TEP_PRINT_INFO);
  trace_seq_terminate(&r->seq);
  const int pid = tep_data_pid(r->tep, rec);
  const std::string name = std::string(event->name) + ":";
  r->batch.push_back({rec->ts, cpu,
                      fmt::format("{:>16}-{:<5} [{:03}] {}.{:09}: {:<20} {}\n", r->comm(pid), pid, cpu,
                                  rec->ts / 1'000'000'000ull, rec->ts % 1'000'000'000ull, name,
                                  std::string_view(r->seq.buffer, r->seq.len))});
  return 0;
}

// Raw pages of every CPU, appended to one temporary file per CPU (trace.dat output).
struct PageRecorder {
  std::vector<tracefs_cpu*> cpus;
  std::vector<std::FILE*> files;
  std::vector<char> page;
  int page_size = 4096;
  std::uint64_t events = 0, lost = 0;
  kbuffer* kbuf = nullptr;
  Recorder* decode = nullptr;  // live: every event also printed as a line into decode->batch
  bool store = true;           // false: pages are decoded and dropped (live without --save)
  std::vector<std::uint64_t> newest;  // per CPU, the newest timestamp read (live)

  ~PageRecorder() {
    for (auto* c : cpus)
      if (c) tracefs_cpu_close(c);
    for (auto* f : files)
      if (f) std::fclose(f);
    if (kbuf) kbuffer_free(kbuf);
  }

  void open(tracefs_instance* inst, int ncpu, const std::string& folder) {
    kbuf = kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4, KBUFFER_ENDIAN_SAME_AS_HOST);
    for (int c = 0; c < ncpu; ++c) {
      tracefs_cpu* t = tracefs_cpu_open(inst, c, true);
      cpus.push_back(t);
      if (t) page_size = std::max(page_size, tracefs_cpu_read_size(t));
      std::string tmpl = folder + "/.ipilab-record-cpu.XXXXXX";
      const int fd = ::mkstemp(tmpl.data());
      if (fd < 0) throw InputError("-o", fmt::format("cannot create a file in '{}': {}", folder, std::strerror(errno)));
      ::unlink(tmpl.c_str());
      files.push_back(::fdopen(fd, "w+b"));
    }
    page.assign(static_cast<std::size_t>(page_size), 0);
    newest.assign(cpus.size(), 0);
  }

  // Counts the events of one page (what the summary reports) and appends it.
  void keep(std::size_t cpu, int n, bool discard) {
    if (n <= 0 || discard) return;
    std::memset(page.data() + n, 0, page.size() - static_cast<std::size_t>(n));
    kbuffer_load_subbuffer(kbuf, page.data());
    const int missed = kbuffer_missed_events(kbuf);
    if (missed > 0) lost += static_cast<std::uint64_t>(missed);
    unsigned long long ts = 0;
    bool first = true;
    for (void* d = kbuffer_read_event(kbuf, &ts); d; d = kbuffer_next_event(kbuf, &ts)) {
      ++events;
      if (decode) decode_event(cpu, d, ts, first ? missed : 0);
      first = false;
      newest[cpu] = std::max<std::uint64_t>(newest[cpu], ts);
    }
    if (!store) return;
    if (std::fwrite(page.data(), 1, page.size(), files[cpu]) != page.size())
      throw InputError("-o", fmt::format("cannot write: {}", std::strerror(errno)));
  }

  // The event as `trace-cmd report -t` prints it (on_raw_event), after a "CPU:N [LOST K EVENTS]"
  // line when the ring buffer dropped events before it (as trace-cmd report marks them).
  void decode_event(std::size_t cpu, void* data, unsigned long long ts, int missed) {
    if (missed > 0)
      decode->batch.push_back({ts, static_cast<int>(cpu), fmt::format("CPU:{} [LOST {} EVENTS]\n", cpu, missed)});
    tep_record r{};
    r.ts = ts;
    r.cpu = static_cast<int>(cpu);
    r.data = data;
    r.size = static_cast<int>(kbuffer_event_size(kbuf));
    tep_event* e = tep_find_event_by_record(decode->tep, &r);
    on_raw_event(e, &r, static_cast<int>(cpu), decode);
  }

  /// Reads every CPU's full pages until each is drained (`discard`: counted nowhere, not kept).
  void read_all(bool discard) { read_round(0, std::chrono::steady_clock::time_point::max(), discard); }

  /// One round of the live reader: a full page from each CPU in turn, until every CPU is drained
  /// or `until` has passed (a reader slower than the tracer would otherwise never leave a CPU).
  /// Returns the time up to which every CPU has been read: a drained CPU holds nothing older than
  /// `before` (the newest event read before the round began, so written before it), a CPU left
  /// with pages nothing older than the newest event read from it (each CPU's buffer is in order).
  std::uint64_t read_round(std::uint64_t before, std::chrono::steady_clock::time_point until, bool discard = false) {
    std::vector<bool> open(cpus.size());
    std::size_t left = 0;
    for (std::size_t c = 0; c < cpus.size(); ++c) left += (open[c] = cpus[c] != nullptr) ? 1 : 0;
    while (left > 0) {
      for (std::size_t c = 0; c < cpus.size(); ++c) {
        if (!open[c]) continue;
        const int n = tracefs_cpu_read(cpus[c], page.data(), true);
        if (n <= 0) {
          open[c] = false;
          --left;
          continue;
        }
        keep(c, n, discard);
      }
      if (left > 0 && std::chrono::steady_clock::now() >= until) break;
    }
    std::uint64_t bound = before;
    for (std::size_t c = 0; c < cpus.size(); ++c)
      if (open[c]) bound = std::min(bound, newest[c]);
    return bound;
  }

  void flush_all() {
    for (std::size_t c = 0; c < cpus.size(); ++c) {
      if (!cpus[c]) continue;
      for (int guard = 0; guard < 1 << 20; ++guard) {
        const int n = tracefs_cpu_flush(cpus[c], page.data());
        if (n <= 0) break;
        keep(c, n, false);
      }
    }
    for (auto* f : files) std::rewind(f);
  }
};

std::string read_file_or_empty(const char* path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Marks the recorded tracepoints (tracepoints.h) that this kernel has as wanted and lists the
// others in result.missing — except those of the other architecture (the Arm ipi_raise/ipi_entry
// on x86, irq_vectors on Arm), which are expected to be absent. Returns those it has, as
// (system, event).
std::vector<std::pair<std::string, std::string>> enable_known_events(Recorder& rec, RecordResult& result) {
  std::vector<const Tracepoint*> present, missing;
  for (const Tracepoint& t : tracepoints()) {
    if (!t.recorded) continue;
    const std::string sys(t.system), name(t.name);
    tep_event* e = tep_find_event_by_name(rec.tep, sys.c_str(), name.c_str());
    if (!e) {
      missing.push_back(&t);
      continue;
    }
    present.push_back(&t);
    rec.wanted[e->id] = true;
  }
  auto has_arch = [&](TracepointArch a) {
    return std::any_of(present.begin(), present.end(), [&](const Tracepoint* t) { return t->arch == a; });
  };
  const bool x86 = has_arch(TracepointArch::X86), arm = has_arch(TracepointArch::Arm);
  for (const Tracepoint* t : missing) {
    const bool other_arch = (x86 && t->arch == TracepointArch::Arm) || (arm && t->arch == TracepointArch::X86);
    if (!other_arch) result.missing.push_back(qualified_name(*t));
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const Tracepoint* t : present) out.emplace_back(std::string(t->system), std::string(t->name));
  return out;
}

using Events = std::vector<std::pair<std::string, std::string>>;

// Where the recording goes and where tracefs is.
struct Places {
  std::filesystem::path out, folder;
  const char* tracing_dir = nullptr;
};

Places check_places(const RecordOptions& opt) {
  Places p;
  p.out = opt.output;
  p.folder = p.out.has_parent_path() ? p.out.parent_path() : ".";
  output::check_outputs({{"-o", opt.output.string(), false}});  // the folder exists and is writable
  p.tracing_dir = tracefs_tracing_dir();
  if (!p.tracing_dir)
    throw UnavailableError("tracefs is not mounted and could not be mounted (needs root: mount -t tracefs nodev "
                           "/sys/kernel/tracing)");
  if (::access((std::string(p.tracing_dir) + "/instances").c_str(), W_OK) != 0)
    throw UnavailableError(fmt::format("no write access to {} (run as root)", p.tracing_dir));
  return p;
}

// The running kernel's formats of the recorded systems, and its symbols.
void load_event_formats(Recorder& rec, const char* tracing_dir) {
  static const char* const kSystems[] = {"ipi", "csd", "irq_vectors", "sched", nullptr};
  rec.tep = tracefs_local_events_system(nullptr, kSystems);
  if (!rec.tep) throw UnavailableError(fmt::format("cannot read the event formats under {}/events", tracing_dir));
  const std::string ksyms = read_file_or_empty("/proc/kallsyms");
  if (!ksyms.empty()) tep_parse_kallsyms(rec.tep, ksyms.c_str());
}

// The formats, and the recorded events this kernel has (UnavailableError when it has none).
Events events_to_record(Recorder& rec, const char* tracing_dir, RecordResult& result) {
  load_event_formats(rec, tracing_dir);
  Events present = enable_known_events(rec, result);
  if (present.empty())
    throw UnavailableError("this kernel has none of the IPI events (ipi:* needs Linux >= 6.4 for ipi_send_cpu, "
                           "csd:* >= 6.5, irq_vectors:* is x86)");
  return present;
}

// The ring buffer recorded into: a tracefs instance of its own (removed at the end), or the top
// level, whose tracing_on, event enables and buffer size are saved and restored. Restored also when
// the recording fails (destructor).
class TraceBuffer {
 public:
  TraceBuffer(const RecordOptions& opt, const Events& present, const char* tracing_dir)
      : present_(present), top_(opt.instance.empty()) {
    if (top_) {
      saved_tracing_on_ = tracefs_trace_is_on(nullptr);
      for (const auto& [sys, name] : present_)
        saved_enable_.push_back(tracefs_event_is_enabled(nullptr, sys.c_str(), name.c_str()) == TRACEFS_ALL_ENABLED);
      return;
    }
    if (tracefs_instance_exists(opt.instance.c_str()))
      throw UnavailableError(fmt::format("tracefs instance '{}' already exists (another recording?); remove it with "
                                         "'rmdir {}/instances/{}' or pick --instance",
                                         opt.instance, tracing_dir, opt.instance));
    inst_ = tracefs_instance_create(opt.instance.c_str());
    if (!inst_) throw UnavailableError(fmt::format("cannot create tracefs instance '{}'", opt.instance));
  }
  ~TraceBuffer() { restore(); }
  TraceBuffer(const TraceBuffer&) = delete;
  TraceBuffer& operator=(const TraceBuffer&) = delete;

  tracefs_instance* inst() const { return inst_; }
  bool top() const { return top_; }

  /// Tracing off, the buffer size (0: as is), the events enabled.
  void configure(unsigned buffer_kb) {
    tracefs_trace_off(inst_);
    if (buffer_kb > 0) {
      if (top_) saved_buffer_kb_ = tracefs_instance_get_buffer_size(nullptr, 0);
      if (tracefs_instance_set_buffer_size(inst_, buffer_kb, -1) != 0)
        throw UnavailableError(fmt::format("cannot set buffer_size_kb to {}", buffer_kb));
    }
    for (const auto& [sys, name] : present_)
      if (tracefs_event_enable(inst_, sys.c_str(), name.c_str()) != 0)
        throw UnavailableError(fmt::format("cannot enable {}:{}", sys, name));
  }

 private:
  void restore() {
    if (!top_) {
      if (!inst_) return;
      tracefs_trace_off(inst_);
      tracefs_instance_destroy(inst_);
      tracefs_instance_free(inst_);
      inst_ = nullptr;
      return;
    }
    for (std::size_t i = 0; i < present_.size() && i < saved_enable_.size(); ++i)
      if (!saved_enable_[i]) tracefs_event_disable(nullptr, present_[i].first.c_str(), present_[i].second.c_str());
    if (saved_buffer_kb_ > 0) tracefs_instance_set_buffer_size(nullptr, static_cast<std::size_t>(saved_buffer_kb_), -1);
    if (saved_tracing_on_ == 0) tracefs_trace_off(nullptr);
    else if (saved_tracing_on_ == 1) tracefs_trace_on(nullptr);
    saved_tracing_on_ = -1;
    saved_buffer_kb_ = -1;
    saved_enable_.assign(saved_enable_.size(), true);
  }

  const Events& present_;
  bool top_;
  tracefs_instance* inst_ = nullptr;
  int saved_tracing_on_ = -1;
  std::vector<bool> saved_enable_;
  ssize_t saved_buffer_kb_ = -1;
};

// SIGINT and SIGTERM stop the recording (g_stop) instead of the process; restored at the end.
struct StopSignals {
  struct sigaction old_int {}, old_term {};
  StopSignals() {
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

// The command run while recording (same process group); killed if the recording fails.
class Child {
 public:
  explicit Child(const std::vector<std::string>& command) {
    if (command.empty()) return;
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) exec(command, pipefd[1]);
    ::close(pipefd[1]);
    int err = 0;
    const ssize_t n = ::read(pipefd[0], &err, sizeof err);  // exec's errno, or EOF when it ran
    ::close(pipefd[0]);
    if (n == static_cast<ssize_t>(sizeof err)) {
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
      throw InputError("command", fmt::format("cannot run '{}': {}", command[0], std::strerror(err)));
    }
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool running() const { return pid_ > 0; }
  /// The exit status if it has ended (128 + signal if killed), else nullopt.
  std::optional<int> poll() {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  /// Stops it (SIGTERM); a command ended by that signal counts as status 0 (we stopped it).
  int stop() {
    int status = 0;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) return 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  [[noreturn]] static void exec(const std::vector<std::string>& command, int error_fd) {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    std::vector<char*> argv;
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const int err = errno;
    (void)!::write(error_fd, &err, sizeof err);
    ::_exit(127);
  }
  pid_t pid_ = -1;
};

// Moves the new lines into `held` and sorts it by time.
void sort_held(Recorder& rec, std::vector<Line>& held) {
  for (auto& l : rec.batch) held.push_back(std::move(l));
  rec.batch.clear();
  std::stable_sort(held.begin(), held.end(), [](const Line& a, const Line& b) { return a.ts < b.ts; });
}

// How many of the first lines of sorted `held` are at or before `bound`.
std::size_t lines_up_to(const std::vector<Line>& held, std::uint64_t bound) {
  std::size_t n = 0;
  while (n < held.size() && held[n].ts <= bound) ++n;
  return n;
}

// Moves the new lines into `held` and sorts it by time; returns how many of its first lines are
// `hold_back` older than the newest (all of them with `all`): those no CPU can still precede.
std::size_t lines_in_order(Recorder& rec, std::vector<Line>& held, std::uint64_t hold_back, bool all) {
  sort_held(rec, held);
  if (all) return held.size();
  const std::uint64_t newest = held.empty() ? 0 : held.back().ts;
  return newest < hold_back ? 0 : lines_up_to(held, newest - hold_back);
}

// Where the events go: the raw pages of each CPU (trace.dat), or `trace-cmd report -t` lines
// sorted by time with a hold-back (text).
class RecordingOutput {
 public:
  RecordingOutput(const RecordOptions& opt, Recorder& rec, tracefs_instance* inst, output::AtomicFile& f,
                  std::uint32_t cpus, const std::filesystem::path& folder)
      : text_(opt.text), rec_(rec), inst_(inst), f_(f) {
    if (text_) f.write(fmt::format("cpus={}\n", cpus));
    else pages_.open(inst, static_cast<int>(cpus), folder.string());
  }

  /// Consumes what the buffer held before the recording (the top level's older events).
  void drain() {
    if (text_) {
      rec_.discard = true;
      tracefs_iterate_raw_events(rec_.tep, nullptr, nullptr, 0, on_raw_event, &rec_);
      rec_.discard = false;
      return;
    }
    pages_.read_all(true);
    for (int guard = 0; guard < 1 << 20; ++guard) {
      bool any = false;
      for (auto* c : pages_.cpus)
        if (c && tracefs_cpu_flush(c, pages_.page.data()) > 0) any = true;
      if (!any) break;
    }
  }

  /// Reads what the buffer has; `all`: everything (the end), else what is older than the hold-back.
  void flush(bool all, RecordResult& result) {
    if (!text_) {
      if (all) pages_.flush_all();
      else pages_.read_all(false);
      result.events = pages_.events;
      return;
    }
    constexpr std::uint64_t kHoldBackNs = 20'000'000;
    tracefs_iterate_raw_events(rec_.tep, inst_, nullptr, 0, on_raw_event, &rec_);
    const std::size_t n = lines_in_order(rec_, held_, kHoldBackNs, all);
    for (std::size_t i = 0; i < n; ++i) f_.write(held_[i].text);
    result.events += n;
    held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(n));
  }

  std::uint64_t lost() const { return text_ ? rec_.lost : pages_.lost; }

  /// The trace.dat around the recorded pages (dat_writer.h).
  // A write error is kept by the AtomicFile and thrown, with its reason, by prepare(); the
  // temporary file is removed when the AtomicFile dies uncommitted.
  void write_dat(const char* tracing_dir) {
    DatContents contents = dat_contents_from_tracefs(tracing_dir, {"ipi", "csd", "irq_vectors", "sched"});
    contents.page_size = static_cast<std::uint32_t>(pages_.page_size);
    contents.cpu_pages = pages_.files;
    try {
      write_dat_v6(f_.stream(), contents);
    } catch (const std::runtime_error& e) {
      f_.prepare();  // throws the kept write error (InputError: -o and the reason), if that was it
      throw InputError("-o", e.what());
    }
  }

 private:
  bool text_;
  Recorder& rec_;
  tracefs_instance* inst_;
  output::AtomicFile& f_;
  PageRecorder pages_;
  std::vector<Line> held_;
};

// Reads the buffers every 100 ms until the command ends, the duration passes or a signal comes.
void record_until_done(const RecordOptions& opt, std::chrono::steady_clock::time_point start, Child& child,
                       RecordingOutput& output, RecordResult& result) {
  const double limit = opt.duration_s > 0 ? opt.duration_s : (opt.command.empty() ? 1.0 : 0.0);
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    output.flush(false, result);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool over = (limit > 0 && elapsed >= limit) || g_stop;
    if (!child.running()) {
      if (over) return;
      continue;
    }
    if (const auto status = child.poll()) {
      result.command_status = *status;
      return;
    }
    if (over) {
      result.command_status = child.stop();
      return;
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> recorded_events() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Tracepoint& t : tracepoints())
    if (t.recorded) out.emplace_back(std::string(t.system), std::string(t.name));
  return out;
}

bool tracefs_usable() {
  const char* dir = tracefs_tracing_dir();
  if (!dir) return false;
  return ::access((std::string(dir) + "/instances").c_str(), W_OK) == 0;
}

RecordResult record_trace(const RecordOptions& opt) {
  RecordResult result;
  const Places where = check_places(opt);
  // From here SIGINT/SIGTERM stop the recording instead of the process, so that one arriving while
  // the instance is set up still removes it (and writes a complete, possibly empty, trace).
  StopSignals signals;
  Recorder rec;
  const Events present = events_to_record(rec, where.tracing_dir, result);
  TraceBuffer buffer(opt, present, where.tracing_dir);
  buffer.configure(opt.buffer_kb);
  output::AtomicFile file(where.out, "-o");
  const long ncpu = ::sysconf(_SC_NPROCESSORS_CONF);
  result.cpus = ncpu > 0 ? static_cast<std::uint32_t>(ncpu) : 0;
  RecordingOutput output(opt, rec, buffer.inst(), file, result.cpus, where.folder);
  if (buffer.top()) output.drain();  // the top-level buffer may hold older events: not ours
  const auto start = std::chrono::steady_clock::now();
  tracefs_trace_on(buffer.inst());
  Child child(opt.command);
  record_until_done(opt, start, child, output, result);
  tracefs_trace_off(buffer.inst());
  output.flush(true, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.lost = output.lost();
  if (!opt.text) output.write_dat(where.tracing_dir);
  file.commit();
  return result;
}

}  // namespace ipilab::trace

// ---- live (live.h) ----------------------------------------------------------------------------------

namespace ipilab::trace {

namespace {

// Feeds the parser, in time order, the held lines at or before `bound` (all of them with `all`).
void feed_held(Recorder& rec, std::vector<Line>& held, TextTraceParser& parser, std::uint64_t bound, bool all) {
  sort_held(rec, held);
  const std::size_t n = all ? held.size() : lines_up_to(held, bound);
  for (std::size_t i = 0; i < n; ++i) {
    std::string_view text = held[i].text;
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    parser.feed_line(text);
  }
  held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(n));
}

const char* usable_tracing_dir() {
  const char* dir = tracefs_tracing_dir();
  if (!dir)
    throw UnavailableError("tracefs is not mounted and could not be mounted (needs root: mount -t tracefs nodev "
                           "/sys/kernel/tracing)");
  if (::access((std::string(dir) + "/instances").c_str(), W_OK) != 0)
    throw UnavailableError(fmt::format("no write access to {} (run as root)", dir));
  return dir;
}

}  // namespace

LiveResult live_trace(const LiveOptions& opt, EventSink& sink, const std::function<void(double)>& tick) {
  LiveResult out;
  RecordResult& result = out.record;
  Places where;
  where.out = opt.save;
  where.folder = opt.save.empty() ? std::filesystem::temp_directory_path()
                                  : (opt.save.has_parent_path() ? opt.save.parent_path() : ".");
  std::error_code ec;
  if (!opt.save.empty() && !std::filesystem::is_directory(where.folder, ec))
    throw InputError("--save", fmt::format("folder '{}' does not exist", where.folder.string()));
  where.tracing_dir = usable_tracing_dir();
  Recorder rec;
  const Events present = events_to_record(rec, where.tracing_dir, result);
  RecordOptions ro;
  ro.instance = opt.instance.empty() ? std::string("ipilab-live") : opt.instance;
  TraceBuffer buffer(ro, present, where.tracing_dir);
  buffer.configure(opt.buffer_kb);
  std::optional<output::AtomicFile> file;
  if (!opt.save.empty()) file.emplace(where.out, "--save");
  const long ncpu = ::sysconf(_SC_NPROCESSORS_CONF);
  result.cpus = ncpu > 0 ? static_cast<std::uint32_t>(ncpu) : 0;
  PageRecorder pages;
  pages.decode = &rec;
  pages.store = file.has_value();
  pages.open(buffer.inst(), static_cast<int>(result.cpus), where.folder.string());
  out.info.format = TraceFormat::TraceCmdReport;
  TextTraceParser parser("live", sink, out.info);
  parser.feed_line(fmt::format("cpus={}", result.cpus));  // the form of `trace-cmd report` text, as parsed
  out.info.format = TraceFormat::LiveTracefs;
  std::vector<Line> held;
  StopSignals signals;
  const auto start = std::chrono::steady_clock::now();
  tracefs_trace_on(buffer.inst());
  double next_tick = opt.interval_s > 0 ? opt.interval_s : 1.0;
  // A line is released once every CPU has been read past it (read_round), in time order. A round
  // reads each CPU until it is drained or 250 ms have passed: a reader slower than the tracer (a
  // sanitizer build under an IPI storm) still ends at --duration, holding lines back for longer.
  // (Releasing a fixed time behind the newest event was not enough: when decoding is slow the CPUs
  // read first get newer events before the next round.)
  std::uint64_t read_before = 0;  // the newest timestamp read before this round
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::uint64_t bound =
        pages.read_round(read_before, std::chrono::steady_clock::now() + std::chrono::milliseconds(250));
    for (const Line& l : rec.batch) read_before = std::max(read_before, l.ts);
    feed_held(rec, held, parser, bound, false);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool over = (opt.duration_s > 0 && elapsed >= opt.duration_s) || g_stop;
    if (over) break;
    if (elapsed >= next_tick) {
      tick(elapsed);
      while (next_tick <= elapsed) next_tick += opt.interval_s > 0 ? opt.interval_s : 1.0;
    }
  }
  tracefs_trace_off(buffer.inst());
  pages.flush_all();
  feed_held(rec, held, parser, 0, true);
  parser.finish();
  result.events = pages.events;
  result.lost = pages.lost;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (file) {
    DatContents contents = dat_contents_from_tracefs(where.tracing_dir, {"ipi", "csd", "irq_vectors", "sched"});
    contents.page_size = static_cast<std::uint32_t>(pages.page_size);
    contents.cpu_pages = pages.files;
    try {
      write_dat_v6(file->stream(), contents);
    } catch (const std::runtime_error& e) {
      file->prepare();  // throws the kept write error (InputError: --save and the reason), if that was it
      throw InputError("--save", e.what());
    }
    file->commit();
  }
  return out;
}

}  // namespace ipilab::trace
