#include "model/counter_table.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace pypto {
namespace {

// A row is: varint(series << 2 | value mode), zigzag varint of the time minus
// the previous row's, then the value as its mode says.
enum ValueMode : uint32_t {
  kSameAsLast = 0,     // the series' last value, bit for bit (nothing follows)
  kIntegerDelta = 1,   // an integer: zigzag varint of it minus the series' last integer
  kRawBits = 2,        // any other double: its 8 bytes
};
constexpr uint32_t kModeBits = 2;

// Integers up to 2^53 are exact doubles, so such a value converts to int64 and
// back unchanged, and the difference of two fits int64 with room to spare.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

bool IsExactInteger(double v) {
  return std::fabs(v) <= kMaxExactInteger && v == std::trunc(v) && !(v == 0 && std::signbit(v));
}

// Up to this many series the table looks a series up by scanning: a profile
// has a handful (three memory counters per device, a frequency per chip).
constexpr size_t kLinearSeries = 16;

// Writes v at `out`; returns the byte after it. A row is put together in a
// local buffer and appended once, not pushed byte by byte.
uint8_t* PutVarint(uint8_t* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}
// The most a row takes: three varints of up to 10 bytes, or two and 8 bytes.
constexpr size_t kMaxRowBytes = 30;

uint64_t GetVarint(const std::vector<uint8_t>& in, size_t* offset) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t byte = in[(*offset)++];
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
}

// Differences in two's complement (wrapping, so any two int64 have one).
uint64_t ZigZag(uint64_t difference) {
  const int64_t d = static_cast<int64_t>(difference);
  return (difference << 1) ^ static_cast<uint64_t>(d >> 63);
}
uint64_t UnZigZag(uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

}  // namespace

bool CounterRow::operator==(const CounterRow& other) const {
  return name == other.name && track == other.track && ts == other.ts &&
         std::bit_cast<uint64_t>(value) == std::bit_cast<uint64_t>(other.value);
}

uint32_t CounterTable::SeriesOf(StrId counter, uint32_t track_row) {
  if (series_.size() <= kLinearSeries) {
    for (uint32_t s = 0; s < series_.size(); ++s)
      if (series_[s].name == counter && series_[s].track == track_row) return s;
  } else {
    auto it = series_index_.find(static_cast<uint64_t>(counter) << 32 | track_row);
    if (it != series_index_.end()) return it->second;
  }
  const uint32_t s = static_cast<uint32_t>(series_.size());
  series_.push_back({counter, track_row});
  last_bits_.push_back(0);  // +0.0: the state every series starts from, here and in Reader
  last_integer_.push_back(0);
  if (series_.size() == kLinearSeries + 1) {
    for (uint32_t k = 0; k < series_.size(); ++k)
      series_index_.emplace(static_cast<uint64_t>(series_[k].name) << 32 | series_[k].track, k);
  } else if (series_.size() > kLinearSeries + 1) {
    series_index_.emplace(static_cast<uint64_t>(counter) << 32 | track_row, s);
  }
  return s;
}

void CounterTable::Add(StrId counter, uint32_t track_row, int64_t time_ns, double value) {
  AddToSeries(SeriesOf(counter, track_row), time_ns, std::bit_cast<uint64_t>(value));
}

void CounterTable::AddToSeries(uint32_t s, int64_t time_ns, uint64_t bits) {
  const double value = std::bit_cast<double>(bits);
  uint32_t mode = kRawBits;
  if (bits == last_bits_[s]) {
    mode = kSameAsLast;
  } else if (IsExactInteger(value)) {
    mode = kIntegerDelta;
  }
  uint8_t row[kMaxRowBytes];
  uint8_t* at = PutVarint(row, static_cast<uint64_t>(s) << kModeBits | mode);
  at = PutVarint(at, ZigZag(static_cast<uint64_t>(time_ns) - static_cast<uint64_t>(last_ts_)));
  if (mode == kIntegerDelta) {
    const int64_t integer = static_cast<int64_t>(value);
    at = PutVarint(at, ZigZag(static_cast<uint64_t>(integer) - static_cast<uint64_t>(last_integer_[s])));
    last_integer_[s] = integer;
  } else if (mode == kRawBits) {
    for (int k = 0; k < 8; ++k) *at++ = static_cast<uint8_t>(bits >> (8 * k));
  }
  bytes_.insert(bytes_.end(), row, at);
  last_ts_ = time_ns;
  min_ts_ = std::min(min_ts_, time_ns);
  max_ts_ = std::max(max_ts_, time_ns);
  last_bits_[s] = bits;
  ++rows_;
}

void CounterTable::Append(const CounterTable& other, const SeriesRename& rename) {
  std::vector<uint32_t> series_here(other.series_.size());
  for (size_t s = 0; s < other.series_.size(); ++s) {
    const auto [name, track] = rename(other.series_[s].name, other.series_[s].track);
    series_here[s] = SeriesOf(name, track);
  }
  // About as many bytes again; grown geometrically, as push_back would.
  const size_t need = bytes_.size() + other.bytes_.size() + kMaxRowBytes;
  if (need > bytes_.capacity()) bytes_.reserve(std::max(need, 2 * bytes_.capacity()));
  Reader reader(other);
  uint32_t s;
  int64_t ts;
  uint64_t bits;
  while (reader.NextEncoded(&s, &ts, &bits)) AddToSeries(series_here[s], ts, bits);
}

