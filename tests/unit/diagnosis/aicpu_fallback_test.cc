// Detector 6 (aicpu_fallback): Ascend tasks of Task Type AI_CPU lasting more
// than 20 us (msprof-analyze aicpu_checker), one issue per op type.
#include <gtest/gtest.h>

#include <string>

#include "session/profile_session.h"
#include "analysis/detector.h"
#include "unit/diagnosis/planted_detector_helpers.h"
#include "unit/planted/planted_profiles.h"

namespace pypto::testing {
namespace {

constexpr char kDetector[] = "aicpu_fallback";
constexpr TimeNs kDefaultMinDurationNs = 20'000;  // the msprof-analyze threshold
constexpr TimeNs kPlantedAicpuTasks = 16;         // one per layer per step: 4 layers x 4 steps

// ---------------------------------------------------------------- positive
TEST(AicpuFallback, FoundWithOpTypeCountAndTime) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.aicpu_us = 60;
  PlantedFacts facts;
  DiagnosticReport r = RunPlanted(k, &facts);
  const Issue* i = FindIssue(r, IssueType::kAicpuFallback);
  ASSERT_NE(i, nullptr) << Describe(r);
  EXPECT_EQ(i->op_type, "NonZero");
  EXPECT_EQ(i->evidence.count, facts.aicpu_tasks);
  EXPECT_EQ(facts.aicpu_tasks, uint64_t(kPlantedAicpuTasks));
  EXPECT_EQ(i->evidence.total_ns, kPlantedAicpuTasks * 60'000);
  // Measured: each task's time above the 20 us an AI Core kernel may take.
  EXPECT_EQ(i->method, SavingMethod::kMeasuredGap);
  EXPECT_EQ(i->saved_ns, kPlantedAicpuTasks * (60'000 - kDefaultMinDurationNs));
  EXPECT_GT(i->saved_ns, 0);
  // NonZero has a data-dependent output shape: only an AI CPU kernel exists.
  EXPECT_NE(i->detail.find("data-dependent"), std::string::npos) << i->detail;
}

TEST(AicpuFallback, SavingGrowsWithStrength) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.aicpu_us = 40;
  k.aicpu_op_type = "Cast";
  k.aicpu_dtype = "DOUBLE";
  DiagnosticReport weak = RunPlanted(k);
  k.aicpu_us = 200;
  DiagnosticReport strong = RunPlanted(k);
  const Issue* a = FindIssue(weak, IssueType::kAicpuFallback);
  const Issue* b = FindIssue(strong, IssueType::kAicpuFallback);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->detail.find("DOUBLE"), std::string::npos);  // the dtype that has no AI Core kernel is named
  EXPECT_LT(a->saved_ns, b->saved_ns);
  EXPECT_LE(a->severity, b->severity);
  EXPECT_LT(a->affected_share, b->affected_share);
}

// ---------------------------------------------------------------- negative
// The healthy decoder runs every op on the AI Core / AI Vector core.
TEST(AicpuFallback, HealthyProfileHasNoIssue) {
  for (PlantedFlavor f : {PlantedFlavor::kAscend, PlantedFlavor::kKinetoCuda}) {
    DiagnosticReport r = DiagnoseOnly(BuildPlantedProfile(HealthyKnobs(f)), kDetector);
    EXPECT_TRUE(r.issues.empty()) << FlavorName(f) << "\n" << Describe(r);
  }
}

TEST(AicpuFallback, ShortTasksUnderTwentyMicrosecondsAreNotIssues) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.aicpu_us = 15;
  DiagnosticReport r = RunPlanted(k);
  EXPECT_EQ(FindIssue(r, IssueType::kAicpuFallback), nullptr) << Describe(r);
}

// ---------------------------------------------------------------- threshold
// aicpu_fallback.min_duration_us moves the cut: 15 us tasks become issues at
// 10 us (saving 5 us each), 60 us tasks stop being issues at 100 us.
TEST(AicpuFallback, MinDurationParameterMovesTheCut) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.aicpu_us = 15;
  Profile short_tasks = BuildPlantedProfile(k);
  EXPECT_TRUE(DiagnoseOnly(short_tasks, kDetector).issues.empty());
  DiagnosticReport lowered = DiagnoseOnly(short_tasks, kDetector, {{"aicpu_fallback.min_duration_us", 10}});
  const Issue* i = FindIssue(lowered, IssueType::kAicpuFallback);
  ASSERT_NE(i, nullptr) << Describe(lowered);
  EXPECT_EQ(i->evidence.count, uint64_t(kPlantedAicpuTasks));
  EXPECT_EQ(i->saved_ns, kPlantedAicpuTasks * (15'000 - 10'000));

