// Builds a trace.dat by hand for the trace tests: the event formats of this repository's copy of a
// Linux 6.18 tracefs (tests/trace/data/formats/), a small kallsyms, and ring-buffer pages laid out
// as the kernel's header_page and header_event say (kernel/trace/ring_buffer.c: a page is a u64
// timestamp, a local_t commit count and the events; an event is a u32 {type_len:5, time_delta:27}
// followed, for type_len 1..28, by type_len * 4 bytes of data). Every record's data starts with the
// common fields (u16 common_type, u8 flags, u8 preempt_count, s32 pid).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "test_util.h"
#include "trace/dat_writer.h"

namespace ipilab::trace::testing {

// Addresses of the hand-made kallsyms.
inline constexpr std::uint64_t kSymCfsHandler = 0xffffffff81100000ull;  // generic_smp_call_function_single_interrupt
inline constexpr std::uint64_t kSymManyCond = 0xffffffff81200000ull;    // smp_call_function_many_cond
inline constexpr std::uint64_t kSymMarkWrite = 0xffffffff81300000ull;   // tracing_mark_write
inline constexpr std::uint64_t kSymResched = 0xffffffff81400000ull;     // resched_curr
inline constexpr std::uint64_t kPrintkFmt = 0xffffffff82000000ull;      // a trace_printk format

/// One record of one CPU: its time and its data after the common fields.
struct HandRecord {
  std::uint64_t ts;
  std::uint16_t id;
  std::string fields;  // bytes after the 8 bytes of common fields
};

template <typename T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

class HandDat {
 public:
  /// `cpus`: the CPU count the file declares (flyrecord table size).
  explicit HandDat(std::uint32_t cpus) : per_cpu_(cpus) {}

  void add(std::uint32_t cpu, std::uint64_t ts, std::uint16_t id, std::string fields) {
    per_cpu_.at(cpu).push_back({ts, id, std::move(fields)});
  }

  // ---- the records of the formats in tests/trace/data/formats (ids of that tracefs) ----
  void ipi_send_cpu(std::uint32_t cpu, std::uint64_t ts, std::uint32_t target, std::uint64_t callsite, std::uint64_t callback) {
    std::string f;
    put<std::uint32_t>(f, target);
    put<std::uint32_t>(f, 0);  // padding to offset 16
    put<std::uint64_t>(f, callsite);
    put<std::uint64_t>(f, callback);
    add(cpu, ts, 354, f);
  }
  /// ipi_send_cpumask with a one-long bitmap (`bits`, 0 = empty mask) in its __data_loc.
  void ipi_send_cpumask(std::uint32_t cpu, std::uint64_t ts, std::uint64_t bits, std::uint64_t callsite, std::uint64_t callback) {
    std::string f;
    put<std::uint32_t>(f, 32u | (8u << 16));  // data at record offset 32, 8 bytes
    put<std::uint32_t>(f, 0);
    put<std::uint64_t>(f, callsite);
    put<std::uint64_t>(f, callback);
    put<std::uint64_t>(f, bits);
    add(cpu, ts, 353, f);
  }
  /// irq_vectors: call_function_entry 153 / _exit 152, call_function_single_entry 151 / _exit 150.
  void vector(std::uint32_t cpu, std::uint64_t ts, std::uint16_t id, std::int32_t vec) {
    std::string f;
    put<std::int32_t>(f, vec);
    add(cpu, ts, id, f);
  }
  void print(std::uint32_t cpu, std::uint64_t ts, const std::string& text) {
    std::string f;
    put<std::uint64_t>(f, kSymMarkWrite);
    f += text;
    f += '\n';
    f += '\0';
    add(cpu, ts, 5, f);
  }
  void bprint(std::uint32_t cpu, std::uint64_t ts, std::uint32_t arg) {
    std::string f;
    put<std::uint64_t>(f, kSymResched);
    put<std::uint64_t>(f, kPrintkFmt);
    put<std::uint32_t>(f, arg);
    add(cpu, ts, 6, f);
  }
  void function(std::uint32_t cpu, std::uint64_t ts, std::uint64_t ip, std::uint64_t parent) {
    std::string f;
    put<std::uint64_t>(f, ip);
    put<std::uint64_t>(f, parent);
    add(cpu, ts, 1, f);
  }
  void kernel_stack(std::uint32_t cpu, std::uint64_t ts, std::vector<std::uint64_t> callers) {
    std::string f;
    put<std::int32_t>(f, static_cast<std::int32_t>(callers.size()));
    put<std::uint32_t>(f, 0);
    callers.resize(8, 0);
    for (auto c : callers) put<std::uint64_t>(f, c);
    add(cpu, ts, 4, f);
  }

