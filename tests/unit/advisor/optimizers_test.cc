// Golden advice and artifacts: a planted Ascend decode profile (bad MatMul
// tiling, cat-grown KV cache, unfused RMSNorm), a planted CUDA one, and two
// real fixtures. Generated files are parsed back / executed.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <simdjson.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "unit/advisor/advisor_test_util.h"
#include "unit/planted/planted_profiles.h"

namespace pypto::advisor::testing {
namespace {

using pypto::testing::BuildPlantedProfile;
using pypto::testing::PlantedFacts;
using pypto::testing::PlantedFlavor;
using pypto::testing::PlantKnobs;

PlantKnobs Planted(PlantedFlavor flavor) {
  PlantKnobs k;
  k.flavor = flavor;
  k.bad_matmul_slowdown = 3.0;
  k.kv_cache_cat = true;
  k.unfused_norm_gap_us = 4.0;
  return k;
}

simdjson::dom::element Parse(simdjson::dom::parser& parser, const std::string& path) {
  simdjson::dom::element e;
  EXPECT_FALSE(parser.load(path).get(e)) << path;
  return e;
}

TEST(PlantedAscend, GoldenAdviceAndAoeTuningInput) {
  PlantedFacts facts;
  // The Ascend attention shapes are BSH (heads merged into H): heads come from
  // the user (--num-heads …); the layers from the structure.
  ModelConfig user;
  user.num_heads = 32;
  user.num_kv_heads = 8;
  user.head_dim = 128;
  auto a = AdviseProfile(BuildPlantedProfile(Planted(PlantedFlavor::kAscend), &facts), {}, user);
  ASSERT_TRUE(a->graph);
  const AdviceReport& adv = a->advice;
  EXPECT_EQ(adv.backend, Backend::kAscend);
  EXPECT_EQ(a->model.num_layers, 4);
  EXPECT_EQ(a->model.hidden, 0);  // BSH: not inferred, not given
  const Recommendation* mm = FindRec(adv, IssueType::kMatmulTiling);
  const Recommendation* kv = FindRec(adv, IssueType::kKvCacheLayout);
  ASSERT_TRUE(mm && kv);
  EXPECT_EQ(mm->rule_id, "matmul_tiling.ascend.aoe");
  EXPECT_TRUE(kv->rule_id == "kv_cache_layout.hf_static_cache" || kv->rule_id == "kv_cache_layout.ascend.paged");
  // Ranked by saving; each speedup is T / (T - saved).
  for (size_t i = 1; i < adv.recommendations.size(); ++i)
    EXPECT_GE(adv.recommendations[i - 1].saved_ns, adv.recommendations[i].saved_ns);
  for (const Recommendation& r : adv.recommendations)
    EXPECT_NEAR(r.estimated_speedup, SpeedupFor(adv.step_time_ns, r.saved_ns), 1e-12);
  EXPECT_GT(mm->saved_ns, 0);
  // The repeat_kv remedy is offered only for a Tile / Expand op: the planted
  // no_pipe_bound op is a MatMulV2, which no num_key_value_heads removes.
  for (const Recommendation& r : adv.recommendations)
    for (const ActionAdvice& x : r.actions) EXPECT_NE(x.id, "avoid_repeat_kv") << r.rule_id;

  // Artifacts.
  const std::string dir = TempDir("planted_ascend");
  AdviceReport written = adv;
  ArtifactInputs in{&a->report, a->graph.get(), &a->classes};
  ASSERT_TRUE(WriteArtifacts(in, dir, false, &written).ok());
  EXPECT_TRUE(std::filesystem::exists(dir + "/aoe_tune_ops.cfg"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/kv_cache_layout_patch.py"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/kv_cache_layout.svg"));  // the picture beside the patch
  {  // The patch carries the given config.
    std::ifstream patch(dir + "/kv_cache_layout_patch.py");
    const std::string text((std::istreambuf_iterator<char>(patch)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"num_kv_heads\": 8,"), std::string::npos);
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/norm_fusion_plan.json"));
  const Recommendation* mm2 = FindRec(written, IssueType::kMatmulTiling);
  ASSERT_TRUE(mm2);
  EXPECT_EQ(mm2->artifacts.size(), 3u);
  // Never overwrite without force.
  AdviceReport again = adv;
  Status refused = WriteArtifacts(in, dir, false, &again);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.ToString().find("exists"), std::string::npos);
  AdviceReport forced = adv;
  EXPECT_TRUE(WriteArtifacts(in, dir, true, &forced).ok());

  // The AOE tune_ops_file: {"tune_ops_name": [...]} with the planted MatMul's kernel name.
  simdjson::dom::parser parser;
  simdjson::dom::element cfg = Parse(parser, dir + "/aoe_tune_ops.cfg");
  simdjson::dom::array names;
  ASSERT_FALSE(cfg["tune_ops_name"].get_array().get(names));
  ASSERT_EQ(names.size(), 1u);
  std::string_view name;
  ASSERT_FALSE(names.at(0).get_string().get(name));
  EXPECT_NE(std::string(name).find(facts.matmul_op), std::string::npos) << name;
  // The detail: the odd N and K (hidden - 7) padded to multiples of 256.
  simdjson::dom::parser p2;
  simdjson::dom::element detail = Parse(p2, dir + "/aoe_tuning_ops.json");
  std::string_view schema;
  ASSERT_FALSE(detail["schema"].get_string().get(schema));
  EXPECT_EQ(schema, kTuningConfigSchema);
  simdjson::dom::element op = detail["ops"].at(0);
  std::string_view op_type, dtypes;
  ASSERT_FALSE(op["op_type"].get_string().get(op_type));
  EXPECT_EQ(op_type, facts.matmul_op);
  ASSERT_FALSE(op["input_dtypes"].get_string().get(dtypes));
  EXPECT_FALSE(dtypes.empty());
  int64_t n = 0, k = 0, pn = 0, pk = 0;
  ASSERT_FALSE(op["gemm"]["n"].get_int64().get(n));
  ASSERT_FALSE(op["gemm"]["k"].get_int64().get(k));
  ASSERT_FALSE(op["padded"]["n"].get_int64().get(pn));
  ASSERT_FALSE(op["padded"]["k"].get_int64().get(pk));
  EXPECT_EQ(n, 4096 - 7);
  EXPECT_EQ(k, 4096 - 7);
  EXPECT_EQ(pn, 4096);
  EXPECT_EQ(pk, 4096);
}

TEST(PlantedAscend, TuneScriptRunsAoeWithTheConfigAndBank) {
  auto a = AdviseProfile(BuildPlantedProfile(Planted(PlantedFlavor::kAscend)));
  ASSERT_TRUE(a->graph);
  TuningConfig config = TilingOptimizer(*a->graph, a->classes).GenerateTuningConfig(a->report, Backend::kAscend);
  ASSERT_FALSE(config.ops.empty());
  const std::string dir = TempDir("aoe_script");
  auto paths = config.Save(dir, false);
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  ASSERT_EQ(paths->size(), 3u);
  // A stand-in `aoe` that records its arguments and TUNE_BANK_PATH.
  const std::string bin = dir + "/bin";
  std::filesystem::create_directories(bin);
  {
    FILE* f = std::fopen((bin + "/aoe").c_str(), "w");
    std::fputs("#!/bin/sh\necho \"$@\" > \"$AOE_LOG\"\necho \"bank=$TUNE_BANK_PATH\" >> \"$AOE_LOG\"\n", f);
    std::fclose(f);
    ::chmod((bin + "/aoe").c_str(), 0755);
  }
  std::filesystem::create_directories(dir + "/aoe_dump");
  const std::string log = dir + "/aoe.log";
  const std::string cmd = "cd " + dir + " && PATH=" + bin + ":$PATH AOE_LOG=" + log + " bash ./aoe_tune.sh tune >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string recorded = ReadFile(log);
  EXPECT_NE(recorded.find("--job_type=2"), std::string::npos) << recorded;
  EXPECT_NE(recorded.find("--model_path=" + dir + "/aoe_dump"), std::string::npos) << recorded;
  EXPECT_NE(recorded.find("--tune_ops_file=" + dir + "/aoe_tune_ops.cfg"), std::string::npos) << recorded;
  EXPECT_NE(recorded.find("bank=" + dir + "/aoe_bank"), std::string::npos) << recorded;
  // Without the tool it says how to get it.
  EXPECT_NE(std::system(("cd " + dir + " && PATH=/usr/bin:/bin bash ./aoe_tune.sh tune 2>/dev/null").c_str()), 0);
}

TEST(PlantedCuda, PaddedGemmShapesWithPredictedGain) {
  auto a = AdviseProfile(BuildPlantedProfile(Planted(PlantedFlavor::kKinetoCuda)));
  ASSERT_TRUE(a->graph);
  EXPECT_EQ(a->advice.backend, Backend::kCuda);
  // Model config inferred from the BNSD attention input dims (32 heads, 8 KV heads, d 128) and the structure.
  EXPECT_EQ(a->model.num_heads, 32);
  EXPECT_EQ(a->model.num_kv_heads, 8);
  EXPECT_EQ(a->model.head_dim, 128);
  EXPECT_EQ(a->model.hidden, 4096);
  EXPECT_EQ(a->model.num_layers, 4);
  const Recommendation* mm = FindRec(a->advice, IssueType::kMatmulTiling);
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->rule_id, "matmul_tiling.gpu.pad");
  TuningConfig config = TilingOptimizer(*a->graph, a->classes).GenerateTuningConfig(a->report, Backend::kCuda);
  const std::string dir = TempDir("cuda_pad");
  auto paths = config.Save(dir, false);
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  ASSERT_EQ(paths->size(), 1u);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = Parse(parser, dir + "/padded_gemm_shapes.json");
  simdjson::dom::array ops;
  ASSERT_FALSE(doc["ops"].get_array().get(ops));
  ASSERT_GE(ops.size(), 1u);
  for (simdjson::dom::element op : ops) {
    int64_t n = 0, k = 0, pn = 0, pk = 0, mult = 0;
    ASSERT_FALSE(op["gemm"]["n"].get_int64().get(n));
    ASSERT_FALSE(op["gemm"]["k"].get_int64().get(k));
    ASSERT_FALSE(op["padded"]["n"].get_int64().get(pn));
    ASSERT_FALSE(op["padded"]["k"].get_int64().get(pk));
    ASSERT_FALSE(op["padded"]["multiple"].get_int64().get(mult));
    EXPECT_EQ(mult, 64);
    EXPECT_EQ(pn % 64, 0);
    EXPECT_EQ(pk % 64, 0);
    EXPECT_GE(pn, n);
    EXPECT_LT(pn - n, 64);
    EXPECT_LT(pk - k, 64);
    double extra = 0, saved = 0, issue_saved = 0, total = 0;
    ASSERT_FALSE(op["padded"]["extra_flops_fraction"].get_double().get(extra));
    EXPECT_NEAR(extra, double(pn) * double(pk) / (double(n) * double(k)) - 1.0, 1e-12);
    ASSERT_FALSE(op["predicted_saved_us"].get_double().get(saved));
    ASSERT_FALSE(op["issue_saved_us"].get_double().get(issue_saved));
    ASSERT_FALSE(op["total_us"].get_double().get(total));
    EXPECT_NEAR(saved, std::max(0.0, issue_saved - total * extra), 0.01);
    EXPECT_GT(saved, 0);
  }
}

TEST(Fixture, AscendAdvisorUtMatmulFaAoeInput) {
  // The MatMulV3 with inner axis 15365 has aic_mac_ratio 0.71: flagged at the
  // yellow level 0.8 (msprof-analyze legacy advisor, diagnosis-rules §1.2).
  DiagnoseOptions o;
  o.tiling_utilization_threshold = 0.8;
  auto a = AdvisePath(std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_advisor_ut_llm_matmul_fa", o);
  ASSERT_TRUE(a->graph);
  EXPECT_EQ(a->advice.backend, Backend::kAscend);
  // Two matmul_tiling recommendations: the FlashAttention one (its saving is
  // the larger) and the MatMulV3 one, which the AOE rule serves.
  const Recommendation* mm = nullptr;
  for (const Recommendation& r : a->advice.recommendations)
    for (const IssueRef& i : r.issues)
      if (r.hotspot_type == IssueType::kMatmulTiling && i.op_name == "MatMulV3") mm = &r;
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->rule_id, "matmul_tiling.ascend.aoe");
  EXPECT_TRUE(FindRec(a->advice, IssueType::kNoPipeBound));
  // Every kernel dynamic but no compile cost in the file: a note, no advice.
  EXPECT_FALSE(FindRec(a->advice, IssueType::kDynamicShapeCompile));
  TuningConfig config = TilingOptimizer(*a->graph, a->classes).GenerateTuningConfig(a->report, Backend::kAscend);
  const std::string dir = TempDir("fixture_fa");
  ASSERT_TRUE(config.Save(dir, false).ok());
  simdjson::dom::parser parser;
  simdjson::dom::element cfg = Parse(parser, dir + "/aoe_tune_ops.cfg");
  std::vector<std::string> names;
  for (simdjson::dom::element e : cfg["tune_ops_name"].get_array()) names.emplace_back(std::string_view(e));
  EXPECT_NE(std::find(names.begin(), names.end(), "aclnnMatmul_MatMulV3Common_MatMulV5"), names.end());
  simdjson::dom::parser p2;
  simdjson::dom::element detail = Parse(p2, dir + "/aoe_tuning_ops.json");
  bool found = false;
  for (simdjson::dom::element op : detail["ops"].get_array()) {
    std::string_view kernel = op["kernel_name"];
    if (kernel != "aclnnMatmul_MatMulV3Common_MatMulV5") continue;
    found = true;
    EXPECT_EQ(std::string_view(op["input_shapes"]), "8192,15365;8192,4096");
    EXPECT_EQ(std::string_view(op["input_dtypes"]), "DT_BF16;DT_BF16");
    EXPECT_EQ(std::string_view(op["input_formats"]), "ND;ND");
    EXPECT_EQ(std::string_view(op["op_type"]), "MatMulV3");
  }
  EXPECT_TRUE(found);
}

TEST(Fixture, KinetoH100QwenAdvice) {
  auto a = AdvisePath(std::string(PYPTO_FIXTURES_DIR) + "/kineto/tracelens_h100_qwen1.5_0.5b_hf_inference");
  ASSERT_TRUE(a->graph);
  EXPECT_EQ(a->advice.backend, Backend::kCuda);
  for (const Recommendation& r : a->advice.recommendations) {
    // CUDA advice never points at torch_npu.
    EXPECT_EQ(r.action.find("torch_npu"), std::string::npos) << r.rule_id;
    EXPECT_NEAR(r.estimated_speedup, SpeedupFor(a->advice.step_time_ns, r.saved_ns), 1e-12);
  }
  EXPECT_EQ(a->advice.recommendations.size() + a->advice.unmatched.size() > 0, !a->report.issues.empty());
}

TEST(KvPatch, PictureOfBothLayoutsFromTheModelConfig) {
  // 8 KV heads x head_dim 128 in bf16, 2048 tokens: a row is 128 x 2 = 256 B;
  // in BSND the next row of the same head is 8 x 256 = 2048 B further; in
  // BNSD the head's 2048 rows are one 2048 x 256 B = 0.50 MiB read.
  ModelConfig m;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.max_seq = 2048;
  m.dtype = "bf16";
  const std::string svg = KVCacheLayoutOptimizer(m).GenerateLayoutPicture().svg;
  EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_NE(svg.find("head 0 reads 2048 rows of 256 B, 2048 B apart: strided"), std::string::npos);
  EXPECT_NE(svg.find("one contiguous 0.50 MiB read per step"), std::string::npos);
  EXPECT_NE(svg.find("4 of 8 heads"), std::string::npos);
  EXPECT_EQ(svg.find("model config incomplete"), std::string::npos);
  // Head-0 cells: every 4th cell in BSND (4 heads drawn), the first 6 in BNSD: 12 filled in all.
  size_t filled = 0;
  for (size_t at = 0; (at = svg.find("#d9534f", at)) != std::string::npos; ++at) ++filled;
  EXPECT_EQ(filled, 12u);
  EXPECT_NE(KVCacheLayoutOptimizer(ModelConfig{}).GenerateLayoutPicture().svg.find("model config incomplete"),
            std::string::npos);
}

TEST(KvPatch, PictureDrawsTheCacheLayoutTheProfileShows) {
  // A decode step's KV cache grown by aten::cat of [8, 4, 570, 128] and
  // [8, 4, 1, 128] (bf16): the sequence is dim 2, so the cache is already BNSD
  // with 4 KV heads (the model config's 28 are the query heads after
  // repeat_kv). Drawn as that: grown by cat now, preallocated proposed.
  // 571 rows x 256 B x 4 heads = 584704 B = 0.56 MiB copied per layer.
  OpShapes shapes;
  ASSERT_TRUE(ParseKinetoShapes("[[8, 4, 570, 128], [8, 4, 1, 128], []]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]", &shapes).ok());
  std::optional<KvCacheCat> cat = ReadKvCacheCat(shapes);
  ASSERT_TRUE(cat.has_value());
  EXPECT_TRUE(cat->bnsd());
  EXPECT_EQ(cat->kv_heads, 4);
  EXPECT_EQ(cat->head_dim, 128);
  ModelConfig m;
  m.num_heads = 28;
  m.num_kv_heads = 28;
  m.head_dim = 128;
  m.max_seq = 571;
  m.dtype = "bf16";
  const std::string svg = KVCacheLayoutOptimizer(m).GenerateLayoutPicture(cat).svg;
  EXPECT_NE(svg.find("current: BNSD [batch, kv_heads, seq, head_dim], grown by torch.cat every step"), std::string::npos);
  EXPECT_NE(svg.find("0.56 MiB per layer"), std::string::npos) << svg;
  EXPECT_NE(svg.find("4 KV heads x head_dim 128"), std::string::npos);
  EXPECT_EQ(svg.find("current: BSND"), std::string::npos);
  // The same cat along dim 1 ([8, 570, 4, 128]): a token-major cache, drawn as BSND.
  ASSERT_TRUE(ParseKinetoShapes("[[8, 570, 4, 128], [8, 1, 4, 128], []]", "", &shapes).ok());
  cat = ReadKvCacheCat(shapes);
  ASSERT_TRUE(cat && cat->bsnd());
  const std::string bsnd = KVCacheLayoutOptimizer(m).GenerateLayoutPicture(cat).svg;
  EXPECT_NE(bsnd.find("current: BSND [batch, seq, kv_heads, head_dim] (token-major), as the cache's cat shows"),
            std::string::npos);
  EXPECT_NE(bsnd.find("256 B, 1024 B apart"), std::string::npos);  // 4 heads x 256 B
}

TEST(KvPatch, TemplateFilledWithTheModelConfig) {
  ModelConfig m;
  m.arch = "llama";
  m.num_layers = 2;
  m.num_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 16;
  m.max_seq = 64;
  auto patch = KVCacheLayoutOptimizer(m).GenerateLayoutTransformPatch();
  ASSERT_TRUE(patch.ok());
  const std::string& t = patch->text;
  EXPECT_NE(t.find("\"num_kv_heads\": 2,"), std::string::npos);
  EXPECT_NE(t.find("\"max_seq\": 64,"), std::string::npos);
  EXPECT_NE(t.find("def apply_kv_cache_layout_optimization(model"), std::string::npos);
  EXPECT_NE(t.find("BSND (B, S, N, D)"), std::string::npos);
  EXPECT_NE(t.find("BNSD (B, N, S, D)"), std::string::npos);
  EXPECT_EQ(t.find("@@"), std::string::npos);
  ModelConfig unknown;
  auto p2 = KVCacheLayoutOptimizer(unknown).GenerateLayoutTransformPatch();
  ASSERT_TRUE(p2.ok());
  EXPECT_NE(p2->text.find("\"max_seq\": None,"), std::string::npos);
}



// pp2dp2 ranks 1 and 3 (step_trace_time / communication.json): device 1
// exposes 441.7 ms of communication but waits 170.8 ms of its 263.7 ms of
// wait + transfer (wait share 0.65: it waits for device 3's compute), device 3
// exposes 261.5 ms waiting 0.8 ms of 93.8 ms. Overlapping collectives with
// compute is offered for device 3 only, and its gain is min(261.5 ms exposed,
// 401.1 ms compute) = 261.5 ms, not the 441.7 ms device 1 spends waiting.
TEST(Fixture, OverlapIsNotOfferedToARankThatMostlyWaitsForAPeer) {
  auto a = AdvisePath(std::string(PYPTO_FIXTURES_DIR) + "/ascend/pta_level2_llm_pp2dp2_ranks1_3");
  ASSERT_TRUE(a);
  const ActionAdvice* overlap = nullptr;
  for (const Recommendation& r : a->advice.recommendations)
    for (const ActionAdvice& act : r.actions)
      if (act.id == "overlap_grad_reduce") overlap = &act;
  ASSERT_NE(overlap, nullptr);
  EXPECT_NEAR(double(overlap->saved_ns) / 1e6, 261.498, 0.01);
  EXPECT_NE(overlap->prerequisite.find("wait share is at most 0.5"), std::string::npos);
}

}  // namespace
}  // namespace pypto::advisor::testing
