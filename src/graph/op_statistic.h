// Ascend op_statistic.csv as a table: one row per (device, OP Type, Core
// Type) with the profiler's own call count and times. The importers keep the
// file's rows as device attributes "op_statistic/<OP Type>/<Core Type>/<column>"
// (docs/formats/ascend.md); this gathers them back into rows, so that a run
// whose only per-op data is op_statistic.csv (a graph-mode decode whose
// kernel_details was not exported, an op_statistic.csv passed alone) still
// shows where the device time went.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace pypto {

inline constexpr double kNoValue = -1;  // column absent in this file version

struct OpStatisticRow {
  int32_t device = -1;
  std::string op_type;    // "MatMul"
  std::string core_type;  // "AI_CORE", "MIX_AIC", …
  double count = kNoValue;
  double total_us = kNoValue, min_us = kNoValue, avg_us = kNoValue, max_us = kNoValue;
  double ratio_percent = kNoValue;  // the file's Ratio(%): share of the device's op time
};

// The rows, sorted by device then total time (descending) then op type.
// Empty when the profile has no op_statistic attributes. Linear in attributes.
std::vector<OpStatisticRow> OpStatisticRows(const Profile& profile);

}  // namespace pypto
