#include "report/profile_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "advisor/model_config.h"
#include "advisor/optimizers.h"
#include "advisor/tuning_advisor.h"
#include "analysis/cost_model.h"
#include "analysis/op_class.h"
#include "core/parallel.h"
#include "hw/hardware.h"
#include "report/analysis_json.h"
#include "report/analysis_text.h"
#include "report/chrome_trace_export.h"
#include "report/diagnosis_report.h"
#include "report/html_charts.h"
#include "io/json_writer.h"
#include "model/kernel_name.h"

namespace pypto::report {

// ------------------------------------------------------------------ advisor hook

std::vector<ReportRecommendation> CollectRecommendations(const DiagnosticReport& diagnosis, bool* available) {
  // The advisor (src/advisor/tuning_advisor.h) ranks recommendations for the
  // diagnosis; the report only copies them. Model facts are not known here
  // (ModelConfig{}): placeholders stay as <num_heads> etc.
  if (available) *available = true;
  std::vector<ReportRecommendation> out;
  StatusOr<advisor::AdviceReport> advice = advisor::Advise(diagnosis, advisor::ModelConfig{});
  if (!advice.ok()) {
    if (available) *available = false;
    return out;
  }
  for (const advisor::Recommendation& r : advice->recommendations) {
    ReportRecommendation rec;
    rec.hotspot_type = IssueTypeName(r.hotspot_type);
    rec.title = r.description;
    if (!r.actions.empty()) rec.description = r.actions.front().description;
    if (!r.prerequisite.empty()) rec.description += (rec.description.empty() ? "" : " ") + std::string("Requires ") + r.prerequisite + ".";
    rec.action = r.speedup_formula;
    rec.code = r.action;
    rec.estimated_speedup = r.estimated_speedup;
    out.push_back(std::move(rec));
  }
  return out;
}

// ------------------------------------------------------------------ collection

namespace {

const char* kClassCss[kOpClassCount] = {"s5", "s0", "s3", "s2", "s4", "s1", "s6", "s7", "s8", "s9", "s10", "s11", "s12"};

}  // namespace

namespace {

std::string TrackLabel(const Profile& p, uint32_t track) {
  const TrackTable& tr = p.tracks;
  if (tr.kind[track] == TrackKind::kHostThread) return "host thread " + std::string(p.Str(tr.tid_token[track]));
  return fmt::format("device {} stream {}", tr.device[track], tr.stream[track]);
}

// What the roofline chart needs of one task's cost.
struct RooflineCost {
  bool ok = false;  // costed, with FLOP and bytes > 0
  double flops = 0, bytes = 0;
  Bound bound = Bound::kUnknown;
};

// Tasks per work item when costing tasks for the roofline: a task costs
// up to ~2 us (shape parsing, notes; less when its detail row was costed
// before, TaskCostMemo), so 1024 make an item worth a thread's wake-up.
constexpr size_t kRooflineCostChunk = 1024;

RooflineCost RooflineCostOf(const CostFigures& cost) {
  if (cost.status != CostStatus::kOk || !(cost.flops > 0) || !(cost.bytes > 0)) return {};
  return {true, cost.flops, cost.bytes, cost.bound};
}

// Every busy task's roofline cost. The diagnosis's figures serve the tasks it
// costed (`diagnosed`, may be null: the tasks of its windows); costing them
// again was a quarter of the report's time on a trace whose every task has a
// shape of its own. The other tasks are costed here on all cores (each reads
// only const tables and writes its own slot), and only what the chart uses
// is kept of them.
class RooflineCosts {
 public:
  RooflineCosts(const Profile& profile, const OperatorCallGraph& graph, const OpClassification& classes,
                const HardwareSpec& hw, const TaskCostTable* diagnosed)
      : diagnosed_(diagnosed) {
    const DeviceTaskTable& t = profile.device_tasks;
    for (uint32_t row = 0; row < t.size(); ++row) {
      if (t.kind[row] == DeviceTaskKind::kAnnotation || t.kind[row] == DeviceTaskKind::kSync) continue;
      if (!Diagnosed(row)) own_rows_.push_back(row);
    }
    own_.resize(own_rows_.size());
    const size_t chunks = (own_rows_.size() + kRooflineCostChunk - 1) / kRooflineCostChunk;
    ParallelForWithState(
        chunks, DefaultParallelism(), [&] { return TaskCostMemo(profile, graph, classes, hw); },
        [&](TaskCostMemo& memo, size_t chunk) {
          const size_t end = std::min(own_rows_.size(), (chunk + 1) * kRooflineCostChunk);
          for (size_t i = chunk * kRooflineCostChunk; i < end; ++i) own_[i] = RooflineCostOf(memo.Figures(own_rows_[i]));
        });
  }
  // Rows are read in ascending order, each once (the tasks the roofline draws).
  RooflineCost Next(uint32_t row) {
    if (Diagnosed(row)) return RooflineCostOf((*diagnosed_)[row]);
    while (next_own_ < own_rows_.size() && own_rows_[next_own_] < row) ++next_own_;
    return next_own_ < own_rows_.size() && own_rows_[next_own_] == row ? own_[next_own_] : RooflineCost{};
  }

