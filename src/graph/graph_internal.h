// Helpers shared by the graph's .cc files; not part of the public API.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "model/profile.h"

namespace pypto {

// Lower-case name of a device task kind ("kernel", "memcpy", …).
const char* DeviceTaskKindLabel(DeviceTaskKind kind);

namespace internal {

// std::sort, skipped when the range is already in order: importers write
// events mostly in time order (a Kineto trace's host ops come pre-ordered per
// thread), and a linear check is far cheaper than an n log n sort of indices.
// Only for comparators that are a total order (ties broken by row), so the
// result is the same either way.
template <typename It, typename Less>
void SortUnlessSorted(It first, It last, Less less) {
  if (!std::is_sorted(first, last, less)) std::sort(first, last, less);
}

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
  return DeviceTaskKindLabel(d.kind[task]);
}

}  // namespace internal
}  // namespace pypto
