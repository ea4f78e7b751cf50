// Helpers shared by the graph's .cc files; not part of the public API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "core/adaptive_sort.h"
#include "model/profile.h"
#include "graph/interval_union.h"

namespace pypto {


namespace internal {

// Grouping key of a task for per-core-type busy time: its Ascend core type
// when set, else its task kind (kept apart from StrIds by the high bit).
inline uint64_t CoreKey(const DeviceTaskTable& d, uint32_t task) {
  if (d.core_type[task] != kEmptyStr) return d.core_type[task];
  return (uint64_t{1} << 32) | static_cast<uint64_t>(d.kind[task]);
}

// Label of CoreKey: the core type text, else the task kind label.
inline std::string CoreLabel(const Profile& profile, uint32_t task) {
  const DeviceTaskTable& d = profile.device_tasks;
  if (d.core_type[task] != kEmptyStr) return std::string(profile.Str(d.core_type[task]));
  return DeviceTaskKindName(d.kind[task]);
}

// SortedUnionLength lives in graph/interval_union.h (the detectors use it too).
using pypto::SortedUnionLength;

}  // namespace internal
}  // namespace pypto
