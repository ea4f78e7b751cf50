// KVCacheLayoutOptimizer, the norm fusion plan and WriteArtifacts (optimizers.h).
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "advisor/optimizers.h"
#include "hw/embedded_data.h"
#include "report/json_writer.h"

namespace pypto::advisor {
namespace {

constexpr char kKvTemplate[] = "advisor/templates/kv_cache_layout_patch.py.tmpl";

// A Python string literal (repr-like, double quotes).
std::string PyString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"') { out += '\\'; out += c; }
    else if (c == '\n') out += "\\n";
    else if (u < 0x20) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out + "\"";
}
std::string PyInt(int64_t v) { return v > 0 ? std::to_string(v) : "None"; }
std::string PyStrOrNone(const std::string& s) { return s.empty() ? "None" : PyString(s); }
std::string Text(int64_t v) { return v > 0 ? std::to_string(v) : "unknown"; }
// Docstring-safe text: no triple quotes or backslashes from profile strings.
std::string DocText(std::string_view s) {
  std::string out;
  for (char c : s) out += (c == '"' || c == '\\' || c == '\n') ? '\'' : c;
  return out.empty() ? "unknown" : out;
}

void ReplaceAll(std::string* text, std::string_view from, std::string_view to) {
  size_t at = 0;
  while ((at = text->find(from, at)) != std::string::npos) {
    text->replace(at, from.size(), to);
    at += to.size();
  }
}

}  // namespace

StatusOr<LayoutPatch> KVCacheLayoutOptimizer::GenerateLayoutTransformPatch() const {
  const std::string_view tmpl = EmbeddedData(kKvTemplate);
  if (tmpl.empty()) return NotFoundError(std::string("embedded template ") + kKvTemplate + " missing");
  std::string text(tmpl);
  const ModelConfig& m = model_;
  // *_PY first: their names contain the plain ones.
  ReplaceAll(&text, "@@ARCH_PY@@", PyStrOrNone(m.arch));
  ReplaceAll(&text, "@@NUM_LAYERS_PY@@", PyInt(m.num_layers));
  ReplaceAll(&text, "@@NUM_HEADS_PY@@", PyInt(m.num_heads));
  ReplaceAll(&text, "@@NUM_KV_HEADS_PY@@", PyInt(m.num_kv_heads));
  ReplaceAll(&text, "@@HEAD_DIM_PY@@", PyInt(m.head_dim));
  ReplaceAll(&text, "@@HIDDEN_PY@@", PyInt(m.hidden));
  ReplaceAll(&text, "@@MAX_SEQ_PY@@", PyInt(m.max_seq));
  ReplaceAll(&text, "@@DTYPE_PY@@", PyStrOrNone(m.dtype));
  ReplaceAll(&text, "@@ARCH@@", DocText(m.arch));
  ReplaceAll(&text, "@@NUM_LAYERS@@", Text(m.num_layers));
  ReplaceAll(&text, "@@NUM_HEADS@@", Text(m.num_heads));
  ReplaceAll(&text, "@@NUM_KV_HEADS@@", Text(m.num_kv_heads));
  ReplaceAll(&text, "@@HEAD_DIM@@", Text(m.head_dim));
  ReplaceAll(&text, "@@MAX_SEQ@@", Text(m.max_seq));
  ReplaceAll(&text, "@@DTYPE@@", DocText(m.dtype));
  ReplaceAll(&text, "@@SOURCE@@", DocText(m.source));
  if (text.find("@@") != std::string::npos) return InternalError("KV patch template: an unfilled @@placeholder@@ remains");
  return LayoutPatch{std::move(text)};
}

