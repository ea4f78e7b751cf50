// LLM structure found in a profile without hints: the repeating transformer
// layer (period of the op sequence within a step), its attention / FFN /
// norm / RoPE / KV-cache-update parts, prefill vs decode steps, and per-token
// (decode step) latency percentiles. `model_arch` ("llama", …) may refine
// names in the report; it is never required.
//
// Sequence used: the compute device tasks of a step in time order (Ascend op
// type, else kernel name, as the symbol), or the top-level operators of the
// step when there are no device tasks (CPU-only profiles).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "analysis/op_class.h"
#include "core/status.h"
#include "graph/call_graph.h"
#include "model/profile.h"

namespace pypto {

// A step is prefill when its token count (matmul M / attention S_q) is at
// least this many times the smallest token count among the profile's steps.
// Source: a prefill processes the prompt (tens to thousands of tokens), a
// decode step one token per sequence; 4 keeps small prompts (≥ 4 tokens)
// apart from decode batches without confusing batch-size jitter.
inline constexpr double kPrefillTokenRatio = 4.0;
// At least this many repeats make a layer period (a transformer has ≥ 2 layers).
inline constexpr int kMinLayerRepeats = 2;
// Longest layer period searched, in ops (a layer is ≈ 10–60 kernels; MoE more).
inline constexpr int kMaxLayerPeriod = 2048;

enum class StepPhase : uint8_t { kUnknown, kPrefill, kDecode };
const char* StepPhaseName(StepPhase phase);

// Role of an op inside one layer.
enum class BlockKind : uint8_t { kNone, kNorm, kAttention, kFfn, kRope, kKvCacheUpdate, kOther };
const char* BlockKindName(BlockKind kind);

// The repeating unit found in one step.
struct LayerPattern {
  int32_t period = 0;                    // ops per layer (0: no repetition found)
  int32_t layers = 0;                    // repeats of the unit in the step
  int32_t first_op = -1;                 // index in the step's op sequence where layer 0 starts
  int32_t prologue_ops = 0;              // ops before layer 0 (embedding …)
  int32_t epilogue_ops = 0;              // ops after the last layer (final norm, lm_head, sampling …)
  std::vector<OpClass> classes;          // class of each position of the unit
  std::vector<BlockKind> roles;          // role of each position (norm / attention / ffn / rope / kv update)
  std::vector<std::string> names;        // symbol (op type / kernel name) of each position
  bool has_attention = false;
  bool has_matmul = false;
  bool has_norm = false;
  bool has_rope = false;
  bool has_kv_cache_update = false;
};

struct StepStructure {
  size_t step = 0;                       // index into graph.Steps()
  StepPhase phase = StepPhase::kUnknown;
  std::string phase_reason;              // "attention S_q = 1", "tokens 512 = 128 × min", "IncreFlashAttention"
  std::string phase_rule;                // the rule without figures: "attention S_q", "unfused attention Q.K^T S_q",
                                         // "decode attention kernel", "paged attention kernel", "GEMM rows ratio"
  int64_t tokens = -1;                   // matmul M (rows) of the layer's first GEMM, -1 unknown
  int64_t query_len = -1;                // attention S_q when shapes give it
  int64_t kv_len = -1;                   // attention S_kv when shapes give it
  int64_t batch = -1;                    // attention batch B (fused attention shapes [B, H, S, D]), -1 unknown
  TimeNs latency_ns = 0;                 // StepInfo::latency_ns()
  uint64_t ops = 0;                      // length of the op sequence
  bool from_device_tasks = true;         // sequence source
  LayerPattern pattern;
};

struct LatencyStats {
  uint64_t count = 0;
  double mean_ms = std::numeric_limits<double>::quiet_NaN();
  double p50_ms = std::numeric_limits<double>::quiet_NaN();
  double p90_ms = std::numeric_limits<double>::quiet_NaN();
  double p99_ms = std::numeric_limits<double>::quiet_NaN();
  double min_ms = std::numeric_limits<double>::quiet_NaN();
  double max_ms = std::numeric_limits<double>::quiet_NaN();
};

// One KV-cache write found in the profile.
struct KvCacheUpdate {
  bool is_task = false;                  // device task (true) or host op (false)
  uint32_t row = 0;
  std::string how;                       // "kv cache op (reshape_and_cache)", "cat on growing dim -2: 17 -> 18"
};

struct ModelStructure {
  std::vector<StepStructure> steps;      // one per graph step
  int32_t layers = 0;                    // most common layer count over steps (0: none found)
  LayerPattern layer;                    // the pattern of the first step with that layer count
  uint64_t prefill_steps = 0;
  uint64_t decode_steps = 0;
  LatencyStats decode_latency;           // per-token latency = decode step latency
  LatencyStats prefill_latency;          // time to first token candidates
  std::vector<KvCacheUpdate> kv_cache_updates;  // capped at kMaxListedKvUpdates (count in kv_cache_update_count)
  uint64_t kv_cache_update_count = 0;
  std::string model_arch;                // as given by the user, or "" (no guess is made)
  std::vector<std::string> notes;
};
inline constexpr size_t kMaxListedKvUpdates = 256;

struct StructureOptions {
  std::string model_arch;                // "llama", "qwen", … (optional)
  int32_t max_period = kMaxLayerPeriod;
  double prefill_token_ratio = kPrefillTokenRatio;
};

// Never fails on a consistent graph: missing information shows as unknown
// phases, zero layers and notes.
StatusOr<ModelStructure> AnalyzeStructure(const Profile& profile, const OperatorCallGraph& graph,
                                          const OpClassification& classes, const StructureOptions& options = {});

// Whether symbol[i] == symbol[i + p] holds for `length` or more consecutive i
// (the layer-period search's test of a candidate period p).
bool HasMatchRun(const std::vector<StrId>& symbol, int64_t p, int64_t length);

// Percentiles (nearest-rank on sorted values, ms) of durations in ns.
LatencyStats ComputeLatencyStats(std::vector<TimeNs> durations_ns);

}  // namespace pypto