 private:
  bool Diagnosed(uint32_t row) const { return diagnosed_ != nullptr && diagnosed_->costed(row); }
  const TaskCostTable* diagnosed_;
  std::vector<uint32_t> own_rows_;  // ascending
  std::vector<RooflineCost> own_;   // by own_rows_
  size_t next_own_ = 0;
};

// The steps drawn in detail: the median and the slowest by latency.
std::vector<std::pair<size_t, std::string>> TimelineSteps(const OperatorCallGraph& graph) {
  const std::vector<StepInfo>& steps = graph.Steps();
  std::vector<size_t> order(steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return steps[a].latency_ns() < steps[b].latency_ns(); });
  std::vector<std::pair<size_t, std::string>> picks;
  if (!order.empty()) {
    picks.push_back({order[(order.size() - 1) / 2], "median step"});
    if (order.back() != picks[0].first) picks.push_back({order.back(), "slowest step"});
  }
  return picks;
}

// `path`: the step's critical path with its first kMaxTimelineBars segments.
StepTimeline BuildStepTimeline(const Profile& p, const OperatorCallGraph& graph, const DiagnosticReport& diagnosis,
                               size_t step, const std::string& what, const StatusOr<CriticalPath>& path) {
  StepTimeline tl;
  const StepInfo& st = graph.Steps()[step];
  const TimeWindow w = st.span();
  tl.window_ns = std::max<TimeNs>(w.duration(), 1);
  tl.title = fmt::format("{} {} ({})", what, st.name, FormatMs(double(st.latency_ns())));
  // Lanes: the tracks with the most time in the window.
  std::map<uint32_t, TimeNs> busy;
  const HostOpTable& h = p.host_ops;
  const DeviceTaskTable& t = p.device_tasks;
  // Top-level host rows, annotations included (a DataLoader fetch, a forward
  // range) but not the step's own mark.
  auto is_step_mark = [&](uint32_t op) { return p.Str(h.name[op]).starts_with("ProfilerStep#"); };
  auto top_level = [&](uint32_t op) {
    if (is_step_mark(op)) return false;
    const int32_t parent = h.parent.empty() ? -1 : h.parent[op];
    return parent < 0 || is_step_mark(static_cast<uint32_t>(parent));
  };
  for (uint32_t op = 0; op < h.size(); ++op)
    if (h.ts[op] >= w.start && h.ts[op] < w.end && top_level(op)) busy[h.track[op]] += h.dur[op];
  for (uint32_t r = 0; r < t.size(); ++r)
    if (t.ts[r] >= w.start && t.ts[r] < w.end && t.kind[r] != DeviceTaskKind::kAnnotation) busy[t.track[r]] += t.dur[r];
  std::vector<std::pair<TimeNs, uint32_t>> ranked;
  for (const auto& [track, ns] : busy) ranked.push_back({ns, track});
  std::sort(ranked.rbegin(), ranked.rend());
  if (ranked.size() > kMaxTimelineLanes) ranked.resize(kMaxTimelineLanes);
  std::sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {  // host lanes first, then devices
    return std::make_pair(p.tracks.kind[a.second] != TrackKind::kHostThread, a.second) <
           std::make_pair(p.tracks.kind[b.second] != TrackKind::kHostThread, b.second);
  });
  std::map<uint32_t, uint32_t> lane_of;
  for (const auto& [ns, track] : ranked) {
    lane_of[track] = uint32_t(tl.lanes.size());
    tl.lanes.push_back(TrackLabel(p, track));
  }
  const uint32_t path_lane = uint32_t(tl.lanes.size());
  tl.lanes.push_back("critical path");
  // The label is made only for a bar that is drawn: a step without
  // ProfilerStep marks spans the whole trace, and formatting the names of its
  // hundreds of thousands of dropped rows took a third of the report.
  auto add = [&](std::vector<TimelineBar>* to, uint32_t lane, TimeNs ts, TimeNs dur, auto&& label, std::string css) {
    if (to == &tl.bars && tl.bars.size() >= kMaxTimelineBars) { ++tl.bars_dropped; return; }
    if (to == &tl.path && tl.path.size() >= kMaxTimelineBars) { ++tl.path_dropped; return; }
    const TimeNs from = std::max<TimeNs>(0, ts - w.start);  // clipped to the step
    to->push_back({lane, from, std::clamp<TimeNs>(dur, 0, tl.window_ns - from), label(), std::move(css)});
  };
  for (uint32_t op = 0; op < h.size(); ++op) {
    auto it = lane_of.find(h.track[op]);
    if (it == lane_of.end() || h.ts[op] < w.start || h.ts[op] >= w.end || !top_level(op)) continue;
    add(&tl.bars, it->second, h.ts[op], h.dur[op],
        [&] { return fmt::format("{} ({})", ShortKernelName(p.Str(h.name[op])), FormatUs(double(h.dur[op]))); }, "tl-host");
  }
  for (uint32_t r = 0; r < t.size(); ++r) {
    auto it = lane_of.find(t.track[r]);
    if (it == lane_of.end() || t.ts[r] < w.start || t.ts[r] >= w.end || t.kind[r] == DeviceTaskKind::kAnnotation) continue;
    add(&tl.bars, it->second, t.ts[r], t.dur[r],
        [&] { return fmt::format("{} ({})", ShortKernelName(p.Str(t.name[r])), FormatUs(double(t.dur[r]))); },
        t.kind[r] == DeviceTaskKind::kCommunication ? "tl-comm" : t.kind[r] == DeviceTaskKind::kKernel ? "tl-kernel" : "tl-copy");
  }
  if (path.ok()) {
    for (const PathSegment& seg : path->segments)
      add(&tl.path, path_lane, seg.start, seg.dur,
          [&] { return fmt::format("{} {}", PathSegmentKindName(seg.kind), FormatUs(double(seg.dur))); },
          fmt::format("cp{}", static_cast<int>(seg.kind)));  // .cp0 .. .cp6 in the page's CSS
    tl.path_dropped += path->segment_count - path->segments.size();  // the path's head only was kept
  }
  // An issue's rows in this step: its evidence rows are capped (the first
  // kMaxEvidenceRows, often all in the first step), so the rows of the same
  // names inside the drawn step are marked too: the median step shows where
  // the finding sits in it.
  for (size_t k = 0; k < diagnosis.issues.size() && k < kMaxReportIssues; ++k) {
    const Issue& issue = diagnosis.issues[k];
    std::set<StrId> task_names, op_names;
    for (uint32_t r : issue.evidence.tasks)
      if (r < t.size()) task_names.insert(t.name[r]);
    for (uint32_t op : issue.evidence.host_ops)
      if (op < h.size()) op_names.insert(h.name[op]);
    auto mark = [&](uint32_t lane, TimeNs ts, TimeNs dur, std::string_view name) {
      if (tl.findings.size() >= kMaxTimelineBars) return;
      add(&tl.findings, lane, ts, dur,
          [&] { return fmt::format("finding {}: {}: {}", k + 1, IssueTypeName(issue.type), ShortKernelName(name)); },
          "tl-finding");
      tl.findings.back().finding = int(k);
    };
    if (!task_names.empty())
      for (uint32_t r = 0; r < t.size(); ++r) {
        if (t.ts[r] < w.start || t.ts[r] >= w.end || !task_names.count(t.name[r])) continue;
        auto it = lane_of.find(t.track[r]);
        if (it != lane_of.end()) mark(it->second, t.ts[r], t.dur[r], p.Str(t.name[r]));
      }
    if (!op_names.empty())
      for (uint32_t op = 0; op < h.size(); ++op) {
        if (h.ts[op] < w.start || h.ts[op] >= w.end || !op_names.count(h.name[op])) continue;
        auto it = lane_of.find(h.track[op]);
        if (it != lane_of.end()) mark(it->second, h.ts[op], h.dur[op], p.Str(h.name[op]));
      }
  }
  return tl;
}

}  // namespace

