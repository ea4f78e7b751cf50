// LLM structure on a synthetic decoder profile built here: N layers x M steps
// (one prefill step, then decode steps), Ascend-style tasks with shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "analysis/structure.h"
#include "importers/detect.h"

namespace pypto {
namespace {

constexpr int kLayers = 6;
constexpr int kDecodeSteps = 5;
constexpr int kPrompt = 64;
constexpr TimeNs kUs = 1000;

// The structure of a profile: its graph and op classes built here.
StatusOr<ModelStructure> StructureOf(Profile& p) {
  PYPTO_ASSIGN_OR_RETURN(OperatorCallGraph g, OperatorCallGraph::Build(p));
  const OpClassification classes = ClassifyProfile(p, g);
  return AnalyzeStructure(p, g, classes);
}

struct Builder {
  Profile p;
  uint32_t stream = 0;
  TimeNs now = 1'000'000;

  Builder() { stream = p.DeviceTrack("npu0", "stream 2", 0, 2); }

  void Task(const char* type, const std::string& shapes, const std::string& types, const std::string& outputs,
            TimeNs dur_us) {
    DeviceTaskRow r;
    r.name = p.Intern(std::string("aclnnX_") + type + "_" + type);
    r.op_type = p.Intern(type);
    r.kind = DeviceTaskKind::kKernel;
    r.core_type = p.Intern("AI_CORE");
    r.track = stream;
    r.ts = now;
    r.dur = dur_us * kUs;
    r.input_shapes = p.Intern(shapes);
    r.input_types = p.Intern(types);
    r.output_shapes = p.Intern(outputs);
    r.output_types = p.Intern("DT_BF16");
    p.device_tasks.Add(r);
    now += (dur_us + 2) * kUs;
  }

  // One forward pass over T tokens with query length S (prefill S = T, decode S = 1) and KV length L.
  void Forward(int64_t tokens, int64_t s_q, int64_t kv_len, TimeNs gemm_us) {
    const std::string t = std::to_string(tokens), sq = std::to_string(s_q), kv = std::to_string(kv_len);
    Task("GatherV2", "151936,1024;" + t, "DT_BF16;INT64", t + ",1024", 5);
    for (int l = 0; l < kLayers; ++l) {
      Task("RmsNorm", t + ",1024;1024", "DT_BF16;DT_BF16", t + ",1024", 3);
      Task("MatMulV2", t + ",1024;1024,2048", "DT_BF16;DT_BF16", t + ",2048", gemm_us);
      Task("RotaryPositionEmbedding", t + ",1,8,128;" + t + ",1,1,128", "DT_BF16;DT_BF16", t + ",1,8,128", 3);
      Task("ScatterUpdate", "1,8," + kv + ",128;" + t + ";" + t + ",8,128", "DT_BF16;INT64;DT_BF16", "1,8," + kv + ",128", 2);
      // query [S, B, H] (SBH), softmax_max [B, N, S, 8] tells B = 1, N = 8, S = s_q.
      Task("FlashAttentionScore", sq + ",1,1024;" + kv + ",1,1024;" + kv + ",1,1024", "DT_BF16;DT_BF16;DT_BF16",
           "1,8," + sq + ",8;1,8," + sq + ",8;;" + sq + ",1,1024", 6);
      Task("MatMulV2", t + ",1024;1024,1024", "DT_BF16;DT_BF16", t + ",1024", gemm_us);
      Task("Add", t + ",1024;" + t + ",1024", "DT_BF16;DT_BF16", t + ",1024", 2);
      Task("RmsNorm", t + ",1024;1024", "DT_BF16;DT_BF16", t + ",1024", 3);
      Task("MatMulV2", t + ",1024;1024,6144", "DT_BF16;DT_BF16", t + ",6144", gemm_us);
      Task("SwiGlu", t + ",6144", "DT_BF16", t + ",3072", 3);
      Task("MatMulV2", t + ",3072;3072,1024", "DT_BF16;DT_BF16", t + ",1024", gemm_us);
      Task("Add", t + ",1024;" + t + ",1024", "DT_BF16;DT_BF16", t + ",1024", 2);
    }
    Task("RmsNorm", t + ",1024;1024", "DT_BF16;DT_BF16", t + ",1024", 3);
    Task("MatMulV2", t + ",1024;1024,151936", "DT_BF16;DT_BF16", t + ",151936", gemm_us * 4);
    Task("ArgMaxV2", t + ",151936", "DT_BF16", t, 4);
  }

