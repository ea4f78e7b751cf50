// The profiler DB importer's id multimap (ascend_db.cc), in a header of its
// own so that a unit test can check it against std::multimap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace pypto::ascend_db {

// A multimap from int64 ids, filled once and then only read: the pairs,
// sorted by key once filled (stable: a key's values keep their insertion
// order). A profiler DB links rows through millions of connection ids; as
// std::unordered_multimap nodes they took ~56 bytes each (~250 MB of a 1 M-task
// import's peak) and an allocation per row, as sorted pairs 16 bytes.
// Connection ids are dense (numbered up from near 0), so once sealed a key's
// pairs are found through an index by key (4 bytes a key of the span) when the
// index takes at most 1/kDenseIndexShareOfPairBytes of the pairs' bytes: one
// memory access instead of a binary search over millions of pairs (two cache
// misses a level), which was most of the PYTORCH_API read. Sparse keys keep the
// binary search. For 16-byte pairs (connection ids) that is keys spanning 2x
// the pairs; the task-info maps (40- and 56-byte pairs, one row for 35-40 % of
// the tasks' global ids) get their index too, where the binary searches were
// 44 % of reading TASK.
inline constexpr uint64_t kDenseIndexShareOfPairBytes = 2;
// Index entries allowed beyond that share, so that small maps always get one.
inline constexpr uint64_t kDenseIndexSlackEntries = 1024;

template <typename V>
class SortedIdMultimap {
 public:
  using Pair = std::pair<int64_t, V>;
  void Add(int64_t key, V value) { pairs_.emplace_back(key, value); }
  // Call once every pair is added, before Find.
  void Seal() {
    auto by_key = [](const Pair& a, const Pair& b) { return a.first < b.first; };
    if (!std::is_sorted(pairs_.begin(), pairs_.end(), by_key)) std::stable_sort(pairs_.begin(), pairs_.end(), by_key);
    first_of_key_.clear();
    if (pairs_.empty() || pairs_.size() >= std::numeric_limits<uint32_t>::max()) return;
    min_key_ = pairs_.front().first;
    const uint64_t span = static_cast<uint64_t>(pairs_.back().first) - static_cast<uint64_t>(min_key_) + 1;
    const uint64_t most_entries =
        sizeof(Pair) * pairs_.size() / (kDenseIndexShareOfPairBytes * sizeof(uint32_t)) + kDenseIndexSlackEntries;
    if (span == 0 || span > most_entries) return;
    // first_of_key_[k - min_key_]: the first pair whose key is >= k; one more entry closes the last key.
    first_of_key_.resize(span + 1);
    size_t at = 0;
    for (uint64_t offset = 0; offset <= span; ++offset) {
      const int64_t key = static_cast<int64_t>(static_cast<uint64_t>(min_key_) + offset);
      while (at < pairs_.size() && (offset == span || pairs_[at].first < key)) ++at;
      first_of_key_[offset] = static_cast<uint32_t>(at);
    }
  }
  // Whether Find goes through the index by key (after Seal).
  bool indexed() const { return !first_of_key_.empty(); }
  std::span<const Pair> Find(int64_t key) const {
    if (!first_of_key_.empty()) {
      const uint64_t offset = static_cast<uint64_t>(key) - static_cast<uint64_t>(min_key_);
      if (key < min_key_ || offset + 1 >= first_of_key_.size()) return {};
      return {pairs_.begin() + first_of_key_[offset], pairs_.begin() + first_of_key_[offset + 1]};
    }
    auto lo = std::lower_bound(pairs_.begin(), pairs_.end(), key, [](const Pair& p, int64_t k) { return p.first < k; });
    auto hi = std::upper_bound(lo, pairs_.end(), key, [](int64_t k, const Pair& p) { return k < p.first; });
    return {lo, hi};
  }

 private:
  std::vector<Pair> pairs_;
  int64_t min_key_ = 0;
  std::vector<uint32_t> first_of_key_;  // empty: keys too sparse, binary search
};

}  // namespace pypto::ascend_db
