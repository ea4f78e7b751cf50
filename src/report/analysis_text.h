// Terminal rendering of the analyze report: aligned tables, durations with units.
#pragma once

#include <string>

#include "report/analysis_summary.h"

namespace pypto::report {

// Steps listed one per row up to this many (rows); beyond it the text shows
// their latency distribution, the first step and the slowest few, so the
// output does not grow with the trace. Source: one terminal screen.
inline constexpr size_t kStepsListedInFull = 20;
// Slowest steps listed when the steps are summarised.
inline constexpr size_t kSlowestStepsShown = 5;
// A step is an outlier when its latency exceeds the median by more than this
// many robust standard deviations (MedianAndRobustSigma, analysis/statistics.h):
// the 3-sigma rule made robust to the outliers themselves (pypto ranks uses
// the same rule for stragglers).
inline constexpr double kOutlierSigmas = 3.0;
// Outlier steps and repeated step numbers named in the text, at most.
inline constexpr size_t kStepsNamedInNotes = 5;

struct AnalysisTextOptions {
  bool all_steps = false;  // --steps: one row per step whatever their number
};

std::string RenderAnalysisText(const AnalysisSummary& summary, const AnalysisTextOptions& options = {});

}  // namespace pypto::report
