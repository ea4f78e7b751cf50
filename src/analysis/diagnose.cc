// The diagnosis engine: builds the DiagnosisContext (hardware, op classes,
// per-task costs, model structure, the steps analysed) and runs every
// registered detector.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "analysis/detector.h"
#include "analysis/detectors/detector_util.h"
#include "core/adaptive_sort.h"
#include "core/free_memory.h"
#include "core/parallel.h"
#include "graph/interval_union.h"
#include "model/kernel_name.h"
#include "model/phase_timer.h"

namespace pypto {

double DiagnoseOptions::Param(std::string_view key, double default_value) const {
  auto it = params.find(std::string(key));
  return it == params.end() ? default_value : it->second;
}

namespace {
bool InUnitInterval(double v) { return v > 0 && v <= 1.0 && std::isfinite(v); }
}  // namespace

Status ValidateDiagnoseOptions(const DiagnoseOptions& o) {
  struct Ratio { const char* name; double value; };
  const Ratio ratios[] = {
      {"tiling_utilization_threshold", o.tiling_utilization_threshold},
      {"mem_bottleneck_ratio_threshold", o.mem_bottleneck_ratio_threshold},
      {"matmul_tiling.utilization_threshold", o.matmul_tiling.utilization_threshold},
      {"matmul_tiling.mac_ratio_red", o.matmul_tiling.mac_ratio_red},
      {"matmul_tiling.mac_ratio_yellow", o.matmul_tiling.mac_ratio_yellow},
      {"attention_memory.mem_bottleneck_ratio_threshold", o.attention_memory.mem_bottleneck_ratio_threshold},
      {"attention_memory.fa_aic_mte2_ratio", o.attention_memory.fa_aic_mte2_ratio},
      {"attention_memory.aiv_mte2_ratio", o.attention_memory.aiv_mte2_ratio},
      {"attention_memory.bandwidth_efficiency_floor", o.attention_memory.bandwidth_efficiency_floor},
      {"host_bound.free_share_threshold", o.host_bound.free_share_threshold},
      {"host_bound.critical_path_host_share", o.host_bound.critical_path_host_share},
      {"severity.high_share", o.severity.high_share},
      {"severity.medium_share", o.severity.medium_share},
  };
  for (const Ratio& r : ratios) {
    if (!InUnitInterval(r.value)) {
      return InvalidArgumentError(fmt::format("{} must be in (0, 1], got {}", r.name, r.value));
    }
  }
  if (!(o.min_issue_share >= 0 && o.min_issue_share < 1)) {
    return InvalidArgumentError(fmt::format("min_issue_share must be in [0, 1), got {}", o.min_issue_share));
  }
  if (!(o.ai_core_theoretical_peak >= 0) || !std::isfinite(o.ai_core_theoretical_peak)) {
    return InvalidArgumentError("peak FLOP/s must be a positive number");
  }
  if (!(o.hbm_bandwidth >= 0) || !std::isfinite(o.hbm_bandwidth)) {
    return InvalidArgumentError("memory bandwidth must be a positive number");
  }
  if (!(o.norm_launch.gap_to_exec_ratio > 0) || !(o.norm_launch.short_kernel_us > 0)) {
    return InvalidArgumentError("norm_launch thresholds must be positive");
  }
  if (!(o.host_bound.max_launch_gap_us > 0)) return InvalidArgumentError("host_bound.max_launch_gap_us must be positive");
  if (o.kv_cache_layout.feed_window_ops < 1) return InvalidArgumentError("kv_cache_layout.feed_window_ops must be >= 1");
  for (const std::string& name : o.only) {
    if (!FindDetector(name)) {
      std::string known;
      for (const Detector* d : AllDetectors()) known += (known.empty() ? "" : ", ") + std::string(d->name());
      return InvalidArgumentError(fmt::format("unknown detector '{}' (known: {})", name, known));
    }
  }
  return Status::Ok();
}

// A key's text is resolved to its string id (once a call by text, once a
// loop by AttributeKey), then rows compare ids, not texts (a text compare per
// row was a tenth of diagnose on a 1 M-row kernel_details.csv). A key never
// interned is on no row.
namespace {
// The id AttributeKey gives a key no string of the profile spells: no row carries it.
constexpr StrId kAbsentAttributeKey = std::numeric_limits<StrId>::max();
}  // namespace

StrId DiagnosisContext::AttributeKey(std::string_view key) const {
  const StrId key_id = profile->strings.Find(key);
  return key_id == kEmptyStr && !key.empty() ? kAbsentAttributeKey : key_id;
}

std::optional<uint32_t> DiagnosisContext::TaskAttributeRow(uint32_t task, StrId key) const {
  if (key == kAbsentAttributeKey) return std::nullopt;
  std::optional<uint32_t> found;
  FindTaskAttributeRow(task, [&](uint32_t row) {
    if (profile->attributes.key(row) != key) return false;
    found = row;
    return true;
  });
  return found;
}

std::optional<uint32_t> DiagnosisContext::TaskAttributeRow(uint32_t task, std::string_view key) const {
  return TaskAttributeRow(task, AttributeKey(key));
}

double DiagnosisContext::TaskAttribute(uint32_t task, StrId key) const {
  const std::optional<uint32_t> row = TaskAttributeRow(task, key);
  return row ? profile->attributes.number(*row) : std::nan("");
}

double DiagnosisContext::TaskAttribute(uint32_t task, std::string_view key) const {
  return TaskAttribute(task, AttributeKey(key));
}

std::string DiagnosisContext::TaskAttributeText(uint32_t task, std::string_view key) const {
  const std::optional<uint32_t> row = TaskAttributeRow(task, key);
  return row ? profile->AttributeText(*row) : std::string();
}

bool DiagnosisContext::InWindow(TimeNs ts) const { return StepOf(ts) >= 0; }

int DiagnosisContext::StepOf(TimeNs ts) const {
  if (step_windows_ordered) {
    // The last window starting at or before ts is the only one that can hold it (a scan of every
    // window per task was steps x tasks: a tenth of diagnose on a 1M-task profiler DB).
    auto after = std::upper_bound(step_windows.begin(), step_windows.end(), ts,
                                  [](TimeNs v, const TimeWindow& w) { return v < w.start; });
    if (after == step_windows.begin()) return -1;
    const auto it = std::prev(after);
    return ts < it->end ? static_cast<int>(it - step_windows.begin()) : -1;
  }
  for (size_t i = 0; i < step_windows.size(); ++i) {
    if (ts >= step_windows[i].start && ts < step_windows[i].end) return static_cast<int>(i);
  }
  return -1;
}

StrId DiagnosisContext::TaskLabelId(uint32_t task) const {
  StrId type = profile->device_tasks.op_type(task);
  if (type != kEmptyStr && !profile->Str(type).empty()) return type;
  return profile->device_tasks.name[task];
}

std::string_view DiagnosisContext::TaskLabel(uint32_t task) const { return profile->Str(TaskLabelId(task)); }

namespace {

// The PMU pipe ratios that count as compute-unit work (cube MAC, vector) and
// as HBM transfers (MTE2: GM -> on-chip, MTE3: on-chip -> GM). Source: the
// msprof PipeUtilization columns (ascend-formats.md, op_summary aic_*/aiv_*).
constexpr std::string_view kComputePipeKeys[] = {"aic_mac_ratio", "aic_vec_ratio", "aiv_vec_ratio"};
constexpr std::string_view kHbmPipeKeys[] = {"aic_mte2_ratio", "aiv_mte2_ratio", "aic_mte3_ratio", "aiv_mte3_ratio"};

double Clamp01(double v) { return std::isnan(v) ? 0.0 : std::clamp(v, 0.0, 1.0); }

// Duration-weighted mean over the evidence tasks of the largest ratio among
// `keys` (pipes run in parallel: the busiest one is the share of the task's
// time that unit kind was working). NaN when no task has one.
template <size_t N>
double PipeShare(const DiagnosisContext& ctx, const std::vector<uint32_t>& tasks, const std::string_view (&keys)[N]) {
  double weighted = 0, weight = 0;
  for (uint32_t t : tasks) {
    double best = std::nan("");
    for (std::string_view key : keys) {
      const double v = ctx.TaskAttribute(t, key);
      if (!std::isnan(v) && (std::isnan(best) || v > best)) best = v;
    }
    if (std::isnan(best)) continue;
    const double w = double(std::max<TimeNs>(1, ctx.profile->device_tasks.dur[t]));
    weighted += best * w;
    weight += w;
  }
  return weight > 0 ? weighted / weight : std::nan("");
}

// Roofline terms of the evidence tasks with costs: sum(FLOPs / peak) and
// sum(bytes / bandwidth) over their measured time. NaN when none has costs.
std::pair<double, double> RooflineShares(const DiagnosisContext& ctx, const std::vector<uint32_t>& tasks) {
  if (ctx.task_costs == nullptr) return {std::nan(""), std::nan("")};
  double compute_ns = 0, memory_ns = 0, measured_ns = 0;
  for (uint32_t t : tasks) {
    if (t >= ctx.task_costs->size()) continue;
    const CostFigures& c = (*ctx.task_costs)[t];
    if (!c.has_costs() || c.measured_ns <= 0) continue;
    if (!std::isnan(c.flops) && c.peak_flops > 0) compute_ns += c.flops / c.peak_flops * 1e9;
    if (!std::isnan(c.bytes) && c.bandwidth > 0) memory_ns += c.bytes / c.bandwidth * 1e9;
    measured_ns += double(c.measured_ns);
  }
  if (measured_ns <= 0) return {std::nan(""), std::nan("")};
  return {compute_ns / measured_ns, memory_ns / measured_ns};
}

// The steps analysed, by name: "ProfilerStep#3", or "ProfilerStep#0 .. ProfilerStep#33 (34 steps)".
std::string AnalysedStepsName(const DiagnosisContext& ctx) {
  const auto& steps = ctx.graph->Steps();
  std::vector<size_t> valid;
  for (size_t s : ctx.steps)
    if (s < steps.size()) valid.push_back(s);
  if (valid.empty()) return "the whole profile window";
  const std::string first = steps[valid.front()].name.empty() ? "step" : steps[valid.front()].name;
  if (valid.size() == 1) return first;
  const std::string last = steps[valid.back()].name.empty() ? "step" : steps[valid.back()].name;
  return fmt::format("{} .. {} ({} steps)", first, last, valid.size());
}

void FillTimeRatios(const DiagnosisContext& ctx, Issue* issue) {
  const std::vector<uint32_t>& tasks = issue->evidence.tasks;
  const double pipe_compute = ctx.has_pmu ? PipeShare(ctx, tasks, kComputePipeKeys) : std::nan("");
  const double pipe_hbm = ctx.has_pmu ? PipeShare(ctx, tasks, kHbmPipeKeys) : std::nan("");
  const auto [roof_compute, roof_hbm] = RooflineShares(ctx, tasks);
  auto pick = [](double detector, double pipe, double roofline, double* out) -> const char* {
    if (!std::isnan(detector)) return *out = Clamp01(detector), "detector";
    if (!std::isnan(pipe)) return *out = Clamp01(pipe), "pipe_ratios";
    if (!std::isnan(roofline)) return *out = Clamp01(roofline), "roofline";
    return *out = 0.0, "none";
  };
  const std::string a = pick(issue->compute_ratio, pipe_compute, roof_compute, &issue->ai_core_time_ratio);
  const std::string b = pick(issue->memory_ratio, pipe_hbm, roof_hbm, &issue->hbm_access_time_ratio);
  issue->time_ratio_source = a == b ? a : a + "/" + b;
}

void FillProfileOpName(const DiagnosisContext& ctx, Issue* issue) {
  if (!issue->profile_op_name.empty()) return;  // set by the detector (e.g. the op sequence)
  // Detectors leave op_name empty for step-wide issues (host-bound, all-dynamic shapes): they are
  // about the steps as a whole, so the steps are what the profile ran.
  issue->profile_op_name = issue->op_name.empty() ? AnalysedStepsName(ctx) : issue->op_name;
}

}  // namespace

const CriticalPath& DiagnosisContext::StepPath(size_t k) const {
  std::lock_guard<std::mutex> lock(step_paths_mutex);
  if (step_paths.size() != steps.size()) step_paths = graph->ComputeStepCriticalPathTotals(steps);
  return step_paths[k];  // filled once, never resized after: the reference outlives the lock
}

void FinalizeIssue(const DiagnosisContext& ctx, Issue* issue) {
  FillTimeRatios(ctx, issue);
  FillProfileOpName(ctx, issue);
  // Affected time summed over tasks that overlap (concurrent streams,
  // duplicated rows) read as more than the step ("affected 124 % of step"):
  // the time they cover is what they affect.
  if (!issue->affected_tasks.empty() && issue->affected_ns == issue->evidence.total_ns) {
    const TimeNs covered = DeviceTaskUnionLength(*ctx.profile, issue->affected_tasks);
    if (covered < issue->affected_ns) {
      detectors::AddMetric(issue, "task_time_sum_us", double(issue->affected_ns) / 1000.0, "us");
      detectors::AddMetric(issue, "task_time_covered_us", double(covered) / 1000.0, "us");
      // The per-row savings were summed over the same rows: a row written
      // four times saves its time once (4 copies of one 521 us MatMul claimed
      // 224 us, one row's 56 us). Scale them by the share of the sum the rows cover.
      const double covered_share = double(covered) / double(issue->affected_ns);
      for (RowSaving& s : issue->savings)
        if (s.kind == SavingTargetKind::kDeviceTask || s.kind == SavingTargetKind::kTaskGap)
          s.saved_ns = static_cast<TimeNs>(std::llround(double(s.saved_ns) * covered_share));
      issue->affected_ns = covered;
    }
  }
  std::vector<uint32_t>().swap(issue->affected_tasks);
  issue->saved_ns = 0;
  for (const RowSaving& s : issue->savings) issue->saved_ns += std::max<TimeNs>(0, s.saved_ns);
  issue->affected_share = ctx.ShareOfStep(issue->affected_ns);
  issue->severity = SeverityForShare(issue->affected_share, ctx.options->severity);
  if (issue->evidence.count > 0 && issue->evidence.mean_ns == 0) {
    issue->evidence.mean_ns = issue->evidence.total_ns / static_cast<TimeNs>(issue->evidence.count);
  }
  if (issue->evidence.tasks.size() > kMaxEvidenceRows) issue->evidence.tasks.resize(kMaxEvidenceRows);
  if (issue->evidence.host_ops.size() > kMaxEvidenceRows) issue->evidence.host_ops.resize(kMaxEvidenceRows);
}

namespace {

bool IsAcceleratorProfile(const Profile& p) {
  for (const DeviceRow& d : p.devices.rows) {
    if (d.kind != DeviceKind::kCpu && d.kind != DeviceKind::kOther) return true;
  }
  return HasAcceleratorTasks(p);
}

DiagnoseOptions EffectiveOptions(const DiagnoseOptions& in) {
  DiagnoseOptions o = in;
  if (in.tiling_utilization_threshold != kDefaultTilingUtilizationThreshold) {
    o.matmul_tiling.utilization_threshold = in.tiling_utilization_threshold;
  }
  if (in.mem_bottleneck_ratio_threshold != kDefaultMemBottleneckRatioThreshold) {
    o.attention_memory.mem_bottleneck_ratio_threshold = in.mem_bottleneck_ratio_threshold;
  }
  o.tiling_utilization_threshold = o.matmul_tiling.utilization_threshold;
  o.mem_bottleneck_ratio_threshold = o.attention_memory.mem_bottleneck_ratio_threshold;
  return o;
}

bool IsPmuKey(std::string_view key) {
  return (key.substr(0, 4) == "aic_" || key.substr(0, 4) == "aiv_") && key.size() > 6 &&
         key.substr(key.size() - 6) == "_ratio";
}

// The structure over the analysed steps (all steps when the whole window is analysed).
StructureSummary SummarizeStructure(const ModelStructure& ms, const std::vector<size_t>& analysed) {
  StructureSummary s;
  s.available = true;
  s.layers = ms.layers;
  s.layer_period = ms.layer.period;
  s.model_arch = ms.model_arch;
  std::vector<TimeNs> decode, prefill;
  auto add = [&](const StepStructure& st) {
    s.step_phases.push_back(StepPhaseName(st.phase));
    if (st.phase != StepPhase::kUnknown && !st.phase_rule.empty()) ++s.phase_rules[st.phase_rule];
    switch (st.phase) {
      case StepPhase::kDecode: ++s.decode_steps; decode.push_back(st.latency_ns); break;
      case StepPhase::kPrefill: ++s.prefill_steps; prefill.push_back(st.latency_ns); break;
      default: ++s.unknown_steps; break;
    }
  };
  if (analysed.empty()) {
    for (const StepStructure& st : ms.steps) add(st);
  } else {
    for (size_t i : analysed) {
      const StepStructure* found = nullptr;
      if (i < ms.steps.size() && ms.steps[i].step == i) found = &ms.steps[i];
      for (size_t j = 0; !found && j < ms.steps.size(); ++j)
        if (ms.steps[j].step == i) found = &ms.steps[j];
      if (found) add(*found);
      else { s.step_phases.push_back(StepPhaseName(StepPhase::kUnknown)); ++s.unknown_steps; }
    }
  }
  s.decode_latency = ComputeLatencyStats(std::move(decode));
  s.prefill_latency = ComputeLatencyStats(std::move(prefill));
  return s;
}

std::string ProfileMetadata(const Profile& profile, const char* key) {
  auto it = profile.metadata.find(key);
  return it == profile.metadata.end() ? std::string() : it->second;
}

// The steps --step asks for (all steps without it); an error when the profile has no such step.
Status SelectRequestedSteps(const std::vector<StepInfo>& steps, const DiagnoseOptions& options, DiagnosisContext& ctx) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (options.step && steps[i].number != *options.step) continue;
    ctx.steps.push_back(i);
  }
  if (options.step && ctx.steps.empty()) {
    std::string have;
    for (size_t i = 0; i < steps.size() && i < 20; ++i) have += (i ? ", " : "") + std::to_string(steps[i].number);
    return InvalidArgumentError(fmt::format("no step {} in the profile (steps: {})", *options.step,
                                            have.empty() ? "none" : have));
  }
  return Status::Ok();
}