StatusOr<ProfileReportData> CollectProfileReport(ProfileSession& session, const ReportOptions& options) {
  const Profile& profile = session.profile();
  const OperatorCallGraph& graph = session.graph();
  const std::string path = session.source_path();
  ProfileReportData d;
  // The drawn steps' paths first, with their segments: the graph keeps their
  // totals, which the summary and the diagnosis then read instead of
  // computing them again (a trace without steps is one step of every event).
  const std::vector<std::pair<size_t, std::string>> timeline_steps = TimelineSteps(graph);
  // With many steps, the op classes and the model structure, which the
  // diagnosis reads, are prepared on a thread of their own beside the paths
  // and the summary, which read only the graph (one after the other, they
  // were a tenth of the report of a 1 M-row kernel_details.csv); the
  // diagnosis waits for them. With few steps, each path is a long step's DAG
  // (a trace without steps is one step of every event: 25 MB for 300 MB),
  // which the structure's transients would add to: it waits, as in analyze.
  std::future<void> structure_ready;
  if (graph.Steps().size() > kStepsListedInFull) structure_ready = session.PrepareStructure(options.diagnose.model_arch);
  std::vector<StatusOr<CriticalPath>> timeline_paths;
  for (const auto& [index, what] : timeline_steps)
    timeline_paths.push_back(graph.ComputeCriticalPathHead(index, kMaxTimelineBars));
  StatusOr<AnalysisSummary> summary = SummarizeAnalysis(graph, options.summary);
  if (!summary.ok()) return summary.status();
  d.summary = std::move(*summary);
  if (d.summary.source_path.empty()) d.summary.source_path = path;
  PYPTO_ASSIGN_OR_RETURN(const DiagnosticReport* diagnosis, session.Diagnosis(options.diagnose, /*keep_task_costs=*/true));
  d.diagnosis = *diagnosis;

  const OpClassification& classes = session.Classes();
  const StatusOr<ModelStructure>& structure = session.Structure(options.diagnose.model_arch);
  if (structure.ok()) {
    d.decode_latency = structure->decode_latency;
    d.prefill_latency = structure->prefill_latency;
  }

  // Step timeline: latency and device busy time of each step.
  d.steps_total = graph.Steps().size();
  for (size_t i = 0; i < graph.Steps().size(); ++i) {
    const StepInfo& s = graph.Steps()[i];
    StepBar bar;
    bar.label = s.number >= 0 ? std::to_string(s.number) : s.name;
    if (structure.ok() && i < structure->steps.size() && structure->steps[i].phase != StepPhase::kUnknown)
      bar.phase = StepPhaseName(structure->steps[i].phase);
    bar.latency_ns = s.latency_ns();
    for (const BusyTime& b : graph.DeviceBusyTimes(s.span())) bar.busy_ns += b.busy_ns;
    d.steps.push_back(std::move(bar));
  }

  // Time by op class: device tasks, else host operators' self time.
  bool any_task_time = false;
  for (TimeNs t : classes.task_time_ns) any_task_time |= t > 0;
  d.device_time = any_task_time;
  std::array<ClassTime, kOpClassCount> by_class{};
  if (any_task_time) {
    for (size_t c = 0; c < kOpClassCount; ++c) {
      by_class[c].count = classes.task_counts[c];
      by_class[c].time_ns = classes.task_time_ns[c];
    }
  } else {
    for (uint32_t row = 0; row < profile.host_ops.size(); ++row) {
      if (profile.host_ops.kind[row] != HostOpKind::kOperator) continue;
      const size_t c = static_cast<size_t>(classes.host_class[row]);
      ++by_class[c].count;
      by_class[c].time_ns += graph.SelfTime(row);
    }
  }
  for (size_t c = 0; c < kOpClassCount; ++c) {
    if (by_class[c].count == 0) continue;
    by_class[c].op_class = OpClassName(static_cast<OpClass>(c));
    d.classes.push_back(by_class[c]);
  }
  std::sort(d.classes.begin(), d.classes.end(), [](const ClassTime& a, const ClassTime& b) {
    return std::tie(b.time_ns, a.op_class) < std::tie(a.time_ns, b.op_class);
  });

  // Roofline: per-task costs on the hardware the diagnosis used, grouped by (name, shape).
  HardwareOverrides overrides;
  overrides.name = options.diagnose.hardware_name;
  overrides.peak_flops = options.diagnose.ai_core_theoretical_peak;
  overrides.memory_bandwidth = options.diagnose.hbm_bandwidth;
  const HardwareSpec hw = DetectHardware(profile, overrides);
  d.hardware = hw.display_name.empty() ? hw.id : hw.display_name;
  if (hw.HeadlinePeak() > 0) d.peak_flops = hw.HeadlinePeak();
  if (hw.memory_bandwidth.value > 0) d.memory_bandwidth = hw.memory_bandwidth.value;
  // Groups are summed by string id, and only the kMaxRooflineOps drawn get
  // their texts: a continuous-batching trace has 10^5 distinct shapes, and a
  // RooflineOp with its four strings for each group held 38 MB of a 300 MB
  // trace's report to draw 200 of them.
  struct Group {
    uint32_t first_row;  // the class and bound shown are those of the group's first task
    Bound first_bound;
    uint64_t count = 0;
    TimeNs time_ns = 0;
    double flops = 0;
    double bytes = 0;
  };
  std::unordered_map<uint64_t, Group> groups;  // (name << 32 | shape) -> sums, in row order
  const DeviceTaskTable& t = profile.device_tasks;
  const std::unique_ptr<const TaskCostTable> diagnosed = session.TakeDiagnosisTaskCosts(options.diagnose);
  RooflineCosts costs(profile, graph, classes, hw, diagnosed.get());
  for (uint32_t row = 0; row < t.size(); ++row) {
    if (t.kind[row] == DeviceTaskKind::kAnnotation || t.kind[row] == DeviceTaskKind::kSync) continue;
    const RooflineCost cost = costs.Next(row);
    if (!cost.ok || t.dur[row] <= 0) {
      ++d.roofline_tasks_without_costs;
      continue;
    }
    StrId name = t.op_type(row);
    if (name == kEmptyStr) name = t.name[row];
    StrId shape = t.input_shapes(row);
    if (shape == kEmptyStr && graph.OperatorOf(row) >= 0) shape = profile.host_ops.input_dims[graph.OperatorOf(row)];
    Group& group = groups.try_emplace(uint64_t{name} << 32 | shape, Group{row, cost.bound}).first->second;
    ++group.count;
    group.time_ns += t.dur[row];
    group.flops += cost.flops;
    group.bytes += cost.bytes;
  }
  // By time, then name and shape as text (distinct groups differ in one of them).
  std::vector<std::pair<uint64_t, const Group*>> order;
  order.reserve(groups.size());
  for (const auto& [key, group] : groups) order.emplace_back(key, &group);
  auto name_of = [&](uint64_t key) { return profile.Str(static_cast<StrId>(key >> 32)); };
  auto shape_of = [&](uint64_t key) { return profile.Str(static_cast<StrId>(key & 0xFFFFFFFFu)); };
  auto drawn_first = [&](const std::pair<uint64_t, const Group*>& a, const std::pair<uint64_t, const Group*>& b) {
    if (a.second->time_ns != b.second->time_ns) return a.second->time_ns > b.second->time_ns;
    return std::pair(name_of(a.first), shape_of(a.first)) < std::pair(name_of(b.first), shape_of(b.first));
  };
  const size_t drawn = std::min(order.size(), kMaxRooflineOps);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(drawn), order.end(), drawn_first);
  for (size_t i = 0; i < drawn; ++i) {
    const auto& [key, group] = order[i];
    RooflineOp op;
    op.name = std::string(name_of(key));
    op.shape = std::string(shape_of(key));
    op.op_class = OpClassName(classes.task_class[group->first_row]);
    op.bound = BoundName(group->first_bound);
    op.count = group->count;
    op.time_ns = group->time_ns;
    op.flops = group->flops;
    op.bytes = group->bytes;
    op.intensity = op.flops / op.bytes;
    op.achieved_flops = op.flops / (double(op.time_ns) * 1e-9);
    d.roofline.push_back(std::move(op));
  }

  d.recommendations = CollectRecommendations(d.diagnosis, &d.advisor_available);

  // Evidence rows of the shown issues, named and placed in their step.
  const TimeNs origin = graph.WholeWindow().start;
  // A host op lies in the step whose host range holds it; a device task in the
  // step whose device work holds it (device spans can overlap the next host range).
  auto step_of = [&](TimeNs ts, bool host) -> std::string {
    for (const StepInfo& st : graph.Steps()) {
      const TimeWindow w = host && st.cpu.duration() > 0 ? st.cpu : st.span();
      if (ts >= w.start && ts < w.end) return st.name;
    }
    return "";
  };
  for (size_t k = 0; k < d.diagnosis.issues.size() && k < kMaxReportIssues; ++k) {
    const Evidence& e = d.diagnosis.issues[k].evidence;
    std::vector<EvidenceRow> rows;
    for (uint32_t task : e.tasks) {
      if (rows.size() >= kMaxEvidenceRowsShown || task >= t.size()) break;
      rows.push_back({"device task", std::string(profile.Str(t.name[task])), t.ts[task] - origin, t.dur[task],
                      step_of(t.ts[task], false)});
    }
    for (uint32_t op : e.host_ops) {
      if (rows.size() >= kMaxEvidenceRowsShown || op >= profile.host_ops.size()) break;
      rows.push_back({"host op", std::string(profile.Str(profile.host_ops.name[op])), profile.host_ops.ts[op] - origin,
                      profile.host_ops.dur[op], step_of(profile.host_ops.ts[op], true)});
    }
    d.issue_rows.push_back(std::move(rows));
  }
  // The median and the slowest step in detail.
  for (size_t i = 0; i < timeline_steps.size(); ++i) {
    d.step_timelines.push_back(BuildStepTimeline(profile, graph, d.diagnosis, timeline_steps[i].first,
                                                 timeline_steps[i].second, timeline_paths[i]));
  }
  timeline_paths.clear();
  // The KV-layout picture when a KV-cache finding is reported.
  for (const Issue& i : d.diagnosis.issues) {
    if (i.type != IssueType::kKvCacheLayout) continue;
    const advisor::ModelConfig model = advisor::InferModelConfig(graph, classes, structure.ok() ? &structure.value() : nullptr);
    d.kv_layout_svg =
        advisor::KVCacheLayoutOptimizer(model).GenerateLayoutPicture(FindKvCacheCat(profile)).svg;
    break;
  }
  return d;
}

