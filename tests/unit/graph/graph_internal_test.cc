// The adaptive sorts (core/adaptive_sort.h): SortUnlessSorted (already ordered,
// a few ordered runs merged, anything else sorted) and GroupThenSort, checked
// against std::sort / std::stable_sort on the same input.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "core/adaptive_sort.h"

namespace pypto {
namespace {

std::vector<int> Sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(SortUnlessSorted, OrderedInputIsLeftAsIs) {
  std::vector<int> v(1000);
  std::iota(v.begin(), v.end(), 0);
  SortUnlessSorted(v.begin(), v.end(), std::less<int>());
  EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
  std::vector<int> empty;
  SortUnlessSorted(empty.begin(), empty.end(), std::less<int>());
  EXPECT_TRUE(empty.empty());
}

TEST(SortUnlessSorted, FewOrderedRunsAreMerged) {
  // Three ordered blocks (as a trace that writes one category after another),
  // an odd number of runs so that one run waits a pass.
  std::vector<int> v;
  for (int block = 0; block < 3; ++block)
    for (int i = 0; i < 500; ++i) v.push_back(i * 3 + block);
  const std::vector<int> expected = Sorted(v);
  SortUnlessSorted(v.begin(), v.end(), std::less<int>());
  EXPECT_EQ(v, expected);
}

TEST(SortUnlessSorted, ManyRunsFallBackToASort) {
  std::mt19937 rng(7);
  for (size_t n : {size_t{2}, size_t{65}, size_t{66}, size_t{5000}}) {
    std::vector<int> v(n);
    for (int& x : v) x = static_cast<int>(rng() % 1000);
    const std::vector<int> expected = Sorted(v);
    SortUnlessSorted(v.begin(), v.end(), std::less<int>());
    EXPECT_EQ(v, expected) << n;
  }
  // Exactly kMaxMergedRuns runs: still merged.
  std::vector<int> v;
  for (size_t run = 0; run < kMaxMergedRuns; ++run)
    for (int i = 0; i < 10; ++i) v.push_back(i * 100 + static_cast<int>(run));
  const std::vector<int> expected = Sorted(v);
  SortUnlessSorted(v.begin(), v.end(), std::less<int>());
  EXPECT_EQ(v, expected);
}

TEST(SortUnlessSorted, RowsWrittenLateAreDealtIntoPiles) {
  // Ordered rows with some written late, as a thread's operators with each
  // parent after its children: far more than kMaxMergedRuns runs. Late rows
  // come in bursts of up to four, largest first, so they need several piles;
  // with one row in two late, more than kMaxPiles piles, rows set aside, and
  // beyond kMaxSetAsideShare the whole sort.
  std::mt19937 rng(13);
  for (size_t late_one_in : {size_t{40}, size_t{5}, size_t{4}, size_t{3}, size_t{2}}) {
    std::vector<int> v;
    std::vector<int> late;
    for (int i = 0; i < 20000; ++i) {
      if (rng() % late_one_in == 0) late.push_back(i);
      else v.push_back(i);
      if (late.size() > 3 || (i % 7 == 0 && !late.empty())) {  // flush the late rows, largest first
        std::sort(late.rbegin(), late.rend());
        v.insert(v.end(), late.begin(), late.end());
        late.clear();
      }
    }
    v.insert(v.end(), late.begin(), late.end());
    v.push_back(-1);  // smaller than every row before it
    v.insert(v.begin(), 5);  // a first row larger than those after it
    const std::vector<int> expected = Sorted(v);
    size_t descents = 0;
    for (size_t i = 1; i < v.size(); ++i) descents += v[i] < v[i - 1];
    ASSERT_GT(descents, kMaxMergedRuns) << late_one_in;
    SortUnlessSorted(v.begin(), v.end(), std::less<int>());
    EXPECT_EQ(v, expected) << late_one_in;
  }
  // An ordered block after another (a thread's CANN calls, then its
  // operators), the second with each parent after its two children, three
  // levels deep: each level and the first block are a pile.
  {
    std::vector<int> v;
    for (int i = 0; i < 3000; ++i) v.push_back(100000 + i);
    for (int root = 0; root < 4000; root += 8) {
      for (int mid = root + 1; mid < root + 8; mid += 4) {
        v.push_back(mid + 1);
        v.push_back(mid + 2);
        v.push_back(mid + 3);
        v.push_back(mid);
      }
      v.push_back(root);
    }
    const std::vector<int> expected = Sorted(v);
    SortUnlessSorted(v.begin(), v.end(), std::less<int>());
    EXPECT_EQ(v, expected);
  }
  // Ties broken by a second key, as the graph's comparators do.
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < 5000; ++i) pairs.emplace_back(i / 10, (i * 7919) % 5000);
  std::shuffle(pairs.begin() + 1000, pairs.begin() + 1400, rng);
  std::vector<std::pair<int, int>> expected = pairs;
  std::sort(expected.begin(), expected.end());
  SortUnlessSorted(pairs.begin(), pairs.end(), std::less<std::pair<int, int>>());
  EXPECT_EQ(pairs, expected);
}

TEST(GroupThenSort, GroupsByKeyRankThenWithin) {
  std::mt19937 rng(11);
  const size_t n = 3000;
  std::vector<int64_t> key(n), time(n);
  for (size_t i = 0; i < n; ++i) {
    key[i] = static_cast<int64_t>(rng() % 5) * 1000 - 2000;  // negative keys too
    time[i] = static_cast<int64_t>(i / 3);                     // mostly ordered, with ties
  }
  std::vector<uint32_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0u);
  std::shuffle(rows.begin() + 100, rows.begin() + 200, rng);  // a disordered stretch
  auto within = [&](uint32_t a, uint32_t b) { return time[a] != time[b] ? time[a] < time[b] : a < b; };
  const std::vector<uint32_t> got = GroupThenSort(rows, [&](uint32_t r) { return key[r]; }, within);
  std::vector<uint32_t> expected = rows;
  std::sort(expected.begin(), expected.end(),
            [&](uint32_t a, uint32_t b) { return key[a] != key[b] ? key[a] < key[b] : within(a, b); });
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(GroupThenSort({}, [&](uint32_t r) { return key[r]; }, within).empty());
}

}  // namespace
}  // namespace pypto
