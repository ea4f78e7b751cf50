// Every CSV fixture of the Ascend corpus loads through LoadProfile. Expected
// figures were checked against the raw rows with Python's csv module (one-off
// scripts: csv.reader over the file, Counter of the core-type column, sums of
// Decimal(duration) * 1000 rounded half-up to ns, field lookups by header
// name). Each test says which rows its figures come from.
#include <gtest/gtest.h>

#include "unit/importers/ascend_pt/ascend_test_helpers.h"
#include "importers/ascend_csv/ascend_tables.h"

namespace pypto {
namespace {

using testing::AscendFixture;
using testing::Attribute;
using testing::CountByCoreType;
using testing::DurationByCoreType;
using testing::DurationByOpType;
using testing::FindTask;
using testing::HasNoteContaining;
using testing::Meta;

Profile MustLoad(const std::string& path, const ImportOptions& options = {}) {
  auto profile = LoadProfile(path, options);
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  if (!profile.ok()) return Profile();
  return std::move(profile).value();
}

TEST(AscendFixtures, DetectsEveryCsvFixtureAndLayout) {
  struct Case {
    std::string path;
    std::string format;
  };
  const Case cases[] = {
      {"pta_level1_alexnet_cann8", "ascend-pt"},
      {"pta_level1_alexnet_cann8/ASCEND_PROFILER_OUTPUT", "ascend-pt"},
      {"pta_level1_alexnet_cann8/ASCEND_PROFILER_OUTPUT/kernel_details.csv", "ascend-pt"},
      {"pta_level1_alexnet_cann8/ASCEND_PROFILER_OUTPUT/op_statistic.csv", "ascend-pt"},
      {"pta_level1_alexnet_cann8/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", "ascend-pt"},
      {"pta_level2_llm_cann83", "ascend-pt"},
      {"pta_advisor_ut_llm_matmul_fa", "ascend-pt"},
      {"pta_advisor_ut_llm_matmul_fa/kernel_details.csv", "ascend-pt"},
      {"msprof_op_summary_gpt3_memoryl0", "msprof"},
      {"msprof_op_summary_gpt3_memoryl0/op_summary_1.csv", "msprof"},
      {"msprof_op_summary_blocknum_newcann/a003-op_summary.csv", "msprof"},
  };
  for (const Case& c : cases) {
    auto importer = DetectFormat(AscendFixture(c.path));
    ASSERT_TRUE(importer.ok()) << c.path << ": " << importer.status().ToString();
    EXPECT_EQ((*importer)->name(), c.format) << c.path;
  }
}

// pta_level1_alexnet_cann8: 191 kernel rows; counts per Accelerator Core as in
// SOURCES.md; durations = sum of Duration(us) per core type (Python Decimal).
TEST(AscendFixtures, Level1AlexnetDirectory) {
  Profile p = MustLoad(AscendFixture("pta_level1_alexnet_cann8"));
  EXPECT_EQ(Meta(p, "format"), "ascend-pt");
  ASSERT_EQ(p.device_tasks.size(), 191u);
  EXPECT_EQ(CountByCoreType(p), (std::map<std::string, int>{
                                    {"AI_VECTOR_CORE", 149}, {"AI_CORE", 23}, {"MIX_AIV", 13}, {"HCCL", 4}, {"DSA_SQE", 2}}));
  EXPECT_EQ(DurationByCoreType(p), (std::map<std::string, int64_t>{{"AI_VECTOR_CORE", 5823400},
                                                                   {"AI_CORE", 2805855},
                                                                   {"MIX_AIV", 238962},
                                                                   {"HCCL", 105991876},
                                                                   {"DSA_SQE", 5520}}));
  auto by_type = DurationByOpType(p);
  EXPECT_EQ(by_type["hcom_allReduce_"], 105991876);
  EXPECT_EQ(by_type["ForeachAddList"], 1959079);
  EXPECT_EQ(by_type["TransData"], 1423202);
  EXPECT_EQ(p.data_loss.size(), 0u);
  // No profiler_info in this fixture: the adapter comes from the header (46 columns, no Device_id).
  EXPECT_EQ(Meta(p, "adapter.kernel_details.csv"), "kernel_details/cann8.0");
  EXPECT_TRUE(HasNoteContaining(p, "adapter kernel_details/cann8.0 (inferred from the header)"));

  // Data row 3 (file line 4): Conv2D1.
  int conv = FindTask(p, "Conv2D1");
  ASSERT_GE(conv, 0);
  const auto& t = p.device_tasks;
  EXPECT_EQ(t.ts[conv], 1736408883704903918);  // "1736408883704903.918\t"
  EXPECT_EQ(t.dur[conv], 313886);
  EXPECT_EQ(t.kind[conv], DeviceTaskKind::kKernel);
  EXPECT_EQ(t.block_dim(conv), 16);
  EXPECT_EQ(t.mix_block_dim(conv), 0);
  EXPECT_EQ(p.Str(t.op_type(conv)), "Conv2D");
  EXPECT_EQ(p.Str(t.input_shapes(conv)), "32,1,224,224,8;121,4,16,8;64");
  EXPECT_EQ(p.Str(t.input_formats(conv)), "NC1HWC0;FRACTAL_Z;NCHW");
  EXPECT_EQ(p.Str(t.output_shapes(conv)), "32,8,55,55,8");
  EXPECT_EQ(p.Str(t.output_formats(conv)), "NC1HWC0");
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, conv, "aic_mac_ratio").second, 0.519);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, conv, "aic_mte2_ratio").second, 0.913);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, conv, "cube_utilization(%)").second, 66.301);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, conv, "Wait Time(us)").second, 96.222);
  EXPECT_EQ(Attribute(p, OwnerKind::kDeviceTask, conv, "HF32 Eligible").first, "YES");
  EXPECT_EQ(Attribute(p, OwnerKind::kDeviceTask, conv, "Step Id").first, "50");
  // Model ID 4294967295 = not applicable; Context ID N/A = absent.
  EXPECT_EQ(Attribute(p, OwnerKind::kDeviceTask, conv, "Model ID").first, "<absent>");
  EXPECT_EQ(Attribute(p, OwnerKind::kDeviceTask, conv, "Context ID").first, "<absent>");

  // HCCL rows: communication kind, own track (Stream ID N/A); streams 2 (185 rows) and 3 (2 rows).
  int comm = FindTask(p, "hcom_allReduce__586_0_1");
  ASSERT_GE(comm, 0);
  EXPECT_EQ(t.kind[comm], DeviceTaskKind::kCommunication);
  EXPECT_EQ(p.Str(p.tracks.name[t.track[comm]]), "Communication");
  EXPECT_EQ(Attribute(p, OwnerKind::kDeviceTask, comm, "aic_mac_ratio").first, "<absent>");  // N/A
  std::map<std::string, int> per_track;
  for (size_t i = 0; i < t.size(); ++i) per_track[std::string(p.Str(p.tracks.name[t.track[i]]))]++;
  EXPECT_EQ(per_track, (std::map<std::string, int>{{"Stream 2", 185}, {"Stream 3", 2}, {"Communication", 4}}));

  // step_trace_time.csv (CRLF): step 50, µs with float noise → ns.
  ASSERT_EQ(p.steps.size(), 1u);
  const StepRow& s = p.steps.rows[0];
  EXPECT_EQ(s.number, 50);
  EXPECT_EQ(s.computing, 8873756);           // 8873.756000000001
  EXPECT_EQ(s.communication_not_overlapped, 101963203);
  EXPECT_EQ(s.overlapped, 4028675);          // 4028.6750000000175
  EXPECT_EQ(s.communication, 105991878);     // 105991.87800000001
  EXPECT_EQ(s.free, 25744050);
  EXPECT_EQ(s.stage, 136581000);
  EXPECT_EQ(s.bubble, 0);
  EXPECT_EQ(s.communication_not_overlapped_excluding_receive, 101963203);
  EXPECT_EQ(s.preparing, 17902500);
  EXPECT_EQ(s.dur, 8873756 + 101963203 + 25744050);

  // op_statistic.csv row 3: MatMulV2,AI_CORE,8,921.498,16.54,115.187,346.567,10.385.
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDevice, 0, "op_statistic/MatMulV2/AI_CORE/Count").second, 8);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDevice, 0, "op_statistic/MatMulV2/AI_CORE/Total Time(us)").second, 921.498);
  // communication.json: first op's Elapse Time(ms) and HCCS bandwidth.
  EXPECT_DOUBLE_EQ(
      Attribute(p, OwnerKind::kDevice, 0, "communication/step50/hcom_allReduce__586_0_1@17522688603477080586/Elapse Time(ms)")
          .second,
      79.08952021875);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDevice, 0,
                             "communication/step50/hcom_allReduce__586_0_1@17522688603477080586/HCCS Bandwidth(GB/s)")
                       .second,
                   15.7676);
}

