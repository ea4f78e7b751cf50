// Detector 5 (host_bound) on the synthetic decode profile: slow launches leave the device idle.
#include <gtest/gtest.h>

#include "analysis/detector.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"

namespace pypto {
namespace {

using testing::RunSpec;

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