FusionPlan GenerateNormFusionPlan(const DiagnosticReport& report, const ModelConfig& model, Backend backend) {
  struct Chain {
    std::string kind;          // rms_norm / layer_norm / add_layer_norm
    std::string issue_type;
    std::string op_name;
    std::string detail;
    uint64_t occurrences = 0;
    TimeNs affected_ns = 0;
    TimeNs saved_ns = 0;
  };
  std::vector<Chain> chains;
  for (const Issue& issue : report.issues) {
    Chain c;
    if (issue.type == IssueType::kNormLaunchOverhead) {
      std::string lower = issue.op_name;
      for (char& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      c.kind = lower.find("layer") != std::string::npos ? "layer_norm" : "rms_norm";
    } else if (issue.type == IssueType::kFusibleSequence &&
               (issue.op_type == "rms_norm" || issue.op_type == "add_layer_norm")) {
      c.kind = issue.op_type;
    } else {
      continue;
    }
    c.issue_type = IssueTypeName(issue.type);
    c.op_name = issue.op_name;
    c.detail = issue.detail;
    c.occurrences = issue.evidence.count;
    c.affected_ns = issue.affected_ns;
    c.saved_ns = issue.saved_ns;
    chains.push_back(std::move(c));
  }
  const bool llama_like = model.arch.empty() || model.arch == "llama" || model.arch == "qwen" ||
                          model.arch == "qwen2" || model.arch == "mistral";
  std::string out;
  report::JsonWriter w(&out);
  w.set_indent(2);
  w.BeginObject();
  w.KeyString("schema", kFusionPlanSchema);
  w.KeyString("backend", BackendName(backend));
  w.KeyString("model_arch", model.arch);
  w.KeyString("applied_by", "pypto.fusion.register_layernorm_fusion(model, fuse_with_prev_matmul, fuse_with_next_dropout)");
  w.Key("targets");
  w.BeginArray();
  std::set<std::string> kinds;
  for (const Chain& c : chains) kinds.insert(c.kind);
  for (const std::string& kind : kinds) {
    const bool rms = kind == "rms_norm";
    w.BeginObject();
    w.KeyString("kind", kind);
    // Which modules implement the chain: class-name patterns (fnmatch) and, for
    // Llama-style decoders, the attribute paths of transformers' Llama/Qwen/Mistral.
    w.Key("module_class_patterns");
    w.BeginArray();
    if (rms) { w.String("*RMSNorm"); w.String("*RmsNorm"); }
    else { w.String("LayerNorm"); w.String("*LayerNorm"); }
    w.EndArray();
    w.Key("module_name_patterns");
    w.BeginArray();
    if (rms && llama_like) {
      w.String("*.input_layernorm");
      w.String("*.post_attention_layernorm");
      w.String("*.norm");
    }
    w.EndArray();
    w.KeyString("weight_attribute", "weight");
    w.Key("epsilon_attributes");
    w.BeginArray();
    if (rms) { w.String("variance_epsilon"); w.String("eps"); }
    else { w.String("eps"); }
    w.EndArray();
    // Fused op per backend (diagnosis-rules §5, §1.3; PyTorch).
    w.Key("fused_op");
    w.BeginObject();
    if (rms) {
      w.KeyString("ascend", "torch_npu.npu_rms_norm(x, weight, epsilon=eps)[0]");
      w.KeyString("ascend_with_residual", "torch_npu.npu_add_rms_norm(x, residual, weight, epsilon=eps)");
      w.KeyString("cuda", "torch.compile(norm_module) (Inductor: one fused kernel); torch.nn.RMSNorm (torch >= 2.4)");
      w.KeyString("rocm", "torch.compile(norm_module) (Inductor: one fused kernel); torch.nn.RMSNorm (torch >= 2.4)");
      w.KeyString("cpu", "torch.compile(norm_module); torch.nn.RMSNorm (torch >= 2.4)");
    } else {
      w.KeyString("ascend", "torch.nn.functional.layer_norm (LayerNorm kernel)");
      w.KeyString("ascend_with_residual", "torch_npu.npu_add_layer_norm(x1, x2, weight, bias, epsilon=eps)");
      w.KeyString("cuda", "torch.nn.functional.layer_norm (one kernel); torch.compile to fuse the residual add");
      w.KeyString("rocm", "torch.nn.functional.layer_norm (one kernel); torch.compile to fuse the residual add");
      w.KeyString("cpu", "torch.nn.functional.layer_norm");
    }
    w.EndObject();
    w.KeyString("fused_op_for_backend", rms ? (backend == Backend::kAscend ? "torch_npu.npu_rms_norm" : "torch.compile")
                                            : (backend == Backend::kAscend ? "torch_npu.npu_add_layer_norm"
                                                                           : "torch.nn.functional.layer_norm"));
    w.KeyString("prerequisite", backend == Backend::kAscend
                                    ? (rms ? "torch_npu >= 2.1, CANN >= 7.0.0 (npu_rms_norm); CANN >= 8.0 (npu_add_rms_norm)"
                                           : "torch_npu >= 2.1, CANN >= 8.0.RC1 (npu_add_layer_norm)")
                                    : "torch >= 2.0");
    w.KeyBool("fuse_residual_add", true);
    w.Key("evidence");
    w.BeginArray();
    TimeNs saved = 0;
    for (const Chain& c : chains) {
      if (c.kind != kind) continue;
      saved += c.saved_ns;
      w.BeginObject();
      w.KeyString("issue_type", c.issue_type);
      w.KeyString("op", c.op_name);
      w.KeyString("detail", c.detail);
      w.KeyUint("occurrences", c.occurrences);
      w.KeyMicrosFromNs("affected_us", c.affected_ns);
      w.KeyMicrosFromNs("estimated_saved_us", c.saved_ns);
      w.EndObject();
    }
    w.EndArray();
    w.KeyMicrosFromNs("estimated_saved_us", saved);
    w.KeyDouble("estimated_speedup", SpeedupFor(report.step_time_ns, saved));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out += '\n';
  return FusionPlan{std::move(out)};
}

Status WriteArtifacts(const ArtifactInputs& inputs, const std::string& dir, bool force, AdviceReport* advice) {
  if (!inputs.report) return InvalidArgumentError("WriteArtifacts: no diagnostic report");
  std::set<std::string> kinds;
  for (const Recommendation& rec : advice->recommendations)
    for (const ActionAdvice& a : rec.actions)
      if (!a.artifact.empty()) kinds.insert(a.artifact);
  std::map<std::string, std::vector<std::string>> written;
  const std::string base = dir.empty() ? std::string(".") : dir;
  if (!force) {
    // Refuse before writing anything: no half-written set of artifacts.
    std::vector<std::string> targets;
    if (kinds.count("tiling_config")) {
      for (const char* f : {"aoe_tune_ops.cfg", "aoe_tuning_ops.json", "aoe_tune.sh", "padded_gemm_shapes.json"})
        targets.push_back(base + "/" + f);
    }
    if (kinds.count("kv_cache_patch")) targets.push_back(base + "/kv_cache_layout_patch.py");
    if (kinds.count("norm_fusion_plan")) targets.push_back(base + "/norm_fusion_plan.json");
    for (const std::string& t : targets) {
      struct stat st;
      if (::lstat(t.c_str(), &st) == 0) return InvalidArgumentError(t + ": exists (pass --force to overwrite)");
    }
  }
  if (kinds.count("tiling_config")) {
    if (!inputs.graph || !inputs.classes) {
      advice->notes.push_back("tiling config not written: no call graph given");
    } else {
      TuningConfig config = TilingOptimizer(*inputs.graph, *inputs.classes)
                                .GenerateTuningConfig(*inputs.report, advice->backend);
      if (!config.ops.empty()) {
        PYPTO_ASSIGN_OR_RETURN(written["tiling_config"], config.Save(base, force));
      }
    }
  }
  if (kinds.count("kv_cache_patch")) {
    PYPTO_ASSIGN_OR_RETURN(LayoutPatch patch, KVCacheLayoutOptimizer(advice->model).GenerateLayoutTransformPatch());
    const std::string path = base + "/kv_cache_layout_patch.py";
    PYPTO_RETURN_IF_ERROR(patch.Save(path, force));
    written["kv_cache_patch"].push_back(path);
  }
  if (kinds.count("norm_fusion_plan")) {
    FusionPlan plan = GenerateNormFusionPlan(*inputs.report, advice->model, advice->backend);
    const std::string path = base + "/norm_fusion_plan.json";
    PYPTO_RETURN_IF_ERROR(plan.Save(path, force));
    written["norm_fusion_plan"].push_back(path);
  }
  for (Recommendation& rec : advice->recommendations) {
    std::set<std::string> done;
    for (const ActionAdvice& a : rec.actions) {
      if (a.artifact.empty() || !done.insert(a.artifact).second) continue;
      for (const std::string& p : written[a.artifact]) rec.artifacts.push_back(p);
    }
  }
  for (const auto& [kind, paths] : written)
    for (const std::string& p : paths) advice->artifacts.push_back(p);
  return Status::Ok();
}

}  // namespace pypto::advisor
