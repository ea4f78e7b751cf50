#include "advisor/tuning_advisor.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "hw/dtype.h"

namespace pypto::advisor {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Us(TimeNs ns) { return fmt::format("{:.1f} us", double(ns) / 1000.0); }

bool Contains(const std::vector<std::string>& list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// Dtypes an issue names: the words after "dtypes" in its detail (Ascend
// "Input Data Types" as the detector quoted them) and the double_input metric.
std::vector<std::string> IssueDtypes(const Issue& issue) {
  std::vector<std::string> out;
  const size_t at = issue.detail.find("dtypes");
  if (at != std::string::npos) {
    std::string word;
    auto flush = [&] {
      DType d = ParseDType(word);
      if (d != DType::kUnknown && !Contains(out, DTypeName(d))) out.push_back(DTypeName(d));
      word.clear();
    };
    for (size_t i = at + 6; i < issue.detail.size() && issue.detail[i] != ';'; ++i) {
      const char c = issue.detail[i];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') word += c;
      else flush();
    }
    flush();
  }
  for (const Metric& m : issue.evidence.metrics)
    if (m.name == "double_input" && m.value > 0 && !Contains(out, DTypeName(DType::kFp64)))
      out.push_back(DTypeName(DType::kFp64));
  return out;
}

bool Matches(const RuleMatch& m, const Issue& issue, const ModelConfig& model, Workload workload) {
  if (!m.workloads.empty() && !Contains(m.workloads, WorkloadName(workload))) return false;
  if (!m.archs.empty()) {
    const std::string arch = model.arch.empty() ? "unknown" : Lower(model.arch);
    if (!Contains(m.archs, arch)) return false;
  }
  if (!m.phases.empty()) {
    const std::string phase = issue.phase.empty() ? "unknown" : Lower(issue.phase);
    if (!Contains(m.phases, phase)) return false;
  }
  if (!m.dtypes.empty()) {
    std::vector<std::string> dtypes = IssueDtypes(issue);
    if (dtypes.empty() && !model.dtype.empty()) dtypes.push_back(Lower(model.dtype));
    bool any = false;
    for (const std::string& d : dtypes) any = any || Contains(m.dtypes, d);
    if (!any) return false;
  }
  if (!m.op_types.empty() && !Contains(m.op_types, Lower(issue.op_type))) return false;
  if (m.head_dim_multiple_of > 0 && (model.head_dim <= 0 || model.head_dim % m.head_dim_multiple_of != 0))
    return false;
  if (m.head_dim_not_multiple_of > 0 && (model.head_dim <= 0 || model.head_dim % m.head_dim_not_multiple_of == 0))
    return false;
  for (const auto& [name, bound] : m.metrics_at_most)
    for (const Metric& metric : issue.evidence.metrics)
      if (metric.name == name && !std::isnan(metric.value) && metric.value > bound) return false;
  return true;
}

double MetricNs(const Issue& issue, std::string_view name, bool* found) {
  for (const Metric& m : issue.evidence.metrics) {
    if (m.name != name || std::isnan(m.value)) continue;
    *found = true;
    if (m.unit == "ns") return m.value;
    if (m.unit == "us") return m.value * 1e3;
    if (m.unit == "ms") return m.value * 1e6;
    if (m.unit == "s") return m.value * 1e9;
    *found = false;  // not a time
  }
  return 0;
}

// Saving of one action on one issue and how it was computed.
TimeNs ActionSaving(const GainModel& g, const Issue& issue, std::string* how, bool* estimated) {
  *estimated = true;
  switch (g.basis) {
    case GainBasis::kIssueSaving: {
      const TimeNs s = TimeNs(std::llround(double(issue.saved_ns) * g.fraction));
      *how = g.fraction == 1.0 ? fmt::format("issue saving {} ({})", Us(issue.saved_ns), SavingMethodName(issue.method))
                               : fmt::format("{:.2f} x issue saving {}", g.fraction, Us(issue.saved_ns));
      if (issue.method == SavingMethod::kNone) *estimated = false;
      return s;
    }
    case GainBasis::kAffectedFraction: {
      *how = fmt::format("{:.2f} x affected {}", g.fraction, Us(issue.affected_ns));
      return TimeNs(std::llround(double(issue.affected_ns) * g.fraction));
    }
    case GainBasis::kMeasuredGap: {
      bool found = false;
      const double v = MetricNs(issue, g.metric, &found);
      if (!found) {
        *estimated = false;
        *how = "metric " + g.metric + " not measured";
        return 0;
      }
      *how = fmt::format("{:.2f} x measured {} {}", g.fraction, g.metric, Us(TimeNs(v)));
      return TimeNs(std::llround(v * g.fraction));
    }
    case GainBasis::kNone:
      *estimated = false;
      *how = "not estimated";
      return 0;
  }
  return 0;
}

IssueRef MakeRef(const Issue& issue, size_t index) {
  IssueRef r;
  r.type = issue.type;
  r.severity = issue.severity;
  r.op_name = issue.op_name;
  r.op_type = issue.op_type;
  r.phase = issue.phase;
  r.detail = issue.detail;
  r.affected_ns = issue.affected_ns;
  r.saved_ns = issue.saved_ns;
  r.saving_formula = issue.saving_formula;
  r.evidence = issue.evidence;
  r.index = index;
  return r;
}

std::string Value(int64_t v, std::string_view name) {
  return v > 0 ? std::to_string(v) : "<" + std::string(name) + ">";
}

}  // namespace

double SpeedupFor(TimeNs step_time_ns, TimeNs saved_ns) {
  if (step_time_ns <= 0 || saved_ns <= 0) return 1.0;
  const double t = double(step_time_ns);
  const double saved = std::min(double(saved_ns), kMaxSavedShare * t);
  return t / (t - saved);
}

std::string FillPlaceholders(std::string_view text, const ModelConfig& m, const IssueRef* issue) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') { out += text[i]; continue; }
    const size_t end = text.find('}', i);
    if (end == std::string_view::npos) { out += text.substr(i); break; }
    const std::string_view key = text.substr(i + 1, end - i - 1);
    std::string v;
    bool known = true;
    if (key == "num_heads") v = Value(m.num_heads, key);
    else if (key == "num_kv_heads") v = Value(m.num_kv_heads > 0 ? m.num_kv_heads : m.num_heads, key);
    else if (key == "head_dim") v = Value(m.head_dim, key);
    else if (key == "hidden") v = Value(m.hidden, key);
    else if (key == "layers") v = Value(m.num_layers, key);
    else if (key == "max_seq") v = Value(m.max_seq, key);
    else if (key == "dtype") v = m.dtype.empty() ? "<dtype>" : m.dtype;
    else if (key == "arch") v = m.arch.empty() ? "<arch>" : m.arch;
    else if (key == "op_name") v = issue && !issue->op_name.empty() ? issue->op_name : "<op>";
    else if (key == "op_type") v = issue && !issue->op_type.empty() ? issue->op_type : "<op>";
    else if (key == "tune_ops_file") v = "aoe_tune_ops.cfg";
    else known = false;
    if (!known) { out += text[i]; continue; }  // not a placeholder (code braces)
    out += v;
    i = end;
  }
  return out;
}

