// Helpers shared by the trace tests: data paths, a temp folder, an event-collecting sink.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "trace/event.h"

namespace ipilab::trace::testing {

inline std::filesystem::path traces_dir() { return std::filesystem::path(IPILAB_SOURCE_DIR) / "data" / "traces"; }

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::filesystem::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ipilab-trace-test.XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// Owns copies of the events a reader produced.
struct StoredEvent {
  std::uint64_t ts_ns;
  std::uint32_t cpu;
  EventType type;
  IpiKind kind;
  std::string name;
  std::vector<std::uint32_t> targets;
  std::string callsite, callback;
  std::uint64_t csd;
  int vector;
};

struct CollectingSink : EventSink {
  std::uint32_t cpus = 0;
  std::vector<StoredEvent> events;
  std::map<std::string, std::uint64_t> others;  ///< other events: name -> count
  std::uint64_t other_total = 0;
  std::vector<std::string> buffers;            ///< on_buffer calls, in order
  std::uint64_t lost_marks = 0, lost = 0;
  void on_begin(std::uint32_t n) override { cpus = n; }
  void on_event(const TraceEvent& e) override {
    events.push_back({e.ts_ns, e.cpu, e.type, e.kind, std::string(e.name), e.targets, std::string(e.callsite),
                      std::string(e.callback), e.csd, e.vector});
  }
  void on_other_events(std::string_view n, std::uint64_t count) override {
    others[std::string(n)] += count;
    other_total += count;
  }
  void on_buffer(std::string_view n) override { buffers.emplace_back(n); }
  void on_lost_events(std::uint32_t, std::uint64_t n) override {
    ++lost_marks;
    lost += n;
  }
};

inline bool have_program(const char* name) {
  return std::system((std::string("command -v ") + name + " >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace ipilab::trace::testing
