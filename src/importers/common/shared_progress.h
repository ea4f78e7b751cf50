// One progress callback fed by several imports running at once (the ranks of
// one job read side by side): each import reports its own bytes done / total
// into its slot, and the caller's callback sees the sums, one call at a time,
// so a progress line written for one file stays correct and is never called
// from two threads together.
#pragma once

#include <cstdint>
#include <mutex>
#include <numeric>
#include <utility>
#include <vector>

#include "importers/importer.h"

namespace pypto {

class SharedProgress {
 public:
  SharedProgress(ProgressFn out, size_t slots) : out_(std::move(out)), done_(slots, 0), total_(slots, 0) {}

  // The callback for import number `slot`; empty when the caller gave none.
  ProgressFn ForSlot(size_t slot) {
    if (!out_) return {};
    return [this, slot](uint64_t done, uint64_t total) {
      std::lock_guard<std::mutex> lock(mu_);
      done_[slot] = done;
      total_[slot] = total;
      out_(std::accumulate(done_.begin(), done_.end(), uint64_t{0}),
           std::accumulate(total_.begin(), total_.end(), uint64_t{0}));
    };
  }

 private:
  std::mutex mu_;
  ProgressFn out_;
  std::vector<uint64_t> done_;
  std::vector<uint64_t> total_;
};

}  // namespace pypto
