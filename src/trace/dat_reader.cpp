// trace.dat reader on libtracecmd (trace-cmd.h) + libtraceevent (event-parse.h).
//
// Hot events (x86: ipi_send_cpu/cpumask, csd:*, irq_vectors:*) are decoded from their binary fields
// directly; symbol names come from the file's kallsyms through tep_find_function, printed the way
// libtraceevent prints %pS ("sym+0xoff") and %ps ("sym"), so the text of `trace-cmd report` and the
// .dat give identical events. The Arm events (ipi_raise/ipi_entry/ipi_exit, whose reason is a
// kernel string pointer) are printed by libtraceevent and decoded by the text decoder.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <exception>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "trace/tracefs_compat.h"

#include "common/error.h"
#include "trace/reader.h"
#include "trace/text_reader.h"

// libtraceevent's documented override point (event-utils.h): every warning of libtraceevent and
// libtracecmd goes through tep_vprint. While a trace.dat is being read on this thread, the messages
// are collected (they become the reason of the InputError); otherwise they go to the default printer.
namespace {
thread_local std::string* g_capture = nullptr;
}

extern "C" int tep_vprint(const char* name, enum tep_loglevel level, bool print_err, const char* fmt, va_list ap) {
  if (g_capture == nullptr) return __tep_vprint(name, level, print_err, fmt, ap);
  char buf[512];
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  for (char& ch : buf) {
    if (ch == '\0') break;
    if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n') ch = '?';
    if (static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
  }
  if (g_capture->size() < 4096) {
    if (!g_capture->empty()) g_capture->append("; ");
    g_capture->append(buf);
    while (!g_capture->empty() && (g_capture->back() == '\n' || g_capture->back() == ' ')) g_capture->pop_back();
  }
  return n;
}

// LeakSanitizer (asan preset): libtraceevent 1.7.1 leaks a few bytes in tep_parse_event() for
// event formats it cannot parse (e.g. "[kvm:kvm_inj_exception] bad op token }" in our traces), and
// libtracecmd 1.3.1 leaks its tep_handle and a buffer when tracecmd_open() fails on a bad file.
// ipilab closes every handle it gets; these leaks are inside the libraries, so they are suppressed.
// This hook is only read when the program runs under LSan.
extern "C" const char* __lsan_default_suppressions() {
  // Without frame pointers in those libraries the fast unwinder may stop in libc's vsscanf, which
  // they call to parse kallsyms/formats (ipilab never calls scanf).
  return "leak:libtraceevent.so\nleak:libtracecmd.so\nleak:isoc99_vsscanf\n";
}

namespace ipilab::trace {

namespace {

struct CaptureGuard {
  std::string messages;
  CaptureGuard() { g_capture = &messages; }
  ~CaptureGuard() { g_capture = nullptr; }
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;
};

enum class Decode : std::uint8_t { SendCpu, SendCpumask, CsdQueue, CsdEntry, CsdExit, VecEntry, VecExit, Printed };

struct Handler {
  Decode decode;
  IpiKind kind = IpiKind::Unknown;
  const char* name = nullptr;
  tep_event* event = nullptr;
  tep_format_field* f_cpu = nullptr;
  tep_format_field* f_callsite = nullptr;
  tep_format_field* f_callback = nullptr;  // callback (ipi) or func (csd)
  tep_format_field* f_csd = nullptr;
  tep_format_field* f_vector = nullptr;
};

struct Context {
  EventSink* sink = nullptr;
  tep_handle* tep = nullptr;
  std::string place;
  std::unordered_map<int, Handler> handlers;
  std::unordered_map<int, std::string> other_names;
  std::unordered_map<unsigned long long, std::string> sym_offset_cache;  // %pS
  std::unordered_map<unsigned long long, std::string> sym_cache;         // %ps
  TraceEvent ev;
  trace_seq seq{};
  std::exception_ptr error;
  std::uint64_t records = 0;
  std::vector<std::uint64_t> records_per_cpu;
  // Per CPU: page of the last record, and the number of distinct pages records came from.
  std::vector<std::pair<unsigned long long, std::uint64_t>> pages_per_cpu;
  unsigned long long page_size = 4096;
};

const std::string& symbol_with_offset(Context& c, unsigned long long addr) {
  auto it = c.sym_offset_cache.find(addr);
  if (it != c.sym_offset_cache.end()) return it->second;
  std::string s;
  const char* fn = addr ? tep_find_function(c.tep, addr) : nullptr;
  if (fn) s = fmt::format("{}+0x{:x}", fn, addr - tep_find_function_address(c.tep, addr));
  else s = fmt::format("0x{:x}", addr);
  if (c.sym_offset_cache.size() > 100000) c.sym_offset_cache.clear();  // bound (never reached in practice)
  return c.sym_offset_cache.emplace(addr, std::move(s)).first->second;
}

const std::string& symbol_only(Context& c, unsigned long long addr) {
  auto it = c.sym_cache.find(addr);
  if (it != c.sym_cache.end()) return it->second;
  std::string s;
  const char* fn = addr ? tep_find_function(c.tep, addr) : nullptr;
  if (fn) s = fn;
  else s = fmt::format("0x{:x}", addr);
  if (c.sym_cache.size() > 100000) c.sym_cache.clear();
  return c.sym_cache.emplace(addr, std::move(s)).first->second;
}

[[noreturn]] void corrupt(const Context& c, const tep_record* rec, std::string_view what) {
  throw InputError(fmt::format("{}: CPU {} record at data offset {}", c.place, rec->cpu, rec->offset), std::string(what));
}

unsigned long long read_field(const Context& c, const tep_record* rec, tep_format_field* f, const char* name) {
  if (f->offset < 0 || f->size <= 0 || f->offset + f->size > rec->size)
    corrupt(c, rec, fmt::format("field '{}' lies outside the record (corrupt trace.dat?)", name));
  unsigned long long v = 0;
  if (tep_read_number_field(f, rec->data, &v) != 0) corrupt(c, rec, fmt::format("cannot read field '{}'", name));
  return v;
}

void decode_record(Context& c, tep_record* rec) {
  ++c.records;
  if (rec->cpu >= 0 && rec->cpu < 65536) {
    if (static_cast<std::size_t>(rec->cpu) >= c.records_per_cpu.size()) c.records_per_cpu.resize(static_cast<std::size_t>(rec->cpu) + 1);
    ++c.records_per_cpu[static_cast<std::size_t>(rec->cpu)];
    if (static_cast<std::size_t>(rec->cpu) >= c.pages_per_cpu.size())
      c.pages_per_cpu.resize(static_cast<std::size_t>(rec->cpu) + 1, {~0ull, 0});
    auto& pg = c.pages_per_cpu[static_cast<std::size_t>(rec->cpu)];
    const unsigned long long page = rec->offset / c.page_size;
    if (page != pg.first) {
      pg.first = page;
      ++pg.second;
    }
  }
  if (rec->missed_events != 0)
    c.sink->on_lost_events(static_cast<std::uint32_t>(rec->cpu),
                           rec->missed_events > 0 ? static_cast<std::uint64_t>(rec->missed_events) : 0);
  const int id = tep_data_type(c.tep, rec);
  auto hit = c.handlers.find(id);
  if (hit == c.handlers.end()) {
    auto on = c.other_names.find(id);
    if (on == c.other_names.end()) {
      tep_event* e = tep_find_event(c.tep, id);
      // Every record of a sound file has the id of an event whose format the file carries.
      if (!e) corrupt(c, rec, fmt::format("event id {} has no format in this file (corrupt event data)", id));
      on = c.other_names.emplace(id, std::string(e->name)).first;
    }
    c.sink->on_other_event(on->second);
    return;
  }
  const Handler& h = hit->second;
  TraceEvent& ev = c.ev;
  ev.ts_ns = rec->ts;
  ev.cpu = static_cast<std::uint32_t>(rec->cpu);
  ev.name = h.name;
  ev.targets.clear();
  ev.callsite = {};
  ev.callback = {};
  ev.csd = 0;
  ev.vector = -1;
  ev.kind = h.kind;
  switch (h.decode) {
    case Decode::SendCpu: {
      ev.type = EventType::IpiSendCpu;
      const auto cpu = read_field(c, rec, h.f_cpu, "cpu");
      if (cpu >= 65536) corrupt(c, rec, fmt::format("ipi_send_cpu: cpu={} out of range", cpu));
      ev.targets.push_back(static_cast<std::uint32_t>(cpu));
      ev.callsite = symbol_with_offset(c, read_field(c, rec, h.f_callsite, "callsite"));
      ev.callback = symbol_with_offset(c, read_field(c, rec, h.f_callback, "callback"));
      ev.kind = send_kind(ev.callsite, ev.callback);
      break;
    }
    case Decode::SendCpumask: {
      ev.type = EventType::IpiSendCpumask;
      int len = 0;
      auto* data = static_cast<const unsigned char*>(tep_get_field_raw(nullptr, h.event, "cpumask", rec, &len, 0));
      const auto* base = static_cast<const unsigned char*>(rec->data);
      if (!data || len < 0 || data < base || data + len > base + rec->size)
        corrupt(c, rec, "ipi_send_cpumask: cpumask lies outside the record (corrupt trace.dat?)");
      const int word = tep_get_long_size(c.tep) > 0 ? tep_get_long_size(c.tep) : 8;
      for (int w = 0; w + word <= len; w += word) {
        const unsigned long long bits = tep_read_number(c.tep, data + w, word);
        for (int b = 0; b < word * 8; ++b)
          if (bits & (1ull << b)) {
            const long long cpu = static_cast<long long>(w) * 8 + b;
            if (cpu >= 65536) corrupt(c, rec, "ipi_send_cpumask: CPU out of range");
            ev.targets.push_back(static_cast<std::uint32_t>(cpu));
          }
      }
      ev.callsite = symbol_with_offset(c, read_field(c, rec, h.f_callsite, "callsite"));
      ev.callback = symbol_with_offset(c, read_field(c, rec, h.f_callback, "callback"));
      ev.kind = send_kind(ev.callsite, ev.callback);
      break;
    }
    case Decode::CsdQueue: {
      ev.type = EventType::CsdQueueCpu;
      const auto cpu = read_field(c, rec, h.f_cpu, "cpu");
      if (cpu >= 65536) corrupt(c, rec, fmt::format("csd_queue_cpu: cpu={} out of range", cpu));
      ev.targets.push_back(static_cast<std::uint32_t>(cpu));
      ev.callsite = symbol_with_offset(c, read_field(c, rec, h.f_callsite, "callsite"));
      ev.callback = symbol_only(c, read_field(c, rec, h.f_callback, "func"));
      ev.csd = read_field(c, rec, h.f_csd, "csd");
      break;
    }
    case Decode::CsdEntry:
    case Decode::CsdExit:
      ev.type = h.decode == Decode::CsdEntry ? EventType::CsdFunctionEntry : EventType::CsdFunctionExit;
      ev.callback = symbol_only(c, read_field(c, rec, h.f_callback, "func"));
      ev.csd = read_field(c, rec, h.f_csd, "csd");
      break;
    case Decode::VecEntry:
    case Decode::VecExit: {
      ev.type = h.decode == Decode::VecEntry ? EventType::VectorEntry : EventType::VectorExit;
      const auto v = static_cast<long long>(static_cast<int>(read_field(c, rec, h.f_vector, "vector")));
      if (v < 0 || v > 255) corrupt(c, rec, fmt::format("{}: vector={} out of range", h.name, v));
      ev.vector = static_cast<int>(v);
      break;
    }
    case Decode::Printed: {
      trace_seq_reset(&c.seq);
      tep_print_event(c.tep, &c.seq, rec, "%s", TEP_PRINT_INFO);
      trace_seq_terminate(&c.seq);
      const std::string_view text(c.seq.buffer, c.seq.len);
      try {
        if (!decode_text_fields(h.name, text, ev)) return;
      } catch (const InputError& e) {
        corrupt(c, rec, e.reason());
      }
      ev.name = h.name;
      break;
    }
  }
  c.sink->on_event(ev);
}

int on_record(tracecmd_input*, tep_record* rec, int, void* data) {
  auto* c = static_cast<Context*>(data);
  try {
    decode_record(*c, rec);
  } catch (...) {
    c->error = std::current_exception();
    return 1;  // stops the iteration
  }
  return 0;
}

// libtracecmd stops a CPU's stream silently when a compressed chunk does not decompress (seen with
// libtracecmd 1.3.1 on a v7 zstd file with flipped bytes in the CPU data: no message at any log
// level; it may skip a chunk in the middle or stop), so ipilab checks that records came from every
// page of each CPU's data: tracecmd_get_cpu_file_size() gives the data size (whole pages),
// rec->offset the position of each record in the same space, and trace-cmd writes only pages that
// hold events.
void check_cpu_data_complete(const Context& c, tracecmd_input* handle, int cpus) {
  const auto page = static_cast<long long>(c.page_size);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    const long long size = tracecmd_get_cpu_file_size(handle, cpu);
    if (size <= 0) continue;
    const auto idx = static_cast<std::size_t>(cpu);
    const std::uint64_t n = idx < c.records_per_cpu.size() ? c.records_per_cpu[idx] : 0;
    const long long pages = size / page;
    if (n == 0)
      throw InputError(c.place, fmt::format("CPU {}: {} pages of event data but no event could be read (truncated "
                                            "or corrupt event data)",
                                            cpu, pages));
    const auto read_pages = static_cast<long long>(c.pages_per_cpu[idx].second);
    if (read_pages < pages)
      throw InputError(c.place, fmt::format("CPU {}: events could be read from {} of its {} pages of event data "
                                            "only (truncated or corrupt event data)",
                                            cpu, read_pages, pages));
  }
}

struct HandleCloser {
  void operator()(tracecmd_input* h) const { tracecmd_close(h); }
};

}  // namespace

ReadInfo read_dat_trace(const std::filesystem::path& path, EventSink& sink) {
  ReadInfo info;
  info.format = TraceFormat::TraceDat;
  info.knows_kernel_formats = true;
  const std::string place = path.string();
  CaptureGuard capture;
  // No plugins: they only change how events print, and loading them costs time.
  std::unique_ptr<tracecmd_input, HandleCloser> handle(tracecmd_open(place.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS));
  if (!handle) {
    throw InputError(place, fmt::format("libtracecmd cannot read this trace.dat (truncated or corrupt?){}{}",
                                        capture.messages.empty() ? "" : ": ", capture.messages));
  }
  Context c;
  c.sink = &sink;
  c.place = place;
  c.tep = tracecmd_get_tep(handle.get());
  if (!c.tep) throw InputError(place, "libtracecmd returned no event formats");
  if (tep_get_page_size(c.tep) > 0) c.page_size = static_cast<unsigned long long>(tep_get_page_size(c.tep));
  trace_seq_init(&c.seq);
  struct SeqGuard {
    trace_seq* s;
    ~SeqGuard() { trace_seq_destroy(s); }
  } seq_guard{&c.seq};

  auto add = [&](const char* sys, const char* name, Decode d, IpiKind kind = IpiKind::Unknown) {
    tep_event* e = tep_find_event_by_name(c.tep, sys, name);
    if (!e) {
      info.absent_in_kernel.push_back(fmt::format("{}:{}", sys, name));
      return;
    }
    Handler h{d, kind, name, e};
    auto field = [&](const char* f) -> tep_format_field* {
      tep_format_field* ff = tep_find_field(e, f);
      if (!ff) throw InputError(place, fmt::format("event {}:{} has no field '{}' in this trace.dat", sys, name, f));
      return ff;
    };
    switch (d) {
      case Decode::SendCpu:
        h.f_cpu = field("cpu"), h.f_callsite = field("callsite"), h.f_callback = field("callback");
        break;
      case Decode::SendCpumask:
        field("cpumask"), h.f_callsite = field("callsite"), h.f_callback = field("callback");
        break;
      case Decode::CsdQueue:
        h.f_cpu = field("cpu"), h.f_callsite = field("callsite"), h.f_callback = field("func"), h.f_csd = field("csd");
        break;
      case Decode::CsdEntry:
      case Decode::CsdExit:
        h.f_callback = field("func"), h.f_csd = field("csd");
        break;
      case Decode::VecEntry:
      case Decode::VecExit:
        h.f_vector = field("vector");
        break;
      case Decode::Printed:
        break;
    }
    c.handlers.emplace(e->id, h);
  };
  add("ipi", "ipi_send_cpu", Decode::SendCpu);
  add("ipi", "ipi_send_cpumask", Decode::SendCpumask);
  add("csd", "csd_queue_cpu", Decode::CsdQueue);
  add("csd", "csd_function_entry", Decode::CsdEntry);
  add("csd", "csd_function_exit", Decode::CsdExit);
  add("ipi", "ipi_raise", Decode::Printed);
  add("ipi", "ipi_entry", Decode::Printed);
  add("ipi", "ipi_exit", Decode::Printed);
  static constexpr std::pair<const char*, IpiKind> kVectors[] = {
      {"call_function", IpiKind::CallFunction},
      {"call_function_single", IpiKind::CallFunctionSingle},
      {"reschedule", IpiKind::Reschedule},
      {"irq_work", IpiKind::IrqWork},
  };
  static const std::string kNames[] = {"call_function_entry", "call_function_exit", "call_function_single_entry",
                                       "call_function_single_exit", "reschedule_entry", "reschedule_exit",
                                       "irq_work_entry", "irq_work_exit"};
  for (std::size_t i = 0; i < std::size(kVectors); ++i) {
    add("irq_vectors", kNames[2 * i].c_str(), Decode::VecEntry, kVectors[i].second);
    add("irq_vectors", kNames[2 * i + 1].c_str(), Decode::VecExit, kVectors[i].second);
  }

  const int cpus = tep_get_cpus(c.tep);
  sink.on_begin(cpus > 0 ? static_cast<std::uint32_t>(cpus) : 0);
  capture.messages.clear();
  tracecmd_iterate_events(handle.get(), nullptr, 0, on_record, &c);
  if (c.error) std::rethrow_exception(c.error);
  check_cpu_data_complete(c, handle.get(), cpus);
  // Instances (trace-cmd record -B): iterate them too.
  const int instances = tracecmd_buffer_instances(handle.get());
  for (int i = 0; i < instances; ++i) {
    std::unique_ptr<tracecmd_input, HandleCloser> inst(tracecmd_buffer_instance_handle(handle.get(), i));
    if (!inst) continue;
    c.records_per_cpu.clear();
    c.pages_per_cpu.clear();
    tracecmd_iterate_events(inst.get(), nullptr, 0, on_record, &c);
    if (c.error) std::rethrow_exception(c.error);
    const int inst_cpus = tep_get_cpus(tracecmd_get_tep(inst.get()));
    check_cpu_data_complete(c, inst.get(), inst_cpus > 0 ? inst_cpus : cpus);
  }
  if (!capture.messages.empty())
    throw InputError(place, fmt::format("libtracecmd reported errors while reading the events (truncated or "
                                        "corrupt trace.dat?): {}",
                                        capture.messages));
  return info;
}

}  // namespace ipilab::trace