// The windows of the selected steps and their time, the basis of every share;
// the whole profile window when no selected step has time to analyse.
void SetStepWindows(const OperatorCallGraph& graph, DiagnosisContext& ctx, DiagnosticReport& report) {
  const std::vector<StepInfo>& steps = graph.Steps();
  std::string step_source;
  for (size_t s : ctx.steps) {
    const StepInfo& st = steps[s];
    const TimeWindow w = st.span();  // steps of a host running ahead do not overlap
    // A step with no span and no recorded time has nothing to analyse; one
    // that only the profiler's step table gives (step_trace_time.csv alone)
    // keeps its recorded time as the basis.
    if (w.duration() == 0 && st.cpu.duration() == 0 && st.device_start == kNoTime && st.recorded_latency_ns == kNoTime)
      continue;
    ctx.step_windows.push_back(w);
    ctx.step_time_ns += st.latency_ns();
    report.steps.push_back(s);
    report.step_numbers.push_back(st.number);
    if (step_source.empty()) step_source = st.source;
  }
  ctx.step_windows_ordered = true;
  for (size_t i = 1; i < ctx.step_windows.size(); ++i)
    ctx.step_windows_ordered &= ctx.step_windows[i - 1].end <= ctx.step_windows[i].start;
  if (ctx.step_windows.empty()) {
    // No usable step: the whole window.
    ctx.steps.clear();
    ctx.step_windows.push_back(graph.WholeWindow());
    ctx.step_time_ns = graph.WholeWindow().duration();
    report.step_basis = "whole window";
    report.notes.push_back("no step boundaries: the whole profile window is the time basis");
  } else {
    ctx.steps = report.steps;
    report.step_basis = fmt::format("{} step{} ({})", ctx.steps.size(), ctx.steps.size() == 1 ? "" : "s",
                                    step_source.empty() ? "profile" : step_source);
  }
  report.step_time_ns = ctx.step_time_ns;
}

