#include <fmt/format.h>

#include "report/advice_report.h"

#include "model/kernel_name.h"

namespace pypto::report {
namespace {

std::string Us(TimeNs ns) { return fmt::format("{:.1f} us", double(ns) / 1000.0); }

// Indents every line of a (possibly multi-line) code action.
std::string Indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

std::string ModelLine(const advisor::ModelConfig& m) {
  auto v = [](int64_t x) { return x > 0 ? std::to_string(x) : std::string("?"); };
  return fmt::format("arch {}, layers {}, heads {}, kv heads {}, head_dim {}, hidden {}, dtype {}, max seq {}",
                     m.arch.empty() ? "?" : m.arch, v(m.num_layers), v(m.num_heads), v(m.num_kv_heads),
                     v(m.head_dim), v(m.hidden), m.dtype.empty() ? "?" : m.dtype, v(m.max_seq));
}

}  // namespace

std::string RenderAdviceText(const advisor::AdviceReport& a) {
  std::string out;
  out += fmt::format("Advice for {} (backend {}: {})\n", a.source_path, advisor::BackendName(a.backend),
                     a.backend_reason);
  if (!a.hardware_name.empty()) out += fmt::format("Hardware: {}\n", a.hardware_name);
  out += fmt::format("Model: {}{}\n", ModelLine(a.model), a.model.source.empty() ? "" : " [" + a.model.source + "]");
  out += fmt::format("Time basis: {}, {}\n", a.step_basis, Us(a.step_time_ns));
  out += fmt::format("Workload: {} ({})\n", WorkloadName(a.workload), a.workload_reason);
  out += fmt::format("Recommendations: {}   all together: {} saved -> x{:.3f} (per row the largest saving, "
                     "no double counting)\n",
                     a.recommendations.size(), Us(a.combined_saved_ns), a.combined_speedup);
  for (const advisor::Recommendation& r : a.recommendations) {
    out += fmt::format("\n{}. [{}] {}  x{:.3f}  (saves {})\n", r.rank, SeverityName(r.severity),
                       IssueTypeName(r.hotspot_type), r.estimated_speedup, Us(r.saved_ns));
    out += fmt::format("   {}\n", r.description);
    out += fmt::format("   speedup: {}\n", r.speedup_formula);
    for (const advisor::IssueRef& i : r.issues)
      out += fmt::format("   evidence: {}{}: {}\n", IssueTypeName(i.type), i.op_name.empty() ? "" : " " + ShortKernelName(i.op_name),
                         i.detail);
    for (size_t k = 0; k < r.actions.size(); ++k) {
      const advisor::ActionAdvice& x = r.actions[k];
      out += fmt::format("   {} ({}) {}\n", k == 0 ? "do:" : "or:", advisor::ActionKindName(x.kind), x.description);
      out += Indent(x.action, "       ") + "\n";
      out += fmt::format("       requires: {}\n", x.prerequisite);
      out += fmt::format("       gain: {} -> x{:.3f} ({}; {})\n", x.estimated ? Us(x.saved_ns) : "not estimated",
                         x.estimated_speedup, x.gain_formula, x.gain_source);
    }
    for (const std::string& p : r.artifacts) out += fmt::format("   artifact: {}\n", p);
    out += "   sources: ";
    for (size_t k = 0; k < r.sources.size(); ++k) out += (k ? "; " : "") + r.sources[k];
    out += "\n";
  }
  if (!a.unmatched.empty()) {
    out += "\nIssues without a rule:\n";
    for (const std::string& u : a.unmatched) out += "  - " + u + "\n";
  }
  if (!a.artifacts.empty()) {
    out += "\nArtifacts written:\n";
    for (const std::string& p : a.artifacts) out += "  " + p + "\n";
  }
  if (!a.notes.empty()) {
    out += "\nNotes:\n";
    for (const std::string& n : a.notes) out += "  - " + n + "\n";
  }
  return out;
}

}  // namespace pypto::report
