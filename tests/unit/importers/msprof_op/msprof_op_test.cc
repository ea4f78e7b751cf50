// msprof op single-operator output (importers/msprof_op).
//
// Fixture ascend/msprof_op_vector_kernel_910b/raw/Default: the figures below
// are the raw cells. OpBasicInfo.csv: "post_kernel,vector,6.960139,1,NA,14,
// 250,1800,1800," → one AI-vector task of 6.960139 µs = 6960 ns (rounded), Block
// Dim 1, no Mix Block Dim, device 14, 1800 MHz. Each metric file has one block
// row "0,vector0,…": with one block the mean is the cell itself
// (PipeUtilization aiv_vec_ratio 0.180218, aiv_mte2_ratio 0.079320,
// aiv_scalar_ratio 0.508372; Memory aiv_gm_to_ub_bw(GB/s) 0.148163) and the
// summed counts equal the cell (aiv_total_cycles 11586).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "unit/importers/ascend_pt/ascend_test_helpers.h"
#include "importers/ascend_csv/ascend_tables.h"
#include "importers/detect.h"

namespace pypto::testing {
namespace {

namespace fs = std::filesystem;

const std::string kOpDir = AscendFixture("msprof_op_vector_kernel_910b");

double TaskAttr(const Profile& p, uint32_t task, const std::string& key) {
  for (size_t i = 0; i < p.attributes.size(); ++i)
    if (p.attributes.owner_kind(i) == OwnerKind::kDeviceTask && p.attributes.owner(i) == task &&
        p.Str(p.attributes.key(i)) == key)
      return p.attributes.number(i);
  return NAN;
}

double DeviceAttr(const Profile& p, const std::string& key) {
  for (size_t i = 0; i < p.attributes.size(); ++i)
    if (p.attributes.owner_kind(i) == OwnerKind::kDevice && p.Str(p.attributes.key(i)) == key)
      return p.attributes.number(i);
  return NAN;
}

class MsprofOpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kOpDir)) GTEST_SKIP() << "fixture missing: " << kOpDir;
  }
};

TEST_F(MsprofOpTest, FixtureFolderLoadsAsOneKernel) {
  auto p = LoadProfile(kOpDir);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->metadata["format"], "msprof-op");
  EXPECT_EQ(p->metadata["clock"], "relative");
  ASSERT_EQ(p->device_tasks.size(), 1u);
  const DeviceTaskTable& d = p->device_tasks;
  EXPECT_EQ(p->Str(d.name[0]), "post_kernel");
  EXPECT_EQ(p->Str(d.core_type[0]), "AI_VECTOR_CORE");
  EXPECT_EQ(d.kind[0], DeviceTaskKind::kKernel);
  EXPECT_EQ(d.dur[0], 6960);
  EXPECT_EQ(d.ts[0], 0);
  EXPECT_EQ(d.block_dim(0), 1);
  EXPECT_EQ(d.mix_block_dim(0), -1);
  EXPECT_EQ(p->tracks.device[d.track[0]], 14);
  EXPECT_DOUBLE_EQ(DeviceAttr(*p, "aic_frequency"), 1800);
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "aiv_vec_ratio"), 0.180218);
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "aiv_mte2_ratio"), 0.079320);
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "aiv_scalar_ratio"), 0.508372);
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "aiv_gm_to_ub_bw(GB/s)"), 0.148163);
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "aiv_total_cycles"), 11586);
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "msprof_op/blocks"), 1);
  // NA cells (the cube side of a vector kernel) are not attributes.
  EXPECT_TRUE(std::isnan(TaskAttr(*p, 0, "aic_cube_ratio")));
  EXPECT_EQ(p->TotalDataLoss(), 0u);
  // All eight files read.
  EXPECT_EQ(p->source_files.size(), 8u);
}

TEST_F(MsprofOpTest, OpBasicInfoAloneLoads) {
  auto p = LoadProfile(kOpDir + "/raw/Default/OpBasicInfo.csv");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->metadata["format"], "msprof-op");
  ASSERT_EQ(p->device_tasks.size(), 1u);
}

TEST_F(MsprofOpTest, BlocksAreFoldedRatiosAveragedCountsSummed) {
  TempDir dir;
  dir.Write("OPPROF_1/OpBasicInfo.csv",
            "Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device Id,Pid,Current Freq,Rated Freq,\n"
            "mm_kernel,cube,10.5,2,NA,0,1,1650,1800,\n");
  dir.Write("OPPROF_1/PipeUtilization.csv",
            "block_id,sub_block_id,aic_time(us),aic_total_cycles,aic_cube_ratio,\n"
            "0,cube0,10.0,16500,0.50,\n"
            "1,cube0,9.0,14850,0.70,\n");
  auto p = LoadProfile(dir.path());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->device_tasks.size(), 1u);
  EXPECT_EQ(p->Str(p->device_tasks.core_type[0]), "AI_CORE");
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "aic_cube_ratio"), 0.60);       // (0.50 + 0.70) / 2
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "aic_time(us)"), 9.5);          // (10.0 + 9.0) / 2
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "aic_total_cycles"), 31350);    // 16500 + 14850
  EXPECT_DOUBLE_EQ(TaskAttr(*p, 0, "msprof_op/blocks"), 2);
}

TEST_F(MsprofOpTest, CutMetricRowIsCountedAndEmptyBasicInfoNamesTheFile) {
  TempDir dir;
  dir.Write("OPPROF_1/OpBasicInfo.csv",
            "Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device Id,Pid,Current Freq,Rated Freq,\n"
            "k,vector,1.0,1,NA,0,1,1800,1800,\n");
  dir.Write("OPPROF_1/PipeUtilization.csv", "block_id,sub_block_id,aiv_time(us),aiv_vec_ratio,\n0,vector0,1.0");
  auto p = LoadProfile(dir.path());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->data_loss.count(ascend::kLossCellCount), 1u);

  TempDir empty;
  empty.Write("OPPROF_2/OpBasicInfo.csv", "");
  auto q = LoadProfile(empty.path());
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("OpBasicInfo.csv: line 1: file is empty"), std::string::npos)
      << q.status().message();
}

}  // namespace
}  // namespace pypto::testing
