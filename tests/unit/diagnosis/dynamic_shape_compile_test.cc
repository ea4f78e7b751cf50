// Detector 7 (dynamic_shape_compile): operators compiled online while the
// model runs (msprof-analyze dispatch rule: >= 20 aclopCompileAndExecute
// calls) or kernel_details OP State with no static operator at all.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "analysis/detector.h"
#include "unit/diagnosis/planted_detector_helpers.h"
#include "unit/planted/planted_profiles.h"

namespace pypto::testing {
namespace {

constexpr char kDetector[] = "dynamic_shape_compile";
constexpr int kDecodeSteps = 4;                 // HealthyKnobs: 4 decode steps
constexpr double kPlantedCompileUs = 300.0;     // PlantKnobs::compile_us default
constexpr double kPlantedHostOpUs = 5.0;        // PlantKnobs::host_op_us: the launch inside the compile call

// Drops the kernel_details "OP State" column of every task.
void StripOpState(Profile* p) {
  AttributeTable kept;
  const AttributeTable& a = p->attributes;
  for (size_t i = 0; i < a.size(); ++i)
    if (p->Str(a.key(i)) != "OP State") kept.Add(a.owner_kind(i), a.owner(i), a.key(i), a.text(i), a.number(i), a.number_text_form(i));
  p->attributes = std::move(kept);
}

// ---------------------------------------------------------------- positive
TEST(DynamicShapeCompile, TwentyOrMoreCompileCallsAreFound) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.compile_calls_per_step = 6;  // 24 calls over 4 steps
  PlantedFacts facts;
  DiagnosticReport r = RunPlanted(k, &facts);
  EXPECT_EQ(facts.compile_calls, 24u);
  const Issue* i = FindIssue(r, IssueType::kDynamicShapeCompile);
  ASSERT_NE(i, nullptr) << Describe(r);
  EXPECT_EQ(i->op_type, "aclopCompileAndExecute");
  EXPECT_EQ(i->evidence.count, 24u);
  // Measured: the host time inside the compile calls (compile + the launch it wraps).
  EXPECT_EQ(i->method, SavingMethod::kMeasuredGap);
  EXPECT_EQ(i->saved_ns, 24 * TimeNs((kPlantedCompileUs + kPlantedHostOpUs) * 1000));
  EXPECT_GT(i->saved_ns, 0);
  // The issue names the operator the calls were made under (the compiled ops
  // are the first ops of each step).
  EXPECT_FALSE(i->op_name.empty());
}

TEST(DynamicShapeCompile, AllOpsDynamicIsANoteWithoutAMeasuredCost) {
  // Every kernel's OP State is "dynamic" (the msprof-analyze rule), but the
  // profile has no online compile call: the host tiling cost of dynamic
  // kernels is not in it. A finding would claim 0 us at high severity; it is
  // a note naming the count.
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.all_ops_dynamic = true;
  PlantedFacts facts;
  DiagnosticReport r = RunPlanted(k, &facts);
  EXPECT_EQ(FindIssue(r, IssueType::kDynamicShapeCompile), nullptr) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "all " + std::to_string(facts.kernels) + " tasks with an OP State are dynamic"))
      << Describe(r);
}

TEST(DynamicShapeCompile, SeverityGrowsWithCalls) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.compile_calls_per_step = 5;
  const DiagnosticReport fewer = RunPlanted(k);
  k.compile_calls_per_step = 20;
  const DiagnosticReport more = RunPlanted(k);
  const Issue* a = FindIssue(fewer, IssueType::kDynamicShapeCompile);
  const Issue* b = FindIssue(more, IssueType::kDynamicShapeCompile);
  ASSERT_TRUE(a && b) << Describe(fewer) << Describe(more);
  EXPECT_LT(a->saved_ns, b->saved_ns);
  EXPECT_LE(a->severity, b->severity);
}

// ---------------------------------------------------------------- negative
// Healthy: no compile call, every Ascend task "static"; CUDA has neither.
TEST(DynamicShapeCompile, HealthyProfileHasNoIssue) {
  for (PlantedFlavor f : {PlantedFlavor::kAscend, PlantedFlavor::kKinetoCuda}) {
    DiagnosticReport r = DiagnoseOnly(BuildPlantedProfile(HealthyKnobs(f)), kDetector);
    EXPECT_TRUE(r.issues.empty()) << FlavorName(f) << "\n" << Describe(r);
  }
}

TEST(DynamicShapeCompile, UnderTwentyCallsOnlyNote) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.compile_calls_per_step = 4;  // 16 < 20
  DiagnosticReport r = RunPlanted(k);
  EXPECT_EQ(FindIssue(r, IssueType::kDynamicShapeCompile), nullptr) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "16 aclopCompileAndExecute call(s)")) << Describe(r);
}