bool ActionApplies(const RuleAction& action, const Issue& issue, const ModelConfig& model, Workload workload) {
  return Matches(action.when, issue, model, workload);
}

const Rule* SelectRule(const RuleLibrary& library, const Issue& issue, const ModelConfig& model, Backend backend,
                       Workload workload) {
  const Rule* best = nullptr;
  for (const Rule* r : library.RulesFor(issue.type, backend)) {
    if (!Matches(r->match, issue, model, workload)) continue;
    bool any_action = false;
    for (const RuleAction& a : r->actions) any_action = any_action || ActionApplies(a, issue, model, workload);
    if (!any_action) continue;
    if (!best || r->match.Specificity() > best->match.Specificity() ||
        (r->match.Specificity() == best->match.Specificity() && r->order < best->order))
      best = r;
  }
  return best;
}

StatusOr<std::vector<Recommendation>> GenerateRecommendations(const DiagnosticReport& report,
                                                              const ModelConfig& model, Backend backend,
                                                              const RuleLibrary& library) {
  const TimeNs T = report.step_time_ns;
  // Group issues by selected rule, in report order.
  std::vector<const Rule*> order;
  std::map<const Rule*, std::vector<size_t>> groups;
  for (size_t i = 0; i < report.issues.size(); ++i) {
    const Rule* rule = SelectRule(library, report.issues[i], model, backend, report.workload);
    if (!rule) continue;
    if (groups[rule].empty()) order.push_back(rule);
    groups[rule].push_back(i);
  }
  std::vector<Recommendation> recs;
  for (const Rule* rule : order) {
    Recommendation rec;
    rec.hotspot_type = rule->issue_type;
    rec.rule_id = rule->id;
    rec.sources = rule->sources;
    for (size_t i : groups[rule]) {
      const Issue& issue = report.issues[i];
      rec.issues.push_back(MakeRef(issue, i));
      rec.severity = std::max(rec.severity, issue.severity);
    }
    const IssueRef* first = &rec.issues.front();
    rec.description = FillPlaceholders(rule->title, model, first);
    for (const RuleAction& a : rule->actions) {
      // Offered when its precondition holds for at least one of the issues.
      bool applies = false;
      for (size_t i : groups[rule]) applies = applies || ActionApplies(a, report.issues[i], model, report.workload);
      if (!applies) continue;
      ActionAdvice adv;
      adv.id = a.id;
      adv.kind = a.kind;
      adv.description = FillPlaceholders(a.description, model, first);
      adv.action = FillPlaceholders(a.action, model, first);
      adv.prerequisite = a.prerequisite;
      adv.artifact = a.artifact;
      adv.gain_source = a.gain.source;
      bool any_estimate = false;
      std::string parts;
      size_t summed = 0;
      for (size_t i : groups[rule]) {
        if (!ActionApplies(a, report.issues[i], model, report.workload)) continue;
        ++summed;
        std::string how;
        bool estimated = false;
        adv.saved_ns += ActionSaving(a.gain, report.issues[i], &how, &estimated);
        any_estimate = any_estimate || estimated;
        parts += (parts.empty() ? "" : " + ") + how;
      }
      if (T > 0) adv.saved_ns = std::min<TimeNs>(adv.saved_ns, TimeNs(kMaxSavedShare * double(T)));
      adv.estimated = any_estimate && adv.saved_ns > 0;
      adv.estimated_speedup = SpeedupFor(T, adv.saved_ns);
      adv.gain_formula = summed > 1 ? "sum of " + parts + " = " + Us(adv.saved_ns) : parts;
      rec.actions.push_back(std::move(adv));
    }
    const ActionAdvice& preferred = rec.actions.front();
    rec.action = preferred.action;
    rec.prerequisite = preferred.prerequisite;
    rec.saved_ns = preferred.saved_ns;
    rec.estimated_speedup = preferred.estimated_speedup;
    rec.speedup_formula =
        T > 0 ? fmt::format("T / (T - saved) = {:.1f} / ({:.1f} - {:.1f}) us = x{:.3f}", double(T) / 1e3,
                            double(T) / 1e3, double(rec.saved_ns) / 1e3, rec.estimated_speedup)
              : "no step time basis: speedup not computed";
    recs.push_back(std::move(rec));
  }
  std::stable_sort(recs.begin(), recs.end(), [](const Recommendation& a, const Recommendation& b) {
    if (a.saved_ns != b.saved_ns) return a.saved_ns > b.saved_ns;
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.rule_id < b.rule_id;
  });
  for (size_t i = 0; i < recs.size(); ++i) recs[i].rank = int(i + 1);
  return recs;
}

