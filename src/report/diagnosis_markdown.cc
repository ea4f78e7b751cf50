// Markdown rendering of the diagnosis (profile strings escaped).
#include <cmath>

#include <fmt/format.h>

#include "report/diagnosis_report.h"

namespace pypto::report {
namespace {

std::string Us(TimeNs ns) { return fmt::format("{:.1f} us", double(ns) / 1e3); }
std::string Ratio(double r) { return std::isnan(r) ? "-" : fmt::format("{:.2f}", r); }
std::string Pct(double r) { return std::isnan(r) ? "-" : fmt::format("{:.1f}%", r * 100); }

}  // namespace

std::string RenderDiagnosisMarkdown(const DiagnosticReport& r) {
  std::string o;
  o += "# pypto diagnosis\n\n";
  o += fmt::format("- Profile: `{}` ({})\n", EscapeMarkdown(r.source_path), EscapeMarkdown(r.format));
  o += fmt::format("- Hardware: {} — {}\n", EscapeMarkdown(r.hardware_name.empty() ? "unknown" : r.hardware_name),
                   EscapeMarkdown(r.hardware_selection));
  o += fmt::format("- Time basis: {}, {}\n", EscapeMarkdown(r.step_basis), Us(r.step_time_ns));
  o += fmt::format("- Workload: {} ({})\n", WorkloadName(r.workload), EscapeMarkdown(r.workload_reason));
  o += RenderStructureLines(r.structure, "- ");
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
