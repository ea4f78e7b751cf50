#include "analysis/detectors/detector_util.h"

#include "graph/interval_union.h"

#include <fmt/format.h>

namespace pypto::detectors {

StreamGaps ComputeStreamGaps(const DiagnosisContext& ctx) {
  StreamGaps out;
  const DeviceTaskTable& t = ctx.profile->device_tasks;
  out.gap.assign(ctx.tasks.size(), StreamGaps::kNoPrevious);
  int64_t prev = -1;
  TimeNs prev_end = 0;
  for (size_t i = 0; i < ctx.tasks.size(); ++i) {
    uint32_t row = ctx.tasks[i];
    if (prev >= 0 && t.track[prev] == t.track[row] && ctx.StepOf(t.ts[prev]) == ctx.StepOf(t.ts[row])) {
      out.gap[i] = std::max<TimeNs>(0, t.ts[row] - prev_end);
      prev_end = std::max(prev_end, t.ts[row] + t.dur[row]);
    } else {
      prev_end = t.ts[row] + t.dur[row];
    }
    prev = row;
  }
  return out;
}

const StepStructure* StepStructureOf(const DiagnosisContext& ctx, TimeNs ts) {
  if (!ctx.structure) return nullptr;
  const int w = ctx.StepOf(ts);
  if (w < 0 || size_t(w) >= ctx.steps.size()) return nullptr;
  const size_t graph_step = ctx.steps[size_t(w)];
  const std::vector<StepStructure>& steps = ctx.structure->steps;
  if (graph_step < steps.size() && steps[graph_step].step == graph_step) return &steps[graph_step];
  for (const StepStructure& s : steps)
    if (s.step == graph_step) return &s;
  return nullptr;
}

StepPhase StepPhaseOf(const DiagnosisContext& ctx, TimeNs ts) {
  const StepStructure* s = StepStructureOf(ctx, ts);
  return s ? s->phase : StepPhase::kUnknown;
}

OpClass TaskClass(const DiagnosisContext& ctx, uint32_t task) {
  const auto& c = ctx.classes->task_class;
  return task < c.size() ? c[task] : OpClass::kOther;
}

std::string_view TaskSubKind(const DiagnosisContext& ctx, uint32_t task) {
  const auto& c = ctx.classes->task_sub_kind;
  return task < c.size() ? c[task] : std::string_view();
}

OpClass HostClass(const DiagnosisContext& ctx, uint32_t op) {
  const auto& c = ctx.classes->host_class;
  return op < c.size() ? c[op] : OpClass::kOther;
}

StrId TaskShapeId(const DiagnosisContext& ctx, uint32_t task) {
  const Profile& p = *ctx.profile;
  StrId s = p.device_tasks.input_shapes(task);
  if (s != kEmptyStr && !p.Str(s).empty()) return s;
  int32_t op = ctx.graph->OperatorOf(task);
  if (op >= 0 && p.host_ops.input_dims[op] != kEmptyStr) return p.host_ops.input_dims[op];
  return kEmptyStr;
}

std::string TaskShapeText(const DiagnosisContext& ctx, uint32_t task) {
  return std::string(ctx.profile->Str(TaskShapeId(ctx, task)));
}

void AddTaskEvidence(Issue* issue, uint32_t task, TimeNs dur) {
  if (issue->evidence.tasks.size() < kMaxEvidenceRows) issue->evidence.tasks.push_back(task);
  issue->affected_tasks.push_back(task);
  ++issue->evidence.count;
  issue->evidence.total_ns += dur;
}

std::vector<std::pair<TimeNs, TimeNs>> BusyIntervals(const DiagnosisContext& ctx, bool kernels_only) {
  const DeviceTaskTable& d = ctx.profile->device_tasks;
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  spans.reserve(ctx.tasks.size());
  for (uint32_t t : ctx.tasks) {
    if (kernels_only && d.kind[t] != DeviceTaskKind::kKernel && d.kind[t] != DeviceTaskKind::kCommunication) continue;
    spans.emplace_back(d.ts[t], d.ts[t] + std::max<TimeNs>(d.dur[t], 0));
  }
  return MergedIntervals(std::move(spans));
}

void AddShape(Issue* issue, std::string_view shape) {
  if (shape.empty()) return;
  // Every row's shape goes into the groups (ranges over all of them, a count
  // of rows); the first distinct ones are also kept verbatim.
  AddShapeToGroups(&issue->evidence, shape);
  auto& v = issue->evidence.shapes;
  if (v.size() < kMaxShapeExamples && std::find(v.begin(), v.end(), shape) == v.end()) v.emplace_back(shape);
}

void AddMetric(Issue* issue, std::string name, double value, std::string unit) {
  issue->evidence.metrics.push_back({std::move(name), value, std::move(unit)});
}

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string FormatUs(TimeNs ns) { return fmt::format("{:.1f} us", double(ns) / 1000.0); }

}  // namespace pypto::detectors

namespace pypto::detectors {

TimeNs LaunchAttributableGap(const DiagnosisContext& ctx, const StreamGaps& gaps, size_t i, TimeNs max_gap_ns) {
  TimeNs gap = gaps.gap[i];
  if (gap <= 0 || gap > max_gap_ns) return 0;  // no previous task (kNoPrevious), none idle, or too long
  const Profile& p = *ctx.profile;
  uint32_t task = ctx.tasks[i];
  int32_t launcher = ctx.graph->LauncherOf(task);
  if (launcher < 0) return gap;
  const uint32_t prev = ctx.tasks[i - 1];  // gap > 0: there is a previous task, the one before in ctx.tasks
  TimeNs prev_end = p.device_tasks.ts[prev] + p.device_tasks.dur[prev];
  return p.host_ops.ts[launcher] >= prev_end - gap / 2 ? gap : 0;
}

StrId TaskSymbolId(const DiagnosisContext& ctx, uint32_t task) {
  const Profile& p = *ctx.profile;
  int32_t op = ctx.graph->OperatorOf(task);
  if (op >= 0 && p.host_ops.kind[op] == HostOpKind::kOperator) return p.host_ops.name[op];
  return ctx.TaskLabelId(task);
}

std::string TaskSymbol(const DiagnosisContext& ctx, uint32_t task) {
  return LowerAscii(ctx.profile->Str(TaskSymbolId(ctx, task)));
}

bool IsTopOperator(const DiagnosisContext& ctx, uint32_t op) {
  const Profile& p = *ctx.profile;
  if (p.host_ops.kind[op] != HostOpKind::kOperator) return false;
  int32_t parent = op < p.host_ops.parent.size() ? p.host_ops.parent[op] : kNoIndex;
  if (parent < 0) return true;
  int32_t anc = ctx.graph->EnclosingOperator(static_cast<uint32_t>(parent));
  return anc < 0 || p.host_ops.kind[anc] != HostOpKind::kOperator;
}

}  // namespace pypto::detectors
