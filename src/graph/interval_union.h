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

}  // namespace pypto
