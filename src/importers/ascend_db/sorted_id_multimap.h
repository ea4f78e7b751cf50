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
// pairs are found through an index by key when the keys span at most
// kDenseIndexSpanPerPair x the pairs: one memory access instead of a binary
// search over millions of pairs (two cache misses a level), which was most of
// the PYTORCH_API read. Sparse keys keep the binary search.
inline constexpr uint64_t kDenseIndexSpanPerPair = 2;  // index <= 8 bytes a pair (4-byte entries)

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
    if (span == 0 || span > kDenseIndexSpanPerPair * pairs_.size() + 1024) return;
    // first_of_key_[k - min_key_]: the first pair whose key is >= k; one more entry closes the last key.
    first_of_key_.resize(span + 1);
    size_t at = 0;
    for (uint64_t offset = 0; offset <= span; ++offset) {
      const int64_t key = static_cast<int64_t>(static_cast<uint64_t>(min_key_) + offset);
      while (at < pairs_.size() && (offset == span || pairs_[at].first < key)) ++at;
      first_of_key_[offset] = static_cast<uint32_t>(at);
    }
  }
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
