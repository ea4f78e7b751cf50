// Real fixtures diagnosed; every expectation below was checked by hand
// against the raw rows (kernel_details.csv / op_summary.csv read with Python's
// csv module: Type, Accelerator Core / Task Type, Duration(us), Block Dim,
// Input Shapes and the aic_*/aiv_* PMU columns).
#include <gtest/gtest.h>

#include <cmath>

#include "session/profile_session.h"
#include "analysis/detector.h"

namespace pypto {
namespace {

const std::string kFixtures = PYPTO_FIXTURES_DIR;

DiagnosticReport Load(const std::string& rel, DiagnoseOptions o = {}) {
  StatusOr<DiagnosticReport> r = DiagnosePath(kFixtures + "/" + rel, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : DiagnosticReport{};
}

const Issue* Find(const DiagnosticReport& r, IssueType t, std::string_view op = "") {
  for (const Issue& i : r.issues)
    if (i.type == t && (op.empty() || i.op_name == op)) return &i;
  return nullptr;
}

// msprof-analyze advisor unit-test excerpt (29 rows, all Step Id 19, no
// step_trace_time, no host data): the step its Step Id column gives spans
// 2.857 s of excerpted rows, so shares are of the device busy time (8092.0 us
// = sum of the non-overlapping rows).
TEST(DiagnosisFixtures, AdvisorLlmMatmulFa) {
  DiagnosticReport r = Load("ascend/pta_advisor_ut_llm_matmul_fa/kernel_details.csv");
  EXPECT_EQ(r.hardware_id, "910B3");  // "Ascend910B" family, default SKU (20 AIC, 40 AIV)
  EXPECT_EQ(r.step_basis, "device busy time (steps only from the Step Id column, no host data)");
  // FlashAttentionScore rows 13-16: aic_mte2_ratio 0.872/0.869/0.864/0.865 >= 0.8
  // (MPA FA fwd rule); the 5th FA row (head 511) has 0.465 and is not included.
  const Issue* fa = Find(r, IssueType::kAttentionMemoryBound, "FlashAttentionScore");
  ASSERT_NE(fa, nullptr);
  EXPECT_EQ(fa->evidence.count, 4u);
  EXPECT_EQ(fa->evidence.tasks, (std::vector<uint32_t>{12, 13, 14, 15}));
  EXPECT_NEAR(fa->memory_ratio, 0.8675, 0.002);  // duration-weighted mean of the four
  // The shapes' roofline is compute: SBH query 4096,2,512 with softmax_max
  // [2,4,4096,8] -> B=2, N=4, S=4096, D=128: 4*2*4*4096*4096*128 = 68.72 GFLOP
  // / 294.9 TFLOP/s = 233.0 us, while Q+O+K+V = 33.6 MB / 1.6 TB/s = 21 us. The
  // memory pipe is saturated (PMU) at 57% of that roofline: the time to win is
  // measured - roofline = (410.188+406.128+407.008+405.228) - 4 x 233.03 = 696.4 us.
  EXPECT_EQ(fa->method, SavingMethod::kRoofline);
  EXPECT_NEAR(double(fa->saved_ns), 696'448, 1000);
  EXPECT_NE(fa->detail.find("achieved FLOP/s 57% of peak"), std::string::npos) << fa->detail;
  // No MatMul below the default 0.6 (every MatMul has aic_mac_ratio >= 0.714).
  // The 5th FlashAttentionScore row (_varlen, Task ID 60763) is judged as a
  // cube kernel: its memory pipe is not saturated (aic_mte2_ratio 0.465 < 0.8),
  // aic_mac_ratio 0.358 < 0.6, and its query 4096,2,511 over the 3 heads of
  // its softmax_max [2,3,4096,8] gives head_dim 170, not a multiple of 128.
  const Issue* fa_tiling = Find(r, IssueType::kMatmulTiling);
  ASSERT_NE(fa_tiling, nullptr);
  EXPECT_EQ(fa_tiling->op_name, "FlashAttentionScore");
  EXPECT_EQ(fa_tiling->evidence.count, 1u);
  EXPECT_NE(fa_tiling->detail.find("head_dim=170 not a multiple of 128"), std::string::npos) << fa_tiling->detail;
  EXPECT_NEAR(double(fa_tiling->saved_ns), 405228 * (1 - 0.358 / 0.6), 1000);  // Amdahl on the mac ratio
  // No host data: host_bound not claimed.
  EXPECT_EQ(Find(r, IssueType::kHostBound), nullptr);

  // At 0.8: the MatMulV3 "8192,15365;8192,4096" group (4 rows x 521.31 us,
  // aic_mac_ratio 0.714) is flagged: inner axis 15365 % 256 != 0. The other
  // MatMulV3 group (mac 0.724-0.744) has inner axes 1536/4096 and block dim
  // 20 = core count: no cause, not reported. MatMulV2 (mac 0.811-0.825) is
  // above 0.8 (its block dim 16 % 20 would be a cause).
  DiagnoseOptions o;
  o.tiling_utilization_threshold = 0.8;
  DiagnosticReport r8 = Load("ascend/pta_advisor_ut_llm_matmul_fa/kernel_details.csv", o);
  const Issue* mm = Find(r8, IssueType::kMatmulTiling, "MatMulV3");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->op_name, "MatMulV3");
  ASSERT_EQ(mm->evidence.shapes.size(), 1u);
  EXPECT_EQ(mm->evidence.shapes[0], "8192,15365;8192,4096");
  // The 4 rows are one task written 4 times (Task ID 13792, the same start
  // 1736413974248200.543 us): they affect 521.31 us of wall time, not 4x.
  EXPECT_EQ(mm->affected_ns, 521310);
  // The saving too counts the row once: 521.31 x (1 - 0.714 / 0.8) = 56.05 us
  // (Amdahl on the cube busy share), not 4 x that.
  EXPECT_NEAR(double(mm->saved_ns), 521310 * (1 - 0.714 / 0.8), 300);
  int tiling = 0;
  for (const Issue& i : r8.issues) tiling += i.type == IssueType::kMatmulTiling && i.op_name == "MatMulV3";
  EXPECT_EQ(tiling, 1);
}

// Custom Ascend C matmul+bias+act (384x384 FP16), Block Num 9 / Mix Block Num 18:
// aic_mac_ratio 0.168 (red), inner axes 384 % 256 != 0, 9 % 20 and 18 % 40 != 0.
TEST(DiagnosisFixtures, MsprofBlockNumNewCann) {
  DiagnosticReport r = Load("ascend/msprof_op_summary_blocknum_newcann");
  const Issue* mm = Find(r, IssueType::kMatmulTiling);
  ASSERT_NE(mm, nullptr);
  EXPECT_NE(mm->detail.find("block dim 9 not a multiple of 20 cores"), std::string::npos) << mm->detail;
  EXPECT_NE(mm->detail.find("inner axis 384"), std::string::npos);
  EXPECT_EQ(mm->evidence.count, 3u);
  EXPECT_LT(mm->compute_ratio, 0.2);
}

// Level2 LLM training step: step_trace_time Free / step = 19.6% > 10% (MPA
// overall rule) -> host_bound high. No attention_memory_bound: the
// FlashAttentionScore rows' aic_mte2_ratio stay below 0.8.
TEST(DiagnosisFixtures, Level2LlmCann83) {
  DiagnosticReport r = Load("ascend/pta_level2_llm_cann83");
  const Issue* hb = Find(r, IssueType::kHostBound);
  ASSERT_NE(hb, nullptr);
  EXPECT_NEAR(hb->affected_share, 0.196, 0.005);
  EXPECT_EQ(Find(r, IssueType::kAttentionMemoryBound), nullptr);
  EXPECT_EQ(Find(r, IssueType::kKvCacheLayout), nullptr);
}

// HF Qwen1.5 decode on H100: RMSNorm is unfused (pow-mean-add-rsqrt-mul), but
// its launch gaps (283 us over 49 chains) are far below the 3814 us of
// execution and not all kernels are short: norm_launch_overhead does not
// claim it (fusible_sequence does).
TEST(DiagnosisFixtures, TracelensH100QwenDecode) {
  DiagnosticReport r = Load("kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  EXPECT_EQ(r.hardware_id, "H100-SXM");
  EXPECT_EQ(Find(r, IssueType::kNormLaunchOverhead), nullptr);
  EXPECT_EQ(Find(r, IssueType::kMatmulTiling), nullptr);
}

// ResNet-50 (torch 1.9, V100): batch-norm kernels are not LayerNorm/RMSNorm;
// device idle 41% of the 6 steps -> host_bound, standing on the 1,499 gaps
// that wait for a launch: 8.5% of the steps.
TEST(DiagnosisFixtures, TbPluginResnet50) {
  DiagnosticReport r = Load("kineto/tb_plugin_resnet50_torch1.9_v100/worker0.1623143089861.pt.trace.json.gz");
  EXPECT_EQ(r.hardware_id, "V100-SXM2");
  const Issue* hb = Find(r, IssueType::kHostBound);
  ASSERT_NE(hb, nullptr);
  EXPECT_NEAR(hb->affected_share, 0.085, 0.005);
  EXPECT_EQ(hb->evidence.count, 1499u);
  EXPECT_EQ(Find(r, IssueType::kNormLaunchOverhead), nullptr);
}

}  // namespace
}  // namespace pypto
