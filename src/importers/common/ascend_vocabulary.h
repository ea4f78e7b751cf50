// Facts shared by the Ascend importers (trace_view.json, the profiler SQLite
// database): what a hardware task type means, and how Ascend writes times.
// Vocabulary from the Ascend format reference §5.1 (fixtures; msprof docs).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "model/profile.h"

namespace pypto::ascend {

// Model Id / Subtask Id / dst rank written as UINT32_MAX mean "not applicable"
// (eager single-op mode; reference §5.2).
inline constexpr int64_t kNotApplicableU32 = 4294967295;

struct TaskTypeInfo {
  DeviceTaskKind kind = DeviceTaskKind::kOther;
  // Compute unit the task ran on, normalised to the kernel_details vocabulary
  // (AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV, AI_CPU, DSA_SQE); empty when the
  // type does not say (e.g. "Other", which the 2024 trace_view writes for AI Core kernels).
  std::string_view core_type;
};

// Maps a hardware task type as written (trace_view "Task Type", DB TASK.taskType,
// COMPUTE_TASK_INFO.taskType, kernel_details "Accelerator Core") to a task kind.
TaskTypeInfo ClassifyTaskType(std::string_view task_type);

}  // namespace pypto::ascend