// ------------------------------------------------------------------ HTML

namespace {

std::string SevClass(const std::string& sev) { return "sev-" + sev; }

void AppendKv(std::string* out, std::string_view key, std::string_view value) {
  *out += "<div>";
  AppendEscapedHtml(out, key);
  *out += "</div><div>";
  AppendEscapedHtml(out, value);
  *out += "</div>";
}

std::string Card(std::string_view title, std::string_view value) {
  return "<div class=\"card\"><span class=\"muted small\">" + EscapeHtml(title) + "</span><b>" + EscapeHtml(value) + "</b></div>";
}

std::string ClassCss(const std::string& op_class) {
  bool ok = false;
  const OpClass c = OpClassFromName(op_class, &ok);
  return kClassCss[static_cast<size_t>(ok ? c : OpClass::kOther)];
}

}  // namespace

static void AppendRecommendationsHtml(std::string* out, const std::vector<ReportRecommendation>& recs, bool available) {
  *out += "<h2 id=\"recommendations\">Recommendations</h2>\n";
  if (recs.empty()) {
    *out += available ? "<p class=\"muted\">The advisor has no recommendation for the issues found.</p>\n"
                      : "<p class=\"muted\">Recommendations: the advisor is not part of this build yet; the issues above "
                        "list each estimated saving and how it was computed.</p>\n";
    return;
  }
  size_t n = 0;
  for (const ReportRecommendation& r : recs) {
    ++n;
    *out += "<div class=\"rec\"><h3>";
    AppendEscapedHtml(out, r.title.empty() ? r.hotspot_type : r.title);
    if (!std::isnan(r.estimated_speedup)) *out += fmt::format(" <span class=\"good\">est. ×{:.3f}</span>", r.estimated_speedup);
    *out += "</h3><p class=\"small muted\">";
    AppendEscapedHtml(out, r.hotspot_type);
    *out += "</p><p>";
    AppendEscapedHtml(out, r.description);
    *out += "</p>";
    if (!r.action.empty()) {
      *out += "<p><b>Estimate:</b> ";
      AppendEscapedHtml(out, r.action);
      *out += "</p>";
    }
    if (!r.code.empty()) {
      *out += fmt::format("<button class=\"copy\" type=\"button\" data-target=\"code-{}\">copy</button><pre id=\"code-{}\">", n, n);
      AppendEscapedHtml(out, r.code);
      *out += "</pre>";
    }
    *out += "</div>\n";
  }
}

