// Detectors 6-10 on the real fixtures. Every expected figure was checked by
// hand against the raw rows with a short Python script over the fixture
// (csv.DictReader / json.load), as noted next to each assertion.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"

namespace pypto {
namespace {

DiagnosticReport Diag(const std::string& rel, std::vector<std::string> only) {
  DiagnoseOptions o;
  o.only = std::move(only);
  o.min_issue_share = 0;  // see every finding, however small
  auto r = DiagnosePath(std::string(PYPTO_FIXTURES_DIR) + "/" + rel, o);
  EXPECT_TRUE(r.ok()) << rel << ": " << r.status().ToString();
  return r.ok() ? std::move(r).value() : DiagnosticReport{};
}

std::vector<const Issue*> Issues(const DiagnosticReport& r, IssueType type) {
  std::vector<const Issue*> v;
  for (const Issue& i : r.issues)
    if (i.type == type) v.push_back(&i);
  return v;
}

const Issue* ByOp(const DiagnosticReport& r, IssueType type, std::string_view op) {
  for (const Issue& i : r.issues)
    if (i.type == type && i.op_name == op) return &i;
  return nullptr;
}

const std::vector<std::string> kAll = {"aicpu_fallback", "dynamic_shape_compile", "stream_sync", "no_pipe_bound",
                                       "fusible_sequence"};

// ---------------------------------------------------------------- msprof op_summary (GPT-3, MemoryL0)
TEST(FixtureDetectors, Gpt3OpSummaryAicpuCastsOnly) {
  // Raw CSV: Task Type AI_CPU rows are trans_Cast_5 (72.1612 us) and
  // trans_Cast_15 (72.8611 us), both OP Type Cast with INT32 inputs, i.e. over
  // the 20 us threshold. NonZero rows are MIX_AIV (6.1-6.7 us), not AI CPU.
  DiagnosticReport r = Diag("ascend/msprof_op_summary_gpt3_memoryl0/op_summary_1.csv", kAll);
  auto aicpu = Issues(r, IssueType::kAicpuFallback);
  ASSERT_EQ(aicpu.size(), 1u);
  EXPECT_EQ(aicpu[0]->op_type, "Cast");
  EXPECT_EQ(aicpu[0]->evidence.count, 2u);
  EXPECT_NEAR(double(aicpu[0]->evidence.total_ns), 145022.3, 2.0);
  EXPECT_NEAR(double(aicpu[0]->saved_ns), 145022.3 - 40000.0, 2.0);
  EXPECT_NE(aicpu[0]->detail.find("INT32"), std::string::npos);
  // MemoryL0 metrics: no pipe ratios -> no_pipe_bound is skipped with a note.
  EXPECT_TRUE(Issues(r, IssueType::kNoPipeBound).empty());
  bool noted = false;
  for (const std::string& n : r.notes) noted |= n.starts_with("no_pipe_bound: no PMU");
  EXPECT_TRUE(noted);
  // No OP State column, no host trace: nothing to claim.
  EXPECT_TRUE(Issues(r, IssueType::kDynamicShapeCompile).empty());
  EXPECT_TRUE(Issues(r, IssueType::kFusibleSequence).empty());
}

// ---------------------------------------------------------------- trace_view.json (torch_npu 2024)
TEST(FixtureDetectors, TraceViewCompileSyncAicpu) {
  DiagnosticReport r = Diag("ascend/pta_trace_view_2024/trace_view.json", kAll);
  // Raw JSON: 11 AscendCL@aclopCompileAndExecute events, all inside
  // ProfilerStep#1: under MAX_OP_COMPILE_NUM 20 -> no issue, a note.
  EXPECT_TRUE(Issues(r, IssueType::kDynamicShapeCompile).empty());
  bool noted = false;
  for (const std::string& n : r.notes) noted |= n.find("11 aclopCompileAndExecute") != std::string::npos;
  EXPECT_TRUE(noted);
  // Raw JSON: two Ascend Hardware tasks with Task Type AI_CPU:
  // aclnnReduceSum_CastAiCpu_Cast 188.148 us and aclnnCast_CastAiCpu_Cast 139.419 us.
  auto aicpu = Issues(r, IssueType::kAicpuFallback);
  ASSERT_EQ(aicpu.size(), 2u);
  const Issue* reduce = ByOp(r, IssueType::kAicpuFallback, "aclnnReduceSum_CastAiCpu_Cast");
  const Issue* cast = ByOp(r, IssueType::kAicpuFallback, "aclnnCast_CastAiCpu_Cast");
  ASSERT_TRUE(reduce && cast);
  EXPECT_NEAR(double(reduce->evidence.total_ns), 188148.0, 2.0);
  EXPECT_NEAR(double(cast->evidence.total_ns), 139419.0, 2.0);
  // Raw JSON, inside ProfilerStep#1: aclrtSynchronizeStream x4,
  // aclrtSynchronizeStreamWithTimeout x2, aclrtSynchronizeDevice x1 (a second
  // one starts after the step). 45 aten::_local_scalar_dense, 2 of which hold
  // an aclrtSynchronize* call on the same thread -> 43 counted as .item() syncs.
  const Issue* item = ByOp(r, IssueType::kStreamSync, "aten::_local_scalar_dense");
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->evidence.count, 43u);
  EXPECT_GT(item->affected_ns, 0);
  const Issue* dev = ByOp(r, IssueType::kStreamSync, "aclrtSynchronizeDevice");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(dev->evidence.count, 1u);
  for (const Issue* i : Issues(r, IssueType::kStreamSync)) {
    EXPECT_EQ(i->saved_ns, i->affected_ns);  // measured idle, claimed as step idle
    EXPECT_GT(i->affected_ns, 0);
  }
  // No PMU columns in a trace_view-only run.
  EXPECT_TRUE(Issues(r, IssueType::kNoPipeBound).empty());
}

// ---------------------------------------------------------------- kernel_details (LLM training, CANN 8.3)
TEST(FixtureDetectors, Level2LlmDynamicAndNoPipe) {
  DiagnosticReport r = Diag("ascend/pta_level2_llm_cann83", kAll);
  // Raw CSV OP State: dynamic 2448, N/A 15, static 0 -> MPA "no static operator".
  auto dyn = Issues(r, IssueType::kDynamicShapeCompile);
  ASSERT_EQ(dyn.size(), 1u);
  EXPECT_EQ(dyn[0]->op_type, "OP State dynamic");
  EXPECT_EQ(dyn[0]->evidence.count, 2448u);
  // Raw CSV: FlashAttentionScoreGrad rows over 20 us whose aic_*/aiv_* pipe
  // ratios are all <= 0.8: 28 rows, 63128.66 us.
  const Issue* fag = ByOp(r, IssueType::kNoPipeBound, "FlashAttentionScoreGrad");
  ASSERT_NE(fag, nullptr);
  EXPECT_EQ(fag->evidence.count, 28u);
  EXPECT_NEAR(double(fag->affected_ns), 63128660.0, 30.0);
  // Same script: RmsNormGrad 112, RmsNorm 83, RotaryPositionEmbedding(Grad) 56 each, MatMulV3 40.
  const std::pair<const char*, uint64_t> counts[] = {{"RmsNormGrad", 112}, {"RmsNorm", 83},
                                                     {"RotaryPositionEmbedding", 56},
                                                     {"RotaryPositionEmbeddingGrad", 56}, {"MatMulV3", 40}};
  for (auto [op, n] : counts) {
    const Issue* i = ByOp(r, IssueType::kNoPipeBound, op);
    ASSERT_NE(i, nullptr) << op;
    EXPECT_EQ(i->evidence.count, n) << op;
  }
  // No AI_CPU core type in the file.
  EXPECT_TRUE(Issues(r, IssueType::kAicpuFallback).empty());
}

TEST(FixtureDetectors, NewCannOpSummaryMixedOpStateIsOnlyANote) {
  // Raw CSV: OP State 12 dynamic, 3 static -> the MPA rule (no static op) does not hold.
  DiagnosticReport r = Diag("ascend/msprof_op_summary_blocknum_newcann/a003-op_summary.csv", kAll);
  EXPECT_TRUE(Issues(r, IssueType::kDynamicShapeCompile).empty());
  bool noted = false;
  for (const std::string& n : r.notes) noted |= n.find("12 dynamic and 3 static") != std::string::npos;
  EXPECT_TRUE(noted);
}

// ---------------------------------------------------------------- Kineto
TEST(FixtureDetectors, QwenHfInferenceUnfusedNormAndRope) {
  // HF Qwen1.5 eager: LlamaRMSNorm-style pow-mean-add-rsqrt-mul and rotate_half
  // RoPE (slice-neg-cat-mul-add) as top-level aten ops on the main thread.
  // Raw JSON: 49 cpu_op aten::rsqrt (one per norm) and 48 aten::neg (one per
  // rotate_half) events.
  DiagnosticReport r = Diag("kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", kAll);
  const Issue* norm = nullptr;
  const Issue* rope = nullptr;
  for (const Issue* i : Issues(r, IssueType::kFusibleSequence)) {
    if (i->op_type == "rms_norm") norm = i;
    if (i->op_type == "rotary_mul") rope = i;
  }
  ASSERT_TRUE(norm && rope);
  EXPECT_EQ(norm->evidence.count, 49u);   // 24 layers x 2 norms + final norm
  EXPECT_EQ(rope->evidence.count, 48u);   // 24 layers x (q, k)
  EXPECT_GT(norm->saved_ns, 0);
  // No Ascend facts in a CUDA trace.
  EXPECT_TRUE(Issues(r, IssueType::kAicpuFallback).empty());
  EXPECT_TRUE(Issues(r, IssueType::kNoPipeBound).empty());
  EXPECT_TRUE(Issues(r, IssueType::kDynamicShapeCompile).empty());
}

TEST(FixtureDetectors, StreamWaitEventIsNotAHostSync) {
  // cudaStreamWaitEvent orders streams on the GPU; the host does not block.
  for (const char* rel : {"kineto/hta_nccl_2rank_a100_2024/nccl_data.json.gz",
                          "kineto/hta_trace_diff_control_a100_2022/control.json.gz"}) {
    DiagnosticReport r = Diag(rel, {"stream_sync"});
    EXPECT_EQ(ByOp(r, IssueType::kStreamSync, "cudaStreamWaitEvent"), nullptr) << rel;
  }
}

TEST(FixtureDetectors, EveryFixtureRunsWithoutFailure) {
  const char* all[] = {
      "ascend/pta_db_level1_alexnet_cann8", "ascend/pta_level1_alexnet_cann8",
      "ascend/pta_advisor_ut_llm_matmul_fa/kernel_details.csv",
      "kineto/tb_plugin_resnet50_torch1.9_v100/worker0.1623143089861.pt.trace.json.gz",
      "kineto/tracelens_mi300x_vllm_decode_cudagraph/graph_execution.json.gz",
      "kineto/tracelens_mi300x_sglang_qwen3_8b_decode/sglang_Qwen3-8B_decode.json.gz",
      "kineto/hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
      "kineto/hta_critical_path_simple_add_a100/benchmark_result_493459_1694039959_trace.json.gz"};
  for (const char* rel : all) {
    DiagnosticReport r = Diag(rel, kAll);
    EXPECT_EQ(r.detectors_run.size(), 5u) << rel;
    for (const Issue& i : r.issues) {
      EXPECT_GE(i.saved_ns, 0) << rel;
      EXPECT_LE(i.saved_ns, r.step_time_ns) << rel << " " << IssueTypeName(i.type) << " " << i.op_name;
    }
  }
  // CPU-only trace: no device tasks -> sync stalls are not measurable (note, no issue).
  DiagnosticReport cpu = Diag("kineto/hta_cpu_only_gloo_2024/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", kAll);
  EXPECT_TRUE(cpu.issues.empty());
}

}  // namespace
}  // namespace pypto