// Device tasks (no annotations, no sync rows) and host ops that start in the
// step windows, each sorted by (track, ts).
void CollectWindowRows(const Profile& profile, DiagnosisContext& ctx) {
  const DeviceTaskTable& tasks = profile.device_tasks;
  for (uint32_t t = 0; t < tasks.size(); ++t) {
    DeviceTaskKind k = tasks.kind[t];
    if (k == DeviceTaskKind::kAnnotation || k == DeviceTaskKind::kSync) continue;
    if (ctx.InWindow(tasks.ts[t])) ctx.tasks.push_back(t);
  }
  // By (track, ts, row): grouped by track, then each track's rows sorted
  // adaptively (they mostly come in time order). The two std::sorts were
  // 400 ms of a 1 M-task DB's diagnose.
  ctx.tasks = GroupThenSort(ctx.tasks, [&](uint32_t t) { return tasks.track[t]; }, [&](uint32_t a, uint32_t b) {
    return tasks.ts[a] != tasks.ts[b] ? tasks.ts[a] < tasks.ts[b] : a < b;
  });
  const HostOpTable& ops = profile.host_ops;
  for (uint32_t h = 0; h < ops.size(); ++h) {
    if (ctx.InWindow(ops.ts[h])) ctx.host_ops.push_back(h);
  }
  ctx.host_ops = GroupThenSort(ctx.host_ops, [&](uint32_t h) { return ops.track[h]; }, [&](uint32_t a, uint32_t b) {
    return ops.ts[a] != ops.ts[b] ? ops.ts[a] < ops.ts[b] : a < b;
  });
}

