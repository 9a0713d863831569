#include "common/data_lookup.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/file.h"

namespace ipilab {
namespace {

namespace fs = std::filesystem;

class DataLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test and process: CTest runs the tests of this file in parallel.
    root_ = fs::path(::testing::TempDir()) /
            ("ipilab-data-lookup-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
             std::to_string(::getpid()));
    fs::remove_all(root_);
    // An installed tree P/bin/ipilab + P/share/ipilab/scenarios, a copied data folder, a source tree.
    fs::create_directories(root_ / "P" / "bin");
    fs::create_directories(root_ / "P" / "share" / "ipilab" / "scenarios");
    fs::create_directories(root_ / "mine" / "profiles");
    fs::create_directories(root_ / "src" / "scenarios");
    fs::create_directories(root_ / "empty");
    in_.exe = root_ / "P" / "bin" / "ipilab";
    in_.env_data = (root_ / "mine").string();
    in_.source_tree = root_ / "src";
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
  DataLookupInputs in_;
};

TEST_F(DataLookupTest, BesideTheBinaryComesFirst_ThenTheVariable_ThenTheSourceTree) {
  DataLookup r = locate_data(in_);
  ASSERT_EQ(r.places.size(), 3u);  // $IPILAB_DATA_DIR unset: not listed
  EXPECT_EQ(r.used, 0);
  EXPECT_EQ(r.dir, root_ / "P" / "share" / "ipilab");
  EXPECT_EQ(r.places[0].where, "beside the binary");
  EXPECT_EQ(r.places[0].status, "used");
  EXPECT_EQ(r.places[1].where, "$IPILAB_DATA");
  EXPECT_EQ(r.places[1].status, "has data, not used: an earlier place comes first");
  EXPECT_EQ(r.places[2].where, "source tree");
  EXPECT_TRUE(r.places[2].has_data);

  fs::remove_all(root_ / "P" / "share");  // a copied binary: the variable is next
  r = locate_data(in_);
  EXPECT_EQ(r.dir, root_ / "mine");
  EXPECT_EQ(r.places[0].status, "no such folder");
  EXPECT_EQ(r.places[0].path, root_ / "P" / "share" / "ipilab");  // shown normalised, without bin/..
  EXPECT_EQ(r.places[1].status, "used");

  in_.env_data.clear();  // neither: the source tree it was built from
  r = locate_data(in_);
  EXPECT_EQ(r.dir, root_ / "src");
  EXPECT_EQ(r.places[1].status, "not set");
  EXPECT_EQ(r.places[2].status, "used");
}

TEST_F(DataLookupTest, AFolderWithoutScenariosOrProfilesIsPassedOverAndSaysWhy) {
  fs::remove_all(root_ / "P" / "share");
  in_.env_data = (root_ / "empty").string();
  const DataLookup r = locate_data(in_);
  EXPECT_EQ(r.places[1].status, "no scenarios/ or profiles/ in it");
  EXPECT_EQ(r.dir, root_ / "src");
}

TEST_F(DataLookupTest, TheOlderVariableNameComesAfterTheNewOne) {
  fs::remove_all(root_ / "P" / "share");
  in_.env_data_dir = (root_ / "src").string();
  DataLookup r = locate_data(in_);
  ASSERT_EQ(r.places.size(), 4u);
  EXPECT_EQ(r.places[2].where, "$IPILAB_DATA_DIR");
  EXPECT_EQ(r.dir, root_ / "mine");
  in_.env_data.clear();
  in_.source_tree.clear();
  r = locate_data(in_);
  EXPECT_EQ(r.dir, root_ / "src");
  EXPECT_EQ(r.places[2].status, "used");
  EXPECT_EQ(r.places[3].status, "no ipilab-source-tree file beside the binary (an installed binary has none)");
}

TEST_F(DataLookupTest, NoDataAnywhere_DirIsTheFirstPlaceNamed) {
  fs::remove_all(root_ / "P" / "share");
  in_.env_data.clear();
  in_.source_tree = root_ / "gone";
  const DataLookup r = locate_data(in_);
  EXPECT_EQ(r.used, -1);
  EXPECT_EQ(r.dir, root_ / "P" / "share" / "ipilab");
  for (const auto& p : r.places) EXPECT_FALSE(p.has_data) << p.where;
  EXPECT_EQ(r.places[2].status, "no such folder");
}

TEST_F(DataLookupTest, TheInstallLayoutDecidesTheRelativeFolder) {
  in_.bin_to_data = "../lib/ipilab-data";  // e.g. -DCMAKE_INSTALL_DATADIR=lib
  fs::create_directories(root_ / "P" / "lib" / "ipilab-data" / "profiles");
  const DataLookup r = locate_data(in_);
  EXPECT_EQ(r.dir, root_ / "P" / "lib" / "ipilab-data");
}

TEST(DataLookupProcess, ReadsThisExecutableAndTheEnvironment) {
  const DataLookupInputs in = process_data_inputs();
  EXPECT_EQ(in.exe.filename(), "test_common");
  EXPECT_EQ(in.bin_to_data, "../share/ipilab");
  // CTest runs every test with IPILAB_DATA_DIR set to the source tree, which has the data.
  const char* env = std::getenv("IPILAB_DATA_DIR");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(in.env_data_dir, env);
  EXPECT_TRUE(fs::is_directory(data_dir() / "scenarios"));
  EXPECT_TRUE(fs::is_regular_file(data_dir() / "scenarios" / "default.list"));
}

}  // namespace
}  // namespace ipilab
