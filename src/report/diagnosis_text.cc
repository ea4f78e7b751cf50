// Terminal and Markdown rendering of the diagnosis.
#include <cmath>

#include <fmt/format.h>

#include "report/diagnosis_report.h"

namespace pypto::report {
namespace {

std::string Us(TimeNs ns) { return fmt::format("{:.1f} us", double(ns) / 1e3); }
std::string Ratio(double r) { return std::isnan(r) ? "-" : fmt::format("{:.2f}", r); }
std::string Pct(double r) { return std::isnan(r) ? "-" : fmt::format("{:.1f}%", r * 100); }

}  // namespace

std::string EscapeMarkdown(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '|': case '*': case '_': case '`': case '[': case ']': case '#': case '\\': case '<': case '>':
        out += '\\';
        out += c;
        break;
      case '\n': case '\r': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderDiagnosisText(const DiagnosticReport& r) {
  std::string o;
  o += fmt::format("Diagnosis of {} ({})\n", r.source_path.empty() ? "profile" : r.source_path, r.format);
  o += fmt::format("Hardware: {} [{}]\n", r.hardware_name.empty() ? "unknown" : r.hardware_name,
                   r.hardware_selection);
  o += fmt::format("Time basis: {}, {} (device busy {})\n", r.step_basis, Us(r.step_time_ns), Us(r.device_busy_ns));
  o += fmt::format("Issues: {}   estimated saving {} -> combined speedup x{:.3f} (claimed {} before removing overlaps)\n",
                   r.issues.size(), Us(r.estimated_saved_ns), r.estimated_combined_speedup, Us(r.claimed_saved_ns));
  int n = 0;
  for (const Issue& i : r.issues) {
    o += fmt::format("\n{}. [{}] {}{}{}\n", ++n, SeverityName(i.severity), IssueTypeName(i.type),
                     i.op_name.empty() ? "" : "  " + i.op_name, i.phase.empty() ? "" : "  (" + i.phase + ")");
    o += fmt::format("   {}\n", i.detail);
    o += fmt::format("   affected {} ({} of step), {} occurrences; compute ratio {}, memory ratio {}\n",
                     Us(i.affected_ns), Pct(i.affected_share), i.evidence.count, Ratio(i.compute_ratio),
                     Ratio(i.memory_ratio));
    for (const std::string& s : i.evidence.shapes) o += fmt::format("   shapes: {}\n", s);
    o += fmt::format("   estimated saving {} ({}: {})\n", Us(i.saved_ns), SavingMethodName(i.method), i.saving_formula);
  }
  if (r.issues.empty()) o += "\nNo issue found above the thresholds.\n";
  if (!r.notes.empty()) {
    o += "\nNotes:\n";
    for (const std::string& note : r.notes) o += "  - " + note + "\n";
  }
  return o;
}

std::string RenderDiagnosisMarkdown(const DiagnosticReport& r) {
  std::string o;
  o += "# pypto diagnosis\n\n";
  o += fmt::format("- Profile: `{}` ({})\n", EscapeMarkdown(r.source_path), EscapeMarkdown(r.format));
  o += fmt::format("- Hardware: {} — {}\n", EscapeMarkdown(r.hardware_name.empty() ? "unknown" : r.hardware_name),
                   EscapeMarkdown(r.hardware_selection));
  o += fmt::format("- Time basis: {}, {}\n", EscapeMarkdown(r.step_basis), Us(r.step_time_ns));
  o += fmt::format("- Estimated combined speedup: **x{:.3f}** (saving {}, overlaps counted once)\n\n",
                   r.estimated_combined_speedup, Us(r.estimated_saved_ns));
  if (r.issues.empty()) {
    o += "No issue found above the thresholds.\n";
  } else {
    o += "| # | severity | issue | op | phase | affected | share | compute | memory | saving | method | detail |\n";
    o += "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    int n = 0;
    for (const Issue& i : r.issues) {
      o += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", ++n, SeverityName(i.severity),
                       IssueTypeName(i.type), EscapeMarkdown(i.op_name), EscapeMarkdown(i.phase), Us(i.affected_ns),
                       Pct(i.affected_share), Ratio(i.compute_ratio), Ratio(i.memory_ratio), Us(i.saved_ns),
                       SavingMethodName(i.method), EscapeMarkdown(i.detail));
    }
  }
  if (!r.notes.empty()) {
    o += "\n## Notes\n\n";
    for (const std::string& note : r.notes) o += "- " + EscapeMarkdown(note) + "\n";
  }
  return o;
}

}  // namespace pypto::report
