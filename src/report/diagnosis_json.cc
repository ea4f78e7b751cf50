// JSON rendering of the diagnosis, schema "pypto.diagnose/1".
#include "report/diagnosis_report.h"
#include "io/json_writer.h"

namespace pypto::report {

void WriteDiagnosis(io::ValueSink& w, const DiagnosticReport& r) {
  w.BeginObject();
  w.KeyString("schema", kDiagnoseJsonSchema);
  w.KeyString("source_path", r.source_path);
  w.KeyString("format", r.format);
  w.Key("hardware");
  w.BeginObject();
  w.KeyString("id", r.hardware_id);
  w.KeyString("name", r.hardware_name);
  w.KeyString("selection", r.hardware_selection);
  w.KeyDouble("peak_flops", r.peak_flops);
  w.KeyDouble("memory_bandwidth_bytes_per_s", r.memory_bandwidth);
  w.EndObject();
  w.Key("steps");
  w.BeginObject();
  w.KeyString("basis", r.step_basis);
  w.Key("numbers");
  w.BeginArray();
  for (int64_t n : r.step_numbers) w.Int(n);
  w.EndArray();
  w.KeyMicrosFromNs("step_time_us", r.step_time_ns);
  w.KeyMicrosFromNs("device_busy_us", r.device_busy_ns);
  w.EndObject();
  w.Key("workload");
  w.BeginObject();
  w.KeyString("kind", WorkloadName(r.workload));
  w.KeyString("reason", r.workload_reason);
  w.EndObject();
  w.Key("structure");
  w.BeginObject();
  const StructureSummary& st = r.structure;
  w.KeyBool("available", st.available);
  w.KeyInt("layers", st.layers);
  w.KeyInt("layer_period_ops", st.layer_period);
  w.KeyUint("prefill_steps", st.prefill_steps);
  w.KeyUint("decode_steps", st.decode_steps);
  w.KeyUint("unknown_steps", st.unknown_steps);
  w.Key("step_phases");
  w.BeginArray();
  for (const std::string& ph : st.step_phases) w.String(ph);
  w.EndArray();
  w.Key("phase_rules");
  w.BeginObject();
  for (const auto& [rule, n] : st.phase_rules) w.KeyUint(rule, n);
  w.EndObject();
  auto latency = [&](const char* key, const LatencyStats& l) {
    w.Key(key);
    w.BeginObject();
    w.KeyUint("count", l.count);
    w.KeyDouble("mean_ms", l.mean_ms);
    w.KeyDouble("p50_ms", l.p50_ms);
    w.KeyDouble("p90_ms", l.p90_ms);
    w.KeyDouble("p99_ms", l.p99_ms);
    w.KeyDouble("min_ms", l.min_ms);
    w.KeyDouble("max_ms", l.max_ms);
    w.EndObject();
  };
  latency("per_token_latency", st.decode_latency);
  latency("prefill_latency", st.prefill_latency);
  w.KeyString("model_arch", st.model_arch);
  w.EndObject();
  w.Key("detectors");
  w.BeginArray();
  for (const std::string& d : r.detectors_run) w.String(d);
  w.EndArray();
  w.Key("summary");
  w.BeginObject();
  w.KeyUint("issues", r.issues.size());
  uint64_t by[3] = {0, 0, 0};
  for (const Issue& i : r.issues) ++by[static_cast<int>(i.severity)];
  w.KeyUint("high", by[2]);
  w.KeyUint("medium", by[1]);
  w.KeyUint("low", by[0]);
  w.KeyMicrosFromNs("estimated_saved_us", r.estimated_saved_ns);
  w.KeyMicrosFromNs("claimed_saved_us", r.claimed_saved_ns);
  w.KeyDouble("estimated_combined_speedup", r.estimated_combined_speedup);
  w.EndObject();
  w.Key("issues");
  w.BeginArray();
  for (const Issue& i : r.issues) {
    w.BeginObject();
    w.KeyString("issue_type", IssueTypeName(i.type));
    w.KeyString("severity", SeverityName(i.severity));
    w.KeyString("op_name", i.op_name);
    w.KeyString("op_type", i.op_type);
    w.KeyString("phase", i.phase);
    w.KeyDouble("compute_ratio", i.compute_ratio);
    w.KeyDouble("memory_ratio", i.memory_ratio);
    w.KeyDouble("ai_core_time_ratio", i.ai_core_time_ratio);
    w.KeyDouble("hbm_access_time_ratio", i.hbm_access_time_ratio);
    w.KeyString("time_ratio_source", i.time_ratio_source);
    w.KeyString("profile_op_name", i.profile_op_name);
    w.KeyString("detail", i.detail);
    w.KeyMicrosFromNs("affected_us", i.affected_ns);
    w.KeyDouble("affected_share", i.affected_share);
    w.KeyMicrosFromNs("estimated_saved_us", i.saved_ns);
    w.KeyString("saving_method", SavingMethodName(i.method));
    w.KeyString("saving_formula", i.saving_formula);
    w.KeyUint("saving_rows", i.savings.size());
    w.Key("evidence");
    w.BeginObject();
    w.KeyUint("count", i.evidence.count);
    w.KeyMicrosFromNs("total_us", i.evidence.total_ns);
    w.KeyMicrosFromNs("mean_us", i.evidence.mean_ns);
    w.Key("device_tasks");
    w.BeginArray();
    for (uint32_t t : i.evidence.tasks) w.Uint(t);
    w.EndArray();
    w.Key("host_ops");
    w.BeginArray();
    for (uint32_t h : i.evidence.host_ops) w.Uint(h);
    w.EndArray();
    w.Key("shapes");
    w.BeginArray();
    for (const std::string& s : i.evidence.shapes) w.String(s);
    w.EndArray();
    w.Key("shape_ranges");
    w.BeginArray();
    for (const ShapeGroup& g : i.evidence.shape_groups) {
      w.BeginObject();
      w.KeyString("shape", g.Text());
      w.KeyUint("rows", g.count);
      w.EndObject();
    }
    w.EndArray();
    w.KeyUint("other_shape_rows", i.evidence.other_shapes);
    w.Key("metrics");
    w.BeginArray();
    for (const Metric& m : i.evidence.metrics) {
      w.BeginObject();
      w.KeyString("name", m.name);
      w.KeyDouble("value", m.value);
      w.KeyString("unit", m.unit);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes");
  w.BeginArray();
  for (const std::string& n : r.notes) w.String(n);
  w.EndArray();
  w.EndObject();
}

std::string RenderDiagnosisJson(const DiagnosticReport& r) {
  std::string out;
  io::JsonWriter w(&out);
  w.set_indent(2);
  WriteDiagnosis(w, r);
  out += '\n';
  return out;
}

}  // namespace pypto::report