void SumDeviceBusyTime(const OperatorCallGraph& graph, const DiagnosisContext& ctx, DiagnosticReport& report) {
  for (const TimeWindow& w : ctx.step_windows) {
    for (const BusyTime& b : graph.DeviceBusyTimes(w)) report.device_busy_ns += b.busy_ns;
  }
}

// A device-only kernel table without step boundaries (an excerpt of rows):
// the wall time between its rows says nothing; shares are taken of the device busy time.
void UseDeviceBusyBasisWithoutHostData(const OperatorCallGraph& graph, DiagnosisContext& ctx,
                                       DiagnosticReport& report) {
  const std::vector<StepInfo>& steps = graph.Steps();
  const bool whole_window = ctx.steps.empty() || (ctx.steps.size() == 1 && steps[ctx.steps[0]].number < 0);
  // Steps that only a kernel table's Step Id column gives span its rows, no more.
  const bool steps_from_step_ids =
      !ctx.steps.empty() && std::all_of(ctx.steps.begin(), ctx.steps.end(), [&](size_t s) {
        return steps[s].source == kStepSourceStepIdColumn;
      });
  if ((whole_window || steps_from_step_ids) && ctx.host_ops.empty() && report.device_busy_ns > 0) {
    ctx.step_time_ns = report.device_busy_ns;
    report.step_time_ns = report.device_busy_ns;
    report.step_basis = steps_from_step_ids ? "device busy time (steps only from the Step Id column, no host data)"
                                            : "device busy time (no steps, no host data)";
    report.notes.push_back(steps_from_step_ids
                               ? "steps only from the tasks' Step Id column and no host events: shares are of the "
                                 "device busy time, host-bound checks skipped"
                               : "no steps and no host events: shares are of the device busy time, host-bound checks skipped");
  }
}

