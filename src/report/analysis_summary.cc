#include "report/analysis_summary.h"

#include <algorithm>
#include <numeric>

#include "model/phase_timer.h"

namespace pypto::report {
namespace {

constexpr HostOpKind kAllHostOpKinds[] = {HostOpKind::kOperator, HostOpKind::kUserAnnotation,
                                           HostOpKind::kRuntime,  HostOpKind::kDriver,
                                           HostOpKind::kPython,   HostOpKind::kOther};

std::string StepList(const std::vector<StepInfo>& steps) {
  std::vector<int64_t> numbers;
  for (const StepInfo& step : steps)
    if (step.number >= 0) numbers.push_back(step.number);
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  if (numbers.empty()) return "the profile has no numbered steps (it is analysed as one window)";
  std::string text = "available steps: ";
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(numbers[i]);
  }
  return text;
}

// Index into graph.Steps() of step `number`; per-device step rows (Ascend)
// share a number, and the first (lowest device) is taken.
StatusOr<size_t> FindStep(const OperatorCallGraph& graph, int64_t number) {
  const auto& steps = graph.Steps();
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].number == number && number >= 0) return i;
  const auto& source = graph.profile().metadata;
  auto path = source.find("source_path");
  return InvalidArgumentError((path != source.end() ? path->second + ": " : std::string()) + "no step " +
                              std::to_string(number) + "; " + StepList(steps));
}

std::vector<UtilizationRow> ConvertBusyTimes(const Profile& profile, const std::vector<BusyTime>& rows,
                                             bool stream_rows) {
  std::vector<UtilizationRow> converted;
  converted.reserve(rows.size());
  for (const BusyTime& row : rows) {
    UtilizationRow out;
    out.device = row.device;
    out.stream = row.stream;
    if (stream_rows) {
      if (row.track < profile.tracks.size()) out.label = std::string(profile.Str(profile.tracks.name[row.track]));
    } else {
      out.label = row.label;
    }
    out.task_count = row.task_count;
    out.task_sum_ns = row.task_sum_ns;
    out.busy_ns = row.busy_ns;
    out.window_ns = row.window_ns;
    out.utilization = row.utilization;
    out.share = row.share;
    converted.push_back(std::move(out));
  }
  return converted;
}

CriticalPathSummary ConvertCriticalPath(const CriticalPath& path) {
  CriticalPathSummary out;
  out.window = path.window;
  out.latency_ns = path.latency_ns;
  out.path_start = path.path_start;
  out.path_end = path.path_end;
  out.segment_count = path.segment_count;
  for (size_t index = 0; index < kPathSegmentKindCount; ++index) {
    const auto kind = static_cast<PathSegmentKind>(index);
    out.breakdown.push_back({kind, PathSegmentKindName(kind), path.breakdown_ns[index]});
  }
  out.nodes = path.nodes;
  out.edges = path.edges;
  out.dropped_nodes = path.dropped_nodes;
  out.skipped_edges = path.skipped_edges;
  out.skewed_launches = path.skewed_launches;
  out.max_launch_skew_ns = path.max_launch_skew_ns;
  out.queued_tasks = path.queued_tasks;
  return out;
}

std::vector<std::pair<std::string, uint64_t>> LinkStats(const GraphStats& stats) {
  return {
      {"host_ops", stats.host_ops},
      {"device_tasks", stats.device_tasks},
      {"rounding_overlaps", stats.rounding_overlaps},
      {"partial_overlaps", stats.partial_overlaps},
      {"max_depth", stats.max_depth},
      {"tasks_linked_by_correlation", stats.tasks_linked_by_correlation},
      {"tasks_with_unmatched_correlation", stats.tasks_with_unmatched_correlation},
      {"tasks_without_correlation", stats.tasks_without_correlation},
      {"tasks_attributed_by_nesting", stats.tasks_attributed_by_nesting},
      {"tasks_attributed_by_external_id", stats.tasks_attributed_by_external_id},
      {"tasks_unattributed", stats.tasks_unattributed},
      {"graph_launches", stats.graph_launches},
      {"graph_launched_tasks", stats.graph_launched_tasks},
      {"runtime_calls", stats.runtime_calls},
      {"runtime_calls_without_task", stats.runtime_calls_without_task},
      {"runtime_calls_without_operator", stats.runtime_calls_without_operator},
      {"duplicate_correlations", stats.duplicate_correlations},
  };
}

}  // namespace