// "<tr><td class=name title=FULL>SHORT" (the caller closes the cell):
// readable kernel names in the tables, the full name on hover.
void AppendNameCell(std::string* out, const std::string& name) {
  *out += "<tr><td class=\"name\" title=\"";
  AppendEscapedHtml(out, name);
  *out += "\">";
  AppendEscapedHtml(out, ShortKernelName(name));
}

static void AppendIssuesHtml(std::string* out, const DiagnosticReport& d,
                             const std::vector<std::vector<EvidenceRow>>& issue_rows,
                             const std::vector<StepTimeline>& timelines) {
  *out += "<h2 id=\"issues\">Top issues</h2>\n";
  if (d.issues.empty()) {
    *out += "<p>No issue found by the detectors run.</p>\n";
  }
  *out += fmt::format("<p>Step basis: {} ({}). Estimated combined saving {} → speedup ×{:.3f} (savings per row combined without double counting).</p>\n",
                      EscapeHtml(d.step_basis), EscapeHtml(FormatMs(double(d.step_time_ns))),
                      EscapeHtml(FormatMs(double(d.estimated_saved_ns))), d.estimated_combined_speedup);
  size_t shown = 0;
  for (const Issue& i : d.issues) {
    if (shown++ >= kMaxReportIssues) break;
    *out += fmt::format("<div class=\"issue\" id=\"finding-{}\"><b class=\"", shown - 1) + SevClass(SeverityName(i.severity)) + "\">";
    AppendEscapedHtml(out, SeverityName(i.severity));
    *out += "</b> <b>";
    AppendEscapedHtml(out, IssueTypeName(i.type));
    *out += "</b> on <code title=\"";
    AppendEscapedHtml(out, i.op_name);
    *out += "\">";
    AppendEscapedHtml(out, i.op_name.empty() ? "(step-wide)" : ShortKernelName(i.op_name));
    *out += "</code>";
    if (!i.phase.empty()) { *out += " <span class=\"muted\">("; AppendEscapedHtml(out, i.phase); *out += ")</span>"; }
    *out += "<p>";
    AppendEscapedHtml(out, i.detail);
    *out += "</p><div class=\"kv small\">";
    AppendKv(out, "affected", FormatMs(double(i.affected_ns)) + " (" + FormatPercent(i.affected_share) + " of steps)");
    AppendKv(out, "estimated saving", FormatMs(double(i.saved_ns)) + " (" + SavingMethodName(i.method) + ")");
    if (!i.saving_formula.empty()) AppendKv(out, "how", i.saving_formula);
    AppendKv(out, "occurrences", fmt::format("{} totalling {} (mean {})", i.evidence.count, FormatMs(double(i.evidence.total_ns)),
                                             FormatUs(double(i.evidence.mean_ns))));
    for (const Metric& m : i.evidence.metrics) AppendKv(out, m.name, fmt::format("{:.4g} {}", m.value, m.unit));
    for (size_t s = 0; s < i.evidence.shape_groups.size() && s < 4; ++s)
      AppendKv(out, "shape", fmt::format("{} ({} rows)", i.evidence.shape_groups[s].Text(), i.evidence.shape_groups[s].count));
    *out += "</div>";
    const size_t k = shown - 1;
    // Where the finding sits in the drawn steps (each timeline's marks link back here).
    std::string on_timelines;
    for (size_t n = 0; n < timelines.size(); ++n) {
      size_t marks = 0;
      for (const TimelineBar& b : timelines[n].findings) marks += b.finding == int(k);
      if (marks > 0)
        on_timelines += fmt::format("{}<a href=\"#steptl-{}\">{}</a> ({} row{})", on_timelines.empty() ? "" : ", ", n,
                                    EscapeHtml(timelines[n].title), marks, marks == 1 ? "" : "s");
    }
    if (!on_timelines.empty()) *out += "<p class=\"small\">On the timeline: " + on_timelines + "</p>";
    if (k < issue_rows.size() && !issue_rows[k].empty()) {
      *out += fmt::format("<details><summary>evidence rows ({} of {})</summary><table><tr><th>kind</th><th>name</th>"
                          "<th>step</th><th class=\"num\">start</th><th class=\"num\">duration</th></tr>\n",
                          issue_rows[k].size(), i.evidence.count);
      for (const EvidenceRow& r : issue_rows[k]) {
        *out += "<tr><td>";
        AppendEscapedHtml(out, r.kind);
        *out += "</td><td class=\"name\">";
        AppendNameCell(out, r.name);
        *out += "</td><td>";
        AppendEscapedHtml(out, r.step.empty() ? "-" : r.step);
        *out += fmt::format("</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                            EscapeHtml(FormatMs(double(r.start_ns))), EscapeHtml(FormatUs(double(r.dur_ns))));
      }
      *out += "</table></details>";
    }
    *out += "</div>\n";
  }
  if (d.issues.size() > kMaxReportIssues)
    *out += fmt::format("<p class=\"muted\">{} more issues in the JSON / Markdown output.</p>\n", d.issues.size() - kMaxReportIssues);
  if (!d.notes.empty()) {
    *out += "<h3>Diagnosis notes</h3><ul>";
    for (const std::string& n : d.notes) { *out += "<li>"; AppendEscapedHtml(out, n); *out += "</li>"; }
    *out += "</ul>\n";
  }
}

// A step's lanes as an SVG Gantt chart: bars per host thread / device stream,
// the critical path on its own lane coloured by segment kind, findings'
// evidence rows outlined in red; every bar has its name and duration as a
// tooltip. Time axis in ms from the step's start.
std::string SvgStepTimeline(const StepTimeline& tl) {
  constexpr int kLabelW = 170, kPlotW = 1000, kLaneH = 18, kTop = 8, kAxisH = 26;
  const int height = kTop + int(tl.lanes.size()) * kLaneH + kAxisH;
  const int width = kLabelW + kPlotW + 20;
  const double scale = double(kPlotW) / double(tl.window_ns);
  std::string s = fmt::format("<svg role=\"img\" class=\"steptl\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
                              "aria-label=\"{}\">",
                              width, height, width, height, EscapeHtml(tl.title));
  for (size_t l = 0; l < tl.lanes.size(); ++l) {
    const int y = kTop + int(l) * kLaneH;
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{}</text>", kLabelW - 6, y + 13,
                     EscapeHtml(tl.lanes[l]));
    s += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", kLabelW, y + kLaneH, kLabelW + kPlotW,
                     y + kLaneH);
  }
  auto draw = [&](const std::vector<TimelineBar>& bars, bool outline) {
    for (const TimelineBar& b : bars) {
      const double x = kLabelW + double(b.start_ns) * scale;
      const double w = std::max(outline ? 2.0 : 0.6, double(b.dur_ns) * scale);
      const int y = kTop + int(b.lane) * kLaneH + (outline ? 1 : 3);
      const std::string rect =
          fmt::format("<rect class=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"><title>{}</title></rect>",
                      EscapeHtml(b.css), x, y, w, outline ? kLaneH - 2 : kLaneH - 6, EscapeHtml(b.label));
      s += b.finding >= 0 ? fmt::format("<a href=\"#finding-{}\">{}</a>", b.finding, rect) : rect;
    }
  };
  draw(tl.bars, false);
  draw(tl.path, false);
  draw(tl.findings, true);
  const int axis_y = kTop + int(tl.lanes.size()) * kLaneH;
  for (int g = 0; g <= 5; ++g) {
    const double x = kLabelW + kPlotW * g / 5.0;
    s += fmt::format("<line class=\"axis\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>"
                     "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\" font-size=\"11\">{}</text>",
                     x, axis_y, x, axis_y + 4, x, axis_y + 16, g == 5 ? "end" : g == 0 ? "start" : "middle",
                     EscapeHtml(FormatTime(double(tl.window_ns) * g / 5.0)));
  }
  s += "</svg>\n<p class=\"small muted\">Lanes: the busiest host threads and device streams of the step; the last lane is "
       "the critical path (colour = segment kind: host, launch, compute, copy, communication, gap, sync); red outlines "
       "mark the rows of the findings (click one to go to its finding). Hover a bar for its name and duration.</p>\n";
  return s;
}

