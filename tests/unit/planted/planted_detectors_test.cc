// Every planted anti-pattern is found by its detector with the right op and
// type; the healthy profiles (both flavours) give no issue at all; severity /
// saving grows with the planted strength.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"
#include "unit/planted/planted_profiles.h"

namespace pypto::testing {
namespace {

DiagnosticReport RunPlanted(const PlantKnobs& k, PlantedFacts* facts = nullptr) {
  Profile p = BuildPlantedProfile(k, facts);
  auto r = Diagnose(p, DiagnoseOptions{});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : DiagnosticReport{};
}

std::string Describe(const DiagnosticReport& r) {
  std::string s;
  for (const Issue& i : r.issues)
    s += std::string(IssueTypeName(i.type)) + " [" + i.op_name + " / " + i.op_type + "] share=" +
         std::to_string(i.affected_share) + " saved=" + std::to_string(i.saved_ns) + " " + i.detail + "\n";
  return s;
}

const Issue* Find(const DiagnosticReport& r, IssueType type) {
  for (const Issue& i : r.issues)
    if (i.type == type) return &i;
  return nullptr;
}

class Healthy : public ::testing::TestWithParam<PlantedFlavor> {};

DiagnoseOptions Only(std::vector<std::string> names) {
  DiagnoseOptions o;
  o.only = std::move(names);
  return o;
}
const std::vector<std::string> kDetectors6to10 = {"aicpu_fallback", "dynamic_shape_compile", "stream_sync",
                                                  "no_pipe_bound", "fusible_sequence"};
const std::vector<std::string> kDetectors1to5 = {"matmul_tiling", "attention_memory_bound", "kv_cache_layout",
                                                 "norm_launch_overhead", "host_bound"};

DiagnosticReport RunOnly(const PlantKnobs& k, const std::vector<std::string>& names) {
  Profile p = BuildPlantedProfile(k);
  auto r = Diagnose(p, Only(names));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : DiagnosticReport{};
}

TEST_P(Healthy, NoIssuesFromDetectors6To10) {
  DiagnosticReport r = RunOnly(HealthyKnobs(GetParam()), kDetectors6to10);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_EQ(r.detectors_run.size(), 5u);
}

TEST_P(Healthy, NoIssuesFromDetectors6To10WithPrefill) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.prefill_step = true;
  DiagnosticReport r = RunOnly(k, kDetectors6to10);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
}

// The decode GEMMs (M = 8, memory-bound, at 85 % of the bandwidth roofline,
// low aic_mac_ratio as expected) and the decode attention (85 % of its memory
// roofline) are at their roofline: nothing to report.
TEST_P(Healthy, NoIssuesFromDetectors1To5) {
  DiagnosticReport r = RunOnly(HealthyKnobs(GetParam()), kDetectors1to5);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_EQ(r.detectors_run.size(), 5u);
}

TEST_P(Healthy, NoIssuesFromAnyDetector) {
  DiagnosticReport r = RunPlanted(HealthyKnobs(GetParam()));
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
  EXPECT_EQ(r.detectors_run.size(), AllDetectors().size());
  EXPECT_DOUBLE_EQ(r.estimated_combined_speedup, 1.0);
}

TEST_P(Healthy, NoIssuesFromAnyDetectorWithPrefill) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.prefill_step = true;
  DiagnosticReport r = RunPlanted(k);
  EXPECT_TRUE(r.issues.empty()) << Describe(r);
}

// The structure is wired into the report: 4 layers, 4 decode steps (+ 1 prefill), per-token latency.
TEST_P(Healthy, ReportCarriesTheModelStructure) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.prefill_step = true;
  PlantedFacts facts;
  DiagnosticReport r = RunPlanted(k, &facts);
  ASSERT_TRUE(r.structure.available);
  EXPECT_EQ(r.structure.layers, 4);
  EXPECT_EQ(r.structure.prefill_steps, 1u);
  EXPECT_EQ(r.structure.decode_steps, 4u);
  ASSERT_EQ(r.structure.step_phases.size(), 5u);
  EXPECT_EQ(r.structure.step_phases[0], "prefill");
  EXPECT_EQ(r.structure.step_phases[4], "decode");
  ASSERT_EQ(r.structure.decode_latency.count, 4u);
  // Decode step latencies are the builder's step spans (steps 1..4).
  std::vector<double> ms;
  for (int s = 1; s <= 4; ++s) ms.push_back(double(facts.step_end[s] - facts.step_start[s]) / 1e6);
  std::sort(ms.begin(), ms.end());
  EXPECT_NEAR(r.structure.decode_latency.p50_ms, ms[1], 1e-3);  // nearest rank: ceil(0.5 x 4) = 2nd
  EXPECT_NEAR(r.structure.decode_latency.p99_ms, ms[3], 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Flavors, Healthy, ::testing::Values(PlantedFlavor::kKinetoCuda, PlantedFlavor::kAscend),
                         [](const auto& info) { return info.param == PlantedFlavor::kAscend ? "Ascend" : "KinetoCuda"; });

// The per-detector tests of detectors 6-10 on planted profiles live with
// each detector: tests/unit/diagnosis/<detector>_test.cc.