StatusOr<AdviceReport> Advise(const DiagnosticReport& report, const ModelConfig& model, const AdviseOptions& options) {
  PYPTO_ASSIGN_OR_RETURN(const RuleLibrary* library, BuiltinRuleLibrary());
  AdviceReport advice;
  advice.source_path = report.source_path;
  advice.hardware_id = report.hardware_id;
  advice.hardware_name = report.hardware_name;
  advice.model = model;
  advice.step_time_ns = report.step_time_ns;
  advice.step_basis = report.step_basis;
  advice.workload = report.workload;
  advice.workload_reason = report.workload_reason;
  if (!options.backend.empty()) {
    if (!BackendFromName(options.backend, &advice.backend))
      return InvalidArgumentError("unknown backend \"" + options.backend + "\" (ascend, cuda, rocm, cpu)");
    advice.backend_reason = "given (--backend " + options.backend + ")";
  } else {
    advice.backend = BackendOfReport(report);
    advice.backend_reason = report.hardware_id.empty() ? "profile format " + report.format
                                                       : "hardware " + report.hardware_id;
  }
  PYPTO_ASSIGN_OR_RETURN(advice.recommendations,
                         GenerateRecommendations(report, model, advice.backend, *library));
  std::vector<Issue> covered;
  for (size_t i = 0; i < report.issues.size(); ++i) {
    const Issue& issue = report.issues[i];
    if (SelectRule(*library, issue, model, advice.backend, report.workload)) {
      covered.push_back(issue);
    } else {
      const bool other_workload = report.workload != Workload::kUnknown &&
                                  SelectRule(*library, issue, model, advice.backend, Workload::kUnknown) != nullptr;
      advice.unmatched.push_back(std::string(IssueTypeName(issue.type)) +
                                 (issue.op_name.empty() ? "" : " (" + issue.op_name + ")") +
                                 (other_workload ? std::string(": no advice for a ") + WorkloadName(report.workload) +
                                                       " profile (its remedies need the precondition they name)"
                                                 : std::string(": no rule for ") + BackendName(advice.backend)));
    }
  }
  CombinedSaving combined = CombineSavings(covered, report.step_time_ns);
  advice.combined_saved_ns = combined.saved_ns;
  advice.combined_speedup = combined.speedup;
  advice.notes = report.notes;
  if (model.num_heads <= 0 || model.head_dim <= 0)
    advice.notes.push_back("model config: heads / head_dim unknown (no attention shapes and none given): code "
                           "snippets show <placeholders>");
  return advice;
}

}  // namespace pypto::advisor
