// Detector 2 (attention_memory_bound) on the synthetic decode profile: decode
// attention is reported when it is memory-bound AND leaves time against the
// roofline of what it must read; one streaming near the bandwidth is healthy.
#include <gtest/gtest.h>

#include <cmath>

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

double MetricOf(const Issue& i, const char* name) {
  for (const Metric& m : i.evidence.metrics)
    if (m.name == name) return m.value;
  return std::nan("");
}

TEST(AttentionMemoryBound, DecodeAttentionWellBelowBandwidthIsFound) {
  DiagnosticReport r;
  const Issue* i = RunCase(0.3, &r);  // reads its KV cache at 30% of the H100's bandwidth
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->op_name, "flash_fwd_splitkv_kernel");
  EXPECT_EQ(i->phase, "decode");
  EXPECT_NEAR(i->memory_ratio, 0.3, 0.03);
  EXPECT_EQ(i->evidence.count, 12u);  // 4 layers x 3 steps, one group per kernel name
  EXPECT_NE(i->detail.find("achieved bandwidth 30% of peak"), std::string::npos) << i->detail;
  // Decode attention: the memory term is (almost) all of its roofline.
  EXPECT_GT(MetricOf(*i, "roofline_memory_share"), 0.9);
  // Saving = measured - roofline of the bytes read = measured x (1 - 0.3).
  EXPECT_EQ(i->method, SavingMethod::kRoofline);
  EXPECT_NEAR(double(i->saved_ns) / double(i->affected_ns), 0.7, 0.02);
}

TEST(AttentionMemoryBound, StreamingNearTheBandwidthRooflineIsNotAnIssue) {
  DiagnosticReport r;
  EXPECT_EQ(RunCase(0.85, &r), nullptr);  // the healthy default
  EXPECT_EQ(RunCase(0.9, &r), nullptr);
  EXPECT_EQ(RunCase(0.75, &r), nullptr);  // above the 0.7 floor
}

TEST(AttentionMemoryBound, SavingAndSeverityTrackStrength) {
  DiagnosticReport rw, rs;
  const Issue* w = RunCase(0.5, &rw);
  const Issue* s = RunCase(0.15, &rs);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_GT(s->saved_ns, w->saved_ns);
  EXPECT_GT(s->affected_share, w->affected_share);
  EXPECT_GE(s->severity, w->severity);
}

}  // namespace
}  // namespace pypto
