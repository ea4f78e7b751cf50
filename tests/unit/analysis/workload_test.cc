// ClassifyWorkload: training or inference, from the ops a profile holds.
// Expected counts are taken from the raw rows, as each comment says.
#include <gtest/gtest.h>

#include <string>

#include "analysis/workload.h"
#include "importers/detect.h"
#include "unit/profile_builder.h"

namespace pypto::testing {
namespace {

WorkloadClass ClassifyFixture(const std::string& rel) {
  StatusOr<Profile> p = LoadProfile(std::string(PYPTO_FIXTURES_DIR) + "/" + rel);
  EXPECT_TRUE(p.ok()) << rel << ": " << p.status().ToString();
  return p.ok() ? ClassifyWorkload(p.value()) : WorkloadClass{};
}

TEST(WorkloadNames, BackwardPassNames) {
  for (const char* name : {"autograd::engine::evaluate_function: MmBackward0", "MmBackward0",
                           "aten::convolution_backward", "FlashAttentionScoreGrad", "RmsNormGrad",
                           "MaxPoolGradWithArgmaxV1", "SoftmaxGradV2", "Conv2DBackpropFilter",
                           "sm80_xmma_dgrad_implicit_gemm_bf16", "flash_bwd_dq_dk_dv_loop_kernel",
                           "torch::autograd::AccumulateGrad"})
    EXPECT_TRUE(IsBackwardName(name)) << name;
  for (const char* name : {"aten::mm", "FlashAttentionScore", "IncreFlashAttention", "ApplyGradientDescentX_",
                           "upgrade_kernel", "Gradient", "MatMulV3", "ncclKernel_AllReduce_RING_LL_Sum_float"})
    EXPECT_FALSE(IsBackwardName(name)) << name;
  EXPECT_TRUE(IsOptimizerName("Optimizer.step#AdamW.step"));
  EXPECT_TRUE(IsOptimizerName("ApplyAdamWV2"));
  EXPECT_FALSE(IsOptimizerName("aten::add_"));
}

TEST(Workload, BuiltTrainingStepNamesItsRows) {
  // 2 forward ops, 2 backward nodes (one nested evaluate_function range and
  // its kernel), 1 optimizer step.
  ProfileBuilder b;
  const uint32_t stream = b.Stream(7);
  b.Host("aten::mm", HostOpKind::kOperator, 0, 10);
  b.Host("aten::relu", HostOpKind::kOperator, 10, 10);
  b.Host("autograd::engine::evaluate_function: MmBackward0", HostOpKind::kOperator, 30, 10);
  b.Host("Optimizer.step#SGD.step", HostOpKind::kUserAnnotation, 50, 10);
  b.Host("cudaLaunchKernel", HostOpKind::kRuntime, 31, 2);  // runtime calls are not counted
  b.Task(stream, "sm80_xmma_wgrad_implicit_gemm", DeviceTaskKind::kKernel, 35, 5);
  WorkloadClass w = ClassifyWorkload(b.p);
  EXPECT_EQ(w.kind, Workload::kTraining);
  EXPECT_EQ(w.backward_rows, 2u);
  EXPECT_EQ(w.optimizer_rows, 1u);
  EXPECT_EQ(w.rows, 5u);
  EXPECT_NE(w.reason.find("MmBackward0"), std::string::npos) << w.reason;  // the autograd prefix is dropped
}

TEST(Workload, ForwardOnlyIsInferenceAndCollectivesAloneAreUnknown) {
  ProfileBuilder forward;
  forward.Host("aten::linear", HostOpKind::kOperator, 0, 10);
  EXPECT_EQ(ClassifyWorkload(forward.p).kind, Workload::kInference);

  ProfileBuilder comms;  // a DDP all-reduce and a serving all-gather look alike
  comms.Host("gloo:all_reduce", HostOpKind::kOperator, 0, 10);
  comms.Host("aten::empty", HostOpKind::kOperator, 10, 1);
  WorkloadClass w = ClassifyWorkload(comms.p);
  EXPECT_EQ(w.kind, Workload::kUnknown);
  EXPECT_NE(w.reason.find("only collectives"), std::string::npos) << w.reason;

  EXPECT_EQ(ClassifyWorkload(Profile{}).kind, Workload::kUnknown);
}

TEST(WorkloadFixtures, AscendAlexNetTrainingFromTheKernelTypes) {
  // kernel_details.csv, Type column, 191 rows, no host rows: ReluGrad 7,
  // Conv2DBackpropFilter 5, Conv2DBackpropInput 4, MaxPoolGradWithArgmaxV1 3,
  // NLLLossGrad 1, LogSoftmaxGrad 1, AdaptiveAvgPool3dGrad 1 = 22 backward rows
  // (op_statistic.csv summarises the same kernels and is not counted again).
  WorkloadClass w = ClassifyFixture("ascend/pta_level1_alexnet_cann8");
  EXPECT_EQ(w.kind, Workload::kTraining);
  EXPECT_EQ(w.backward_rows, 22u);
  EXPECT_EQ(w.rows, 191u);
}

TEST(WorkloadFixtures, TorchairDecodeStatisticsAreInference) {
  // op_statistic.csv only: 23 OP Types (MatMul, IncreFlashAttention,
  // InplaceAddRmsNorm, ApplyRotaryPosEmb, Scatter, …), none of the backward
  // pass or an optimizer.
  WorkloadClass w = ClassifyFixture("ascend/pta_llm_decode_910b_torchair_cann9");
  EXPECT_EQ(w.kind, Workload::kInference);
  EXPECT_EQ(w.rows, 23u);
}

TEST(WorkloadFixtures, Cann83LlmIsTraining) {
  // kernel_details.csv of the CANN 8.3 LLM job: FlashAttentionScoreGrad,
  // RmsNormGrad and ApplyAdamWV2 rows.
  WorkloadClass w = ClassifyFixture("ascend/pta_level2_llm_cann83");
  EXPECT_EQ(w.kind, Workload::kTraining);
  EXPECT_GT(w.optimizer_rows, 0u);
  EXPECT_NE(w.reason.find("RmsNormGrad"), std::string::npos) << w.reason;
}

TEST(WorkloadFixtures, HfInferenceIsInference) {
  WorkloadClass w = ClassifyFixture("kineto/tracelens_h100_qwen1.5_0.5b_hf_inference");
  EXPECT_EQ(w.kind, Workload::kInference);
  EXPECT_EQ(w.backward_rows + w.optimizer_rows, 0u);
}

}  // namespace
}  // namespace pypto::testing