  k.aicpu_us = 60;
  Profile long_tasks = BuildPlantedProfile(k);
  EXPECT_NE(FindIssue(DiagnoseOnly(long_tasks, kDetector), IssueType::kAicpuFallback), nullptr);
  DiagnosticReport raised = DiagnoseOnly(long_tasks, kDetector, {{"aicpu_fallback.min_duration_us", 100}});
  EXPECT_TRUE(raised.issues.empty()) << Describe(raised);
  // The tasks under the cut are counted in a note, not dropped silently.
  EXPECT_TRUE(HasNoteContaining(raised, "16 AI_CPU task(s) at or under 100 us")) << Describe(raised);
}

// ---------------------------------------------------------------- degraded
// Without core types (a CUDA trace, or Ascend rows that lost their Task Type)
// the AI CPU tasks cannot be told apart: a note, no issue.
TEST(AicpuFallback, NoCoreTypesGivesANoteAndNoIssue) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.aicpu_us = 60;
  Profile p = BuildPlantedProfile(k);
  for (StrId& core : p.device_tasks.core_type) core = kEmptyStr;
  DiagnosticReport r = DiagnoseOnly(p, kDetector);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "no Ascend core types")) << Describe(r);

  DiagnosticReport cuda = DiagnoseOnly(BuildPlantedProfile(HealthyKnobs(PlantedFlavor::kKinetoCuda)), kDetector);
  EXPECT_TRUE(cuda.issues.empty());
  EXPECT_TRUE(HasNoteContaining(cuda, "no Ascend core types")) << Describe(cuda);
}

// ---------------------------------------------------------------- real fixtures
TEST(AicpuFallbackFixtures, Gpt3OpSummaryAicpuCastsOnly) {
  // Raw CSV: Task Type AI_CPU rows are trans_Cast_5 (72.1612 us) and
  // trans_Cast_15 (72.8611 us), both OP Type Cast with INT32 inputs, i.e. over
  // the 20 us threshold. NonZero rows are MIX_AIV (6.1-6.7 us), not AI CPU.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/msprof_op_summary_gpt3_memoryl0/op_summary_1.csv", {kDetector});
  auto aicpu = IssuesOf(r, IssueType::kAicpuFallback);
  ASSERT_EQ(aicpu.size(), 1u);
  EXPECT_EQ(aicpu[0]->op_type, "Cast");
  EXPECT_EQ(aicpu[0]->evidence.count, 2u);
  EXPECT_NEAR(double(aicpu[0]->evidence.total_ns), 145022.3, 2.0);
  EXPECT_NEAR(double(aicpu[0]->saved_ns), 145022.3 - 2 * kDefaultMinDurationNs, 2.0);
  EXPECT_NE(aicpu[0]->detail.find("INT32"), std::string::npos);
}

TEST(AicpuFallbackFixtures, ListedUnderTheOnePercentCutoff) {
  // The same two Cast tasks (145.0 us) are 0.4 % of the file's 37.2 ms of
  // device time, under the 1 % share that drops other findings. With the
  // default options an AI CPU fallback is still listed.
  DiagnoseOptions defaults;
  auto r = DiagnosePath(std::string(PYPTO_FIXTURES_DIR) + "/ascend/msprof_op_summary_gpt3_memoryl0/op_summary_1.csv",
                        defaults);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto aicpu = IssuesOf(*r, IssueType::kAicpuFallback);
  ASSERT_EQ(aicpu.size(), 1u) << Describe(*r);
  EXPECT_LT(aicpu[0]->affected_share, defaults.min_issue_share);
  EXPECT_EQ(aicpu[0]->op_type, "Cast");
}

TEST(AicpuFallbackFixtures, TraceViewTwoAicpuCasts) {
  // Raw JSON: two Ascend Hardware tasks with Task Type AI_CPU:
  // aclnnReduceSum_CastAiCpu_Cast 188.148 us and aclnnCast_CastAiCpu_Cast 139.419 us.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_trace_view_2024/trace_view.json", {kDetector});
  auto aicpu = IssuesOf(r, IssueType::kAicpuFallback);
  ASSERT_EQ(aicpu.size(), 2u);
  const Issue* reduce = FindIssueByOp(r, IssueType::kAicpuFallback, "aclnnReduceSum_CastAiCpu_Cast");
  const Issue* cast = FindIssueByOp(r, IssueType::kAicpuFallback, "aclnnCast_CastAiCpu_Cast");
  ASSERT_TRUE(reduce && cast);
  EXPECT_NEAR(double(reduce->evidence.total_ns), 188148.0, 2.0);
  EXPECT_NEAR(double(cast->evidence.total_ns), 139419.0, 2.0);
}

TEST(AicpuFallbackFixtures, NoAicpuCoreTypeNoIssue) {
  // Level2 LLM kernel_details: no AI_CPU core type in the file. HF Qwen on H100:
  // a CUDA trace has no Ascend core types at all.
  EXPECT_TRUE(IssuesOf(DiagnoseFixtureOnly("ascend/pta_level2_llm_cann83", {kDetector}), IssueType::kAicpuFallback)
                  .empty());
  EXPECT_TRUE(DiagnoseFixtureOnly(
                  "kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
                  {kDetector})
                  .issues.empty());
}

}  // namespace
}  // namespace pypto::testing
