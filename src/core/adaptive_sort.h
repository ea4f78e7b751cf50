// Sorting rows that mostly come in order: importers write events in time
// order per thread, or as a few ordered blocks, so the graph's and the
// diagnosis' sorts by (track, time, row) are usually a linear check or a few
// merges instead of an n log n sort. Every comparator here must be a total
// order (ties broken by row), so the result is std::sort's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <vector>

namespace pypto {

// Most ascending runs SortUnlessSorted merges instead of sorting: 64, i.e. at
// most 6 linear merge passes, still cheaper than an n log n sort of 10^6 rows.
inline constexpr size_t kMaxMergedRuns = 64;
// With more runs, SortUnlessSorted deals the rows into at most this many
// ascending piles before it gives up and sorts: a profiler DB writes a
// thread's operators in time order but each parent after its children (51 k
// of 2.1 M rows on the bench DB), after that thread's CANN calls, so its rows
// are one pile per nesting level and one for the CANN block.
inline constexpr size_t kMaxPiles = 16;
// ...and sets aside the rows no pile takes, sorting them alone, while they are
// at most one row in this many (4: a sort of a quarter of the rows is still
// well under the sort of all of them).
inline constexpr size_t kMaxSetAsideShare = 4;

// Merges the ascending runs of [first, last) that start at `runs` (then n)
// pairwise, log2(runs) linear passes.
template <typename It, typename Less>
void MergeRuns(It first, std::vector<std::ptrdiff_t> runs, Less less) {
  const std::ptrdiff_t n = runs.back();
  while (runs.size() > 2) {
    std::vector<std::ptrdiff_t> merged;
    for (size_t r = 0; r + 1 < runs.size(); r += 2) {
      merged.push_back(runs[r]);
      if (r + 2 < runs.size()) std::inplace_merge(first + runs[r], first + runs[r + 1], first + runs[r + 2], less);
    }
    merged.push_back(n);
    runs.swap(merged);
  }
}

// Patience dealing: each row goes onto the pile whose last row is the largest
// not above it (the piles are kept in the order of their last rows, and the
// pile the row before went to is tried first), or onto a new pile when none
// is. Rows no pile takes once there are kMaxPiles are set aside. A first pass
// only labels each row with its pile (a byte a row); the rows are then placed
// pile after pile into one buffer of the range's size, the rows set aside
// sorted, and the runs merged back in the range. False (the range unchanged)
// when too many rows would be set aside.
template <typename It, typename Less>
bool SortByPiles(It first, It last, Less less) {
  using Value = typename std::iterator_traits<It>::value_type;
  static_assert(kMaxPiles < 255);
  constexpr uint8_t kSetAside = 255;
  const size_t n = static_cast<size_t>(last - first);
  std::vector<uint8_t> pile_of(n);
  std::vector<Value> tail;              // by pile id (order of creation): its last row
  std::vector<uint8_t> by_tail;         // pile ids, ascending by their last rows
  std::vector<size_t> pile_rows;        // by pile id: how many rows it took
  size_t set_aside = 0;
  size_t previous = 0;                  // position in by_tail of the last pile used
  for (size_t i = 0; i < n; ++i) {
    const Value& row = first[i];
    auto takes = [&](size_t k) {  // the pile at by_tail[k] has the largest last row not above `row`
      return !less(row, tail[by_tail[k]]) && (k + 1 == by_tail.size() || less(row, tail[by_tail[k + 1]]));
    };
    size_t k = previous;
    if (k >= by_tail.size() || !takes(k)) {
      // The first pile whose last row is above `row`; the one before it takes the row.
      size_t lo = 0, hi = by_tail.size();
      while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (less(row, tail[by_tail[mid]])) hi = mid;
        else lo = mid + 1;
      }
      if (lo == 0) {
        if (by_tail.size() == kMaxPiles) {
          pile_of[i] = kSetAside;
          if (++set_aside > n / kMaxSetAsideShare) return false;
          continue;
        }
        by_tail.insert(by_tail.begin(), static_cast<uint8_t>(tail.size()));
        tail.push_back(row);
        pile_rows.push_back(0);
      }
      k = lo == 0 ? 0 : lo - 1;
    }
    previous = k;
    const uint8_t pile = by_tail[k];
    tail[pile] = row;
    pile_of[i] = pile;
    ++pile_rows[pile];
  }
  // Where each pile's rows start in the buffer; the rows set aside go last.
  std::vector<std::ptrdiff_t> runs;
  std::vector<size_t> next(tail.size() + 1);
  size_t at = 0;
  for (size_t pile = 0; pile < tail.size(); ++pile) {
    runs.push_back(static_cast<std::ptrdiff_t>(at));
    next[pile] = at;
    at += pile_rows[pile];
  }
  next[tail.size()] = at;
  if (set_aside > 0) runs.push_back(static_cast<std::ptrdiff_t>(at));
  runs.push_back(static_cast<std::ptrdiff_t>(n));
  {
    std::vector<Value> placed(n);
    for (size_t i = 0; i < n; ++i) placed[next[pile_of[i] == kSetAside ? tail.size() : pile_of[i]]++] = first[i];
    std::copy(placed.begin(), placed.end(), first);
  }
  std::vector<uint8_t>().swap(pile_of);
  std::sort(first + static_cast<std::ptrdiff_t>(at), last, less);
  MergeRuns(first, std::move(runs), less);
  return true;
}

// Sorts [first, last) adaptively: importers write events mostly in time order
// (a Kineto trace's host ops come pre-ordered per thread, or as a few ordered
// blocks, one per event category), so an ordered range costs one linear
// check, a range of a few ordered runs is merged run by run, and a range of
// many runs that deals into a few ascending piles (SortByPiles) has those
// merged; anything else goes to std::sort. Only for comparators that are a
// total order (ties broken by row), so the result is the same either way.
template <typename It, typename Less>
void SortUnlessSorted(It first, It last, Less less) {
  const std::ptrdiff_t n = last - first;
  if (n < 2) return;
  std::vector<std::ptrdiff_t> runs{0};  // starts of ascending runs, then n
  for (std::ptrdiff_t i = 1; i < n; ++i) {
    if (!less(first[i], first[i - 1])) continue;
    runs.push_back(i);
    if (runs.size() > kMaxMergedRuns) {
      if (!SortByPiles(first, last, less)) std::sort(first, last, less);
      return;
    }
  }
  runs.push_back(n);
  MergeRuns(first, std::move(runs), less);
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
  std::vector<size_t> start(rank.size() + 1, 0);
  std::vector<uint32_t> out(rows.size());
  {
    // Each row's group rank, freed before the groups are sorted (their sort
    // may take a buffer of its own).
    std::vector<uint32_t> group(rows.size());
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
    for (size_t g = 0; g < rank.size(); ++g) start[g + 1] += start[g];
    std::vector<size_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < rows.size(); ++i) out[fill[group[i]]++] = rows[i];
  }
  for (size_t g = 0; g < rank.size(); ++g)
    SortUnlessSorted(out.begin() + static_cast<std::ptrdiff_t>(start[g]),
                     out.begin() + static_cast<std::ptrdiff_t>(start[g + 1]), within);
  return out;
}

}  // namespace pypto
