#include "model/counter_table.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace pypto {
namespace {

constexpr int64_t kMaxTs = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinTs = std::numeric_limits<int64_t>::min();

// The table's rows against the rows given to it, bit for bit.
void ExpectRows(const CounterTable& table, const std::vector<CounterRow>& expected) {
  ASSERT_EQ(table.size(), expected.size());
  const std::vector<CounterRow> rows = table.Rows();
  ASSERT_EQ(rows.size(), expected.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(rows[i] == expected[i]) << "row " << i << ": value " << rows[i].value << " vs " << expected[i].value
                                        << ", ts " << rows[i].ts << " vs " << expected[i].ts;
  }
}

TEST(CounterTable, EveryRowReadsBackBitForBit) {
  // Each value mode and its edges: the same value again; integers and their
  // differences at the 2^53 limit of exact doubles (2^53 + 2 is an exact
  // double past it, so it must go whole); -0.0, which equals 0 but is not an
  // integer; a NaN with a payload; infinities; fractions and extremes. Times
  // jump across the whole int64 range, so their differences wrap.
  const double two53 = 9007199254740992.0;
  const double nan_payload = std::bit_cast<double>(uint64_t{0x7ff8000000001234});
  const std::vector<double> values = {0.0,   0.0,    -0.0,  -0.0,   1.0,    two53,  -two53, two53 + 2,
                                      -two53 - 2, 0.5, nan_payload, nan_payload, INFINITY, -INFINITY,
                                      1e300, 5e-324, -1.0, 123456789.0, 123456789.0, 3.0};
  const std::vector<int64_t> times = {0, 0, 1, kMaxTs, kMinTs, kMinTs, -1, 1000, kMaxTs, 0};
  std::vector<CounterRow> expected;
  CounterTable table;
  for (size_t i = 0; i < values.size(); ++i) {
    const CounterRow row{static_cast<StrId>(1 + i % 2), static_cast<uint32_t>(i % 3), times[i % times.size()],
                         values[i]};
    table.Add(row);
    expected.push_back(row);
  }
  ExpectRows(table, expected);
}

TEST(CounterTable, RandomRowsOfManySeriesReadBack) {
  // 40 series (past the table's scan of 16, so its index is used), 200,000
  // rows: memory-like integers near their series' last value, any double bit
  // pattern, repeats, and times that go back and forth.
  std::mt19937_64 rng(7);
  std::vector<CounterRow> expected;
  CounterTable table;
  std::vector<double> last(40, 0);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t s = static_cast<uint32_t>(rng() % 40);
    double value;
    switch (rng() % 4) {
      case 0: value = last[s]; break;
      case 1: value = std::round(last[s]) + static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000); break;
      case 2: value = std::bit_cast<double>(rng()); break;
      default: value = static_cast<double>(rng() % 1000) / 8.0; break;
    }
    last[s] = std::isfinite(value) ? value : 0;
    const int64_t ts = static_cast<int64_t>(rng() % 3 == 0 ? rng() : 1'700'000'000'000'000'000ULL + rng() % 1000000);
    const CounterRow row{static_cast<StrId>(100 + s % 5), s / 5, ts, value};
    table.Add(row);
    expected.push_back(row);
  }
  ExpectRows(table, expected);
}

TEST(CounterTable, MemoryEventsTakeFewBytesARow) {
  // A [memory] event as Kineto writes one per allocation: three rows at one
  // time, "Total Allocated" moved by the allocation's size, "Total Reserved"
  // unchanged, "Allocation Bytes" the size (+-), events 5-15 us apart. A row
  // is a header byte, the time difference as a zigzag varint (15,000 ns ->
  // 30,000 < 2^21: 3 bytes; 0: 1 byte) and the value difference (a size up
  // to 1,024,000 -> at most 3 bytes; from the last size, up to 2,048,000 ->
  // 4 bytes; unchanged: none). An event: (1+3+3) + (1+1) + (1+1+4) = 15 bytes,
  // 5 a row; the byte vector's capacity at most doubles that: 10 a row. The
  // 24 bytes a row of four plain columns fail the bound of 12.
  std::mt19937_64 rng(3);
  CounterTable table;
  std::vector<CounterRow> expected;
  int64_t ts = 1'700'000'000'000'000'000;
  double allocated = 4e9, reserved = 6e9;
  constexpr int kEvents = 30000;
  for (int i = 0; i < kEvents; ++i) {
    ts += 5000 + static_cast<int64_t>(rng() % 10000);
    const double size = static_cast<double>(512 * (1 + rng() % 2000)) * (rng() % 2 ? 1 : -1);
    allocated += size;
    for (const CounterRow& row : {CounterRow{1, 0, ts, allocated}, CounterRow{2, 0, ts, reserved}, CounterRow{3, 0, ts, size}}) {
      table.Add(row);
      expected.push_back(row);
    }
  }
  ExpectRows(table, expected);
  EXPECT_LT(table.MemoryBytes(), size_t{12} * 3 * kEvents);
}

