// Synthetic "planted" profiles: an otherwise healthy LLM decode run built
// directly in the model (no files), with knobs that plant each anti-pattern
// of the diagnosis catalogue at a chosen strength. Detector tests check that
// every planted issue is found (right type, right op), that the healthy
// profile gives none, and that severity / saving grows with the strength.
//
// Two flavours:
//   * Kineto/CUDA: host cpu_op rows with Input Dims / Input type, a
//     cudaLaunchKernel runtime call (correlation) under each op, kernels on
//     stream 7 of device 0, ProfilerStep#N annotations, an H100 in
//     profile.devices (deviceProperties name + numSms).
//   * Ascend: torch_npu-like host ops with CANN "Node@launch" calls
//     (correlation), kernel_details-like tasks with core types
//     (AI_CORE / AI_VECTOR_CORE / MIX_AIC / AI_CPU), OP Type, Input Shapes /
//     Data Types, Block Dim, "OP State" and PMU ratio attributes
//     (aic_mac_ratio, aic_mte2_ratio, aiv_vec_ratio, aiv_mte2_ratio, …), one
//     step_trace_time-like step row per step (Computing / Free / …) and an
//     Ascend910B3 device.
//
// The healthy decoder: L layers × S decode steps (+ an optional prefill step);
// each layer is RMSNorm → QKV MatMul → RoPE → KV-cache scatter → fused decode
// attention → O MatMul → residual Add → RMSNorm → gate/up MatMul → SwiGLU →
// down MatMul → residual Add, all fused, with aligned shapes (multiples of
// 256), pipes saturated (some PMU ratio ≥ 0.85 on every op above 20 µs), the
// host ahead of the device (1 µs kernel-to-kernel gaps) and no sync inside a
// step. Times are simulated with one host cursor and one device cursor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace pypto::testing {

enum class PlantedFlavor : uint8_t { kKinetoCuda, kAscend };

// Every knob is 0 / false = not planted. Units are in the names or comments.
struct PlantKnobs {
  PlantedFlavor flavor = PlantedFlavor::kAscend;

  // ---- model and run
  int layers = 4;              // decoder layers
  int decode_steps = 4;        // decode steps (one token per sequence each)
  bool prefill_step = false;   // one prefill step (prompt_len tokens per sequence) before the decode steps
  int batch = 8;               // sequences
  int prompt_len = 512;        // prompt tokens; KV length at decode step 0 (grows by 1 per step)
  int hidden = 4096;           // model dim (healthy: multiple of 256)
  int heads = 32;              // query heads
  int kv_heads = 8;            // KV heads (GQA)
  int head_dim = 128;          // (healthy: multiple of 128)
  int ffn = 11008;             // FFN intermediate size (43 × 256)
  int vocab = 32000;           // lm_head N (125 × 256)
  double host_op_us = 5.0;     // µs of host time per op (op + launch), healthy dispatch cost

  // ---- (1) matmul_tiling: the O-projection MatMul of every layer gets odd
  // N and K (hidden − 7, not a multiple of 16 / 256), its duration ×
  // `bad_matmul_slowdown` and every PMU ratio ÷ `bad_matmul_slowdown`.
  double bad_matmul_slowdown = 0;   // × (> 1 to plant)

  // ---- (2) attention_memory_bound: the decode attention of every layer reads
  // a padded (max-length, not paged) KV cache `attention_slowdown` × longer
  // than the live length: shapes show the padded length, the time grows with
  // the bytes (at the memory roofline), aic_mte2_ratio 0.95 / aiv_mte2_ratio
  // 0.9 (memory pipes saturated, the rest idle).
  double attention_slowdown = 0;    // × (> 1 to plant)

  // ---- (3) kv_cache_layout: the cache is grown with aten::cat (ConcatD) on
  // the sequence dim for K and V every layer and step, each followed by a
  // transpose + contiguous copy (Transpose kernel) of the whole cache.
  bool kv_cache_cat = false;

