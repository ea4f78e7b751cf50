// The "analyze" report as plain data: what `pypto analyze` prints and what the
// Python `ProfileResults` summary exposes. Built from a Profile and its
// OperatorCallGraph only by copying what those APIs return (names resolved to
// text); the renderers (analysis_text.h, analysis_json.h) format this struct
// and compute nothing.
#pragma once

#include "analysis/structure.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "graph/call_graph.h"
#include "graph/op_statistic.h"
#include "graph/pipe_ratios.h"
#include "importers/importer.h"
#include "model/profile.h"

namespace pypto::report {

// Rows shown in the "top" tables unless the caller asks otherwise.
inline constexpr size_t kDefaultTopRows = 10;

struct SummaryOptions {
  // Restrict per-step figures (critical path, utilization) to the step with this
  // number (ProfilerStep#N / Step Id). Absent: the whole profile.
  std::optional<int64_t> step_number;
  size_t top_rows = kDefaultTopRows;
};

struct DeviceSummary {
  int32_t index = 0;
  std::string kind;  // DeviceKindName: "cpu", "cuda", "rocm", "npu", …
  std::string name;
};

struct StepSummary {
  int64_t number = -1;
  std::string name;
  std::string source;
  int32_t device = -1;
  TimeWindow cpu;
  TimeNs device_start = kNoTime;
  TimeNs device_end = kNoTime;
  uint64_t device_task_count = 0;
  TimeNs latency_ns = 0;
  // This step's critical path latency when every step's path was computed
  // (CriticalPathSummary::scope "median step"), else -1.
  TimeNs critical_path_ns = -1;
  // Ascend step_trace_time breakdown of the matching StepRow (same number and
  // device): (snake_case key, ns) for every field the source gave, in
  // StepBreakdownFields order; empty when the step has none.
  std::vector<std::pair<std::string, TimeNs>> breakdown = {};
};

// Keys and display names of the step breakdown fields, in StepRow order.
struct StepBreakdownField {
  const char* key;    // JSON key: "computing", "communication_not_overlapped", …
  const char* label;  // text heading as step_trace_time.csv spells it: "Computing", …
};
const std::vector<StepBreakdownField>& StepBreakdownFields();

struct UtilizationRow {
  int32_t device = -1;
  int64_t stream = -1;   // stream rows only
  std::string label;     // stream name (stream rows) or core type / task kind (core rows)
  uint64_t task_count = 0;
  TimeNs task_sum_ns = 0;
  TimeNs busy_ns = 0;
  TimeNs window_ns = 0;
  double utilization = 0;
  double share = 0;      // core rows: share of the device's busy time
};

struct HostOpSummary {
  std::string name;
  std::string kind;
  uint64_t count = 0;
  TimeNs self_ns = 0;
  TimeNs total_ns = 0;
  TimeNs mean_ns = 0;
  TimeNs device_ns = 0;
};

struct DeviceTaskSummary {
  std::string name;
  std::string kind;
  uint64_t count = 0;
  TimeNs total_ns = 0;
  TimeNs mean_ns = 0;
  double share_of_busy = 0;
};

struct KindCount {
  std::string kind;
  uint64_t count = 0;
  TimeNs total_ns = 0;      // device task kinds only: summed durations
  double share_of_busy = 0; // device task kinds only: busy_ns / device busy (at most 1)
  TimeNs busy_ns = 0;       // device task kinds only: union of the kind's tasks per device
};

struct PathKindTime {
  PathSegmentKind kind = PathSegmentKind::kHostBound;
  std::string name;  // PathSegmentKindName: "host-bound", "launch overhead", …
  TimeNs total_ns = 0;
};

// What the critical path figures cover.
inline constexpr std::string_view kPathScopeWholeProfile = "whole profile";
inline constexpr std::string_view kPathScopeStep = "step";    // --step N
inline constexpr std::string_view kPathScopeMedianStep = "median step";  // no --step, several steps

struct CriticalPathSummary {
  std::string_view scope = kPathScopeWholeProfile;
  // Scope "median step": how many steps had a path computed, and the step
  // whose path this is (median by path latency).
  uint64_t step_count = 0;
  int64_t step_number = -1;
  std::string step_name;
  TimeWindow window;
  TimeNs latency_ns = 0;
  TimeNs path_start = 0;
  TimeNs path_end = 0;
  uint64_t segment_count = 0;
  std::vector<PathKindTime> breakdown;  // every PathSegmentKind, in enum order
  uint64_t nodes = 0;
  uint64_t edges = 0;
  uint64_t dropped_nodes = 0;
  uint64_t skipped_edges = 0;
  uint64_t skewed_launches = 0;  // tasks starting before their launch call (clock skew)
  TimeNs max_launch_skew_ns = 0;
  uint64_t queued_tasks = 0;  // tasks queued behind device work: their launch is not on the path
};

struct DataLossSummary {
  std::string reason;
  uint64_t count = 0;
  std::string first_location;
  std::string kind;      // LossKindInfo::name ("row_skipped", …)
  std::string severity;  // "high", "medium", "low"
};

struct AnalysisSummary {
  std::string source_path;
  std::vector<std::pair<std::string, std::string>> metadata;  // sorted by key
  std::vector<std::string> source_files;
  std::vector<DeviceSummary> devices;

