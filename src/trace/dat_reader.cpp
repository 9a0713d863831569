// trace.dat reader.
//
// Metadata (event formats, kallsyms, printk formats) is parsed by libtracecmd (tracecmd_open_head)
// into libtraceevent's tep_handle. The event data is then read one of two ways:
//   - directly (the default): ipilab finds each buffer's per-CPU pages from the documented layout
//     (dat_layout.h), decompresses trace.dat's own zstd/zlib chunks itself, walks each page with
//     libtraceevent's kbuffer (the ring-buffer page parser) and merges the CPUs by time (ties: lowest
//     CPU first, as tracecmd_iterate_events does). Only the records of the events ipilab uses are
//     decoded, from their binary fields at the offsets the formats give; the others are counted by
//     id. This is what makes `ipilab trace` several times faster than `trace-cmd report`.
//   - through libtracecmd's records (tracecmd_iterate_events), when the file needs what only
//     libtracecmd applies: timestamp options (DATE, OFFSET, TIME_SHIFT, TSC2NSEC), an unknown
//     compression, or the old ring-buffer format.
// Symbols come from the file's kallsyms through tep_find_function, printed the way libtraceevent
// prints %pS ("sym+0xoff") and %ps ("sym"), so `trace-cmd report` text and the .dat give identical
// events. The Arm events (ipi_raise/ipi_entry/ipi_exit, whose reason is a kernel string pointer)
// are printed by libtraceevent and decoded by the text decoder.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "trace/tracefs_compat.h"

extern "C" {
#include <traceevent/kbuffer.h>
}

#include "common/error.h"
#include "trace/cpumask.h"
#include "trace/dat_layout.h"
#include "trace/reader.h"
#include "trace/text_reader.h"
#include "trace/tracepoints.h"

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

struct HandleCloser {
  void operator()(tracecmd_input* h) const { tracecmd_close(h); }
};
using Handle = std::unique_ptr<tracecmd_input, HandleCloser>;

enum class Decode : std::uint8_t {
  SendCpu, SendCpumask, CsdQueue, CsdEntry, CsdExit, VecEntry, VecExit, WakeIdle, Marker, Printed
};

struct Field {
  int offset = -1, size = 0;
};

struct Handler {
  Decode decode;
  IpiKind kind = IpiKind::Unknown;
  std::string_view name;
  tep_event* event = nullptr;
  Field cpu, callsite, callback, csd, vector, mask, text;  // mask: the __data_loc word; text: ftrace print's buf
};

// Decodes the records of one trace.dat (both reading paths).
class Decoder {
 public:
  Decoder(tep_handle* tep, EventSink& sink, std::string place, ReadInfo& info)
      : tep_(tep), sink_(sink), place_(std::move(place)), info_(info) {
    big_endian_ = tep_is_file_bigendian(tep);
    const int hps = tep_get_header_page_size(tep);
    mask_word_ = hps == 4 || hps == 8 ? hps : (tep_get_long_size(tep) == 4 ? 4 : 8);
    info_.kernel_long_size = mask_word_;
    trace_seq_init(&seq_);
    ev_.targets.reserve(8);
  }
  ~Decoder() { trace_seq_destroy(&seq_); }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  /// One handler per tracepoint of the table (tracepoints.h) whose format the file carries.
  void add_handlers() {
    for (const Tracepoint& t : tracepoints()) add(t);
  }

  /// Starts a buffer: counts of other events restart.
  void begin_buffer() {
    other_counts_.assign(other_counts_.size(), 0);
    no_format_counts_.clear();
  }
  /// Hands the counts of the other events to the sink.
  void end_buffer() {
    for (const auto& [id, n] : no_format_counts_) sink_.on_other_events(fmt::format("event id {} (no format)", id), n);
    no_format_counts_.clear();
    for (std::size_t id = 0; id < other_counts_.size(); ++id) {
      if (!other_counts_[id]) continue;
      tep_event* e = tep_find_event(tep_, static_cast<int>(id));
      sink_.on_other_events(e ? std::string_view(e->name) : std::string_view(other_names_[id]), other_counts_[id]);
      other_counts_[id] = 0;
    }
  }

  [[noreturn]] void corrupt(std::uint32_t cpu, std::uint64_t offset, std::string_view what) const {
    throw InputError(fmt::format("{}: CPU {} record at data offset {}", place_, cpu, offset), std::string(what));
  }

  /// One record: its event id is read from common_type.
  void record(std::uint64_t ts, std::uint32_t cpu, const unsigned char* data, int size, std::uint64_t where) {
    if (size < 2) corrupt(cpu, where, "record shorter than its event id");
    unsigned id = big_endian_ ? (static_cast<unsigned>(data[0]) << 8 | data[1]) : (data[0] | static_cast<unsigned>(data[1]) << 8);
    if (id < table_.size()) {
      const int h = table_[id];
      if (h >= 0) {
        decode(handlers_[static_cast<std::size_t>(h)], ts, cpu, data, size, where);
        return;
      }
      if (h == kOther) {
        ++other_counts_[id];
        return;
      }
    }
    // An id whose format the file does not carry: trace-cmd report skips such a record too. It is
    // counted under its id, with a warning naming the first place.
    no_format(id, cpu, where);
  }