  void Step(int64_t number, TimeNs start) {
    StepRow row;
    row.number = number;
    row.name = p.Intern("step " + std::to_string(number));
    row.ts = start;
    row.dur = now - start;
    p.steps.rows.push_back(row);
    now += 500 * kUs;  // host gap between steps
  }
};

TEST(Structure, SyntheticDecoderLayersAndPhases) {
  Builder b;
  TimeNs start = b.now;
  b.Forward(kPrompt, kPrompt, kPrompt, 40);
  b.Step(0, start);
  for (int i = 0; i < kDecodeSteps; ++i) {
    start = b.now;
    // The third decode step is slower (a straggler): p99 picks it, p50 does not.
    b.Forward(1, 1, kPrompt + 1 + i, i == 2 ? 30 : 8);
    b.Step(i + 1, start);
  }
  auto g = OperatorCallGraph::Build(b.p);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->Steps().size(), static_cast<size_t>(1 + kDecodeSteps));
  OpClassification classes = ClassifyProfile(b.p, *g);
  auto s = AnalyzeStructure(b.p, *g, classes);
  ASSERT_TRUE(s.ok()) << s.status().ToString();

  EXPECT_EQ(s->layers, kLayers);
  EXPECT_EQ(s->layer.period, 12);  // ops per layer above
  EXPECT_TRUE(s->layer.has_attention);
  EXPECT_TRUE(s->layer.has_norm);
  EXPECT_TRUE(s->layer.has_rope);
  EXPECT_TRUE(s->layer.has_kv_cache_update);
  ASSERT_EQ(s->layer.roles.size(), 12u);
  EXPECT_EQ(s->layer.roles[0], BlockKind::kNorm);        // rotated to start at the input norm
  EXPECT_EQ(s->layer.roles[1], BlockKind::kAttention);   // QKV projection
  EXPECT_EQ(s->layer.roles[2], BlockKind::kRope);
  EXPECT_EQ(s->layer.roles[3], BlockKind::kKvCacheUpdate);
  EXPECT_EQ(s->layer.roles[4], BlockKind::kAttention);
  EXPECT_EQ(s->layer.roles[5], BlockKind::kAttention);   // output projection closes the attention block
  EXPECT_EQ(s->layer.roles[8], BlockKind::kFfn);         // gate/up GEMM
  EXPECT_EQ(s->layer.roles[9], BlockKind::kFfn);         // SwiGlu
  for (const StepStructure& st : s->steps) {
    EXPECT_EQ(st.pattern.layers, kLayers) << "step " << st.step;
    EXPECT_EQ(st.pattern.prologue_ops, 1);  // embedding gather
    EXPECT_EQ(st.pattern.epilogue_ops, 3);  // final norm, lm_head, argmax
  }

  ASSERT_EQ(s->steps.size(), static_cast<size_t>(1 + kDecodeSteps));
  EXPECT_EQ(s->steps[0].phase, StepPhase::kPrefill);
  EXPECT_EQ(s->steps[0].query_len, kPrompt);
  EXPECT_EQ(s->steps[0].tokens, kPrompt);
  for (int i = 1; i <= kDecodeSteps; ++i) {
    EXPECT_EQ(s->steps[i].phase, StepPhase::kDecode) << s->steps[i].phase_reason;
    EXPECT_EQ(s->steps[i].query_len, 1);
    EXPECT_EQ(s->steps[i].kv_len, kPrompt + i);  // the KV length grows by one token per step
  }
  EXPECT_EQ(s->prefill_steps, 1u);
  EXPECT_EQ(s->decode_steps, static_cast<uint64_t>(kDecodeSteps));

  // Per-token latency = decode step latency (nearest-rank percentiles).
  std::vector<TimeNs> lat;
  for (int i = 1; i <= kDecodeSteps; ++i) lat.push_back(g->Steps()[i].latency_ns());
  std::sort(lat.begin(), lat.end());
  EXPECT_EQ(s->decode_latency.count, static_cast<uint64_t>(kDecodeSteps));
  EXPECT_DOUBLE_EQ(s->decode_latency.p50_ms, lat[2] / 1e6);  // ceil(0.5·5) = 3rd
  EXPECT_DOUBLE_EQ(s->decode_latency.p90_ms, lat[4] / 1e6);  // ceil(0.9·5) = 5th: the straggler
  EXPECT_DOUBLE_EQ(s->decode_latency.p99_ms, lat[4] / 1e6);
  EXPECT_GT(s->decode_latency.p99_ms, s->decode_latency.p50_ms * 1.5);

