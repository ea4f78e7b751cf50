#include "report/analysis_json.h"

#include "io/json_writer.h"

namespace pypto::report {
namespace {

constexpr int kJsonIndent = 2;

// Times that may be absent (kNoTime) and ids that may be absent (< 0) are null.
void KeyTimeOrNull(io::ValueSink& json, std::string_view key, TimeNs ns) {
  json.Key(key);
  if (ns == kNoTime) json.Null();
  else json.Int(ns);
}

void KeyIndexOrNull(io::ValueSink& json, std::string_view key, int64_t value) {
  json.Key(key);
  if (value < 0) json.Null();
  else json.Int(value);
}

void WriteWindow(io::ValueSink& json, std::string_view key, const TimeWindow& window) {
  json.Key(key);
  json.BeginObject();
  json.KeyInt("start_ns", window.start);
  json.KeyInt("end_ns", window.end);
  json.KeyInt("duration_ns", window.duration());
  json.EndObject();
}

void WriteBusyFields(io::ValueSink& json, const UtilizationRow& row) {
  json.KeyUint("task_count", row.task_count);
  json.KeyInt("task_sum_ns", row.task_sum_ns);
  json.KeyInt("busy_ns", row.busy_ns);
  json.KeyInt("window_ns", row.window_ns);
  json.KeyDouble("utilization", row.utilization);
}

void WriteUtilization(io::ValueSink& json, const AnalysisSummary& summary) {
  json.Key("utilization");
  json.BeginObject();
  json.Key("devices");
  json.BeginArray();
  for (const UtilizationRow& row : summary.device_utilization) {
    json.BeginObject();
    KeyIndexOrNull(json, "device", row.device);
    WriteBusyFields(json, row);
    json.EndObject();
  }
  json.EndArray();
  json.Key("streams");
  json.BeginArray();
  for (const UtilizationRow& row : summary.stream_utilization) {
    json.BeginObject();
    KeyIndexOrNull(json, "device", row.device);
    KeyIndexOrNull(json, "stream", row.stream);
    json.KeyString("name", row.label);
    WriteBusyFields(json, row);
    json.EndObject();
  }
  json.EndArray();
  json.Key("core_types");
  json.BeginArray();
  for (const UtilizationRow& row : summary.core_type_utilization) {
    json.BeginObject();
    KeyIndexOrNull(json, "device", row.device);
    json.KeyString("core_type", row.label);
    WriteBusyFields(json, row);
    json.KeyDouble("share_of_device_busy", row.share);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

void WriteCriticalPath(io::ValueSink& json, const CriticalPathSummary& path) {
  json.Key("critical_path");
  json.BeginObject();
  json.KeyString("scope", path.scope);
  if (path.scope == kPathScopeMedianStep) {
    json.KeyUint("step_count", path.step_count);
    KeyIndexOrNull(json, "step_number", path.step_number);
    json.KeyString("step_name", path.step_name);
  }
  WriteWindow(json, "window", path.window);
  json.KeyInt("latency_ns", path.latency_ns);
  json.KeyInt("path_start_ns", path.path_start);
  json.KeyInt("path_end_ns", path.path_end);
  json.KeyUint("segment_count", path.segment_count);
  json.Key("breakdown_ns");
  json.BeginObject();
  for (const PathKindTime& kind : path.breakdown) json.KeyInt(PathSegmentKindKey(kind.kind), kind.total_ns);
  json.EndObject();
  json.KeyUint("nodes", path.nodes);
  json.KeyUint("edges", path.edges);
  json.KeyUint("dropped_nodes", path.dropped_nodes);
  json.KeyUint("skipped_edges", path.skipped_edges);
  json.KeyUint("skewed_launches", path.skewed_launches);
  json.KeyInt("max_launch_skew_ns", path.max_launch_skew_ns);
  json.KeyUint("queued_tasks", path.queued_tasks);
  json.EndObject();
}

void WriteTopTables(io::ValueSink& json, const AnalysisSummary& summary) {
  json.Key("top_host_ops");
  json.BeginObject();
  json.KeyUint("distinct_names", summary.distinct_host_op_names);
  json.Key("rows");
  json.BeginArray();
  for (const HostOpSummary& op : summary.top_host_ops) {
    json.BeginObject();
    json.KeyString("name", op.name);
    json.KeyString("kind", op.kind);
    json.KeyUint("count", op.count);
    json.KeyInt("self_ns", op.self_ns);
    json.KeyInt("total_ns", op.total_ns);
    json.KeyInt("mean_ns", op.mean_ns);
    json.KeyInt("device_ns", op.device_ns);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();

  json.Key("top_device_kernels");
  json.BeginObject();
  json.KeyUint("distinct_names", summary.distinct_device_task_names);
  json.Key("rows");
  json.BeginArray();
  for (const DeviceTaskSummary& task : summary.top_device_tasks) {
    json.BeginObject();
    json.KeyString("name", task.name);
    json.KeyString("kind", task.kind);
    json.KeyUint("count", task.count);
    json.KeyInt("total_ns", task.total_ns);
    json.KeyInt("mean_ns", task.mean_ns);
    json.KeyDouble("share_of_busy", task.share_of_busy);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();

  json.Key("device_task_kinds");
  json.BeginArray();
  for (const KindCount& kind : summary.device_task_kinds) {
    json.BeginObject();
    json.KeyString("kind", kind.kind);
    json.KeyUint("count", kind.count);
    json.KeyInt("total_ns", kind.total_ns);
    json.KeyInt("busy_ns", kind.busy_ns);
    json.KeyDouble("share_of_busy", kind.share_of_busy);
    json.EndObject();
  }
  json.EndArray();
}

// Ascend PMU pipe ratios per op type (top rows by total time); always present,
// with no rows when no task has `*_ratio` attributes.
void WritePipeRatios(io::ValueSink& json, const AnalysisSummary& summary) {
  json.Key("pipe_ratios_by_op_type");
  json.BeginObject();
  json.KeyUint("distinct_op_types", summary.distinct_pipe_ratio_op_types);
  json.Key("rows");
  json.BeginArray();
  for (const PipeRatioAggregate& row : summary.pipe_ratios_by_op_type) {
    json.BeginObject();
    json.KeyString("op_type", row.op_type);
    json.KeyUint("count", row.count);
    json.KeyInt("total_ns", row.total_ns);
    json.Key("ratios");
    json.BeginObject();
    for (const PipeRatioMean& ratio : row.ratios) json.KeyDouble(ratio.key, ratio.mean);
    json.EndObject();
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

// op_statistic.csv rows (µs and % as the file writes them; absent columns
// omitted); always present, with no rows when the profile has none.
void WriteOpStatistic(io::ValueSink& json, const AnalysisSummary& summary) {
  json.Key("op_statistic");
  json.BeginObject();
  json.KeyUint("rows_total", summary.op_statistic_rows);
  json.Key("rows");
  json.BeginArray();
  for (const OpStatisticRow& row : summary.op_statistic) {
    json.BeginObject();
    json.KeyInt("device", row.device);
    json.KeyString("op_type", row.op_type);
    json.KeyString("core_type", row.core_type);
    const std::pair<const char*, double> fields[] = {{"count", row.count},     {"total_us", row.total_us},
                                                     {"min_us", row.min_us},   {"avg_us", row.avg_us},
                                                     {"max_us", row.max_us},   {"ratio_percent", row.ratio_percent}};
    for (const auto& [key, value] : fields)
      if (value >= 0) json.KeyDouble(key, value);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

void WriteCounts(io::ValueSink& json, const AnalysisSummary& summary) {
  json.Key("counts");
  json.BeginObject();
  json.KeyUint("op_count", summary.op_count);
  json.KeyUint("host_ops", summary.host_op_total);
  json.Key("host_ops_by_kind");
  json.BeginObject();
  for (const KindCount& kind : summary.host_op_kinds) json.KeyUint(kind.kind, kind.count);
  json.EndObject();
  json.KeyUint("device_tasks", summary.device_task_total);
  json.Key("device_tasks_by_kind");
  json.BeginObject();
  for (const KindCount& kind : summary.device_task_kinds) json.KeyUint(kind.kind, kind.count);
  json.EndObject();
  json.EndObject();
}

void WriteDataLoss(io::ValueSink& json, const AnalysisSummary& summary) {
  json.Key("data_loss");
  json.BeginArray();
  for (const DataLossSummary& entry : summary.data_loss) {
    json.BeginObject();
    json.KeyString("reason", entry.reason);
    json.KeyUint("count", entry.count);
    json.KeyString("first_location", entry.first_location);
    json.KeyString("kind", entry.kind);
    json.KeyString("severity", entry.severity);
    json.EndObject();
  }
  json.EndArray();
  json.Key("link_stats");
  json.BeginObject();
  for (const auto& [name, value] : summary.link_stats) json.KeyUint(name, value);
  json.EndObject();
  json.Key("notes");
  json.BeginArray();
  for (const std::string& note : summary.notes) json.String(note);
  json.EndArray();
}

}  // namespace

void WriteAnalysis(io::ValueSink& json, const AnalysisSummary& summary) {
  json.BeginObject();
  json.KeyString("schema", kAnalyzeJsonSchema);
  json.KeyString("pypto_version", PYPTO_VERSION);
  json.KeyString("source_path", summary.source_path);
  json.Key("metadata");
  json.BeginObject();
  for (const auto& [key, value] : summary.metadata) json.KeyString(key, value);
  json.EndObject();
  json.Key("source_files");
  json.BeginArray();
  for (const std::string& file : summary.source_files) json.String(file);
  json.EndArray();

  json.Key("devices");
  json.BeginArray();
  for (const DeviceSummary& device : summary.devices) {
    json.BeginObject();
    json.KeyInt("index", device.index);
    json.KeyString("kind", device.kind);
    json.KeyString("name", device.name);
    json.EndObject();
  }
  json.EndArray();

  json.Key("steps");
  json.BeginArray();
  for (const StepSummary& step : summary.steps) {
    json.BeginObject();
    KeyIndexOrNull(json, "number", step.number);
    json.KeyString("name", step.name);
    json.KeyString("source", step.source);
    KeyIndexOrNull(json, "device", step.device);
    json.KeyInt("cpu_start_ns", step.cpu.start);
    json.KeyInt("cpu_end_ns", step.cpu.end);
    json.KeyInt("cpu_duration_ns", step.cpu.duration());
    KeyTimeOrNull(json, "device_start_ns", step.device_start);
    KeyTimeOrNull(json, "device_end_ns", step.device_end);
    json.KeyUint("device_task_count", step.device_task_count);
    json.KeyInt("latency_ns", step.latency_ns);
    if (step.critical_path_ns >= 0) json.KeyInt("critical_path_ns", step.critical_path_ns);
    if (!step.breakdown.empty()) {
      json.Key("breakdown");
      json.BeginObject();
      for (const auto& [key, ns] : step.breakdown) json.KeyInt(key, ns);
      json.EndObject();
    }
    json.EndObject();
  }
  json.EndArray();
  if (!summary.phase_latency.empty()) {
    json.Key("phase_latency");
    json.BeginArray();
    for (const auto& [phase, st] : summary.phase_latency) {
      json.BeginObject();
      json.KeyString("phase", phase);
      json.KeyUint("steps", st.count);
      json.KeyDouble("p50_ms", st.p50_ms);
      json.KeyDouble("p90_ms", st.p90_ms);
      json.KeyDouble("p99_ms", st.p99_ms);
      json.KeyDouble("max_ms", st.max_ms);
      json.EndObject();
    }
    json.EndArray();
  }
  json.Key("selected_step");
  if (summary.selected_step) json.Int(*summary.selected_step);
  else json.Null();
  WriteWindow(json, "profile_window", summary.profile_window);
  WriteWindow(json, "analysis_window", summary.analysis_window);

  WriteCriticalPath(json, summary.critical_path);
  WriteUtilization(json, summary);
  json.KeyInt("total_device_busy_ns", summary.total_device_busy_ns);
  json.KeyUint("top_rows", summary.top_rows);
  WriteTopTables(json, summary);
  WritePipeRatios(json, summary);
  WriteOpStatistic(json, summary);
  WriteCounts(json, summary);
  WriteDataLoss(json, summary);
  json.EndObject();
}

std::string RenderAnalysisJson(const AnalysisSummary& summary) {
  std::string out;
  io::JsonWriter json(&out);
  json.set_indent(kJsonIndent);
  WriteAnalysis(json, summary);
  out.push_back('\n');
  return out;
}

}  // namespace pypto::report