  /// Builds the id table (after add_handlers). `unparsed`: (id, name) of the events whose format
  /// was not handed to libtraceevent (only counted).
  void build_table(const std::vector<std::pair<int, std::string>>& unparsed = {}) {
    int max_id = 0;
    tep_event** all = tep_list_events(tep_, TEP_EVENT_SORT_ID);
    for (int i = 0; all && all[i]; ++i) max_id = std::max(max_id, all[i]->id);
    for (const auto& [id, name] : unparsed) max_id = std::max(max_id, id);
    table_.assign(static_cast<std::size_t>(max_id) + 1, kNone);
    other_counts_.assign(table_.size(), 0);
    other_names_.assign(table_.size(), std::string());
    for (int i = 0; all && all[i]; ++i)
      if (all[i]->id >= 0) table_[static_cast<std::size_t>(all[i]->id)] = kOther;
    for (const auto& [id, name] : unparsed)
      if (id >= 0) table_[static_cast<std::size_t>(id)] = kOther, other_names_[static_cast<std::size_t>(id)] = name;
    for (std::size_t h = 0; h < handlers_.size(); ++h) table_[static_cast<std::size_t>(handlers_[h].event->id)] = static_cast<int>(h);
  }

  ReadInfo& info() { return info_; }

 private:
  void no_format(unsigned id, std::uint32_t cpu, std::uint64_t where) {
    auto [it, fresh] = no_format_counts_.try_emplace(id, 0);
    ++it->second;
    const std::string what = "event id with no format in this file (records skipped, as trace-cmd report skips them)";
    for (auto& w : info_.warnings)
      if (w.what == what) {
        ++w.count;
        return;
      }
    (void)fresh;
    info_.warnings.push_back({what, 1, fmt::format("{}: CPU {} record at data offset {}", place_, cpu, where),
                              fmt::format("id {}", id), {}});
  }

  static constexpr int kOther = -1, kNone = -2;

  static Decode decode_of(EventType t) {
    switch (t) {
      case EventType::IpiSendCpu: return Decode::SendCpu;
      case EventType::IpiSendCpumask: return Decode::SendCpumask;
      case EventType::CsdQueueCpu: return Decode::CsdQueue;
      case EventType::CsdFunctionEntry: return Decode::CsdEntry;
      case EventType::CsdFunctionExit: return Decode::CsdExit;
      case EventType::VectorEntry: return Decode::VecEntry;
      case EventType::VectorExit: return Decode::VecExit;
      case EventType::WakeIdleNoIpi: return Decode::WakeIdle;
      case EventType::Marker: return Decode::Marker;
      case EventType::IpiRaise:
      case EventType::IpiEntry:
      case EventType::IpiExit: return Decode::Printed;  // the reason is a kernel string: printed
    }
    return Decode::Printed;
  }

  void add(const Tracepoint& t) {
    const std::string sys(t.system), name(t.name);
    tep_event* e = tep_find_event_by_name(tep_, sys.c_str(), name.c_str());
    if (!e) {
      if (t.report_absent) info_.absent_in_kernel.push_back(qualified_name(t));
      return;
    }
    const Decode d = decode_of(t.type);
    Handler h{d, t.kind, t.name, e, {}, {}, {}, {}, {}, {}, {}};
    auto field = [&](const char* f) -> Field {
      tep_format_field* ff = tep_find_field(e, f);
      if (!ff) throw InputError(place_, fmt::format("event {}:{} has no field '{}' in this trace.dat", sys, name, f));
      return {ff->offset, ff->size};
    };
    switch (d) {
      case Decode::SendCpu:
        h.cpu = field("cpu"), h.callsite = field("callsite"), h.callback = field("callback");
        break;
      case Decode::SendCpumask:
        h.mask = field("cpumask"), h.callsite = field("callsite"), h.callback = field("callback");
        break;
      case Decode::CsdQueue:
        h.cpu = field("cpu"), h.callsite = field("callsite"), h.callback = field("func"), h.csd = field("csd");
        break;
      case Decode::CsdEntry:
      case Decode::CsdExit:
        h.callback = field("func"), h.csd = field("csd");
        break;
      case Decode::VecEntry:
      case Decode::VecExit:
        h.vector = field("vector");
        break;
      case Decode::WakeIdle:
        h.cpu = field("cpu");
        break;
      case Decode::Marker:
        h.text = field("buf");
        break;
      case Decode::Printed:
        break;
    }
    handlers_.push_back(h);
  }

  std::uint64_t number(const unsigned char* data, int size, const Field& f, std::uint32_t cpu, std::uint64_t where,
                       const char* name) const {
    if (f.offset < 0 || f.size <= 0 || f.size > 8 || f.offset + f.size > size)
      corrupt(cpu, where, fmt::format("field '{}' lies outside the record (corrupt trace.dat?)", name));
    std::uint64_t v = 0;
    const unsigned char* p = data + f.offset;
    for (int i = 0; i < f.size; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * (big_endian_ ? f.size - 1 - i : i));
    return v;
  }