  // KV-cache writes: one ScatterUpdate per layer per step.
  EXPECT_EQ(s->kv_cache_update_count, static_cast<uint64_t>(kLayers * (1 + kDecodeSteps)));
}

TEST(Structure, PagedKernelWinsOverTokenRatio) {
  Builder b;
  auto forward = [&](int64_t tokens) {
    const std::string t = std::to_string(tokens);
    for (int l = 0; l < 3; ++l) {
      b.Task("RmsNorm", t + ",512;512", "DT_BF16;DT_BF16", t + ",512", 3);
      b.Task("MatMulV2", t + ",512;512,512", "DT_BF16;DT_BF16", t + ",512", 5);
      b.Task("PagedAttention", "", "", "", 5);  // no shapes
      b.Task("MatMulV2", t + ",512;512,512", "DT_BF16;DT_BF16", t + ",512", 5);
    }
  };
  TimeNs start = b.now;
  forward(128);
  b.Step(0, start);
  for (int i = 0; i < 3; ++i) {
    start = b.now;
    forward(4);
    b.Step(i + 1, start);
  }
  auto g = OperatorCallGraph::Build(b.p);
  ASSERT_TRUE(g.ok());
  OpClassification classes = ClassifyProfile(b.p, *g);
  auto s = AnalyzeStructure(b.p, *g, classes);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->layers, 3);
  // A named paged-attention kernel marks its step decode (the kernel is the decode path); the token ratio
  // (128 / 4 = 32 >= 4) is used only for steps still unknown, so every step here is decode.
  for (const StepStructure& st : s->steps) EXPECT_EQ(st.phase, StepPhase::kDecode) << st.phase_reason;
  EXPECT_EQ(s->steps[0].tokens, 128);
  EXPECT_EQ(s->steps[1].tokens, 4);
}

TEST(Structure, UnfusedAttentionQueryLengthOneIsDecode) {
  // Eager attention without a fused kernel: BatchMatMulV2 Q.K^T [32,1,128] x
  // [32,128,L] -> [32,1,L], SoftmaxV2, BatchMatMulV2 [32,1,L] x [32,L,128]:
  // M = S_q = 1 in every step while the KV length L grows 512, 513, 514.
  // Every step has the same token count, so the token-ratio rule cannot tell.
  Builder b;
  for (int step = 0; step < 3; ++step) {
    const std::string kv = std::to_string(512 + step);
    const TimeNs start = b.now;
    for (int l = 0; l < 3; ++l) {
      b.Task("RmsNorm", "1,4096;4096", "DT_BF16;DT_BF16", "1,4096", 3);
      b.Task("MatMulV2", "1,4096;4096,4096", "DT_BF16;DT_BF16", "1,4096", 5);
      b.Task("BatchMatMulV2", "32,1,128;32,128," + kv, "DT_BF16;DT_BF16", "32,1," + kv, 4);
      b.Task("SoftmaxV2", "32,1," + kv, "DT_BF16", "32,1," + kv, 2);
      b.Task("BatchMatMulV2", "32,1," + kv + ";32," + kv + ",128", "DT_BF16;DT_BF16", "32,1,128", 4);
      b.Task("MatMulV2", "1,4096;4096,4096", "DT_BF16;DT_BF16", "1,4096", 5);
    }
    b.Step(step, start);
  }
  auto s = StructureOf(b.p);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->steps.size(), 3u);
  for (size_t k = 0; k < s->steps.size(); ++k) {
    EXPECT_EQ(s->steps[k].phase, StepPhase::kDecode) << s->steps[k].phase_reason;
    EXPECT_EQ(s->steps[k].kv_len, 512 + int64_t(k));
    EXPECT_NE(s->steps[k].phase_reason.find("unfused attention Q.K^T S_q = 1"), std::string::npos)
        << s->steps[k].phase_reason;
    EXPECT_EQ(s->steps[k].phase_rule, "unfused attention Q.K^T S_q");
  }
  EXPECT_EQ(s->decode_steps, 3u);
}

TEST(Structure, LatencyStats) {
  LatencyStats s = ComputeLatencyStats({5'000'000, 1'000'000, 3'000'000, 2'000'000, 4'000'000});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.p50_ms, 3.0);
  EXPECT_DOUBLE_EQ(s.p90_ms, 5.0);
  EXPECT_DOUBLE_EQ(s.mean_ms, 3.0);
  EXPECT_DOUBLE_EQ(s.min_ms, 1.0);
  EXPECT_EQ(ComputeLatencyStats({}).count, 0u);
}

}  // namespace
}  // namespace pypto