std::string RenderProfileHtml(const ProfileReportData& d) {
  const AnalysisSummary& s = d.summary;
  std::string out = HtmlPageStart("pypto report: " + s.source_path);
  out += "<h1>pypto performance report</h1>\n<p class=\"muted\">";
  AppendEscapedHtml(&out, s.source_path);
  out += "</p>\n<div class=\"kv\">";
  for (const auto& [k, v] : s.metadata)
    if (k == "format" || k == "format_version" || k == "torch_version" || k == "cann_version") AppendKv(&out, k, v);
  for (const DeviceSummary& dev : s.devices) AppendKv(&out, "device " + std::to_string(dev.index), dev.kind + " " + dev.name);
  AppendKv(&out, "hardware (roofline)", d.hardware);
  out += "</div>\n<div class=\"cards\">";
  out += Card("steps", std::to_string(d.steps_total));
  out += Card("host ops / device tasks", fmt::format("{} / {}", s.host_op_total, s.device_task_total));
  out += Card("device busy", FormatMs(double(s.total_device_busy_ns)));
  if (d.decode_latency.count > 0) {
    out += Card("per-token p50", fmt::format("{:.3f} ms", d.decode_latency.p50_ms));
    out += Card("per-token p90 / p99", fmt::format("{:.3f} / {:.3f} ms", d.decode_latency.p90_ms, d.decode_latency.p99_ms));
  }
  out += Card("issues", std::to_string(d.diagnosis.issues.size()));
  out += Card("est. speedup", fmt::format("×{:.3f}", d.diagnosis.estimated_combined_speedup));
  out += "</div>\n";

  // Step timeline.
  out += "<h2 id=\"timeline\">Step timeline</h2>\n";
  if (d.steps.empty()) {
    out += "<p class=\"muted\">No steps.</p>\n";
  } else {
    // Past kMaxTimelineSteps steps, each column is a group of consecutive
    // steps (their mean busy and idle), so every step is in the chart.
    const size_t group = (d.steps.size() + kMaxTimelineSteps - 1) / kMaxTimelineSteps;
    std::vector<std::string> labels;
    ChartSeries busy{"device busy", "s0", {}}, idle{"device idle", "s1", {}};
    for (size_t first = 0; first < d.steps.size(); first += group) {
      const size_t last = std::min(d.steps.size(), first + group) - 1;
      double busy_ns = 0, idle_ns = 0;
      std::string phase = d.steps[first].phase;
      for (size_t i = first; i <= last; ++i) {
        const StepBar& b = d.steps[i];
        busy_ns += double(std::min(b.busy_ns, b.latency_ns));
        idle_ns += double(std::max<TimeNs>(0, b.latency_ns - b.busy_ns));
        if (b.phase != phase) phase = "mixed";
      }
      const double n = double(last - first + 1);
      labels.push_back((group == 1 ? d.steps[first].label : d.steps[first].label + ".." + d.steps[last].label) +
                       (phase.empty() ? "" : " " + phase));
      busy.values.push_back(busy_ns / n);
      idle.values.push_back(idle_ns / n);
    }
    out += SvgStackedColumns(labels, {busy, idle}, group == 1 ? "step latency" : "mean step latency", true,
                             "per-step latency: device busy vs idle");
    if (group > 1)
      out += fmt::format("<p class=\"muted small\">{} steps, {} per column (their mean); the JSON lists every step.</p>\n",
                         d.steps.size(), group);
  }
  for (size_t n = 0; n < d.step_timelines.size(); ++n) {
    const StepTimeline& tl = d.step_timelines[n];
    out += fmt::format("<h3 id=\"steptl-{}\">", n);
    AppendEscapedHtml(&out, tl.title);
    out += "</h3>\n";
    out += SvgStepTimeline(tl);
    if (tl.bars_dropped > 0)
      out += fmt::format("<p class=\"muted small\">{} more rows in the step not drawn.</p>\n", tl.bars_dropped);
    if (tl.path_dropped > 0)
      out += fmt::format("<p class=\"muted small\">{} more critical-path segments in the step not drawn (the first {} are).</p>\n",
                         tl.path_dropped, kMaxTimelineBars);
  }
  // Time by class and by core type / task kind.
  out += d.device_time ? "<h2 id=\"classes\">Device time by op class</h2>\n" : "<h2 id=\"classes\">Host operator self time by op class</h2>\n";
  {
    std::vector<ChartBar> bars;
    for (const ClassTime& c : d.classes)
      bars.push_back({c.op_class, double(c.time_ns), fmt::format("{}: {} calls, {}", c.op_class, c.count, FormatMs(double(c.time_ns)))});
    out += SvgHorizontalBars(bars, "", true, "time by op class");
  }
  out += "<h2 id=\"cores\">Device time by core type / task kind</h2>\n";
  if (s.core_type_utilization.empty()) {
    out += "<p class=\"muted\">No device tasks.</p>\n";
  } else {
    std::vector<ChartBar> bars;
    for (const UtilizationRow& u : s.core_type_utilization)
      bars.push_back({fmt::format("device {} {}", u.device, u.label), double(u.busy_ns),
                      fmt::format("device {} {}: {} tasks, busy {}, utilization {}", u.device, u.label, u.task_count,
                                  FormatMs(double(u.busy_ns)), FormatPercent(u.utilization))});
    out += SvgHorizontalBars(bars, "", true, "busy time by core type or task kind");
  }
  // Roofline.
  out += "<h2 id=\"roofline\">Roofline</h2>\n";
  if (d.roofline.empty()) {
    out += fmt::format("<p class=\"muted\">No op with FLOP and byte figures (shapes missing or classes without a cost model; "
                       "{} tasks without costs).</p>\n", d.roofline_tasks_without_costs);
  } else {
    TimeNs total = 0;
    for (const RooflineOp& r : d.roofline) total += r.time_ns;
    std::vector<RooflinePoint> pts;
    for (const RooflineOp& r : d.roofline)
      pts.push_back({r.name + " " + r.shape + " (" + r.op_class + ", " + std::to_string(r.count) + " calls, " + FormatMs(double(r.time_ns)) + ")",
                     r.intensity, r.achieved_flops, total > 0 ? double(r.time_ns) / double(total) : 0, ClassCss(r.op_class)});
    out += SvgRoofline(pts, d.peak_flops, d.memory_bandwidth, "roofline of ops");
    out += "<p class=\"small muted\">Dots: ops grouped by name and shape (size = time share), colour = op class. Ceilings: ";
    AppendEscapedHtml(&out, d.hardware);
    out += " headline peak and memory bandwidth.</p>\n";
    out += "<table><tr><th>op</th><th>class</th><th class=\"num\">calls</th><th class=\"num\">time</th><th class=\"num\">FLOP/B</th>"
           "<th class=\"num\">achieved</th><th>bound</th></tr>\n";
    for (size_t i = 0; i < d.roofline.size() && i < 15; ++i) {
      const RooflineOp& r = d.roofline[i];
      AppendNameCell(&out, r.name);
      out += "<br><span class=\"muted small\">";
      AppendEscapedHtml(&out, r.shape);
      out += fmt::format("</span></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3g}</td>"
                         "<td class=\"num\">{}</td><td>{}</td></tr>\n",
                         EscapeHtml(r.op_class), r.count, EscapeHtml(FormatMs(double(r.time_ns))), r.intensity,
                         EscapeHtml(FormatSi(r.achieved_flops, "FLOP/s")), EscapeHtml(r.bound));
    }
    out += "</table>\n";
  }
  AppendIssuesHtml(&out, d.diagnosis, d.issue_rows, d.step_timelines);
  if (!d.kv_layout_svg.empty()) {
    out += "<h2 id=\"kvlayout\">KV-cache layout</h2>\n<p class=\"small muted\">What one decode step of one KV head reads "
           "in the current and the proposed layout (advise writes the same picture and the patch).</p>\n";
    out += d.kv_layout_svg;
  }
  AppendRecommendationsHtml(&out, d.recommendations, d.advisor_available);
  // Top kernels.
  out += "<h2 id=\"kernels\">Top device kernels</h2>\n<table><tr><th>name</th><th>kind</th><th class=\"num\">count</th>"
         "<th class=\"num\">total</th><th class=\"num\">mean</th><th class=\"num\">share of busy</th></tr>\n";
  for (const DeviceTaskSummary& k : s.top_device_tasks) {
    AppendNameCell(&out, k.name);
    out += fmt::format("</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                       EscapeHtml(k.kind), k.count, EscapeHtml(FormatMs(double(k.total_ns))), EscapeHtml(FormatUs(double(k.mean_ns))),
                       EscapeHtml(FormatPercent(k.share_of_busy)));
  }
  out += "</table>\n<h2 id=\"hostops\">Top host operators (self time)</h2>\n<table><tr><th>name</th><th class=\"num\">count</th>"
         "<th class=\"num\">self</th><th class=\"num\">total</th><th class=\"num\">device</th></tr>\n";
  for (const HostOpSummary& h : s.top_host_ops) {
    out += "<tr><td class=\"name\">";
    AppendEscapedHtml(&out, h.name);
    out += fmt::format("</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                       h.count, EscapeHtml(FormatMs(double(h.self_ns))), EscapeHtml(FormatMs(double(h.total_ns))),
                       EscapeHtml(FormatMs(double(h.device_ns))));
  }
  out += "</table>\n";
  if (!s.data_loss.empty()) {
    out += "<h2 id=\"dataloss\">Data loss while importing</h2>\n<table><tr><th>severity</th><th>kind</th><th>reason</th><th class=\"num\">count</th><th>first seen</th></tr>\n";
    for (const DataLossSummary& l : s.data_loss) {
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>", l.severity, l.kind);
      AppendEscapedHtml(&out, l.reason);
      out += fmt::format("</td><td class=\"num\">{}</td><td>", l.count);
      AppendEscapedHtml(&out, l.first_location);
      out += "</td></tr>\n";
    }
    out += "</table>\n";
  }
  out += HtmlPageEnd();
  return out;
}

