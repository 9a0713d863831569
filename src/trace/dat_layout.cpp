#include "trace/dat_layout.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <zlib.h>
#include <zstd.h>

#include "common/error.h"

namespace ipilab::trace {

namespace {

// Option ids of trace-cmd.dat.v7(5) (the same numbers in v6).
constexpr int kOptDone = 0, kOptDate = 1, kOptBuffer = 3, kOptOffset = 7, kOptCpuCount = 8, kOptTimeShift = 12,
              kOptTsc2Nsec = 14, kOptHeaderInfo = 16, kOptFtraceEvents = 17, kOptEventFormats = 18, kOptKallsyms = 19, kOptPrintk = 20,
              kOptBufferText = 22;

class Cursor {
 public:
  Cursor(const unsigned char* data, std::size_t size, std::size_t pos, bool be, const std::string& place,
         std::string what)
      : d_(data), n_(size), p_(pos), be_(be), place_(place), what_(std::move(what)) {}
  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(place_, fmt::format("{} at byte {}: {} (truncated or corrupt trace.dat)", what_, p_, why));
  }
  void need(std::uint64_t k) const {
    if (k > n_ || p_ > n_ - k) fail(fmt::format("needs {} more bytes, the {} ends at byte {}", k, what_ == "file" ? "file" : "block", n_));
  }
  std::uint64_t number(int bytes) {
    need(static_cast<std::uint64_t>(bytes));
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      const std::uint64_t b = d_[p_ + static_cast<std::size_t>(i)];
      v |= b << (8 * (be_ ? bytes - 1 - i : i));
    }
    p_ += static_cast<std::size_t>(bytes);
    return v;
  }
  std::string string() {
    const void* z = p_ < n_ ? std::memchr(d_ + p_, '\0', n_ - p_) : nullptr;
    if (!z) fail("unterminated string");
    const auto len = static_cast<std::size_t>(static_cast<const unsigned char*>(z) - (d_ + p_));
    std::string s(reinterpret_cast<const char*>(d_ + p_), len);
    p_ += len + 1;
    return s;
  }
  void skip(std::uint64_t k) {
    need(k);
    p_ += static_cast<std::size_t>(k);
  }
  bool literal(std::string_view s) {
    if (n_ - std::min(n_, p_) < s.size()) return false;
    if (std::memcmp(d_ + p_, s.data(), s.size()) != 0) return false;
    p_ += s.size();
    return true;
  }
  std::size_t pos() const { return p_; }
  void seek(std::uint64_t p) {
    if (p > n_) fail(fmt::format("offset {} lies past the end ({})", p, n_));
    p_ = static_cast<std::size_t>(p);
  }
  const unsigned char* here() const { return d_ + p_; }

 private:
  const unsigned char* d_;
  std::size_t n_, p_;
  bool be_;
  const std::string& place_;
  std::string what_;
};

void check_cpu_ranges(const DatBuffer& b, std::size_t file_size, const std::string& place) {
  for (const auto& c : b.cpus)
    if (c.size > 0 && (c.offset > file_size || c.size > file_size - c.offset))
      throw InputError(place, fmt::format("buffer '{}' CPU {}: event data at {} + {} bytes lies past the end of the "
                                          "file ({} bytes): truncated trace.dat",
                                          b.name, c.cpu, c.offset, c.size, file_size));
}

// v6: "flyrecord\0" then per CPU (u64 offset, u64 size), or "latency  \0"; "options  \0" first.
void read_v6_data(Cursor& c, DatLayout& L, DatBuffer& b, bool allow_options, const unsigned char* data,
                  std::size_t size, const std::string& place);

