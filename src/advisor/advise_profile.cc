#include "advisor/advise_profile.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <simdjson.h>

#include "advisor/optimizers.h"
#include "analysis/op_class.h"
#include "analysis/structure.h"
#include "io/file.h"

namespace pypto::advisor {

StatusOr<AdviceReport> AdviseFromDiagnosis(const OperatorCallGraph& graph, const DiagnosticReport& report,
                                           const OpClassification& classes, const ModelStructure* structure,
                                           const AdviseProfileOptions& options) {
  if (!options.output_dir.empty()) PYPTO_RETURN_IF_ERROR(EnsureDirectory(options.output_dir));
  ModelConfig model = options.user_model;
  model.FillFrom(InferModelConfig(graph, classes, structure));
  PYPTO_ASSIGN_OR_RETURN(AdviceReport advice, Advise(report, model, options.advise));
  if (!options.output_dir.empty()) {
    ArtifactInputs inputs;
    inputs.report = &report;
    inputs.graph = &graph;
    inputs.classes = &classes;
    PYPTO_RETURN_IF_ERROR(WriteArtifacts(inputs, options.output_dir, options.force, &advice));
  }
  return advice;
}

DiagnoseOptions AdviseDiagnoseOptions(const AdviseProfileOptions& options) {
  DiagnoseOptions diagnose = options.diagnose;
  if (diagnose.model_arch.empty()) diagnose.model_arch = options.user_model.arch;
  return diagnose;
}

StatusOr<AdviseProfileResult> AdviseProfile(const OperatorCallGraph& graph, const AdviseProfileOptions& options) {
  if (!options.output_dir.empty()) PYPTO_RETURN_IF_ERROR(EnsureDirectory(options.output_dir));
  const Profile& profile = graph.profile();
  const DiagnoseOptions diagnose = AdviseDiagnoseOptions(options);
  PYPTO_ASSIGN_OR_RETURN(DiagnosticReport report, DiagnoseGraph(graph, diagnose));
  if (report.source_path.empty()) {
    if (auto it = profile.metadata.find("source_path"); it != profile.metadata.end()) report.source_path = it->second;
  }
  const OpClassification classes = ClassifyProfile(profile, graph);
  StructureOptions structure_options;
  structure_options.model_arch = diagnose.model_arch;
  StatusOr<ModelStructure> structure = AnalyzeStructure(profile, graph, classes, structure_options);
  PYPTO_ASSIGN_OR_RETURN(AdviceReport advice,
                         AdviseFromDiagnosis(graph, report, classes, structure.ok() ? &*structure : nullptr, options));
  return AdviseProfileResult{std::move(report), std::move(advice)};
}

StatusOr<ModelConfig> ParseHfConfigJson(std::string_view json, std::string_view origin) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(json.data(), json.size()).get(root))
    return InvalidArgumentError(std::string(origin) + ": cannot read JSON: " + simdjson::error_message(err));
  simdjson::dom::object o;
  if (root.get_object().get(o)) return InvalidArgumentError(std::string(origin) + ": not a JSON object");
  ModelConfig m;
  auto num = [&](const char* key) -> int64_t {
    int64_t v = 0;
    if (o[key].get_int64().get(v)) return 0;
    return v;
  };
  std::string_view s;
  if (!o["model_type"].get_string().get(s)) m.arch = std::string(s);
  m.num_layers = int32_t(num("num_hidden_layers"));
  m.num_heads = int32_t(num("num_attention_heads"));
  m.num_kv_heads = int32_t(num("num_key_value_heads"));
  m.hidden = int32_t(num("hidden_size"));
  m.head_dim = int32_t(num("head_dim"));
  m.max_seq = num("max_position_embeddings");
  if (!o["torch_dtype"].get_string().get(s) || !o["dtype"].get_string().get(s)) {
    const std::string d(s);
    m.dtype = d == "bfloat16" ? "bf16" : d == "float16" ? "fp16" : d == "float32" ? "fp32" : d;
  }
  CompleteDerivedFields(&m);
  m.source = "config " + std::string(origin);
  return m;
}

StatusOr<ModelConfig> ReadHfConfigFile(const std::string& path) {
  simdjson::padded_string text;
  if (auto err = simdjson::padded_string::load(path).get(text))
    return InvalidArgumentError(path + ": cannot read: " + simdjson::error_message(err));
  return ParseHfConfigJson(std::string_view(text.data(), text.size()), path);
}

void CompleteDerivedFields(ModelConfig* m) {
  if (m->hidden <= 0 && m->num_heads > 0 && m->head_dim > 0) m->hidden = m->num_heads * m->head_dim;
  if (m->head_dim <= 0 && m->num_heads > 0 && m->hidden > 0) m->head_dim = m->hidden / m->num_heads;
}

Status EnsureDirectory(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return InvalidArgumentError(dir + ": exists and is not a directory");
    return Status::Ok();
  }
  if (::mkdir(dir.c_str(), 0755) != 0) return IoError(dir + ": cannot create directory: " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace pypto::advisor
