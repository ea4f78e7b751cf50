// TuningAdvisor: diagnosis (issues with estimated savings) + model config +
// backend → recommendations ranked by expected end-to-end gain.
//
// One recommendation per matched rule: the issues of one type that select the
// same rule are grouped (e.g. three badly tiled MatMul shapes → one AOE run).
// Its saving is the sum over its issues of the preferred action's gain model
// (rule_library.h GainModel), clamped to 99 % of the step time basis; the
// estimated speedup is Amdahl over the step time basis T of the diagnosis:
//   speedup = T / (T - saved).
// The alternatives carry their own estimates. Ranking: saved time (desc),
// then severity, then rule id.
#pragma once

#include <string>
#include <vector>

#include "advisor/model_config.h"
#include "advisor/rule_library.h"
#include "analysis/diagnostic_report.h"
#include "core/status.h"

namespace pypto::advisor {

// Share of the step time basis a recommendation may claim at most (unitless).
// Source: the same clamp as CombineSavings (diagnostic_report.h): a fix never
// removes the whole step.
inline constexpr double kMaxSavedShare = 0.99;

struct ActionAdvice {
  std::string id;
  ActionKind kind = ActionKind::kCode;
  std::string description;      // placeholders filled
  std::string action;           // placeholders filled
  std::string prerequisite;
  std::string artifact;         // optimizer kind ("" none)
  TimeNs saved_ns = 0;          // estimated saving over the step basis
  double estimated_speedup = 1.0;
  bool estimated = false;       // false for GainBasis::kNone
  std::string gain_formula;     // "sum of issue savings (roofline: …) = 120.0 us"
  std::string gain_source;
};

struct IssueRef {
  IssueType type = IssueType::kMatmulTiling;
  Severity severity = Severity::kLow;
  std::string op_name;
  std::string op_type;
  std::string phase;
  std::string detail;
  TimeNs affected_ns = 0;
  TimeNs saved_ns = 0;          // the detector's estimate
  std::string saving_formula;
  Evidence evidence;
  size_t index = 0;             // position in DiagnosticReport::issues
};

struct Recommendation {
  int rank = 0;                      // 1 = largest expected gain
  IssueType hotspot_type = IssueType::kMatmulTiling;
  std::string rule_id;
  Severity severity = Severity::kLow;  // highest among its issues
  std::string description;           // the rule title
  std::string action;                // the preferred action (filled)
  std::string prerequisite;
  TimeNs saved_ns = 0;               // of the preferred action
  double estimated_speedup = 1.0;    // T / (T - saved_ns)
  std::string speedup_formula;       // "T / (T - saved) = 8092.0 / (8092.0 - 224.2) us"
  std::vector<ActionAdvice> actions; // preferred first, then the alternatives
  std::vector<IssueRef> issues;      // the evidence: issues this recommendation fixes
  std::vector<std::string> sources;
  std::vector<std::string> artifacts;  // paths written (WriteArtifacts)
};

struct AdviceReport {
  std::string source_path;
  Backend backend = Backend::kCpu;
  std::string backend_reason;          // "hardware 910B3 (ascend)", "--backend"
  std::string hardware_id;
  std::string hardware_name;
  ModelConfig model;
  TimeNs step_time_ns = 0;
  std::string step_basis;
  Workload workload = Workload::kUnknown;  // from the diagnosis: decides which actions apply
  std::string workload_reason;
  std::vector<Recommendation> recommendations;  // ranked
  std::vector<std::string> unmatched;  // issues without a rule for this backend ("no_pipe_bound on cuda")
  std::vector<std::string> notes;      // from the diagnosis, plus the advisor's
  // Combined over all issues the recommendations cover (CombineSavings: per
  // row the largest saving, no double counting).
  TimeNs combined_saved_ns = 0;
  double combined_speedup = 1.0;
  std::vector<std::string> artifacts;  // every path written
};

struct AdviseOptions {
  // Force a backend; empty = BackendOfReport.
  std::string backend;
};

// Amdahl: T / (T - saved); 1 when T <= 0 or saved <= 0; saved clamped to kMaxSavedShare × T.
double SpeedupFor(TimeNs step_time_ns, TimeNs saved_ns);

// Replaces {num_heads}, {num_kv_heads}, {head_dim}, {hidden}, {layers},
// {max_seq}, {dtype}, {arch}, {op_name}, {op_type}, {tune_ops_file} with the
// known values; unknown ones become <num_heads> etc.
std::string FillPlaceholders(std::string_view text, const ModelConfig& model, const IssueRef* issue);

// The TuningAdvisor engine call.
StatusOr<std::vector<Recommendation>> GenerateRecommendations(const DiagnosticReport& report,
                                                              const ModelConfig& model, Backend backend,
                                                              const RuleLibrary& library);
// With the builtin library, the backend from the report (or options), and the
// report's notes: what the CLI and Python call.
StatusOr<AdviceReport> Advise(const DiagnosticReport& report, const ModelConfig& model,
                              const AdviseOptions& options = {});

// Chooses the rule for one issue: backend and features must match; the most
// specific wins, then file order. nullptr when none.
// The rule for an issue: the most specific whose match (and at least one
// action's precondition) the issue, the model and the workload meet.
const Rule* SelectRule(const RuleLibrary& library, const Issue& issue, const ModelConfig& model, Backend backend,
                       Workload workload = Workload::kUnknown);
// True when the action's precondition ("when") holds for the issue.
bool ActionApplies(const RuleAction& action, const Issue& issue, const ModelConfig& model, Workload workload);

}  // namespace pypto::advisor