namespace pypto {
namespace {

TEST(Structure, PhasesFromTokenCountsWithoutAttention) {
  // No attention kernel shapes: the GEMM rows decide (>= 4x the smallest step's rows = prefill).
  Builder b;
  auto forward = [&](int64_t tokens) {
    const std::string t = std::to_string(tokens);
    for (int l = 0; l < 3; ++l) {
      b.Task("RmsNorm", t + ",512;512", "DT_BF16;DT_BF16", t + ",512", 3);
      b.Task("MatMulV2", t + ",512;512,512", "DT_BF16;DT_BF16", t + ",512", 5);
      b.Task("FlashAttentionScore", "", "", "", 5);  // no shapes recorded
      b.Task("MatMulV2", t + ",512;512,512", "DT_BF16;DT_BF16", t + ",512", 5);
    }
  };
  TimeNs start = b.now;
  forward(128);
  b.Step(0, start);
  for (int i = 0; i < 2; ++i) {
    start = b.now;
    forward(4);
    b.Step(i + 1, start);
  }
  auto s = StructureOf(b.p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->layers, 3);
  EXPECT_EQ(s->steps[0].phase, StepPhase::kPrefill) << s->steps[0].phase_reason;
  EXPECT_EQ(s->steps[1].phase, StepPhase::kDecode) << s->steps[1].phase_reason;
  EXPECT_EQ(s->steps[2].phase, StepPhase::kDecode);
}

}  // namespace
}  // namespace pypto

namespace pypto {
namespace {

TEST(Structure, KvCacheGrowingByOneTokenIsDecode) {
  // Steps whose attention shapes are not recorded (a custom kernel, names
  // only) but whose host ops grow the KV cache by aten::cat: [8,4,L,128] +
  // [8,4,1,128] in every step, L = 512, 513, 514. One token added per step
  // is decode; the same GEMM rows in every step leave the token ratio silent.
  Builder b;
  for (int step = 0; step < 3; ++step) {
    const TimeNs start = b.now;
    HostOpRow cat;
    cat.name = b.p.Intern("aten::cat");
    cat.kind = HostOpKind::kOperator;
    cat.track = b.p.TrackFor("1", "1", TrackKind::kHostThread);
    cat.ts = b.now;
    cat.dur = 3 * kUs;
    cat.input_dims = b.p.Intern("[[8, 4, " + std::to_string(512 + step) + ", 128], [8, 4, 1, 128], []]");
    cat.input_types = b.p.Intern("[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]");
    b.p.host_ops.Add(cat);
    for (int l = 0; l < 3; ++l) {
      b.Task("MatMulV2", "8,4096;4096,4096", "DT_BF16;DT_BF16", "8,4096", 5);
      b.Task("custom_attention_kernel", "", "", "", 4);
      b.Task("MatMulV2", "8,4096;4096,4096", "DT_BF16;DT_BF16", "8,4096", 5);
    }
    b.Step(step, start);
  }
  auto s = StructureOf(b.p);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->steps.size(), 3u);
  for (size_t k = 0; k < s->steps.size(); ++k) {
    EXPECT_EQ(s->steps[k].phase, StepPhase::kDecode) << s->steps[k].phase_reason;
    EXPECT_EQ(s->steps[k].phase_rule, "KV cache grows by one");
    EXPECT_NE(s->steps[k].phase_reason.find("adds 1 token to " + std::to_string(512 + k)), std::string::npos)
        << s->steps[k].phase_reason;
  }
}

TEST(Structure, StatisticsWithOnlyADecodeAttentionKernelAreDecode) {
  // The CANN 9 torchair decode fixture holds op_statistic.csv and
  // step_trace_time.csv only: its attention op type is IncreFlashAttention
  // (36 calls, MIX_AIC), a decode kernel, and no other attention type.
  auto p = LoadProfile(std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_llm_decode_910b_torchair_cann9");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto s = StructureOf(*p);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->steps.size(), 1u);
  EXPECT_EQ(s->steps[0].phase, StepPhase::kDecode);
  EXPECT_EQ(s->steps[0].phase_rule, "op_statistic attention type");
  EXPECT_NE(s->steps[0].phase_reason.find("IncreFlashAttention"), std::string::npos);
}

// A CPU-only profile (no device: the graph makes a compute task of each operator doing its own work) of
// 4 identical layers, each: aten::pow, then aten::linear around aten::mm. Whether the linear or its mm
// is the task depends on the linear's own time (kCpuTaskMinSelfShare): here the linear's self share is
// 60 % in layers 0 and 2 and 10 % in layers 1 and 3, as timing noise does. The task sequence then
// repeats every 2 layers; the top-level operators repeat every layer.
TEST(Structure, CpuOnlyLayersComeFromTheTopLevelOperatorsNotTheNoisyTaskChoice) {
  Profile p;
  const uint32_t thread = p.TrackFor("100", "1", TrackKind::kHostThread);
  auto op = [&](const char* name, TimeNs ts_us, TimeNs dur_us, const char* dims) {
    HostOpRow o;
    o.name = p.Intern(name);
    o.category = p.Intern("cpu_op");
    o.kind = HostOpKind::kOperator;
    o.track = thread;
    o.ts = ts_us * kUs;
    o.dur = dur_us * kUs;
    o.input_dims = p.Intern(dims);
    o.input_types = p.Intern("[\"float\", \"float\"]");
    p.host_ops.Add(o);
  };
  TimeNs t = 1000;
  for (int layer = 0; layer < 4; ++layer) {
    op("aten::pow", t, 20, "[[1, 64], []]");
    const TimeNs mm_us = layer % 2 == 0 ? 40 : 90;  // of a 100 us linear: self share 60 % / 10 %
    op("aten::linear", t + 30, 100, "[[1, 64], [64, 64]]");
    op("aten::mm", t + 35, mm_us, "[[1, 64], [64, 64]]");
    t += 200;
  }
  auto g = OperatorCallGraph::Build(p);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_GT(g->stats().cpu_compute_tasks, 0u);
  // The tasks: pow, linear, pow, mm, pow, linear, pow, mm.
  std::vector<std::string> task_names;
  for (size_t i = 0; i < p.device_tasks.size(); ++i) task_names.emplace_back(p.Str(p.device_tasks.name[i]));
  EXPECT_EQ(task_names, (std::vector<std::string>{"aten::pow", "aten::linear", "aten::pow", "aten::mm", "aten::pow",
                                                  "aten::linear", "aten::pow", "aten::mm"}));
  const OpClassification classes = ClassifyProfile(p, *g);
  auto s = AnalyzeStructure(p, *g, classes);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // Top-level operators pow, linear per layer: a unit of 2 operators, 4 times.
  EXPECT_EQ(s->layers, 4);
  EXPECT_EQ(s->layer.period, 2);
  ASSERT_EQ(s->steps.size(), 1u);
  EXPECT_FALSE(s->steps[0].from_device_tasks);
}

}  // namespace
}  // namespace pypto

