#include "trace/record.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "trace/tracefs_compat.h"

extern "C" {
#include <traceevent/kbuffer.h>
}

#include "common/error.h"
#include "trace/dat_writer.h"
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
  }

  // Counts the events of one page (what the summary reports) and appends it.
  void keep(std::size_t cpu, int n, bool discard) {
    if (n <= 0 || discard) return;
    std::memset(page.data() + n, 0, page.size() - static_cast<std::size_t>(n));
    kbuffer_load_subbuffer(kbuf, page.data());
    const int missed = kbuffer_missed_events(kbuf);
    if (missed > 0) lost += static_cast<std::uint64_t>(missed);
    unsigned long long ts = 0;
    for (void* d = kbuffer_read_event(kbuf, &ts); d; d = kbuffer_next_event(kbuf, &ts)) ++events;
    if (std::fwrite(page.data(), 1, page.size(), files[cpu]) != page.size())
      throw InputError("-o", fmt::format("cannot write: {}", std::strerror(errno)));
  }

  void read_all(bool discard) {
    for (std::size_t c = 0; c < cpus.size(); ++c) {
      if (!cpus[c]) continue;
      for (;;) {
        const int n = tracefs_cpu_read(cpus[c], page.data(), true);
        if (n <= 0) break;
        keep(c, n, discard);
      }
    }
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
  const std::filesystem::path out = opt.output;
  const std::filesystem::path folder = out.has_parent_path() ? out.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw InputError("-o", fmt::format("folder '{}' does not exist", folder.string()));

  const char* tracing_dir = tracefs_tracing_dir();
  if (!tracing_dir)
    throw UnavailableError("tracefs is not mounted and could not be mounted (needs root: mount -t tracefs nodev "
                           "/sys/kernel/tracing)");
  if (::access((std::string(tracing_dir) + "/instances").c_str(), W_OK) != 0)
    throw UnavailableError(fmt::format("no write access to {} (run as root)", tracing_dir));

  static const char* const kSystems[] = {"ipi", "csd", "irq_vectors", "sched", nullptr};
  Recorder rec;
  rec.tep = tracefs_local_events_system(nullptr, kSystems);
  if (!rec.tep) throw UnavailableError(fmt::format("cannot read the event formats under {}/events", tracing_dir));
  struct TepGuard {
    tep_handle* t;
    ~TepGuard() { tep_free(t); }
  } tep_guard{rec.tep};
  trace_seq_init(&rec.seq);
  struct SeqGuard {
    trace_seq* s;
    ~SeqGuard() { trace_seq_destroy(s); }
  } seq_guard{&rec.seq};
  {
    const std::string ksyms = read_file_or_empty("/proc/kallsyms");
    if (!ksyms.empty()) tep_parse_kallsyms(rec.tep, ksyms.c_str());
  }

  const std::vector<std::pair<std::string, std::string>> present = enable_known_events(rec, result);
  if (present.empty())
    throw UnavailableError("this kernel has none of the IPI events (ipi:* needs Linux >= 6.4 for ipi_send_cpu, "
                           "csd:* >= 6.5, irq_vectors:* is x86)");

  // Instance (or the top level, whose state is saved).
  tracefs_instance* inst = nullptr;
  const bool top = opt.instance.empty();
  int saved_tracing_on = -1;
  std::vector<bool> saved_enable;
  ssize_t saved_buffer_kb = -1;
  if (!top) {
    if (tracefs_instance_exists(opt.instance.c_str()))
      throw UnavailableError(fmt::format("tracefs instance '{}' already exists (another recording?); remove it with "
                                         "'rmdir {}/instances/{}' or pick --instance",
                                         opt.instance, tracing_dir, opt.instance));
    inst = tracefs_instance_create(opt.instance.c_str());
    if (!inst) throw UnavailableError(fmt::format("cannot create tracefs instance '{}'", opt.instance));
  } else {
    saved_tracing_on = tracefs_trace_is_on(nullptr);
    for (const auto& [sys, name] : present)
      saved_enable.push_back(tracefs_event_is_enabled(nullptr, sys.c_str(), name.c_str()) == TRACEFS_ALL_ENABLED);
  }
  auto restore = [&] {
    if (!top) {
      tracefs_trace_off(inst);
      tracefs_instance_destroy(inst);
      tracefs_instance_free(inst);
      inst = nullptr;
      return;
    }
    for (std::size_t i = 0; i < present.size(); ++i)
      if (!saved_enable[i]) tracefs_event_disable(nullptr, present[i].first.c_str(), present[i].second.c_str());
    if (saved_buffer_kb > 0) tracefs_instance_set_buffer_size(nullptr, static_cast<std::size_t>(saved_buffer_kb), -1);
    if (saved_tracing_on == 0) tracefs_trace_off(nullptr);
    else if (saved_tracing_on == 1) tracefs_trace_on(nullptr);
  };

  std::string tmp_tmpl = (folder / ("." + out.filename().string() + ".XXXXXX")).string();
  int fd = -1;
  pid_t child = -1;
  struct sigaction old_int {}, old_term {};
  try {
    tracefs_trace_off(inst);
    if (opt.buffer_kb > 0) {
      if (top) saved_buffer_kb = tracefs_instance_get_buffer_size(nullptr, 0);
      if (tracefs_instance_set_buffer_size(inst, opt.buffer_kb, -1) != 0)
        throw UnavailableError(fmt::format("cannot set buffer_size_kb to {}", opt.buffer_kb));
    }
    for (const auto& [sys, name] : present)
      if (tracefs_event_enable(inst, sys.c_str(), name.c_str()) != 0)
        throw UnavailableError(fmt::format("cannot enable {}:{}", sys, name));

    fd = ::mkstemp(tmp_tmpl.data());
    if (fd < 0) throw InputError("-o", fmt::format("cannot create a file in '{}': {}", folder.string(), std::strerror(errno)));
    FILE* f = ::fdopen(fd, "w");
    if (!f) throw InputError("-o", "fdopen failed");
    fd = -1;
    struct FileGuard {
      FILE* f;
      ~FileGuard() {
        if (f) std::fclose(f);
      }
    } fguard{f};
    const long ncpu = ::sysconf(_SC_NPROCESSORS_CONF);
    result.cpus = ncpu > 0 ? static_cast<std::uint32_t>(ncpu) : 0;
    PageRecorder pages;
    if (opt.text) std::fprintf(f, "cpus=%u\n", result.cpus);
    else pages.open(inst, static_cast<int>(result.cpus), folder.string());

    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);

    if (top) {  // the top-level buffer may hold older events: consume them, they are not ours
      if (opt.text) {
        rec.discard = true;
        tracefs_iterate_raw_events(rec.tep, nullptr, nullptr, 0, on_raw_event, &rec);
        rec.discard = false;
      } else {
        pages.read_all(true);
        for (int guard = 0; guard < 1 << 20; ++guard) {
          bool any = false;
          for (auto* c : pages.cpus)
            if (c && tracefs_cpu_flush(c, pages.page.data()) > 0) any = true;
          if (!any) break;
        }
      }
    }
    const auto start = std::chrono::steady_clock::now();
    tracefs_trace_on(inst);
    if (!opt.command.empty()) {
      int pipefd[2];
      if (::pipe2(pipefd, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
      child = ::fork();
      if (child < 0) throw std::runtime_error("fork failed");
      if (child == 0) {
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        std::vector<char*> argv;
        for (const auto& a : opt.command) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execvp(argv[0], argv.data());
        const int err = errno;
        (void)!::write(pipefd[1], &err, sizeof err);
        ::_exit(127);
      }
      ::close(pipefd[1]);
      int err = 0;
      const ssize_t n = ::read(pipefd[0], &err, sizeof err);
      ::close(pipefd[0]);
      if (n == static_cast<ssize_t>(sizeof err)) {
        ::waitpid(child, nullptr, 0);
        child = -1;
        throw InputError("command", fmt::format("cannot run '{}': {}", opt.command[0], std::strerror(err)));
      }
    }
    const double limit = opt.duration_s > 0 ? opt.duration_s : (opt.command.empty() ? 1.0 : 0.0);
    constexpr std::uint64_t kHoldBackNs = 20'000'000;
    std::vector<Line> held;
    auto flush = [&](bool all) {
      if (!opt.text) {
        if (all) pages.flush_all();
        else pages.read_all(false);
        result.events = pages.events;
        return;
      }
      tracefs_iterate_raw_events(rec.tep, inst, nullptr, 0, on_raw_event, &rec);
      for (auto& l : rec.batch) held.push_back(std::move(l));
      rec.batch.clear();
      std::stable_sort(held.begin(), held.end(), [](const Line& a, const Line& b) { return a.ts < b.ts; });
      std::uint64_t newest = held.empty() ? 0 : held.back().ts;
      std::size_t n = held.size();
      if (!all) {
        n = 0;
        while (n < held.size() && held[n].ts + kHoldBackNs <= newest) ++n;
      }
      for (std::size_t i = 0; i < n; ++i) std::fputs(held[i].text.c_str(), f);
      result.events += n;
      held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(n));
    };
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      flush(false);
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (child > 0) {
        int status = 0;
        const pid_t w = ::waitpid(child, &status, WNOHANG);
        if (w == child) {
          result.command_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          child = -1;
          break;
        }
        if ((limit > 0 && elapsed >= limit) || g_stop) {
          ::kill(child, SIGTERM);
          ::waitpid(child, &status, 0);
          result.command_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) result.command_status = 0;  // we stopped it
          child = -1;
          break;
        }
      } else if ((limit > 0 && elapsed >= limit) || g_stop) {
        break;
      }
    }
    tracefs_trace_off(inst);
    flush(true);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.lost = opt.text ? rec.lost : pages.lost;
    if (!opt.text) {
      DatContents contents = dat_contents_from_tracefs(tracing_dir, {"ipi", "csd", "irq_vectors", "sched"});
      contents.page_size = static_cast<std::uint32_t>(pages.page_size);
      contents.cpu_pages = pages.files;
      try {
        write_dat_v6(f, contents);
      } catch (const std::runtime_error& e) {
        throw InputError(out.string(), e.what());
      }
    }
    if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0)
      throw InputError(out.string(), fmt::format("cannot write: {}", std::strerror(errno)));
    ::fchmod(::fileno(f), 0644);
    std::fclose(f);
    fguard.f = nullptr;
    if (::rename(tmp_tmpl.c_str(), out.c_str()) != 0)
      throw InputError(out.string(), fmt::format("cannot write: {}", std::strerror(errno)));
    tmp_tmpl.clear();
  } catch (...) {
    if (child > 0) {
      ::kill(child, SIGTERM);
      ::waitpid(child, nullptr, 0);
    }
    if (fd >= 0) ::close(fd);
    if (!tmp_tmpl.empty() && tmp_tmpl.find("XXXXXX") == std::string::npos) ::unlink(tmp_tmpl.c_str());
    restore();
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    throw;
  }
  restore();
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return result;
}

}  // namespace ipilab::trace
