// Detector 4 (norm_launch_overhead) on the synthetic decode profile: host delay before norm launches.
#include <gtest/gtest.h>

#include "analysis/detector.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"

namespace pypto {
namespace {

using testing::RunSpec;

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

}  // namespace
}  // namespace pypto
