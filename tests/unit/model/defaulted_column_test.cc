// DefaultedColumn and the columns built the same way (IdColumn's all-absent
// state, OwnerRunTable): no storage while every row holds the default, the
// same values read back once a row does not.
#include "model/defaulted_column.h"

#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "model/profile.h"

namespace pypto {
namespace {

// Expected: rows of the default cost nothing however they come (push_back,
// assign, resize, Append); the first other value, by push_back or by set,
// keeps every row, and each reads back as written.
TEST(DefaultedColumn, KeepsNothingUntilARowDiffersThenEveryRow) {
  DefaultedColumn<int32_t, -1> column;
  column.reserve(100);
  for (int i = 0; i < 10; ++i) column.push_back(-1);
  column.resize(20);
  column.set(3, -1);
  EXPECT_EQ(column.size(), 20u);
  EXPECT_TRUE(column.all_default());
  EXPECT_EQ(column.MemoryBytes(), 0u);
  EXPECT_EQ(column[19], -1);

  column.set(7, 42);  // the first other value: every row is kept from here
  EXPECT_FALSE(column.all_default());
  EXPECT_GE(column.MemoryBytes(), 100 * sizeof(int32_t));  // sized for the reserve at once
  column.push_back(5);
  column.push_back(-1);
  std::vector<int32_t> expected(20, -1);
  expected[7] = 42;
  expected.push_back(5);
  expected.push_back(-1);
  ASSERT_EQ(column.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(column[i], expected[i]) << i;

  // Appends: kept after all-default, all-default after kept.
  DefaultedColumn<int32_t, -1> defaults;
  defaults.assign(3, -1);
  EXPECT_EQ(defaults.MemoryBytes(), 0u);
  defaults.Append(column);
  defaults.Append(DefaultedColumn<int32_t, -1>{});
  column.Append(defaults);
  ASSERT_EQ(defaults.size(), 3 + expected.size());
  for (size_t i = 0; i < defaults.size(); ++i) EXPECT_EQ(defaults[i], i < 3 ? -1 : expected[i - 3]) << i;
  ASSERT_EQ(column.size(), 2 * expected.size() + 3);
  EXPECT_EQ(column[expected.size() + 2], -1);
  EXPECT_EQ(column[expected.size() + 3 + 7], 42);

  // The first row pushed may be the one that differs.
  DefaultedColumn<uint8_t, 0> flags;
  flags.push_back(1);
  flags.push_back(0);
  EXPECT_EQ(flags.size(), 2u);
  EXPECT_EQ(flags[0], 1);
  EXPECT_EQ(flags[1], 0);
  flags.clear();
  EXPECT_EQ(flags.size(), 0u);
  EXPECT_EQ(flags.MemoryBytes(), 0u);
}

// Expected: equal by value whether the rows are kept or not; a kept column
// resized back to defaults still compares equal to an all-default one.
TEST(DefaultedColumn, EqualByValueHoweverKept) {
  DefaultedColumn<int64_t, 0> kept, plain;
  kept.push_back(0);
  kept.push_back(9);
  kept.set(1, 0);  // kept, though every row is the default again
  plain.resize(2);
  EXPECT_TRUE(kept == plain);
  EXPECT_TRUE(plain == kept);
  plain.push_back(1);
  EXPECT_FALSE(kept == plain);
  kept.push_back(2);
  EXPECT_FALSE(kept == plain);
  kept.set(2, 1);
  EXPECT_TRUE(kept == plain);
}

// An Ascend CSV's ids are all absent: no storage. Expected: kNoId rows cost
// nothing; the first id keeps every row (the absent ones as kNoId), narrow or
// wide as the id needs; appends across the three states keep every id.
TEST(IdColumn, KeepsNothingWhileEveryIdIsAbsent) {
  const int64_t wide_id = int64_t{1} << 40;
  IdColumn absent;
  absent.reserve(64);
  for (int i = 0; i < 5; ++i) absent.push_back(kNoId);
  absent.set(2, kNoId);
  EXPECT_EQ(absent.size(), 5u);
  EXPECT_EQ(absent.MemoryBytes(), 0u);
  EXPECT_EQ(absent[4], kNoId);

  IdColumn narrow = absent;
  narrow.set(3, 7);
  EXPECT_EQ(narrow.MemoryBytes(), 64 * sizeof(int32_t));  // sized for the reserve at once
  IdColumn wide = absent;
  wide.push_back(wide_id);
  EXPECT_GE(wide.MemoryBytes(), 6 * sizeof(int64_t));
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(narrow[i], i == 3 ? 7 : kNoId) << i;
    EXPECT_EQ(wide[i], kNoId) << i;
  }
  EXPECT_EQ(wide[5], wide_id);
  EXPECT_FALSE(narrow == absent);
  IdColumn absent_too;
  absent_too.push_back(kNoId);
  absent_too.set(0, 1);
  absent_too.set(0, kNoId);  // kept, all absent again
  IdColumn one_absent;
  one_absent.push_back(kNoId);
  EXPECT_TRUE(absent_too == one_absent);

  // absent + narrow + absent + wide + absent, appended in turn to each state.
  for (const IdColumn* start : {&absent, &narrow, &wide}) {
    IdColumn all = *start;
    std::vector<int64_t> expected;
    for (size_t i = 0; i < start->size(); ++i) expected.push_back((*start)[i]);
    for (const IdColumn* part : {&absent, &narrow, &absent, &wide, &absent}) {
      all.Append(*part);
      for (size_t i = 0; i < part->size(); ++i) expected.push_back((*part)[i]);
    }
    ASSERT_EQ(all.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(all[i], expected[i]) << i;
  }
  IdColumn only_absent = absent;
  only_absent.Append(absent);
  EXPECT_EQ(only_absent.size(), 10u);
  EXPECT_EQ(only_absent.MemoryBytes(), 0u);
}

// Runs as a kernel_details.csv makes them (run r: device task r) keep 4 bytes
// a run; begins past 2^32 rows are told by where the high part grows. The
// begins here are written directly: no table of 2^32 rows is needed to place
// them. Expected: each run's begin, owner and kind as pushed, and RunOf the
// last run beginning at or before a row, on both sides of each boundary.
TEST(OwnerRunTable, BeginsPastTwoToThe32AndOwnersOffTheRunIndex) {
  const size_t k4G = size_t{1} << 32;
  OwnerRunTable csv;
  for (uint32_t r = 0; r < 1000; ++r) csv.push_back(size_t{27} * r, OwnerKind::kDeviceTask, r);
  EXPECT_EQ(csv.MemoryBytes(), 1024 * sizeof(uint32_t));  // the begins only (vector growth to 1024)
  EXPECT_EQ(csv.RunOf(27 * 500 + 26), 500u);
  EXPECT_EQ(csv.owner(999), 999u);

  OwnerRunTable runs;
  struct Run {
    size_t begin;
    OwnerKind kind;
    uint32_t owner;
  };
  const std::vector<Run> pushed = {
      {0, OwnerKind::kDeviceTask, 0},
      {10, OwnerKind::kHostOp, 0},                 // owner below its run index
      {k4G - 1, OwnerKind::kDeviceTask, 0xFFFFFFFFu},
      {k4G + 5, OwnerKind::kTrack, 3},
      {3 * k4G + 2, OwnerKind::kDeviceTask, 4},  // a run over 2^32 rows before it
      {3 * k4G + 9, OwnerKind::kStep, 1},
  };
  for (const Run& r : pushed) runs.push_back(r.begin, r.kind, r.owner);
  ASSERT_EQ(runs.size(), pushed.size());
  for (size_t r = 0; r < pushed.size(); ++r) {
    EXPECT_EQ(runs.begin(r), pushed[r].begin) << r;
    EXPECT_EQ(runs.kind(r), pushed[r].kind) << r;
    EXPECT_EQ(runs.owner(r), pushed[r].owner) << r;
    EXPECT_EQ(runs.RunOf(pushed[r].begin), r) << r;
    if (r > 0) EXPECT_EQ(runs.RunOf(pushed[r].begin - 1), r - 1) << r;
  }
  EXPECT_EQ(runs.RunOf(2 * k4G + 7), 3u);   // a high part where no run begins
  EXPECT_EQ(runs.RunOf(3 * k4G + 1), 3u);
  EXPECT_EQ(runs.RunOf(5 * k4G), 5u);       // past the last run's start
}

}  // namespace
}  // namespace pypto