// pta_level2_llm_cann83: 2463 rows; counts from SOURCES.md; durations and the
// rows below checked with Python (first data row ZerosLike; first FlashAttentionScore).
TEST(AscendFixtures, Level2LlmDirectoryWithVersions) {
  Profile p = MustLoad(AscendFixture("pta_level2_llm_cann83"));
  ASSERT_EQ(p.device_tasks.size(), 2463u);
  EXPECT_EQ(CountByCoreType(p), (std::map<std::string, int>{{"AI_VECTOR_CORE", 1857},
                                                            {"AI_CORE", 336},
                                                            {"MIX_AIV", 199},
                                                            {"MIX_AIC", 56},
                                                            {"COMMUNICATION", 15}}));
  EXPECT_EQ(DurationByCoreType(p), (std::map<std::string, int64_t>{{"AI_VECTOR_CORE", 68795300},
                                                                   {"AI_CORE", 58022860},
                                                                   {"MIX_AIV", 16624620},
                                                                   {"MIX_AIC", 87847320},
                                                                   {"COMMUNICATION", 420174260}}));
  auto by_type = DurationByOpType(p);
  EXPECT_EQ(by_type["hcom_batchSendRecv_"], 313877800);
  EXPECT_EQ(by_type["FlashAttentionScoreGrad"], 63128660);
  EXPECT_EQ(by_type["MatMulV3"], 48000780);
  EXPECT_EQ(p.data_loss.size(), 0u);

  // profiler_info_0.json
  EXPECT_EQ(Meta(p, "torch_npu_version"), "2.7.1");
  EXPECT_EQ(Meta(p, "cann_version"), "8.3.RC1");
  EXPECT_EQ(Meta(p, "profiler_level"), "Level2");
  EXPECT_EQ(Meta(p, "aic_metrics"), "ACL_AICORE_PIPE_UTILIZATION");
  EXPECT_EQ(Meta(p, "schedule"), "wait=0,active=1,warmup=1,repeat=1,skip_first=12");
  EXPECT_EQ(Meta(p, "record_shapes"), "true");
  EXPECT_EQ(Meta(p, "adapter.kernel_details.csv"), "kernel_details/cann8.3");
  EXPECT_EQ(Meta(p, "format_version"), "kernel_details/cann8.3");
  EXPECT_TRUE(HasNoteContaining(p, "adapter kernel_details/cann8.3 (cann_version 8.3.RC1 from profiler_info_0.json)"));

  const auto& t = p.device_tasks;
  // First data row: ZerosLike, "1764246877073569.640\t", aiv_vec_ratio 0.052.
  int zeros = FindTask(p, "aclnnInplaceZero_ZerosLikeAiCore_ZerosLike");
  ASSERT_EQ(zeros, 0);
  EXPECT_EQ(t.ts[0], 1764246877073569640);
  EXPECT_EQ(t.dur[0], 1892920);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, 0, "aiv_vec_ratio").second, 0.052);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, 0, "aiv_mte3_ratio").second, 0.996);
  EXPECT_EQ(p.tracks.device[t.track[0]], 0);
  EXPECT_EQ(p.tracks.stream[t.track[0]], 2);
  // Second row: shapes cell """151936,1024;1,4096;1""", wait "1881.080000".
  EXPECT_EQ(p.Str(t.input_shapes(1)), "151936,1024;1,4096;1");
  EXPECT_EQ(p.Str(t.input_types(1)), "DT_BF16;INT64;INT64");
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, 1, "Wait Time(us)").second, 1881.08);

  int fa = FindTask(p, "aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore");
  ASSERT_GE(fa, 0);
  EXPECT_EQ(p.Str(t.core_type[fa]), "MIX_AIC");
  EXPECT_EQ(t.block_dim(fa), 20);
  EXPECT_EQ(t.mix_block_dim(fa), 40);
  EXPECT_EQ(p.Str(t.input_shapes(fa)), "4096,1,2048;4096,1,1024;4096,1,1024;;;;2048,2048;;;;;;;;");
  EXPECT_EQ(p.Str(t.output_types(fa)), "FLOAT;FLOAT;DT_BF16;DT_BF16");
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, fa, "aic_mac_ratio").second, 0.348);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, fa, "cube_utilization(%)").second, 93.523);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, fa, "Context ID").second, 0);

  // COMMUNICATION row: Block Dim 0, Mix Block Dim N/A (absent), no stream.
  int comm = FindTask(p, "hcom_batchSendRecv__128_3_1");
  ASSERT_GE(comm, 0);
  EXPECT_EQ(t.kind[comm], DeviceTaskKind::kCommunication);
  EXPECT_EQ(t.block_dim(comm), 0);
  EXPECT_EQ(t.mix_block_dim(comm), -1);
  EXPECT_EQ(p.tracks.stream[t.track[comm]], -1);

  // step_trace_time.csv: Device_id 0, step 13.
  ASSERT_EQ(p.steps.size(), 1u);
  const StepRow& s = p.steps.rows[0];
  EXPECT_EQ(s.number, 13);
  EXPECT_EQ(s.device, 0);
  EXPECT_EQ(s.computing, 231290100);  // 231290.09999999995
  EXPECT_EQ(s.communication_not_overlapped, 420174260);
  EXPECT_EQ(s.overlapped, 0);
  EXPECT_EQ(s.free, 158558000);       // 158558.00000000032
  EXPECT_EQ(s.stage, 810022250);
  EXPECT_EQ(s.preparing, 206250);
  // op_statistic.csv (with Device_id): FlashAttentionScoreGrad,MIX_AIC,28,63128.66,…,27.294.
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDevice, 0, "op_statistic/FlashAttentionScoreGrad/MIX_AIC/Ratio(%)").second,
                   27.294);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDevice, 0, "op_statistic/MatMulV3/AI_CORE/Count").second, 280);
}

