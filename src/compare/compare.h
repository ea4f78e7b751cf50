// Baseline vs candidate: the closing step of the tuning loop. Two runs of the
// same workload (before and after a change) are compared on
//   * per-step latency (per generated token on decode steps): p50/p90/p99
//     before/after and a Welch t-test on the per-step latencies, so a
//     difference is only called a change when it exceeds run-to-run noise;
//   * ops matched across the runs by class, name and shape, tolerant to
//     renamed kernels (template arguments, hex ids, tile sizes and other
//     digits normalised away), falling back to class + shape, class + name,
//     then class alone; per-op and per-class time and count deltas;
//   * issues of the two diagnoses: resolved / remaining / new (by issue type
//     and op);
//   * applied actions (e.g. advisor recommendations, or by default the issues
//     the candidate no longer shows): estimated saving vs measured delta of
//     the ops they target.
// The compare layer computes; src/report/compare_render.cc renders
// (ComparisonReport::to_markdown / to_json / to_html are defined there).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"
#include "analysis/statistics.h"
#include "analysis/structure.h"
#include "core/status.h"
#include "graph/call_graph.h"
#include "importers/importer.h"
#include "io/value_sink.h"
#include "model/profile.h"
#include "session/profile_session.h"

namespace pypto {

// ------------------------------------------------------------------ thresholds

// Two-sided significance level of the Welch t-test (unitless). Source: the
// conventional 5% level (Fisher, "Statistical Methods for Research Workers",
// 1925), the level scipy.stats.ttest_ind results are usually read against.
inline constexpr double kDefaultSignificanceAlpha = 0.05;
// Fewest per-step samples per run for a variance (Welch needs n >= 2 per side).
inline constexpr size_t kMinSamplesForTest = 2;
// An action's measured saving within this fraction of its estimate is
// "as estimated" (unitless). Source: roofline estimates target ±25% (the cost
// model's stated accuracy for well-shaped GEMM/attention, docs/cost-model.md
// "efficiency" bands); wider gaps are reported as below/above estimate.
inline constexpr double kDefaultEstimateTolerance = 0.25;
// Ops listed per table in the rendered reports (the JSON keeps all).
inline constexpr size_t kDefaultCompareTopOps = 25;

// ------------------------------------------------------------------ name matching

// Kernel-name normalisation used by the matcher: lower case, template
// arguments (<...>) and parameter lists ((...)) removed, "void " dropped,
// hex ids (0x1f2e) removed, tile sizes (128x128x64) and every remaining run
// of digits replaced by '#', separators collapsed.
// "void cutlass::Kernel<cutlass_80_tensorop_128x256_32x3>(Params)" and
// "void cutlass::Kernel<cutlass_90_tensorop_64x128_64x4>(Params)" both give
// "cutlass::kernel".
std::string NormalizeKernelName(std::string_view name);

// ------------------------------------------------------------------ statistics

struct SignificanceTest {
  std::string method = "welch_t";   // two-sided Welch t-test on per-step samples
  uint64_t n_baseline = 0;
  uint64_t n_candidate = 0;
  double mean_baseline = kNaN;      // sample unit: ns
  double mean_candidate = kNaN;
  double stddev_baseline = kNaN;
  double stddev_candidate = kNaN;
  double delta = kNaN;              // mean_candidate - mean_baseline (negative = faster)
  double relative_delta = kNaN;     // delta / mean_baseline
  double t = kNaN;
  double df = kNaN;
  double p_value = kNaN;
  double ci_low = kNaN;             // (1 - alpha) confidence interval of delta, ns
  double ci_high = kNaN;
  double alpha = kDefaultSignificanceAlpha;
  bool testable = false;            // enough samples (>= kMinSamplesForTest per run)
  bool significant = false;         // testable and p < alpha
  std::string verdict;              // "faster", "slower", "not significant", "not testable (…)"
};

// Welch's unequal-variances t-test of candidate vs baseline samples (any
// unit; means and CI in that unit). Both variances zero: the difference is
// exact (p = 0 when the means differ, 1 when equal).
SignificanceTest WelchTest(const std::vector<double>& baseline, const std::vector<double>& candidate,
                           double alpha = kDefaultSignificanceAlpha);

// Interleaved A/B rounds: baseline and candidate timed back to back, round i
// of one side paired with round i of the other (the A/B runner of the closed
// loop). The speedup is the geometric mean of the per-round ratios
// baseline_i / candidate_i, with its (1 - alpha) confidence interval from
// Student's t on the log ratios: a paired test, so load that both sides of a
// round share cancels instead of widening the interval as it does in Welch.
struct PairedRatioTest {
  uint64_t rounds = 0;               // pairs used (both values > 0)
  uint64_t rounds_dropped = 0;       // pairs with a value <= 0 or not finite
  double speedup = kNaN;             // > 1: the candidate is faster
  // Geometric means of each side over the pairs used: baseline_geomean /
  // candidate_geomean == speedup, so figures printed beside the speedup agree
  // with it (medians of the two sides need not).
  double baseline_geomean = kNaN;
  double candidate_geomean = kNaN;
  double ci_low = kNaN;              // (1 - alpha) confidence interval of speedup
  double ci_high = kNaN;
  double relative_half_width = kNaN; // (ci_high - ci_low) / 2 / speedup: how narrow the interval is
  double p_value = kNaN;             // two-sided, H0: speedup = 1
  double alpha = kDefaultSignificanceAlpha;
  bool testable = false;             // >= kMinSamplesForTest rounds
  bool significant = false;          // testable and p < alpha
  std::string verdict;               // "faster", "slower", "no significant change", "not testable (…)"
};
PairedRatioTest PairedRatio(const std::vector<double>& baseline, const std::vector<double>& candidate,
                            double alpha = kDefaultSignificanceAlpha);

// ------------------------------------------------------------------ inputs

// What a fix was expected to save, e.g. one advisor recommendation that was
// applied. `target_op` (op / kernel name or Ascend op type, matched after
// NormalizeKernelName) and/or `target_class` (OpClassName) say which ops it
// touches; with neither, the action is measured on the step latency.
struct AppliedAction {
  std::string id;                    // "rec-1", "matmul_tiling:MatMulV2"
  std::string description;
  std::string issue_type;            // IssueTypeName, "" when not tied to an issue
  std::string target_op;
  std::string target_class;
  TimeNs estimated_saved_ns = 0;     // over the baseline's analysed steps
  uint64_t estimate_steps = 0;       // steps the estimate covers (0 = the baseline diagnosis' steps)
  std::string source;                // "advisor", "actions file", "baseline issue resolved in candidate"
};

// Parses {"actions":[{"id":…, "description":…, "issue_type":…, "target_op":…,
// "target_class":…, "estimated_saved_ns":…, "estimate_steps":…}, …]} (or a
// bare array). Errors name the element and field.
StatusOr<std::vector<AppliedAction>> ParseAppliedActions(std::string_view json, std::string_view origin);

struct CompareOptions {
  double alpha = kDefaultSignificanceAlpha;
  double estimate_tolerance = kDefaultEstimateTolerance;
  // Applied actions; when empty, every baseline issue absent from the
  // candidate is taken as applied (source "baseline issue resolved in candidate").
  std::vector<AppliedAction> actions;
  bool actions_from_resolved_issues = true;
};

// One run ready for comparison: the profile, its graph and its diagnosis.
struct CompareRun {
  const OperatorCallGraph* graph = nullptr;   // graph->profile() is the run's profile
  const DiagnosticReport* diagnosis = nullptr;
  // What the run's session already computed; null: computed by CompareProfiles.
  const OpClassification* classes = nullptr;
  const StatusOr<ModelStructure>* structure = nullptr;
};

// A run for comparison: its session (profile, graph, cached products) and the
// diagnosis the session computed (null when the run was not diagnosed).
struct LoadedRun {
  std::unique_ptr<ProfileSession> session;
  const DiagnosticReport* diagnosis = nullptr;
  CompareRun view() const {
    return CompareRun{&session->graph(), diagnosis, &session->Classes(), &session->Structure()};
  }
};
// ProfileSession::Open + the diagnosis.
StatusOr<LoadedRun> LoadRunForCompare(const std::string& path, const ImportOptions& import = {},
                                      const DiagnoseOptions& diagnose = {});
// Same for a profile already in memory (moved in).
StatusOr<LoadedRun> PrepareRunForCompare(Profile profile, const DiagnoseOptions& diagnose = {});

// ------------------------------------------------------------------ results

enum class MatchLevel : uint8_t {
  kExact = 0,        // same class, name and shape
  kNormalizedName,   // same class and shape, names equal after NormalizeKernelName
  kClassShape,       // same class and shape, different names (renamed / replaced kernel)
  kClassName,        // same class and normalised name, shape changed
  kClass,            // same class only: the class's remaining unmatched ops merged per side
  kBaselineOnly,     // removed in the candidate
  kCandidateOnly,    // new in the candidate
};
inline constexpr size_t kMatchLevelCount = 7;
const char* MatchLevelName(MatchLevel level);  // "exact", "normalized_name", "class_shape", "class_name", "class", "baseline_only", "candidate_only"

struct OpDelta {
  MatchLevel match = MatchLevel::kExact;
  std::string op_class;              // OpClassName
  std::string baseline_name;         // "" when candidate only
  std::string candidate_name;        // "" when baseline only
  std::string baseline_shape;        // input shapes as written ("" when unknown)
  std::string candidate_shape;
  uint32_t baseline_ops = 0;         // op groups behind this row (> 1: class-level merge; name = the largest)
  uint32_t candidate_ops = 0;
  uint64_t baseline_count = 0;       // calls over the compared steps
  uint64_t candidate_count = 0;
  TimeNs baseline_ns = 0;            // total time over the compared steps
  TimeNs candidate_ns = 0;
  double baseline_per_step_ns = 0;   // total / compared steps
  double candidate_per_step_ns = 0;
  double delta_per_step_ns = 0;      // candidate - baseline
  SignificanceTest test;             // per-step time of the op
};

struct ClassDelta {
  std::string op_class;
  uint64_t baseline_count = 0;
  uint64_t candidate_count = 0;
  TimeNs baseline_ns = 0;
  TimeNs candidate_ns = 0;
  double baseline_per_step_ns = 0;
  double candidate_per_step_ns = 0;
  double delta_per_step_ns = 0;
  SignificanceTest test;
};

enum class IssueChange : uint8_t { kResolved, kRemaining, kNew };
const char* IssueChangeName(IssueChange change);  // "resolved", "remaining", "new"

struct IssueDelta {
  IssueChange change = IssueChange::kRemaining;
  std::string type;                  // IssueTypeName
  std::string op_name;               // as written in the baseline (candidate for new issues)
  std::string baseline_severity;     // "" when absent
  std::string candidate_severity;
  TimeNs baseline_affected_ns = 0;
  TimeNs candidate_affected_ns = 0;
  TimeNs baseline_saved_ns = 0;      // estimated saving of the issue in each run
  TimeNs candidate_saved_ns = 0;
};

struct ActionOutcome {
  AppliedAction action;
  uint64_t matched_ops = 0;          // op pairs whose baseline (or candidate) name / class the action targets
  std::string measured_on;           // "ops MatMulV2 (2 matched)", "class matmul", "step latency"
  double estimated_per_step_ns = 0;  // estimate / estimate steps
  double measured_per_step_ns = 0;   // baseline - candidate per step (positive = saved)
  double measured_over_estimated = kNaN;
  SignificanceTest test;             // of the targeted time per step
  std::string verdict;               // "as estimated", "below estimate", "above estimate", "no measurable change", "not testable"
};

struct RunSide {
  std::string source_path;
  std::string format;
  std::string hardware;
  uint64_t steps_total = 0;          // graph steps
  std::vector<int64_t> compared_steps;  // step numbers used
  std::vector<double> step_latency_ns;  // latency of each compared step (same order)
  LatencyStats latency;              // of the compared steps (ms)
  uint64_t ops_counted = 0;          // device tasks (or host ops) inside the compared steps
  uint64_t ops_outside_steps = 0;    // left out (outside every compared step)
  TimeNs op_time_ns = 0;             // their total time
  uint64_t issues = 0;
  double estimated_combined_speedup = 1.0;
  bool device_ops = true;            // ops are device tasks (false: host operators, CPU-only runs)
};

struct ComparisonReport {
  RunSide baseline;
  RunSide candidate;
  std::string step_basis;            // "decode steps" | "all steps"
  SignificanceTest step_latency;     // per-step latency (ns)
  double measured_speedup = kNaN;    // mean baseline step latency / mean candidate
  double alpha = kDefaultSignificanceAlpha;
  std::vector<ClassDelta> classes;   // by |delta| desc
  std::vector<OpDelta> ops;          // by |delta| desc
  uint64_t match_counts[kMatchLevelCount] = {};
  std::vector<IssueDelta> issues;    // resolved, then remaining, then new
  std::vector<ActionOutcome> actions;
  std::vector<std::string> notes;

