// Detector 9 (no_pipe_bound): long Ascend ops (> 20 us) that saturate no pipe
// at all (every aic_*/aiv_* PipeUtilization ratio <= 0.8, msprof-analyze
// operator_bound_checker).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "analysis/detector.h"
#include "unit/diagnosis/planted_detector_helpers.h"
#include "unit/planted/planted_profiles.h"

namespace pypto::testing {
namespace {

constexpr char kDetector[] = "no_pipe_bound";
constexpr double kOperatorBoundRatio = 0.8;  // msprof-analyze config.ini operator_bound_ratio
constexpr double kPlantedBusiestPipe = 0.45;  // the planted Tile's aiv_mte2_ratio, its highest
constexpr uint64_t kPlantedTiles = 16;        // one per layer per step: 4 layers x 4 steps

void StripPmu(Profile* p) {
  AttributeTable kept;
  const AttributeTable& a = p->attributes;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string_view key = p->Str(a.key(i));
    const bool pmu = (key.starts_with("aic_") || key.starts_with("aiv_")) && key.ends_with("_ratio");
    if (!pmu) kept.Add(a.owner_kind(i), a.owner(i), a.key(i), a.text(i), a.number(i), a.number_text_form(i));
  }
  p->attributes = std::move(kept);
}

// ---------------------------------------------------------------- positive
TEST(NoPipeBound, TileWithAllRatiosLowIsFound) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.no_pipe_us = 50;
  PlantedFacts facts;
  DiagnosticReport r = RunPlanted(k, &facts);
  const Issue* i = FindIssue(r, IssueType::kNoPipeBound);
  ASSERT_NE(i, nullptr) << Describe(r);
  EXPECT_EQ(i->op_type, "Tile");
  EXPECT_EQ(facts.no_pipe_tasks, kPlantedTiles);
  EXPECT_EQ(i->evidence.count, facts.no_pipe_tasks);
  // Amdahl: bound by its busiest pipe at 0.8 the op would take 0.45 / 0.8 of its time.
  EXPECT_EQ(i->method, SavingMethod::kAmdahl);
  EXPECT_NEAR(double(i->saved_ns), kPlantedTiles * 50'000 * (1 - kPlantedBusiestPipe / kOperatorBoundRatio), 16.0);
  EXPECT_GT(i->saved_ns, 0);
  // The healthy ops (some pipe at 0.85) are bound: the Tile is the only finding.
  for (const Issue& other : r.issues) EXPECT_EQ(other.type == IssueType::kNoPipeBound, &other == i) << Describe(r);
}

TEST(NoPipeBound, SavingGrowsWithDuration) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.no_pipe_us = 30;
  const DiagnosticReport shorter = RunPlanted(k);
  k.no_pipe_us = 300;
  const DiagnosticReport longer = RunPlanted(k);
  const Issue* a = FindIssue(shorter, IssueType::kNoPipeBound);
  const Issue* b = FindIssue(longer, IssueType::kNoPipeBound);
  ASSERT_TRUE(a && b) << Describe(shorter) << Describe(longer);
  EXPECT_LT(a->saved_ns, b->saved_ns);
  EXPECT_LE(a->severity, b->severity);
}

TEST(NoPipeBound, BadMatmulIsAlsoBoundByNoPipe) {
  // The badly tiled MatMul (all ratios divided by the slowdown) is, by the MPA
  // rule, an op bound by no pipe as well.
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.bad_matmul_slowdown = 3;
  DiagnosticReport r = RunPlanted(k);
  const Issue* i = FindIssue(r, IssueType::kNoPipeBound);
  ASSERT_NE(i, nullptr) << Describe(r);
  EXPECT_EQ(i->op_type, "MatMulV2");
}