// The index of the device tasks' attributes (PMU ratios) behind TaskAttribute:
// one run of rows per task when the importer wrote them so, else a CSR.
void IndexTaskAttributes(const Profile& profile, DiagnosisContext& ctx) {
  const AttributeTable& attrs = profile.attributes;
  const size_t task_count = profile.device_tasks.size();
  std::unordered_map<StrId, bool> pmu_key;  // IsPmuKey once per distinct key, not per attribute
  // The run form first: it holds as long as every task's next row follows its last one.
  ctx.attr_begin.assign(task_count, 0);
  ctx.attr_end.assign(task_count, 0);
  auto note_pmu_key = [&](size_t row) {
    if (ctx.has_pmu) return;
    auto [it, inserted] = pmu_key.try_emplace(attrs.key(row), false);
    if (inserted) it->second = IsPmuKey(profile.Str(attrs.key(row)));
    ctx.has_pmu = it->second;
  };
  bool runs = attrs.size() < std::numeric_limits<uint32_t>::max();
  for (size_t r = 0; runs && r < attrs.run_count(); ++r) {
    const AttributeTable::OwnerRun run = attrs.run(r);
    if (run.kind != OwnerKind::kDeviceTask || run.owner >= task_count) continue;
    const uint32_t t = run.owner;
    const auto begin = static_cast<uint32_t>(run.begin);
    if (ctx.attr_begin[t] == ctx.attr_end[t]) ctx.attr_begin[t] = begin;  // the task's first row
    else if (ctx.attr_end[t] != begin) runs = false;                        // a second run: CSR below
    ctx.attr_end[t] = static_cast<uint32_t>(run.end);
    for (size_t i = run.begin; i < run.end && !ctx.has_pmu; ++i) note_pmu_key(i);
  }
  if (runs) return;
  ctx.attr_begin.clear();
  ctx.attr_begin.shrink_to_fit();
  ctx.attr_end.clear();
  ctx.attr_end.shrink_to_fit();
  ctx.attr_offsets.assign(task_count + 1, 0);
  attrs.ForEachRow([&](size_t i, OwnerKind kind, uint32_t owner) {
    if (kind != OwnerKind::kDeviceTask || owner >= task_count) return;
    ++ctx.attr_offsets[owner + 1];
    note_pmu_key(i);
  });
  for (size_t i = 1; i < ctx.attr_offsets.size(); ++i) ctx.attr_offsets[i] += ctx.attr_offsets[i - 1];
  ctx.attr_rows.resize(ctx.attr_offsets.back());
  std::vector<uint32_t> fill(ctx.attr_offsets.begin(), ctx.attr_offsets.end() - 1);
  attrs.ForEachRow([&](size_t i, OwnerKind kind, uint32_t owner) {
    if (kind == OwnerKind::kDeviceTask && owner < task_count) ctx.attr_rows[fill[owner]++] = static_cast<uint32_t>(i);
  });
}