// ---------------------------------------------------------------- detectors 1-5
class PlantedFirstFive : public ::testing::TestWithParam<PlantedFlavor> {};

TEST_P(PlantedFirstFive, MatmulTiling) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.bad_matmul_slowdown = 4;
  DiagnosticReport r = RunPlanted(k);
  const Issue* i = Find(r, IssueType::kMatmulTiling);
  ASSERT_NE(i, nullptr) << Describe(r);
}

// Right op, only the planted O-projection (the other decode GEMMs are at their
// roofline), decode phase, and saving / severity growing with the slowdown.
TEST_P(PlantedFirstFive, MatmulTilingRightOpAndStrength) {
  PlantKnobs k = HealthyKnobs(GetParam());
  PlantedFacts facts;
  k.bad_matmul_slowdown = 2;
  DiagnosticReport weak = RunPlanted(k, &facts);
  k.bad_matmul_slowdown = 8;
  DiagnosticReport strong = RunPlanted(k);
  const Issue* a = Find(weak, IssueType::kMatmulTiling);
  const Issue* b = Find(strong, IssueType::kMatmulTiling);
  ASSERT_TRUE(a && b) << Describe(weak) << Describe(strong);
  EXPECT_EQ(b->op_name, facts.matmul_op);
  EXPECT_EQ(b->evidence.count, 16u);  // 4 layers x 4 steps
  EXPECT_EQ(b->phase, "decode");
  EXPECT_NE(b->detail.find("4089"), std::string::npos) << b->detail;
  int tiling = 0;
  for (const Issue& i : strong.issues) tiling += i.type == IssueType::kMatmulTiling;
  EXPECT_EQ(tiling, 1) << Describe(strong);
  EXPECT_LT(a->saved_ns, b->saved_ns);
  EXPECT_LT(a->affected_share, b->affected_share);
  EXPECT_LE(a->severity, b->severity);
  EXPECT_EQ(b->severity, Severity::kHigh);
}

TEST_P(PlantedFirstFive, AttentionMemoryBound) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.attention_slowdown = 4;
  DiagnosticReport r = RunPlanted(k);
  ASSERT_NE(Find(r, IssueType::kAttentionMemoryBound), nullptr) << Describe(r);
}

// The padded read is found as bytes moved vs bytes needed: S_kv grows 4 tokens
// per decode step for the 1 appended, the saving is the time of the 3/4 read
// for nothing, and it grows with the padding.
TEST_P(PlantedFirstFive, AttentionPaddedReadRightOpAndStrength) {
  PlantKnobs k = HealthyKnobs(GetParam());
  PlantedFacts facts;
  k.attention_slowdown = 2;
  DiagnosticReport weak = RunPlanted(k, &facts);
  k.attention_slowdown = 4;
  DiagnosticReport strong = RunPlanted(k);
  const Issue* a = Find(weak, IssueType::kAttentionMemoryBound);
  const Issue* b = Find(strong, IssueType::kAttentionMemoryBound);
  ASSERT_TRUE(a && b) << Describe(weak) << Describe(strong);
  EXPECT_EQ(b->op_name, facts.attention_op);
  EXPECT_EQ(b->phase, "decode");
  EXPECT_NE(b->detail.find("KV read 4x the live cache"), std::string::npos) << b->detail;
  uint64_t count = 0;
  TimeNs saved = 0, affected = 0;
  for (const Issue& i : strong.issues) {
    if (i.type != IssueType::kAttentionMemoryBound) continue;
    count += i.evidence.count;
    saved += i.saved_ns;
    affected += i.affected_ns;
  }
  EXPECT_EQ(count, 16u);  // every decode attention (Ascend: one group per shape = per step)
  // Running at 0.85 of the roofline of 4x the bytes: needed time = measured x 0.85 / 4.
  EXPECT_NEAR(double(saved) / double(affected), 1 - 0.85 / 4, 0.02);
  EXPECT_LT(a->saved_ns, b->saved_ns);
  EXPECT_LE(a->severity, b->severity);
}

TEST_P(PlantedFirstFive, KvCacheLayout) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.kv_cache_cat = true;
  DiagnosticReport r = RunPlanted(k);
  ASSERT_NE(Find(r, IssueType::kKvCacheLayout), nullptr) << Describe(r);
}

TEST_P(PlantedFirstFive, NormLaunchOverhead) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.unfused_norm_gap_us = 5;
  DiagnosticReport r = RunPlanted(k);
  ASSERT_NE(Find(r, IssueType::kNormLaunchOverhead), nullptr) << Describe(r);
}

TEST_P(PlantedFirstFive, HostBound) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.host_overhead_us = 40;
  DiagnosticReport r = RunPlanted(k);
  ASSERT_NE(Find(r, IssueType::kHostBound), nullptr) << Describe(r);
}

INSTANTIATE_TEST_SUITE_P(Flavors, PlantedFirstFive, ::testing::Values(PlantedFlavor::kKinetoCuda, PlantedFlavor::kAscend),
                         [](const auto& info) { return info.param == PlantedFlavor::kAscend ? "Ascend" : "KinetoCuda"; });

}  // namespace
}  // namespace pypto::testing