  // A direct-mapped cache in front of the symbol maps (a trace repeats few addresses).
  struct SymSlot {
    std::uint64_t addr = ~0ull;
    std::string_view s;
  };
  std::array<SymSlot, 512> fast_offset_{}, fast_only_{};
  static std::size_t slot_of(std::uint64_t a) { return static_cast<std::size_t>((a ^ (a >> 9) ^ (a >> 21)) & 511); }

  std::string_view symbol_with_offset(std::uint64_t addr) {
    return symbol(fast_offset_, sym_offset_cache_, addr, true);
  }
  std::string_view symbol_only(std::uint64_t addr) { return symbol(fast_only_, sym_cache_, addr, false); }
  /// "function+0xoff" (with_offset) or "function" for `addr`, "0x..." when no symbol holds it; through
  /// the direct-mapped `fast` slots, then `cache` (its nodes are stable, so the views stay valid).
  template <class Cache>
  std::string_view symbol(std::array<SymSlot, 512>& fast, Cache& cache, std::uint64_t addr, bool with_offset) {
    SymSlot& f = fast[slot_of(addr)];
    if (f.addr == addr) return f.s;
    f.addr = addr;
    auto it = cache.find(addr);
    if (it == cache.end()) {
      std::string s;
      const char* fn = addr ? tep_find_function(tep_, addr) : nullptr;
      if (fn && with_offset)
        s = fmt::format("{}+0x{:x}", fn, addr - tep_find_function_address(tep_, addr));
      else if (fn)
        s = fn;
      else
        s = fmt::format("0x{:x}", addr);
      it = cache.emplace(addr, std::move(s)).first;
    }
    f.s = it->second;
    return f.s;
  }

  // ipi_send_cpumask: the bitmap behind its __data_loc, in the kernel's longs.
  void decode_cpumask(const Handler& h, std::uint32_t cpu, const unsigned char* data, int size, std::uint64_t where) {
    TraceEvent& ev = ev_;
    ev.type = EventType::IpiSendCpumask;
    // __data_loc: 32 bits, offset in the low 16, length in the high 16 (kernel trace_events.h;
    // "__rel_loc" variants are relative to the end of the field).
    const auto loc = number(data, size, h.mask, cpu, where, "cpumask");
    std::uint64_t off = loc & 0xffff;
    const std::uint64_t len = (loc >> 16) & 0xffff;
    if (off + len > static_cast<std::uint64_t>(size))
      corrupt(cpu, where, "ipi_send_cpumask: cpumask lies outside the record (corrupt trace.dat?)");
    if (!decode_cpumask_bitmap(data + off, static_cast<std::size_t>(len), mask_word_, big_endian_, ev.targets))
      corrupt(cpu, where, "ipi_send_cpumask: CPU out of range");
    ++info_.cpumask_forms[static_cast<std::size_t>(ev.targets.empty() ? CpumaskForm::Empty : CpumaskForm::HexWords)];
    ev.callsite = symbol_with_offset(number(data, size, h.callsite, cpu, where, "callsite"));
    ev.callback = symbol_with_offset(number(data, size, h.callback, cpu, where, "callback"));
    ev.kind = send_kind(ev.callsite, ev.callback, EventType::IpiSendCpumask);
  }