namespace pypto {
namespace {

// The longest run of i with symbol[i] == symbol[i + p], read place by place.
int64_t LongestMatchRun(const std::vector<StrId>& symbol, int64_t p) {
  int64_t run = 0, best = 0;
  for (int64_t i = 0; i + p < static_cast<int64_t>(symbol.size()); ++i) {
    run = symbol[i] == symbol[i + p] ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

// The sampled test agrees with the place-by-place scan on every period and
// length, on sequences with planted repeats (a "layer" of 7 symbols repeated
// with noise) and on random ones over 2 and 3 symbols (many short runs).
TEST(LayerPeriod, SampledRunTestAgreesWithTheFullScan) {
  std::mt19937 rng(20261205);
  for (int trial = 0; trial < 60; ++trial) {
    const int alphabet = 2 + trial % 3;
    std::vector<StrId> symbol(50 + rng() % 300);
    for (size_t i = 0; i < symbol.size(); ++i)
      symbol[i] = trial % 2 == 0 ? static_cast<StrId>(rng() % alphabet) : static_cast<StrId>(1 + i % 7);
    if (trial % 2 == 1)
      for (int noise = 0; noise < trial / 4; ++noise) symbol[rng() % symbol.size()] = 99;
    for (int64_t p = 1; p < static_cast<int64_t>(symbol.size()); ++p) {
      const int64_t longest = LongestMatchRun(symbol, p);
      for (int64_t length = 1; length <= longest + 2; ++length)
        ASSERT_EQ(HasMatchRun(symbol, p, length), longest >= length)
            << "trial " << trial << " p " << p << " length " << length << " longest " << longest;
    }
  }
  EXPECT_TRUE(HasMatchRun({1, 2, 1, 2}, 2, 0));  // a run of 0 always exists
  EXPECT_FALSE(HasMatchRun({1, 2}, 5, 1));       // p beyond the sequence
}

}  // namespace
}  // namespace pypto
