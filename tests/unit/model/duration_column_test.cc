#include "model/duration_column.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace pypto {
namespace {

TEST(DurationColumn, ShortAndLongTimesReadBackAndChangeBetweenStorages) {
  // 4294967294 ns (2^32 - 2) is the longest kept in the row; 2^32 - 1 is the
  // row's "look aside" mark, so it and anything longer, or negative, goes to
  // the side table. A row then changed back to a short time must leave it.
  constexpr int64_t kLongestShort = 4294967294;
  const std::vector<int64_t> values = {0,  1, kLongestShort, kLongestShort + 1, int64_t{1} << 40,
                                       -1, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  DurationColumn column;
  column.assign(values.size());
  for (size_t i = 0; i < values.size(); ++i) column.set(i, values[i]);
  ASSERT_EQ(column.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(column[i], values[i]) << i;
  // The narrow part is 4 bytes a row; the 5 long or negative ones sit aside.
  const size_t narrow_only = values.size() * sizeof(uint32_t);
  EXPECT_GT(column.MemoryBytes(), narrow_only);
  for (size_t i = 0; i < values.size(); ++i) column.set(i, 7);
  EXPECT_EQ(column.MemoryBytes(), narrow_only);
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(column[i], 7);
}

TEST(DurationColumn, AddAccumulatesAcrossTheFourByteLimit) {
  // 3 s + 3 s = 6 s passes 2^32 - 1 ns (4.29 s): a parent's device time summed
  // from its children's.
  DurationColumn column;
  column.assign(2);
  column.add(1, 3'000'000'000);
  column.add(1, 3'000'000'000);
  EXPECT_EQ(column[0], 0);
  EXPECT_EQ(column[1], 6'000'000'000);
  column.add(1, -5'000'000'000);
  EXPECT_EQ(column[1], 1'000'000'000);
}

}  // namespace
}  // namespace pypto