void read_v6_options(Cursor& c, DatLayout& L, const unsigned char* data, std::size_t size, const std::string& place) {
  for (;;) {
    const auto id = static_cast<int>(c.number(2));
    if (id == kOptDone) return;
    const auto len = c.number(4);
    c.need(len);
    Cursor o(c.here(), static_cast<std::size_t>(len), 0, L.big_endian, place, "option");
    if (id == kOptDate || id == kOptOffset || id == kOptTimeShift || id == kOptTsc2Nsec) L.timestamp_options.push_back(id);
    if (id == kOptCpuCount && len >= 4) L.cpus = static_cast<std::uint32_t>(o.number(4));
    if (id == kOptBuffer) {
      const auto off = o.number(8);
      DatBuffer b;
      b.name = o.string();
      b.page_size = L.page_size;
      Cursor bc(data, size, 0, L.big_endian, place, "file");
      bc.seek(off);
      read_v6_data(bc, L, b, false, data, size, place);
      L.buffers.push_back(std::move(b));
    }
    c.skip(len);
  }
}

void read_v6_data(Cursor& c, DatLayout& L, DatBuffer& b, bool allow_options, const unsigned char* data,
                  std::size_t size, const std::string& place) {
  for (;;) {
    if (c.literal(std::string_view("options  \0", 10))) {
      if (!allow_options) c.fail("options inside a buffer instance");
      read_v6_options(c, L, data, size, place);
      continue;
    }
    if (c.literal(std::string_view("latency  \0", 10))) {
      b.latency_text = true;
      return;
    }
    if (c.literal(std::string_view("flyrecord\0", 10))) {
      for (std::uint32_t cpu = 0; cpu < L.cpus; ++cpu) {
        DatCpuData d;
        d.cpu = cpu;
        d.offset = c.number(8);
        d.size = c.number(8);
        if (d.size) b.cpus.push_back(d);
      }
      return;
    }
    c.fail("expected 'options', 'flyrecord' or 'latency'");
  }
}

DatBlob blob(Cursor& c, std::uint64_t n) {
  c.need(n);
  DatBlob b{c.here(), static_cast<std::size_t>(n)};
  c.skip(n);
  return b;
}

void read_header_info(Cursor& c, DatLayout& L) {
  if (!c.literal(std::string_view("header_page\0", 12))) c.fail("expected 'header_page'");
  L.header_page = blob(c, c.number(8));
  if (!c.literal(std::string_view("header_event\0", 13))) c.fail("expected 'header_event'");
  c.skip(c.number(8));
}
// ftrace's own events (print, bprint, function, kernel_stack...): system "ftrace", as tracefs
// lists them under events/ftrace/.
void read_ftrace_formats(Cursor& c, DatLayout& L) {
  const auto ftrace = c.number(4);
  for (std::uint64_t i = 0; i < ftrace; ++i) L.formats.emplace_back("ftrace", blob(c, c.number(8)));
}
void read_event_formats(Cursor& c, DatLayout& L) {
  const auto systems = c.number(4);
  for (std::uint64_t s = 0; s < systems; ++s) {
    const std::string sys = c.string();
    const auto events = c.number(4);
    for (std::uint64_t e = 0; e < events; ++e) L.formats.emplace_back(sys, blob(c, c.number(8)));
  }
}

void parse_v6(Cursor& c, DatLayout& L, const unsigned char* data, std::size_t size, const std::string& place) {
  read_header_info(c, L);
  read_ftrace_formats(c, L);
  read_event_formats(c, L);
  L.kallsyms = blob(c, c.number(4));
  L.printk = blob(c, c.number(4));
  L.metadata = true;
  c.skip(c.number(8));  // saved cmdlines
  L.cpus = static_cast<std::uint32_t>(c.number(4));
  if (L.cpus > 65536) c.fail(fmt::format("{} CPUs", L.cpus));
  DatBuffer top;
  top.page_size = L.page_size;
  read_v6_data(c, L, top, true, data, size, place);
  L.buffers.insert(L.buffers.begin(), std::move(top));
}

