// Helpers shared by the graph's .cc files; not part of the public API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/profile.h"
#include "graph/interval_union.h"

namespace pypto {


namespace internal {

// Most ascending runs SortUnlessSorted merges instead of sorting: 64, i.e. at
// most 6 linear merge passes, still cheaper than an n log n sort of 10^6 rows.
inline constexpr size_t kMaxMergedRuns = 64;

// Sorts [first, last) adaptively: importers write events mostly in time order
// (a Kineto trace's host ops come pre-ordered per thread, or as a few ordered
// blocks, one per event category), so an ordered range costs one linear
// check and a range of a few ordered runs is merged run by run; anything else
// goes to std::sort. Only for comparators that are a total order (ties broken
// by row), so the result is the same either way.
template <typename It, typename Less>
void SortUnlessSorted(It first, It last, Less less) {
  const std::ptrdiff_t n = last - first;
  if (n < 2) return;
  std::vector<std::ptrdiff_t> runs{0};  // starts of ascending runs, then n
  for (std::ptrdiff_t i = 1; i < n; ++i) {
    if (!less(first[i], first[i - 1])) continue;
    runs.push_back(i);
    if (runs.size() > kMaxMergedRuns) {
      std::sort(first, last, less);
      return;
    }
  }
  runs.push_back(n);
  while (runs.size() > 2) {  // merge neighbouring runs pairwise
    std::vector<std::ptrdiff_t> merged;
    for (size_t r = 0; r + 1 < runs.size(); r += 2) {
      merged.push_back(runs[r]);
      if (r + 2 < runs.size()) std::inplace_merge(first + runs[r], first + runs[r + 1], first + runs[r + 2], less);
    }
    merged.push_back(n);
    runs.swap(merged);
  }
}

// `rows` ordered by (key(row), then `within`): a stable counting sort by the
// rank of the row's key among the distinct keys (few: tracks, devices, core
// types), then each group sorted with SortUnlessSorted, which for rows in file
// order is usually one linear check. `within` must be a total order.
template <typename KeyFn, typename Less>
std::vector<uint32_t> GroupThenSort(const std::vector<uint32_t>& rows, KeyFn key, Less within) {
  using Key = decltype(key(uint32_t{}));
  std::map<Key, uint32_t> rank;
  for (uint32_t row : rows) rank.emplace(key(row), 0);
  uint32_t next = 0;
  for (auto& entry : rank) entry.second = next++;
  std::vector<uint32_t> group(rows.size());
  std::vector<size_t> start(rank.size() + 1, 0);
  {
    // Consecutive rows mostly share a key: look the map up only when it changes.
    bool have_last = false;
    Key last{};
    uint32_t last_rank = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const Key k = key(rows[i]);
      if (!have_last || !(k == last)) {
        last = k;
        last_rank = rank.find(k)->second;
        have_last = true;
      }
      group[i] = last_rank;
      ++start[last_rank + 1];
    }
  }
  for (size_t g = 0; g < rank.size(); ++g) start[g + 1] += start[g];
  std::vector<uint32_t> out(rows.size());
  {
    std::vector<size_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < rows.size(); ++i) out[fill[group[i]]++] = rows[i];
  }
  for (size_t g = 0; g < rank.size(); ++g)
    SortUnlessSorted(out.begin() + static_cast<std::ptrdiff_t>(start[g]),
                     out.begin() + static_cast<std::ptrdiff_t>(start[g + 1]), within);
  return out;
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
  return DeviceTaskKindName(d.kind[task]);
}

// SortedUnionLength lives in graph/interval_union.h (the detectors use it too).
using pypto::SortedUnionLength;

}  // namespace internal
}  // namespace pypto