// ------------------------------------------------------------------ Markdown / JSON

std::string RenderProfileMarkdown(const ProfileReportData& d) {
  std::string out = "# pypto performance report\n\n";
  out += "Profile: `" + EscapeMarkdown(d.summary.source_path) + "`, hardware " + EscapeMarkdown(d.hardware) + "\n\n";
  if (d.decode_latency.count > 0)
    out += fmt::format("Per-token latency (decode steps, n={}): p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms\n\n", d.decode_latency.count,
                       d.decode_latency.p50_ms, d.decode_latency.p90_ms, d.decode_latency.p99_ms);
  out += "## Steps\n\n| step | phase | latency | device busy |\n|---|---|---:|---:|\n";
  for (size_t i = 0; i < d.steps.size() && i < kMaxTimelineSteps; ++i) {
    const StepBar& b = d.steps[i];
    out += fmt::format("| {} | {} | {} | {} |\n", EscapeMarkdown(b.label), b.phase, FormatMs(double(b.latency_ns)), FormatMs(double(b.busy_ns)));
  }
  if (d.steps.size() > kMaxTimelineSteps)
    out += fmt::format("\n… {} more steps (the JSON lists every step).\n", d.steps.size() - kMaxTimelineSteps);
  out += d.device_time ? "\n## Device time by op class\n\n" : "\n## Host self time by op class\n\n";
  out += "| class | count | time |\n|---|---:|---:|\n";
  for (const ClassTime& c : d.classes) out += fmt::format("| {} | {} | {} |\n", c.op_class, c.count, FormatMs(double(c.time_ns)));
  out += "\n## Roofline (top ops by time)\n\n| op | shape | class | calls | time | FLOP/B | achieved |\n|---|---|---|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < d.roofline.size() && i < 15; ++i) {
    const RooflineOp& r = d.roofline[i];
    out += fmt::format("| {} | {} | {} | {} | {} | {:.3g} | {} |\n", EscapeMarkdown(r.name), EscapeMarkdown(r.shape), r.op_class, r.count,
                       FormatMs(double(r.time_ns)), r.intensity, FormatSi(r.achieved_flops, "FLOP/s"));
  }
  out += "\n" + RenderDiagnosisMarkdown(d.diagnosis);
  out += "\n## Recommendations\n\n";
  if (d.recommendations.empty()) out += d.advisor_available ? "None.\n" : "The advisor is not part of this build yet.\n";
  for (const ReportRecommendation& r : d.recommendations) {
    out += "### " + EscapeMarkdown(r.title.empty() ? r.hotspot_type : r.title) + "\n\n" + EscapeMarkdown(r.description) + "\n\n";
    if (!r.code.empty()) out += "```\n" + r.code + "\n```\n\n";
  }
  return out;
}

