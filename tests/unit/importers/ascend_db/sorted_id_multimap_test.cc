// The profiler DB's id multimap: Find must give a key's values in insertion
// order, as a stable sort of the pairs does, whether the keys are dense (the
// index by key) or sparse (binary search), including keys below, between and
// above the stored ones and negative or extreme keys. The oracle is
// std::multimap, which keeps equal keys in insertion order.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "importers/ascend_db/sorted_id_multimap.h"

namespace pypto::ascend_db {
namespace {

void ExpectSameAsMultimap(const std::vector<std::pair<int64_t, uint32_t>>& added,
                          const std::vector<int64_t>& probes) {
  SortedIdMultimap<uint32_t> map;
  std::multimap<int64_t, uint32_t> oracle;
  for (const auto& [key, value] : added) {
    map.Add(key, value);
    oracle.emplace(key, value);
  }
  map.Seal();
  for (int64_t key : probes) {
    std::vector<uint32_t> expected;
    for (auto [it, end] = oracle.equal_range(key); it != end; ++it) expected.push_back(it->second);
    std::vector<uint32_t> found;
    for (const auto& [k, v] : map.Find(key)) {
      EXPECT_EQ(k, key);
      found.push_back(v);
    }
    EXPECT_EQ(found, expected) << "key " << key;
  }
}

TEST(SortedIdMultimap, FindsEveryKeysValuesInInsertionOrder) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    // Dense keys (connection ids from a base), sparse keys, or a mix with a
    // far outlier (which turns the index off).
    const int64_t base = trial % 4 == 0 ? -50 : static_cast<int64_t>(rng() % 1000000);
    const uint64_t spread = trial % 3 == 0 ? 1000000000ull : 300;
    std::vector<std::pair<int64_t, uint32_t>> added;
    const int n = 1 + static_cast<int>(rng() % 500);
    for (int i = 0; i < n; ++i) added.emplace_back(base + static_cast<int64_t>(rng() % spread), static_cast<uint32_t>(i));
    if (trial % 5 == 0) std::sort(added.begin(), added.end());  // already in key order: no sort needed
    if (trial % 7 == 0) added.emplace_back(std::numeric_limits<int64_t>::max(), 9999);
    std::vector<int64_t> probes = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                   base - 1, base, base + static_cast<int64_t>(spread)};
    for (const auto& [key, value] : added) {  // each key and its neighbours, within int64
      probes.push_back(key);
      if (key > std::numeric_limits<int64_t>::min()) probes.push_back(key - 1);
      if (key < std::numeric_limits<int64_t>::max()) probes.push_back(key + 1);
    }
    ExpectSameAsMultimap(added, probes);
  }
}

TEST(SortedIdMultimap, EmptyAndSingleKeyMaps) {
  ExpectSameAsMultimap({}, {0, -1, std::numeric_limits<int64_t>::min()});
  ExpectSameAsMultimap({{5, 1}, {5, 2}, {5, 3}}, {4, 5, 6, std::numeric_limits<int64_t>::max()});
  ExpectSameAsMultimap({{std::numeric_limits<int64_t>::min(), 1}, {std::numeric_limits<int64_t>::max(), 2}},
                       {std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::max()});
}

}  // namespace
}  // namespace pypto::ascend_db