CounterTable::Reader::Reader(const CounterTable& table)
    : table_(table), last_bits_(table.series_.size(), 0), last_integer_(table.series_.size(), 0) {}

bool CounterTable::Reader::NextEncoded(uint32_t* series, int64_t* ts, uint64_t* bits_out) {
  if (offset_ >= table_.bytes_.size()) return false;
  const uint64_t header = GetVarint(table_.bytes_, &offset_);
  const uint32_t s = static_cast<uint32_t>(header >> kModeBits);
  const uint32_t mode = static_cast<uint32_t>(header & ((1u << kModeBits) - 1));
  ts_ = static_cast<int64_t>(static_cast<uint64_t>(ts_) + UnZigZag(GetVarint(table_.bytes_, &offset_)));
  uint64_t bits = last_bits_[s];
  if (mode == kIntegerDelta) {
    const int64_t integer = static_cast<int64_t>(static_cast<uint64_t>(last_integer_[s]) +
                                                 UnZigZag(GetVarint(table_.bytes_, &offset_)));
    bits = std::bit_cast<uint64_t>(static_cast<double>(integer));
    last_integer_[s] = integer;
  } else if (mode == kRawBits) {
    bits = 0;
    for (int k = 0; k < 8; ++k) bits |= static_cast<uint64_t>(table_.bytes_[offset_++]) << (8 * k);
  }
  last_bits_[s] = bits;
  *series = s;
  *ts = ts_;
  *bits_out = bits;
  return true;
}

bool CounterTable::Reader::Next(CounterRow* row) {
  uint32_t s;
  uint64_t bits;
  if (!NextEncoded(&s, &row->ts, &bits)) return false;
  row->name = table_.series_[s].name;
  row->track = table_.series_[s].track;
  row->value = std::bit_cast<double>(bits);
  return true;
}

std::vector<CounterRow> CounterTable::Rows() const {
  std::vector<CounterRow> rows;
  rows.reserve(rows_);
  Reader reader(*this);
  CounterRow row;
  while (reader.Next(&row)) rows.push_back(row);
  return rows;
}

uint64_t CounterTable::ShiftTimes(size_t from_row, int64_t delta_ns) {
  if (from_row >= rows_ || delta_ns == 0) return 0;
  // Each row keeps its time as the difference from the row before (the first
  // from 0): moving every row by the same amount changes the first row's
  // difference alone. A Kineto trace's counters all move by its
  // baseTimeNanoseconds at the end of the import; re-encoding every row took
  // ~10 ms of the serial end of a 300 MB import.
  int64_t unused;
  if (from_row == 0 && !__builtin_add_overflow(min_ts_, delta_ns, &unused) &&
      !__builtin_add_overflow(max_ts_, delta_ns, &unused)) {
    size_t offset = 0;
    GetVarint(bytes_, &offset);  // the first row's series and mode
    const size_t ts_begin = offset;
    const uint64_t first_ts = UnZigZag(GetVarint(bytes_, &offset));  // its difference from 0
    uint8_t encoded[kMaxRowBytes];
    uint8_t* encoded_end = PutVarint(encoded, ZigZag(first_ts + static_cast<uint64_t>(delta_ns)));
    // The new difference may take more or fewer bytes: one move of the rest at most.
    const std::ptrdiff_t grow = (encoded_end - encoded) - static_cast<std::ptrdiff_t>(offset - ts_begin);
    const auto at = bytes_.begin() + static_cast<std::ptrdiff_t>(ts_begin);
    if (grow > 0) bytes_.insert(at, static_cast<size_t>(grow), uint8_t{0});
    if (grow < 0) bytes_.erase(at, at - grow);
    std::copy(encoded, encoded_end, bytes_.begin() + static_cast<std::ptrdiff_t>(ts_begin));
    last_ts_ += delta_ns;
    min_ts_ += delta_ns;
    max_ts_ += delta_ns;
    return 0;
  }
  // Deltas follow one another, so the rows are written again (into a stream
  // of about the same size, never decoded whole).
  CounterTable shifted;
  shifted.bytes_.reserve(bytes_.size());
  uint64_t clamped = 0;
  Reader reader(*this);
  CounterRow row;
  for (size_t i = 0; reader.Next(&row); ++i) {
    if (i >= from_row && __builtin_add_overflow(row.ts, delta_ns, &row.ts)) {
      row.ts = delta_ns > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
      ++clamped;
    }
    shifted.Add(row);
  }
  *this = std::move(shifted);
  return clamped;
}

void CounterTable::Clear() { *this = CounterTable(); }

size_t CounterTable::MemoryBytes() const {
  return bytes_.capacity() + series_.capacity() * sizeof(Series) +
         (last_bits_.capacity() + last_integer_.capacity()) * sizeof(uint64_t) +
         series_index_.size() * (sizeof(uint64_t) + sizeof(uint32_t) + 2 * sizeof(void*));
}

bool CounterTable::operator==(const CounterTable& other) const {
  if (rows_ != other.rows_) return false;
  Reader a(*this), b(other);
  CounterRow ra, rb;
  while (a.Next(&ra) && b.Next(&rb))
    if (!(ra == rb)) return false;
  return true;
}

}  // namespace pypto
