// Imports run side by side (the ranks of one job, ImportSideBySide) and the
// one progress callback they feed: each import reports its own bytes done / total
// into its slot, and the caller's callback sees the sums, one call at a time,
// so a progress line written for one file stays correct and is never called
// from two threads together.
#pragma once

#include <cstdint>
#include <mutex>
#include <numeric>
#include <utility>
#include <vector>

#include "core/parallel.h"
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

// Runs import(i, options_i) for every i in [0, n) side by side, one per core
// (the ranks of one job): options_i is the caller's options with its own slot
// of one SharedProgress. Each call must touch only its own output.
template <typename Fn>
void ImportSideBySide(size_t n, const ImportOptions& options, Fn import) {
  SharedProgress progress(options.progress, n);
  ParallelFor(n, DefaultParallelism(), [&](size_t i) {
    ImportOptions own = options;
    own.progress = progress.ForSlot(i);
    import(i, static_cast<const ImportOptions&>(own));
  });
}

}  // namespace pypto
