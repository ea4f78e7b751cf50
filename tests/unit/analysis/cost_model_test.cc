// Shapes and cost models; fixture figures checked by hand against the raw rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "analysis/cost_model.h"
#include "analysis/shapes.h"
#include "importers/detect.h"
#include "unit/distinct_shapes_trace.h"

namespace pypto {
namespace {

const std::string kFixtures = PYPTO_FIXTURES_DIR;

TEST(Shapes, Kineto) {
  OpShapes s;
  ASSERT_TRUE(ParseKinetoShapes("[[1024], [8944, 1024], [1024, 1024], [], []]",
                                R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])", &s).ok());
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(s.tensor_count(), 3);
  EXPECT_EQ(s.tensor(1)->dim(0), 8944);
  EXPECT_EQ(s.tensor(1)->dim(-1), 1024);
  EXPECT_EQ(s.tensor(1)->dtype, DType::kBf16);
  EXPECT_FALSE(s.inputs[3].present);
  EXPECT_DOUBLE_EQ(s.tensor(2)->bytes(), 1024.0 * 1024 * 2);
  // TensorList (aten::cat) is flattened; "TensorList" carries no dtype.
  ASSERT_TRUE(ParseKinetoShapes("[[[16, 16, 559, 32], [16, 16, 559, 32]], []]", R"(["TensorList", "Scalar"])", &s).ok());
  EXPECT_TRUE(s.list_inputs);
  EXPECT_EQ(s.tensor_count(), 2);
  EXPECT_EQ(s.tensor(1)->dim(2), 559);
  EXPECT_EQ(s.tensor(1)->dtype, DType::kUnknown);
  EXPECT_FALSE(ParseKinetoShapes("[[4, x]]", "", &s).ok());
  EXPECT_FALSE(ParseKinetoShapes("[[4, 5]", "", &s).ok());
}

TEST(Shapes, Ascend) {
  OpShapes s;
  // pta_advisor_ut_llm_matmul_fa FlashAttentionScore row (quotes left as the importer may pass them).
  ASSERT_TRUE(ParseAscendShapes("\"4096,2,512;4096,2,512;4096,2,512;;;;4096,4096;;;;;\"",
                                "DT_BF16;DT_BF16;DT_BF16;DT_BF16;UINT8;DT_BF16;BOOL;INT64;INT64;INT64;INT64;INT64", &s)
                  .ok());
  EXPECT_EQ(s.count, 12);
  EXPECT_EQ(s.tensor_count(), 4);
  EXPECT_EQ(s.tensor(3)->dim(0), 4096);  // the attention mask, input 6
  EXPECT_EQ(s.inputs[6].dtype, DType::kBool);
  EXPECT_EQ(s.tensor(0)->dtype, DType::kBf16);
  ASSERT_TRUE(ParseAscendShapes("4096,1,2048;1024", "DT_BF16;FLOAT16", &s).ok());
  EXPECT_EQ(s.inputs[1].dtype, DType::kFp16);
  EXPECT_EQ(s.inputs[0].elements(), 4096 * 2048);
  ASSERT_TRUE(ParseAscendShapes(";", "FLOAT;FLOAT", &s).ok());  // scalar Add rows
  EXPECT_EQ(s.tensor_count(), 0);
  EXPECT_FALSE(ParseAscendShapes("4096,a", "", &s).ok());
}

TEST(Shapes, HostOpDimsInEitherProfilerForm) {
  // torch_npu's trace_view writes a cpu_op's shapes in the Ascend list form with line breaks (the real
  // CANN 9 / torch_npu 2.10 file beside ascend/pta_llm_decode_910b_torchair_cann9 in its source repo:
  // "Input Dims": "8,1,3584;\r\n3584", "Input type": "BFloat16;\r\nBFloat16"): an RmsNorm of 8 tokens.
  OpShapes npu;
  ASSERT_TRUE(ParseHostOpShapes("8,1,3584;\r\n3584", "BFloat16;\r\nBFloat16", &npu).ok());
  ASSERT_EQ(npu.count, 2);
  EXPECT_EQ(npu.inputs[0].rank, 3);
  EXPECT_EQ(npu.inputs[0].dims[2], 3584);
  EXPECT_EQ(npu.inputs[1].rank, 1);
  EXPECT_EQ(npu.inputs[0].dtype, DType::kBf16);
  EXPECT_EQ(npu.inputs[1].dtype, DType::kBf16);
  // Kineto's nested lists still read as before.
  OpShapes kineto;
  ASSERT_TRUE(ParseHostOpShapes(" [[8, 1, 3584], [3584]]", R"(["c10::BFloat16", "c10::BFloat16"])", &kineto).ok());
  ASSERT_EQ(kineto.count, 2);
  EXPECT_EQ(kineto.inputs[0].dims[0], 8);
  EXPECT_EQ(kineto.inputs[1].dtype, DType::kBf16);
  // Neither form: refused with the text in the message.
  OpShapes bad;
  Status st = ParseHostOpShapes("8,x,3", "", &bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("bad dimension 'x'"), std::string::npos) << st.message();
}

TEST(Dtypes, Spellings) {
  EXPECT_EQ(ParseDType("c10::BFloat16"), DType::kBf16);
  EXPECT_EQ(ParseDType("c10::Half"), DType::kFp16);
  EXPECT_EQ(ParseDType("float"), DType::kFp32);
  EXPECT_EQ(ParseDType("long int"), DType::kInt64);
  EXPECT_EQ(ParseDType("DT_BF16"), DType::kBf16);
  EXPECT_EQ(ParseDType("FLOAT16"), DType::kFp16);
  EXPECT_EQ(ParseDType("INT8"), DType::kInt8);
  EXPECT_EQ(ParseDType("Scalar"), DType::kUnknown);
  EXPECT_DOUBLE_EQ(DTypeBytes(DType::kBf16), 2);
}

TEST(Gemm, AtenSemantics) {
  OpShapes s;
  // aten::addmm from tracelens_h100_qwen1.5_0.5b_hf_inference: bias [1024], input [8944, 1024], weight^T [1024, 1024].
  ASSERT_TRUE(ParseKinetoShapes("[[1024], [8944, 1024], [1024, 1024], [], []]", "", &s).ok());
  GemmDims g = InferGemmDims("aten::addmm", "gemm", s);
  ASSERT_TRUE(g.ok) << g.note;
  EXPECT_EQ(g.m, 8944);
  EXPECT_EQ(g.n, 1024);
  EXPECT_EQ(g.k, 1024);
  // aten::linear: weight [N, K] is used transposed.
  ASSERT_TRUE(ParseKinetoShapes("[[16, 559, 1024], [2816, 1024], []]", "", &s).ok());
  g = InferGemmDims("aten::linear", "gemm", s);
  ASSERT_TRUE(g.ok);
  EXPECT_EQ(g.m, 16 * 559);
  EXPECT_EQ(g.n, 2816);
  EXPECT_EQ(g.k, 1024);
  // aten::bmm batched.
  ASSERT_TRUE(ParseKinetoShapes("[[32, 128, 64], [32, 64, 256]]", "", &s).ok());
  g = InferGemmDims("aten::bmm", "bmm", s);
  ASSERT_TRUE(g.ok);
  EXPECT_EQ(g.batch, 32);
  EXPECT_EQ(g.m, 128);
  EXPECT_EQ(g.n, 256);
  EXPECT_EQ(g.k, 64);
  ASSERT_TRUE(ParseKinetoShapes("[[8, 5], [6, 7]]", "", &s).ok());
  EXPECT_FALSE(InferGemmDims("aten::mm", "gemm", s).ok);
}

// pta_level2_llm_cann83 kernel_details.csv, MatMulV3 rows (checked with a CSV reader):
//   Input Shapes "4096,1024;4096,1024", Output Shapes "4096,4096", DT_BF16, 28 rows
// Transpose flags are not in the profile: M, N = output [4096, 4096]; A's 1024 equals B's 1024, so K = 1024 and
// the op is A x B^T. FLOPs = 2·4096·4096·1024 = 34,359,738,368.
TEST(CostModel, AscendGemmFromFixture) {
  auto p = LoadProfile(kFixtures + "/ascend/pta_level2_llm_cann83");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto g = OperatorCallGraph::Build(*p);
  ASSERT_TRUE(g.ok());
  OpClassification classes = ClassifyProfile(*p, *g);
  HardwareSpec hw = FindHardware("910B3").value();
  int checked = 0, tn = 0;
  for (uint32_t t = 0; t < p->device_tasks.size(); ++t) {
    if (p->Str(p->device_tasks.op_type(t)) != "MatMulV3") continue;
    std::string_view in = p->Str(p->device_tasks.input_shapes(t));
    OpCost c = EstimateTaskCost(*p, *g, classes, hw, t);
    ASSERT_EQ(c.status, CostStatus::kOk) << c.note;
    if (in.find("4096,1024;4096,1024") != std::string_view::npos) {
      EXPECT_EQ(c.m, 4096);
      EXPECT_EQ(c.n, 4096);
      EXPECT_EQ(c.k, 1024);
      EXPECT_DOUBLE_EQ(c.flops, 2.0 * 4096 * 4096 * 1024);
      // bytes = 2 B x (M·K + K·N + M·N) = 2 x (4 Mi + 4 Mi + 16 Mi) elements
      EXPECT_DOUBLE_EQ(c.bytes, 2.0 * (4096.0 * 1024 + 1024.0 * 4096 + 4096.0 * 4096));
      EXPECT_EQ(c.bound, Bound::kCompute);  // intensity 1365 FLOP/B > ridge 184
      // roofline = FLOPs / 294.9e12 (910B3 BF16 cube peak)
      EXPECT_NEAR(c.roofline_ns, 2.0 * 4096 * 4096 * 1024 / 294.9e12 * 1e9, 1e-6);
      EXPECT_NEAR(c.efficiency, c.roofline_ns / static_cast<double>(p->device_tasks.dur[t]), 1e-12);
      EXPECT_NEAR(c.achieved_flops, c.flops / (p->device_tasks.dur[t] * 1e-9), 1.0);
      ++checked;
    }
    // "4096,1024;4096,2048" -> output "1024,2048": A^T x B, K = 4096 (the weight-gradient GEMM).
    if (in.find("4096,1024;4096,2048") != std::string_view::npos) {
      EXPECT_EQ(c.m, 1024);
      EXPECT_EQ(c.n, 2048);
      EXPECT_EQ(c.k, 4096);
      ++tn;
    }
  }
  EXPECT_EQ(checked, 28);  // 28 rows with these shapes
  EXPECT_EQ(tn, 28);
}

// pta_level2_llm_cann83 FlashAttentionScore: query "4096,1,2048", key "4096,1,1024", output softmax_max
// "1,16,4096,8" -> B = 1, N = 16 heads, S_q = 4096; query dim 0 = S, dim 1 = B: SBH layout; D = 2048 / 16 = 128;
// S_kv = key dim 0 = 4096; KV heads = 1024 / 128 = 8 (GQA).
// FLOPs = 4·1·16·4096·4096·128 = 137,438,953,472.
TEST(CostModel, AscendFlashAttentionFromFixture) {
  auto p = LoadProfile(kFixtures + "/ascend/pta_level2_llm_cann83");
  ASSERT_TRUE(p.ok());
  auto g = OperatorCallGraph::Build(*p);
  ASSERT_TRUE(g.ok());
  OpClassification classes = ClassifyProfile(*p, *g);
  HardwareSpec hw = FindHardware("910B3").value();
  int n = 0;
  for (uint32_t t = 0; t < p->device_tasks.size(); ++t) {
    if (p->Str(p->device_tasks.op_type(t)) != "FlashAttentionScore") continue;
    OpCost c = EstimateTaskCost(*p, *g, classes, hw, t);
    ASSERT_EQ(c.status, CostStatus::kOk) << c.note;
    EXPECT_EQ(c.batch, 1);
    EXPECT_EQ(c.heads, 16);
    EXPECT_EQ(c.s_q, 4096);
    EXPECT_EQ(c.s_kv, 4096);
    EXPECT_EQ(c.head_dim, 128);
    EXPECT_EQ(c.phase, AttentionPhase::kPrefill);
    EXPECT_DOUBLE_EQ(c.flops, 4.0 * 16 * 4096 * 4096 * 128);
    // bytes: Q and O 2·(4096·2048·2 B) + K and V 2·(4096·1024·2 B)
    EXPECT_DOUBLE_EQ(c.bytes, 2.0 * 4096 * 2048 * 2 + 2.0 * 4096 * 1024 * 2);
    ++n;
  }
  EXPECT_EQ(n, 28);
}

// msprof_op_summary_gpt3_memoryl0 FlashAttentionScore: query/key/value "8192,2,640", attention mask
// "1,1,8192,8192", outputs flattened (no 4-D softmax_max): the mask's S = 8192 = query dim 0, so the layout
// is SBH with B = 2, S_q = S_kv = 8192, H = 640 (read as BSH it was B = 8192, S = 2: 4,000x too few FLOPs and
// a 7 ms kernel at ~49 TFLOP/s called memory-bound). FLOPs = 4·2·8192·8192·640 = 343,597,383,680.
TEST(CostModel, AscendFlashAttentionLayoutFromTheMask) {
  auto p = LoadProfile(kFixtures + "/ascend/msprof_op_summary_gpt3_memoryl0/op_summary_1.csv");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto g = OperatorCallGraph::Build(*p);
  ASSERT_TRUE(g.ok());
  OpClassification classes = ClassifyProfile(*p, *g);
  HardwareSpec hw = FindHardware("910B3").value();
  int n = 0;
  for (uint32_t t = 0; t < p->device_tasks.size(); ++t) {
    if (p->Str(p->device_tasks.op_type(t)) != "FlashAttentionScore") continue;
    OpCost c = EstimateTaskCost(*p, *g, classes, hw, t);
    ASSERT_EQ(c.status, CostStatus::kOk) << c.note;
    EXPECT_EQ(c.batch, 2);
    EXPECT_EQ(c.s_q, 8192);
    EXPECT_EQ(c.s_kv, 8192);
    EXPECT_DOUBLE_EQ(c.flops, 4.0 * 2 * 8192 * 8192 * 640);
    EXPECT_NE(c.note.find("SBH"), std::string::npos) << c.note;
    ++n;
  }
  EXPECT_EQ(n, 3);  // the 3 rows of ~7 ms; a 4th, cut short at the end of the file, is data loss
}

// pta_advisor_ut_llm_matmul_fa MatMulV2 "81920,4096;8192,512" -> output "4096,512": A and B share no
// dimension (81920 vs 8192: the advisor's unit-test data was edited), and no transpose combination gives
// the output with a common K. The cost model says so instead of inventing K.
TEST(CostModel, InconsistentShapesAreFlagged) {
  auto p = LoadProfile(kFixtures + "/ascend/pta_advisor_ut_llm_matmul_fa/kernel_details.csv");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto g = OperatorCallGraph::Build(*p);
  ASSERT_TRUE(g.ok());
  OpClassification classes = ClassifyProfile(*p, *g);
  HardwareSpec hw = FindHardware("910B3").value();
  int bad = 0, fa = 0;
  for (uint32_t t = 0; t < p->device_tasks.size(); ++t) {
    std::string_view type = p->Str(p->device_tasks.op_type(t));
    OpCost c = EstimateTaskCost(*p, *g, classes, hw, t);
    if (type == "MatMulV2") {
      EXPECT_EQ(c.status, CostStatus::kBadShapes);
      EXPECT_TRUE(std::isnan(c.flops));
      EXPECT_NE(c.note.find("[81920,4096]"), std::string::npos) << c.note;
      ++bad;
    }
    if (type == "FlashAttentionScore" && p->Str(p->device_tasks.input_shapes(t)).find("4096,2,512;") == 0) {
      // "4096,2,512" with softmax_max "2,4,4096,8": SBH, B = 2, N = 4, D = 512 / 4 = 128, S = 4096.
      ASSERT_EQ(c.status, CostStatus::kOk) << c.note;
      EXPECT_DOUBLE_EQ(c.flops, 4.0 * 2 * 4 * 4096 * 4096 * 128);
      ++fa;
    }
  }
  EXPECT_EQ(bad, 4);
  EXPECT_EQ(fa, 4);
}

// The memo gives every task exactly EstimateTaskCost's figures (every field;
// NaN equal to NaN), on real Ascend profiles whose tasks carry their own
// shapes (kernel_details.csv, a profiler DB, a trace_view.json) and on a
// Kineto trace whose tasks take their operator's: expected values are
// EstimateTaskCost's, task by task. On the CANN 8.3 and Kineto ones it reuses
// figures: fewer distinct sets than costed tasks.
// A profile with what costing its tasks reads: its graph, op classes and hardware.
struct CostingInputs {
  Profile profile;
  std::optional<OperatorCallGraph> graph;
  OpClassification classes;
  HardwareSpec hw;
  TaskCostMemo Memo() const { return TaskCostMemo(profile, *graph, classes, hw); }
  OpCost Estimate(uint32_t task) const { return EstimateTaskCost(profile, *graph, classes, hw, task); }
};

// nullptr when the file does not load or its graph does not build.
std::unique_ptr<CostingInputs> LoadForCosting(const std::string& path) {
  auto loaded = LoadProfile(path);
  if (!loaded.ok()) return nullptr;
  auto in = std::make_unique<CostingInputs>();
  in->profile = std::move(*loaded);
  auto graph = OperatorCallGraph::Build(in->profile);
  if (!graph.ok()) return nullptr;
  in->graph.emplace(std::move(*graph));
  in->classes = ClassifyProfile(in->profile, *in->graph);
  in->hw = DetectHardware(in->profile);
  return in;
}

// The memo's figures for a task against EstimateTaskCost's: every field (NaN equal to NaN).
void ExpectSameFigures(const CostFigures& got, const OpCost& want, const std::string& where) {
  auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  ASSERT_EQ(got.status, want.status) << where;
  ASSERT_EQ(got.cls, want.cls) << where;
  ASSERT_EQ(got.sub_kind, want.sub_kind) << where;
  ASSERT_EQ(got.measured_ns, want.measured_ns) << where;
  ASSERT_EQ(got.m, want.m) << where;
  ASSERT_EQ(got.n, want.n) << where;
  ASSERT_EQ(got.k, want.k) << where;
  ASSERT_EQ(got.s_kv, want.s_kv) << where;
  ASSERT_EQ(got.bound, want.bound) << where;
  for (auto [a, b] : {std::pair{got.flops, want.flops}, {got.bytes, want.bytes}, {got.roofline_ns, want.roofline_ns},
                      {got.achieved_flops, want.achieved_flops}, {got.achieved_bandwidth, want.achieved_bandwidth},
                      {got.efficiency, want.efficiency}, {got.compute_efficiency, want.compute_efficiency},
                      {got.bandwidth_efficiency, want.bandwidth_efficiency}})
    ASSERT_TRUE(same(a, b)) << where << ": " << a << " vs " << b;
}

TEST(TaskCostMemo, GivesEachTaskExactlyItsOwnEstimate) {
  for (const std::string path : {"/ascend/pta_level2_llm_cann83", "/ascend/pta_db_level0_2rank_allreduce",
                                  "/ascend/pta_db_level1_alexnet_cann8", "/ascend/pta_trace_view_2024",
                                  "/ascend/pta_vit_patch_embed_910b_conv_fractal_z",
                                  "/kineto/tracelens_h100_qwen1.5_0.5b_hf_inference",
                                  "/kineto/hta_trace_diff_control_a100_2022"}) {
    const std::unique_ptr<CostingInputs> in = LoadForCosting(kFixtures + path);
    ASSERT_NE(in, nullptr) << path;
    TaskCostMemo memo = in->Memo();
    size_t costed = 0;
    for (uint32_t t = 0; t < in->profile.device_tasks.size(); ++t) {
      const OpCost want = in->Estimate(t);
      ExpectSameFigures(memo.Figures(t), want, path + " task " + std::to_string(t));
      if (HasFatalFailure()) return;
      costed += want.has_costs();
    }
    // Level 0 collections (the DB and trace_view fixtures) record no shapes: nothing is costed there.
    if (!path.starts_with("/ascend/pta_db_level0") && !path.starts_with("/ascend/pta_trace_view")) EXPECT_GT(costed, 0u) << path;
    if (path.starts_with("/ascend/pta_level2") || path.starts_with("/kineto/")) {
      EXPECT_GT(memo.shape_set_count(), 0u) << path;
      EXPECT_LT(memo.shape_set_count() * 2, costed) << path << ": figures reused";
    }
  }
}

// Costing without notes (CostNotes::kSkip, what TaskCostMemo asks for) gives
// every figure costing with notes gives, and no text: every field of every
// device task's and host op's cost on real Ascend and Kineto profiles (the
// expected values are the written ones, task by task and op by op).
TEST(EstimateCost, SkippedNotesLeaveEveryFigureAsItIs) {
  auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  auto expect_same = [&](const OpCost& got, const OpCost& want, const std::string& where) {
    EXPECT_EQ(std::tie(got.status, got.cls, got.sub_kind, got.dtype, got.unit, got.phase, got.bound, got.measured_ns),
              std::tie(want.status, want.cls, want.sub_kind, want.dtype, want.unit, want.phase, want.bound,
                       want.measured_ns))
        << where;
    EXPECT_EQ(std::tie(got.batch, got.m, got.n, got.k, got.heads, got.s_q, got.s_kv, got.head_dim),
              std::tie(want.batch, want.m, want.n, want.k, want.heads, want.s_q, want.s_kv, want.head_dim))
        << where;
    for (auto [a, b] : {std::pair{got.flops, want.flops}, {got.bytes, want.bytes}, {got.intensity, want.intensity},
                        {got.peak_flops, want.peak_flops}, {got.bandwidth, want.bandwidth},
                        {got.roofline_ns, want.roofline_ns}, {got.achieved_flops, want.achieved_flops},
                        {got.achieved_bandwidth, want.achieved_bandwidth}, {got.efficiency, want.efficiency},
                        {got.compute_efficiency, want.compute_efficiency},
                        {got.bandwidth_efficiency, want.bandwidth_efficiency}})
      EXPECT_TRUE(same(a, b)) << where << ": " << a << " vs " << b;
    EXPECT_TRUE(got.note.empty() && got.peak_note.empty()) << where << ": " << got.note << got.peak_note;
  };
  for (const std::string path : {"/ascend/pta_level2_llm_cann83", "/ascend/pta_db_level1_alexnet_cann8",
                                  "/ascend/pta_vit_patch_embed_910b_conv_fractal_z",
                                  "/kineto/tracelens_h100_qwen1.5_0.5b_hf_inference",
                                  "/kineto/hta_trace_diff_control_a100_2022"}) {
    const std::unique_ptr<CostingInputs> in = LoadForCosting(kFixtures + path);
    ASSERT_NE(in, nullptr) << path;
    size_t written_notes = 0;
    for (uint32_t t = 0; t < in->profile.device_tasks.size(); ++t) {
      const CostInput skipped = CostInputForTask(in->profile, *in->graph, in->classes, t, CostNotes::kSkip);
      EXPECT_EQ(skipped.shape_origin,
                CostInputForTask(in->profile, *in->graph, in->classes, t, CostNotes::kWrite).shape_origin);
      const OpCost want = in->Estimate(t);
      written_notes += !want.note.empty();
      expect_same(EstimateCost(skipped, in->hw, CostNotes::kSkip), want, path + " task " + std::to_string(t));
      if (HasFailure()) return;
    }
    EXPECT_GT(written_notes, 0u) << path;
    for (uint32_t op = 0; op < in->profile.host_ops.size(); ++op) {
      const CostInput input = CostInputForHostOp(in->profile, *in->graph, in->classes, op, in->hw);
      expect_same(EstimateCost(input, in->hw, CostNotes::kSkip), EstimateCost(input, in->hw),
                  path + " host op " + std::to_string(op));
      if (HasFailure()) return;
    }
  }
}

// Continuous batching: every GEMM has a shape of its own (k = 64 + i). The
// memo keeps two generations of kMaxMemoShapes sets at most: after
// 2 x kMaxMemoShapes + 904 distinct sets, the older generation holds
// kMaxMemoShapes and the recent one 904.
// Every task still gets exactly EstimateTaskCost's figures.
TEST(TaskCostMemo, KeepsTheRecentSetsOfShapesThatDoNotRepeat) {
  constexpr int kOps = 2 * static_cast<int>(TaskCostMemo::kMaxMemoShapes) + 904;
  const std::string path = testing::WriteDistinctGemmTrace(kOps);
  ASSERT_FALSE(path.empty());
  const std::unique_ptr<CostingInputs> in = LoadForCosting(path);
  std::remove(path.c_str());
  ASSERT_NE(in, nullptr);
  ASSERT_EQ(in->profile.device_tasks.size(), static_cast<size_t>(kOps));
  TaskCostMemo memo = in->Memo();
  size_t costed = 0;
  for (uint32_t t = 0; t < in->profile.device_tasks.size(); ++t) {
    const OpCost want = in->Estimate(t);
    ExpectSameFigures(memo.Figures(t), want, "task " + std::to_string(t));
    if (HasFatalFailure()) return;
    costed += want.status == CostStatus::kOk;
    EXPECT_EQ(want.k, 64 + static_cast<int64_t>(t));  // the task's own shape: [[8, k], [k, 64]]
  }
  EXPECT_EQ(costed, static_cast<size_t>(kOps));
  EXPECT_EQ(memo.shape_set_count(), TaskCostMemo::kMaxMemoShapes + 904);
  // The older generation holds tasks kMaxMemoShapes .. 2 kMaxMemoShapes - 1.
  // One of them is found there and moved to the recent one (count
  // unchanged). Task 0's set was dropped with the first generation:
  // estimated again and added (one more).
  const uint32_t older = TaskCostMemo::kMaxMemoShapes + TaskCostMemo::kMaxMemoShapes / 2;
  ExpectSameFigures(memo.Figures(older), in->Estimate(older), "an older task again");
  EXPECT_EQ(memo.shape_set_count(), TaskCostMemo::kMaxMemoShapes + 904);
  ExpectSameFigures(memo.Figures(0), in->Estimate(0), "task 0 again");
  EXPECT_EQ(memo.shape_set_count(), TaskCostMemo::kMaxMemoShapes + 905);
}

// tracelens_h100: aten::mm [[8944, 1024], [1024, 2816]] (raw Input Dims) -> its sm90 GEMM kernel
// gets 2·8944·2816·1024 FLOPs from the operator's shapes.
TEST(CostModel, KinetoKernelTakesItsOperatorsShapes) {
  auto p = LoadProfile(kFixtures + "/kineto/tracelens_h100_qwen1.5_0.5b_hf_inference/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  ASSERT_TRUE(p.ok());
  auto g = OperatorCallGraph::Build(*p);
  ASSERT_TRUE(g.ok());
  OpClassification classes = ClassifyProfile(*p, *g);
  HardwareSpec hw = DetectHardware(*p);
  ASSERT_EQ(hw.id, "H100-SXM");
  int n = 0;
  for (uint32_t t = 0; t < p->device_tasks.size() && n < 5; ++t) {
    int32_t op = g->OperatorOf(t);
    if (op < 0 || p->Str(p->host_ops.name[op]) != "aten::mm") continue;
    if (classes.task_class[t] != OpClass::kMatmul) continue;  // the op also launches a copy kernel: not its GEMM
    OpShapes dims;
    if (!ParseKinetoShapes(p->Str(p->host_ops.input_dims[op]), "", &dims).ok() || dims.tensor_count() != 2) continue;
    if (dims.tensor(0)->dim(0) != 8944 || dims.tensor(0)->dim(1) != 1024 || dims.tensor(1)->dim(1) != 2816) continue;
    OpCost c = EstimateTaskCost(*p, *g, classes, hw, t);
    ASSERT_EQ(c.status, CostStatus::kOk) << c.note;
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8944 * 2816 * 1024);
    EXPECT_EQ(c.dtype, DType::kBf16);
    EXPECT_NE(c.peak_note.find("989.4"), std::string::npos) << c.peak_note;
    ++n;
  }
  EXPECT_GT(n, 0);
}

TEST(CostModel, MissingShapesAreSaid) {
  CostInput in;
  in.cls = OpClass::kMatmul;
  in.measured_ns = 1000;
  in.shape_source = "graph-replayed kernel: no operator, no shapes";
  OpCost c = EstimateCost(in, FindHardware("H100").value());
  EXPECT_EQ(c.status, CostStatus::kNoShapes);
  EXPECT_TRUE(std::isnan(c.flops));
  EXPECT_EQ(c.note, in.shape_source);
  in.cls = OpClass::kCommunication;
  EXPECT_EQ(EstimateCost(in, FindHardware("H100").value()).status, CostStatus::kUnsupported);
}

// A decode SDPA call: query [B=8, H=32, S_q=1, D=128], KV [8, 8, 2048, 128] (GQA), bf16.
CostInput DecodeSdpaInput() {
  CostInput in;
  in.cls = OpClass::kAttention;
  in.sub_kind = "sdpa";
  in.name = "aten::_scaled_dot_product_flash_attention";
  in.has_shapes = ParseKinetoShapes("[[8, 32, 1, 128], [8, 8, 2048, 128], [8, 8, 2048, 128]]",
                                    R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])", &in.shapes)
                      .ok();
  return in;
}

TEST(CostModel, DecodeAttentionAndMemoryBound) {
  CostInput in = DecodeSdpaInput();
  ASSERT_TRUE(in.has_shapes);
  in.measured_ns = 50000;
  OpCost c = EstimateCost(in, FindHardware("H100").value());
  ASSERT_EQ(c.status, CostStatus::kOk) << c.note;
  EXPECT_EQ(c.phase, AttentionPhase::kDecode);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 8 * 32 * 1 * 2048 * 128);
  // bytes: Q + O = 2·8·32·128·2 B; K + V = 2·8·8·2048·128·2 B
  EXPECT_DOUBLE_EQ(c.bytes, 2.0 * 8 * 32 * 128 * 2 + 2.0 * 8 * 8 * 2048 * 128 * 2);
  EXPECT_EQ(c.bound, Bound::kMemory);
  EXPECT_NEAR(c.roofline_ns, c.bytes / 3.35e12 * 1e9, 1e-6);
}

}  // namespace
}  // namespace pypto

