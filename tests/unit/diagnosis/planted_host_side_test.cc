// Planted host-side anti-patterns (detectors 3-5) in the synthetic decode profile.
#include <gtest/gtest.h>

#include "analysis/detector.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"

namespace pypto {
namespace {

DiagnosticReport RunSpec(const testing::DecodeSpec& s, const char* only) {
  Profile p = testing::BuildDecodeProfile(s);
  DiagnoseOptions o = testing::TestOptions();
  o.only = {only};
  o.min_issue_share = 0;
  return *Diagnose(p, o);
}

TEST(KvCacheLayout, CatGrownCacheFeedingAttentionIsFound) {
  testing::DecodeSpec s;
  s.kv_cat = true;
  DiagnosticReport r = RunSpec(s, "kv_cache_layout");
  ASSERT_EQ(r.issues.size(), 1u);
  const Issue& i = r.issues[0];
  EXPECT_EQ(i.op_name, "aten::cat");
  EXPECT_EQ(i.evidence.count, 24u);  // K and V x 4 layers x 3 steps
  // Cache [1,32,1023..1025,128] bf16: 2 x bytes per call.
  double expected = 0;
  for (int step = 0; step < 3; ++step) expected += 8 * 2.0 * 32 * (1023 + step) * 128 * 2;
  for (const Metric& m : i.evidence.metrics)
    if (m.name == "needless_bytes_total") EXPECT_DOUBLE_EQ(m.value, expected);
  EXPECT_NE(i.detail.find("1023 -> 1025"), std::string::npos) << i.detail;
  EXPECT_TRUE(RunSpec(testing::DecodeSpec{}, "kv_cache_layout").issues.empty());
}

TEST(NormLaunchOverhead, HostDelayBeforeNormKernelsIsFound) {
  testing::DecodeSpec weak, strong;
  weak.norm_host_delay_ns = 300'000;  // must exceed the device's queue lag (~100 us per layer)
  strong.norm_host_delay_ns = 1'000'000;
  DiagnosticReport rw = RunSpec(weak, "norm_launch_overhead"), rs = RunSpec(strong, "norm_launch_overhead");
  ASSERT_EQ(rw.issues.size(), 1u);
  ASSERT_EQ(rs.issues.size(), 1u);
  EXPECT_EQ(rs.issues[0].op_name, "rmsnorm_kernel_bf16");
  EXPECT_EQ(rs.issues[0].evidence.count, 24u);
  EXPECT_GT(rs.issues[0].saved_ns, rw.issues[0].saved_ns);
  EXPECT_TRUE(RunSpec(testing::DecodeSpec{}, "norm_launch_overhead").issues.empty());
}

TEST(HostBound, SlowLaunchesMakeTheDeviceIdle) {
  testing::DecodeSpec s;
  s.launch_cost_ns = 60'000;
  DiagnosticReport r = RunSpec(s, "host_bound");
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_GT(r.issues[0].affected_share, 0.10);
  EXPECT_EQ(r.issues[0].severity, Severity::kHigh);
  EXPECT_EQ(r.issues[0].method, SavingMethod::kMeasuredGap);
  EXPECT_TRUE(RunSpec(testing::DecodeSpec{}, "host_bound").issues.empty());
}

}  // namespace
}  // namespace pypto