TEST(AscendFixtures, SingleKernelDetailsFileStillReadsTheRunVersions) {
  Profile p = MustLoad(AscendFixture("pta_level2_llm_cann83/ASCEND_PROFILER_OUTPUT/kernel_details.csv"));
  EXPECT_EQ(p.device_tasks.size(), 2463u);
  EXPECT_EQ(p.steps.size(), 1u);  // step 13 from the Step Id column (StepIdColumnGivesTheStep)
  EXPECT_EQ(Meta(p, "cann_version"), "8.3.RC1");
  EXPECT_EQ(Meta(p, "adapter.kernel_details.csv"), "kernel_details/cann8.3");
}

TEST(AscendFixtures, SingleStepTraceAndOpStatisticFiles) {
  Profile steps = MustLoad(AscendFixture("pta_level1_alexnet_cann8/ASCEND_PROFILER_OUTPUT/step_trace_time.csv"));
  ASSERT_EQ(steps.steps.size(), 1u);
  EXPECT_EQ(steps.steps.rows[0].preparing, 17902500);
  Profile stats = MustLoad(AscendFixture("pta_level2_llm_cann83/ASCEND_PROFILER_OUTPUT/op_statistic.csv"));
  // 35 rows × 6 numeric columns (Count, Total, Min, Avg, Max, Ratio).
  EXPECT_EQ(stats.attributes.size(), 35u * 6u);
}

