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

TEST(NormLaunchOverhead, NormsThatAreAlreadyOneFusedKernelAreNeverFlagged) {
  // The fused norms real profiles launch, one kernel per norm: vLLM's
  // fused_add_rms_norm_kernel, CANN's AddRmsNorm / RmsNorm (aclnn, what
  // torch_npu.npu_rms_norm and npu_add_rms_norm run), aiter's
  // add_rmsnorm_quant_kernel. With 1 ms of host delay before each launch,
  // nothing is flagged: the gaps are dispatch idle (host_bound's).
  for (const char* kernel : {"void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, "
                             "c10::BFloat16 const*, float, int, int)",
                             "AddRmsNorm", "RmsNorm", "aclnnRmsNorm_RmsNorm_RmsNorm",
                             "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_S4_S4_diiiii"}) {
    testing::DecodeSpec spec;
    spec.norm_host_delay_ns = 1'000'000;
    spec.norm_kernel = kernel;
    DiagnosticReport r = RunSpec(spec, "norm_launch_overhead");
    EXPECT_TRUE(r.issues.empty()) << kernel;
    bool noted = false;
    for (const std::string& n : r.notes) noted |= n.find("are already fused norms") != std::string::npos;
    EXPECT_TRUE(noted) << kernel;
  }
}

}  // namespace
}  // namespace pypto
