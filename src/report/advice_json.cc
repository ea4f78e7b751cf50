#include "report/advice_report.h"
#include "io/json_writer.h"

namespace pypto::report {
namespace {

void WriteModel(io::ValueSink& w, const advisor::ModelConfig& m) {
  auto opt = [&](std::string_view key, int64_t v) {
    w.Key(key);
    if (v > 0) w.Int(v); else w.Null();
  };
  w.BeginObject();
  w.KeyString("arch", m.arch);
  opt("num_layers", m.num_layers);
  opt("num_heads", m.num_heads);
  opt("num_kv_heads", m.num_kv_heads);
  opt("head_dim", m.head_dim);
  opt("hidden", m.hidden);
  w.KeyString("dtype", m.dtype);
  opt("max_seq", m.max_seq);
  w.KeyString("source", m.source);
  w.EndObject();
}

void WriteStrings(io::ValueSink& w, std::string_view key, const std::vector<std::string>& list) {
  w.Key(key);
  w.BeginArray();
  for (const std::string& s : list) w.String(s);
  w.EndArray();
}

}  // namespace

void WriteAdvice(io::ValueSink& w, const advisor::AdviceReport& a) {
  w.BeginObject();
  w.KeyString("schema", kAdviseJsonSchema);
  w.KeyString("source_path", a.source_path);
  w.KeyString("backend", advisor::BackendName(a.backend));
  w.KeyString("backend_reason", a.backend_reason);
  w.KeyString("hardware", a.hardware_id);
  w.KeyString("hardware_name", a.hardware_name);
  w.Key("model");
  WriteModel(w, a.model);
  w.KeyString("step_basis", a.step_basis);
  w.KeyString("workload", WorkloadName(a.workload));
  w.KeyString("workload_reason", a.workload_reason);
  w.KeyMicrosFromNs("step_time_us", a.step_time_ns);
  w.KeyMicrosFromNs("combined_saved_us", a.combined_saved_ns);
  w.KeyDouble("combined_speedup", a.combined_speedup);
  w.Key("recommendations");
  w.BeginArray();
  for (const advisor::Recommendation& r : a.recommendations) {
    w.BeginObject();
    w.KeyInt("rank", r.rank);
    w.KeyString("hotspot_type", IssueTypeName(r.hotspot_type));
    w.KeyString("rule_id", r.rule_id);
    w.KeyString("severity", SeverityName(r.severity));
    w.KeyString("description", r.description);
    w.KeyString("action", r.action);
    w.KeyString("prerequisite", r.prerequisite);
    w.KeyMicrosFromNs("estimated_saved_us", r.saved_ns);
    w.KeyDouble("estimated_speedup", r.estimated_speedup);
    w.KeyString("speedup_formula", r.speedup_formula);
    w.Key("actions");
    w.BeginArray();
    for (const advisor::ActionAdvice& x : r.actions) {
      w.BeginObject();
      w.KeyString("id", x.id);
      w.KeyString("kind", advisor::ActionKindName(x.kind));
      w.KeyString("description", x.description);
      w.KeyString("action", x.action);
      w.KeyString("prerequisite", x.prerequisite);
      w.KeyString("artifact", x.artifact);
      w.KeyBool("estimated", x.estimated);
      w.KeyMicrosFromNs("estimated_saved_us", x.saved_ns);
      w.KeyDouble("estimated_speedup", x.estimated_speedup);
      w.KeyString("gain_formula", x.gain_formula);
      w.KeyString("gain_source", x.gain_source);
      w.EndObject();
    }
    w.EndArray();
    w.Key("evidence");
    w.BeginArray();
    for (const advisor::IssueRef& i : r.issues) {
      w.BeginObject();
      w.KeyInt("issue_index", int64_t(i.index));
      w.KeyString("issue_type", IssueTypeName(i.type));
      w.KeyString("severity", SeverityName(i.severity));
      w.KeyString("op_name", i.op_name);
      w.KeyString("op_type", i.op_type);
      w.KeyString("phase", i.phase);
      w.KeyString("detail", i.detail);
      w.KeyMicrosFromNs("affected_us", i.affected_ns);
      w.KeyMicrosFromNs("issue_saved_us", i.saved_ns);
      w.KeyString("saving_formula", i.saving_formula);
      w.KeyUint("count", i.evidence.count);
      WriteStrings(w, "shapes", i.evidence.shapes);
      w.Key("metrics");
      w.BeginObject();
      for (const Metric& m : i.evidence.metrics) w.KeyDouble(m.name, m.value);
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
    WriteStrings(w, "sources", r.sources);
    WriteStrings(w, "artifacts", r.artifacts);
    w.EndObject();
  }
  w.EndArray();
  WriteStrings(w, "unmatched_issues", a.unmatched);
  WriteStrings(w, "artifacts", a.artifacts);
  WriteStrings(w, "notes", a.notes);
  w.EndObject();
}

std::string RenderAdviceJson(const advisor::AdviceReport& a) {
  std::string out;
  io::JsonWriter w(&out);
  w.set_indent(2);
  WriteAdvice(w, a);
  out += '\n';
  return out;
}

}  // namespace pypto::report
