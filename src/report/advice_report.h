// Rendering of the advisor's recommendations (pypto advise): terminal text,
// JSON (schema "pypto.advise/1") and Markdown. The figures come from
// advisor/tuning_advisor.h; these functions only format them.
#pragma once

#include <string>

#include "advisor/tuning_advisor.h"
#include "io/value_sink.h"

namespace pypto::report {

inline constexpr char kAdviseJsonSchema[] = "pypto.advise/1";

std::string RenderAdviceText(const advisor::AdviceReport& advice);
std::string RenderAdviceJson(const advisor::AdviceReport& advice);
// The same document written to any sink (the Python binding's native objects).
void WriteAdvice(io::ValueSink& sink, const advisor::AdviceReport& advice);
std::string RenderAdviceMarkdown(const advisor::AdviceReport& advice);

}  // namespace pypto::report