  // The one-line answer, first in every rendering: "identical profiles",
  // "faster x1.21 [1.12, 1.31]", "slower x0.93 [0.90, 0.96]", "no significant
  // change (p=0.41)", or why it cannot be tested.
  std::string Verdict() const;
  bool Identical() const;            // same per-step latencies and no op time changed

  // Renderers (src/report/compare_render.cc). JSON schema "pypto.compare/1".
  std::string to_text() const;       // aligned plain tables for a terminal
  std::string to_markdown() const;
  std::string to_json() const;
  std::string to_html() const;
  // The JSON document written to any sink (the Python binding's native objects).
  void Write(io::ValueSink& sink) const;
};

StatusOr<ComparisonReport> CompareProfiles(const CompareRun& baseline, const CompareRun& candidate,
                                           const CompareOptions& options = {});

// The Python-facing name: ProfileComparer(baseline, optimized).generate_comparison_report().
class ProfileComparer {
 public:
  ProfileComparer(std::string baseline_path, std::string optimized_path, CompareOptions options = {})
      : baseline_path_(std::move(baseline_path)), optimized_path_(std::move(optimized_path)),
        options_(std::move(options)) {}
  StatusOr<ComparisonReport> generate_comparison_report(const ImportOptions& import = {},
                                                        const DiagnoseOptions& diagnose = {}) const;

 private:
  std::string baseline_path_;
  std::string optimized_path_;
  CompareOptions options_;
};

}  // namespace pypto
