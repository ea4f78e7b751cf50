// Optimizers: write artifacts that apply a recommendation.
//   * TilingOptimizer: Ascend → AOE operator-tuning input (the msprof-analyze
//     tune_ops_file JSON {"tune_ops_name": [...]}, diagnosis-rules §1.1/§6),
//     a detail file of the ops (types, shapes, dtypes, formats) and a shell
//     script with the exact dump / tune / consume steps (TUNE_BANK_PATH);
//     CUDA / ROCm / CPU → the padded GEMM shapes with the predicted gain (JSON).
//   * KVCacheLayoutOptimizer: a Python module with
//     apply_kv_cache_layout_optimization(model), from the template
//     data/advisor/templates/kv_cache_layout_patch.py.tmpl filled with the model config.
//   * NormFusionPlan: JSON plan of the norm chains to fuse, with the fused op
//     per backend, for pypto.fusion.register_layernorm_fusion.
// Files are never overwritten unless `force` (WriteArtifactFile).
#pragma once

#include <string>
#include <vector>

#include "advisor/model_config.h"
#include "advisor/rule_library.h"
#include "advisor/tuning_advisor.h"
#include "analysis/diagnostic_report.h"
#include "analysis/kv_cache_cat.h"
#include "analysis/op_class.h"
#include "analysis/structure.h"
#include "core/status.h"
#include "graph/call_graph.h"
#include "io/value_sink.h"

namespace pypto::advisor {

inline constexpr char kTuningConfigSchema[] = "pypto.tiling/1";
inline constexpr char kFusionPlanSchema[] = "pypto.fusion_plan/1";

// Writes `text` to `path` (mode 0644). Refuses an existing path unless
// `force`; never follows a symlink at `path` when not forcing (link(2) of a
// temporary file). Creates no directories.
Status WriteArtifactFile(const std::string& path, std::string_view text, bool force);

// ------------------------------------------------------------------ tiling

struct TuneOp {
  std::string issue_type;            // matmul_tiling / no_pipe_bound
  std::string kernel_name;           // Ascend "Name" (what AOE's tune_ops_file lists) / CUDA kernel
  std::string op_type;               // MatMulV3, aten::mm, …
  std::string input_shapes;          // as in the profile ("8192,15365;8192,4096" / "[[…]]")
  std::string input_dtypes;
  std::string input_formats;
  std::string output_shapes;
  uint64_t tasks = 0;
  TimeNs total_ns = 0;
  TimeNs issue_saved_ns = 0;         // the detector's estimate for the op group
  // GEMM dims (0 unknown) and the padded ones that restore alignment.
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t padded_m = 0, padded_n = 0, padded_k = 0;
  int64_t align_multiple = 0;        // the multiple padded to
  std::string align_source;
  double extra_flops_fraction = 0;   // padded FLOPs / original − 1
  TimeNs predicted_saved_ns = 0;     // issue saving − total × extra_flops_fraction, >= 0
  std::string prediction_formula;
};

struct TuningConfig {
  Backend backend = Backend::kAscend;
  std::string hardware_id;
  std::string soc_version;           // "Ascend910B3" (AOE custom bank folder), "" when not Ascend
  std::vector<TuneOp> ops;
  TimeNs step_time_ns = 0;
  std::vector<std::string> notes;

  // Text of each file (Ascend: the three files; others: the padded-shape JSON).
  std::string TuneOpsFileJson() const;   // {"tune_ops_name": [...]}
  void WriteTuneOpsFile(io::ValueSink& sink) const;
  std::string DetailJson() const;        // schema pypto.tiling/1: every op with shapes and figures
  void WriteDetail(io::ValueSink& sink) const;  // the same document to any sink
  std::string ShellScript(const std::string& tune_ops_file) const;
  // Writes into directory `dir`: Ascend → aoe_tune_ops.cfg, aoe_tuning_ops.json,
  // aoe_tune.sh; others → padded_gemm_shapes.json. Returns the paths.
  StatusOr<std::vector<std::string>> Save(const std::string& dir, bool force) const;
};

class TilingOptimizer {
 public:
  TilingOptimizer(const OperatorCallGraph& graph, const OpClassification& classes)
      : graph_(graph), classes_(classes) {}
  // The flagged ops of matmul_tiling (and, on Ascend, no_pipe_bound) issues.
  TuningConfig GenerateTuningConfig(const DiagnosticReport& report, Backend backend) const;

 private:
  const OperatorCallGraph& graph_;
  const OpClassification& classes_;
};

// ------------------------------------------------------------------ KV cache

struct LayoutPatch {
  std::string text;                  // the Python module
  Status Save(const std::string& path, bool force) const { return WriteArtifactFile(path, text, force); }
};

struct LayoutPicture {
  std::string svg;
  Status Save(const std::string& path, bool force) const { return WriteArtifactFile(path, svg, force); }
};

class KVCacheLayoutOptimizer {
 public:
  explicit KVCacheLayoutOptimizer(ModelConfig model) : model_(std::move(model)) {}
  // Fills the embedded template; fails only when the template is missing.
  StatusOr<LayoutPatch> GenerateLayoutTransformPatch() const;
  // The picture of the two layouts (SVG): which addresses one decode step's
  // attention reads for one KV head, in BSND ([batch, seq, heads, dim]: one
  // row of head_dim elements every kv_heads x head_dim, strided) and in BNSD
  // ([batch, heads, seq, dim]: the head's rows back to back), drawn from the
  // model's KV heads, head_dim, dtype and sequence length (unknown values
  // are said and a small example is drawn).
  // `seen`: the cache the profile shows (FindKvCacheCat) wins over the model
  // config (a cache already BNSD but grown by cat is drawn as that, with the
  // preallocated cache as the proposal; its KV heads are the cache's, not the
  // query heads after repeat_kv).
  LayoutPicture GenerateLayoutPicture(const std::optional<KvCacheCat>& seen = std::nullopt) const;

 private:
  ModelConfig model_;
};

// ------------------------------------------------------------------ norm fusion

struct FusionPlan {
  std::string json;
  Status Save(const std::string& path, bool force) const { return WriteArtifactFile(path, json, force); }
};

// From the norm issues (norm_launch_overhead, fusible_sequence rms_norm /
// add_layer_norm) and the model structure: which norm modules / op chains to
// fuse, with the fused op per backend.
FusionPlan GenerateNormFusionPlan(const DiagnosticReport& report, const ModelConfig& model, Backend backend);

// ------------------------------------------------------------------ all

struct ArtifactInputs {
  const DiagnosticReport* report = nullptr;
  const OperatorCallGraph* graph = nullptr;     // needed by the tiling config
  const OpClassification* classes = nullptr;
};

// Runs the optimizers the recommendations ask for (RuleAction::artifact of
// any of their actions), writes into `dir` (must exist) and records the paths
// in each recommendation and in advice->artifacts.
Status WriteArtifacts(const ArtifactInputs& inputs, const std::string& dir, bool force, AdviceReport* advice);

}  // namespace pypto::advisor
