// ipilab/trace/cpumask.h — every way a cpumask reaches ipilab in a trace, recognised from the value
// itself (never from a guess about the tool that printed it).
//
// Text renderings of ipi_send_cpumask's `cpumask=` and ipi_raise's `target_mask=`:
//   HexWords   the kernel's own text (tracefs `trace`, trace_print_bitmask_seq -> "%*pb"), and
//              libtraceevent before it knew __get_cpumask for __get_bitmask: comma-separated 32-bit
//              words in hex, most significant first, each exactly 8 digits because the bitmap is a
//              whole number of longs ("00000000,00000003" = CPUs 0 and 1).
//   CpuList    libtraceevent's print_cpumask_to_seq (__get_cpumask, libtraceevent >= 1.7): ascending
//              decimal CPUs and ranges ("1", "0,15", "0-63", "0-3,8-11"); the empty mask prints as
//              nothing ("cpumask= callsite=...").
//   ByteArray  libtraceevent that cannot parse the event's print format prints the raw field:
//              "[FAILED TO PARSE] cpumask=ARRAY[02, 00, 00, 00, 00, 00, 00, 00] ...": the bitmap's bytes
//              in memory order. The text does not say the recording machine's byte order; ipilab reads
//              them as a little-endian bitmap (byte k holds CPUs 8k..8k+7: x86, arm64) and says so.
// The forms cannot be confused: an 8-digit hex word either starts with 0 (never a CPU list) or is at
// least 10000000, above any CPU number (ipilab accepts CPUs < 65536, NR_CPUS is at most 8192).
// A value that fits none of them (e.g. "3": a CPU list would say CPU 3, a hex word CPU 0 and 1) is
// Invalid: the caller leaves the record out and warns, it is never misread. So is a value whose
// reading names a CPU the trace does not have (text_reader.h): "3" in a trace of 2 CPUs is no CPU
// list; it may be a short hex mask (CPUs 0 and 1), and ipilab does not guess which.
//
// Binary: trace.dat holds the bitmap as an array of the kernel's longs in the file's byte order
// (trace-cmd.dat(5) header: endianness byte; header_page `commit` size = kernel long size).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ipilab::trace {

enum class CpumaskForm : std::uint8_t { HexWords, CpuList, Empty, ByteArray, Invalid };
inline constexpr int kCpumaskFormCount = 5;

/// "hex-words", "cpu-list", "empty", "byte-array", "invalid".
std::string_view cpumask_form_name(CpumaskForm form);

/// Largest CPU number + 1 ipilab accepts in any mask.
inline constexpr std::uint32_t kMaxCpus = 65536;

/// Recognises the form of a text cpumask value and decodes it: `out` receives the CPUs in ascending
/// order (cleared first; unspecified for Invalid).
CpumaskForm parse_cpumask_text(std::string_view text, std::vector<std::uint32_t>& out);

/// Strict decoders of one form each (false if `text` is not exactly that form).
bool parse_cpumask_words(std::string_view text, std::vector<std::uint32_t>& out);
bool parse_cpu_list(std::string_view text, std::vector<std::uint32_t>& out);
/// The kernel's "%*pb" for a bitmap of any length (lib/vsprintf.c bitmap_string(): the most
/// significant 32-bit chunk printed only as wide as the bits it holds, the others 8 digits): "3",
/// "ff,ffffffff". Used only to name the other reading of an ambiguous value, never to decode one.
bool parse_cpumask_hex_any_width(std::string_view text, std::vector<std::uint32_t>& out);
/// "ARRAY[02, 00, ...]" (the whole value, little-endian bitmap bytes).
bool parse_cpumask_byte_array(std::string_view text, std::vector<std::uint32_t>& out);

/// "CPU 3", "CPUs 0-1", "CPUs 0,2-5", "no CPU" (ascending input).
std::string describe_cpus(const std::vector<std::uint32_t>& cpus);

/// A bitmap of `words` longs of `word_size` bytes (4 or 8) in the given byte order, as trace.dat
/// stores it. Trailing bytes that do not fill a long are ignored. Returns false when a set bit is
/// at or above kMaxCpus.
bool decode_cpumask_bitmap(const unsigned char* data, std::size_t len, int word_size, bool big_endian,
                           std::vector<std::uint32_t>& out);

}  // namespace ipilab::trace