namespace pypto {
namespace {

TEST(CostModel, PagedDecodeAttentionReadsUpToTheBlockTable) {
  // vLLM paged_attention_v1 as torch.profiler records it: out and query
  // [num_seqs=4, heads=32, head_dim=128], key cache [num_blocks=2048,
  // kv_heads=8, 128/8=16, block_size=16, x=8], value cache [2048, 8, 128, 16],
  // then scalars, block_tables [4, 64] and seq_lens [4]. The cache tensors are
  // the whole cache (2048 blocks); what one step reads is at most 64 blocks x
  // 16 = 1024 tokens per sequence: K + V = 2 x 4 x 8 x 1024 x 128 x 2 B.
  CostInput in;
  in.cls = OpClass::kAttention;
  in.sub_kind = "paged";
  in.name = "_C::paged_attention_v1";
  ASSERT_TRUE(ParseKinetoShapes("[[4, 32, 128], [4, 32, 128], [2048, 8, 16, 16, 8], [2048, 8, 128, 16], [], [], "
                                "[4, 64], [4], [], []]",
                                R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar",
                                    "Scalar", "int", "int", "Scalar", "Scalar"])",
                                &in.shapes)
                  .ok());
  in.has_shapes = true;
  in.measured_ns = 40000;
  OpCost c = EstimateCost(in, FindHardware("H100").value());
  ASSERT_EQ(c.status, CostStatus::kOk) << c.note;
  EXPECT_EQ(c.phase, AttentionPhase::kDecode);
  EXPECT_EQ(c.s_kv, 1024);
  EXPECT_EQ(c.heads, 32);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 4 * 32 * 1 * 1024 * 128);
  EXPECT_DOUBLE_EQ(c.bytes, 2.0 * 4 * 32 * 128 * 2 + 2.0 * 4 * 8 * 1024 * 128 * 2);  // Q + O, then K + V read
  EXPECT_NE(c.note.find("upper bound"), std::string::npos) << c.note;

  // Flash / CANN layout [num_blocks, block_size=128, kv_heads=8, head_dim].
  CostInput flash = in;
  ASSERT_TRUE(ParseKinetoShapes("[[4, 32, 128], [512, 128, 8, 128], [512, 128, 8, 128], [4, 8]]",
                                R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int"])", &flash.shapes)
                  .ok());
  OpCost f = EstimateCost(flash, FindHardware("H100").value());
  ASSERT_EQ(f.status, CostStatus::kOk) << f.note;
  EXPECT_EQ(f.s_kv, 8 * 128);

  // paged_attention_v2: out, exp_sums [4, 32, 8], max_logits [4, 32, 8] and
  // tmp_out [4, 32, 8, 128] come first; tmp_out is per sequence, not the cache.
  CostInput v2 = in;
  in.name = "_C::paged_attention_v2";
  ASSERT_TRUE(ParseKinetoShapes("[[4, 32, 128], [4, 32, 8], [4, 32, 8], [4, 32, 8, 128], [4, 32, 128], "
                                "[2048, 8, 16, 16, 8], [2048, 8, 128, 16], [], [], [4, 64], [4]]",
                                R"(["c10::BFloat16", "float", "float", "c10::BFloat16", "c10::BFloat16",
                                    "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "int", "int"])",
                                &v2.shapes)
                  .ok());
  OpCost c2 = EstimateCost(v2, FindHardware("H100").value());
  ASSERT_EQ(c2.status, CostStatus::kOk) << c2.note;
  EXPECT_EQ(c2.s_kv, 1024);
  EXPECT_DOUBLE_EQ(c2.bytes, c.bytes);
}

}  // namespace
}  // namespace pypto