// A v7 section's content (decompressed into L.owned when flagged compressed).
Cursor section(std::uint64_t offset, int want_id, DatLayout& L, const unsigned char* data, std::size_t size,
               const std::string& place) {
  Cursor c(data, size, 0, L.big_endian, place, "file");
  c.seek(offset);
  const auto id = c.number(2);
  const auto flags = c.number(2);
  (void)c.number(4);
  const auto sec_size = c.number(8);
  if (static_cast<int>(id) != want_id) c.fail(fmt::format("section {} where section {} was expected", id, want_id));
  if (flags & 1) {
    const auto zsize = c.number(4), usize = c.number(4);
    c.need(zsize);
    if (usize > (1u << 30)) c.fail("section larger than 1 GiB");
    L.owned.emplace_back(static_cast<std::size_t>(usize));
    auto& plain = L.owned.back();
    if (!dat_decompress(L.compression, c.here(), static_cast<std::size_t>(zsize), plain.data(), plain.size(), place))
      c.fail("compressed section does not decompress");
    return Cursor(plain.data(), plain.size(), 0, L.big_endian, place, "section");
  }
  c.need(sec_size);
  return Cursor(c.here(), static_cast<std::size_t>(sec_size), 0, L.big_endian, place, "section");
}

void parse_v7_options(std::uint64_t offset, DatLayout& L, const unsigned char* data, std::size_t size,
                      const std::string& place) {
  std::vector<std::pair<int, std::uint64_t>> sections;
  std::set<std::uint64_t> seen;
  bool have_top = false;
  while (offset != 0) {
    if (!seen.insert(offset).second) throw InputError(place, "trace.dat options sections form a loop (corrupt file)");
    Cursor c(data, size, 0, L.big_endian, place, "file");
    c.seek(offset);
    const auto id = c.number(2);
    const auto flags = c.number(2);
    (void)c.number(4);  // description string id
    const auto sec_size = c.number(8);
    if (id != 0) c.fail(fmt::format("section {} where an options section was expected", id));
    std::vector<unsigned char> plain;
    const unsigned char* opts = nullptr;
    std::size_t opts_size = 0;
    if (flags & 1) {
      const auto zsize = c.number(4), usize = c.number(4);
      c.need(zsize);
      if (usize > (256u << 20)) c.fail("options section larger than 256 MiB");
      plain.resize(static_cast<std::size_t>(usize));
      if (!dat_decompress(L.compression, c.here(), static_cast<std::size_t>(zsize), plain.data(), plain.size(), place))
        c.fail("compressed options section does not decompress");
      opts = plain.data();
      opts_size = plain.size();
    } else {
      c.need(sec_size);
      opts = c.here();
      opts_size = static_cast<std::size_t>(sec_size);
    }
    Cursor o(opts, opts_size, 0, L.big_endian, place, "options section");
    std::uint64_t next = 0;
    for (;;) {
      const auto oid = static_cast<int>(o.number(2));
      const auto len = o.number(4);
      o.need(len);
      Cursor v(o.here(), static_cast<std::size_t>(len), 0, L.big_endian, place, "option");
      if (oid == kOptDone) {
        next = len >= 8 ? v.number(8) : 0;
        break;
      }
      if (oid == kOptDate || oid == kOptOffset || oid == kOptTimeShift || oid == kOptTsc2Nsec)
        L.timestamp_options.push_back(oid);
      if (oid == kOptCpuCount && len >= 4) L.cpus = static_cast<std::uint32_t>(v.number(4));
      if (oid >= kOptHeaderInfo && oid <= kOptPrintk && len >= 8) sections.emplace_back(oid, v.number(8));
      if (oid == kOptBuffer || oid == kOptBufferText) {
        DatBuffer b;
        (void)v.number(8);  // section offset
        b.name = v.string();
        b.clock = v.string();
        if (oid == kOptBufferText) {
          b.latency_text = true;
        } else {
          b.page_size = static_cast<std::uint32_t>(v.number(4));
          const auto n = v.number(4);
          if (n > 65536) v.fail(fmt::format("{} CPUs", n));
          for (std::uint64_t i = 0; i < n; ++i) {
            DatCpuData d;
            d.cpu = static_cast<std::uint32_t>(v.number(4));
            d.offset = v.number(8);
            d.size = v.number(8);
            if (d.cpu >= 65536) v.fail(fmt::format("CPU {}", d.cpu));
            if (d.size) b.cpus.push_back(d);
          }
          std::sort(b.cpus.begin(), b.cpus.end(), [](const DatCpuData& a, const DatCpuData& x) { return a.cpu < x.cpu; });
        }
        if (b.name.empty()) {
          have_top = true;
          L.buffers.insert(L.buffers.begin(), std::move(b));
        } else {
          L.buffers.push_back(std::move(b));
        }
      }
      o.skip(len);
    }
    offset = next;
  }
  bool header = false, events = false, ksyms = false, printk = false;
  for (const auto& [id, off] : sections) {
    Cursor c = section(off, id, L, data, size, place);
    if (id == kOptHeaderInfo) read_header_info(c, L), header = true;
    else if (id == kOptFtraceEvents) read_ftrace_formats(c, L);
    else if (id == kOptEventFormats) read_event_formats(c, L), events = true;
    else if (id == kOptKallsyms) L.kallsyms = blob(c, c.number(4)), ksyms = true;
    else if (id == kOptPrintk) L.printk = blob(c, c.number(4)), printk = true;
  }
  L.metadata = header && events && ksyms && printk;
  if (!have_top) {  // a file of instances only still has an (empty) top level for trace-cmd
    DatBuffer top;
    top.page_size = L.page_size;
    L.buffers.insert(L.buffers.begin(), std::move(top));
  }
}

}  // namespace