// pta_advisor_ut_llm_matmul_fa: 29 rows; timestamps are quoted with the TAB
// inside the quotes ("1736413971558972.912\t").
TEST(AscendFixtures, AdvisorExcerptWithQuotedTimestamps) {
  Profile p = MustLoad(AscendFixture("pta_advisor_ut_llm_matmul_fa/kernel_details.csv"));
  ASSERT_EQ(p.device_tasks.size(), 29u);
  EXPECT_EQ(CountByCoreType(p), (std::map<std::string, int>{{"AI_CORE", 12}, {"MIX_AIC", 9}, {"AI_VECTOR_CORE", 8}}));
  EXPECT_EQ(DurationByCoreType(p),
            (std::map<std::string, int64_t>{{"AI_CORE", 4872937}, {"MIX_AIC", 5072220}, {"AI_VECTOR_CORE", 116002}}));
  EXPECT_EQ(p.device_tasks.ts[0], 1736413971558972912);
  EXPECT_EQ(p.Str(p.device_tasks.input_shapes(0)), "81920,4096;8192,512");
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, 0, "cube_utilization(%)").second, 79.295);
  EXPECT_EQ(DurationByOpType(p)["MatMulV3"], 4122342);
}

// msprof_op_summary_gpt3_memoryl0: 21 data rows, one of which (file line 17)
// has 31 cells for 32 columns → 20 tasks + 1 counted loss.
TEST(AscendFixtures, MsprofGpt3MixedHeaderWithShortRow) {
  Profile p = MustLoad(AscendFixture("msprof_op_summary_gpt3_memoryl0/op_summary_1.csv"));
  EXPECT_EQ(Meta(p, "format"), "msprof");
  EXPECT_EQ(Meta(p, "adapter.op_summary_1.csv"), "op_summary/cann7");
  ASSERT_EQ(p.device_tasks.size(), 20u);
  EXPECT_EQ(CountByCoreType(p), (std::map<std::string, int>{{"AI_CORE", 4},
                                                            {"HCCL", 4},
                                                            {"AI_CPU", 2},
                                                            {"DSA_SQE", 2},
                                                            {"MIX_AIC", 3},
                                                            {"AI_VECTOR_CORE", 2},
                                                            {"MIX_AIV", 3}}));
  EXPECT_EQ(DurationByCoreType(p)["MIX_AIC"], 21112851);  // 4-decimal µs rounded to ns per row
  EXPECT_EQ(DurationByCoreType(p)["HCCL"], 10238538);
  ASSERT_EQ(p.data_loss.count(ascend::kLossCellCount), 1u);
  const auto& loss = p.data_loss.at(ascend::kLossCellCount);
  EXPECT_EQ(loss.count, 1u);
  EXPECT_NE(loss.first_location.find("op_summary_1.csv: line 17: 31 cells, header has 32"), std::string::npos)
      << loss.first_location;
  EXPECT_EQ(p.device_tasks.ts[0], 1695115378713661000);  // integer µs "1695115378713661"
  EXPECT_EQ(p.Str(p.device_tasks.input_formats(0)), "ND");  // FORMAT_ND normalised
  // First FlashAttentionScore row: file line 14 (Block Dim 24, Mix Block Dim 48, l0a read 19.2488).
  int fa = FindTask(p, "FlashAttentionScore");
  ASSERT_GE(fa, 0);
  EXPECT_EQ(p.device_tasks.block_dim(fa), 24);
  EXPECT_EQ(p.device_tasks.mix_block_dim(fa), 48);
  EXPECT_EQ(p.Str(p.device_tasks.input_formats(fa)), "ND;ND;ND;NCHW;ND;NCHW;ND");
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, fa, "aic_l0a_read_bw(GB/s)").second, 19.2488);
  EXPECT_EQ(p.device_tasks.kind[FindTask(p, "hcom_broadcast__483_0")], DeviceTaskKind::kCommunication);
}