  // ftrace print: the text written to trace_marker, up to its NUL, without the trailing newline.
  void decode_marker(const Handler& h, std::uint32_t cpu, const unsigned char* data, int size, std::uint64_t where) {
    TraceEvent& ev = ev_;
    ev.type = EventType::Marker;
    if (h.text.offset < 0 || h.text.offset > size) corrupt(cpu, where, "print: buf lies outside the record");
    const char* b = reinterpret_cast<const char*>(data) + h.text.offset;
    const auto room = static_cast<std::size_t>(size - h.text.offset);
    const void* nul = std::memchr(b, '\0', room);
    std::string_view t(b, nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - b) : room);
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
    ev.text = t;
  }

  // The Arm ipi_* events, whose reason is a kernel string: printed by libtraceevent, then decoded
  // from that text. False: not an event to hand on (left out, or not ours).
  bool decode_printed(const Handler& h, std::uint64_t ts, std::uint32_t cpu, const unsigned char* data, int size,
                      std::uint64_t where) {
    TraceEvent& ev = ev_;
    tep_record rec{};
    rec.ts = ts;
    rec.cpu = static_cast<int>(cpu);
    rec.data = const_cast<unsigned char*>(data);
    rec.size = size;
    trace_seq_reset(&seq_);
    tep_print_event(tep_, &seq_, &rec, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&seq_);
    const std::string_view text(seq_.buffer, seq_.len);
    std::string reason;
    Decoded d = Decoded::Other;
    try {
      d = decode_text_fields(h.name, text, ev, &info_.cpumask_forms, &reason);
    } catch (const InputError& e) {
      corrupt(cpu, where, e.reason());
    }
    if (d == Decoded::Skipped) {
      bool found = false;
      for (auto& w : info_.warnings)
        if (w.what == reason) ++w.count, found = true;
      if (!found)
        info_.warnings.push_back({reason, 1, fmt::format("{}: CPU {} record at data offset {}", place_, cpu, where),
                                  std::string(text), {}});
      ++other_counts_[static_cast<std::size_t>(h.event->id)];
      return false;
    }
    if (d != Decoded::Ours) return false;
    ev.name = h.name;
    ev.ts_ns = ts;
    ev.cpu = cpu;
    return true;
  }

  void decode(const Handler& h, std::uint64_t ts, std::uint32_t cpu, const unsigned char* data, int size,
              std::uint64_t where) {
    TraceEvent& ev = ev_;
    ev.ts_ns = ts;
    ev.cpu = cpu;
    ev.name = h.name;
    ev.targets.clear();
    ev.callsite = {};
    ev.callback = {};
    ev.csd = 0;
    ev.vector = -1;
    ev.text = {};
    ev.kind = h.kind;
    // The one target CPU of `event`'s cpu field.
    auto target_cpu = [&](std::string_view event) {
      const auto t = number(data, size, h.cpu, cpu, where, "cpu");
      if (t >= kMaxCpus) corrupt(cpu, where, fmt::format("{}: cpu={} out of range", event, t));
      ev.targets.push_back(static_cast<std::uint32_t>(t));
    };
    switch (h.decode) {
      case Decode::SendCpu: {
        ev.type = EventType::IpiSendCpu;
        target_cpu("ipi_send_cpu");
        ev.callsite = symbol_with_offset(number(data, size, h.callsite, cpu, where, "callsite"));
        ev.callback = symbol_with_offset(number(data, size, h.callback, cpu, where, "callback"));
        ev.kind = send_kind(ev.callsite, ev.callback);
        break;
      }
      case Decode::SendCpumask:
        decode_cpumask(h, cpu, data, size, where);
        break;
      case Decode::CsdQueue: {
        ev.type = EventType::CsdQueueCpu;
        target_cpu("csd_queue_cpu");
        ev.callsite = symbol_with_offset(number(data, size, h.callsite, cpu, where, "callsite"));
        ev.callback = symbol_only(number(data, size, h.callback, cpu, where, "func"));
        ev.csd = number(data, size, h.csd, cpu, where, "csd");
        break;
      }
      case Decode::CsdEntry:
      case Decode::CsdExit:
        ev.type = h.decode == Decode::CsdEntry ? EventType::CsdFunctionEntry : EventType::CsdFunctionExit;
        ev.callback = symbol_only(number(data, size, h.callback, cpu, where, "func"));
        ev.csd = number(data, size, h.csd, cpu, where, "csd");
        break;
      case Decode::VecEntry:
      case Decode::VecExit: {
        ev.type = h.decode == Decode::VecEntry ? EventType::VectorEntry : EventType::VectorExit;
        const auto raw = number(data, size, h.vector, cpu, where, "vector");
        const long long v = h.vector.size == 4 ? static_cast<int>(static_cast<std::uint32_t>(raw)) : static_cast<long long>(raw);
        if (v < 0 || v > 255) corrupt(cpu, where, fmt::format("{}: vector={} out of range", h.name, v));
        ev.vector = static_cast<int>(v);
        break;
      }
      case Decode::WakeIdle: {
        ev.type = EventType::WakeIdleNoIpi;
        target_cpu("sched_wake_idle_without_ipi");
        break;
      }
      case Decode::Marker:
        decode_marker(h, cpu, data, size, where);
        break;
      case Decode::Printed:
        if (!decode_printed(h, ts, cpu, data, size, where)) return;
        break;
    }
    sink_.on_event(ev);
  }

  tep_handle* tep_;
  EventSink& sink_;
  std::string place_;
  ReadInfo& info_;
  bool big_endian_ = false;
  int mask_word_ = 8;
  std::vector<Handler> handlers_;
  std::vector<int> table_;
  std::vector<std::uint64_t> other_counts_;
  std::vector<std::string> other_names_;
  std::map<unsigned, std::uint64_t> no_format_counts_;
  std::unordered_map<std::uint64_t, std::string> sym_offset_cache_, sym_cache_;
  TraceEvent ev_;
  trace_seq seq_{};
};

// ---------------------------------------------------------------- direct page reading

struct Mapping {
  const unsigned char* data = nullptr;
  std::size_t size = 0;
  Mapping(int fd, const std::string& place) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw InputError(place, fmt::format("cannot stat: {}", std::strerror(errno)));
    size = static_cast<std::size_t>(st.st_size);
    if (size == 0) return;
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) throw InputError(place, fmt::format("cannot map the file: {}", std::strerror(errno)));
    ::madvise(p, size, MADV_SEQUENTIAL);
    data = static_cast<const unsigned char*>(p);
  }
  ~Mapping() {
    if (data) ::munmap(const_cast<unsigned char*>(data), size);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
};

