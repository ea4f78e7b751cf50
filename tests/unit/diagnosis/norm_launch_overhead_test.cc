// Detector 4 (norm_launch_overhead) on the synthetic decode profile: host delay before norm launches.
#include <gtest/gtest.h>

#include "analysis/detector.h"
#include "unit/diagnosis/diagnosis_test_helpers.h"

namespace pypto {
namespace {

using testing::RunSpec;

TEST(NormLaunchOverhead, HostDelayBeforeFusedNormKernelsIsANoteNotAFinding) {
  // rmsnorm_kernel_bf16 is one fused kernel per layer (24 in the profile):
  // with 1 ms of host delay before each launch the gaps dwarf its execution,
  // but there is nothing to fuse; the idle is dispatch idle, host_bound's.
  testing::DecodeSpec strong;
  strong.norm_host_delay_ns = 1'000'000;
  DiagnosticReport rs = RunSpec(strong, "norm_launch_overhead");
  EXPECT_TRUE(rs.issues.empty());
  bool noted = false;
  for (const std::string& n : rs.notes) noted |= n.find("24 rmsnorm_kernel_bf16 kernel(s) are already fused norms") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_TRUE(RunSpec(testing::DecodeSpec{}, "norm_launch_overhead").issues.empty());
}

}  // namespace
}  // namespace pypto
