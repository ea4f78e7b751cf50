// The one way pypto writes an output file: refusals, replacement and no
// temporary file left behind.
#include "io/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pypto::io {
namespace {

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pypto_output_file_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // Names in the folder: a temporary file left behind would show here.
  size_t Entries() {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir_), {}));
  }
  std::string dir_;
};

TEST_F(OutputFile, NewFileIsWrittenWithReadableMode) {
  const std::string path = dir_ + "/out.txt";
  ASSERT_TRUE(CheckOutputPath(path, false).ok());
  ASSERT_TRUE(WriteTextFile(path, "hello\n", false).ok());
  EXPECT_EQ(Read(path), "hello\n");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, kOutputFileMode);
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(OutputFile, ExistingFileIsRefusedUnlessOverwriteAndDirectoryAlways) {
  const std::string path = dir_ + "/out.txt";
  ASSERT_TRUE(WriteTextFile(path, "first", false).ok());
  Status refused = WriteTextFile(path, "second", false);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(), path + ": output file already exists; refusing to overwrite it (use --force)");
  EXPECT_EQ(Read(path), "first");
  ASSERT_TRUE(WriteTextFile(path, "second", true).ok());
  EXPECT_EQ(Read(path), "second");

  Status directory = WriteTextFile(dir_, "x", true);
  EXPECT_EQ(directory.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(directory.message(), dir_ + ": is a directory, not an output file");
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(OutputFile, FailedFillLeavesNeitherTargetNorTemporaryFile) {
  const std::string path = dir_ + "/out.db";
  std::string temp_seen;
  Status failed = WriteOutputFile(path, false, [&](int fd, const std::string& temp) {
    temp_seen = temp;
    PYPTO_RETURN_IF_ERROR(WriteAllToFd(fd, "partial", path));
    return IoError(path + ": disk full");
  });
  EXPECT_EQ(failed.message(), path + ": disk full");
  EXPECT_EQ(temp_seen.rfind(path + ".tmp.", 0), 0u) << temp_seen;  // beside the target
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(OutputFile, MissingFolderNamesTheTarget) {
  const std::string path = dir_ + "/missing/out.txt";
  Status missing = WriteTextFile(path, "x", false);
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
  EXPECT_EQ(missing.message(), path + ": cannot create output file: No such file or directory");
}

}  // namespace
}  // namespace pypto::io