// ---------------------------------------------------------------- threshold
// dynamic_shape_compile.max_op_compile_num: 16 calls are an issue at 10, 24
// calls are only a note at 30.
TEST(DynamicShapeCompile, MaxOpCompileNumParameterMovesTheCut) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.compile_calls_per_step = 4;
  Profile sixteen = BuildPlantedProfile(k);
  EXPECT_TRUE(DiagnoseOnly(sixteen, kDetector).issues.empty());
  DiagnosticReport lowered = DiagnoseOnly(sixteen, kDetector, {{"dynamic_shape_compile.max_op_compile_num", 10}});
  const Issue* i = FindIssue(lowered, IssueType::kDynamicShapeCompile);
  ASSERT_NE(i, nullptr) << Describe(lowered);
  EXPECT_EQ(i->evidence.count, uint64_t(4 * kDecodeSteps));

  k.compile_calls_per_step = 6;
  Profile twenty_four = BuildPlantedProfile(k);
  EXPECT_NE(FindIssue(DiagnoseOnly(twenty_four, kDetector), IssueType::kDynamicShapeCompile), nullptr);
  DiagnosticReport raised = DiagnoseOnly(twenty_four, kDetector, {{"dynamic_shape_compile.max_op_compile_num", 30}});
  EXPECT_TRUE(raised.issues.empty()) << Describe(raised);
  EXPECT_TRUE(HasNoteContaining(raised, "24 aclopCompileAndExecute call(s)")) << Describe(raised);
}

// ---------------------------------------------------------------- degraded
// Without the OP State column and without compile calls there is nothing to
// read: a note, no issue (not a guess from the op names).
TEST(DynamicShapeCompile, NoOpStateAndNoCompileCallsGivesANote) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.all_ops_dynamic = true;
  Profile p = BuildPlantedProfile(k);
  StripOpState(&p);
  DiagnosticReport r = DiagnoseOnly(p, kDetector);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "no OP State column and no compile calls")) << Describe(r);
}

// ---------------------------------------------------------------- real fixtures
TEST(DynamicShapeCompileFixtures, TraceViewElevenCompileCallsOnlyNote) {
  // Raw JSON: 11 AscendCL@aclopCompileAndExecute events, all inside
  // ProfilerStep#1: under MAX_OP_COMPILE_NUM 20 -> no issue, a note.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_trace_view_2024/trace_view.json", {kDetector});
  EXPECT_TRUE(IssuesOf(r, IssueType::kDynamicShapeCompile).empty());
  EXPECT_TRUE(HasNoteContaining(r, "11 aclopCompileAndExecute")) << Describe(r);
}

TEST(DynamicShapeCompileFixtures, Level2LlmNoStaticOperatorIsANote) {
  // Raw CSV OP State: dynamic 2448, N/A 15, static 0 -> MPA "no static
  // operator"; no compile call in the file, so no measured cost: a note.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_level2_llm_cann83", {kDetector});
  EXPECT_TRUE(IssuesOf(r, IssueType::kDynamicShapeCompile).empty()) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "all 2448 tasks with an OP State are dynamic")) << Describe(r);
}

TEST(DynamicShapeCompileFixtures, NewCannOpSummaryMixedOpStateIsOnlyANote) {
  // Raw CSV: OP State 12 dynamic, 3 static -> the MPA rule (no static op) does not hold.
  DiagnosticReport r =
      DiagnoseFixtureOnly("ascend/msprof_op_summary_blocknum_newcann/a003-op_summary.csv", {kDetector});
  EXPECT_TRUE(IssuesOf(r, IssueType::kDynamicShapeCompile).empty());
  EXPECT_TRUE(HasNoteContaining(r, "12 dynamic and 3 static")) << Describe(r);
}

TEST(DynamicShapeCompileFixtures, NoOpStateNoCompileCallsNothingToClaim) {
  // No OP State column in this op_summary and no host trace: nothing to claim.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/msprof_op_summary_gpt3_memoryl0/op_summary_1.csv", {kDetector});
  EXPECT_TRUE(IssuesOf(r, IssueType::kDynamicShapeCompile).empty());
  // A CUDA trace has neither OP State nor AscendCL compile calls.
  DiagnosticReport qwen = DiagnoseFixtureOnly(
      "kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", {kDetector});
  EXPECT_TRUE(qwen.issues.empty()) << Describe(qwen);
}

}  // namespace
}  // namespace pypto::testing
