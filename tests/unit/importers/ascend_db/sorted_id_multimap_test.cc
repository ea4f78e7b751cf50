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
#include <type_traits>
#include <vector>

#include "importers/ascend_db/sorted_id_multimap.h"

namespace pypto::ascend_db {
namespace {

// A wide value (the DB's task-info rows are 40 and 56 bytes).
struct WideValue {
  uint32_t value;
  uint32_t filler[11];
};
static_assert(sizeof(std::pair<int64_t, WideValue>) == 56);

uint32_t ValueOf(uint32_t v) { return v; }
uint32_t ValueOf(const WideValue& v) { return v.value; }
template <typename V>
V MakeValue(uint32_t v) {
  if constexpr (std::is_same_v<V, WideValue>) return WideValue{v, {}};
  else return v;
}

// Returns whether the map found them through its index by key.
template <typename V = uint32_t>
bool ExpectSameAsMultimap(const std::vector<std::pair<int64_t, uint32_t>>& added,
                          const std::vector<int64_t>& probes) {
  SortedIdMultimap<V> map;
  std::multimap<int64_t, uint32_t> oracle;
  for (const auto& [key, value] : added) {
    map.Add(key, MakeValue<V>(value));
    oracle.emplace(key, value);
  }
  map.Seal();
  for (int64_t key : probes) {
    std::vector<uint32_t> expected;
    for (auto [it, end] = oracle.equal_range(key); it != end; ++it) expected.push_back(it->second);
    std::vector<uint32_t> found;
    for (const auto& [k, v] : map.Find(key)) {
      EXPECT_EQ(k, key);
      found.push_back(ValueOf(v));
    }
    EXPECT_EQ(found, expected) << "key " << key;
  }
  return map.indexed();
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

// Wide values: their keys may span more than twice the pairs and still be
// found through the index, which stays at most half the pairs' bytes. 400
// pairs of 56 bytes over a span of 3,000 keys: 12,000 index bytes against
// 22,400 pair bytes (plus the slack of 1,024 entries), so indexed; over 10^9
// keys, not.
TEST(SortedIdMultimap, WideValuesGetTheIndexOverASparserSpan) {
  for (const uint64_t spread : {3000ull, 1000000000ull}) {
    SCOPED_TRACE("spread " + std::to_string(spread));
    std::mt19937_64 rng(11);
    // The span's ends: 0 and spread - 1.
    std::vector<std::pair<int64_t, uint32_t>> added = {{0, 0}, {static_cast<int64_t>(spread - 1), 1}};
    for (uint32_t i = 2; i < 400; ++i) added.emplace_back(static_cast<int64_t>(rng() % spread), i);
    std::vector<int64_t> probes;
    for (const auto& [key, value] : added)
      for (int64_t probe : {key - 1, key, key + 1}) probes.push_back(probe);
    EXPECT_EQ(ExpectSameAsMultimap<WideValue>(added, probes), spread == 3000);
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
