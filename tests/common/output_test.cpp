// common/output.h: all-or-nothing files, the output checks, the image checks, the temporary paths.
#include "common/output.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/file.h"

namespace ipilab::output {
namespace {

namespace fs = std::filesystem;

std::size_t entries(const fs::path& d) { return static_cast<std::size_t>(std::distance(fs::directory_iterator(d), {})); }

TEST(AtomicFile, NothingAtTheTargetUntilCommitThenOnlyTheTarget) {
  TempDir d("output-test");
  const fs::path f = d.path() / "out.txt";
  {
    AtomicFile a(f, "--json");
    a.stream() << "hello " << 42;
    a.write("\n");
    EXPECT_FALSE(fs::exists(f));
    EXPECT_EQ(entries(d.path()), 1u) << "the temporary file beside it";
    a.commit();
  }
  EXPECT_EQ(read_text_file(f), "hello 42\n");
  EXPECT_EQ(entries(d.path()), 1u);
}

TEST(AtomicFile, DroppedWithoutCommitLeavesTheOldFileAndNoTemporary) {
  TempDir d("output-test");
  const fs::path f = d.path() / "out.txt";
  write_file(f, "old");
  const std::size_t tracked = tracked_count();
  {
    AtomicFile a(f);
    a.write("new");
    EXPECT_EQ(tracked_count(), tracked + 1);
  }
  EXPECT_EQ(tracked_count(), tracked);
  EXPECT_EQ(read_text_file(f), "old");
  EXPECT_EQ(entries(d.path()), 1u);
}

TEST(AtomicFile, FullDeviceIsAnInputErrorWithTheReason) {
  try {
    write_file("/dev/full", std::string(100000, 'x'), "--json");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--json '/dev/full': cannot write: No space left on device");
  }
}

TEST(OutputSet, AFailingOutputRenamesNone) {
  TempDir d("output-test");
  OutputSet s;
  s.write(d.path() / "a.json", "--json", "{}");
  s.write("/dev/full", "--csv", "buffered: the device refuses it at the end");
  EXPECT_THROW(s.commit_all(), InputError);
  EXPECT_FALSE(fs::exists(d.path() / "a.json"));
}

TEST(CheckOutputs, RefusesSharedPathsInputsMissingFoldersAndSecondStdout) {
  TempDir d("output-test");
  const std::string a = (d.path() / "x.json").string();
  auto reason = [](const std::vector<OutputRequest>& o, const std::vector<InputFile>& i = {}) {
    try {
      check_outputs(o, i);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(reason({{"--json", a, true}, {"--perfetto", a, false}}),
            "--perfetto: '" + a + "' is also the file of --json: give each output its own file");
  write_file(a, "in");
  EXPECT_EQ(reason({{"--json", a, true}}, {{"FILE", a}}),
            "--json: '" + a + "' is also the input FILE: writing it would destroy what is read");
  EXPECT_NE(reason({{"--csv", (d.path() / "no" / "x.csv").string(), false}}).find("does not exist"), std::string::npos);
  EXPECT_EQ(reason({{"--csv", "-", true}, {"--json", "-", true}}),
            "--json: standard output ('-') is also the output of --csv: give one of them a file");
  EXPECT_EQ(reason({{"--plot", "-", false}}), "--plot: '-' (standard output) is not possible here: name a file");
  EXPECT_EQ(reason({{"--json", "/dev/null", true}, {"--csv", "/dev/null", false}}), "accepted");
  EXPECT_EQ(reason({{"--json", d.path().string(), true}}), "--json: '" + d.path().string() + "' is a folder, not a file");
}

TEST(CheckImage, TruncatedImagesAreRefused) {
  TempDir d("output-test");
  const std::string png_head = "\x89PNG\r\n\x1a\n0123456789abcdef";
  const std::string iend("\0\0\0\0IEND\xae\x42\x60\x82", 12);
  const fs::path p = d.write("a.png", png_head + iend);
  EXPECT_NO_THROW(check_image(p, ImageFormat::Png, "--plot"));
  d.write("a.png", png_head);
  EXPECT_THROW(check_image(p, ImageFormat::Png, "--plot"), InputError);
  const fs::path s = d.write("a.svg", "<svg>\n</svg>\n");
  EXPECT_NO_THROW(check_image(s, ImageFormat::Svg, "--plot"));
  d.write("a.svg", "<svg>\n<path d='M 0");
  EXPECT_THROW(check_image(s, ImageFormat::Svg, "--plot"), InputError);
  d.write("e.png", "");
  EXPECT_THROW(check_image(d.path() / "e.png", ImageFormat::Png, "--plot"), InputError);
}

TEST(ImageFormat, TheExtensionNamesIt) {
  EXPECT_EQ(image_format_of("a/b.PNG", "--plot"), ImageFormat::Png);
  EXPECT_EQ(image_format_of("b.svg", "--plot"), ImageFormat::Svg);
  try {
    image_format_of("b.pdf", "--plot");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--plot: 'b.pdf' must end in .png or .svg (the image format follows the name)");
  }
}

// SIGTERM while a temporary file exists: the handler removes it and the process dies of the signal.
TEST(Cleanup, SigtermRemovesTemporaryFiles) {
  // A folder of the test's own (a TempDir would be tracked, and the child's handler removes it too).
  std::string tmpl = (fs::temp_directory_path() / "output-test-sig-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  const fs::path f = dir / "out.json";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    install_cleanup();
    AtomicFile a(f);
    a.write("partial");
    ::raise(SIGTERM);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(entries(dir), 0u) << "the temporary file of the killed process";
  fs::remove_all(dir);
}

TEST(Quoting, GnuplotStrings) {
  EXPECT_EQ(gp_quote("it's\na"), "'it''s a'");
  EXPECT_EQ(gp_double_quoted_body("a\"b\\c"), "a\\\"b\\\\c");
}

}  // namespace
}  // namespace ipilab::output