// The attribute index takes each task's rows as one run when the importer wrote them so, else a CSR:
// the same attributes in another row order (sorted by key, so each task's rows are scattered) give the
// same finding.
TEST(NoPipeBound, AttributesScatteredOverTheTableGiveTheSameFinding) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.no_pipe_us = 50;
  Profile in_runs = BuildPlantedProfile(k);
  Profile scattered = BuildPlantedProfile(k);
  const AttributeTable& a = scattered.attributes;
  std::vector<size_t> order(a.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return a.key(x) < a.key(y); });
  AttributeTable by_key;
  for (size_t i : order) by_key.Add(a.owner_kind(i), a.owner(i), a.key(i), a.text(i), a.number(i), a.number_text_form(i));
  scattered.attributes = std::move(by_key);
  const DiagnosticReport runs = DiagnoseOnly(std::move(in_runs), kDetector);
  const DiagnosticReport csr = DiagnoseOnly(std::move(scattered), kDetector);
  const Issue* a_issue = FindIssue(runs, IssueType::kNoPipeBound);
  const Issue* b_issue = FindIssue(csr, IssueType::kNoPipeBound);
  ASSERT_TRUE(a_issue && b_issue) << Describe(runs) << Describe(csr);
  EXPECT_EQ(a_issue->saved_ns, b_issue->saved_ns);
  EXPECT_EQ(a_issue->evidence.count, kPlantedTiles);
  EXPECT_EQ(b_issue->evidence.count, kPlantedTiles);
}

// ---------------------------------------------------------------- negative
// Healthy Ascend ops have some pipe at 0.85 (> 0.8).
TEST(NoPipeBound, HealthyProfileHasNoIssue) {
  DiagnosticReport r = DiagnoseOnly(BuildPlantedProfile(HealthyKnobs(PlantedFlavor::kAscend)), kDetector);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
}

TEST(NoPipeBound, ShortTilesAreNotIssues) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.no_pipe_us = 20;  // not more than 20 µs
  DiagnosticReport r = RunPlanted(k);
  EXPECT_EQ(FindIssue(r, IssueType::kNoPipeBound), nullptr) << Describe(r);
}

// ---------------------------------------------------------------- threshold
// no_pipe_bound.operator_bound_ratio: at 0.4 the Tile's 0.45 pipe counts as
// bound (no issue); no_pipe_bound.min_duration_us: at 60 us the 50 us Tiles
// are too short to judge.
TEST(NoPipeBound, BoundRatioAndMinDurationParametersMoveTheCut) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.no_pipe_us = 50;
  Profile p = BuildPlantedProfile(k);
  EXPECT_NE(FindIssue(DiagnoseOnly(p, kDetector), IssueType::kNoPipeBound), nullptr);
  DiagnosticReport lower_bound = DiagnoseOnly(p, kDetector, {{"no_pipe_bound.operator_bound_ratio", 0.4}});
  EXPECT_TRUE(lower_bound.issues.empty()) << Describe(lower_bound);
  DiagnosticReport longer = DiagnoseOnly(p, kDetector, {{"no_pipe_bound.min_duration_us", 60}});
  EXPECT_TRUE(longer.issues.empty()) << Describe(longer);
  // A higher bound ratio leaves the Tile an issue with a larger saving: 1 - 0.45/0.9 > 1 - 0.45/0.8.
  DiagnosticReport higher_bound = DiagnoseOnly(p, kDetector, {{"no_pipe_bound.operator_bound_ratio", 0.9}});
  const Issue* tile = FindIssueByOp(higher_bound, IssueType::kNoPipeBound, "Tile");
  ASSERT_NE(tile, nullptr) << Describe(higher_bound);
  EXPECT_NEAR(double(tile->saved_ns), kPlantedTiles * 50'000 * (1 - kPlantedBusiestPipe / 0.9), 16.0);
}

// ---------------------------------------------------------------- degraded
// Without PMU ratios the check cannot run: a note, no issue.
TEST(NoPipeBound, NoPmuRatiosGivesANoteAndNoIssue) {
  PlantKnobs k = HealthyKnobs(PlantedFlavor::kAscend);
  k.no_pipe_us = 50;
  Profile p = BuildPlantedProfile(k);
  StripPmu(&p);
  DiagnosticReport r = DiagnoseOnly(p, kDetector);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "no PMU pipe ratios")) << Describe(r);
}

