// Terminal rendering of the diagnosis (Markdown: diagnosis_markdown.cc).
#include <cmath>

#include <fmt/format.h>

#include "report/diagnosis_report.h"
#include "model/kernel_name.h"

namespace pypto::report {
namespace {

std::string Us(TimeNs ns) { return fmt::format("{:.1f} us", double(ns) / 1e3); }
std::string Ratio(double r) { return std::isnan(r) ? "-" : fmt::format("{:.2f}", r); }
std::string Pct(double r) { return std::isnan(r) ? "-" : fmt::format("{:.1f}%", r * 100); }
std::string Ms(double ms) { return std::isnan(ms) ? "-" : fmt::format("{:.3f} ms", ms); }

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

std::string RenderStructureLines(const StructureSummary& s, std::string_view line_prefix) {
  const std::string_view p = line_prefix;
  if (!s.available) return fmt::format("{}Model structure: unavailable (see notes)\n", p);
  std::string o = fmt::format("{}Model structure: {} layer{}{}; steps: {} prefill, {} decode{}\n", p, s.layers,
                                  s.layers == 1 ? "" : "s",
                                  s.layer_period > 0 ? fmt::format(" ({} ops each)", s.layer_period) : "",
                                  s.prefill_steps, s.decode_steps,
                                  s.unknown_steps ? fmt::format(", {} unknown", s.unknown_steps) : "");
  if (!s.phase_rules.empty()) {
    std::string rules;
    for (const auto& [rule, n] : s.phase_rules) rules += fmt::format("{}{} ({} step{})", rules.empty() ? "" : ", ", rule, n, n == 1 ? "" : "s");
    o += fmt::format("{}Phases decided by: {}\n", p, rules);
  }
  if (s.decode_latency.count > 0) {
    o += fmt::format("{}Per-token latency (decode step, {} steps): p50 {}, p90 {}, p99 {}\n", p, s.decode_latency.count,
                         Ms(s.decode_latency.p50_ms), Ms(s.decode_latency.p90_ms), Ms(s.decode_latency.p99_ms));
  }
  if (s.prefill_latency.count > 0) {
    o += fmt::format("{}Prefill step latency ({} steps): p50 {}\n", p, s.prefill_latency.count,
                         Ms(s.prefill_latency.p50_ms));
  }
  return o;
}

std::string RenderShapeLines(const Evidence& e, std::string_view prefix) {
  std::string o;
  if (e.shape_groups.empty()) {  // evidence built without groups (tests, older saved reports)
    for (const std::string& s : e.shapes) o += fmt::format("{}shapes: {}\n", prefix, s);
    return o;
  }
  for (const ShapeGroup& g : e.shape_groups)
    o += fmt::format("{}shapes: {}{}\n", prefix, g.Text(), g.count > 1 ? fmt::format(" ({} rows)", g.count) : "");
  if (e.other_shapes > 0)
    o += fmt::format("{}shapes: … {} more rows of other shapes (--json lists examples)\n", prefix, e.other_shapes);
  return o;
}

std::string RenderDiagnosisText(const DiagnosticReport& r) {
  std::string o;
  o += fmt::format("Diagnosis of {} ({})\n", r.source_path.empty() ? "profile" : r.source_path, r.format);
  o += fmt::format("Hardware: {} [{}]\n", r.hardware_name.empty() ? "unknown" : r.hardware_name,
                   r.hardware_selection);
  o += fmt::format("Time basis: {}, {} (device busy {})\n", r.step_basis, Us(r.step_time_ns), Us(r.device_busy_ns));
  o += fmt::format("Workload: {} ({})\n", WorkloadName(r.workload), r.workload_reason);
  o += RenderStructureLines(r.structure, "");
  o += fmt::format("Issues: {}   estimated saving {} -> combined speedup x{:.3f} (claimed {} before removing overlaps)\n",
                   r.issues.size(), Us(r.estimated_saved_ns), r.estimated_combined_speedup, Us(r.claimed_saved_ns));
  int n = 0;
  for (const Issue& i : r.issues) {
    o += fmt::format("\n{}. [{}] {}{}{}\n", ++n, SeverityName(i.severity), IssueTypeName(i.type),
                     i.op_name.empty() ? "" : "  " + ShortKernelName(i.op_name), i.phase.empty() ? "" : "  (" + i.phase + ")");
    o += fmt::format("   {}\n", i.detail);
    o += fmt::format("   affected {} ({} of step), {} occurrences; compute ratio {}, memory ratio {}\n",
                     Us(i.affected_ns), Pct(i.affected_share), i.evidence.count, Ratio(i.compute_ratio),
                     Ratio(i.memory_ratio));
    o += RenderShapeLines(i.evidence, "   ");
    o += fmt::format("   estimated saving {} ({}: {})\n", Us(i.saved_ns), SavingMethodName(i.method), i.saving_formula);
  }
  if (r.issues.empty()) o += "\nNo issue found above the thresholds.\n";
  if (!r.notes.empty()) {
    o += "\nNotes:\n";
    for (const std::string& note : r.notes) o += "  - " + note + "\n";
  }
  return o;
}

}  // namespace pypto::report
