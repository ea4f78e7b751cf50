// Ranking and speedup arithmetic on hand-built diagnoses (figures checked by hand).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "advisor/tuning_advisor.h"

namespace pypto::advisor {
namespace {

Issue MakeIssue(IssueType type, TimeNs affected, TimeNs saved, std::string op = "", std::string op_type = "") {
  static uint32_t next_row = 0;
  Issue i;
  i.type = type;
  i.op_name = std::move(op);
  i.op_type = std::move(op_type);
  i.affected_ns = affected;
  i.saved_ns = saved;
  i.method = saved > 0 ? SavingMethod::kAmdahl : SavingMethod::kNone;
  i.severity = Severity::kHigh;
  i.savings.push_back({SavingTargetKind::kDeviceTask, next_row++, saved});  // distinct rows
  return i;
}

TEST(Speedup, AmdahlOverTheStepTime) {
  EXPECT_DOUBLE_EQ(SpeedupFor(10'000, 2'000), 10'000.0 / 8'000.0);  // 1.25
  EXPECT_DOUBLE_EQ(SpeedupFor(10'000, 0), 1.0);
  EXPECT_DOUBLE_EQ(SpeedupFor(0, 5), 1.0);
  EXPECT_DOUBLE_EQ(SpeedupFor(10'000, 20'000), 100.0);  // clamped to 99 % of T
}

TEST(Advisor, RanksByExpectedGainAndComputesEachSpeedup) {
  DiagnosticReport r;
  r.step_time_ns = 10'000'000;  // 10 ms
  r.hardware_id = "910B3";
  r.format = "ascend-pt";
  r.issues.push_back(MakeIssue(IssueType::kMatmulTiling, 2'000'000, 500'000, "MatMulV2", "MatMulV2"));
  r.issues.push_back(MakeIssue(IssueType::kKvCacheLayout, 3'000'000, 3'000'000, "aten::cat", "copy"));
  r.issues.push_back(MakeIssue(IssueType::kMatmulTiling, 1'000'000, 250'000, "MatMulV3", "MatMulV3"));
  Issue host = MakeIssue(IssueType::kHostBound, 4'000'000, 2'000'000);
  host.evidence.metrics.push_back({"host_wait_gap_ns", 1'200'000, "ns"});
  r.issues.push_back(host);

  auto advice = Advise(r, ModelConfig{});
  ASSERT_TRUE(advice.ok()) << advice.status().ToString();
  ASSERT_EQ(advice->backend, Backend::kAscend);
  const auto& recs = advice->recommendations;
  ASSERT_EQ(recs.size(), 3u);  // the two MatMul issues share the AOE rule
  EXPECT_EQ(recs[0].hotspot_type, IssueType::kKvCacheLayout);
  EXPECT_EQ(recs[0].saved_ns, 3'000'000);
  EXPECT_NEAR(recs[0].estimated_speedup, 10.0 / 7.0, 1e-12);
  EXPECT_EQ(recs[1].hotspot_type, IssueType::kHostBound);
  EXPECT_EQ(recs[1].saved_ns, 2'000'000);  // preferred action (aclgraph): the issue saving
  EXPECT_NEAR(recs[1].estimated_speedup, 1.25, 1e-12);
  // TASK_QUEUE_ENABLE: measured host-wait gaps x 1.0; CPU affinity: not estimated.
  ASSERT_GE(recs[1].actions.size(), 3u);
  EXPECT_EQ(recs[1].actions[1].saved_ns, 1'200'000);
  EXPECT_FALSE(recs[1].actions[2].estimated);
  EXPECT_EQ(recs[2].hotspot_type, IssueType::kMatmulTiling);
  EXPECT_EQ(recs[2].rule_id, "matmul_tiling.ascend.aoe");
  EXPECT_EQ(recs[2].issues.size(), 2u);
  EXPECT_EQ(recs[2].saved_ns, 750'000);  // 500 + 250 us
  EXPECT_NEAR(recs[2].estimated_speedup, 10.0 / 9.25, 1e-12);
  EXPECT_NE(recs[2].action.find("aoe --job_type=2"), std::string::npos);
  EXPECT_NE(recs[2].action.find("aoe_tune_ops.cfg"), std::string::npos);  // placeholder filled
  for (size_t i = 0; i < recs.size(); ++i) EXPECT_EQ(recs[i].rank, int(i + 1));
  // Combined: 3.0 + 2.0 + 0.5 + 0.25 ms on distinct rows = 5.75 ms -> 10 / 4.25.
  EXPECT_EQ(advice->combined_saved_ns, 5'750'000);
  EXPECT_NEAR(advice->combined_speedup, 10.0 / 4.25, 1e-9);
}

TEST(Advisor, BackendDecidesTheRemedyAndAscendOnlyIssuesStayUnmatchedElsewhere) {
  DiagnosticReport r;
  r.step_time_ns = 1'000'000;
  r.hardware_id = "H100-SXM";
  r.format = "kineto";
  r.issues.push_back(MakeIssue(IssueType::kHostBound, 500'000, 300'000));
  r.issues.push_back(MakeIssue(IssueType::kNoPipeBound, 100'000, 50'000, "Tile", "Tile"));
  auto advice = Advise(r, ModelConfig{});
  ASSERT_TRUE(advice.ok());
  EXPECT_EQ(advice->backend, Backend::kCuda);
  ASSERT_EQ(advice->recommendations.size(), 1u);
  EXPECT_EQ(advice->recommendations[0].rule_id, "host_bound.gpu");
  EXPECT_NE(advice->recommendations[0].action.find("reduce-overhead"), std::string::npos);
  ASSERT_EQ(advice->unmatched.size(), 1u);
  EXPECT_NE(advice->unmatched[0].find("no_pipe_bound"), std::string::npos);
  AdviseOptions forced;
  forced.backend = "ascend";
  auto npu = Advise(r, ModelConfig{}, forced);
  ASSERT_TRUE(npu.ok());
  EXPECT_EQ(npu->recommendations.size(), 2u);
  forced.backend = "tpu";
  EXPECT_FALSE(Advise(r, ModelConfig{}, forced).ok());
}

std::vector<std::string> ActionIds(const Recommendation& rec) {
  std::vector<std::string> ids;
  for (const ActionAdvice& a : rec.actions) ids.push_back(a.id);
  return ids;
}

bool Has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(Advisor, TrainingProfileGetsNoDecodeCaptureAndNoKvCacheAdvice) {
  // Seen on the CANN 8.3 training fixture: "capture the decode step" and a
  // KV-cache patch offered for a job with RmsNormGrad and ApplyAdamWV2 rows.
  DiagnosticReport r;
  r.step_time_ns = 1'000'000;
  r.hardware_id = "910B3";
  r.format = "ascend_pt";
  r.workload = Workload::kTraining;
  r.issues.push_back(MakeIssue(IssueType::kHostBound, 500'000, 300'000));
  r.issues.push_back(MakeIssue(IssueType::kKvCacheLayout, 100'000, 50'000, "aten::cat", "cat"));
  auto training = Advise(r, ModelConfig{});
  ASSERT_TRUE(training.ok());
  ASSERT_EQ(training->recommendations.size(), 1u);
  const std::vector<std::string> ids = ActionIds(training->recommendations[0]);
  EXPECT_FALSE(Has(ids, "aclgraph"));
  EXPECT_TRUE(Has(ids, "task_queue_enable_2"));
  ASSERT_EQ(training->unmatched.size(), 1u);
  EXPECT_NE(training->unmatched[0].find("no advice for a training profile"), std::string::npos)
      << training->unmatched[0];

  r.workload = Workload::kInference;
  auto inference = Advise(r, ModelConfig{});
  ASSERT_TRUE(inference.ok());
  ASSERT_EQ(inference->recommendations.size(), 2u);
  EXPECT_EQ(inference->recommendations[0].actions.front().id, "aclgraph");

  // On a GPU the training remedy is compiling the step, not a static KV cache.
  r.hardware_id = "H100-SXM";
  r.format = "kineto";
  r.workload = Workload::kTraining;
  auto gpu = Advise(r, ModelConfig{});
  ASSERT_TRUE(gpu.ok());
  ASSERT_FALSE(gpu->recommendations.empty());
  EXPECT_EQ(ActionIds(gpu->recommendations[0]), std::vector<std::string>{"compile_training_step"});
}

TEST(Advisor, RepeatKvRemedyOnlyWhereATileOrExpandIsTheOp) {
  // Seen: "pass num_key_value_heads instead of repeat_kv" offered for
  // FlashAttentionScoreGrad, MatMulV3 and RmsNormGrad.
  DiagnosticReport r;
  r.step_time_ns = 1'000'000;
  r.hardware_id = "910B3";
  r.format = "ascend_pt";
  r.issues.push_back(MakeIssue(IssueType::kNoPipeBound, 100'000, 50'000, "FlashAttentionScoreGrad",
                               "FlashAttentionScoreGrad"));
  auto attention = Advise(r, ModelConfig{});
  ASSERT_TRUE(attention.ok());
  ASSERT_EQ(attention->recommendations.size(), 1u);
  EXPECT_FALSE(Has(ActionIds(attention->recommendations[0]), "avoid_repeat_kv"));
  EXPECT_EQ(attention->recommendations[0].actions.size(), 1u);

  r.issues.push_back(MakeIssue(IssueType::kNoPipeBound, 80'000, 40'000, "Tile", "Tile"));
  auto tile = Advise(r, ModelConfig{});
  ASSERT_TRUE(tile.ok());
  ASSERT_EQ(tile->recommendations.size(), 1u);
  const Recommendation& rec = tile->recommendations[0];
  ASSERT_TRUE(Has(ActionIds(rec), "avoid_repeat_kv"));
  // Its gain counts the Tile issue only: 1.00 x affected 80 us.
  for (const ActionAdvice& a : rec.actions)
    if (a.id == "avoid_repeat_kv") EXPECT_EQ(a.saved_ns, 80'000);
}

TEST(Advisor, PlaceholdersFromTheModelConfig) {
  ModelConfig m;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  EXPECT_EQ(FillPlaceholders("num_heads={num_heads}, kv={num_kv_heads}, d={head_dim}, h={hidden}", m, nullptr),
            "num_heads=32, kv=8, d=128, h=<hidden>");
  // Braces that are not placeholders (code) are kept.
  EXPECT_EQ(FillPlaceholders("x = {'a': 1} {op_type}", m, nullptr), "x = {'a': 1} <op>");
}

}  // namespace
}  // namespace pypto::advisor
