#include "trace/cpumask.h"

#include <algorithm>

#include "common/hex.h"

namespace ipilab::trace {

std::string_view cpumask_form_name(CpumaskForm form) {
  switch (form) {
    case CpumaskForm::HexWords: return "hex-words";
    case CpumaskForm::CpuList: return "cpu-list";
    case CpumaskForm::Empty: return "empty";
    case CpumaskForm::ByteArray: return "byte-array";
    case CpumaskForm::Invalid: return "invalid";
  }
  return "invalid";
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

namespace {

bool parse_hex_words(std::string_view text, std::vector<std::uint32_t>& out, bool any_width) {
  out.clear();
  if (text.empty()) return false;
  std::size_t words = 1;
  for (char c : text) {
    if (c == ',') ++words;
    else if (hex_digit(c) < 0) return false;
  }
  if (words > kMaxCpus / 32) return false;
  // Every word is 8 digits (the bitmap is a whole number of longs), except that the most significant
  // of several words may be shorter; a lone word must have all 8 (else "3" would read as CPUs 0, 1).
  std::size_t word_index = words;  // counts down: the first word printed is the most significant
  std::size_t pos = 0;
  for (;;) {
    const auto comma = text.find(',', pos);
    const std::size_t end = comma == std::string_view::npos ? text.size() : comma;
    const std::string_view word = text.substr(pos, end - pos);
    const bool first = pos == 0;
    if (word.empty() || word.size() > 8) return false;
    if (word.size() != 8 && !(first && (words > 1 || any_width))) return false;
    std::uint32_t value = 0;
    for (char c : word) value = (value << 4) | static_cast<std::uint32_t>(hex_digit(c));
    --word_index;
    for (int bit = 0; bit < 32; ++bit)
      if (value & (1u << bit)) out.push_back(static_cast<std::uint32_t>(word_index * 32 + static_cast<std::size_t>(bit)));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  return true;
}

}  // namespace

bool parse_cpumask_words(std::string_view text, std::vector<std::uint32_t>& out) {
  return parse_hex_words(text, out, false);
}

bool parse_cpumask_hex_any_width(std::string_view text, std::vector<std::uint32_t>& out) {
  return parse_hex_words(text, out, true);
}

std::string describe_cpus(const std::vector<std::uint32_t>& cpus) {
  if (cpus.empty()) return "no CPU";
  std::string s = cpus.size() == 1 ? "CPU " : "CPUs ";
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (i > 0) s += ',';
    s += std::to_string(cpus[i]);
    if (j > i) s += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return s;
}

bool parse_cpu_list(std::string_view text, std::vector<std::uint32_t>& out) {
  out.clear();
  if (text.empty()) return false;
  std::size_t i = 0;
  std::int64_t last = -1;
  auto number = [&](std::uint32_t& v) {
    const std::size_t start = i;
    if (i >= text.size() || !is_digit(text[i])) return false;
    if (text[i] == '0' && i + 1 < text.size() && is_digit(text[i + 1])) return false;  // no leading zeros
    std::uint64_t x = 0;
    while (i < text.size() && is_digit(text[i])) {
      x = x * 10 + static_cast<std::uint64_t>(text[i] - '0');
      if (x >= kMaxCpus || i - start > 6) return false;
      ++i;
    }
    v = static_cast<std::uint32_t>(x);
    return true;
  };
  for (;;) {
    std::uint32_t lo = 0, hi = 0;
    if (!number(lo)) return false;
    hi = lo;
    if (i < text.size() && text[i] == '-') {
      ++i;
      if (!number(hi) || hi <= lo) return false;
    }
    if (static_cast<std::int64_t>(lo) <= last) return false;  // ascending, disjoint (as printed)
    for (std::uint32_t c = lo; c <= hi; ++c) out.push_back(c);
    last = hi;
    if (i == text.size()) return true;
    if (text[i] != ',') return false;
    ++i;
  }
}

bool parse_cpumask_byte_array(std::string_view text, std::vector<std::uint32_t>& out) {
  out.clear();
  constexpr std::string_view kOpen = "ARRAY[";
  if (text.substr(0, kOpen.size()) != kOpen || text.size() < kOpen.size() + 1 || text.back() != ']') return false;
  std::string_view body = text.substr(kOpen.size(), text.size() - kOpen.size() - 1);
  if (body.empty()) return true;  // a zero-length array holds no CPU
  std::size_t byte_index = 0;
  std::size_t i = 0;
  for (;;) {
    if (i + 2 > body.size()) return false;
    const int h = hex_digit(body[i]), l = hex_digit(body[i + 1]);
    if (h < 0 || l < 0) return false;
    const unsigned value = static_cast<unsigned>(h * 16 + l);
    for (int bit = 0; bit < 8; ++bit)
      if (value & (1u << bit)) {
        const std::size_t cpu = byte_index * 8 + static_cast<std::size_t>(bit);
        if (cpu >= kMaxCpus) return false;
        out.push_back(static_cast<std::uint32_t>(cpu));
      }
    ++byte_index;
    i += 2;
    if (i == body.size()) return true;
    if (body.substr(i, 2) != ", ") return false;
    i += 2;
  }
}

CpumaskForm parse_cpumask_text(std::string_view text, std::vector<std::uint32_t>& out) {
  out.clear();
  if (text.empty()) return CpumaskForm::Empty;
  if (text.front() == 'A') return parse_cpumask_byte_array(text, out) ? CpumaskForm::ByteArray : CpumaskForm::Invalid;
  // An 8-digit word (or a comma) decides for HexWords; a list never has an 8-digit number < 10^7.
  if (parse_cpumask_words(text, out)) return CpumaskForm::HexWords;
  if (parse_cpu_list(text, out)) return CpumaskForm::CpuList;
  out.clear();
  return CpumaskForm::Invalid;
}

bool decode_cpumask_bitmap(const unsigned char* data, std::size_t len, int word_size, bool big_endian,
                           std::vector<std::uint32_t>& out) {
  out.clear();
  const std::size_t ws = word_size == 4 ? 4 : 8;
  for (std::size_t w = 0; w + ws <= len; w += ws) {
    std::uint64_t bits = 0;
    for (std::size_t b = 0; b < ws; ++b) {
      const std::uint64_t byte = data[w + b];
      bits |= byte << (8 * (big_endian ? ws - 1 - b : b));
    }
    while (bits) {
      const int bit = __builtin_ctzll(bits);
      bits &= bits - 1;
      const std::size_t cpu = w * 8 + static_cast<std::size_t>(bit);
      if (cpu >= kMaxCpus) return false;
      out.push_back(static_cast<std::uint32_t>(cpu));
    }
  }
  return true;
}

}  // namespace ipilab::trace