struct KbufferFree {
  void operator()(kbuffer* k) const { kbuffer_free(k); }
};

// The pages of one CPU of one buffer, in order, with the events of the current page.
class CpuStream {
 public:
  CpuStream(const Mapping& map, const DatLayout& L, const DatBuffer& b, const DatCpuData& d, const std::string& place)
      : map_(map), L_(L), cpu_(d.cpu), begin_(d.offset), end_(d.offset + d.size), place_(place),
        page_size_(b.page_size ? b.page_size : L.page_size),
        kbuf_(kbuffer_alloc(L.long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
                            L.big_endian ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE)) {
    if (!kbuf_) throw std::runtime_error("kbuffer_alloc failed");
    header_ = 8u + static_cast<unsigned>(L.long_size);
    compressed_ = L.compression != "none";
    if (compressed_) {
      // The size trace-cmd records for compressed CPU data leaves out the 4-byte chunk count
      // (seen with trace-cmd 3.1.6); the chunk list itself says where it ends: bound by the file.
      end_ = map.size;
      chunk_pos_ = begin_;
      chunks_left_ = read_u32(chunk_pos_, "chunk count");
      chunk_pos_ += 4;
    } else {
      page_pos_ = begin_;
      released_ = begin_;
    }
  }

  std::uint32_t cpu() const { return cpu_; }
  bool done() const { return done_; }
  std::uint64_t ts() const { return ts_; }
  const unsigned char* data() const { return data_; }
  int size() const { return size_; }
  std::uint64_t where() const { return where_; }
  long long missed() const { return missed_; }

  /// Moves to the first or next event; done() at the end.
  void next() {
    missed_ = 0;
    if (page_) {
      void* d = kbuffer_next_event(kbuf_.get(), &ts_);
      if (d && take(d)) return;
    }
    for (;;) {
      if (!load_page()) {
        done_ = true;
        return;
      }
      void* d = kbuffer_read_event(kbuf_.get(), &ts_);
      if (d && take(d)) {
        const int m = kbuffer_missed_events(kbuf_.get());
        missed_ = m == 0 ? 0 : (m < 0 ? -1 : m);
        return;
      }
    }
  }

 private:
  [[noreturn]] void fail(std::uint64_t at, const std::string& why) const {
    throw InputError(fmt::format("{}: CPU {} data at byte {}", place_, cpu_, at), why + " (truncated or corrupt trace.dat)");
  }
  std::uint32_t read_u32(std::uint64_t at, const char* what) const {
    if (at + 4 > end_) fail(at, fmt::format("{} past the end of the CPU's data", what));
    const unsigned char* p = map_.data + at;
    return L_.big_endian ? (std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3])
                         : (std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24);
  }

  bool take(void* d) {
    const auto* p = static_cast<const unsigned char*>(d);
    const int sz = kbuffer_event_size(kbuf_.get());
    if (sz < 0 || p < page_ || p + sz > page_ + page_size_)
      fail(page_where_, "an event reaches past the end of its ring-buffer page");
    data_ = p;
    size_ = sz;
    where_ = page_where_ + static_cast<std::uint64_t>(p - page_);
    return true;
  }

  // The next page with a valid header; false at the end of the CPU's data.
  bool load_page() {
    for (;;) {
      const unsigned char* page = nullptr;
      if (compressed_) {
        if (chunk_off_ >= chunk_.size() - kSlack || chunk_.empty()) {
          if (chunks_left_ == 0) return false;
          const auto zsize = read_u32(chunk_pos_, "chunk size");
          const auto usize = read_u32(chunk_pos_ + 4, "chunk size");
          const std::uint64_t zdata = chunk_pos_ + 8;
          if (zdata + zsize > end_) fail(chunk_pos_, "a compressed chunk reaches past the end of the CPU's data");
          if (usize == 0 || usize % page_size_ != 0 || usize > (1u << 30))
            fail(chunk_pos_, fmt::format("compressed chunk of {} bytes is not a whole number of {}-byte pages", usize, page_size_));
          chunk_.assign(usize + kSlack, 0);
          if (!dat_decompress(L_.compression, map_.data + zdata, zsize, chunk_.data(), usize, place_))
            fail(chunk_pos_, fmt::format("{} chunk does not decompress", L_.compression));
          chunk_base_ = uncompressed_;
          uncompressed_ += usize;
          chunk_pos_ = zdata + zsize;
          --chunks_left_;
          chunk_off_ = 0;
        }
        page = chunk_.data() + chunk_off_;
        page_where_ = chunk_base_ + chunk_off_;
        chunk_off_ += page_size_;
      } else {
        release_behind();
        if (page_pos_ >= end_) return false;
        if (page_pos_ + page_size_ > end_) fail(page_pos_, "the CPU's data ends inside a page");
        if (page_pos_ + page_size_ + kSlack <= map_.size) {
          page = map_.data + page_pos_;
        } else {  // the file's last page: copy it, kbuffer may peek a few bytes past the data
          tail_.assign(page_size_ + kSlack, 0);
          std::memcpy(tail_.data(), map_.data + page_pos_, page_size_);
          page = tail_.data();
        }
        page_where_ = page_pos_;
        page_pos_ += page_size_;
      }
      // Header: u64 timestamp, then the commit word (long) with flags in bits 27..31.
      std::uint64_t commit = 0;
      const unsigned char* c = page + 8;
      const int ls = L_.long_size;
      for (int i = 0; i < ls; ++i) commit |= std::uint64_t{c[i]} << (8 * (L_.big_endian ? ls - 1 - i : i));
      const std::uint64_t used = commit & ((1u << 27) - 1);
      const bool stored = (commit >> 30) & 1 && (commit >> 31) & 1;
      if (used + header_ + (stored ? static_cast<unsigned>(ls) : 0u) > page_size_)
        fail(page_where_, fmt::format("ring-buffer page claims {} bytes of events in a {}-byte page", used, page_size_));
      page_ = page;
      kbuffer_load_subbuffer(kbuf_.get(), const_cast<unsigned char*>(page));
      return true;
    }
  }

  // Drops the mapped pages this CPU has read (they would count in the process's resident memory).
  void release_behind() {
    constexpr std::uint64_t kStep = 4u << 20;
    if (page_pos_ < released_ + 2 * kStep) return;
    const std::uint64_t to = (page_pos_ - kStep) & ~(kStep - 1);
    const std::uint64_t from = (released_ + 4095) & ~std::uint64_t{4095};
    if (to > from) ::madvise(const_cast<unsigned char*>(map_.data) + from, to - from, MADV_DONTNEED);
    released_ = to;
  }

  static constexpr std::size_t kSlack = 16;
  std::uint64_t released_ = 0;
  const Mapping& map_;
  const DatLayout& L_;
  std::uint32_t cpu_;
  std::uint64_t begin_, end_;
  const std::string& place_;
  std::uint32_t page_size_;
  std::unique_ptr<kbuffer, KbufferFree> kbuf_;
  unsigned header_ = 16;
  bool compressed_ = false;
  std::uint64_t page_pos_ = 0;
  std::uint64_t chunk_pos_ = 0, chunk_base_ = 0, uncompressed_ = 0;
  std::uint32_t chunks_left_ = 0;
  std::vector<unsigned char> chunk_, tail_;
  std::size_t chunk_off_ = 0;
  const unsigned char* page_ = nullptr;
  std::uint64_t page_where_ = 0;
  bool done_ = false;
  unsigned long long ts_ = 0;
  const unsigned char* data_ = nullptr;
  int size_ = 0;
  std::uint64_t where_ = 0;
  long long missed_ = 0;
};

