// Counter samples (memory totals, AI Core frequency, hardware counters): a
// time series per (counter name, track), kept as a byte stream of deltas.
//
// A Kineto trace recorded with profile_memory writes a [memory] event per
// allocation and free, three counter rows each: 634 k rows in a 300 MB trace,
// 15 MB at 24 bytes a row, a quarter of the profile, that no analysis reads
// (only export and merge walk them, in order). In the stream a row takes about
// 5 bytes: the next sample of a series is close to its last (an allocation
// changes "Total Allocated" by its size; "Total Reserved" rarely changes), and
// the rows of one event share its time. Rows are read back in the order they
// were added, bit for bit (Reader).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/string_table.h"

namespace pypto {

struct CounterRow {
  StrId name = kEmptyStr;  // "Total Allocated", "AI Core Freq/MHz" …
  uint32_t track = 0;
  int64_t ts = 0;          // ns
  double value = 0;
  // The same row: the value compared bit for bit (-0.0 is not 0.0, a NaN is itself).
  bool operator==(const CounterRow& other) const;
};

class CounterTable {
 public:
  // Reads the rows back in the order they were added.
  class Reader {
   public:
    explicit Reader(const CounterTable& table);
    bool Next(CounterRow* row);

   private:
    friend class CounterTable;
    // The next row as the table keeps it: its series' index, time, value bits.
    bool NextEncoded(uint32_t* series, int64_t* ts, uint64_t* bits);

    const CounterTable& table_;
    size_t offset_ = 0;
    int64_t ts_ = 0;
    std::vector<uint64_t> last_bits_;
    std::vector<int64_t> last_integer_;
  };

  void Add(StrId counter, uint32_t track_row, int64_t time_ns, double value);
  void Add(const CounterRow& row) { Add(row.name, row.track, row.ts, row.value); }
  // Adds `other`'s rows in order, each series renamed by `rename` (asked once
  // per series of `other`: its name and track here). Faster than reading and
  // adding row by row: a staged chunk's rows are moved into the profile so.
  using SeriesRename = std::function<std::pair<StrId, uint32_t>(StrId name, uint32_t track)>;
  void Append(const CounterTable& other, const SeriesRename& rename);
  size_t size() const { return rows_; }
  std::vector<CounterRow> Rows() const;  // every row, decoded (tests, small tables)
  // Adds `delta_ns` to the time of the rows from `from_row` on; a time that
  // would leave the int64 range is clamped to its end. Returns how many were.
  uint64_t ShiftTimes(size_t from_row, int64_t delta_ns);
  void Clear();
  size_t MemoryBytes() const;
  bool operator==(const CounterTable& other) const;  // the same rows in the same order

 private:
  struct Series {
    StrId name;
    uint32_t track;
  };
  uint32_t SeriesOf(StrId counter, uint32_t track_row);
  void AddToSeries(uint32_t series, int64_t time_ns, uint64_t bits);

  std::vector<uint8_t> bytes_;
  size_t rows_ = 0;
  std::vector<Series> series_;
  std::unordered_map<uint64_t, uint32_t> series_index_;  // (name, track) -> series, past kLinearSeries
  // The encoder's state, which Reader rebuilds as it goes: the last row's time,
  // and per series the last value's bits and the last integral value. Only an
  // integer row changes the latter: a raw row's value is never an exact
  // integer, and a repeated value leaves both as they were.
  int64_t last_ts_ = 0;
  // The earliest and latest time of the rows: ShiftTimes moves every row by
  // rewriting the first row's time alone when neither leaves the int64 range.
  int64_t min_ts_ = std::numeric_limits<int64_t>::max();
  int64_t max_ts_ = std::numeric_limits<int64_t>::min();
  std::vector<uint64_t> last_bits_;
  std::vector<int64_t> last_integer_;
};

}  // namespace pypto
