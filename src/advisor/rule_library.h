// The advisor's rule library, kept as data: data/advisor/rules/<issue_type>.json
// (one file per issue type, one entry per rule, embedded into the binary like
// the hardware table; format in docs/advisor.md). A rule says, for an issue
// type on a backend and optional features (model arch, phase, dtype, head dim,
// the issue's op type), which actions fix it, in order of preference, each
// with its prerequisite and how its gain is estimated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/diagnostic_report.h"
#include "core/status.h"

namespace pypto::advisor {

inline constexpr char kRuleSchema[] = "pypto.advisor.rules/1";

enum class Backend : uint8_t { kAscend = 0, kCuda, kRocm, kCpu };
inline constexpr size_t kBackendCount = 4;
const char* BackendName(Backend backend);              // "ascend", "cuda", "rocm", "cpu"
bool BackendFromName(std::string_view name, Backend* backend);

// How an action's gain is estimated from the issue it fixes.
enum class GainBasis : uint8_t {
  kIssueSaving = 0,   // "issue_saving": the detector's estimated saving (× fraction, default 1)
  kAffectedFraction,  // "affected_fraction": fraction × the issue's affected time
  kMeasuredGap,       // "measured_gap": fraction × a measured time metric of the issue's evidence
  kNone,              // "none": not estimable from the profile
};
const char* GainBasisName(GainBasis basis);

struct GainModel {
  GainBasis basis = GainBasis::kIssueSaving;
  double fraction = 1.0;        // in (0, 1]
  std::string metric;           // kMeasuredGap: evidence metric name (unit ns / us / ms)
  std::string source;           // where the figure comes from
};

enum class ActionKind : uint8_t { kCode = 0, kEnv, kConfig, kCommand };
const char* ActionKindName(ActionKind kind);  // "code", "env", "config", "command"

// Features a rule can require; an empty list accepts anything. Values are
// lower case. phases: "prefill", "decode", "unknown" (the issue has none).
// archs: model arch ("llama", "qwen", …; "unknown" when not given). dtypes:
// "bf16", "fp16", "fp32", "int64", "float64", … (issue dtypes, else the
// model's). op_types: the issue's op type (fusible_sequence pattern key,
// Ascend OP Type). workloads: "training", "inference", "unknown" (the
// diagnosis's ClassifyWorkload). head_dim_multiple_of / head_dim_not_multiple_of: 0 = no test.
struct RuleMatch {
  std::vector<std::string> workloads;
  std::vector<std::string> archs;
  std::vector<std::string> phases;
  std::vector<std::string> dtypes;
  std::vector<std::string> op_types;
  int64_t head_dim_multiple_of = 0;
  int64_t head_dim_not_multiple_of = 0;
  // An issue whose metric is above the bound does not match: the profile shows
  // the action's precondition is false ({"wait_share": 0.5}: overlapping a
  // collective does not help a rank that mostly waits for a peer). A metric
  // the profile does not give refutes nothing.
  std::vector<std::pair<std::string, double>> metrics_at_most;
  // Number of constrained features (more specific rules win).
  int Specificity() const;
};

struct RuleAction {
  std::string id;               // snake_case, unique within the rule
  ActionKind kind = ActionKind::kCode;
  std::string description;      // may hold {placeholders} (see FillPlaceholders)
  std::string action;           // the concrete code / env var / config / command
  std::string prerequisite;     // "torch_npu >= 2.1, CANN >= 8.0"
  std::string artifact;         // "" or the optimizer that writes a file for it:
                                // "tiling_config", "kv_cache_patch", "norm_fusion_plan"
  GainModel gain;
  // The action's precondition in the profile ("when" in the file, same keys as
  // a rule's "match"): an action whose precondition the issue does not meet is
  // not offered (a repeat_kv remedy only for a Tile/Expand op, graph capture
  // of a decode step only for inference). Empty accepts anything.
  RuleMatch when;
};

struct Rule {
  std::string id;               // "<issue_type>.<…>", unique in the library
  IssueType issue_type = IssueType::kMatmulTiling;
  std::vector<Backend> backends;
  RuleMatch match;
  std::string title;
  std::vector<std::string> sources;  // reference sections / upstream documents
  std::vector<RuleAction> actions;   // order of preference (>= 1)
  size_t order = 0;                  // position in its file (ties between equally specific rules)
};

struct RuleLibrary {
  std::vector<Rule> rules;
  // Backends each issue type applies to (the file's "applies_to"), by IssueType index.
  std::vector<std::vector<Backend>> applies_to = std::vector<std::vector<Backend>>(kIssueTypeCount);
  std::vector<std::string> files;    // names read ("rules/matmul_tiling.json", …)

  std::vector<const Rule*> RulesFor(IssueType type, Backend backend) const;
  const Rule* FindRule(std::string_view id) const;
};

// Parses one rule file (JSON text). `name` is used in error messages.
Status ParseRuleFile(std::string_view json, std::string_view name, RuleLibrary* library);
// The embedded library (data/advisor/rules/<issue_type>.json for every issue
// type); the error names the file and the problem. Parsed once.
StatusOr<const RuleLibrary*> BuiltinRuleLibrary();

}  // namespace pypto::advisor
