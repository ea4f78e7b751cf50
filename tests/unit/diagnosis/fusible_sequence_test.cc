// Detector 10 (fusible_sequence): repeated sequences of short aten ops that
// one fused kernel replaces (msprof-analyze affinity APIs: rms_norm,
// rotary_mul, swiglu, fusion_attention, …), more than 5 repeats.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "analysis/detector.h"
#include "unit/diagnosis/planted_detector_helpers.h"
#include "unit/planted/planted_profiles.h"

namespace pypto::testing {
namespace {

constexpr char kDetector[] = "fusible_sequence";
constexpr uint64_t kSwigluSequences = 4 * 4;  // one per layer per step: 4 layers x 4 steps

const Issue* FindFusion(const DiagnosticReport& r, std::string_view key) {
  for (const Issue& i : r.issues)
    if (i.type == IssueType::kFusibleSequence && i.op_type == key) return &i;
  return nullptr;
}

class FusibleSequence : public ::testing::TestWithParam<PlantedFlavor> {};

// ---------------------------------------------------------------- positive
TEST_P(FusibleSequence, EachAffinityPatternIsFound) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.unfused_norm_gap_us = 4;
  k.unfused_rope = true;
  k.unfused_swiglu = true;
  k.unfused_attention = true;
  k.unfused_gap_us = 4;
  DiagnosticReport r = RunPlanted(k);
  struct Want { const char* key; const char* api; uint64_t count; };
  // Per step: 2 norms per layer + final norm; rope for q and k; one swiglu and attention per layer.
  // The fused op named is the backend's: torch_npu on Ascend, torch (or torch.compile) elsewhere.
  const bool ascend = GetParam() == PlantedFlavor::kAscend;
  const Want wants[] = {
      {"rms_norm", ascend ? "torch_npu.npu_rms_norm" : "torch.nn.functional.rms_norm", 4 * (2 * 4 + 1)},
      {"rotary_mul", ascend ? "torch_npu.npu_rotary_mul" : "a fused rotary embedding (torch.compile)", 4 * 4 * 2},
      {"swiglu", ascend ? "torch_npu.npu_swiglu" : "a fused SwiGLU (torch.compile)", kSwigluSequences},
      {"fusion_attention", ascend ? "torch_npu.npu_fusion_attention" : "torch.nn.functional.scaled_dot_product_attention",
       4 * 4}};
  for (const Want& w : wants) {
    const Issue* i = FindFusion(r, w.key);
    ASSERT_NE(i, nullptr) << w.key << "\n" << Describe(r);
    EXPECT_EQ(i->op_name, w.api);
    EXPECT_EQ(i->evidence.count, w.count) << w.key;
    // Measured: the device idle between the kernels of each sequence, which one kernel does not have.
    EXPECT_EQ(i->method, SavingMethod::kMeasuredGap) << w.key;
    EXPECT_GT(i->saved_ns, 0) << w.key;
  }
  // The unfused norm chain with gaps is also a launch-overhead finding of detector 4.
  EXPECT_TRUE(FindIssue(r, IssueType::kNormLaunchOverhead)) << Describe(r);
}

TEST_P(FusibleSequence, SavingGrowsWithGap) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.unfused_swiglu = true;
  k.unfused_gap_us = 2;
  DiagnosticReport weak = RunPlanted(k);
  const Issue* a = FindFusion(weak, "swiglu");
  k.unfused_gap_us = 30;
  DiagnosticReport strong = RunPlanted(k);
  const Issue* b = FindFusion(strong, "swiglu");
  ASSERT_NE(b, nullptr) << Describe(strong);
  if (a) {  // 2 us gaps may stay under the 1% reporting floor
    EXPECT_LT(a->saved_ns, b->saved_ns);
    EXPECT_LE(a->severity, b->severity);
  }
}

// ---------------------------------------------------------------- negative
// The healthy decoder calls the fused ops (rms_norm, rotary, swiglu, sdpa).
TEST_P(FusibleSequence, HealthyProfileHasNoIssue) {
  DiagnosticReport r = DiagnoseOnly(BuildPlantedProfile(HealthyKnobs(GetParam())), kDetector);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
}

// ---------------------------------------------------------------- threshold
// fusible_sequence.min_repeats_exclusive: 16 SwiGLU sequences are reported
// with "more than 5" and only noted with "more than 16".
TEST_P(FusibleSequence, MinRepeatsParameterMovesTheCut) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.unfused_swiglu = true;
  k.unfused_gap_us = 4;
  Profile p = BuildPlantedProfile(k);
  const DiagnosticReport by_default = DiagnoseOnly(p, kDetector);
  const Issue* found = FindFusion(by_default, "swiglu");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->evidence.count, kSwigluSequences);
  DiagnosticReport raised = DiagnoseOnly(p, kDetector, {{"fusible_sequence.min_repeats_exclusive", 16}});
  EXPECT_EQ(FindFusion(raised, "swiglu"), nullptr) << Describe(raised);
  EXPECT_TRUE(HasNoteContaining(raised, "16 sequence(s) for")) << Describe(raised);
}

