// Helpers shared by the detectors (internal to src/analysis/detectors/).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/detector.h"

namespace pypto::detectors {

// Idle gap before each task of ctx.tasks on its own stream track (ns, 0 when
// tasks overlap), in ctx.tasks order. Each task is compared with the one
// before it in ctx.tasks, so its previous task, when it has one (same track,
// same step), is ctx.tasks[i - 1]: kNoPrevious marks the gap of a task that
// has none. (A second array holding that row was 8 MB on 1 M tasks.)
struct StreamGaps {
  static constexpr TimeNs kNoPrevious = -1;  // gaps are >= 0
  std::vector<TimeNs> gap;                   // indexed like ctx.tasks
  bool HasPrevious(size_t i) const { return gap[i] != kNoPrevious; }
};
StreamGaps ComputeStreamGaps(const DiagnosisContext& ctx);

// The analysed tasks' busy intervals, all devices together, merged and sorted
// (graph/interval_union.h MergedIntervals); kernels and collectives only when
// `kernels_only` (what a copy could overlap with).
std::vector<std::pair<TimeNs, TimeNs>> BusyIntervals(const DiagnosisContext& ctx, bool kernels_only = false);

// Class of a task (kOther when the classification is shorter than the table).
OpClass TaskClass(const DiagnosisContext& ctx, uint32_t task);
std::string_view TaskSubKind(const DiagnosisContext& ctx, uint32_t task);
OpClass HostClass(const DiagnosisContext& ctx, uint32_t op);

// Phase (prefill / decode) of the analysed step holding `ts`, from the model
// structure; kUnknown without structure or outside the analysed steps.
StepPhase StepPhaseOf(const DiagnosisContext& ctx, TimeNs ts);
// The structure of that step, or nullptr.
const StepStructure* StepStructureOf(const DiagnosisContext& ctx, TimeNs ts);

// Shapes of a task as written: Ascend Input Shapes, else the Input Dims of
// its operator; "" when none.
std::string TaskShapeText(const DiagnosisContext& ctx, uint32_t task);
// Its string id (kEmptyStr for ""): tasks with the same id have the same shape text.
StrId TaskShapeId(const DiagnosisContext& ctx, uint32_t task);

// Adds a row to evidence (keeps ts order of insertion; callers insert in order).
void AddTaskEvidence(Issue* issue, uint32_t task, TimeNs dur);
// Distinct shapes kept verbatim per issue (the groups hold all of them).
inline constexpr size_t kMaxShapeExamples = 8;
void AddShape(Issue* issue, std::string_view shape);
void AddMetric(Issue* issue, std::string name, double value, std::string unit);

inline bool IsNan(double v) { return std::isnan(v); }
// Mean ignoring NaN; NaN when no value.
struct MeanAcc {
  double sum = 0;
  double weight = 0;
  void Add(double v, double w = 1.0) {
    if (std::isnan(v)) return;
    sum += v * w;
    weight += w;
  }
  double Mean() const { return weight > 0 ? sum / weight : std::nan(""); }
};

std::string LowerAscii(std::string_view s);
std::string FormatUs(TimeNs ns);  // "12.5 us"

}  // namespace pypto::detectors

namespace pypto::detectors {

// Residual gap between back-to-back kernels once launch overhead is removed
// (graph replay / fused dispatch), ns. Source: HTA "kernel wait" category —
// back-to-back kernels on a stream are a few hundred ns to ~1 µs apart (§4.2);
// we keep 1 µs so savings stay conservative.
inline constexpr TimeNs kResidualKernelGapNs = 1000;

// The part of gap[i] that launch / dispatch explains: the whole gap when the
// launching runtime call started at or after the previous task's end (HTA
// "host wait"; half the gap of tolerance, since the launch call itself takes
// time) or when there is no launch information (Ascend kernel tables,
// where the gap is the task's Wait Time); 0 when the launch was issued before
// the stream went idle (the wait has another cause) or the gap exceeds
// max_gap_ns.
TimeNs LaunchAttributableGap(const DiagnosisContext& ctx, const StreamGaps& gaps, size_t i, TimeNs max_gap_ns);

// Symbol used for sequence patterns: the operator name (aten::mul) when the
// task has one, else the Ascend op type, else the kernel name; lower case.
std::string TaskSymbol(const DiagnosisContext& ctx, uint32_t task);
// The string id TaskSymbol lowers: tasks with the same id have the same symbol.
StrId TaskSymbolId(const DiagnosisContext& ctx, uint32_t task);

// True when the host op is an operator whose nearest enclosing operator
// ancestor is not an operator (a top-level aten call).
bool IsTopOperator(const DiagnosisContext& ctx, uint32_t op);

// The fusible_sequence rule patterns as written (msprof-analyze's regexes
// over "-tok-" text), in rule order; a test reads each with TokenSequencePattern.
std::vector<std::string_view> FusionRulePatterns();

}  // namespace pypto::detectors
