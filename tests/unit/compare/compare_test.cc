// Baseline vs candidate comparison: statistics against scipy figures, a
// profile compared with itself, a planted slow GEMM fixed in the candidate,
// and renamed kernels still matched.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "compare/compare.h"
#include "unit/planted/planted_profiles.h"

namespace pypto {
namespace {

using testing::BuildPlantedProfile;
using testing::HealthyKnobs;
using testing::PlantedFlavor;
using testing::PlantKnobs;

TEST(WelchTest, MatchesScipy) {
  // scipy.stats.ttest_ind(candidate, baseline, equal_var=False):
  // statistic 1.8973665961010275, pvalue 0.10753119493062728, df 5.882352941176471.
  SignificanceTest t = WelchTest({1, 2, 3, 4, 5}, {2, 4, 6, 8, 10});
  EXPECT_NEAR(t.t, 1.8973665961010275, 1e-9);
  EXPECT_NEAR(t.df, 5.882352941176471, 1e-9);
  EXPECT_NEAR(t.p_value, 0.10753119493062728, 1e-6);
  EXPECT_FALSE(t.significant);
  EXPECT_EQ(t.verdict, "not significant");
  // CI: delta 3 ± t.ppf(0.975, df) = 2.458823709699146 × se sqrt(2.5).
  EXPECT_NEAR(t.ci_low, 3 - 2.458823709699146 * std::sqrt(2.5), 1e-6);
  EXPECT_NEAR(t.ci_high, 3 + 2.458823709699146 * std::sqrt(2.5), 1e-6);
  // statistic -11.0 (candidate faster), pvalue 4.394504317020202e-06, df 7.94117647058824.
  SignificanceTest f = WelchTest({10.1, 10.3, 9.9, 10.2, 10.0, 10.4}, {9.0, 9.2, 8.9, 9.1});
  EXPECT_NEAR(f.t, -11.0, 1e-9);
  EXPECT_NEAR(f.df, 7.94117647058824, 1e-9);
  EXPECT_NEAR(f.p_value, 4.394504317020202e-06, 1e-9);
  EXPECT_TRUE(f.significant);
  EXPECT_EQ(f.verdict, "faster");
}

TEST(WelchTest, DegenerateSamples) {
  SignificanceTest one = WelchTest({1.0}, {2.0, 3.0});
  EXPECT_FALSE(one.testable);
  EXPECT_FALSE(one.significant);
  SignificanceTest same = WelchTest({5, 5, 5}, {5, 5});
  EXPECT_TRUE(same.testable);
  EXPECT_EQ(same.p_value, 1.0);
  EXPECT_FALSE(same.significant);
  SignificanceTest exact = WelchTest({5, 5, 5}, {4, 4});
  EXPECT_EQ(exact.p_value, 0.0);
  EXPECT_TRUE(exact.significant);
  EXPECT_EQ(exact.delta, -1.0);
}

TEST(PairedRatio, SpeedupAndIntervalFromTheLogRatios) {
  // Rounds (baseline, candidate) ms: (10, 8), (20, 16), (40, 30): ratios 1.25, 1.25, 4/3.
  // By hand: log ratios 0.22314, 0.22314, 0.28768; mean 0.244656, sd 0.0372613, se = sd/sqrt(3) 0.0215128;
  // speedup exp(mean) 1.277182; t = 11.372575 on 2 df, two-sided p = 1 - t/sqrt(2 + t^2) = 0.0076433
  // (Student's t with 2 df in closed form); CI exp(mean -/+ 4.302652729749464 se) (t 0.975 quantile, 2 df):
  // 1.164270 .. 1.401045. The baseline's spread (10 to 40 ms, the load of the moment) does not widen it.
  PairedRatioTest t = PairedRatio({10, 20, 40}, {8, 16, 30});
  EXPECT_TRUE(t.testable);
  EXPECT_EQ(t.rounds, 3u);
  EXPECT_NEAR(t.speedup, 1.2771823873225885, 1e-9);
  EXPECT_NEAR(t.p_value, 0.007643299733308018, 1e-7);
  EXPECT_NEAR(t.ci_low, 1.164269801069764, 1e-6);
  EXPECT_NEAR(t.ci_high, 1.4010454011503506, 1e-6);
  EXPECT_NEAR(t.relative_half_width, (1.4010454011503506 - 1.164269801069764) / 2 / 1.2771823873225885, 1e-6);
  EXPECT_EQ(t.verdict, "faster");
  // Geometric means of the sides: (10 * 20 * 40)^(1/3) = 20, (8 * 16 * 30)^(1/3) = 3840^(1/3) = 15.6595;
  // their ratio is the speedup (the medians, 20 and 16, give 1.25 instead).
  EXPECT_NEAR(t.baseline_geomean, 20.0, 1e-9);
  EXPECT_NEAR(t.candidate_geomean, 15.659470564675452, 1e-9);
  EXPECT_NEAR(t.baseline_geomean / t.candidate_geomean, t.speedup, 1e-12);
  // The same rounds the other way round: slower, the interval inverted.
  PairedRatioTest s = PairedRatio({8, 16, 30}, {10, 20, 40});
  EXPECT_EQ(s.verdict, "slower");
  EXPECT_NEAR(s.speedup, 1 / 1.2771823873225885, 1e-9);
  EXPECT_NEAR(s.ci_high, 1 / 1.164269801069764, 1e-6);
  // (10, 9), (10, 11): ratios 1.111 and 0.909, t 0.0501 on 1 df, p = 1 - 2/pi atan(t) = 0.96814 (Cauchy).
  PairedRatioTest none = PairedRatio({10, 10}, {9, 11});
  EXPECT_NEAR(none.p_value, 0.968142329872381, 1e-7);
  EXPECT_NEAR(none.speedup, 1.005037815259212, 1e-9);
  EXPECT_EQ(none.verdict, "no significant change");
}

TEST(PairedRatio, RoundsWithoutATimeAreDroppedAndTooFewAreNotTestable) {
  PairedRatioTest t = PairedRatio({10, 0, 12}, {5, 4});   // pairs: (10, 5), (0, 4) dropped; 12 unpaired
  EXPECT_EQ(t.rounds, 1u);
  EXPECT_EQ(t.rounds_dropped, 1u);
  EXPECT_FALSE(t.testable);
  EXPECT_DOUBLE_EQ(t.speedup, 2.0);
  EXPECT_DOUBLE_EQ(t.baseline_geomean, 10.0);   // over the one pair used, not the dropped 0
  EXPECT_DOUBLE_EQ(t.candidate_geomean, 5.0);
  EXPECT_EQ(t.verdict, "not testable (fewer than 2 rounds with both times > 0)");
  PairedRatioTest exact = PairedRatio({10, 20}, {5, 10});
  EXPECT_EQ(exact.p_value, 0.0);
  EXPECT_EQ(exact.ci_low, 2.0);
  EXPECT_EQ(exact.verdict, "faster");
}

TEST(NormalizeKernelName, RenamedKernelsCollapse) {
  EXPECT_EQ(NormalizeKernelName("void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_128x256_32x3_tn_align8>(Params)"),
            NormalizeKernelName("void cutlass::Kernel<cutlass_90_tensorop_bf16_s16816gemm_64x128_64x4_nn_align4>(Params)"));
  EXPECT_EQ(NormalizeKernelName("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"),
            NormalizeKernelName("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x256x32_warpgroupsize2x1x1"));
  EXPECT_EQ(NormalizeKernelName("triton_poi_fused_add_0x7f3a2b"), NormalizeKernelName("triton_poi_fused_add_0x11"));
  EXPECT_EQ(NormalizeKernelName("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn"), "ampere_bf#_s#gemm_bf#_#_ldg#_f#f_tn");
  EXPECT_NE(NormalizeKernelName("MatMulV2"), NormalizeKernelName("RmsNorm"));
}

struct Runs {
  LoadedRun base;
  LoadedRun cand;
};

Runs Prepare(const PlantKnobs& a, const PlantKnobs& b) {
  StatusOr<LoadedRun> ra = PrepareRunForCompare(BuildPlantedProfile(a));
  StatusOr<LoadedRun> rb = PrepareRunForCompare(BuildPlantedProfile(b));
  EXPECT_TRUE(ra.ok()) << ra.status().ToString();
  EXPECT_TRUE(rb.ok()) << rb.status().ToString();
  return Runs{std::move(*ra), std::move(*rb)};
}

class CompareFlavorTest : public ::testing::TestWithParam<PlantedFlavor> {};

TEST_P(CompareFlavorTest, ProfileWithItselfHasNoSignificantChange) {
  PlantKnobs k = HealthyKnobs(GetParam());
  k.decode_steps = 6;
  Runs r = Prepare(k, k);
  StatusOr<ComparisonReport> rep = CompareProfiles(r.base.view(), r.cand.view());
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  EXPECT_EQ(rep->step_basis, "decode steps");
  EXPECT_EQ(rep->baseline.compared_steps.size(), 6u);
  EXPECT_TRUE(rep->step_latency.testable);
  EXPECT_FALSE(rep->step_latency.significant);
  EXPECT_EQ(rep->step_latency.verdict, "not significant");
  EXPECT_DOUBLE_EQ(rep->step_latency.delta, 0.0);
  EXPECT_DOUBLE_EQ(rep->measured_speedup, 1.0);
  for (const OpDelta& o : rep->ops) {
    EXPECT_EQ(o.match, MatchLevel::kExact) << o.baseline_name;
    EXPECT_EQ(o.delta_per_step_ns, 0.0);
    EXPECT_FALSE(o.test.significant);
  }
  for (const ClassDelta& c : rep->classes) EXPECT_FALSE(c.test.significant) << c.op_class;
  for (const IssueDelta& i : rep->issues) EXPECT_EQ(i.change, IssueChange::kRemaining);
  EXPECT_TRUE(rep->actions.empty());
  EXPECT_EQ(rep->baseline.ops_outside_steps, 0u);
  // A profile against itself: identical, said first in every rendering, and
  // the text stops after the latency table (every other row would read 0).
  EXPECT_TRUE(rep->Identical());
  EXPECT_EQ(rep->Verdict(), "identical profiles: the same step latencies and op times");
  const std::string text = rep->to_text();
  EXPECT_TRUE(text.starts_with("Verdict: identical profiles")) << text;
  EXPECT_EQ(text.find("Ops (largest changes"), std::string::npos) << text;
  EXPECT_EQ(text.find('\\'), std::string::npos) << text;  // no Markdown escapes on a terminal
  EXPECT_NE(rep->to_markdown().find("**Verdict: identical profiles"), std::string::npos);
  EXPECT_NE(rep->to_json().find("\"verdict\": \"identical profiles"), std::string::npos);
  EXPECT_NE(rep->to_html().find("<p class=\"verdict\"><b class=\"\">Verdict: identical profiles"), std::string::npos);
  // Every renderer runs and tags its output.
  EXPECT_NE(rep->to_json().find("\"schema\": \"pypto.compare/1\""), std::string::npos);
  EXPECT_NE(rep->to_markdown().find("not significant"), std::string::npos);
  EXPECT_NE(rep->to_html().find("<svg"), std::string::npos);
}

// A step-latency delta whose interval reaches below minus the baseline mean
// (the hand-written decoder's baseline profile in one demo run: p50 34 ms, a
// few steps of 0.3-0.8 s) leaves the speedup without an upper bound. Expected,
// by hand: mean baseline 100 ms, delta interval [-150, -30] ms: the lower
// bound 100 / (100 - 30) = 1.43, the upper one 100 / (100 - 150) would be
// negative, so none is given; with [-90, -30] ms it is 100 / 10 = 10.00.
TEST(CompareVerdict, SpeedupIntervalWithoutUpperBoundSaysSo) {
  ComparisonReport rep;
  rep.baseline.step_latency_ns = {100e6, 100e6};
  rep.candidate.step_latency_ns = {14e6, 15e6};
  rep.step_latency.testable = rep.step_latency.significant = true;
  rep.step_latency.verdict = "faster";
  rep.step_latency.mean_baseline = 100e6;
  rep.step_latency.ci_low = -150e6;
  rep.step_latency.ci_high = -30e6;
  rep.step_latency.p_value = 0.0103;
  rep.measured_speedup = 7.01;
  EXPECT_EQ(rep.Verdict(), "faster x7.01 [1.43, no upper bound] (p=0.0103)");
  rep.step_latency.ci_low = -90e6;
  EXPECT_EQ(rep.Verdict(), "faster x7.01 [1.43, 10.00] (p=0.0103)");
}

// Slow O-projection GEMM (×3, odd N/K) in the baseline, fixed in the
// candidate: the matmul time per step falls by exactly the planted excess,
// the step latency by the same amount (the GEMM is on the critical stream),
// the tiling issue is resolved and its action measured.
TEST_P(CompareFlavorTest, PlantedSlowGemmFixedIsMeasured) {
  PlantKnobs bad = HealthyKnobs(GetParam());
  bad.decode_steps = 6;
  bad.bad_matmul_slowdown = 3.0;
  PlantKnobs good = HealthyKnobs(GetParam());
  good.decode_steps = 6;
  Runs r = Prepare(bad, good);
  StatusOr<ComparisonReport> rep = CompareProfiles(r.base.view(), r.cand.view());
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();

  const ClassDelta* matmul = nullptr;
  for (const ClassDelta& c : rep->classes)
    if (c.op_class == "matmul") matmul = &c;
  ASSERT_NE(matmul, nullptr);
  EXPECT_LT(matmul->delta_per_step_ns, 0);
  EXPECT_TRUE(matmul->test.significant);
  // Planted gain = matmul time removed per step; the step latency delta
  // agrees with it within the stated (1 - alpha) confidence interval.
  const double planted_gain = -matmul->delta_per_step_ns;
  EXPECT_TRUE(rep->step_latency.significant);
  EXPECT_EQ(rep->step_latency.verdict, "faster");
  EXPECT_LE(rep->step_latency.ci_low, -planted_gain * 0.98);
  EXPECT_GE(rep->step_latency.ci_high, -planted_gain * 1.02);
  EXPECT_NEAR(-rep->step_latency.delta, planted_gain, 0.05 * planted_gain);
  EXPECT_GT(rep->measured_speedup, 1.0);
  // The verdict: faster, the speedup and its interval from the delta's
  // (mean baseline / (mean baseline + CI bound)).
  const double b = rep->step_latency.mean_baseline;
  EXPECT_EQ(rep->Verdict().substr(0, 8), "faster x");
  EXPECT_NE(rep->Verdict().find(fmt::format("[{:.2f}, {:.2f}]", b / (b + rep->step_latency.ci_high),
                                            b / (b + rep->step_latency.ci_low))),
            std::string::npos)
      << rep->Verdict();
  EXPECT_TRUE(rep->to_text().starts_with("Verdict: faster x")) << rep->to_text();

  // The O-projection pair: same class and name, shape changed.
  bool found_shape_change = false;
  for (const OpDelta& o : rep->ops) {
    EXPECT_NE(o.match, MatchLevel::kBaselineOnly) << o.baseline_name;
    EXPECT_NE(o.match, MatchLevel::kCandidateOnly) << o.candidate_name;
    if (o.op_class == "matmul" && o.match == MatchLevel::kClassName) {
      found_shape_change = true;
      EXPECT_LT(o.delta_per_step_ns, 0);
      EXPECT_NE(o.baseline_shape, o.candidate_shape);
    }
  }
  EXPECT_TRUE(found_shape_change);
  // On the terminal each op row says its shape (ops of one name differ by it),
  // and no op or action cell is longer than a short name.
  const std::string text = rep->to_text();
  EXPECT_NE(text.find("  OP  "), std::string::npos);
  EXPECT_NE(text.find("SHAPE"), std::string::npos) << text;
  for (const OpDelta& o : rep->ops)
    if (!o.baseline_shape.empty() && o.baseline_shape.size() <= 24) {
      EXPECT_NE(text.find(o.baseline_shape), std::string::npos) << o.baseline_shape;
      break;
    }

  // The tiling issue is resolved and, taken as the applied action, its
  // measured saving is compared with its estimate.
  bool resolved = false;
  for (const IssueDelta& i : rep->issues)
    if (i.type == "matmul_tiling" && i.change == IssueChange::kResolved) resolved = true;
  EXPECT_TRUE(resolved);
  const ActionOutcome* action = nullptr;
  for (const ActionOutcome& a : rep->actions)
    if (a.action.issue_type == "matmul_tiling") action = &a;
  ASSERT_NE(action, nullptr);
  EXPECT_GT(action->matched_ops, 0u);
  EXPECT_GT(action->estimated_per_step_ns, 0);
  EXPECT_GT(action->measured_per_step_ns, 0);
  EXPECT_TRUE(action->test.significant);
  EXPECT_NE(action->verdict, "no measurable change");
}

TEST_P(CompareFlavorTest, RenamedKernelsStillMatch) {
  PlantKnobs k = HealthyKnobs(GetParam());
  Profile a = BuildPlantedProfile(k);
  Profile b = BuildPlantedProfile(k);
  // The candidate's kernels were rebuilt: new template tile sizes and ids.
  for (size_t i = 0; i < b.device_tasks.size(); ++i) {
    std::string name(b.Str(b.device_tasks.name[i]));
    b.device_tasks.name[i] = b.Intern(name + "<tile_64x256_0x7f3a" + std::to_string(name.size() % 7) + ">");
  }
  StatusOr<LoadedRun> ra = PrepareRunForCompare(std::move(a));
  StatusOr<LoadedRun> rb = PrepareRunForCompare(std::move(b));
  ASSERT_TRUE(ra.ok() && rb.ok());
  StatusOr<ComparisonReport> rep = CompareProfiles(ra->view(), rb->view());
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  EXPECT_EQ(rep->match_counts[static_cast<size_t>(MatchLevel::kBaselineOnly)], 0u);
  EXPECT_EQ(rep->match_counts[static_cast<size_t>(MatchLevel::kCandidateOnly)], 0u);
  EXPECT_EQ(rep->match_counts[static_cast<size_t>(MatchLevel::kClass)], 0u);
  for (const OpDelta& o : rep->ops) {
    EXPECT_EQ(o.delta_per_step_ns, 0.0) << o.baseline_name << " vs " << o.candidate_name;
    EXPECT_EQ(o.baseline_count, o.candidate_count);
  }
  EXPECT_FALSE(rep->step_latency.significant);
}

INSTANTIATE_TEST_SUITE_P(Flavors, CompareFlavorTest,
                         ::testing::Values(PlantedFlavor::kKinetoCuda, PlantedFlavor::kAscend),
                         [](const auto& info) { return info.param == PlantedFlavor::kAscend ? "Ascend" : "KinetoCuda"; });

TEST(AppliedActions, ParsesAndRejects) {
  StatusOr<std::vector<AppliedAction>> ok = ParseAppliedActions(
      R"({"actions":[{"id":"a1","target_op":"MatMulV2","estimated_saved_ns":1200,"estimate_steps":4},
                     {"target_class":"attention","estimated_saved_ns":5}]})", "t.json");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].estimated_saved_ns, 1200);
  EXPECT_EQ((*ok)[0].estimate_steps, 4u);
  EXPECT_EQ((*ok)[1].target_class, "attention");
  EXPECT_EQ((*ok)[1].source, "actions file");
  EXPECT_FALSE(ParseAppliedActions(R"({"actions":[{"target_class":"nonsense"}]})", "t.json").ok());
  EXPECT_FALSE(ParseAppliedActions(R"({"actions":[{"estimated_saved_ns":"x"}]})", "t.json").ok());
  EXPECT_FALSE(ParseAppliedActions("not json", "t.json").ok());
}

}  // namespace
}  // namespace pypto
