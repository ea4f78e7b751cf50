#include <array>
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "analysis/detector.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"
#include "report/diagnosis_report.h"

namespace pypto {
namespace {

using testing::BuildDecodeProfile;
using testing::DecodeSpec;
using testing::TestOptions;

TEST(DiagnosisEngine, HealthyDecodeProfileHasNoIssue) {
  Profile p = BuildDecodeProfile(DecodeSpec{});
  StatusOr<DiagnosticReport> r = Diagnose(p, TestOptions());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const Issue& i : r->issues) ADD_FAILURE() << IssueTypeName(i.type) << " " << i.op_name << ": " << i.detail;
  EXPECT_EQ(r->hardware_id, "H100-SXM");
  EXPECT_EQ(r->step_numbers.size(), 3u);
  EXPECT_DOUBLE_EQ(r->estimated_combined_speedup, 1.0);
  EXPECT_EQ(r->detectors_run.size(), AllDetectors().size());
}

TEST(DiagnosisEngine, RegistryNamesMatchIssueTypes) {
  // The registry is generated from PYPTO_ISSUE_TYPES: one detector per issue
  // type, in enum order, each reporting its own type.
  ASSERT_EQ(AllDetectors().size(), kIssueTypeCount);
  for (size_t i = 0; i < kIssueTypeCount; ++i) {
    const Detector* d = AllDetectors()[i];
    EXPECT_EQ(d->type(), static_cast<IssueType>(i));
    EXPECT_EQ(d->name(), IssueTypeName(d->type()));
    EXPECT_EQ(FindDetector(d->name()), d);
  }
  IssueType t;
  EXPECT_TRUE(IssueTypeFromName("fusible_sequence", &t));
  EXPECT_EQ(t, IssueType::kFusibleSequence);
  EXPECT_FALSE(IssueTypeFromName("nope", &t));
}

TEST(DiagnosisEngine, CombinedSavingTakesTheLargestClaimPerRow) {
  Issue a, b;
  a.savings = {{SavingTargetKind::kDeviceTask, 1, 300}, {SavingTargetKind::kDeviceTask, 2, 100}};
  b.savings = {{SavingTargetKind::kDeviceTask, 1, 200}, {SavingTargetKind::kTaskGap, 1, 50}};
  CombinedSaving c = CombineSavings({a, b}, 1000);
  EXPECT_EQ(c.claimed_ns, 650);
  EXPECT_EQ(c.saved_ns, 300 + 100 + 50);  // task 1 counted once (max), its gap is another target
  EXPECT_DOUBLE_EQ(c.speedup, 1000.0 / 550.0);
  // Never the whole step.
  Issue big;
  big.savings = {{SavingTargetKind::kStepIdle, 0, 5000}};
  EXPECT_EQ(CombineSavings({big}, 1000).saved_ns, 990);
  EXPECT_DOUBLE_EQ(CombineSavings({}, 0).speedup, 1.0);
}

TEST(DiagnosisEngine, SeverityFollowsMsprofAdvisorPriority) {
  EXPECT_EQ(SeverityForShare(0.05), Severity::kHigh);
  EXPECT_EQ(SeverityForShare(0.049), Severity::kMedium);
  EXPECT_EQ(SeverityForShare(0.03), Severity::kMedium);
  EXPECT_EQ(SeverityForShare(0.029), Severity::kLow);
}

TEST(DiagnosisEngine, BadOptionsAndStepsAreErrors) {
  Profile p = BuildDecodeProfile(DecodeSpec{});
  DiagnoseOptions o = TestOptions();
  o.tiling_utilization_threshold = 1.5;
  EXPECT_EQ(Diagnose(p, o).status().code(), StatusCode::kInvalidArgument);
  o = TestOptions();
  o.step = 42;
  EXPECT_EQ(Diagnose(p, o).status().code(), StatusCode::kInvalidArgument);
  o = TestOptions();
  o.hardware_name = "NoSuchChip9000";
  EXPECT_EQ(Diagnose(p, o).status().code(), StatusCode::kInvalidArgument);
  o = TestOptions();
  o.step = 1;
  StatusOr<DiagnosticReport> r = Diagnose(p, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->step_numbers.size(), 1u);
  EXPECT_EQ(r->step_numbers[0], 1);
}

TEST(DiagnosisEngine, TwoIssuesOnTheSameKernelsAreNotCountedTwice) {
  // Slow GEMM with odd N (matmul_tiling) and host-bound launches: both claim
  // time, on different targets; the claimed sum may exceed the combination.
  DecodeSpec s;
  s.odd_n = 1001;
  s.odd_efficiency = 0.2;
  s.launch_cost_ns = 40'000;
  Profile p = BuildDecodeProfile(s);
  StatusOr<DiagnosticReport> r = Diagnose(p, TestOptions());
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->issues.size(), 2u);
  EXPECT_LE(r->estimated_saved_ns, r->claimed_saved_ns);
  EXPECT_LT(r->estimated_saved_ns, r->step_time_ns);
  EXPECT_GT(r->estimated_combined_speedup, 1.0);
  // Sorted: severity first, then saving.
  for (size_t i = 1; i < r->issues.size(); ++i) EXPECT_FALSE(IssueBefore(r->issues[i], r->issues[i - 1]));
  // Renderers carry the figures.
  std::string json = report::RenderDiagnosisJson(*r);
  EXPECT_NE(json.find("\"schema\": \"pypto.diagnose/1\""), std::string::npos);
  EXPECT_NE(json.find("matmul_tiling"), std::string::npos);
  std::string md = report::RenderDiagnosisMarkdown(*r);
  EXPECT_NE(md.find("| matmul_tiling |"), std::string::npos);
  EXPECT_EQ(report::EscapeMarkdown("a|b_c\n"), "a\\|b\\_c ");
}

}  // namespace
}  // namespace pypto

