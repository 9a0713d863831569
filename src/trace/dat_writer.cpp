#include "trace/dat_writer.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ipilab::trace {

namespace {

class Out {
 public:
  explicit Out(std::ostream& f) : f_(f) {}
  void bytes(const void* p, std::size_t n) {
    if (n && !f_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n)))
      throw std::runtime_error("write error");
    pos_ += n;
  }
  void str(std::string_view s) { bytes(s.data(), s.size()); }
  void cstr(std::string_view s) {
    str(s);
    bytes("", 1);
  }
  template <typename T>
  void num(T v) {  // this machine's byte order, as the header says
    bytes(&v, sizeof v);
  }
  void pad_to(std::uint64_t align) {
    static const char zeros[4096] = {};
    while (pos_ % align) {
      const std::size_t n = std::min<std::uint64_t>(align - pos_ % align, sizeof zeros);
      bytes(zeros, n);
    }
  }
  std::uint64_t pos() const { return pos_; }

 private:
  std::ostream& f_;
  std::uint64_t pos_ = 0;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::uint64_t remaining(std::FILE* f) {
  const long here = std::ftell(f);
  std::fseek(f, 0, SEEK_END);
  const long end = std::ftell(f);
  std::fseek(f, here, SEEK_SET);
  return here >= 0 && end >= here ? static_cast<std::uint64_t>(end - here) : 0;
}

}  // namespace

void write_dat_v6(std::ostream& file, const DatContents& c) {
  Out o(file);
  o.str(std::string_view("\x17\x08\x44tracing", 10));
  o.cstr("6");
  const unsigned char endian = std::endian::native == std::endian::big ? 1 : 0;
  const unsigned char long_size = sizeof(long);
  o.bytes(&endian, 1);
  o.bytes(&long_size, 1);
  o.num<std::uint32_t>(c.page_size);
  o.cstr("header_page");
  o.num<std::uint64_t>(c.header_page.size());
  o.str(c.header_page);
  o.cstr("header_event");
  o.num<std::uint64_t>(c.header_event.size());
  o.str(c.header_event);
  o.num<std::uint32_t>(static_cast<std::uint32_t>(c.ftrace_formats.size()));
  for (const auto& f : c.ftrace_formats) {
    o.num<std::uint64_t>(f.size());
    o.str(f);
  }
  o.num<std::uint32_t>(static_cast<std::uint32_t>(c.systems.size()));
  for (const auto& [sys, formats] : c.systems) {
    o.cstr(sys);
    o.num<std::uint32_t>(static_cast<std::uint32_t>(formats.size()));
    for (const auto& f : formats) {
      o.num<std::uint64_t>(f.size());
      o.str(f);
    }
  }
  o.num<std::uint32_t>(static_cast<std::uint32_t>(c.kallsyms.size()));
  o.str(c.kallsyms);
  o.num<std::uint32_t>(static_cast<std::uint32_t>(c.printk_formats.size()));
  o.str(c.printk_formats);
  o.num<std::uint64_t>(c.saved_cmdlines.size());
  o.str(c.saved_cmdlines);
  const auto cpus = static_cast<std::uint32_t>(c.cpu_pages.size());
  o.num<std::uint32_t>(cpus);
  o.str(std::string_view("flyrecord\0", 10));
  // The table, then the data of each CPU at a page-aligned offset.
  std::vector<std::uint64_t> sizes(cpus, 0);
  for (std::uint32_t i = 0; i < cpus; ++i) sizes[i] = c.cpu_pages[i] ? remaining(c.cpu_pages[i]) : 0;
  std::uint64_t at = o.pos() + 16ull * cpus;
  at = (at + c.page_size - 1) / c.page_size * c.page_size;
  for (std::uint32_t i = 0; i < cpus; ++i) {
    o.num<std::uint64_t>(sizes[i] ? at : 0);
    o.num<std::uint64_t>(sizes[i]);
    at += sizes[i];
  }
  o.pad_to(c.page_size);
  std::vector<char> buf(1 << 20);
  for (std::uint32_t i = 0; i < cpus; ++i) {
    if (!sizes[i]) continue;
    std::uint64_t left = sizes[i];
    while (left > 0) {
      const std::size_t n = std::fread(buf.data(), 1, std::min<std::uint64_t>(left, buf.size()), c.cpu_pages[i]);
      if (n == 0) throw std::runtime_error("short read of the recorded pages");
      o.bytes(buf.data(), n);
      left -= n;
    }
  }
  if (!file.flush()) throw std::runtime_error("write error");
}

DatContents dat_contents_from_tracefs(const std::string& tracing_dir, const std::vector<std::string>& systems) {
  namespace fs = std::filesystem;
  DatContents c;
  const fs::path t(tracing_dir);
  c.page_size = static_cast<std::uint32_t>(::sysconf(_SC_PAGESIZE));
  c.header_page = slurp(t / "events" / "header_page");
  c.header_event = slurp(t / "events" / "header_event");
  auto formats_of = [&](const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    std::vector<fs::path> events;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory(ec) && fs::exists(e.path() / "format", ec)) events.push_back(e.path());
    std::sort(events.begin(), events.end());
    for (const auto& e : events) out.push_back(slurp(e / "format"));
    return out;
  };
  c.ftrace_formats = formats_of(t / "events" / "ftrace");
  for (const auto& s : systems) {
    std::error_code ec;
    if (!fs::is_directory(t / "events" / s, ec)) continue;
    c.systems.emplace_back(s, formats_of(t / "events" / s));
  }
  c.kallsyms = slurp("/proc/kallsyms");
  c.printk_formats = slurp(t / "printk_formats");
  c.saved_cmdlines = slurp(t / "saved_cmdlines");
  return c;
}

}  // namespace ipilab::trace
