#include "common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "common/error.h"

namespace ipilab {
namespace {

using output::TempDir;  // the one temporary-folder helper (common/output.h)

TEST(WriteFileAtomically, RegularFileIsReplacedWhole) {
  TempDir d("ipilab-file-test");
  const auto f = d.path() / "out.json";
  write_file_atomically(f, "old");
  write_file_atomically(f, "new content");
  EXPECT_EQ(read_text_file(f), "new content");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(d.path()), {}), 1) << "no temporary left behind";
}

// A pipe (like /dev/null or /dev/stdout) is written through, never replaced by a renamed file:
// renaming over /dev/null as root once turned it into a regular file for the whole machine.
TEST(WriteFileAtomically, FifoIsWrittenThroughAndStaysAFifo) {
  TempDir d("ipilab-file-test");
  const auto f = d.path() / "pipe";
  ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
  const int rd = ::open(f.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(rd, 0);
  write_file_atomically(f, "through the pipe");
  char buf[64] = {};
  const ssize_t n = ::read(rd, buf, sizeof buf);
  ::close(rd);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), "through the pipe");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(WriteFileAtomically, FolderIsAnInputErrorNamingIt) {
  TempDir d("ipilab-file-test");
  try {
    write_file_atomically(d.path(), "x");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a folder"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipilab
