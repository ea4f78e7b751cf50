#include "report/analysis_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <map>
#include <utility>
#include <vector>

#include "analysis/statistics.h"
#include "analysis/structure.h"
#include "model/kernel_name.h"
#include "report/text_table.h"

namespace pypto::report {
namespace {

using Column = TextTable::Column;

// Metadata keys printed in the header block rather than in the metadata list.
constexpr std::string_view kSourcePathKey = "source_path";

void AppendSection(std::string* out, std::string_view title) {
  out->append("\n");
  out->append(title);
  out->append("\n");
}

void AppendTableOrNone(std::string* out, const TextTable& table, std::string_view none_text) {
  if (table.empty()) {
    out->append("  ");
    out->append(none_text);
    out->append("\n");
  } else {
    out->append(table.Render());
  }
}

std::string OrDash(const std::string& text) { return text.empty() ? "-" : text; }

std::string DeviceLabel(int32_t device) { return device < 0 ? "-" : std::to_string(device); }

std::string SpanText(TimeNs start, TimeNs end) {
  if (start == kNoTime || end == kNoTime) return "-";
  return FormatDuration(end - start);
}

std::string WindowText(const AnalysisSummary& summary) {
  if (summary.selected_step) {
    return fmt::format("step {}, {}", *summary.selected_step, FormatDuration(summary.analysis_window.duration()));
  }
  return fmt::format("whole profile, {}", FormatDuration(summary.analysis_window.duration()));
}

void AppendHeader(std::string* out, const AnalysisSummary& summary) {
  out->append(fmt::format("pypto analyze: {}\n", TerminalSafe(summary.source_path)));
  AppendSection(out, "Profile");
  TextTable table({{"KEY"}, {"VALUE"}});
  for (const auto& [key, value] : summary.metadata)
    if (key != kSourcePathKey) table.AddRow({key, value});
  for (const std::string& file : summary.source_files) table.AddRow({"source file", file});
  AppendTableOrNone(out, table, "(no metadata)");
}

void AppendDevices(std::string* out, const AnalysisSummary& summary) {
  AppendSection(out, fmt::format("Devices ({})", summary.devices.size()));
  TextTable table({{"INDEX", Align::kRight}, {"KIND"}, {"NAME"}});
  for (const DeviceSummary& device : summary.devices)
    table.AddRow({std::to_string(device.index), device.kind, OrDash(device.name)});
  AppendTableOrNone(out, table, "(no devices recorded)");
}

// The steps a text report lists: all of them, or (many steps, no --steps) the
// first and the slowest few, in step order.
std::vector<const StepSummary*> StepsShown(const AnalysisSummary& summary, const AnalysisTextOptions& options) {
  std::vector<const StepSummary*> shown;
  for (const StepSummary& step : summary.steps) shown.push_back(&step);
  if (options.all_steps || shown.size() <= kStepsListedInFull) return shown;
  std::vector<const StepSummary*> by_latency = shown;
  std::stable_sort(by_latency.begin(), by_latency.end(),
                   [](const StepSummary* a, const StepSummary* b) { return a->latency_ns > b->latency_ns; });
  std::vector<const StepSummary*> picked = {shown.front()};
  for (size_t i = 0; i < by_latency.size() && picked.size() < kSlowestStepsShown + 1; ++i)
    if (by_latency[i] != shown.front()) picked.push_back(by_latency[i]);
  std::sort(picked.begin(), picked.end());  // rows are stored in step order
  return picked;
}

// Steps far slower than the rest (median + kOutlierSigmas robust sigmas), and
// step numbers that occur more than once (a trace that restarts its counter:
// the rows are distinct steps that share a number).
void AppendStepOutliersAndRepeats(std::string* out, const AnalysisSummary& summary) {
  if (summary.steps.size() >= 3) {
    std::vector<double> ms;
    for (const StepSummary& step : summary.steps) ms.push_back(double(step.latency_ns) / 1e6);
    const auto [median, sigma] = MedianAndRobustSigma(ms);
    const double limit = median + kOutlierSigmas * sigma;
    std::vector<const StepSummary*> outliers;
    for (const StepSummary& step : summary.steps)
      if (sigma > 0 && double(step.latency_ns) / 1e6 > limit) outliers.push_back(&step);
    if (!outliers.empty()) {
      std::string named;
      for (size_t i = 0; i < outliers.size() && i < kStepsNamedInNotes; ++i)
        named += fmt::format("{}{} ({})", i ? ", " : "", outliers[i]->name.empty() ? std::to_string(outliers[i]->number) : outliers[i]->name,
                             FormatDuration(outliers[i]->latency_ns));
      if (outliers.size() > kStepsNamedInNotes) named += fmt::format(", … {} more", outliers.size() - kStepsNamedInNotes);
      out->append(fmt::format("  outliers: {} step(s) over median {:.3f} ms + {:.0f} x {:.3f} ms (robust sigma) = {:.3f} "
                              "ms: {}\n",
                              outliers.size(), median, kOutlierSigmas, sigma, limit, named));
    }
  }
  std::map<std::pair<int64_t, int32_t>, size_t> occurrences;  // (number, device) -> rows
  for (const StepSummary& step : summary.steps)
    if (step.number >= 0) ++occurrences[{step.number, step.device}];
  size_t repeated = 0;
  std::string named;
  for (const auto& [key, n] : occurrences) {
    if (n < 2) continue;
    if (repeated++ < kStepsNamedInNotes) named += fmt::format("{}#{} x{}", named.empty() ? "" : ", ", key.first, n);
  }
  if (repeated > kStepsNamedInNotes) named += fmt::format(", … {} more", repeated - kStepsNamedInNotes);
  if (repeated > 0)
    out->append(fmt::format("  note: {} step number(s) occur more than once on one device ({}): the trace restarts its "
                            "step counter; the rows are distinct steps\n",
                            repeated, named));
}

void AppendSteps(std::string* out, const AnalysisSummary& summary, const AnalysisTextOptions& options) {
  AppendSection(out, fmt::format("Steps ({})", summary.steps.size()));
  const std::vector<const StepSummary*> shown = StepsShown(summary, options);
  if (shown.size() < summary.steps.size()) {
    std::vector<TimeNs> latencies;
    for (const StepSummary& step : summary.steps) latencies.push_back(step.latency_ns);
    const LatencyStats stats = ComputeLatencyStats(latencies);
    out->append(fmt::format("  latency p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms, min {:.3f} ms, max {:.3f} ms "
                            "over {} steps; below: the first and the {} slowest ({} more: --steps lists every "
                            "step, --json has them all)\n",
                            stats.p50_ms, stats.p90_ms, stats.p99_ms, stats.min_ms, stats.max_ms, summary.steps.size(),
                            kSlowestStepsShown, summary.steps.size() - shown.size()));
    for (const auto& [phase, st] : summary.phase_latency)
      out->append(fmt::format("  {}: {} steps, p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms\n", phase,
                              st.count, st.p50_ms, st.p90_ms, st.p99_ms, st.max_ms));
  }
  AppendStepOutliersAndRepeats(out, summary);
  TextTable table({{"STEP", Align::kRight},
                   {"NAME"},
                   {"DEVICE", Align::kRight},
                   {"HOST SPAN", Align::kRight},
                   {"DEVICE SPAN", Align::kRight},
                   {"LATENCY", Align::kRight},
                   {"DEVICE TASKS", Align::kRight},
                   {"SOURCE"}});
  for (const StepSummary* step : shown) {
    table.AddRow({step->number < 0 ? "-" : std::to_string(step->number), step->name, DeviceLabel(step->device),
                  FormatDuration(step->cpu.duration()), SpanText(step->device_start, step->device_end),
                  FormatDuration(step->latency_ns), std::to_string(step->device_task_count), step->source});
  }
  AppendTableOrNone(out, table, "(no steps)");
}

// One row per step that has an Ascend step_trace_time breakdown; a column per
// field any of them gives. Nothing when no step has one.
void AppendStepBreakdown(std::string* out, const AnalysisSummary& summary, const AnalysisTextOptions& options) {
  std::vector<const StepBreakdownField*> columns;
  for (const StepBreakdownField& field : StepBreakdownFields()) {
    const bool present = std::any_of(summary.steps.begin(), summary.steps.end(), [&](const StepSummary& step) {
      return std::any_of(step.breakdown.begin(), step.breakdown.end(),
                         [&](const auto& entry) { return entry.first == field.key; });
    });
    if (present) columns.push_back(&field);
  }
  if (columns.empty()) return;
  AppendSection(out, "Step breakdown (step_trace_time)");
  std::vector<Column> heads = {{"STEP", Align::kRight}, {"DEVICE", Align::kRight}};
  for (const StepBreakdownField* field : columns) heads.push_back({field->label, Align::kRight});
  TextTable table(heads);
  for (const StepSummary* shown : StepsShown(summary, options)) {
    const StepSummary& step = *shown;
    if (step.breakdown.empty()) continue;
    std::vector<std::string> row = {step.number < 0 ? "-" : std::to_string(step.number), DeviceLabel(step.device)};
    for (const StepBreakdownField* field : columns) {
      auto it = std::find_if(step.breakdown.begin(), step.breakdown.end(),
                             [&](const auto& entry) { return entry.first == field->key; });
      row.push_back(it == step.breakdown.end() ? "-" : FormatDuration(it->second));
    }
    table.AddRow(row);
  }
  out->append(table.Render());
}

// Ascend PMU pipe ratios per op type: a column per ratio key that is non-zero
// for at least one shown op type (kernel_details writes 0.0 for the pipes of
// the core a task did not run on). Nothing when no task has ratios.
void AppendPipeRatios(std::string* out, const AnalysisSummary& summary) {
  if (summary.pipe_ratios_by_op_type.empty()) return;
  std::vector<std::string> keys;
  for (const PipeRatioAggregate& row : summary.pipe_ratios_by_op_type)
    for (const PipeRatioMean& ratio : row.ratios)
      if (ratio.mean != 0 && std::find(keys.begin(), keys.end(), ratio.key) == keys.end()) keys.push_back(ratio.key);
  std::sort(keys.begin(), keys.end());
  AppendSection(out, fmt::format("Pipe utilization by op type (PMU; top {} of {}, duration-weighted mean ratios)",
                                 summary.pipe_ratios_by_op_type.size(), summary.distinct_pipe_ratio_op_types));
  std::vector<Column> heads = {{"OP TYPE"}, {"TASKS", Align::kRight}, {"TOTAL", Align::kRight}};
  for (const std::string& key : keys) {
    std::string head = key.substr(0, key.size() - 6);  // without "_ratio"
    for (char& c : head) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    heads.push_back({head, Align::kRight});
  }
  TextTable table(heads);
  for (const PipeRatioAggregate& agg : summary.pipe_ratios_by_op_type) {
    std::vector<std::string> row = {TerminalSafe(agg.op_type), std::to_string(agg.count), FormatDuration(agg.total_ns)};
    for (const std::string& key : keys) {
      auto it = std::find_if(agg.ratios.begin(), agg.ratios.end(),
                             [&](const PipeRatioMean& ratio) { return ratio.key == key; });
      row.push_back(it == agg.ratios.end() ? "-" : FormatPercent(it->mean));
    }
    table.AddRow(row);
  }
  out->append(table.Render());
}

// op_statistic.csv as the profiler wrote it (µs figures shown as durations).
void AppendOpStatistic(std::string* out, const AnalysisSummary& summary) {
  if (summary.op_statistic.empty()) return;
  AppendSection(out, fmt::format("Op statistic (op_statistic.csv; top {} of {} rows)", summary.op_statistic.size(),
                                 summary.op_statistic_rows));
  TextTable table({{"DEVICE", Align::kRight},
                   {"OP TYPE"},
                   {"CORE TYPE"},
                   {"CALLS", Align::kRight},
                   {"TOTAL", Align::kRight},
                   {"AVG", Align::kRight},
                   {"MAX", Align::kRight},
                   {"RATIO", Align::kRight}});
  auto micros = [](double us) {
    return us < 0 ? std::string("-") : FormatDuration(static_cast<TimeNs>(std::llround(us * 1000)));
  };
  for (const OpStatisticRow& row : summary.op_statistic) {
    table.AddRow({DeviceLabel(row.device), TerminalSafe(row.op_type), TerminalSafe(row.core_type),
                  row.count < 0 ? "-" : fmt::format("{:.0f}", row.count), micros(row.total_us), micros(row.avg_us),
                  micros(row.max_us), row.ratio_percent < 0 ? "-" : FormatPercent(row.ratio_percent / 100)});
  }
  out->append(table.Render());
}

void AppendUtilization(std::string* out, const AnalysisSummary& summary) {
  AppendSection(out, fmt::format("Device utilization ({})", WindowText(summary)));
  TextTable devices({{"DEVICE", Align::kRight},
                     {"BUSY", Align::kRight},
                     {"WINDOW", Align::kRight},
                     {"UTILIZATION", Align::kRight},
                     {"TASKS", Align::kRight}});
  for (const UtilizationRow& row : summary.device_utilization) {
    devices.AddRow({DeviceLabel(row.device), FormatDuration(row.busy_ns), FormatDuration(row.window_ns),
                    FormatPercent(row.utilization), std::to_string(row.task_count)});
  }
  AppendTableOrNone(out, devices, "(no device tasks)");

  AppendSection(out, "Stream utilization");
  TextTable streams({{"DEVICE", Align::kRight},
                     {"STREAM", Align::kRight},
                     {"NAME"},
                     {"BUSY", Align::kRight},
                     {"UTILIZATION", Align::kRight},
                     {"TASKS", Align::kRight}});
  for (const UtilizationRow& row : summary.stream_utilization) {
    streams.AddRow({DeviceLabel(row.device), row.stream < 0 ? "-" : std::to_string(row.stream), OrDash(row.label),
                    FormatDuration(row.busy_ns), FormatPercent(row.utilization), std::to_string(row.task_count)});
  }
  AppendTableOrNone(out, streams, "(no device streams)");

  AppendSection(out, "Utilization by core type (Ascend) or task kind");
  TextTable cores({{"DEVICE", Align::kRight},
                   {"CORE TYPE / KIND"},
                   {"BUSY", Align::kRight},
                   {"UTILIZATION", Align::kRight},
                   {"SHARE OF DEVICE BUSY", Align::kRight},
                   {"TASKS", Align::kRight}});
  for (const UtilizationRow& row : summary.core_type_utilization) {
    cores.AddRow({DeviceLabel(row.device), OrDash(row.label), FormatDuration(row.busy_ns),
                  FormatPercent(row.utilization), FormatPercent(row.share), std::to_string(row.task_count)});
  }
  AppendTableOrNone(out, cores, "(no device tasks)");
}

void AppendCriticalPath(std::string* out, const AnalysisSummary& summary) {
  const CriticalPathSummary& path = summary.critical_path;
  // Statistics files alone (step_trace_time.csv, op_statistic.csv): no op or
  // task to build a path from. A table of zeros would read as a measurement.
  if (path.nodes == 0) {
    AppendSection(out, "Critical path");
    out->append("  (no host operators or device tasks: nothing to build a path from)\n");
    return;
  }
  // The heading leads with the path's own latency: a path may outrun its
  // window (kernels still running when the step's host span ends), and a
  // window figure alone read as the path's (a 107 ms heading over a 158 ms path).
  if (path.scope == kPathScopeMedianStep) {
    AppendSection(out, fmt::format("Critical path {} ({}, the median of {} steps by path latency; step window {}; "
                                   "--step N for another)",
                                   FormatDuration(path.latency_ns), path.step_name, path.step_count,
                                   FormatDuration(path.window.duration())));
  } else {
    AppendSection(out, fmt::format("Critical path {} ({} window)", FormatDuration(path.latency_ns), WindowText(summary)));
  }
  out->append(fmt::format("  latency {} over {} segment{} ({} nodes, {} edges", FormatDuration(path.latency_ns),
                          path.segment_count, path.segment_count == 1 ? "" : "s", path.nodes, path.edges));
  if (path.dropped_nodes > 0) out->append(fmt::format(", {} nodes dropped: inconsistent times", path.dropped_nodes));
  if (path.skipped_edges > 0) out->append(fmt::format(", {} edges back in time left out", path.skipped_edges));
  if (path.skewed_launches > 0)
    out->append(fmt::format(", {} task{} starting before {} launch call: host/device clock skew up to {}",
                            path.skewed_launches, path.skewed_launches == 1 ? "" : "s",
                            path.skewed_launches == 1 ? "its" : "their", FormatDuration(path.max_launch_skew_ns)));
  if (path.queued_tasks > 0)
    out->append(fmt::format(", {} task{} queued behind device work: device-bound, not launch overhead", path.queued_tasks,
                            path.queued_tasks == 1 ? "" : "s"));
  out->append(")\n");
  TextTable table({{"SEGMENT KIND"}, {"TIME", Align::kRight}, {"OF LATENCY", Align::kRight}});
  for (const PathKindTime& kind : path.breakdown) {
    // Share of the path latency: a display ratio of two figures the graph gave.
    const double share = path.latency_ns > 0 ? static_cast<double>(kind.total_ns) / path.latency_ns : 0.0;
    table.AddRow({kind.name, FormatDuration(kind.total_ns), FormatPercent(share)});
  }
  out->append(table.Render());
}

std::string TopTitle(std::string_view what, size_t shown, uint64_t distinct) {
  if (shown == 0) return fmt::format("Top {}", what);
  return fmt::format("Top {} {} (of {} distinct names)", shown, what, distinct);
}

void AppendTopTables(std::string* out, const AnalysisSummary& summary) {
  AppendSection(out, TopTitle("host operators by self time", summary.top_host_ops.size(),
                                summary.distinct_host_op_names));
  TextTable ops({{"NAME"},
                 {"CALLS", Align::kRight},
                 {"SELF", Align::kRight},
                 {"TOTAL", Align::kRight},
                 {"MEAN", Align::kRight},
                 {"DEVICE", Align::kRight}});
  for (const HostOpSummary& op : summary.top_host_ops) {
    ops.AddRow({op.name, std::to_string(op.count), FormatDuration(op.self_ns), FormatDuration(op.total_ns),
                FormatDuration(op.mean_ns), FormatDuration(op.device_ns)});
  }
  AppendTableOrNone(out, ops, "(no host operators)");

  AppendSection(out, TopTitle("device kernels by total time", summary.top_device_tasks.size(),
                                summary.distinct_device_task_names));
  TextTable tasks({{"NAME"},
                   {"KIND"},
                   {"CALLS", Align::kRight},
                   {"TOTAL", Align::kRight},
                   {"MEAN", Align::kRight},
                   {"OF BUSY", Align::kRight}});
  for (const DeviceTaskSummary& task : summary.top_device_tasks) {
    tasks.AddRow({ShortKernelName(task.name), task.kind, std::to_string(task.count), FormatDuration(task.total_ns),
                  FormatDuration(task.mean_ns), FormatPercent(task.share_of_busy)});
  }
  AppendTableOrNone(out, tasks, "(no device tasks)");

  AppendSection(out, fmt::format("Device time by task kind (busy {} in total)",
                                 FormatDuration(summary.total_device_busy_ns)));
  // TOTAL sums the tasks' durations; BUSY is their union (nested collective
  // rows and concurrent streams counted once), the share's numerator.
  TextTable kinds({{"KIND"}, {"COUNT", Align::kRight}, {"TOTAL", Align::kRight}, {"BUSY", Align::kRight},
                   {"OF BUSY", Align::kRight}});
  for (const KindCount& kind : summary.device_task_kinds) {
    kinds.AddRow({kind.kind, std::to_string(kind.count), FormatDuration(kind.total_ns), FormatDuration(kind.busy_ns),
                  FormatPercent(kind.share_of_busy)});
  }
  AppendTableOrNone(out, kinds, "(no device tasks)");
}

void AppendCounts(std::string* out, const AnalysisSummary& summary) {
  AppendSection(out, "Counts");
  TextTable table({{"WHAT"}, {"COUNT", Align::kRight}});
  table.AddRow({"operators (op count)", std::to_string(summary.op_count)});
  table.AddRow({"host ops", std::to_string(summary.host_op_total)});
  for (const KindCount& kind : summary.host_op_kinds) table.AddRow({"  " + kind.kind, std::to_string(kind.count)});
  table.AddRow({"device tasks", std::to_string(summary.device_task_total)});
  for (const KindCount& kind : summary.device_task_kinds)
    table.AddRow({"  " + kind.kind, std::to_string(kind.count)});
  out->append(table.Render());
}

void AppendDataLoss(std::string* out, const AnalysisSummary& summary) {
  AppendSection(out, "Data loss (import)");
  TextTable loss({{"SEVERITY"}, {"KIND"}, {"REASON"}, {"COUNT", Align::kRight}, {"FIRST SEEN"}});
  for (const DataLossSummary& entry : summary.data_loss)
    loss.AddRow({entry.severity, entry.kind, entry.reason, std::to_string(entry.count), OrDash(entry.first_location)});
  AppendTableOrNone(out, loss, "none");

  AppendSection(out, "Links (call graph)");
  TextTable links({{"COUNTER"}, {"VALUE", Align::kRight}});
  for (const auto& [name, value] : summary.link_stats) links.AddRow({name, std::to_string(value)});
  out->append(links.Render());

  if (!summary.notes.empty()) {
    AppendSection(out, "Notes");
    for (const std::string& note : summary.notes) out->append(fmt::format("  - {}\n", TerminalSafe(note)));
  }
}

}  // namespace

std::string RenderAnalysisText(const AnalysisSummary& summary, const AnalysisTextOptions& options) {
  std::string out;
  AppendHeader(&out, summary);
  AppendDevices(&out, summary);
  AppendSteps(&out, summary, options);
  AppendStepBreakdown(&out, summary, options);
  AppendCriticalPath(&out, summary);
  AppendUtilization(&out, summary);
  AppendPipeRatios(&out, summary);
  AppendOpStatistic(&out, summary);
  AppendTopTables(&out, summary);
  AppendCounts(&out, summary);
  AppendDataLoss(&out, summary);
  return out;
}

}  // namespace pypto::report