void read_buffer_direct(const Mapping& map, const DatLayout& L, const DatBuffer& b, Decoder& dec, EventSink& sink,
                        const std::string& place) {
  std::vector<std::unique_ptr<CpuStream>> streams;
  for (const auto& d : b.cpus) {
    streams.push_back(std::make_unique<CpuStream>(map, L, b, d, place));
    streams.back()->next();
    if (streams.back()->done()) streams.pop_back();
  }
  // Min-heap of stream indexes by (ts, cpu): ties go to the lowest CPU, as in libtracecmd.
  std::vector<CpuStream*> heap;
  for (auto& s : streams) heap.push_back(s.get());
  auto later = [](const CpuStream* a, const CpuStream* x) {
    return a->ts() != x->ts() ? a->ts() > x->ts() : a->cpu() > x->cpu();
  };
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    CpuStream* s = heap.front();
    if (s->missed() != 0) sink.on_lost_events(s->cpu(), s->missed() > 0 ? static_cast<std::uint64_t>(s->missed()) : 0);
    dec.record(s->ts(), s->cpu(), s->data(), s->size(), s->where());
    std::pop_heap(heap.begin(), heap.end(), later);
    s->next();
    if (s->done()) heap.pop_back();
    else std::push_heap(heap.begin(), heap.end(), later);
  }
}

// ---------------------------------------------------------------- libtracecmd records

struct IterContext {
  Decoder* dec;
  EventSink* sink;
  std::exception_ptr error;
};

int on_record(tracecmd_input*, tep_record* rec, int, void* data) {
  auto* c = static_cast<IterContext*>(data);
  try {
    if (rec->missed_events != 0)
      c->sink->on_lost_events(static_cast<std::uint32_t>(rec->cpu),
                              rec->missed_events > 0 ? static_cast<std::uint64_t>(rec->missed_events) : 0);
    c->dec->record(rec->ts, static_cast<std::uint32_t>(rec->cpu), static_cast<const unsigned char*>(rec->data), rec->size,
                   static_cast<std::uint64_t>(rec->offset));
  } catch (...) {
    c->error = std::current_exception();
    return 1;  // stops the iteration
  }
  return 0;
}

