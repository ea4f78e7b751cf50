// Rendering of the diagnosis (pypto diagnose): terminal text, JSON (schema
// "pypto.diagnose/1", docs/json-schema.md) and Markdown (profile strings
// escaped). The numbers come from analysis/diagnostic_report.h; these
// functions only format them.
#pragma once

#include <string>
#include <string_view>

#include "analysis/diagnostic_report.h"
#include "io/value_sink.h"

namespace pypto::report {

inline constexpr char kDiagnoseJsonSchema[] = "pypto.diagnose/1";

std::string RenderDiagnosisText(const DiagnosticReport& report);
// Pretty-printed (2-space indent), ending with a newline.
std::string RenderDiagnosisJson(const DiagnosticReport& report);
// The same document written to any sink (the Python binding's native objects).
void WriteDiagnosis(io::ValueSink& sink, const DiagnosticReport& report);
std::string RenderDiagnosisMarkdown(const DiagnosticReport& report);

// The model-structure lines (layers, phases, per-token and prefill latency),
// each starting with `line_prefix` ("" for the terminal, "- " for Markdown).
std::string RenderStructureLines(const StructureSummary& structure, std::string_view line_prefix);
// "shapes: …" lines of an issue: its shapes merged into ranges by skeleton, with row counts.
std::string RenderShapeLines(const Evidence& evidence, std::string_view line_prefix);

// Escapes text from a profile for a Markdown table cell / paragraph: | * _ ` [ ] < > # \ and newlines.
std::string EscapeMarkdown(std::string_view text);

}  // namespace pypto::report
