// `pypto report`: one profile as a single self-contained HTML page (inline
// CSS + inline SVG charts, a few lines of inline JS for copy buttons, no
// network), or as Markdown / JSON. The data is collected from the engine's
// APIs (analysis summary, diagnosis, op classes, per-task roofline costs,
// per-step busy time) by copying what they return; the renderers format it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"
#include "analysis/structure.h"
#include "core/status.h"
#include "importers/importer.h"
#include "io/value_sink.h"
#include "report/analysis_summary.h"
#include "session/profile_session.h"

namespace pypto::report {

inline constexpr char kReportJsonSchema[] = "pypto.report/1";
// Columns of the step-latency chart at most (past it, a column is a group of
// consecutive steps); also the steps listed in the Markdown report.
inline constexpr size_t kMaxTimelineSteps = 400;
// Ops (name + shape groups) drawn in the roofline chart, by time.
inline constexpr size_t kMaxRooflineOps = 200;
// Issues shown with their evidence.
inline constexpr size_t kMaxReportIssues = 20;

// One recommendation as the HTML shows it, copied from the advisor
// (advisor::Advise; CollectRecommendations in profile_report.cc).
struct ReportRecommendation {
  std::string hotspot_type;      // issue type it addresses
  std::string title;
  std::string description;
  std::string action;            // how the gain was estimated (advisor speedup formula)
  std::string code;              // copyable action: code / env var / config / command ("" = none)
  double estimated_speedup = std::numeric_limits<double>::quiet_NaN();
};

struct StepBar {
  std::string label;             // "ProfilerStep#3", "step 3"
  std::string phase;             // "prefill" | "decode" | ""
  TimeNs latency_ns = 0;
  TimeNs busy_ns = 0;            // device busy (union over streams, summed over devices), clipped to the step
};

struct ClassTime {
  std::string op_class;
  uint64_t count = 0;
  TimeNs time_ns = 0;            // device task time (host self time for CPU-only profiles)
};

struct RooflineOp {
  std::string name;
  std::string shape;
  std::string op_class;
  uint64_t count = 0;            // tasks with costs
  TimeNs time_ns = 0;            // their measured time
  double flops = 0;
  double bytes = 0;
  double intensity = std::numeric_limits<double>::quiet_NaN();       // FLOP/B
  double achieved_flops = std::numeric_limits<double>::quiet_NaN();  // FLOP/s
  std::string bound;             // "compute" | "memory" | "unknown"
};

// One evidence row of an issue, as the HTML lists it under the finding.
struct EvidenceRow {
  std::string kind;              // "device task" / "host op"
  std::string name;
  TimeNs start_ns = 0;           // from the start of the profile
  TimeNs dur_ns = 0;
  std::string step;              // the step it lies in ("" outside)
};
// Evidence rows listed per issue in the HTML (the JSON keeps the row ids).
inline constexpr size_t kMaxEvidenceRowsShown = 12;

// One step drawn in detail: a lane per host thread and device stream, the
// critical path as its own lane, and the findings' evidence rows marked.
struct TimelineBar {
  uint32_t lane = 0;
  TimeNs start_ns = 0;           // from the step's start
  TimeNs dur_ns = 0;
  std::string label;             // tooltip: readable name and duration
  std::string css;               // class for the colour (segment kind, host / device)
  int finding = -1;              // findings: index of the issue (links to #finding-N)
};
struct StepTimeline {
  std::string title;             // "median step ProfilerStep#12 (17.377 ms)"
  TimeNs window_ns = 0;
  std::vector<std::string> lanes;
  std::vector<TimelineBar> bars;
  std::vector<TimelineBar> path;     // critical-path segments (lane = the path lane)
  std::vector<TimelineBar> findings; // rows of issues in the step: their evidence rows and rows of the same name
  uint64_t bars_dropped = 0;     // past kMaxTimelineBars
  uint64_t path_dropped = 0;     // critical-path segments past kMaxTimelineBars
};
// Lanes and bars drawn per step timeline, and critical-path segments drawn
// per step (bounded HTML size: a trace without ProfilerStep marks is one
// step whose critical path has ~10^5 segments, 70 MB of SVG if all drawn).
inline constexpr size_t kMaxTimelineLanes = 16;
inline constexpr size_t kMaxTimelineBars = 4000;

struct ProfileReportData {
  AnalysisSummary summary;
  DiagnosticReport diagnosis;
  LatencyStats decode_latency;
  LatencyStats prefill_latency;
  std::vector<StepBar> steps;    // every step (the chart groups them past kMaxTimelineSteps)
  uint64_t steps_total = 0;
  bool device_time = true;       // classes hold device time (false: host self time)
  std::vector<ClassTime> classes;
  std::vector<RooflineOp> roofline;
  uint64_t roofline_tasks_without_costs = 0;
  std::string hardware;
  double peak_flops = std::numeric_limits<double>::quiet_NaN();
  double memory_bandwidth = std::numeric_limits<double>::quiet_NaN();
  bool advisor_available = false;
  std::vector<ReportRecommendation> recommendations;
  std::vector<std::vector<EvidenceRow>> issue_rows;  // by diagnosis.issues index (shown issues only)
  std::string kv_layout_svg;     // the two KV-cache layouts, when a kv_cache_layout issue is reported
  std::vector<StepTimeline> step_timelines;  // the median and the slowest step (one when they are the same)
};

struct ReportOptions {
  SummaryOptions summary;
  DiagnoseOptions diagnose;
};

// What the report shows, from the session's graph, classes, structure and
// diagnosis (computed once by the session, shared with other fronts).
StatusOr<ProfileReportData> CollectProfileReport(ProfileSession& session, const ReportOptions& options);
// The recommendations the advisor gives for a diagnosis; `available` false when the advisor failed.
std::vector<ReportRecommendation> CollectRecommendations(const DiagnosticReport& diagnosis, bool* available);

std::string RenderProfileHtml(const ProfileReportData& data);
std::string RenderProfileMarkdown(const ProfileReportData& data);
// {"schema":"pypto.report/1","analysis":<pypto.analyze/1>,"diagnosis":<pypto.diagnose/1>,"steps":…,"classes":…,"roofline":…,"recommendations":…}
std::string RenderProfileJson(const ProfileReportData& data);
// The same document written to any sink (the Python binding's native objects).
void WriteProfileReport(io::ValueSink& sink, const ProfileReportData& data);

}  // namespace pypto::report