  /// Writes the file. Page timestamps are each page's first record time.
  void write(const std::filesystem::path& out) const {
    const auto dir = std::filesystem::path(IPILAB_SOURCE_DIR) / "tests/trace/data/formats";
    DatContents c;
    c.page_size = 4096;
    c.header_page = slurp(dir / "header_page");
    c.header_event = slurp(dir / "header_event");
    for (const char* e : {"ftrace_function", "ftrace_kernel_stack", "ftrace_print", "ftrace_bprint"})
      c.ftrace_formats.push_back(slurp(dir / (std::string(e) + ".format")));
    c.systems.push_back({"ipi", {slurp(dir / "ipi_ipi_send_cpu.format"), slurp(dir / "ipi_ipi_send_cpumask.format")}});
    c.systems.push_back({"irq_vectors",
                         {slurp(dir / "irq_vectors_call_function_entry.format"), slurp(dir / "irq_vectors_call_function_exit.format"),
                          slurp(dir / "irq_vectors_call_function_single_entry.format"),
                          slurp(dir / "irq_vectors_call_function_single_exit.format")}});
    c.kallsyms = "ffffffff81100000 T generic_smp_call_function_single_interrupt\n"
                 "ffffffff81200000 T smp_call_function_many_cond\n"
                 "ffffffff81300000 T tracing_mark_write\n"
                 "ffffffff81400000 T resched_curr\n"
                 "ffffffff81500000 T _end\n";
    c.printk_formats = "0xffffffff82000000 : \"hand-made trace_printk %u\\n\"\n";
    c.saved_cmdlines = "100 load\n";
    std::vector<std::FILE*> files;
    for (const auto& recs : per_cpu_) {
      if (recs.empty()) {
        files.push_back(nullptr);
        continue;
      }
      std::FILE* f = std::tmpfile();
      const std::string page = make_page(recs);
      std::fwrite(page.data(), 1, page.size(), f);
      std::rewind(f);
      files.push_back(f);
    }
    c.cpu_pages = files;
    std::ofstream o(out, std::ios::binary);
    write_dat_v6(o, c);
    for (auto* f : files)
      if (f) std::fclose(f);
  }

 private:
  static std::string make_page(const std::vector<HandRecord>& recs) {
    std::string events;
    std::uint64_t prev = recs.front().ts;
    for (const auto& r : recs) {
      std::string data;
      put<std::uint16_t>(data, r.id);
      put<std::uint8_t>(data, 0);
      put<std::uint8_t>(data, 0);
      put<std::int32_t>(data, 100);
      data += r.fields;
      while (data.size() % 4) data += '\0';
      const auto type_len = static_cast<std::uint32_t>(data.size() / 4);  // <= 28 for these records
      const auto delta = static_cast<std::uint32_t>(r.ts - prev);
      prev = r.ts;
      put<std::uint32_t>(events, type_len | (delta << 5));
      events += data;
    }
    std::string page;
    put<std::uint64_t>(page, recs.front().ts);
    put<std::uint64_t>(page, events.size());
    page += events;
    page.resize(4096, '\0');
    return page;
  }

  std::vector<std::vector<HandRecord>> per_cpu_;
};

}  // namespace ipilab::trace::testing
