// File safety end to end (docs/reliability.md, "Files"): symlinks are not
// followed (inputs, and entries met while walking an Ascend output folder),
// SQLite inputs are opened read-only and immutable with extensions off, and
// outputs never replace an existing file (or a symlink's target) without --force.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "graph/call_graph.h"
#include "importers/ascend_db/ascend_db.h"
#include "importers/detect.h"
#include "report/chrome_trace_export.h"

namespace pypto {
namespace {

namespace fs = std::filesystem;

constexpr char kKernelDetails[] =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us)\n"
    "1,4294967295,1,2,MatMul_run_a,MatMulV3,dynamic,AI_CORE,1000.5,2\n";
constexpr char kKernelDetailsOther[] =
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us)\n"
    "1,4294967295,1,2,Secret_run_b,MatMulV3,dynamic,AI_CORE,1000.5,2\n";

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "pypto-files.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& rel, const std::string& data) {
    const fs::path path = fs::path(dir_) / rel;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << data;
    return path.string();
  }
  static bool HasTaskNamed(const Profile& profile, std::string_view name) {
    for (size_t i = 0; i < profile.device_tasks.size(); ++i)
      if (profile.strings.Get(profile.device_tasks.name[i]) == name) return true;
    return false;
  }
  std::string dir_;
};

TEST_F(Files, SymlinkInputIsRefusedUnlessAsked) {
  const std::string real = Write("real/kernel_details.csv", kKernelDetails);
  const std::string link = dir_ + "/link.csv";
  fs::create_symlink(real, link);
  auto loaded = LoadProfile(link);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("link.csv"), std::string::npos) << loaded.status().message();
  EXPECT_NE(loaded.status().message().find("symbolic link"), std::string::npos) << loaded.status().message();
  ImportOptions follow;
  follow.limits.follow_symlinks = true;
  EXPECT_TRUE(LoadProfile(link, follow).ok());
}

TEST_F(Files, SymlinkedDirectoryInsideAnAscendRunIsNotFollowed) {
  // parent/
  //   a_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv      (read)
  //   b_ascend_pt -> elsewhere/b_ascend_pt                        (symlinked run: not followed)
  //   a_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv -> ... (symlinked file: not followed)
  Write("parent/a_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kKernelDetails);
  Write("elsewhere/b_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kKernelDetailsOther);
  fs::create_directory_symlink(dir_ + "/elsewhere/b_ascend_pt", dir_ + "/parent/b_ascend_pt");
  const std::string secret = Write("elsewhere/secret.csv", kKernelDetailsOther);
  fs::create_symlink(secret, dir_ + "/parent/a_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv");

  auto loaded = LoadProfile(dir_ + "/parent");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(HasTaskNamed(*loaded, "MatMul_run_a"));
  EXPECT_FALSE(HasTaskNamed(*loaded, "Secret_run_b"));
  for (const std::string& file : loaded->source_files) EXPECT_EQ(file.find("elsewhere"), std::string::npos) << file;

  // The symlinked ASCEND_PROFILER_OUTPUT folder of a run is not followed either.
  Write("elsewhere/out/kernel_details.csv", kKernelDetailsOther);
  fs::create_directories(dir_ + "/c_ascend_pt");
  fs::create_directory_symlink(dir_ + "/elsewhere/out", dir_ + "/c_ascend_pt/ASCEND_PROFILER_OUTPUT");
  auto linked = LoadProfile(dir_ + "/c_ascend_pt");
  if (linked.ok()) {
    EXPECT_FALSE(HasTaskNamed(*linked, "Secret_run_b"));
  }
}

// A database whose TASK is a view calling load_extension(): with extensions
// off and untrusted schema, reading it is an error, and nothing is loaded.
TEST_F(Files, SqliteIsReadOnlyImmutableWithExtensionsOff) {
  const std::string path = dir_ + "/ascend_pytorch_profiler_0.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* sql =
      "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
      "INSERT INTO STRING_IDS VALUES (0, 'k');"
      "CREATE VIEW TASK AS SELECT load_extension('/nonexistent/evil') AS startNs, 0 AS endNs, 0 AS deviceId,"
      " 0 AS connectionId, 0 AS globalTaskId, 0 AS globalPid, 0 AS taskType, 0 AS contextId, 0 AS streamId,"
      " 0 AS taskId, 0 AS modelId;";
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);

  Profile profile;
  Status status = ImportAscendDb(path, {}, &profile);
  ASSERT_FALSE(status.ok()) << "a view calling load_extension() was evaluated";
  EXPECT_NE(status.message().find("ascend_pytorch_profiler_0.db"), std::string::npos) << status.message();
  EXPECT_EQ(status.message().find("/nonexistent/evil: cannot open"), std::string::npos)
      << "load_extension() ran: " << status.message();

  struct stat after;
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_mtime, after.st_mtime);
  EXPECT_EQ(before.st_size, after.st_size);
  EXPECT_FALSE(fs::exists(path + "-journal"));
  EXPECT_FALSE(fs::exists(path + "-wal"));
}

TEST_F(Files, ExportNeverOverwritesWithoutForce) {
  auto loaded = LoadProfile(Write("run/kernel_details.csv", kKernelDetails));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto graph = OperatorCallGraph::Build(*loaded);
  ASSERT_TRUE(graph.ok());

  const std::string existing = Write("out/existing.json", "keep me");
  Status refused = report::ExportChromeTraceFile(*graph, {}, existing, /*overwrite=*/false);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("already exists"), std::string::npos) << refused.message();
  std::ifstream in(existing);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep me");

  // An output path that is a symlink: refused without --force; with --force the
  // link itself is replaced and its target is left alone.
  const std::string target = Write("out/target.txt", "target");
  const std::string link = dir_ + "/out/link.json";
  fs::create_symlink(target, link);
  EXPECT_FALSE(report::ExportChromeTraceFile(*graph, {}, link, false).ok());
  ASSERT_TRUE(report::ExportChromeTraceFile(*graph, {}, link, true).ok());
  EXPECT_FALSE(fs::is_symlink(link));
  std::ifstream t(target);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(t), {}), "target");
  // No temporary files are left next to the output.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir_ + "/out")) files += entry.is_regular_file() || entry.is_symlink();
  EXPECT_EQ(files, 3u);
}

}  // namespace
}  // namespace pypto