bool dat_decompress(const std::string& algorithm, const unsigned char* in, std::size_t in_size, unsigned char* out,
                    std::size_t out_size, const std::string& place) {
  if (algorithm == "zstd") {
    const std::size_t r = ZSTD_decompress(out, out_size, in, in_size);
    return !ZSTD_isError(r) && r == out_size;
  }
  if (algorithm == "zlib") {
    uLongf n = static_cast<uLongf>(out_size);
    const int r = uncompress(out, &n, in, static_cast<uLong>(in_size));
    return r == Z_OK && n == out_size;
  }
  throw InputError(place, fmt::format("trace.dat compressed with '{}', which ipilab does not decode", algorithm));
}

DatLayout parse_dat_layout(const unsigned char* data, std::size_t size, const std::string& place) {
  DatLayout L;
  Cursor c(data, size, 0, false, place, "file");
  if (!c.literal(std::string_view("\x17\x08\x44tracing", 10))) c.fail("no trace.dat magic");
  const std::string version = c.string();
  if (version == "6") L.version = 6;
  else if (version == "7") L.version = 7;
  else c.fail(fmt::format("file version '{}' (ipilab reads 6 and 7)", version));
  const auto endian = c.number(1);
  const auto long_size = c.number(1);
  if (endian > 1) c.fail(fmt::format("endianness byte {}", endian));
  if (long_size != 4 && long_size != 8) c.fail(fmt::format("long size {}", long_size));
  L.big_endian = endian == 1;
  L.long_size = static_cast<int>(long_size);
  Cursor c2(data, size, c.pos(), L.big_endian, place, "file");
  L.page_size = static_cast<std::uint32_t>(c2.number(4));
  if (L.page_size < 256 || L.page_size > (1u << 24)) c2.fail(fmt::format("page size {}", L.page_size));
  if (L.version == 6) {
    parse_v6(c2, L, data, size, place);
  } else {
    L.compression = c2.string();
    (void)c2.string();  // compression version
    const auto first = c2.number(8);
    parse_v7_options(first, L, data, size, place);
  }
  for (const auto& b : L.buffers) check_cpu_ranges(b, size, place);
  return L;
}

}  // namespace ipilab::trace
