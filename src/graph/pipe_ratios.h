// Ascend PMU pipe ratios aggregated per op type. kernel_details.csv /
// op_summary*.csv (and the DB's TASK_PMU_INFO) give, per device task, the share
// of the task's cycles each pipe was busy (aic_mac_ratio, aic_mte2_ratio,
// aiv_vec_ratio, …). The importers keep them as numeric attributes of the task;
// this groups the tasks by op type and averages each ratio weighted by the task
// duration, so long launches count more than short ones.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/profile.h"

namespace pypto {

struct PipeRatioMean {
  std::string key;          // attribute key as written ("aic_mac_ratio")
  double mean = 0;          // sum(value * dur) / sum(dur) over tasks with a numeric value
  uint64_t task_count = 0;  // tasks of the op type that carry the ratio
};

struct PipeRatioAggregate {
  std::string op_type;      // device_tasks.op_type, else the task name
  uint64_t count = 0;       // tasks with at least one numeric ratio
  TimeNs total_ns = 0;      // sum of their durations
  std::vector<PipeRatioMean> ratios;  // sorted by key
};

// True for attribute keys that are PMU pipe ratios: ending in "_ratio".
bool IsPipeRatioKey(std::string_view key);

// One row per op type among device tasks with at least one numeric `*_ratio`
// attribute (OwnerKind::kDeviceTask; NaN values are skipped), sorted by total
// time (descending, then op type). A task of zero duration still counts but
// weighs nothing; an op type whose tasks all have zero duration gets the plain
// mean. Linear in tasks + attributes.
std::vector<PipeRatioAggregate> PipeRatiosByOpType(const Profile& profile);

}  // namespace pypto