// ---------------------------------------------------------------- real fixtures
TEST(NoPipeBoundFixtures, Level2LlmOpsBoundByNoPipe) {
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_level2_llm_cann83", {kDetector});
  // Raw CSV: FlashAttentionScoreGrad rows over 20 us whose aic_*/aiv_* pipe
  // ratios are all <= 0.8: 28 rows, 63128.66 us.
  const Issue* fag = FindIssueByOp(r, IssueType::kNoPipeBound, "FlashAttentionScoreGrad");
  ASSERT_NE(fag, nullptr);
  EXPECT_EQ(fag->evidence.count, 28u);
  EXPECT_NEAR(double(fag->affected_ns), 63128660.0, 30.0);
  // Saving: sum over the 28 rows of Duration x (1 - max ratio / 0.8), the max
  // over every pipe column the CSV has (aic_mac, scalar, mte1, mte2, fixpipe,
  // aiv_vec, scalar, mte2, mte3): 6831.84 us (python csv over the raw rows).
  // Leaving aic_fixpipe_ratio out would give 22957.44 us, 3.4x too much.
  EXPECT_NEAR(double(fag->saved_ns) / 1e3, 6831.84, 0.5);
  // Same script: RmsNormGrad 112, RmsNorm 83, RotaryPositionEmbedding(Grad) 56 each, MatMulV3 40.
  const std::pair<const char*, uint64_t> counts[] = {{"RmsNormGrad", 112}, {"RmsNorm", 83},
                                                     {"RotaryPositionEmbedding", 56},
                                                     {"RotaryPositionEmbeddingGrad", 56}, {"MatMulV3", 40}};
  for (auto [op, n] : counts) {
    const Issue* i = FindIssueByOp(r, IssueType::kNoPipeBound, op);
    ASSERT_NE(i, nullptr) << op;
    EXPECT_EQ(i->evidence.count, n) << op;
  }
  // RmsNormGrad runs on MIX_AIV with aic_mac_ratio 0: its compute is the
  // vector pipe. Duration-weighted over the 112 rows: aiv_vec_ratio 0.537,
  // aiv_mte2_ratio 0.207 (same script).
  const Issue* norm = FindIssueByOp(r, IssueType::kNoPipeBound, "RmsNormGrad");
  ASSERT_NE(norm, nullptr);
  EXPECT_NEAR(norm->compute_ratio, 0.537, 0.002);
  EXPECT_NEAR(norm->memory_ratio, 0.207, 0.002);
  EXPECT_NE(norm->detail.find("pipes: aiv_vec_ratio 0.54"), std::string::npos) << norm->detail;
}

TEST(NoPipeBoundFixtures, NoPipeRatiosInTheDataOnlyANote) {
  // MemoryL0 metrics: no pipe ratios -> no_pipe_bound is skipped with a note.
  DiagnosticReport gpt3 = DiagnoseFixtureOnly("ascend/msprof_op_summary_gpt3_memoryl0/op_summary_1.csv", {kDetector});
  EXPECT_TRUE(IssuesOf(gpt3, IssueType::kNoPipeBound).empty());
  bool noted = false;
  for (const std::string& n : gpt3.notes) noted |= n.starts_with("no_pipe_bound: no PMU");
  EXPECT_TRUE(noted) << Describe(gpt3);
  // No PMU columns in a trace_view-only run, nor in a CUDA trace.
  EXPECT_TRUE(IssuesOf(DiagnoseFixtureOnly("ascend/pta_trace_view_2024/trace_view.json", {kDetector}),
                       IssueType::kNoPipeBound)
                  .empty());
  EXPECT_TRUE(DiagnoseFixtureOnly(
                  "kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
                  {kDetector})
                  .issues.empty());
}

}  // namespace
}  // namespace pypto::testing