const char* PathSegmentKindKey(PathSegmentKind kind) {
  switch (kind) {
    case PathSegmentKind::kHostBound: return "host_bound";
    case PathSegmentKind::kLaunchOverhead: return "launch_overhead";
    case PathSegmentKind::kDeviceCompute: return "device_compute";
    case PathSegmentKind::kMemoryCopy: return "memory_copy";
    case PathSegmentKind::kCommunication: return "communication";
    case PathSegmentKind::kKernelGap: return "kernel_gap";
    case PathSegmentKind::kSyncWait: return "sync_wait";
  }
  return "other";
}

StatusOr<AnalysisSummary> SummarizeAnalysis(const OperatorCallGraph& graph, const SummaryOptions& options) {
  const Profile& profile = graph.profile();
  AnalysisSummary summary;

  // Step choice first: a wrong --step must fail before any work is done.
  std::optional<size_t> step_index;
  if (options.step_number) {
    PYPTO_ASSIGN_OR_RETURN(step_index, FindStep(graph, *options.step_number));
    summary.selected_step = options.step_number;
  }

  if (auto it = profile.metadata.find("source_path"); it != profile.metadata.end()) summary.source_path = it->second;
  summary.metadata.assign(profile.metadata.begin(), profile.metadata.end());  // std::map: already sorted
  summary.source_files = profile.source_files;
  for (const DeviceRow& device : profile.devices.rows)
    summary.devices.push_back({device.index, DeviceKindName(device.kind), std::string(profile.Str(device.name))});

  for (const StepInfo& step : graph.Steps()) {
    summary.steps.push_back({step.number, step.name, step.source, step.device, step.cpu, step.device_start,
                             step.device_end, step.device_task_count, step.latency_ns()});
  }
  summary.profile_window = graph.WholeWindow();

  // The critical path defines the window of the per-step figures, so that
  // utilization and path latency describe the same interval.
  PhaseTimer path_timer("summary.critical_path");
  // Totals only: the summary prints the segment count, not the segments.
  // Without --step, a profile of separate iterations (ProfilerStep#N) gets
  // the path of its median step by path latency, as HTA analyses one
  // iteration: a whole-profile path would cross the steps' boundaries, and
  // its DAG grows with the profile (each step's DAG is built on its own).
  const bool per_step = !step_index && graph.HasSeparateHostSteps();
  std::vector<CriticalPath> step_paths;
  CriticalPath path;
  size_t median = 0;
  if (per_step) {
    step_paths = graph.ComputeEveryStepCriticalPathTotals();
    std::vector<size_t> order(step_paths.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return step_paths[a].latency_ns < step_paths[b].latency_ns; });
    median = order[(order.size() - 1) / 2];  // the lower middle for an even count
    path = step_paths[median];
  } else {
    PYPTO_ASSIGN_OR_RETURN(path, graph.ComputeCriticalPathTotals(step_index));
  }
  path_timer.Stop();
  PhaseTimer rest_timer("summary.busy+aggregates");
  summary.critical_path = ConvertCriticalPath(path);
  if (per_step) {
    summary.critical_path.scope = kPathScopeMedianStep;
    summary.critical_path.step_count = step_paths.size();
    summary.critical_path.step_number = summary.steps[median].number;
    summary.critical_path.step_name = summary.steps[median].name;
    for (size_t i = 0; i < step_paths.size() && i < summary.steps.size(); ++i)
      summary.steps[i].critical_path_ns = step_paths[i].latency_ns;
  } else if (step_index) {
    summary.critical_path.scope = kPathScopeStep;
  }
  summary.analysis_window = step_index ? path.window : graph.WholeWindow();

  const std::optional<TimeWindow> window =
      step_index ? std::optional<TimeWindow>(summary.analysis_window) : std::nullopt;
  summary.device_utilization = ConvertBusyTimes(profile, graph.DeviceBusyTimes(window), false);
  summary.stream_utilization = ConvertBusyTimes(profile, graph.StreamBusyTimes(window), true);
  summary.core_type_utilization = ConvertBusyTimes(profile, graph.AiCoreUtilization(window), false);
  summary.total_device_busy_ns = graph.TotalDeviceBusyNs();

  summary.top_rows = options.top_rows;
  const std::vector<HostOpAggregate> host_ops = graph.TopHostOpsBySelfTime(0, HostOpKind::kOperator);
  summary.distinct_host_op_names = host_ops.size();
  for (size_t i = 0; i < host_ops.size() && i < options.top_rows; ++i) {
    const HostOpAggregate& op = host_ops[i];
    summary.top_host_ops.push_back({std::string(profile.Str(op.name)), HostOpKindName(op.kind), op.count,
                                    op.self_ns, op.total_ns, op.mean_ns, op.device_ns});
  }
  const std::vector<DeviceTaskAggregate> tasks = graph.TopDeviceTasksByTotalTime(0);
  summary.distinct_device_task_names = tasks.size();
  for (size_t i = 0; i < tasks.size() && i < options.top_rows; ++i) {
    const DeviceTaskAggregate& task = tasks[i];
    summary.top_device_tasks.push_back({std::string(profile.Str(task.name)), DeviceTaskKindName(task.kind),
                                        task.count, task.total_ns, task.mean_ns, task.share_of_busy});
  }
  for (const DeviceTaskKindTotal& kind : graph.DeviceTaskKindTotals())
    summary.device_task_kinds.push_back(
        {DeviceTaskKindName(kind.kind), kind.count, kind.total_ns, kind.share_of_busy, kind.busy_ns});

  summary.op_count = graph.OpCount();
  const auto host_counts = graph.HostOpCountsByKind();
  for (HostOpKind kind : kAllHostOpKinds) {
    const uint64_t count = host_counts[static_cast<size_t>(kind)];
    if (count > 0) summary.host_op_kinds.push_back({HostOpKindName(kind), count, 0, 0});
  }
  summary.host_op_total = profile.host_ops.size();
  summary.device_task_total = profile.device_tasks.size();

  // Most severe first (rows or files missing before repaired values), then by reason.
  for (const auto& [reason, entry] : profile.data_loss) {
    const LossKindInfo& info = DescribeLoss(entry.kind);
    summary.data_loss.push_back({reason, entry.count, entry.first_location, info.name, LossSeverityName(info.severity)});
  }
  auto rank = [](const DataLossSummary& d) { return d.severity == "high" ? 0 : d.severity == "medium" ? 1 : 2; };
  std::stable_sort(summary.data_loss.begin(), summary.data_loss.end(),
                   [&](const DataLossSummary& a, const DataLossSummary& b) { return rank(a) < rank(b); });
  summary.link_stats = LinkStats(graph.stats());
  summary.notes = profile.notes;
  AddAscendSummary(graph, options, &summary);
  return summary;
}

void AddPhaseLatencies(const ModelStructure& structure, AnalysisSummary* summary) {
  summary->phase_latency.clear();
  if (structure.prefill_latency.count > 0) summary->phase_latency.push_back({"prefill", structure.prefill_latency});
  if (structure.decode_latency.count > 0) summary->phase_latency.push_back({"decode", structure.decode_latency});
}

}  // namespace pypto::report