// What the context points into while the detectors run: DiagnoseGraph keeps it alive.
struct DiagnosisState {
  HardwareSpec hardware;
  std::optional<OpClassification> own_classes;        // when the caller passed none
  TaskCostTable costs;  // per device task row, unless the caller keeps them (DiagnosisInputs::task_costs)
  std::optional<StatusOr<ModelStructure>> own_structure;  // when the caller passed none
};

// The accelerator the profile ran on, or the one --hardware names (an error when unknown).
Status SelectHardware(const Profile& profile, const DiagnoseOptions& options, HardwareSpec& hw) {
  HardwareOverrides overrides;
  overrides.name = options.hardware_name;
  overrides.peak_flops = options.ai_core_theoretical_peak;
  overrides.memory_bandwidth = options.hbm_bandwidth;
  if (!options.hardware_name.empty()) {
    StatusOr<HardwareSpec> found = FindHardware(options.hardware_name);
    if (!found.ok()) return InvalidArgumentError(fmt::format("unknown hardware '{}'", options.hardware_name));
  }
  hw = DetectHardware(profile, overrides);
  return Status::Ok();
}

void SetHardware(const Profile& profile, const HardwareSpec& hw, DiagnosisContext& ctx, DiagnosticReport& report) {
  ctx.hardware = &hw;
  const bool accelerator = IsAcceleratorProfile(profile);
  ctx.hardware_known = hw.known() && !(accelerator && hw.family == HardwareFamily::kCpu);
  report.hardware_id = hw.id;
  report.hardware_name = hw.display_name;
  report.hardware_selection = hw.selection;
  if (hw.HeadlinePeak() > 0) report.peak_flops = hw.HeadlinePeak();
  if (hw.memory_bandwidth.known()) report.memory_bandwidth = hw.memory_bandwidth.value;
  if (!ctx.hardware_known) {
    report.notes.push_back(
        "accelerator not identified: roofline figures (peak FLOP/s, bandwidth) unavailable; pass --hardware or "
        "--peak-flops/--hbm-bandwidth");
  }
  for (const std::string& n : hw.notes) report.notes.push_back("hardware: " + n);
}

// Training or inference: decides which advice applies.
void SetWorkload(const Profile& profile, DiagnosisContext& ctx, DiagnosticReport& report) {
  WorkloadClass workload = ClassifyWorkload(profile);
  ctx.workload = workload.kind;
  report.workload = workload.kind;
  report.workload_reason = workload.reason;
}

void SetOpClasses(const OperatorCallGraph& graph, const DiagnosisInputs& inputs, DiagnosisState& state,
                  DiagnosisContext& ctx) {
  if (!inputs.classes) state.own_classes = ClassifyProfile(graph.profile(), graph);
  ctx.classes = inputs.classes ? inputs.classes : &*state.own_classes;
}

// Tasks per work item of the parallel costing: large enough that taking an
// item costs nothing next to costing it (~2 us a task), small enough to
// spread a few thousand tasks over the cores.
constexpr size_t kTaskCostChunk = 1024;

// Roofline costs of the tasks in the windows; a note when matmul / attention tasks lack the shapes for them.
void EstimateTaskCosts(const OperatorCallGraph& graph, const DiagnosisState& state, TaskCostTable& costs,
                       DiagnosisContext& ctx, DiagnosticReport& report) {
  const Profile& profile = *ctx.profile;
  const OpClassification& classes = *ctx.classes;
  costs.Reset(profile.device_tasks.size(), &profile.device_tasks.dur);
  // Each task's cost reads only const tables, so the tasks are costed side by
  // side in chunks (shape parsing dominates); each chunk's rows join the table
  // under a lock, in whatever order the chunks finish (rows are by task).
  const std::vector<uint32_t>& tasks = ctx.tasks;
  const size_t chunks = (tasks.size() + kTaskCostChunk - 1) / kTaskCostChunk;
  std::mutex merge_mutex;
  ParallelForWithState(
      chunks, DefaultParallelism(), [&] { return TaskCostMemo(profile, graph, classes, state.hardware); },
      [&](TaskCostMemo& memo, size_t chunk) {
        TaskCostTable::Batch batch = costs.NewBatch();
        const size_t end = std::min(tasks.size(), (chunk + 1) * kTaskCostChunk);
        for (size_t i = chunk * kTaskCostChunk; i < end; ++i) batch.Add(tasks[i], memo.Figures(tasks[i]));
        std::lock_guard<std::mutex> lock(merge_mutex);
        costs.Merge(std::move(batch));
      });
  uint64_t with_costs = 0, needing = 0;
  for (uint32_t t : ctx.tasks) {
    OpClass c = classes.task_class.size() > t ? classes.task_class[t] : OpClass::kOther;
    if (c == OpClass::kMatmul || c == OpClass::kAttention) {
      ++needing;
      if (costs[t].has_costs()) ++with_costs;
    }
  }
  ctx.task_costs = &costs;
  if (needing > 0 && with_costs < needing) {
    report.notes.push_back(fmt::format(
        "{} of {} matmul/attention device tasks have no usable shapes: their roofline checks were skipped",
        needing - with_costs, needing));
  }
}