  // ---- (4) norm_launch_overhead + (10) fusible rms_norm: every RMSNorm is the
  // unfused HF chain to, pow, mean, add, rsqrt, mul, to, mul (kernels Cast,
  // Pow, ReduceMean, Add, Rsqrt, Mul, Cast, Mul; 3 µs each) with this much
  // device idle before each kernel of the chain.
  double unfused_norm_gap_us = 0;   // µs (> 0 to plant)

  // ---- (5) host_bound: extra host time per op (Python overhead): the host
  // falls behind the device, which idles between kernels.
  double host_overhead_us = 0;      // µs per op

  // ---- (6) aicpu_fallback (Ascend only): one AI_CPU task per layer per step
  // (op type `aicpu_op_type`, input dtype `aicpu_dtype`) lasting this long.
  double aicpu_us = 0;              // µs per AI_CPU task
  std::string aicpu_op_type = "NonZero";
  std::string aicpu_dtype = "INT64";

  // ---- (7) dynamic_shape_compile (Ascend only): this many ops per step are
  // compiled online: an AscendCL@aclopCompileAndExecute host call (with a
  // nested AscendCL@opCompile) of `compile_us` around their launch, and their
  // tasks carry OP State "dynamic" (healthy tasks: "static").
  int compile_calls_per_step = 0;
  double compile_us = 300.0;        // µs per online compile
  bool all_ops_dynamic = false;     // every task gets OP State "dynamic" (MPA: no static op at all)

  // ---- (8) stream_sync: this many `.item()` per step (aten::item →
  // aten::_local_scalar_dense → D2H memcpy + cudaStreamSynchronize /
  // AscendCL@aclrtSynchronizeStream), after layers spread over the step,
  // followed by `sync_host_work_us` of host work while the device idles.
  int syncs_per_step = 0;
  double sync_host_work_us = 50.0;  // µs

  // ---- (9) no_pipe_bound (Ascend only): GQA repeat_kv as aten::repeat → Tile
  // (AI_VECTOR_CORE) per layer lasting this long with every PMU pipe ratio
  // between 0.2 and 0.5.
  double no_pipe_us = 0;            // µs per Tile task

  // ---- (10) fusible_sequence: unfused RoPE (mul, slice, slice, neg, cat,
  // mul, add for q and k), SwiGLU (chunk, silu, mul) and eager attention
  // (transpose, matmul, mul, add, softmax, dropout, matmul) instead of the
  // fused ops; short kernels with `unfused_gap_us` of device idle before each.
  bool unfused_rope = false;
  bool unfused_swiglu = false;
  bool unfused_attention = false;
  double unfused_gap_us = 2.0;      // µs
};

// What was planted, for assertions (names as the detectors should report them).
struct PlantedFacts {
  int steps = 0;                       // steps built (prefill + decode)
  TimeNs first_ts = 0;
  std::vector<TimeNs> step_start;      // host start of each step
  std::vector<TimeNs> step_end;        // end of each step (host and device)
  uint64_t kernels = 0;                // device tasks built
  uint64_t aicpu_tasks = 0;
  uint64_t compile_calls = 0;
  uint64_t sync_calls = 0;
  uint64_t no_pipe_tasks = 0;
  TimeNs sync_idle_ns = 0;             // device idle between the last task before each sync and the next task
  std::string matmul_op;               // "MatMulV2" (Ascend) / the GEMM kernel name (CUDA)
  std::string attention_op;            // "IncreFlashAttention" / the decode attention kernel name
};

// Builds the profile. `facts` (optional) receives what was planted.
Profile BuildPlantedProfile(const PlantKnobs& knobs, PlantedFacts* facts = nullptr);

inline PlantKnobs HealthyKnobs(PlantedFlavor flavor) {
  PlantKnobs k;
  k.flavor = flavor;
  return k;
}

}  // namespace pypto::testing
