// The whole `advise` assembly on a loaded profile: diagnose the graph, infer
// the model config the profile shows (user values win), rank the rule
// library's recommendations and, when asked, write their artifacts. The CLI
// (`pypto advise`) and Python (`TuningAdvisor`) both call AdviseProfile, so
// the two give the same recommendations.
#pragma once

#include <string>
#include <string_view>

#include "advisor/model_config.h"
#include "advisor/tuning_advisor.h"
#include "analysis/detector.h"
#include "analysis/diagnostic_report.h"
#include "analysis/op_class.h"
#include "analysis/structure.h"
#include "core/status.h"
#include "graph/call_graph.h"

namespace pypto::advisor {

struct AdviseProfileOptions {
  DiagnoseOptions diagnose;       // model_arch is taken from `user_model.arch` when empty
  ModelConfig user_model;         // what the user states; unknown fields are inferred
  AdviseOptions advise;
  std::string output_dir;         // "" = no artifacts; created when missing
  bool force = false;             // artifacts may overwrite existing files
};

struct AdviseProfileResult {
  DiagnosticReport diagnosis;
  AdviceReport advice;
};

StatusOr<AdviseProfileResult> AdviseProfile(const OperatorCallGraph& graph, const AdviseProfileOptions& options);

// The diagnosis options advice runs with: model_arch from the user's model when empty.
DiagnoseOptions AdviseDiagnoseOptions(const AdviseProfileOptions& options);
// Advice (and artifacts) from what a caller already computed (a ProfileSession):
// the diagnosis, the op classes and the model structure (null when unknown).
StatusOr<AdviceReport> AdviseFromDiagnosis(const OperatorCallGraph& graph, const DiagnosticReport& report,
                                           const OpClassification& classes, const ModelStructure* structure,
                                           const AdviseProfileOptions& options);

// The fields of a transformers config.json (or `model.config.to_dict()` as
// JSON) the advisor uses: model_type, num_hidden_layers, num_attention_heads,
// num_key_value_heads, hidden_size, head_dim, max_position_embeddings,
// torch_dtype/dtype. `origin` names the text in errors and in `source`.
StatusOr<ModelConfig> ParseHfConfigJson(std::string_view json, std::string_view origin);
StatusOr<ModelConfig> ReadHfConfigFile(const std::string& path);

// Completes hidden / head_dim from each other and the head count.
void CompleteDerivedFields(ModelConfig* model);

// Creates `dir` (one level) unless it is already a directory.
Status EnsureDirectory(const std::string& dir);

}  // namespace pypto::advisor