void NoteMissingPmuRatios(const HardwareSpec& hw, const DiagnosisContext& ctx, DiagnosticReport& report) {
  if (!ctx.has_pmu && hw.family == HardwareFamily::kAscend) {
    report.notes.push_back("no PMU ratios (aic_*/aiv_* columns): Ascend pipe checks use the roofline model only");
  }
}

// The model structure: layers, prefill / decode phase of each step,
// per-token latency; detectors read the phase of a step from it.
void SetModelStructure(const OperatorCallGraph& graph, const DiagnosisInputs& inputs, DiagnosisState& state,
                       DiagnosisContext& ctx, DiagnosticReport& report) {
  if (!inputs.structure) {
    StructureOptions sopts;
    sopts.model_arch = ctx.options->model_arch;
    state.own_structure = AnalyzeStructure(graph.profile(), graph, *ctx.classes, sopts);
  }
  const StatusOr<ModelStructure>& structure = inputs.structure ? *inputs.structure : *state.own_structure;
  if (structure.ok()) {
    ctx.structure = &structure.value();
    report.structure = SummarizeStructure(structure.value(), ctx.steps);
    for (const std::string& n : structure.value().notes) report.notes.push_back("structure: " + n);
  } else {
    report.notes.push_back("model structure unavailable: " + structure.status().message());
  }
}

bool DetectorSelected(const Detector& d, const DiagnoseOptions& options) {
  return options.only.empty() ||
         std::find(options.only.begin(), options.only.end(), std::string(d.name())) != options.only.end();
}

// A detector's issues under the listing share: said in one note, not dropped
// silently, so that a reader checking the rows sees why they are no finding.
struct IssuesBelowListingShare {
  uint64_t count = 0;
  TimeNs affected_ns = 0;
  Issue largest;
};

void NoteIssuesBelowListingShare(const Detector& d, const IssuesBelowListingShare& below,
                                 const DiagnoseOptions& options, DiagnosticReport& report) {
  if (below.count == 0) return;
  const Issue& top = below.largest;
  report.notes.push_back(fmt::format(
      "{}: {} issue(s) under the {:.0f}% listing share ({:.1f} us in all); the largest, {}: {:.1f} us ({:.2f}% of the "
      "step): {}",
      d.name(), below.count, 100.0 * options.min_issue_share, double(below.affected_ns) / 1e3,
      ShortKernelName(top.op_name.empty() ? top.profile_op_name : top.op_name), double(top.affected_ns) / 1e3,
      100.0 * top.affected_share, top.detail));
}

// Takes one detector's output: its finalized issues at or above the listing
// share go to `issues`, its notes to the report.
void TakeDetectorOutput(const Detector& d, const DiagnosisContext& ctx, DetectorOutput& out,
                        std::vector<Issue>& issues, DiagnosticReport& report) {
  const DiagnoseOptions& options = *ctx.options;
  report.detectors_run.emplace_back(d.name());
  IssuesBelowListingShare below;
  for (std::string& n : out.notes) report.notes.push_back(std::string(d.name()) + ": " + n);
  for (Issue& issue : out.issues) {
    FinalizeIssue(ctx, &issue);
    if (issue.affected_share < options.min_issue_share && !d.ListedAtAnyShare()) {
      ++below.count;
      below.affected_ns += issue.affected_ns;
      if (issue.affected_ns >= below.largest.affected_ns) below.largest = std::move(issue);
      continue;
    }
    issues.push_back(std::move(issue));
  }
  NoteIssuesBelowListingShare(d, below, options, report);
}

// The detectors the options select, in registry order.
std::vector<const Detector*> SelectedDetectors(const DiagnoseOptions& options) {
  std::vector<const Detector*> selected;
  for (const Detector* d : AllDetectors())
    if (DetectorSelected(*d, options)) selected.push_back(d);
  return selected;
}

// True when one of `detectors` will read the steps' paths.
bool ReadsStepPaths(const std::vector<const Detector*>& detectors, const DiagnosisContext& ctx) {
  if (ctx.steps.empty()) return false;
  return std::any_of(detectors.begin(), detectors.end(), [&](const Detector* d) { return d->ReadsStepPaths(ctx); });
}