// msprof_op_summary_blocknum_newcann: 15 rows, Device_id 7, Block Num / Mix Block Num.
TEST(AscendFixtures, MsprofNewestBlockNumHeader) {
  Profile p = MustLoad(AscendFixture("msprof_op_summary_blocknum_newcann/a003-op_summary.csv"));
  EXPECT_EQ(Meta(p, "adapter.a003-op_summary.csv"), "op_summary/block-num");
  ASSERT_EQ(p.device_tasks.size(), 15u);
  EXPECT_EQ(CountByCoreType(p), (std::map<std::string, int>{{"DSA_SQE", 6}, {"AI_VECTOR_CORE", 6}, {"MIX_AIC", 3}}));
  EXPECT_EQ(DurationByCoreType(p),
            (std::map<std::string, int64_t>{{"DSA_SQE", 64780}, {"AI_VECTOR_CORE", 22600}, {"MIX_AIC", 35160}}));
  int mm = FindTask(p, "matmul_bias_activation_kernel");
  ASSERT_GE(mm, 0);
  EXPECT_EQ(p.device_tasks.block_dim(mm), 9);
  EXPECT_EQ(p.device_tasks.mix_block_dim(mm), 18);
  EXPECT_EQ(p.device_tasks.ts[mm], 1791629758940724910);
  EXPECT_DOUBLE_EQ(Attribute(p, OwnerKind::kDeviceTask, mm, "cube_utilization(%)").second, 30.837);
  EXPECT_EQ(p.tracks.device[p.device_tasks.track[mm]], 7);
  EXPECT_EQ(p.tracks.stream[p.device_tasks.track[mm]], 38);
  // DSA rows: input shapes N/A (absent), PMU N/A (absent).
  EXPECT_EQ(p.device_tasks.input_shapes(0), kEmptyStr);
  EXPECT_EQ(p.Str(p.device_tasks.output_shapes(0)), "384,384");
  EXPECT_EQ(Attribute(p, OwnerKind::kDeviceTask, 0, "aic_mac_ratio").first, "<absent>");
  EXPECT_EQ(p.data_loss.size(), 0u);
}

