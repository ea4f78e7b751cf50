// The JSON side files of an Ascend run beside the CSVs: communication_matrix.json
// and profiler_metadata.json (importers/ascend_csv/ascend_tables.h).
//
// Expected figures are the raw files of ascend/pta_level2_llm_pp2dp2_ranks1_3/rank_1_ascend_pt
// (python3 -c "import json; …"): communication_matrix.json holds 73 links (sum of
// len(links) over step → group → op; analysis.db's CommAnalyzerMatrix has the same 73 rows); the link
// step13/p2p/batchsendrecv-top1@3985310499963036764/"0-1" is HCCS, 8.388608 MB,
// 20.9359 GB/s, op hcom_batchSendRecv__764_5_1. profiler_metadata.json gives
// world_size 4, the pp group [1, 3] with this rank at group_rank 0, and
// PYTORCH_NPU_ALLOC_CONF=expandable_segments:True.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "unit/importers/ascend_pt/ascend_test_helpers.h"
#include "importers/ascend_csv/ascend_tables.h"
#include "importers/detect.h"

namespace pypto::testing {
namespace {

namespace fs = std::filesystem;

const std::string kRun = AscendFixture("pta_level2_llm_pp2dp2_ranks1_3/rank_1_ascend_pt");

const std::string* DeviceText(const Profile& p, const std::string& key, double* number = nullptr) {
  for (size_t i = 0; i < p.attributes.size(); ++i)
    if (p.attributes.owner_kind(i) == OwnerKind::kDevice && p.Str(p.attributes.key(i)) == key) {
      if (number) *number = p.attributes.number(i);
      static thread_local std::string text;
      text = p.AttributeText(i);
      return &text;
    }
  return nullptr;
}

TEST(AscendSideFiles, CommunicationMatrixLinks) {
  if (!fs::exists(kRun)) GTEST_SKIP() << "fixture missing: " << kRun;
  Profile p;
  ASSERT_TRUE(ascend::ImportCommunicationMatrixJson(kRun + "/ASCEND_PROFILER_OUTPUT/communication_matrix.json", 1,
                                                    {}, &p)
                  .ok());
  size_t bandwidth_keys = 0;
  for (size_t i = 0; i < p.attributes.size(); ++i) bandwidth_keys += p.Str(p.attributes.key(i)).ends_with("/Bandwidth(GB/s)");
  EXPECT_EQ(bandwidth_keys, 73u);
  const std::string link = "communication_matrix/step13/batchsendrecv-top1@3985310499963036764/0-1/";
  double bandwidth = 0;
  ASSERT_NE(DeviceText(p, link + "Bandwidth(GB/s)", &bandwidth), nullptr);
  EXPECT_DOUBLE_EQ(bandwidth, 20.9359);
  EXPECT_EQ(*DeviceText(p, link + "Transport Type"), "HCCS");
  EXPECT_EQ(*DeviceText(p, link + "Op Name"), "hcom_batchSendRecv__764_5_1");
}

TEST(AscendSideFiles, ProfilerMetadataGroupsAndEnvironment) {
  if (!fs::exists(kRun)) GTEST_SKIP() << "fixture missing: " << kRun;
  auto p = LoadProfile(kRun);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  double world = 0, group_rank = -1;
  ASSERT_NE(DeviceText(*p, "distributed_args/world_size", &world), nullptr);
  EXPECT_EQ(world, 4);
  ASSERT_NE(DeviceText(*p, "parallel_group/pp/global_ranks"), nullptr);
  EXPECT_EQ(*DeviceText(*p, "parallel_group/pp/global_ranks"), "[1,3]");
  ASSERT_NE(DeviceText(*p, "parallel_group/pp/group_rank", &group_rank), nullptr);
  EXPECT_EQ(group_rank, 0);
  EXPECT_EQ(p->metadata["env.PYTORCH_NPU_ALLOC_CONF"], "expandable_segments:True");
  EXPECT_EQ(p->TotalDataLoss(), 0u);
}

TEST(AscendSideFiles, DamagedSideFilesAreCountedNotFatal) {
  if (!fs::exists(kRun)) GTEST_SKIP() << "fixture missing: " << kRun;
  TempDir dir;
  fs::copy(kRun, dir.path() + "/rank_1_ascend_pt", fs::copy_options::recursive);
  const std::string run = dir.path() + "/rank_1_ascend_pt";
  fs::permissions(run + "/profiler_metadata.json", fs::perms::owner_write, fs::perm_options::add);
  fs::permissions(run + "/ASCEND_PROFILER_OUTPUT/communication_matrix.json", fs::perms::owner_write,
                  fs::perm_options::add);
  dir.Write("rank_1_ascend_pt/profiler_metadata.json", "{\"distributed_args\": {\"rank\": 1,");
  dir.Write("rank_1_ascend_pt/ASCEND_PROFILER_OUTPUT/communication_matrix.json", "");
  auto p = LoadProfile(run);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->data_loss.count("ascend-pt: unreadable profiler_metadata.json"), 1u);
  EXPECT_EQ(p->data_loss.count("ascend-pt: unreadable communication_matrix.json"), 1u);
}

// api_statistic.csv of the CANN 9 torchair decode (raw row
// "host,model,ModelLoad,51796.08,1,51796.08,51796.08,51796.08,0"): kept on the
// run's device, 6 (its step_trace_time and op_statistic say Device_id 6).
TEST(AscendSideFiles, ApiStatisticRows) {
  const std::string run = AscendFixture(
      "pta_llm_decode_910b_torchair_cann9/liteserver-c001-4_2918463_20260805182126154_ascend_pt");
  if (!fs::exists(run)) GTEST_SKIP() << "fixture missing: " << run;
  auto p = LoadProfile(run);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  double time_us = 0, count = 0;
  ASSERT_NE(DeviceText(*p, "api_statistic/model/ModelLoad/Time(us)", &time_us), nullptr);
  ASSERT_NE(DeviceText(*p, "api_statistic/model/ModelLoad/Count", &count), nullptr);
  EXPECT_DOUBLE_EQ(time_us, 51796.08);
  EXPECT_EQ(count, 1);
  for (size_t i = 0; i < p->attributes.size(); ++i)
    if (p->Str(p->attributes.key(i)).starts_with("api_statistic/"))
      EXPECT_EQ(p->devices.rows[p->attributes.owner(i)].index, 6);
  EXPECT_EQ(p->TotalDataLoss(), 0u);
}

}  // namespace
}  // namespace pypto::testing