TEST(CounterTable, AppendRenamesEachSeriesAndKeepsEveryRow) {
  // A profile's table with rows of its own, then a staged chunk's rows whose
  // string and track ids are the chunk's: name id n becomes n + 100, track k
  // becomes 7 - k. The chunk's rows start from its own state (time 0, values
  // 0), so each must be written again relative to the profile's last row and
  // series values; one of its series (name 1 + 100, track 7) is one the
  // profile already has, so its first chunk row follows the profile's 50.
  std::mt19937_64 rng(11);
  CounterTable into, chunk;
  std::vector<CounterRow> expected;
  for (int i = 0; i < 1000; ++i) {
    const CounterRow row{101, 7, 1000 + i, 50.0 + static_cast<double>(rng() % 3)};
    into.Add(row);
    expected.push_back(row);
  }
  for (int i = 0; i < 5000; ++i) {
    const StrId name = static_cast<StrId>(1 + rng() % 3);
    const uint32_t track = static_cast<uint32_t>(rng() % 2);
    const double value = rng() % 4 == 0 ? std::bit_cast<double>(rng()) : static_cast<double>(rng() % 100000);
    const CounterRow row{name, track, static_cast<int64_t>(rng() % 1000000), value};
    chunk.Add(row);
    expected.push_back({name + 100, 7 - track, row.ts, value});
  }
  into.Append(chunk, [](StrId name, uint32_t track) { return std::make_pair(name + 100, 7 - track); });
  ExpectRows(into, expected);
  // Appending an empty table, or to an empty one, changes nothing else.
  into.Append(CounterTable(), [](StrId name, uint32_t track) { return std::make_pair(name, track); });
  ExpectRows(into, expected);
  CounterTable empty;
  empty.Append(chunk, [](StrId name, uint32_t track) { return std::make_pair(name, track); });
  EXPECT_TRUE(empty == chunk);
}

TEST(CounterTable, ShiftTimesMovesTheRowsFromOneOnAndClampsAtTheEnds) {
  // Rows 0-1 stay; rows 2-4 move by +100 ns; row 3 (max - 50) would pass
  // INT64_MAX and is clamped to it; then a shift by -2^62 moves rows 4 on:
  // row 4 (200 + 100 - 2^62) stays in range, nothing clamps.
  CounterTable table;
  std::vector<CounterRow> rows = {
      {1, 0, 10, 1.0}, {1, 0, 20, 2.0}, {1, 0, 30, 3.0}, {2, 1, kMaxTs - 50, 0.25}, {2, 1, 200, 5.0}};
  for (const CounterRow& row : rows) table.Add(row);
  EXPECT_EQ(table.ShiftTimes(2, 100), 1u);
  rows[2].ts = 130;
  rows[3].ts = kMaxTs;
  rows[4].ts = 300;
  ExpectRows(table, rows);
  EXPECT_EQ(table.ShiftTimes(4, -(int64_t{1} << 62)), 0u);
  rows[4].ts = 300 - (int64_t{1} << 62);
  ExpectRows(table, rows);
  // Below INT64_MIN clamps to it.
  EXPECT_EQ(table.ShiftTimes(4, kMinTs), 1u);
  rows[4].ts = kMinTs;
  ExpectRows(table, rows);
  // Past the last row, or by 0: nothing moves.
  EXPECT_EQ(table.ShiftTimes(5, 7), 0u);
  EXPECT_EQ(table.ShiftTimes(0, 0), 0u);
  ExpectRows(table, rows);
}

TEST(CounterTable, ShiftingEveryRowGivesEachRowItsTimePlusTheShift) {
  // From row 0, where no time leaves the int64 range, the shift rewrites the
  // first row's time difference alone (the others are differences from the
  // row before). Whatever the shift does inside, each row must read back with
  // its own time plus the shift, the values and series as they were, and rows
  // added afterwards must follow on: checked against the rows shifted one by
  // one, for shifts that make the first difference's varint longer, shorter
  // (to 0) and negative, and for one that clamps (the row-by-row path).
  std::mt19937_64 rng(7);
  for (const int64_t shift : {int64_t{1} << 60, int64_t{-1000}, int64_t{1}, -(int64_t{1} << 40), kMaxTs}) {
    CounterTable table;
    std::vector<CounterRow> rows;
    int64_t ts = 1000;
    for (int i = 0; i < 200; ++i) {
      ts += static_cast<int64_t>(rng() % 5000);
      const CounterRow row{static_cast<StrId>(1 + rng() % 3), static_cast<uint32_t>(rng() % 2), ts,
                           (rng() % 4 == 0) ? 0.5 * static_cast<double>(rng() % 100) : static_cast<double>(rng() % 7)};
      table.Add(row);
      rows.push_back(row);
    }
    uint64_t expected_clamped = 0;
    for (CounterRow& row : rows) {
      if (__builtin_add_overflow(row.ts, shift, &row.ts)) {
        row.ts = kMaxTs;
        ++expected_clamped;
      }
    }
    SCOPED_TRACE("shift " + std::to_string(shift));
    EXPECT_EQ(table.ShiftTimes(0, shift), expected_clamped);
    ExpectRows(table, rows);
    const CounterRow later{2, 1, expected_clamped ? kMaxTs : rows.back().ts + 3, 4.0};
    table.Add(later);
    rows.push_back(later);
    ExpectRows(table, rows);
  }
  // The first row's time made 0: its difference takes one byte.
  CounterTable table;
  table.Add(1, 0, 123456789, 1.0);
  table.Add(1, 0, 123456790, 2.0);
  EXPECT_EQ(table.ShiftTimes(0, -123456789), 0u);
  ExpectRows(table, {{1, 0, 0, 1.0}, {1, 0, 1, 2.0}});
}

TEST(CounterTable, EqualityIsByRowsAndClearEmpties) {
  CounterTable a, b;
  a.Add(1, 0, 5, 1.5);
  a.Add(1, 0, 6, -0.0);
  b.Add(1, 0, 5, 1.5);
  EXPECT_FALSE(a == b);
  b.Add(1, 0, 6, 0.0);  // equal to -0.0 as a number, not as a counter value
  EXPECT_FALSE(a == b);
  b.Clear();
  EXPECT_EQ(b.size(), 0u);
  b.Add(1, 0, 5, 1.5);
  b.Add(1, 0, 6, -0.0);
  EXPECT_TRUE(a == b);
}

}  // namespace
}  // namespace pypto
