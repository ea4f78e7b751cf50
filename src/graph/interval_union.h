// Length of a union of time intervals: busy time of a stream, the wall time a
// group of tasks covers. Shared by the graph layer and the detectors.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "model/profile.h"

namespace pypto {

// Length of the union of intervals added in order of their start (the busy
// time of a stream, the time a parent's children cover). Empty intervals
// (end <= start) add nothing.
class SortedUnionLength {
 public:
  void Add(TimeNs start, TimeNs end) {
    if (end <= start) return;
    if (start > run_end_) {
      if (run_end_ > run_start_) total_ += run_end_ - run_start_;
      run_start_ = start;
      run_end_ = end;
    } else {
      run_end_ = std::max(run_end_, end);
    }
  }
  TimeNs Total() const { return total_ + (run_end_ > run_start_ ? run_end_ - run_start_ : 0); }

 private:
  TimeNs total_ = 0;
  TimeNs run_start_ = 0;
  TimeNs run_end_ = INT64_MIN;
};

// The same for [start, end) intervals in any order (sorts them).
inline TimeNs IntervalUnionLength(std::vector<std::pair<TimeNs, TimeNs>> spans) {
  std::sort(spans.begin(), spans.end());
  SortedUnionLength length;
  for (const auto& [start, end] : spans) length.Add(start, end);
  return length.Total();
}

// The union of [start, end) intervals as sorted, disjoint intervals.
inline std::vector<std::pair<TimeNs, TimeNs>> MergedIntervals(std::vector<std::pair<TimeNs, TimeNs>> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<TimeNs, TimeNs>> merged;
  for (const auto& [start, end] : spans) {
    if (end <= start) continue;
    if (!merged.empty() && start <= merged.back().second) merged.back().second = std::max(merged.back().second, end);
    else merged.emplace_back(start, end);
  }
  return merged;
}

// Time of [start, end) that no interval of `merged` (MergedIntervals) covers:
// the device idle inside a host range, given the device's busy intervals.
inline TimeNs UncoveredLength(const std::vector<std::pair<TimeNs, TimeNs>>& merged, TimeNs start, TimeNs end) {
  if (end <= start) return 0;
  auto it = std::upper_bound(merged.begin(), merged.end(), start,
                             [](TimeNs v, const std::pair<TimeNs, TimeNs>& m) { return v < m.first; });
  if (it != merged.begin()) --it;
  TimeNs covered = 0;
  for (; it != merged.end() && it->first < end; ++it) {
    const TimeNs lo = std::max(start, it->first), hi = std::min(end, it->second);
    if (hi > lo) covered += hi - lo;
  }
  return (end - start) - covered;
}

// Wall time device tasks cover, each device's union summed over the devices
// (rows over the same time on one device count once).
inline TimeNs DeviceTaskUnionLength(const Profile& p, std::vector<uint32_t> tasks) {
  const DeviceTaskTable& t = p.device_tasks;
  auto device = [&](uint32_t r) { return p.tracks.device[t.track[r]]; };
  std::sort(tasks.begin(), tasks.end(), [&](uint32_t a, uint32_t b) {
    return std::make_pair(device(a), t.ts[a]) < std::make_pair(device(b), t.ts[b]);
  });
  TimeNs total = 0;
  SortedUnionLength covered;
  for (size_t k = 0; k < tasks.size(); ++k) {
    if (k > 0 && device(tasks[k]) != device(tasks[k - 1])) {
      total += covered.Total();
      covered = SortedUnionLength();
    }
    covered.Add(t.ts[tasks[k]], t.ts[tasks[k]] + std::max<TimeNs>(t.dur[tasks[k]], 0));
  }
  return total + covered.Total();
}

}  // namespace pypto
