// Renderers of compare/compare.h's ComparisonReport: Markdown, JSON (schema
// "pypto.compare/1", docs/json-schema.md) and single-file HTML. Profile
// strings are escaped for each target; numbers are only formatted.
#include <fmt/format.h>

#include <cmath>

#include "compare/compare.h"
#include "report/diagnosis_report.h"
#include "report/html_charts.h"
#include "io/json_writer.h"
#include "model/kernel_name.h"
#include "report/text_table.h"

namespace pypto {

namespace {

inline constexpr char kCompareJsonSchema[] = "pypto.compare/1";

// Widths of the op name and shape in the terminal's op table (characters):
// with the figures beside them a row stays within about 160 columns.
constexpr size_t kCompareOpNameChars = 36;
constexpr size_t kCompareShapeChars = 24;

std::string OpLabel(const OpDelta& d) {
  auto side = [](const std::string& name, uint32_t ops) {
    return ops > 1 ? name + fmt::format(" (+{} more)", ops - 1) : name;
  };
  const std::string b = side(d.baseline_name, d.baseline_ops), c = side(d.candidate_name, d.candidate_ops);
  if (d.baseline_name.empty()) return c;
  if (d.candidate_name.empty() || c == b) return b;
  return b + " → " + c;
}

std::string TestText(const SignificanceTest& t) {
  if (!t.testable) return t.verdict;
  if (!t.significant) return fmt::format("not significant (p={:.3g})", t.p_value);
  return fmt::format("{} (p={:.3g})", t.verdict, t.p_value);
}

std::string Delta(double ns) { return (ns > 0 ? "+" : "") + report::FormatTime(ns); }

std::string Rel(double r) {
  if (std::isnan(r)) return "–";
  return fmt::format("{:+.1f}%", r * 100);
}

void WriteTest(io::ValueSink& w, const SignificanceTest& t) {
  w.BeginObject();
  w.KeyString("method", t.method);
  w.KeyUint("n_baseline", t.n_baseline);
  w.KeyUint("n_candidate", t.n_candidate);
  w.KeyDouble("mean_baseline", t.mean_baseline);
  w.KeyDouble("mean_candidate", t.mean_candidate);
  w.KeyDouble("stddev_baseline", t.stddev_baseline);
  w.KeyDouble("stddev_candidate", t.stddev_candidate);
  w.KeyDouble("delta", t.delta);
  w.KeyDouble("relative_delta", t.relative_delta);
  w.KeyDouble("t", t.t);
  w.KeyDouble("df", t.df);
  w.KeyDouble("p_value", t.p_value);
  w.KeyDouble("ci_low", t.ci_low);
  w.KeyDouble("ci_high", t.ci_high);
  w.KeyDouble("alpha", t.alpha);
  w.KeyBool("testable", t.testable);
  w.KeyBool("significant", t.significant);
  w.KeyString("verdict", t.verdict);
  w.EndObject();
}

void WriteLatency(io::ValueSink& w, const LatencyStats& s) {
  w.BeginObject();
  w.KeyUint("count", s.count);
  w.KeyDouble("mean", s.mean_ms);
  w.KeyDouble("p50", s.p50_ms);
  w.KeyDouble("p90", s.p90_ms);
  w.KeyDouble("p99", s.p99_ms);
  w.KeyDouble("min", s.min_ms);
  w.KeyDouble("max", s.max_ms);
  w.EndObject();
}

void WriteSide(io::ValueSink& w, const RunSide& s) {
  w.BeginObject();
  w.KeyString("source_path", s.source_path);
  w.KeyString("format", s.format);
  w.KeyString("hardware", s.hardware);
  w.KeyUint("steps_total", s.steps_total);
  w.Key("compared_steps");
  w.BeginArray();
  for (int64_t n : s.compared_steps) w.Int(n);
  w.EndArray();
  w.Key("step_latency_ns");
  w.BeginArray();
  for (double v : s.step_latency_ns) w.Double(v);
  w.EndArray();
  w.Key("latency_ms");
  WriteLatency(w, s.latency);
  w.KeyString("ops_source", s.device_ops ? "device_tasks" : "host_operators");
  w.KeyUint("ops_counted", s.ops_counted);
  w.KeyUint("ops_outside_steps", s.ops_outside_steps);
  w.KeyInt("op_time_ns", s.op_time_ns);
  w.KeyUint("issues", s.issues);
  w.KeyDouble("estimated_combined_speedup", s.estimated_combined_speedup);
  w.EndObject();
}

}  // namespace

bool ComparisonReport::Identical() const {
  if (baseline.step_latency_ns != candidate.step_latency_ns || baseline.ops_counted != candidate.ops_counted ||
      baseline.op_time_ns != candidate.op_time_ns)
    return false;
  for (const OpDelta& o : ops)
    if (o.delta_per_step_ns != 0) return false;
  return true;
}

std::string ComparisonReport::Verdict() const {
  if (Identical()) return "identical profiles: the same step latencies and op times";
  const SignificanceTest& t = step_latency;
  if (!t.testable) return "not testable: " + t.verdict;
  if (!t.significant) return fmt::format("no significant change (p={:.3g}, {:.0f}% CI of the delta [{}, {}])", t.p_value,
                                         (1 - alpha) * 100, report::FormatTime(t.ci_low), report::FormatTime(t.ci_high));
  // Speedup = mean baseline / mean candidate; its interval from the delta's (candidate = baseline + delta).
  // A delta interval reaching below -baseline (a few huge outlier steps make the spread that wide) allows a
  // candidate mean of zero: the speedup then has no upper bound, which b / (b + ci_low) would print as a
  // negative number.
  const double b = t.mean_baseline;
  const double lo = b / (b + t.ci_high);
  const std::string hi = b + t.ci_low > 0 ? fmt::format("{:.2f}", b / (b + t.ci_low)) : "no upper bound";
  return fmt::format("{} x{:.2f} [{:.2f}, {}] (p={:.3g})", measured_speedup >= 1 ? "faster" : "slower",
                     measured_speedup, lo, hi, t.p_value);
}

std::string ComparisonReport::to_text() const {
  using report::FormatTime;
  using report::TextTable;
  std::string out = "Verdict: " + Verdict() + "\n";
  out += "Baseline:  " + baseline.source_path + "\nCandidate: " + candidate.source_path + "\n";
  out += fmt::format("\nPer-step latency ({}, Welch t-test, alpha {})\n", step_basis, alpha);
  TextTable steps({{""}, {"STEPS", report::Align::kRight}, {"MEAN", report::Align::kRight},
                   {"P50", report::Align::kRight}, {"P90", report::Align::kRight}, {"P99", report::Align::kRight}});
  for (const RunSide* side : {&baseline, &candidate})
    steps.AddRow({side == &baseline ? "baseline" : "candidate", std::to_string(side->latency.count),
                  fmt::format("{:.3f} ms", side->latency.mean_ms), fmt::format("{:.3f} ms", side->latency.p50_ms),
                  fmt::format("{:.3f} ms", side->latency.p90_ms), fmt::format("{:.3f} ms", side->latency.p99_ms)});
  out += steps.Render();
  out += fmt::format("  delta {} ({}), {:.0f}% CI [{}, {}]: {}; measured speedup x{:.3f}\n", Delta(step_latency.delta),
                     Rel(step_latency.relative_delta), (1 - alpha) * 100, FormatTime(step_latency.ci_low),
                     FormatTime(step_latency.ci_high), TestText(step_latency), measured_speedup);
  if (Identical()) return out;  // every table below would read "no change"
  out += "\nTime per step by op class\n";
  TextTable cls({{"CLASS"}, {"BASELINE", report::Align::kRight}, {"CANDIDATE", report::Align::kRight},
                 {"DELTA", report::Align::kRight}, {"COUNT B/C", report::Align::kRight}, {"SIGNIFICANCE"}});
  for (const ClassDelta& c : classes)
    cls.AddRow({c.op_class, FormatTime(c.baseline_per_step_ns), FormatTime(c.candidate_per_step_ns),
                Delta(c.delta_per_step_ns), fmt::format("{}/{}", c.baseline_count, c.candidate_count), TestText(c.test)});
  out += cls.Render();
  out += "\nOps (largest changes per step)\n";
  // Ops of one name differ by their shapes: the SHAPE column tells them apart.
  // Names and shapes are cut to fit a terminal (the JSON has them whole); the
  // match level is a column only when some op is not matched exactly, and a
  // reason no op could be tested is said once under the table.
  const size_t shown_ops = std::min(ops.size(), kDefaultCompareTopOps);
  bool all_exact = true;
  std::string untestable;
  for (size_t i = 0; i < shown_ops; ++i) {
    all_exact = all_exact && ops[i].match == MatchLevel::kExact;
    if (!ops[i].test.testable && untestable.empty()) untestable = ops[i].test.verdict;
  }
  std::vector<TextTable::Column> op_columns = {{"OP"}, {"SHAPE"}, {"CLASS"}};
  if (!all_exact) op_columns.push_back({"MATCH"});
  for (TextTable::Column c : std::initializer_list<TextTable::Column>{{"BASELINE", report::Align::kRight},
                                                                      {"CANDIDATE", report::Align::kRight},
                                                                      {"DELTA", report::Align::kRight},
                                                                      {"CALLS B/C", report::Align::kRight},
                                                                      {"CHANGE"}})
    op_columns.push_back(c);
  TextTable op_table(op_columns);
  for (size_t i = 0; i < shown_ops; ++i) {
    const OpDelta& o = ops[i];
    OpDelta shown = o;
    // A renamed op shows both names ("a → b"): half the width each.
    const bool renamed = !o.baseline_name.empty() && !o.candidate_name.empty() && o.baseline_name != o.candidate_name;
    const size_t name_chars = renamed ? kCompareOpNameChars / 2 : kCompareOpNameChars;
    shown.baseline_name = ShortKernelName(o.baseline_name, name_chars);
    shown.candidate_name = ShortKernelName(o.candidate_name, name_chars);
    const std::string& shape = o.baseline_shape.empty() ? o.candidate_shape : o.baseline_shape;
    std::vector<std::string> row = {OpLabel(shown), shape.empty() ? "-" : report::Ellipsize(shape, kCompareShapeChars),
                                    o.op_class};
    if (!all_exact) row.push_back(MatchLevelName(o.match));
    row.push_back(FormatTime(o.baseline_per_step_ns));
    row.push_back(FormatTime(o.candidate_per_step_ns));
    row.push_back(Delta(o.delta_per_step_ns));
    row.push_back(fmt::format("{}/{}", o.baseline_count, o.candidate_count));
    row.push_back(!o.test.testable      ? std::string("-")
                  : o.test.significant ? fmt::format("{} p={:.2g}", o.test.verdict, o.test.p_value)
                                        : fmt::format("none p={:.2g}", o.test.p_value));
    op_table.AddRow(std::move(row));
  }
  out += op_table.Render();
  out += "  CHANGE: significant at the run's alpha (Welch test over the steps), else none; p the test's p-value\n";
  if (!untestable.empty()) out += "  -: " + untestable + "\n";
  if (ops.size() > kDefaultCompareTopOps)
    out += fmt::format("  … {} more ops (--json lists all)\n", ops.size() - kDefaultCompareTopOps);
  out += "\nIssues\n";
  if (issues.empty()) {
    out += "  no issue in either run\n";
  } else {
    TextTable it({{"CHANGE"}, {"TYPE"}, {"OP"}, {"SEVERITY B -> C"}, {"AFFECTED B -> C"}});
    for (const IssueDelta& i : issues)
      it.AddRow({IssueChangeName(i.change), i.type, ShortKernelName(i.op_name),
                 fmt::format("{} -> {}", i.baseline_severity.empty() ? "-" : i.baseline_severity,
                             i.candidate_severity.empty() ? "-" : i.candidate_severity),
                 fmt::format("{} -> {}", FormatTime(double(i.baseline_affected_ns)),
                             FormatTime(double(i.candidate_affected_ns)))});
    out += it.Render();
  }
  if (!actions.empty()) {
    out += "\nEstimated vs measured gain per applied action\n";
    TextTable at({{"ACTION"}, {"MEASURED ON"}, {"ESTIMATED/STEP", report::Align::kRight},
                  {"MEASURED/STEP", report::Align::kRight}, {"RATIO", report::Align::kRight}, {"VERDICT"}});
    // "type:op name" and "ops named <kernel>" with the kernel names in their short form.
    auto short_id = [](const std::string& id) {
      const size_t colon = id.find(':');
      return colon == std::string::npos ? id : id.substr(0, colon + 1) + ShortKernelName(id.substr(colon + 1), kCompareOpNameChars);
    };
    auto short_scope = [](const std::string& on) {
      constexpr std::string_view kOpsNamed = "ops named ";
      return on.starts_with(kOpsNamed) ? std::string(kOpsNamed) + ShortKernelName(on.substr(kOpsNamed.size()), kCompareOpNameChars)
                                       : on;
    };
    for (const ActionOutcome& a : actions)
      at.AddRow({short_id(a.action.id), short_scope(a.measured_on), FormatTime(a.estimated_per_step_ns), FormatTime(a.measured_per_step_ns),
                 std::isnan(a.measured_over_estimated) ? "-" : fmt::format("{:.2f}", a.measured_over_estimated),
                 a.test.testable ? fmt::format("{} (p={:.3g})", a.verdict, a.test.p_value)
                                 : fmt::format("{} ({})", a.verdict, TestText(a.test))});
    out += at.Render();
  }
  if (!notes.empty()) {
    out += "\nNotes\n";
    for (const std::string& n : notes) out += "  - " + n + "\n";
  }
  return out;
}

void ComparisonReport::Write(io::ValueSink& w) const {
  w.BeginObject();
  w.KeyString("schema", kCompareJsonSchema);
  w.KeyString("verdict", Verdict());
  w.Key("baseline");
  WriteSide(w, baseline);
  w.Key("candidate");
  WriteSide(w, candidate);
  w.KeyString("step_basis", step_basis);
  w.KeyDouble("alpha", alpha);
  w.Key("step_latency");
  WriteTest(w, step_latency);
  w.KeyDouble("measured_speedup", measured_speedup);
  w.Key("match_counts");
  w.BeginObject();
  for (size_t i = 0; i < kMatchLevelCount; ++i) w.KeyUint(MatchLevelName(static_cast<MatchLevel>(i)), match_counts[i]);
  w.EndObject();
  w.Key("classes");
  w.BeginArray();
  for (const ClassDelta& c : classes) {
    w.BeginObject();
    w.KeyString("op_class", c.op_class);
    w.KeyUint("baseline_count", c.baseline_count);
    w.KeyUint("candidate_count", c.candidate_count);
    w.KeyInt("baseline_ns", c.baseline_ns);
    w.KeyInt("candidate_ns", c.candidate_ns);
    w.KeyDouble("baseline_per_step_ns", c.baseline_per_step_ns);
    w.KeyDouble("candidate_per_step_ns", c.candidate_per_step_ns);
    w.KeyDouble("delta_per_step_ns", c.delta_per_step_ns);
    w.Key("test");
    WriteTest(w, c.test);
    w.EndObject();
  }
  w.EndArray();
  w.Key("ops");
  w.BeginArray();
  for (const OpDelta& o : ops) {
    w.BeginObject();
    w.KeyString("match", MatchLevelName(o.match));
    w.KeyString("op_class", o.op_class);
    w.KeyString("baseline_name", o.baseline_name);
    w.KeyString("candidate_name", o.candidate_name);
    w.KeyString("baseline_shape", o.baseline_shape);
    w.KeyString("candidate_shape", o.candidate_shape);
    w.KeyUint("baseline_ops", o.baseline_ops);
    w.KeyUint("candidate_ops", o.candidate_ops);
    w.KeyUint("baseline_count", o.baseline_count);
    w.KeyUint("candidate_count", o.candidate_count);
    w.KeyInt("baseline_ns", o.baseline_ns);
    w.KeyInt("candidate_ns", o.candidate_ns);
    w.KeyDouble("baseline_per_step_ns", o.baseline_per_step_ns);
    w.KeyDouble("candidate_per_step_ns", o.candidate_per_step_ns);
    w.KeyDouble("delta_per_step_ns", o.delta_per_step_ns);
    w.Key("test");
    WriteTest(w, o.test);
    w.EndObject();
  }
  w.EndArray();
  w.Key("issues");
  w.BeginArray();
  for (const IssueDelta& i : issues) {
    w.BeginObject();
    w.KeyString("change", IssueChangeName(i.change));
    w.KeyString("type", i.type);
    w.KeyString("op_name", i.op_name);
    w.KeyString("baseline_severity", i.baseline_severity);
    w.KeyString("candidate_severity", i.candidate_severity);
    w.KeyInt("baseline_affected_ns", i.baseline_affected_ns);
    w.KeyInt("candidate_affected_ns", i.candidate_affected_ns);
    w.KeyInt("baseline_saved_ns", i.baseline_saved_ns);
    w.KeyInt("candidate_saved_ns", i.candidate_saved_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("actions");
  w.BeginArray();
  for (const ActionOutcome& a : actions) {
    w.BeginObject();
    w.KeyString("id", a.action.id);
    w.KeyString("description", a.action.description);
    w.KeyString("issue_type", a.action.issue_type);
    w.KeyString("target_op", a.action.target_op);
    w.KeyString("target_class", a.action.target_class);
    w.KeyString("source", a.action.source);
    w.KeyInt("estimated_saved_ns", a.action.estimated_saved_ns);
    w.KeyUint("estimate_steps", a.action.estimate_steps);
    w.KeyString("measured_on", a.measured_on);
    w.KeyUint("matched_ops", a.matched_ops);
    w.KeyDouble("estimated_per_step_ns", a.estimated_per_step_ns);
    w.KeyDouble("measured_per_step_ns", a.measured_per_step_ns);
    w.KeyDouble("measured_over_estimated", a.measured_over_estimated);
    w.Key("test");
    WriteTest(w, a.test);
    w.KeyString("verdict", a.verdict);
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes");
  w.BeginArray();
  for (const std::string& n : notes) w.String(n);
  w.EndArray();
  w.EndObject();
}

std::string ComparisonReport::to_json() const {
  std::string out;
  io::JsonWriter w(&out);
  w.set_indent(2);
  Write(w);
  out += "\n";
  return out;
}

std::string ComparisonReport::to_markdown() const {
  using report::EscapeMarkdown;
  using report::FormatTime;
  std::string out = "# pypto comparison\n\n**Verdict: " + EscapeMarkdown(Verdict()) + "**\n\n";
  out += "Baseline: `" + EscapeMarkdown(baseline.source_path) + "`  \nCandidate: `" + EscapeMarkdown(candidate.source_path) + "`\n\n";
  out += fmt::format("## Per-step latency ({}, Welch t-test, alpha {})\n\n", step_basis, alpha);
  out += "| | steps | mean | p50 | p90 | p99 |\n|---|---:|---:|---:|---:|---:|\n";
  for (const RunSide* s : {&baseline, &candidate})
    out += fmt::format("| {} | {} | {:.3f} ms | {:.3f} ms | {:.3f} ms | {:.3f} ms |\n", s == &baseline ? "baseline" : "candidate",
                       s->latency.count, s->latency.mean_ms, s->latency.p50_ms, s->latency.p90_ms, s->latency.p99_ms);
  out += fmt::format("\nDelta {} ({}), {:.0f}% CI [{}, {}]: **{}**. Measured speedup ×{:.3f}.\n\n", Delta(step_latency.delta),
                     Rel(step_latency.relative_delta), (1 - alpha) * 100, FormatTime(step_latency.ci_low), FormatTime(step_latency.ci_high),
                     TestText(step_latency), measured_speedup);
  out += "## Time per step by op class\n\n| class | baseline | candidate | delta | count b/c | significance |\n|---|---:|---:|---:|---:|---|\n";
  for (const ClassDelta& c : classes)
    out += fmt::format("| {} | {} | {} | {} | {}/{} | {} |\n", c.op_class, FormatTime(c.baseline_per_step_ns), FormatTime(c.candidate_per_step_ns),
                       Delta(c.delta_per_step_ns), c.baseline_count, c.candidate_count, TestText(c.test));
  out += "\n## Ops (largest changes per step)\n\n| op | class | match | baseline | candidate | delta | calls b/c | significance |\n|---|---|---|---:|---:|---:|---:|---|\n";
  for (size_t i = 0; i < ops.size() && i < kDefaultCompareTopOps; ++i) {
    const OpDelta& o = ops[i];
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {}/{} | {} |\n", EscapeMarkdown(OpLabel(o)), o.op_class, MatchLevelName(o.match),
                       FormatTime(o.baseline_per_step_ns), FormatTime(o.candidate_per_step_ns), Delta(o.delta_per_step_ns), o.baseline_count,
                       o.candidate_count, TestText(o.test));
  }
  if (ops.size() > kDefaultCompareTopOps) out += fmt::format("\n{} more ops in the JSON output.\n", ops.size() - kDefaultCompareTopOps);
  out += "\nMatches:";
  for (size_t i = 0; i < kMatchLevelCount; ++i) out += fmt::format(" {} {}{}", MatchLevelName(static_cast<MatchLevel>(i)), match_counts[i], i + 1 < kMatchLevelCount ? "," : ".\n");
  out += "\n## Issues\n\n";
  if (issues.empty()) out += "No issue in either run.\n";
  else out += "| change | type | op | severity b → c | affected b → c |\n|---|---|---|---|---|\n";
  for (const IssueDelta& i : issues)
    out += fmt::format("| {} | {} | {} | {} → {} | {} → {} |\n", IssueChangeName(i.change), i.type, EscapeMarkdown(i.op_name),
                       i.baseline_severity.empty() ? "–" : i.baseline_severity, i.candidate_severity.empty() ? "–" : i.candidate_severity,
                       FormatTime(double(i.baseline_affected_ns)), FormatTime(double(i.candidate_affected_ns)));
  out += "\n## Estimated vs measured gain per applied action\n\n";
  if (actions.empty()) out += "No applied action given and no baseline issue was resolved.\n";
  else out += "| action | measured on | estimated / step | measured / step | measured ÷ estimated | verdict |\n|---|---|---:|---:|---:|---|\n";
  for (const ActionOutcome& a : actions)
    out += fmt::format("| {} | {} | {} | {} | {} | {} ({}) |\n", EscapeMarkdown(a.action.id), EscapeMarkdown(a.measured_on),
                       FormatTime(a.estimated_per_step_ns), FormatTime(a.measured_per_step_ns),
                       std::isnan(a.measured_over_estimated) ? "–" : fmt::format("{:.2f}", a.measured_over_estimated), a.verdict,
                       TestText(a.test));
  if (!notes.empty()) {
    out += "\n## Notes\n\n";
    for (const std::string& n : notes) out += "- " + EscapeMarkdown(n) + "\n";
  }
  return out;
}

std::string ComparisonReport::to_html() const {
  using namespace report;
  std::string out = HtmlPageStart("pypto comparison: " + baseline.source_path + " vs " + candidate.source_path);
  out += "<h1>pypto comparison</h1>\n";
  // The verdict first, as the terminal and Markdown say it.
  out += fmt::format("<p class=\"verdict\"><b class=\"{}\">Verdict: ", Identical() ? "" : (step_latency.significant ? (step_latency.delta < 0 ? "good" : "bad") : ""));
  AppendEscapedHtml(&out, Verdict());
  out += "</b></p>\n<div class=\"kv\"><div>baseline</div><div>";
  AppendEscapedHtml(&out, baseline.source_path);
  out += "</div><div>candidate</div><div>";
  AppendEscapedHtml(&out, candidate.source_path);
  out += "</div><div>hardware</div><div>";
  AppendEscapedHtml(&out, baseline.hardware + (candidate.hardware != baseline.hardware ? " / " + candidate.hardware : ""));
  out += "</div></div>\n<div class=\"cards\">";
  auto card = [&](std::string_view t, std::string_view v, std::string_view cls = "") {
    out += "<div class=\"card\"><span class=\"muted small\">" + EscapeHtml(t) + "</span><b class=\"" + std::string(cls) + "\">" + EscapeHtml(v) + "</b></div>";
  };
  const std::string verdict_cls = step_latency.significant ? (step_latency.delta < 0 ? "good" : "bad") : "";
  card("per-step latency (" + step_basis + ")", TestText(step_latency), verdict_cls);
  card("measured speedup", std::isnan(measured_speedup) ? "–" : fmt::format("×{:.3f}", measured_speedup), verdict_cls);
  card("p50 before → after", fmt::format("{:.3f} → {:.3f} ms", baseline.latency.p50_ms, candidate.latency.p50_ms));
  card("p90 before → after", fmt::format("{:.3f} → {:.3f} ms", baseline.latency.p90_ms, candidate.latency.p90_ms));
  card("p99 before → after", fmt::format("{:.3f} → {:.3f} ms", baseline.latency.p99_ms, candidate.latency.p99_ms));
  out += "</div>\n";
  out += fmt::format("<p>Welch t-test on {} per-step latencies (n = {} / {}), alpha {}: delta {} ({}), {:.0f}% CI [{}, {}].</p>\n",
                     EscapeHtml(step_basis), step_latency.n_baseline, step_latency.n_candidate, alpha, EscapeHtml(Delta(step_latency.delta)),
                     EscapeHtml(Rel(step_latency.relative_delta)), (1 - alpha) * 100, EscapeHtml(FormatTime(step_latency.ci_low)),
                     EscapeHtml(FormatTime(step_latency.ci_high)));
  // Before/after charts.
  out += "<h2 id=\"latency\">Per-token latency before / after</h2>\n";
  out += SvgGroupedBars({"mean", "p50", "p90", "p99"},
                        {ChartSeries{"baseline", "s5", {baseline.latency.mean_ms * 1e6, baseline.latency.p50_ms * 1e6, baseline.latency.p90_ms * 1e6, baseline.latency.p99_ms * 1e6}},
                         ChartSeries{"candidate", "s0", {candidate.latency.mean_ms * 1e6, candidate.latency.p50_ms * 1e6, candidate.latency.p90_ms * 1e6, candidate.latency.p99_ms * 1e6}}},
                        true, "per-step latency percentiles before and after");
  out += "<h2 id=\"classes\">Time per step by op class, before / after</h2>\n";
  {
    std::vector<std::string> labels;
    ChartSeries b{"baseline", "s5", {}}, c{"candidate", "s0", {}};
    for (const ClassDelta& d : classes) {
      labels.push_back(d.op_class);
      b.values.push_back(d.baseline_per_step_ns);
      c.values.push_back(d.candidate_per_step_ns);
    }
    out += SvgGroupedBars(labels, {b, c}, true, "time per step by op class before and after");
  }
  out += "<table><tr><th>class</th><th class=\"num\">baseline</th><th class=\"num\">candidate</th><th class=\"num\">delta</th>"
         "<th class=\"num\">calls b/c</th><th>significance</th></tr>\n";
  for (const ClassDelta& d : classes)
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}/{}</td><td>{}</td></tr>\n",
                       EscapeHtml(d.op_class), EscapeHtml(FormatTime(d.baseline_per_step_ns)), EscapeHtml(FormatTime(d.candidate_per_step_ns)),
                       EscapeHtml(Delta(d.delta_per_step_ns)), d.baseline_count, d.candidate_count, EscapeHtml(TestText(d.test)));
  out += "</table>\n<h2 id=\"ops\">Ops with the largest change per step</h2>\n";
  out += "<table><tr><th>op</th><th>class</th><th>match</th><th class=\"num\">baseline</th><th class=\"num\">candidate</th>"
         "<th class=\"num\">delta</th><th class=\"num\">calls b/c</th><th>significance</th></tr>\n";
  for (size_t i = 0; i < ops.size() && i < kDefaultCompareTopOps; ++i) {
    const OpDelta& o = ops[i];
    out += "<tr><td class=\"name\">";
    AppendEscapedHtml(&out, OpLabel(o));
    const std::string& shape = o.baseline_shape.empty() ? o.candidate_shape : o.baseline_shape;
    if (!shape.empty()) { out += "<br><span class=\"muted small\">"; AppendEscapedHtml(&out, shape); out += "</span>"; }
    out += fmt::format("</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}/{}</td><td>{}</td></tr>\n",
                       EscapeHtml(o.op_class), MatchLevelName(o.match), EscapeHtml(FormatTime(o.baseline_per_step_ns)),
                       EscapeHtml(FormatTime(o.candidate_per_step_ns)), EscapeHtml(Delta(o.delta_per_step_ns)), o.baseline_count, o.candidate_count,
                       EscapeHtml(TestText(o.test)));
  }
  out += "</table>\n<p class=\"small muted\">Matches:";
  for (size_t i = 0; i < kMatchLevelCount; ++i) out += fmt::format(" {} {}", MatchLevelName(static_cast<MatchLevel>(i)), match_counts[i]);
  out += "</p>\n<h2 id=\"issues\">Issues resolved / remaining / new</h2>\n";
  if (issues.empty()) out += "<p>No issue in either run.</p>\n";
  else out += "<table><tr><th>change</th><th>type</th><th>op</th><th>severity</th><th class=\"num\">affected before → after</th></tr>\n";
  for (const IssueDelta& i : issues) {
    const char* cls = i.change == IssueChange::kResolved ? "good" : i.change == IssueChange::kNew ? "bad" : "";
    out += fmt::format("<tr><td class=\"{}\">{}</td><td>{}</td><td class=\"name\">{}</td><td>{} → {}</td><td class=\"num\">{} → {}</td></tr>\n", cls,
                       IssueChangeName(i.change), EscapeHtml(i.type), EscapeHtml(i.op_name), EscapeHtml(i.baseline_severity.empty() ? "–" : i.baseline_severity),
                       EscapeHtml(i.candidate_severity.empty() ? "–" : i.candidate_severity), EscapeHtml(FormatTime(double(i.baseline_affected_ns))),
                       EscapeHtml(FormatTime(double(i.candidate_affected_ns))));
  }
  if (!issues.empty()) out += "</table>\n";
  out += "<h2 id=\"actions\">Estimated vs measured gain per applied action</h2>\n";
  if (actions.empty()) {
    out += "<p class=\"muted\">No applied action given and no baseline issue was resolved.</p>\n";
  } else {
    std::vector<std::string> labels;
    ChartSeries est{"estimated saving / step", "s1", {}}, meas{"measured saving / step", "s2", {}};
    for (const ActionOutcome& a : actions) {
      labels.push_back(a.action.id);
      est.values.push_back(a.estimated_per_step_ns);
      meas.values.push_back(std::max(0.0, a.measured_per_step_ns));
    }
    out += SvgGroupedBars(labels, {est, meas}, true, "estimated vs measured saving per action");
    out += "<table><tr><th>action</th><th>measured on</th><th class=\"num\">estimated / step</th><th class=\"num\">measured / step</th>"
           "<th class=\"num\">ratio</th><th>verdict</th><th>source</th></tr>\n";
    for (const ActionOutcome& a : actions)
      out += fmt::format("<tr><td class=\"name\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{} ({})</td><td>{}</td></tr>\n",
                         EscapeHtml(a.action.id), EscapeHtml(a.measured_on), EscapeHtml(FormatTime(a.estimated_per_step_ns)),
                         EscapeHtml(FormatTime(a.measured_per_step_ns)),
                         std::isnan(a.measured_over_estimated) ? "–" : fmt::format("{:.2f}", a.measured_over_estimated), EscapeHtml(a.verdict),
                         EscapeHtml(TestText(a.test)), EscapeHtml(a.action.source));
    out += "</table>\n";
  }
  if (!notes.empty()) {
    out += "<h2>Notes</h2><ul>";
    for (const std::string& n : notes) { out += "<li>"; AppendEscapedHtml(&out, n); out += "</li>"; }
    out += "</ul>\n";
  }
  out += HtmlPageEnd();
  return out;
}

}  // namespace pypto
