// The rule library (data/advisor/rules/*.json): loads, covers every issue type
// on every backend it applies to, every action says how its gain is
// estimated, and bad rule files are rejected with the file and the reason.
#include <gtest/gtest.h>

#include <set>

#include "advisor/rule_library.h"
#include "advisor/tuning_advisor.h"

namespace pypto::advisor {
namespace {

const RuleLibrary& Lib() {
  auto lib = BuiltinRuleLibrary();
  EXPECT_TRUE(lib.ok()) << lib.status().ToString();
  return **lib;
}

TEST(RuleLibrary, LoadsOneFilePerIssueType) {
  const RuleLibrary& lib = Lib();
  EXPECT_EQ(lib.files.size(), kIssueTypeCount);
  EXPECT_GE(lib.rules.size(), 20u);
}

TEST(RuleLibrary, EveryIssueTypeHasARulePerBackendItAppliesTo) {
  const RuleLibrary& lib = Lib();
  for (size_t t = 0; t < kIssueTypeCount; ++t) {
    const IssueType type = IssueType(t);
    ASSERT_FALSE(lib.applies_to[t].empty()) << IssueTypeName(type);
    for (Backend b : lib.applies_to[t]) {
      EXPECT_FALSE(lib.RulesFor(type, b).empty()) << IssueTypeName(type) << " on " << BackendName(b);
      // Whatever the phase, an issue of this type without other features gets a rule.
      for (const char* phase : {"", "prefill", "decode"}) {
        Issue issue;
        issue.type = type;
        issue.phase = phase;
        EXPECT_TRUE(SelectRule(lib, issue, ModelConfig{}, b))
            << IssueTypeName(type) << " on " << BackendName(b) << " phase '" << phase << "'";
      }
    }
  }
  // Ascend-only detectors apply only to Ascend; the general ones to all four backends.
  for (IssueType t : {IssueType::kAicpuFallback, IssueType::kDynamicShapeCompile, IssueType::kNoPipeBound})
    EXPECT_EQ(lib.applies_to[size_t(t)], std::vector<Backend>{Backend::kAscend}) << IssueTypeName(t);
  for (IssueType t : {IssueType::kMatmulTiling, IssueType::kAttentionMemoryBound, IssueType::kKvCacheLayout,
                      IssueType::kNormLaunchOverhead, IssueType::kHostBound, IssueType::kFusibleSequence})
    EXPECT_EQ(lib.applies_to[size_t(t)].size(), kBackendCount) << IssueTypeName(t);
}

TEST(RuleLibrary, EveryRuleCitesSourcesAndEveryActionItsGain) {
  for (const Rule& r : Lib().rules) {
    EXPECT_FALSE(r.sources.empty()) << r.id;
    EXPECT_FALSE(r.title.empty()) << r.id;
    for (const RuleAction& a : r.actions) {
      EXPECT_FALSE(a.gain.source.empty()) << r.id << "/" << a.id;
      EXPECT_FALSE(a.prerequisite.empty()) << r.id << "/" << a.id;
      if (a.gain.basis == GainBasis::kMeasuredGap) EXPECT_FALSE(a.gain.metric.empty()) << r.id << "/" << a.id;
    }
  }
}

TEST(RuleLibrary, RemediesOfTheSpecAreThere) {
  // The concrete remedies of diagnosis-rules §5-7 each appear in some action.
  std::string all;
  for (const Rule& r : Lib().rules)
    for (const RuleAction& a : r.actions) all += a.action + "\n" + a.description + "\n";
  for (const char* needle :
       {"aoe --job_type=2", "TUNE_BANK_PATH", "npu_fusion_attention", "npu_incre_flash_attention",
        "npu_fused_infer_attention_score", "input_layout=\"BNSD\"", "input_layout=\"BSND\"", "TND", "npu_rms_norm",
        "npu_add_rms_norm", "npu_rotary_mul", "npu_swiglu", "TASK_QUEUE_ENABLE=2", "CPU_AFFINITY_CONF",
        "set_compile_mode(jit_compile=False)", "torchair", "torch.cuda.graph", "reduce-overhead",
        "cache_implementation = \"static\"", "attn_implementation=\"sdpa\"", ".item()", "int32"})
    EXPECT_NE(all.find(needle), std::string::npos) << needle;
}

Issue MakeIssue(IssueType type, std::string phase = "", std::string op_type = "", std::string detail = "") {
  Issue i;
  i.type = type;
  i.phase = std::move(phase);
  i.op_type = std::move(op_type);
  i.detail = std::move(detail);
  return i;
}

TEST(RuleLibrary, SelectionByPhaseOpTypeDtypeAndBackend) {
  const RuleLibrary& lib = Lib();
  ModelConfig m;
  auto id = [&](const Issue& i, Backend b) {
    const Rule* r = SelectRule(lib, i, m, b);
    return r ? r->id : std::string("<none>");
  };
  EXPECT_EQ(id(MakeIssue(IssueType::kAttentionMemoryBound, "decode"), Backend::kAscend),
            "attention_memory_bound.ascend.decode");
  EXPECT_EQ(id(MakeIssue(IssueType::kAttentionMemoryBound, "prefill"), Backend::kAscend),
            "attention_memory_bound.ascend.prefill");
  EXPECT_EQ(id(MakeIssue(IssueType::kAttentionMemoryBound, ""), Backend::kAscend),
            "attention_memory_bound.ascend.prefill");
  EXPECT_EQ(id(MakeIssue(IssueType::kAttentionMemoryBound, "decode"), Backend::kCuda), "attention_memory_bound.gpu");
  EXPECT_EQ(id(MakeIssue(IssueType::kFusibleSequence, "", "swiglu"), Backend::kAscend),
            "fusible_sequence.ascend.swiglu");
  EXPECT_EQ(id(MakeIssue(IssueType::kFusibleSequence, "decode", "fusion_attention"), Backend::kAscend),
            "fusible_sequence.ascend.fusion_attention.decode");
  EXPECT_EQ(id(MakeIssue(IssueType::kFusibleSequence, "", "geglu"), Backend::kAscend),
            "fusible_sequence.ascend.generic");
  EXPECT_EQ(id(MakeIssue(IssueType::kAicpuFallback, "", "NonZero", "3 AI_CPU task(s); input dtypes INT64;INT64"),
               Backend::kAscend),
            "aicpu_fallback.ascend.int64_double");
  EXPECT_EQ(id(MakeIssue(IssueType::kAicpuFallback, "", "NonZero", "input dtypes BOOL"), Backend::kAscend),
            "aicpu_fallback.ascend.generic");
  EXPECT_EQ(id(MakeIssue(IssueType::kAicpuFallback), Backend::kCuda), "<none>");
  EXPECT_EQ(id(MakeIssue(IssueType::kMatmulTiling), Backend::kRocm), "matmul_tiling.gpu.pad");
  EXPECT_EQ(id(MakeIssue(IssueType::kMatmulTiling), Backend::kCpu), "matmul_tiling.cpu.pad");
}

std::string File(std::string rules, std::string applies = "[\"ascend\"]") {
  return "{\"schema\": \"pypto.advisor.rules/1\", \"issue_type\": \"host_bound\", \"applies_to\": " + applies +
         ", \"rules\": " + rules + "}";
}
std::string RuleWith(std::string gain, std::string extra = "") {
  return "[{\"id\": \"host_bound.x\", \"backends\": [\"ascend\"], \"title\": \"t\", \"sources\": [\"s\"]" + extra +
         ", \"actions\": [{\"id\": \"a\", \"kind\": \"env\", \"description\": \"d\", \"action\": \"export X=1\", "
         "\"prerequisite\": \"p\", \"gain\": " +
         gain + "}]}]";
}

TEST(RuleLibrary, RejectsBadFilesNamingFileAndReason) {
  auto parse = [](const std::string& text) {
    RuleLibrary lib;
    return ParseRuleFile(text, "rules/test.json", &lib);
  };
  EXPECT_TRUE(parse(File(RuleWith("{\"basis\": \"issue_saving\", \"source\": \"src\"}"))).ok());
  Status s = parse(File(RuleWith("{\"basis\": \"guess\", \"source\": \"src\"}")));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("rules/test.json"), std::string::npos);
  EXPECT_NE(s.ToString().find("unknown gain basis"), std::string::npos);
  EXPECT_FALSE(parse(File(RuleWith("{\"basis\": \"issue_saving\", \"source\": \"\"}"))).ok());  // no source
  EXPECT_FALSE(parse(File(RuleWith("{\"basis\": \"measured_gap\", \"source\": \"s\"}"))).ok());  // no metric
  EXPECT_FALSE(parse(File(RuleWith("{\"basis\": \"affected_fraction\", \"fraction\": 1.5, \"source\": \"s\"}"))).ok());
  EXPECT_FALSE(parse(File(RuleWith("{\"basis\": \"issue_saving\", \"source\": \"s\"}"), "[\"cuda\"]")).ok());
  EXPECT_FALSE(parse(File(RuleWith("{\"basis\": \"issue_saving\", \"source\": \"s\"}",
                                   ", \"match\": {\"phases\": [\"training\"]}")))
                   .ok());
  EXPECT_FALSE(parse("{not json").ok());
  EXPECT_FALSE(parse("").ok());
}

}  // namespace
}  // namespace pypto::advisor