namespace pypto {
namespace {

// TaskCostTable gives back what was added: rows without costs through a
// shared set plus their duration, rows with costs whole, never-costed rows as
// CostFigures{}. Built the way EstimateTaskCosts does, two batches.
TEST(TaskCostTable, ReadsBackEveryRowAsAdded) {
  const std::vector<TimeNs> durations = {100, 200, 300, 400, 500};
  TaskCostTable table;
  table.Reset(durations.size(), &durations);
  static constexpr std::string_view kCopy = "copy";
  CostFigures no_shapes;  // a copy without shapes: status, class and sub-kind only
  no_shapes.status = CostStatus::kNoShapes;
  no_shapes.cls = OpClass::kCopy;
  no_shapes.sub_kind = kCopy;
  CostFigures gemm;
  gemm.status = CostStatus::kOk;
  gemm.cls = OpClass::kMatmul;
  gemm.m = 8;
  gemm.n = 4096;
  gemm.k = 4096;
  gemm.flops = 2.0 * 8 * 4096 * 4096;
  gemm.bytes = 2.0 * 4096 * 4096;
  gemm.measured_ns = 300;
  CostFigures odd_time = no_shapes;  // no costs, but a time that is not the duration: kept whole
  odd_time.measured_ns = 7;

  auto timed = [&](TimeNs ns) {  // the copy's figures as costed: measured time = its duration
    CostFigures f = no_shapes;
    f.measured_ns = ns;
    return f;
  };
  // Two batches, as two workers' chunks: tasks 0 and 2, then 3 and 4; task 1 is never costed.
  const std::vector<std::vector<std::pair<uint32_t, CostFigures>>> batches = {
      {{0, timed(100)}, {2, gemm}}, {{3, timed(400)}, {4, odd_time}}};
  for (const auto& rows : batches) {
    TaskCostTable::Batch batch = table.NewBatch();
    for (const auto& [task, figures] : rows) batch.Add(task, figures);
    table.Merge(std::move(batch));
  }

  ASSERT_EQ(table.size(), 5u);
  EXPECT_EQ(table[0].status, CostStatus::kNoShapes);
  EXPECT_EQ(table[0].cls, OpClass::kCopy);
  EXPECT_EQ(table[0].sub_kind, "copy");
  EXPECT_EQ(table[0].measured_ns, 100);  // the duration of task 0
  EXPECT_EQ(table[3].measured_ns, 400);
  EXPECT_TRUE(std::isnan(table[3].flops));
  EXPECT_EQ(table[1].measured_ns, -1);  // never costed: CostFigures{}
  EXPECT_EQ(table[1].status, CostFigures{}.status);
  EXPECT_EQ(table[2].status, CostStatus::kOk);
  EXPECT_DOUBLE_EQ(table[2].flops, 2.0 * 8 * 4096 * 4096);
  EXPECT_EQ(table[2].k, 4096);
  EXPECT_EQ(table[2].measured_ns, 300);
  EXPECT_EQ(table[4].measured_ns, 7);
  EXPECT_EQ(table[4].cls, OpClass::kCopy);
}

// Costed tasks of one op on one shape share a set; each reads back exactly what
// EstimateCost gives for its own duration (bit for bit: the table computes the
// measured part with the same formulas). Figures that are not what the set
// would give back (changed after the estimate) are kept whole.
TEST(TaskCostTable, CostedTasksOfOneShapeShareASetAndKeepTheirOwnTimes) {
  const HardwareSpec hw = FindHardware("H100").value();
  CostInput in = DecodeSdpaInput();
  ASSERT_TRUE(in.has_shapes);
  const std::vector<TimeNs> durations = {50000, 61000, 0, 50000};
  std::vector<CostFigures> expected;
  for (TimeNs ns : durations) {
    in.measured_ns = ns;
    expected.push_back(EstimateCost(in, hw));  // task 2 (duration 0): kNoDuration
  }
  ASSERT_EQ(expected[0].status, CostStatus::kOk);
  ASSERT_EQ(expected[2].status, CostStatus::kNoDuration);
  CostFigures adjusted = expected[3];  // as if a caller had changed the efficiency: not a set's read-back
  adjusted.efficiency = 0.5;

  TaskCostTable table;
  table.Reset(durations.size(), &durations);
  TaskCostTable::Batch batch = table.NewBatch();
  for (uint32_t t = 0; t < 3; ++t) batch.Add(t, expected[t]);
  batch.Add(3, adjusted);
  table.Merge(std::move(batch));

  auto same_bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  for (uint32_t t = 0; t < 3; ++t) {
    const CostFigures got = table[t];
    EXPECT_EQ(got.status, expected[t].status) << t;
    EXPECT_EQ(got.measured_ns, durations[t]) << t;
    EXPECT_EQ(got.phase, AttentionPhase::kDecode) << t;
    EXPECT_TRUE(same_bits(got.flops, expected[t].flops)) << t;
    EXPECT_TRUE(same_bits(got.roofline_ns, expected[t].roofline_ns)) << t;
    EXPECT_TRUE(same_bits(got.achieved_bandwidth, expected[t].achieved_bandwidth)) << t;
    EXPECT_TRUE(same_bits(got.bandwidth_efficiency, expected[t].bandwidth_efficiency)) << t;
    EXPECT_TRUE(same_bits(got.efficiency, expected[t].efficiency)) << t;
  }
  EXPECT_EQ(table.shared_set_count(), 1u);  // tasks 0, 1 and 2
  EXPECT_EQ(table.whole_row_count(), 1u);   // task 3
  EXPECT_EQ(table[3].efficiency, 0.5);  // kept whole, as added
  EXPECT_NE(table[0].efficiency, table[1].efficiency);  // one set, two durations
}

// Thousands of distinct sets (past a storage chunk of 1024), met by two
// workers at once, each set by two tasks: one set per shape, and each task
// reads back its own shape and duration.
TEST(TaskCostTable, DistinctSetsFromTwoWorkersReadBackTheirOwn) {
  constexpr uint32_t kShapes = 3000;
  std::vector<TimeNs> durations(2 * kShapes);
  for (size_t t = 0; t < durations.size(); ++t) durations[t] = 1000 + static_cast<TimeNs>(t);
  auto figures = [&](uint32_t task) {  // task t: m = t mod kShapes + 1 (no costs), measured at its duration
    CostFigures f;
    f.status = CostStatus::kNoShapes;
    f.cls = OpClass::kMatmul;
    f.m = task % kShapes + 1;
    f.measured_ns = durations[task];
    return f;
  };
  TaskCostTable table;
  table.Reset(durations.size(), &durations);
  std::mutex merge;
  auto worker = [&](uint32_t first) {  // worker 0: even tasks, worker 1: odd ones; both meet every shape
    TaskCostTable::Batch batch = table.NewBatch();
    for (uint32_t t = first; t < durations.size(); t += 2) batch.Add(t, figures(t));
    std::lock_guard<std::mutex> lock(merge);
    table.Merge(std::move(batch));
  };
  std::thread other(worker, 1u);
  worker(0);
  other.join();
  EXPECT_EQ(table.shared_set_count(), kShapes);
  EXPECT_EQ(table.whole_row_count(), 0u);
  for (uint32_t t = 0; t < durations.size(); ++t) {
    const CostFigures got = table[t];
    ASSERT_EQ(got.m, t % kShapes + 1) << t;
    ASSERT_EQ(got.measured_ns, durations[t]) << t;
    ASSERT_EQ(got.cls, OpClass::kMatmul) << t;
  }
}

}  // namespace
}  // namespace pypto
