// What the advisor knows about the model: given by the user, or inferred from
// the profile (attention shapes, layer structure). Every field is optional.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/diagnostic_report.h"
#include "analysis/op_class.h"
#include "analysis/structure.h"
#include "advisor/rule_library.h"
#include "graph/call_graph.h"

namespace pypto::advisor {

struct ModelConfig {
  std::string arch;             // "llama", "qwen", … ("" unknown)
  int32_t num_layers = 0;       // 0 = unknown
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t hidden = 0;
  std::string dtype;            // "bf16", "fp16", "fp32", … ("" unknown)
  int64_t max_seq = 0;          // longest KV length seen / cache capacity
  std::string source;           // how it was obtained ("user", "profile: attention shapes of …")

  // Fills the unknown fields of *this from `other` (user values win).
  void FillFrom(const ModelConfig& other);
};

// Infers what the profile shows: layers from the structure, heads / KV heads /
// head_dim / dtype / longest KV length from the attention tasks' shapes
// (the longest-running attention shape), hidden = heads × head_dim.
ModelConfig InferModelConfig(const OperatorCallGraph& graph, const OpClassification& classes,
                             const ModelStructure* structure);

// Backend of a diagnosis: the hardware family of report.hardware_id, else
// the profile format (ascend-pt / msprof → ascend), else cpu.
Backend BackendOfReport(const DiagnosticReport& report);

}  // namespace pypto::advisor