void read_via_libtracecmd(const std::string& open_path, const std::string& place, Decoder& dec, EventSink& sink,
                          ReadInfo& info, CaptureGuard& capture, bool announce_buffers) {
  Handle handle(tracecmd_open(open_path.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS));
  if (!handle)
    throw InputError(place, fmt::format("libtracecmd cannot read this trace.dat (truncated or corrupt?){}{}",
                                        capture.messages.empty() ? "" : ": ", capture.messages));
  capture.messages.clear();
  IterContext ctx{&dec, &sink, nullptr};
  if (announce_buffers) sink.on_buffer("");
  dec.begin_buffer();
  tracecmd_iterate_events(handle.get(), nullptr, 0, on_record, &ctx);
  if (ctx.error) std::rethrow_exception(ctx.error);
  dec.end_buffer();
  const int instances = tracecmd_buffer_instances(handle.get());
  for (int i = 0; i < instances; ++i) {
    Handle inst(tracecmd_buffer_instance_handle(handle.get(), i));
    if (!inst) continue;
    const char* name = tracecmd_buffer_instance_name(handle.get(), i);
    sink.on_buffer(name ? name : "?");
    dec.begin_buffer();
    tracecmd_iterate_events(inst.get(), nullptr, 0, on_record, &ctx);
    if (ctx.error) std::rethrow_exception(ctx.error);
    dec.end_buffer();
  }
  (void)info;
}

struct TepFree {
  void operator()(tep_handle* t) const { tep_free(t); }
};
using TepPtr = std::unique_ptr<tep_handle, TepFree>;

// "name: X" and "ID: N" of a format file.
bool format_name_id(std::string_view text, std::string_view& name, int& id) {
  const auto n = text.find("name: ");
  const auto i = text.find("ID: ");
  if (n == std::string_view::npos || i == std::string_view::npos) return false;
  const auto ne = text.find('\n', n);
  name = text.substr(n + 6, ne == std::string_view::npos ? std::string_view::npos : ne - n - 6);
  id = std::atoi(std::string(text.substr(i + 4, 12)).c_str());
  return !name.empty() && id >= 0;
}

// The formats handed to libtraceevent's parser: those of the tracepoint table.
bool wanted_format(std::string_view sys, std::string_view name) { return find_tracepoint(name, sys) != nullptr; }

// The event formats, kallsyms and printk formats of the file, from the documented layout: only the
// formats ipilab decodes go through libtraceevent's parser (parsing every format of a trace-cmd
// file costs more than decoding millions of events); the others keep their (id, name).
TepPtr build_tep(const DatLayout& L, std::vector<std::pair<int, std::string>>& unparsed, bool with_symbols = true) {
  TepPtr t(tep_alloc());
  if (!t) return nullptr;
  tep_set_file_bigendian(t.get(), L.big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(t.get(), std::endian::native == std::endian::big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_long_size(t.get(), L.long_size);
  tep_set_page_size(t.get(), static_cast<int>(L.page_size));
  if (L.cpus) tep_set_cpus(t.get(), static_cast<int>(L.cpus));
  std::string hp(reinterpret_cast<const char*>(L.header_page.data), L.header_page.size);
  if (tep_parse_header_page(t.get(), hp.data(), hp.size(), L.long_size) != 0) return nullptr;
  for (const auto& [sys, b] : L.formats) {
    const std::string_view text(reinterpret_cast<const char*>(b.data), b.size);
    std::string_view name;
    int id = 0;
    if (!format_name_id(text, name, id)) return nullptr;
    if (wanted_format(sys, name)) {
      if (tep_parse_event(t.get(), text.data(), text.size(), sys.c_str()) != 0) unparsed.emplace_back(id, std::string(name));
    } else {
      unparsed.emplace_back(id, std::string(name));
    }
  }
  if (!with_symbols) return t;
  const std::string ksyms(reinterpret_cast<const char*>(L.kallsyms.data), L.kallsyms.size);
  if (!ksyms.empty()) tep_parse_kallsyms(t.get(), ksyms.c_str());
  const std::string printk(reinterpret_cast<const char*>(L.printk.data), L.printk.size);
  if (!printk.empty()) tep_parse_printk_formats(t.get(), printk.c_str());
  return t;
}

}  // namespace

// libtraceevent parses the file's event format texts in C, and some malformed ones crash it (a NULL
// dereference inside tep_parse_event, reached through tracecmd_open_head, found by fuzzing
// libtraceevent 1.7.1). So the formats are parsed once in a child process first, the same way the
// read below parses them; if the child dies, the file is refused as corrupt (exit 2) instead of
// taking ipilab down. A fork costs well under a millisecond beside reading the events.
static void parse_formats_in_child(const std::string& open_path, const DatLayout& L, bool direct, const std::string& place) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return;  // cannot isolate: read in-process as before
  if (pid == 0) {
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) std::signal(sig, SIG_DFL);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
    }
    // Only what the read below will parse: the formats ipilab decodes (direct reading; kallsyms and
    // printk formats are plain text scanned by sscanf), or everything libtracecmd opens.
    if (direct && L.metadata) {
      std::vector<std::pair<int, std::string>> unparsed;
      TepPtr t = build_tep(L, unparsed, /*with_symbols=*/false);
      if (t) ::_exit(0);  // else the read falls back to libtracecmd: parse what it will
    }
    tracecmd_input* h = tracecmd_open_head(open_path.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS);
    (void)h;
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return;
  if (WIFSIGNALED(status))
    throw InputError(place, fmt::format("the file's event formats crash libtraceevent when parsed (signal {}, {}): "
                                        "the trace.dat is corrupt or not written by the kernel's tracing tools",
                                        WTERMSIG(status), strsignal(WTERMSIG(status))));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    throw InputError(place, fmt::format("the file's event formats make libtraceevent fail when parsed (exit {}): "
                                        "the trace.dat is corrupt or not written by the kernel's tracing tools",
                                        WEXITSTATUS(status)));
}

