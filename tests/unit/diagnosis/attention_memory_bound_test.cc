#include <gtest/gtest.h>

#include "analysis/detector.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"

namespace pypto {
namespace {

const Issue* RunCase(double share, DiagnosticReport* r) {
  testing::DecodeSpec s;
  s.attention_memory_share = share;
  Profile p = testing::BuildDecodeProfile(s);
  DiagnoseOptions o = testing::TestOptions();
  o.only = {"attention_memory_bound"};
  *r = *Diagnose(p, o);
  for (const Issue& i : r->issues)
    if (i.type == IssueType::kAttentionMemoryBound) return &i;
  return nullptr;
}

TEST(AttentionMemoryBound, DecodeAttentionAtHighMemoryShareIsFound) {
  DiagnosticReport r;
  const Issue* i = RunCase(0.9, &r);
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->op_name, "flash_fwd_splitkv_kernel");
  EXPECT_NEAR(i->memory_ratio, 0.9, 0.03);
  EXPECT_EQ(i->evidence.count, 12u);  // 4 layers x 3 steps (shapes differ per step: 3 groups merged? no)
}

TEST(AttentionMemoryBound, BelowThresholdIsNotAnIssue) {
  DiagnosticReport r;
  EXPECT_EQ(RunCase(0.5, &r), nullptr);
}

}  // namespace
}  // namespace pypto