namespace pypto {
namespace {

// TaskAttribute / TaskAttributeText find a task's row by the key's string id:
// the right row of the right task, NaN / "" when the task has no row with
// that key, when the key is interned but on no row, when it was never
// interned, and for a prefix of a key.
TEST(DiagnosisContext, TaskAttributesAreFoundByKeyId) {
  Profile p;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const StrId mac = p.Intern("aic_mac_ratio"), state = p.Intern("OP State");
  p.attributes.Add(OwnerKind::kDeviceTask, 0, mac, kEmptyStr, 0.5);
  p.attributes.Add(OwnerKind::kDeviceTask, 0, state, p.Intern("dynamic"), nan);
  p.attributes.Add(OwnerKind::kDeviceTask, 1, mac, kEmptyStr, 0.25);
  p.Intern("aiv_vec_ratio");  // interned (a host op's name, say), on no attribute row
  DiagnosisContext ctx;
  ctx.profile = &p;
  ctx.attr_begin = {0, 2};  // task 0: rows 0-1, task 1: row 2
  ctx.attr_end = {2, 3};
  EXPECT_EQ(ctx.TaskAttribute(0, "aic_mac_ratio"), 0.5);
  EXPECT_EQ(ctx.TaskAttribute(1, "aic_mac_ratio"), 0.25);
  EXPECT_EQ(ctx.TaskAttributeText(0, "OP State"), "dynamic");
  EXPECT_EQ(ctx.TaskAttributeText(1, "OP State"), "");
  EXPECT_TRUE(std::isnan(ctx.TaskAttribute(1, "OP State")));
  EXPECT_TRUE(std::isnan(ctx.TaskAttribute(0, "aiv_vec_ratio")));
  EXPECT_TRUE(std::isnan(ctx.TaskAttribute(0, "never_written")));
  EXPECT_EQ(ctx.TaskAttributeText(0, "never_written"), "");
  EXPECT_TRUE(std::isnan(ctx.TaskAttribute(0, "aic_mac")));
}

// Keys resolved once (AttributeKey) find what the text lookups find, and
// TaskAttributes reads several keys of a task in one pass: each value is
// the key's first row of that task, NaN where the task has none, whatever
// the order of the keys asked and of the rows written. Expected values are
// the ones written below, task by task.
TEST(DiagnosisContext, SeveralAttributesOfATaskInOnePass) {
  Profile p;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const StrId mac = p.Intern("aic_mac_ratio"), vec = p.Intern("aiv_vec_ratio"), mte2 = p.Intern("aic_mte2_ratio");
  p.attributes.Add(OwnerKind::kDeviceTask, 0, vec, kEmptyStr, 0.75);   // task 0: rows 0-2
  p.attributes.Add(OwnerKind::kDeviceTask, 0, mac, kEmptyStr, 0.5);
  p.attributes.Add(OwnerKind::kDeviceTask, 0, mac, kEmptyStr, 0.125);  // a second mac row: the first counts
  p.attributes.Add(OwnerKind::kDeviceTask, 1, mte2, kEmptyStr, 0.25);  // task 1: row 3
  p.Intern("aic_fixpipe_ratio");                                       // interned, on no row
  DiagnosisContext ctx;
  ctx.profile = &p;
  ctx.attr_begin = {0, 3, 4};  // task 2 has no rows
  ctx.attr_end = {3, 4, 4};
  const std::array<StrId, 5> keys = {ctx.AttributeKey("aic_mte2_ratio"), ctx.AttributeKey("aic_mac_ratio"),
                                     ctx.AttributeKey("never_written"), ctx.AttributeKey("aiv_vec_ratio"),
                                     ctx.AttributeKey("aic_fixpipe_ratio")};
  EXPECT_EQ(keys[1], mac);
  const std::array<double, 5> task0 = ctx.TaskAttributes(0, keys);
  EXPECT_TRUE(std::isnan(task0[0]));
  EXPECT_EQ(task0[1], 0.5);
  EXPECT_TRUE(std::isnan(task0[2]));
  EXPECT_EQ(task0[3], 0.75);
  EXPECT_TRUE(std::isnan(task0[4]));
  const std::array<double, 5> task1 = ctx.TaskAttributes(1, keys);
  EXPECT_EQ(task1[0], 0.25);
  for (size_t i = 1; i < keys.size(); ++i) EXPECT_TRUE(std::isnan(task1[i])) << i;
  for (double v : ctx.TaskAttributes(2, keys)) EXPECT_TRUE(std::isnan(v));
  // The one-key lookups by id agree with those by text, task by task.
  const char* texts[] = {"aic_mte2_ratio", "aic_mac_ratio", "never_written", "aiv_vec_ratio", "aic_fixpipe_ratio"};
  for (uint32_t task = 0; task < 3; ++task) {
    for (size_t i = 0; i < keys.size(); ++i) {
      const double by_id = ctx.TaskAttribute(task, keys[i]), by_text = ctx.TaskAttribute(task, texts[i]);
      EXPECT_EQ(std::isnan(by_id), std::isnan(by_text)) << task << " " << texts[i];
      if (!std::isnan(by_id)) EXPECT_EQ(by_id, by_text) << task << " " << texts[i];
    }
  }
}

}  // namespace
}  // namespace pypto