ReadInfo read_dat_trace(const std::filesystem::path& path, EventSink& sink, int fd_in, const std::string& place_in) {
  ReadInfo info;
  info.format = TraceFormat::TraceDat;
  info.knows_kernel_formats = true;
  const std::string place = place_in.empty() ? path.string() : place_in;
  int fd = fd_in;
  bool own_fd = false;
  if (fd < 0) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(place, fmt::format("cannot open: {}", std::strerror(errno)));
    own_fd = true;
  }
  struct FdCloser {
    int fd;
    bool own;
    ~FdCloser() {
      if (own) ::close(fd);
    }
  } closer{fd, own_fd};
  const std::string open_path = fmt::format("/proc/self/fd/{}", fd);
  const Mapping map(fd, place);
  const DatLayout L = parse_dat_layout(map.data, map.size, place);
  info.dat_version = L.version;
  info.dat_compression = L.compression;
  info.big_endian = L.big_endian;
  info.long_size = L.long_size;
  for (const auto& b : L.buffers) {
    info.buffers.push_back(b.name);
    for (const auto& d : b.cpus) info.cpus_seen = std::max(info.cpus_seen, d.cpu + 1);
  }
  info.header_cpus = L.cpus;

  CaptureGuard capture;
  const bool direct = L.timestamp_options.empty() && (L.compression == "none" || L.compression == "zstd" ||
                                                       L.compression == "zlib");
  std::vector<std::pair<int, std::string>> unparsed;
  parse_formats_in_child(open_path, L, direct, place);
  TepPtr own_tep;
  if (direct && L.metadata) own_tep = build_tep(L, unparsed);
  Handle head;
  tep_handle* tep = own_tep.get();
  if (!tep) {
    unparsed.clear();
    // No plugins: they only change how events print, and loading them costs time.
    head.reset(tracecmd_open_head(open_path.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS));
    if (!head)
      throw InputError(place, fmt::format("libtracecmd cannot read this trace.dat (truncated or corrupt?){}{}",
                                          capture.messages.empty() ? "" : ": ", capture.messages));
    tep = tracecmd_get_tep(head.get());
    if (!tep) throw InputError(place, "libtracecmd returned no event formats");
  }
  Decoder dec(tep, sink, place, info);
  dec.add_handlers();
  dec.build_table(unparsed);
  sink.on_begin(L.cpus > 0 ? L.cpus : static_cast<std::uint32_t>(std::max(0, tep_get_cpus(tep))));

  const bool latency = std::any_of(L.buffers.begin(), L.buffers.end(), [](const DatBuffer& b) { return b.latency_text; });
  if (latency) throw InputError(place, "this trace.dat holds latency-tracer text, not ring-buffer events");
  const bool read_pages = direct && !tep_is_old_format(tep);
  const bool announce = L.buffers.size() > 1;
  capture.messages.clear();
  if (read_pages) {
    info.direct_decode = true;
    for (const auto& b : L.buffers) {
      if (announce) sink.on_buffer(b.name);
      dec.begin_buffer();
      read_buffer_direct(map, L, b, dec, sink, place);
      dec.end_buffer();
    }
  } else {
    read_via_libtracecmd(open_path, place, dec, sink, info, capture, announce);
  }
  if (!capture.messages.empty())
    throw InputError(place, fmt::format("libtracecmd reported errors while reading the events (truncated or "
                                        "corrupt trace.dat?): {}",
                                        capture.messages));
  return info;
}

ReadInfo read_dat_trace_via_libtracecmd(const std::filesystem::path& path, EventSink& sink) {
  ReadInfo info;
  info.format = TraceFormat::TraceDat;
  info.knows_kernel_formats = true;
  const std::string place = path.string();
  CaptureGuard capture;
  Handle head(tracecmd_open_head(place.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS));
  if (!head) throw InputError(place, "libtracecmd cannot read this trace.dat");
  tep_handle* tep = tracecmd_get_tep(head.get());
  Decoder dec(tep, sink, place, info);
  dec.add_handlers();
  dec.build_table();
  sink.on_begin(static_cast<std::uint32_t>(std::max(0, tep_get_cpus(tep))));
  Handle probe(tracecmd_open(place.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS));
  const bool announce = probe && tracecmd_buffer_instances(probe.get()) > 0;
  probe.reset();
  read_via_libtracecmd(place, place, dec, sink, info, capture, announce);
  return info;
}

}  // namespace ipilab::trace