// ---------------------------------------------------------------- degraded
// Host operators without aten names (a trace without the PyTorch op layer):
// the patterns have no tokens to match, a note and no issue.
TEST_P(FusibleSequence, NoAtenOperatorsGivesANoteAndNoIssue) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.unfused_swiglu = true;
  k.unfused_rope = true;
  Profile p = BuildPlantedProfile(k);
  HostOpTable& h = p.host_ops;
  for (size_t i = 0; i < h.size(); ++i) {
    const std::string name(p.Str(h.name[i]));
    if (name.starts_with("aten::")) h.name[i] = p.Intern("op::" + name.substr(6));
  }
  DiagnosticReport r = DiagnoseOnly(p, kDetector);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_TRUE(HasNoteContaining(r, "no aten operators on the host")) << Describe(r);
}

INSTANTIATE_TEST_SUITE_P(Flavors, FusibleSequence,
                         ::testing::Values(PlantedFlavor::kKinetoCuda, PlantedFlavor::kAscend),
                         [](const auto& info) { return FlavorName(info.param); });

// ---------------------------------------------------------------- real fixtures
TEST(FusibleSequenceFixtures, QwenHfInferenceUnfusedNormAndRope) {
  // HF Qwen1.5 eager: LlamaRMSNorm-style pow-mean-add-rsqrt-mul and rotate_half
  // RoPE (slice-neg-cat-mul-add) as top-level aten ops on the main thread.
  // Raw JSON: 49 cpu_op aten::rsqrt (one per norm) and 48 aten::neg (one per
  // rotate_half) events.
  DiagnosticReport r = DiagnoseFixtureOnly(
      "kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", {kDetector});
  const Issue* norm = FindFusion(r, "rms_norm");
  const Issue* rope = FindFusion(r, "rotary_mul");
  ASSERT_TRUE(norm && rope) << Describe(r);
  EXPECT_EQ(norm->evidence.count, 49u);  // 24 layers x 2 norms + final norm
  EXPECT_EQ(rope->evidence.count, 48u);  // 24 layers x (q, k)
  EXPECT_GT(norm->saved_ns, 0);
}

TEST(FusibleSequenceFixtures, AdamStepOnAscendNamesTheFusedOptimizer) {
  // trace_view.json (torch_npu): Optimizer.step#Adam.step lasts 2410.824 us
  // on the host; the 80 Ascend Hardware tasks its ops dispatch (async_npu
  // flow events: aclnnAdd, aclnnAddcdiv, … one per parameter tensor) run from
  // 1704161511432413.8 to 1704161511433653.2 us: 1239.5 us, of which the NPU
  // is busy 229.6 us (the union of those and any other tasks in the span), so
  // 1009.9 us idle between them is what the fused optimizer's few kernels save.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/pta_trace_view_2024", {kDetector});
  const Issue* opt = FindFusion(r, "fused_optimizer");
  ASSERT_NE(opt, nullptr) << Describe(r);
  EXPECT_EQ(opt->op_name, "torch_npu.optim.NpuFusedAdam");
  EXPECT_EQ(opt->profile_op_name, "Optimizer.step#Adam.step");
  EXPECT_NEAR(double(opt->affected_ns) / 1e3, 1239.5, 0.2);
  EXPECT_NEAR(double(opt->saved_ns) / 1e3, 1009.9, 0.2);
  EXPECT_NE(opt->detail.find("launch 80 kernels"), std::string::npos) << opt->detail;
}

TEST(FusibleSequence, OptimizerRuleIsAscendOnly) {
  // The same step on a GPU profile: torch_npu's fused optimizers do not apply.
  ProfileBuilder b;
  const uint32_t stream = b.Stream(7);
  b.Host("ProfilerStep#1", HostOpKind::kUserAnnotation, 0, 1000);
  b.Host("Optimizer.step#Adam.step", HostOpKind::kUserAnnotation, 100, 500);
  b.Host("cudaLaunchKernel", HostOpKind::kRuntime, 110, 5, 1);
  b.Task(stream, "multi_tensor_apply_kernel", DeviceTaskKind::kKernel, 120, 50, 1);
  DiagnosticReport r = DiagnoseOnly(b.p, kDetector);
  EXPECT_EQ(FindFusion(r, "fused_optimizer"), nullptr) << Describe(r);
}

TEST(FusibleSequenceFixtures, Gpt3OpSummaryHasNoHostOps) {
  // An op_summary CSV has no host trace: no aten operators to match.
  DiagnosticReport r = DiagnoseFixtureOnly("ascend/msprof_op_summary_gpt3_memoryl0/op_summary_1.csv", {kDetector});
  EXPECT_TRUE(IssuesOf(r, IssueType::kFusibleSequence).empty());
}

}  // namespace
}  // namespace pypto::testing
