// Terminal rendering of the analyze report: aligned tables, durations with units.
#pragma once

#include <string>

#include "report/analysis_summary.h"

namespace pypto::report {

std::string RenderAnalysisText(const AnalysisSummary& summary);

}  // namespace pypto::report
