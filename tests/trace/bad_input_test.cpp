// Truncated, corrupted, empty and wrong-format files: a clear InputError (exit status 2), no crash.
// The bad files are made at run time from the real traces in data/traces.
#include <gtest/gtest.h>

#include "common/error.h"
#include "test_util.h"
#include "trace/analysis.h"

namespace ipilab::trace {
namespace {

using testing::TempDir;

std::string analyse_error(const std::filesystem::path& p) {
  try {
    IpiAnalysis a;
    analyse_trace(p, a);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(BadInput, TruncatedTraceDatIsAnError) {
  TempDir tmp;
  const std::string dat = testing::slurp(testing::traces_dir() / "mixed.dat");
  ASSERT_EQ(dat.size(), 1227951u);
  // Cuts inside the magic, the headers, the kallsyms, the options and the CPU event data.
  // (`trace-cmd dump --flyrecord`: CPU 0 data at 1142784, CPU 1 data 1191936..1227731; the last
  // 220 bytes hold nothing the events need, so a cut there loses no event and is not an error.)
  for (std::size_t n : {5ul, 100ul, 5000ul, 600000ul, 1139000ul, 1160000ul, 1200000ul, 1226951ul}) {
    const auto p = tmp.path / "cut.dat";
    testing::spit(p, dat.substr(0, n));
    const std::string err = analyse_error(p);
    EXPECT_NE(err, "") << "cut at " << n;
    EXPECT_EQ(err.rfind(p.string(), 0), 0u) << err;  // names the file
  }
}

TEST(BadInput, CorruptedTraceDatIsAnError) {
  TempDir tmp;
  const std::string dat = testing::slurp(testing::traces_dir() / "mixed.dat");
  // Flip 64 bytes: in the header, the event formats, the kallsyms, and the zstd-compressed CPU data
  // of CPU 0 (ipilab decompresses the chunks itself: a chunk that does not decode is an error).
  for (std::size_t off : {12ul, 2000ul, 1000000ul, 1143000ul, 1150000ul, 1200000ul}) {
    std::string bad = dat;
    for (std::size_t i = off; i < off + 64; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    const auto p = tmp.path / "corrupt.dat";
    testing::spit(p, bad);
    EXPECT_NE(analyse_error(p), "") << "flipped at " << off;
  }
  {
    std::string bad = dat;
    for (std::size_t i = 1150000; i < 1150064; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    testing::spit(tmp.path / "c.dat", bad);
    EXPECT_NE(analyse_error(tmp.path / "c.dat").find("CPU 0 data at byte "), std::string::npos)
        << analyse_error(tmp.path / "c.dat");
  }
}

// A trace.dat whose event format text crashes libtraceevent 1.7.1 (tep_parse_event dereferences
// NULL; found by fuzz_trace_dat): refused as corrupt, the file named, ipilab still running.
TEST(BadInput, EventFormatsThatCrashLibtraceeventAreRefused) {
  const auto p = std::filesystem::path(IPILAB_SOURCE_DIR) / "tests/trace/data/format-crash.dat";
  const std::string err = analyse_error(p);
  EXPECT_EQ(err.rfind(p.string() + ": the file's event formats ", 0), 0u) << err;
  EXPECT_NE(err.find("libtraceevent"), std::string::npos) << err;
}

TEST(BadInput, TruncatedOrCorruptedTextIsAnErrorWithLine) {
  TempDir tmp;
  const std::string txt = testing::slurp(testing::traces_dir() / "mixed.txt");
  const auto p = tmp.path / "cut.txt";
  // Cut in the middle of line 3 ("         ipiload-5111  [001]   344.504323854: ipi_send_cpu: ...").
  const std::size_t line3 = txt.find('\n', txt.find('\n') + 1) + 1;
  testing::spit(p, txt.substr(0, line3 + 40));
  EXPECT_EQ(analyse_error(p).rfind(p.string() + ":3: ", 0), 0u) << analyse_error(p);
  // Garbage in the middle of a line.
  std::string bad = txt;
  bad.replace(line3 + 20, 30, std::string(30, '\0'));
  testing::spit(p, bad);
  EXPECT_EQ(analyse_error(p), p.string() + ":3: binary data (NUL byte) in a text trace");
}

TEST(BadInput, EmptyMissingDirectoryAndWrongFormat) {
  TempDir tmp;
  testing::spit(tmp.path / "empty.dat", "");
  EXPECT_EQ(analyse_error(tmp.path / "empty.dat"), (tmp.path / "empty.dat").string() + ": empty file (no trace in it)");
  EXPECT_EQ(analyse_error(tmp.path / "nope.dat"), (tmp.path / "nope.dat").string() + ": no such file");
  EXPECT_NE(analyse_error(tmp.path).find("is a directory"), std::string::npos);
  // A real file of another kind, named like a trace.
  const auto cmake = std::filesystem::path(IPILAB_SOURCE_DIR) / "CMakeLists.txt";
  testing::spit(tmp.path / "trace.dat", testing::slurp(cmake));
  EXPECT_NE(analyse_error(tmp.path / "trace.dat").find("not a trace"), std::string::npos);
}

TEST(TraceDatVersions, V6AndUncompressedV7ReadLikeTheZstdV7) {
  if (!testing::have_program("trace-cmd")) GTEST_SKIP() << "trace-cmd not installed: cannot convert pipe.dat";
  TempDir tmp;
  const auto src = testing::traces_dir() / "pipe.dat";
  const auto v6 = tmp.path / "v6.dat", v7 = tmp.path / "v7none.dat";
  ASSERT_EQ(std::system(("trace-cmd convert --file-version 6 -i '" + src.string() + "' -o '" + v6.string() +
                         "' >/dev/null 2>&1").c_str()), 0);
  ASSERT_EQ(std::system(("trace-cmd convert --compression none -i '" + src.string() + "' -o '" + v7.string() +
                         "' >/dev/null 2>&1").c_str()), 0);
  auto sends = [](const std::filesystem::path& p) {
    IpiAnalysis a;
    analyse_trace(p, a);
    return std::make_tuple(a.ipis_sent(), a.matched(), a.unmatched_arrivals(),
                           a.by_kind()[static_cast<std::size_t>(IpiKind::Reschedule)].latency.percentile(50),
                           a.events_total());
  };
  const auto ref = sends(src);
  EXPECT_EQ(std::get<0>(ref), 32u);
  EXPECT_EQ(sends(v6), ref);
  EXPECT_EQ(sends(v7), ref);
}

}  // namespace
}  // namespace ipilab::trace
