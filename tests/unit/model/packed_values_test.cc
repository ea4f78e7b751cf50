#include "model/packed_values.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace pypto {
namespace {

TEST(PackedValues, EveryWidthReadsBackAcrossBlocks) {
  // Each width's edges (0; 1..255: one byte; 256..65535: two; above: four),
  // then random values of every width in runs, over many 32-row blocks, so
  // that each block mixes widths at every position.
  std::vector<uint32_t> values = {0, 1, 0xFF, 0x100, 0xFFFF, 0x10000, 0xFFFFFFFF, 0, 0x7FFFFFFF, 0x80000000};
  std::mt19937 random(7);
  const uint32_t width_limits[4] = {0, 0xFF, 0xFFFF, 0xFFFFFFFF};
  for (int i = 0; i < 5000; ++i) {
    const uint32_t limit = width_limits[random() % 4];
    const int run = 1 + static_cast<int>(random() % 40);
    for (int k = 0; k < run; ++k) values.push_back(limit == 0 ? 0 : random() % limit + 1);
  }
  PackedValues column;
  for (uint32_t v : values) column.push_back(v);
  ASSERT_EQ(column.size(), values.size());
  size_t mismatches = 0;
  for (size_t row = 0; row < values.size(); ++row) mismatches += column[row] != values[row];
  EXPECT_EQ(mismatches, 0u);
  // Read out of order too: no access depends on the one before.
  for (int i = 0; i < 2000; ++i) {
    const size_t row = random() % values.size();
    ASSERT_EQ(column[row], values[row]) << row;
  }
}

TEST(PackedValues, MemoryIsEachValuesWidthPlusSixteenBytesABlock) {
  // 64 rows = 2 blocks of 32. Row values cycle through 0, 7, 300, 70000:
  // widths 0, 1, 2, 4 bytes, 16 rows of each: 16 * (0 + 1 + 2 + 4) = 112
  // bytes of values, plus 2 blocks * (8 bytes of width codes + 8 of offset).
  const uint32_t cycle[4] = {0, 7, 300, 70000};
  PackedValues column;
  column.reserve(1000);  // a reserve is address space, not counted
  for (int row = 0; row < 64; ++row) column.push_back(cycle[row % 4]);
  EXPECT_EQ(column.MemoryBytes(), 112u + 2u * 16u);
  for (int row = 0; row < 64; ++row) EXPECT_EQ(column[row], cycle[row % 4]) << row;
  // One more row opens a third block.
  column.push_back(0);
  EXPECT_EQ(column.MemoryBytes(), 112u + 3u * 16u);
}

TEST(PackedValues, EqualSequencesCompareEqualAndClearEmpties) {
  PackedValues a, b;
  for (uint32_t v : {5u, 0u, 400u, 1u << 20}) {
    a.push_back(v);
    b.push_back(v);
  }
  EXPECT_TRUE(a == b);
  const PackedValues copy = a;  // a copy owns its own bytes
  a.clear();
  EXPECT_TRUE(copy == b);
  EXPECT_EQ(copy[2], 400u);
  PackedValues moved = std::move(b);
  EXPECT_TRUE(moved == copy);
  a = moved;
  EXPECT_TRUE(a == copy);
  b = moved;
  b.clear();
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.MemoryBytes(), 0u);
  for (uint32_t v : {5u, 0u, 400u, 1u << 21}) b.push_back(v);
  EXPECT_FALSE(a == b);
  EXPECT_EQ(b[3], 1u << 21);
}

}  // namespace
}  // namespace pypto
