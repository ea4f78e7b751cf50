#include <gtest/gtest.h>

#include "session/profile_session.h"
#include "analysis/detector.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"

namespace pypto {
namespace {

const Issue* Find(const DiagnosticReport& r, IssueType t) {
  for (const Issue& i : r.issues)
    if (i.type == t) return &i;
  return nullptr;
}

DiagnosticReport RunCase(double eff, int64_t n) {
  testing::DecodeSpec s;
  s.odd_n = n;
  s.odd_efficiency = eff;
  Profile p = testing::BuildDecodeProfile(s);
  DiagnoseOptions o = testing::TestOptions();
  o.only = {"matmul_tiling"};
  o.min_issue_share = 0;
  return *Diagnose(p, o);
}

TEST(MatmulTiling, OddNBelowThresholdIsFoundWithItsShape) {
  DiagnosticReport r = RunCase(0.25, 1001);
  const Issue* i = Find(r, IssueType::kMatmulTiling);
  ASSERT_NE(i, nullptr);
  EXPECT_NE(i->detail.find("N=1001 not a multiple of the 8-element MMA granule"), std::string::npos) << i->detail;
  ASSERT_EQ(i->evidence.shapes.size(), 1u);
  EXPECT_EQ(i->evidence.shapes[0], "[[1, 4096], [4096, 1001]]");
  EXPECT_EQ(i->evidence.count, 3u);  // one per step
  EXPECT_NEAR(i->compute_ratio, 0.25, 0.02);
  EXPECT_EQ(i->method, SavingMethod::kRoofline);
  // measured = roof / 0.25, target = roof / 0.6: saving = measured x (1 - 0.25/0.6).
  EXPECT_NEAR(double(i->saved_ns) / double(i->affected_ns), 1 - 0.25 / 0.6, 0.02);
  EXPECT_EQ(r.issues.size(), 1u);  // the aligned GEMMs at 0.8 are fine
}

TEST(MatmulTiling, SeverityAndSavingTrackStrength) {
  DiagnosticReport weak = RunCase(0.5, 1001), strong = RunCase(0.1, 1001);
  const Issue* w = Find(weak, IssueType::kMatmulTiling);
  const Issue* s = Find(strong, IssueType::kMatmulTiling);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_GT(s->saved_ns, w->saved_ns);
  EXPECT_GT(s->affected_share, w->affected_share);
  EXPECT_GE(s->severity, w->severity);
}

TEST(MatmulTiling, AlignedOrFastGemmIsNotAnIssue) {
  EXPECT_EQ(Find(RunCase(0.25, 1024), IssueType::kMatmulTiling), nullptr);  // slow but no shape cause: a note
  EXPECT_EQ(Find(RunCase(0.9, 1001), IssueType::kMatmulTiling), nullptr);   // odd but efficient
}

}  // namespace
}  // namespace pypto

namespace pypto {
namespace {

TEST(MatmulTilingFixtures, FlashAttentionFarBelowItsComputeRooflineWithoutCause) {
  // msprof op_summary (gpt3, CANN memory level 0): FlashAttentionScore rows of
  // 6969.308, 7119.9688 and 7023.5739 us (a 4th row is cut: no duration), Block
  // Dim 24 (-> 910B2, 353.9 TFLOP/s bf16), inputs 8192,2,640 with a 1,1,8192,8192
  // mask: SBH, so 4 * B * S_q * S_kv * H = 4 * 2 * 8192^2 * 640 = 3.436e11 FLOP,
  // 970.9 us at the peak: 14 % of it, every length >= 1024, head_dim unknown
  // (no softmax_max): reported with no cause visible. Saving: each row brought
  // to roofline / 0.6 = 1618.2 us: 21112.85 - 3 x 1618.2 = 16258 us.
  DiagnoseOptions o;
  o.only = {"matmul_tiling"};
  auto r = DiagnosePath(std::string(PYPTO_FIXTURES_DIR) + "/ascend/msprof_op_summary_gpt3_memoryl0", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Issue* fa = Find(*r, IssueType::kMatmulTiling);
  ASSERT_NE(fa, nullptr);
  EXPECT_EQ(fa->op_name, "FlashAttentionScore");
  EXPECT_EQ(fa->evidence.count, 3u);
  EXPECT_EQ(fa->affected_ns, 21112851);
  const double floor_us = 4.0 * 2 * 8192.0 * 8192.0 * 640 / 353.9e12 * 1e6;
  EXPECT_NEAR(fa->compute_ratio, 3 * floor_us / 21112.851, 0.005);
  EXPECT_NEAR(double(fa->saved_ns) / 1e3, 21112.851 - 3 * floor_us / 0.6, 2.0);
  EXPECT_NE(fa->detail.find("no alignment cause visible"), std::string::npos) << fa->detail;
}

}  // namespace
}  // namespace pypto
