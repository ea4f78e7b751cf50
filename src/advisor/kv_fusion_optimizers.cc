// KVCacheLayoutOptimizer, the norm fusion plan and WriteArtifacts (optimizers.h).

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "advisor/optimizers.h"
#include "hw/dtype.h"
#include "hw/embedded_data.h"
#include "io/json_writer.h"
#include "io/output_file.h"

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

namespace {

// Rows (token, head) drawn per layout, and the tokens and heads they stand
// for: the picture shows the pattern, the caption the real sizes.
constexpr int kDrawnTokens = 6;
constexpr int kMaxDrawnHeads = 4;

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

LayoutPicture KVCacheLayoutOptimizer::GenerateLayoutPicture(const std::optional<KvCacheCat>& cat) const {
  KvCacheCat seen;
  if (cat && (cat->bnsd() || cat->bsnd())) seen = *cat;
  const ModelConfig& m = model_;
  const bool heads_known = seen.kv_heads > 0 || m.num_kv_heads > 0 || m.num_heads > 0;
  const int kv_heads = seen.kv_heads > 0 ? int(seen.kv_heads)
                                         : (m.num_kv_heads > 0 ? m.num_kv_heads : (m.num_heads > 0 ? m.num_heads : 8));
  const int head_dim = seen.head_dim > 0 ? int(seen.head_dim) : (m.head_dim > 0 ? m.head_dim : 128);
  const int64_t seq = m.max_seq > 0 ? m.max_seq : 1024;
  // The cache dtype's element size; bf16 / fp16 (2 B), the usual cache dtypes, when unknown.
  const double known_bytes = DTypeBytes(ParseDType(m.dtype));
  const int bytes = known_bytes >= 1 ? int(known_bytes) : 2;
  const int drawn_heads = std::min(kv_heads, kMaxDrawnHeads);
  const int64_t row_bytes = int64_t(head_dim) * bytes;
  const int64_t stride_bytes = int64_t(kv_heads) * row_bytes;
  const double mib_per_head = double(seq) * double(row_bytes) / (1024.0 * 1024.0);

  const int cell_w = 22, cell_h = 26, left = 20, width = left * 2 + cell_w * kDrawnTokens * drawn_heads + 40;
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"330\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<title>KV cache layout: what one decode step of one KV head reads</title>\n",
      std::max(width, 820));
  o += fmt::format("<text x=\"{}\" y=\"20\" font-weight=\"bold\">K cache of one sequence, one layer, in address "
                   "order: the rows one KV head's attention reads are filled</text>\n", left);
  auto strip = [&](int y, bool bnsd, const std::string& title, const std::string& caption) {
    o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", left, y - 8, Escape(title));
    int k = 0;
    // Address order: BSND = token-major (token, head); BNSD = head-major (head, token).
    for (int outer = 0; outer < (bnsd ? drawn_heads : kDrawnTokens); ++outer) {
      for (int inner = 0; inner < (bnsd ? kDrawnTokens : drawn_heads); ++inner, ++k) {
        const int head = bnsd ? outer : inner, token = bnsd ? inner : outer;
        const bool read = head == 0;
        o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#333\"/>"
                         "<text x=\"{}\" y=\"{}\" font-size=\"9\" text-anchor=\"middle\">{}{}</text>\n",
                         left + k * cell_w, y, cell_w, cell_h, read ? "#d9534f" : "#eeeeee", left + k * cell_w + cell_w / 2,
                         y + cell_h / 2 + 3, "t", token);
        o += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"8\" text-anchor=\"middle\">h{}</text>\n",
                         left + k * cell_w + cell_w / 2, y + cell_h + 10, head);
      }
    }
    o += fmt::format("<text x=\"{}\" y=\"{}\">…</text>\n", left + k * cell_w + 6, y + cell_h / 2 + 4);
    o += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", left, y + cell_h + 26, Escape(caption));
  };
  if (seen.bnsd()) {
    // Already head-major: what costs is growing it by cat (a new cache each step).
    strip(70, true, "current: BNSD [batch, kv_heads, seq, head_dim], grown by torch.cat every step",
          fmt::format("each step copies all {} rows of every head into a new cache ({:.2f} MiB per layer), then "
                      "head 0 reads its rows", seq, mib_per_head * kv_heads));
    strip(180, true, "proposed: the same BNSD layout, preallocated to max_seq and written in place",
          fmt::format("each step writes one {} B row per head; head 0 reads its {} rows back to back ({:.2f} MiB)",
                      row_bytes, seq, mib_per_head));
  } else {
    strip(70, false,
          seen.bsnd() ? "current: BSND [batch, seq, kv_heads, head_dim] (token-major), as the cache's cat shows"
                            : "current: BSND [batch, seq, kv_heads, head_dim] (token-major), the layout converted "
                              "before attention",
          fmt::format("head 0 reads {} rows of {} B, {} B apart: strided, {} separate reads per step", seq, row_bytes,
                      stride_bytes, seq));
    strip(180, true, "proposed: BNSD [batch, kv_heads, seq, head_dim] (head-major)",
          fmt::format("head 0 reads its {} rows back to back: one contiguous {:.2f} MiB read per step", seq,
                      mib_per_head));
  }
  o += fmt::format("<text x=\"{}\" y=\"280\">{} KV heads x head_dim {} x {} tokens, {} B per element ({}).</text>\n",
                   left, kv_heads, head_dim, seq, bytes, m.dtype.empty() ? "dtype unknown: 2 B assumed" : m.dtype);
  o += fmt::format("<text x=\"{}\" y=\"298\">Each cell is one row of head_dim elements (t = token, h = KV head); "
                   "{} of {} heads and {} of {} tokens drawn.</text>\n",
                   left, drawn_heads, kv_heads, kDrawnTokens, seq);
  if (!heads_known || m.head_dim <= 0 || m.max_seq <= 0)
    o += fmt::format("<text x=\"{}\" y=\"318\" fill=\"#a94442\">model config incomplete: unknown sizes drawn as "
                     "8 heads, head_dim 128, 1024 tokens (pass --num-heads / --head-dim / --max-seq)</text>\n", left);
  o += "</svg>\n";
  return LayoutPicture{std::move(o)};
}

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
  io::JsonWriter w(&out);
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
    if (kinds.count("kv_cache_patch")) {
      targets.push_back(base + "/kv_cache_layout_patch.py");
      targets.push_back(base + "/kv_cache_layout.svg");
    }
    if (kinds.count("norm_fusion_plan")) targets.push_back(base + "/norm_fusion_plan.json");
    for (const std::string& t : targets) PYPTO_RETURN_IF_ERROR(io::CheckOutputPath(t, false));
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
    const std::string picture = base + "/kv_cache_layout.svg";
    PYPTO_RETURN_IF_ERROR(KVCacheLayoutOptimizer(advice->model)
                              .GenerateLayoutPicture(inputs.graph ? FindKvCacheCat(inputs.graph->profile())
                                                                  : std::nullopt)
                              .Save(picture, force));
    written["kv_cache_patch"].push_back(picture);
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