void WriteProfileReport(io::ValueSink& w, const ProfileReportData& d) {
  w.BeginObject();
  w.KeyString("schema", kReportJsonSchema);
  w.Key("analysis");
  WriteAnalysis(w, d.summary);
  w.Key("diagnosis");
  WriteDiagnosis(w, d.diagnosis);
  w.KeyString("hardware", d.hardware);
  w.KeyDouble("peak_flops", d.peak_flops);
  w.KeyDouble("memory_bandwidth", d.memory_bandwidth);
  w.Key("decode_latency_ms");
  w.BeginObject();
  w.KeyUint("count", d.decode_latency.count);
  w.KeyDouble("p50", d.decode_latency.p50_ms);
  w.KeyDouble("p90", d.decode_latency.p90_ms);
  w.KeyDouble("p99", d.decode_latency.p99_ms);
  w.EndObject();
  w.KeyUint("steps_total", d.steps_total);
  w.Key("steps");
  w.BeginArray();
  for (const StepBar& b : d.steps) {
    w.BeginObject();
    w.KeyString("label", b.label);
    w.KeyString("phase", b.phase);
    w.KeyInt("latency_ns", b.latency_ns);
    w.KeyInt("device_busy_ns", b.busy_ns);
    w.EndObject();
  }
  w.EndArray();
  w.KeyString("class_time_basis", d.device_time ? "device_task_time" : "host_self_time");
  w.Key("classes");
  w.BeginArray();
  for (const ClassTime& c : d.classes) {
    w.BeginObject();
    w.KeyString("op_class", c.op_class);
    w.KeyUint("count", c.count);
    w.KeyInt("time_ns", c.time_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("roofline");
  w.BeginArray();
  for (const RooflineOp& r : d.roofline) {
    w.BeginObject();
    w.KeyString("name", r.name);
    w.KeyString("shape", r.shape);
    w.KeyString("op_class", r.op_class);
    w.KeyUint("count", r.count);
    w.KeyInt("time_ns", r.time_ns);
    w.KeyDouble("flops", r.flops);
    w.KeyDouble("bytes", r.bytes);
    w.KeyDouble("intensity", r.intensity);
    w.KeyDouble("achieved_flops", r.achieved_flops);
    w.KeyString("bound", r.bound);
    w.EndObject();
  }
  w.EndArray();
  w.KeyUint("roofline_tasks_without_costs", d.roofline_tasks_without_costs);
  w.KeyBool("advisor_available", d.advisor_available);
  w.Key("recommendations");
  w.BeginArray();
  for (const ReportRecommendation& r : d.recommendations) {
    w.BeginObject();
    w.KeyString("hotspot_type", r.hotspot_type);
    w.KeyString("title", r.title);
    w.KeyString("description", r.description);
    w.KeyString("action", r.action);
    w.KeyString("code", r.code);
    w.KeyDouble("estimated_speedup", r.estimated_speedup);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::string RenderProfileJson(const ProfileReportData& d) {
  std::string out;
  io::JsonWriter w(&out);
  w.set_indent(2);
  WriteProfileReport(w, d);
  out += "\n";
  return out;
}

}  // namespace pypto::report