  std::vector<StepSummary> steps;
  // Step latency per phase ("prefill", "decode") from the structure analysis
  // (AddPhaseLatencies); empty when it was not run or no phase is known.
  std::vector<std::pair<std::string, LatencyStats>> phase_latency;
  std::optional<int64_t> selected_step;  // --step N
  TimeWindow profile_window;             // first start to last end of the profile
  TimeWindow analysis_window;            // window of the per-step figures (whole profile or step N)

  std::vector<UtilizationRow> device_utilization;
  std::vector<UtilizationRow> stream_utilization;
  std::vector<UtilizationRow> core_type_utilization;
  TimeNs total_device_busy_ns = 0;       // whole profile, sum over devices

  size_t top_rows = kDefaultTopRows;
  uint64_t distinct_host_op_names = 0;   // operators grouped by name (before the top cut)
  uint64_t distinct_device_task_names = 0;
  std::vector<HostOpSummary> top_host_ops;         // operators by self time
  std::vector<DeviceTaskSummary> top_device_tasks; // by total time
  std::vector<KindCount> device_task_kinds;
  // Ascend PMU pipe ratios per op type (graph/pipe_ratios.h), top `top_rows`
  // by total time; empty when no task carries a `*_ratio` attribute.
  std::vector<PipeRatioAggregate> pipe_ratios_by_op_type;
  uint64_t distinct_pipe_ratio_op_types = 0;  // before the top cut
  // Ascend op_statistic.csv rows (graph/op_statistic.h), top `top_rows` by
  // device then total time; empty when the profile has none.
  std::vector<OpStatisticRow> op_statistic;
  uint64_t op_statistic_rows = 0;  // before the top cut

  CriticalPathSummary critical_path;

  uint64_t op_count = 0;                 // host ops of kind operator
  std::vector<KindCount> host_op_kinds;  // every kind with count > 0
  uint64_t host_op_total = 0;
  uint64_t device_task_total = 0;

  std::vector<DataLossSummary> data_loss;                   // importer counters
  std::vector<std::pair<std::string, uint64_t>> link_stats; // graph GraphStats, by field name
  std::vector<std::string> notes;                           // importer notes
};

// Ascend additions to a summary (pipe ratios per op type, step breakdowns);
// called by SummarizeAnalysis. Leaves the summary as it is for profiles
// without PMU ratios or step breakdowns.
void AddAscendSummary(const OperatorCallGraph& graph, const SummaryOptions& options, AnalysisSummary* summary);

// Adds the step latency per phase the structure analysis decided (decode,
// prefill), for summaries whose steps are summarised rather than listed.
void AddPhaseLatencies(const ModelStructure& structure, AnalysisSummary* summary);

// Collects the summary. Errors: kInvalidArgument when options.step_number names
// no step (the message lists the steps there are).
StatusOr<AnalysisSummary> SummarizeAnalysis(const OperatorCallGraph& graph, const SummaryOptions& options = {});

// Stable snake_case key of a path segment kind for the JSON schema ("host_bound").
const char* PathSegmentKindKey(PathSegmentKind kind);

}  // namespace pypto::report
