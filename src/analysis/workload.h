// Training or inference: which one a profile is, and why.
//
// Advice differs: capturing a decode step, a KV-cache layout or
// npu_fused_infer_attention_score mean nothing to a training step, and
// gradient-overlap settings mean nothing to serving. The profile says which it
// is by its ops: a backward pass (autograd's evaluate_function ranges,
// *Backward0 nodes, aten::*_backward, Ascend *Grad* / *Backprop* op types,
// cuDNN dgrad / wgrad and *_bwd kernels) or an optimizer step
// (Optimizer.step#…, Apply*Adam* / ApplyGradientDescent op types) make it
// training; any ops without either make it inference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace pypto {

enum class Workload : uint8_t { kUnknown, kInference, kTraining };
const char* WorkloadName(Workload w);  // "unknown", "inference", "training"

struct WorkloadClass {
  Workload kind = Workload::kUnknown;
  std::string reason;                  // "training: 112 backward ops (RmsNormGrad, …) and 2 optimizer steps"
  uint64_t backward_rows = 0;          // host ops + device tasks of the backward pass
  uint64_t optimizer_rows = 0;         // optimizer step ranges / update ops
  uint64_t rows = 0;                   // host ops + device tasks looked at
  std::vector<std::string> examples;   // up to kMaxWorkloadExamples distinct names that decided
};

// Distinct names quoted in the reason.
inline constexpr size_t kMaxWorkloadExamples = 3;

// Classifies from every host op and device task of the profile (a backward
// pass anywhere in the capture makes it a training job, even when the steps
// analysed are a part of it).
WorkloadClass ClassifyWorkload(const Profile& profile);

// Name tests, exposed for the unit tests.
bool IsBackwardName(std::string_view name);
bool IsOptimizerName(std::string_view name);

}  // namespace pypto