TEST(AscendFixtures, ForcedCannVersionPicksTheAdapterAndNotesAliases) {
  ImportOptions options;
  options.cann_version = "8.0.RC1";
  Profile p = MustLoad(AscendFixture("msprof_op_summary_blocknum_newcann/a003-op_summary.csv"), options);
  EXPECT_EQ(Meta(p, "format_version"), "op_summary/cann8.0");
  EXPECT_TRUE(HasNoteContaining(p, "adapter op_summary/cann8.0 (forced cann_version 8.0.RC1)"));
  EXPECT_TRUE(HasNoteContaining(p, "column 'Block Num' for 'Block Dim'"));
  int mm = FindTask(p, "matmul_bias_activation_kernel");
  ASSERT_GE(mm, 0);
  EXPECT_EQ(p.device_tasks.block_dim(mm), 9);  // still read, through the alias

  // Forcing overrides the profiler_info version too.
  options.cann_version = "9.0";
  Profile q = MustLoad(AscendFixture("pta_level2_llm_cann83"), options);
  EXPECT_EQ(Meta(q, "adapter.kernel_details.csv"), "kernel_details/block-num");
  EXPECT_EQ(q.device_tasks.block_dim(FindTask(q, "aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore")), 20);

  options.cann_version = "banana";
  auto bad = LoadProfile(AscendFixture("pta_level2_llm_cann83"), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "cann version 'banana' is not a version like 8.3.RC1");
}

}  // namespace
}  // namespace pypto

namespace pypto::testing {
namespace {

// kernel_details.csv of the CANN 8.3 LLM job read alone (no step_trace_time):
// its 2463 rows all have Step Id 13, device 0; the first starts at
// 1764246877073569.8 µs and the last ends 810.022 ms later (python3 csv:
// min(Start Time) and max(Start Time + Duration)), which is also the job's
// step_trace_time stage of step 13 (Computing + Communication(Not Overlapped)
// + Free = 810.022 ms). `--step 13` then selects it.
TEST(AscendFixtures, StepIdColumnGivesTheStep) {
  const std::string file = AscendFixture("pta_level2_llm_cann83/ASCEND_PROFILER_OUTPUT/kernel_details.csv");
  if (!std::ifstream(file)) GTEST_SKIP() << "fixture missing: " << file;
  auto p = LoadProfile(file);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->steps.size(), 1u);
  const StepRow& step = p->steps.rows[0];
  EXPECT_EQ(step.number, 13);
  EXPECT_EQ(step.device, 0);
  EXPECT_EQ(p->Str(step.source), kStepSourceStepIdColumn);
  EXPECT_NEAR(static_cast<double>(step.dur), 810.022e6, 1e3);
}

}  // namespace
}  // namespace pypto::testing