// Every selected detector, side by side on the cores: each reads the context
// and writes only its own output (one after the other, they were a third of
// a 1 M-row kernel_details.csv's diagnose). Their outputs are then taken in
// registry order, so the report is the one a single thread gives. The issues
// sorted, with their combined saving.
void RunDetectors(const DiagnosisContext& ctx, DiagnosticReport& report) {
  const std::vector<const Detector*> selected = SelectedDetectors(*ctx.options);
  if (ReadsStepPaths(selected, ctx)) {
    PhaseTimer timer("diagnose.step_paths");
    ctx.StepPath(0);  // fills every analysed step's path (from the graph's cache when prepared)
  }
  std::vector<DetectorOutput> outputs(selected.size());
  ParallelFor(selected.size(), DefaultParallelism(), [&](size_t i) {
    const std::string phase =
        PhaseTimer::Enabled() ? "diagnose.detector." + std::string(selected[i]->name()) : std::string();
    PhaseTimer timer(phase.c_str());
    selected[i]->Run(ctx, &outputs[i]);
    ReleaseFreeHeapPages();
  });
  std::vector<Issue> issues;
  for (size_t i = 0; i < selected.size(); ++i) TakeDetectorOutput(*selected[i], ctx, outputs[i], issues, report);
  SortIssues(&issues);
  CombinedSaving combined = CombineSavings(issues, ctx.step_time_ns);
  report.issues = std::move(issues);
  report.estimated_saved_ns = combined.saved_ns;
  report.claimed_saved_ns = combined.claimed_ns;
  report.estimated_combined_speedup = combined.speedup;
}

// What every diagnosis reads first: the context's inputs, the steps
// `options` select, their windows and the rows that start in them.
Status OpenDiagnosisWindow(const OperatorCallGraph& graph, const DiagnoseOptions& options, DiagnosisContext& ctx,
                           DiagnosticReport& report) {
  ctx.profile = &graph.profile();
  ctx.graph = &graph;
  ctx.options = &options;
  PYPTO_RETURN_IF_ERROR(SelectRequestedSteps(graph.Steps(), options, ctx));
  PhaseTimer t("diagnose.window");
  SetStepWindows(graph, ctx, report);
  CollectWindowRows(graph.profile(), ctx);
  return Status::Ok();
}

}  // namespace

StatusOr<DiagnosticReport> DiagnoseGraph(const OperatorCallGraph& graph, const DiagnoseOptions& in_options) {
  return DiagnoseGraph(graph, in_options, DiagnosisInputs{});
}

StatusOr<DiagnosticReport> DiagnoseGraph(const OperatorCallGraph& graph, const DiagnoseOptions& in_options,
                                         const DiagnosisInputs& inputs) {
  PYPTO_RETURN_IF_ERROR(ValidateDiagnoseOptions(in_options));
  const DiagnoseOptions options = EffectiveOptions(in_options);
  const Profile& profile = graph.profile();
  DiagnosticReport report;
  report.source_path = ProfileMetadata(profile, "source_path");
  report.format = ProfileMetadata(profile, "format");

  DiagnosisContext ctx;
  PYPTO_RETURN_IF_ERROR(OpenDiagnosisWindow(graph, options, ctx, report));
  SumDeviceBusyTime(graph, ctx, report);
  UseDeviceBusyBasisWithoutHostData(graph, ctx, report);
  { PhaseTimer t("diagnose.task_attributes"); IndexTaskAttributes(profile, ctx); }

  DiagnosisState state;
  PYPTO_RETURN_IF_ERROR(SelectHardware(profile, options, state.hardware));
  SetHardware(profile, state.hardware, ctx, report);
  SetWorkload(profile, ctx, report);
  { PhaseTimer t("diagnose.op_classes"); SetOpClasses(graph, inputs, state, ctx); }
  {
    PhaseTimer t("diagnose.task_costs");
    EstimateTaskCosts(graph, state, inputs.task_costs ? *inputs.task_costs : state.costs, ctx, report);
  }
  NoteMissingPmuRatios(state.hardware, ctx, report);
  { PhaseTimer t("diagnose.structure"); SetModelStructure(graph, inputs, state, ctx, report); }

  { PhaseTimer t("diagnose.detectors"); RunDetectors(ctx, report); }
  return report;
}

void PrepareDiagnosisStepPaths(const OperatorCallGraph& graph, const DiagnoseOptions& in_options) {
  if (!ValidateDiagnoseOptions(in_options).ok()) return;
  const DiagnoseOptions options = EffectiveOptions(in_options);
  // The window again in DiagnoseGraph (~15 ms for 1 M tasks): its rows are
  // freed here before the paths' DAGs, which is the point.
  DiagnosisContext ctx;
  DiagnosticReport unused;
  if (!OpenDiagnosisWindow(graph, options, ctx, unused).ok()) return;
  if (!ReadsStepPaths(SelectedDetectors(options), ctx)) return;
  PhaseTimer t("diagnose.prepared_step_paths");
  std::vector<uint32_t>().swap(ctx.tasks);  // the window's rows, freed before the paths' DAGs
  std::vector<uint32_t>().swap(ctx.host_ops);
  graph.ComputeStepCriticalPathTotals(ctx.steps);
}

StatusOr<DiagnosticReport> Diagnose(Profile& profile, const DiagnoseOptions& options) {
  PYPTO_RETURN_IF_ERROR(ValidateDiagnoseOptions(options));
  PYPTO_ASSIGN_OR_RETURN(OperatorCallGraph graph, OperatorCallGraph::Build(profile));
  return DiagnoseGraph(graph, options);
}

}  // namespace pypto
