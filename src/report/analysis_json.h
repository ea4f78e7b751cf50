// JSON rendering of the analyze report. The schema is versioned by the
// top-level "schema" field and documented field by field in docs/json-schema.md;
// a change that removes or renames a field bumps the version.
#pragma once

#include <string>

#include "io/value_sink.h"
#include "report/analysis_summary.h"

namespace pypto::report {

inline constexpr char kAnalyzeJsonSchema[] = "pypto.analyze/1";

// Pretty-printed (2-space indent), ending with a newline.
std::string RenderAnalysisJson(const AnalysisSummary& summary);
// The same document written to any sink (the Python binding's native objects).
void WriteAnalysis(io::ValueSink& sink, const AnalysisSummary& summary);

}  // namespace pypto::report
