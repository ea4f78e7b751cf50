// Cases the fixture sweep found (tests/reliability/fixture_sweep.cc), kept as
// unit tests with small hand-written inputs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "importers/ascend_csv/ascend_tables.h"
#include "importers/detect.h"

namespace pypto {
namespace {

namespace fs = std::filesystem;

// An op_summary.csv cut inside its (long) header row used to load as an empty
// table with no data loss: a silent empty result.
TEST(Truncation, CsvCutInsideTheHeaderCountsLoss) {
  const std::string header =
      "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
      "Task Duration(us),Task Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,Input Shapes";
  std::string pattern = (fs::temp_directory_path() / "pypto-trunc.XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::string path = pattern + "/op_summary.csv";
  std::ofstream(path) << header;  // no line end, no rows
  auto loaded = LoadProfile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto it = loaded->data_loss.find(ascend::kLossHeaderCut);
  ASSERT_NE(it, loaded->data_loss.end());
  EXPECT_EQ(it->second.first_location, path + ": line 1");

  // The same header with its line end is a complete (empty) table: no loss.
  std::ofstream(path) << header << "\n";
  auto complete = LoadProfile(path);
  ASSERT_TRUE(complete.ok()) << complete.status().message();
  EXPECT_EQ(complete->data_loss.count(ascend::kLossHeaderCut), 0u);
  fs::remove_all(pattern);
}

}  // namespace
}  // namespace pypto
