#include <fmt/format.h>

#include "report/advice_report.h"

namespace pypto::report {
namespace {

// Escapes text for a Markdown paragraph / table cell.
std::string EscapeMarkdown(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') { out += ' '; continue; }
    if (std::string_view("|*_`[]<>#\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string Us(TimeNs ns) { return fmt::format("{:.1f} us", double(ns) / 1000.0); }

std::string Fence(const std::string& code) {
  // A fence longer than any backtick run in the code.
  size_t longest = 0, run = 0;
  for (char c : code) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

}  // namespace

std::string RenderAdviceMarkdown(const advisor::AdviceReport& a) {
  std::string out;
  out += fmt::format("# pypto advice: {}\n\n", EscapeMarkdown(a.source_path));
  out += fmt::format("- Backend: **{}** ({})\n", advisor::BackendName(a.backend), EscapeMarkdown(a.backend_reason));
  if (!a.hardware_name.empty()) out += fmt::format("- Hardware: {}\n", EscapeMarkdown(a.hardware_name));
  out += fmt::format("- Time basis: {}, {}\n", EscapeMarkdown(a.step_basis), Us(a.step_time_ns));
  out += fmt::format("- Workload: {} ({})\n", WorkloadName(a.workload), EscapeMarkdown(a.workload_reason));
  out += fmt::format("- All recommendations together: {} saved, **x{:.3f}** (no double counting)\n\n",
                     Us(a.combined_saved_ns), a.combined_speedup);
  out += "| # | hotspot | recommendation | saves | speedup |\n|---|---|---|---|---|\n";
  for (const advisor::Recommendation& r : a.recommendations)
    out += fmt::format("| {} | {} | {} | {} | x{:.3f} |\n", r.rank, IssueTypeName(r.hotspot_type),
                       EscapeMarkdown(r.description), Us(r.saved_ns), r.estimated_speedup);
  for (const advisor::Recommendation& r : a.recommendations) {
    out += fmt::format("\n## {}. {} ({})\n\n", r.rank, EscapeMarkdown(r.description), IssueTypeName(r.hotspot_type));
    out += fmt::format("Estimated speedup x{:.3f}: {}\n\n", r.estimated_speedup, EscapeMarkdown(r.speedup_formula));
    out += "Evidence:\n\n";
    for (const advisor::IssueRef& i : r.issues)
      out += fmt::format("- `{}` {}: {}\n", IssueTypeName(i.type), EscapeMarkdown(i.op_name), EscapeMarkdown(i.detail));
    for (size_t k = 0; k < r.actions.size(); ++k) {
      const advisor::ActionAdvice& x = r.actions[k];
      out += fmt::format("\n**{}** ({}): {}\n\n", k == 0 ? "Do" : "Alternative", advisor::ActionKindName(x.kind),
                         EscapeMarkdown(x.description));
      const std::string fence = Fence(x.action);
      const char* lang = x.kind == advisor::ActionKind::kEnv || x.kind == advisor::ActionKind::kCommand ? "sh" : "python";
      out += fence + lang + "\n" + x.action + "\n" + fence + "\n\n";
      out += fmt::format("- Requires: {}\n", EscapeMarkdown(x.prerequisite));
      out += fmt::format("- Gain: {} → x{:.3f} ({}; {})\n", x.estimated ? Us(x.saved_ns) : "not estimated",
                         x.estimated_speedup, EscapeMarkdown(x.gain_formula), EscapeMarkdown(x.gain_source));
    }
    if (!r.artifacts.empty()) {
      out += "\nArtifacts:\n\n";
      for (const std::string& p : r.artifacts) out += "- " + EscapeMarkdown(p) + "\n";
    }
    out += "\nSources: ";
    for (size_t k = 0; k < r.sources.size(); ++k) out += (k ? "; " : "") + EscapeMarkdown(r.sources[k]);
    out += "\n";
  }
  if (!a.unmatched.empty()) {
    out += "\n## Issues without a rule\n\n";
    for (const std::string& u : a.unmatched) out += "- " + EscapeMarkdown(u) + "\n";
  }
  if (!a.notes.empty()) {
    out += "\n## Notes\n\n";
    for (const std::string& n : a.notes) out += "- " + EscapeMarkdown(n) + "\n";
  }
  return out;
}

}  // namespace pypto::report
