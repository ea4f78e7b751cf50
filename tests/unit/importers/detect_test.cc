// Format detection and directory resolution (importers/detect.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "importers/detect.h"

namespace pypto {
namespace {

namespace fs = std::filesystem;

const std::string kCpuOnlyTrace =
    std::string(PYPTO_FIXTURES_DIR) + "/kineto/hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz";

class DetectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pypto_detect_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(DetectTest, DirectoryWithOneTraceLoadsThatTrace) {
  fs::copy_file(kCpuOnlyTrace, dir_ + "/worker0.pt.trace.json.gz");
  std::ofstream(dir_ + "/notes.txt") << "not a profile";
  auto profile = LoadProfile(dir_ + "/");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->metadata["format"], "kineto");
  EXPECT_NE(profile->metadata["source_path"].find("worker0.pt.trace.json.gz"), std::string::npos);
  // The same 30-event CPU-only trace loads whole: its host ops are there.
  EXPECT_GT(profile->host_ops.size(), 0u);
}

TEST_F(DetectTest, FixtureFolderWhoseTraceOpensWithLongMetadataLoads) {
  // Qwen_…json.gz puts "traceEvents" at byte 26,260 (after a "metadata"
  // object), beyond a single-file sniff; the directory walk sniffs further.
  auto profile = LoadProfile(std::string(PYPTO_FIXTURES_DIR) + "/kineto/tracelens_h100_qwen1.5_0.5b_hf_inference");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->metadata["format"], "kineto");
  EXPECT_GT(profile->device_tasks.size(), 0u);
}

TEST_F(DetectTest, DirectoryWithSeveralTracesNamesThem) {
  fs::copy_file(kCpuOnlyTrace, dir_ + "/rank0.json.gz");
  fs::copy_file(kCpuOnlyTrace, dir_ + "/rank1.json.gz");
  auto profile = LoadProfile(dir_);
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(profile.status().message().find("holds 2 profiles"), std::string::npos);
  EXPECT_NE(profile.status().message().find("rank0.json.gz"), std::string::npos);
  EXPECT_NE(profile.status().message().find("rank1.json.gz"), std::string::npos);
}

TEST_F(DetectTest, DirectoryWithoutProfileIsNotFound) {
  std::ofstream(dir_ + "/readme.json") << "{\"hello\": 1}";
  auto profile = LoadProfile(dir_);
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.status().code(), StatusCode::kNotFound);
  EXPECT_NE(profile.status().message().find("holds no profile"), std::string::npos);
  EXPECT_NE(profile.status().message().find(dir_), std::string::npos);
}

TEST_F(DetectTest, SymlinkedTraceInDirectoryIsNotFollowed) {
  fs::create_symlink(kCpuOnlyTrace, dir_ + "/link.json.gz");
  auto profile = LoadProfile(dir_);
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.status().code(), StatusCode::kNotFound);
}

TEST_F(DetectTest, UnknownForcedFormatIsRefused) {
  ImportOptions options;
  options.forced_format = "nvprof";
  auto profile = LoadProfile(kCpuOnlyTrace, options);
  ASSERT_FALSE(profile.ok());
  EXPECT_NE(profile.status().message().find("unknown format 'nvprof'"), std::string::npos);
}

}  // namespace
}  // namespace pypto
