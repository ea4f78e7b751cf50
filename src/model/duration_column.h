// Times per row (ns) in 4 bytes a row while they are short: an op's self time,
// its device time. Most are well under 4.3 s (2^32 - 1 ns); a longer one, or a
// negative one from damaged input, is kept whole in a side table. A 300 MB
// trace has ~500 k host ops: 2 MB a column instead of 4.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace pypto {

class DurationColumn {
 public:
  void assign(size_t rows) {
    narrow_.assign(rows, 0);
    wide_.clear();
  }
  int64_t operator[](size_t row) const {
    const uint32_t v = narrow_[row];
    return v != kWide ? v : wide_.find(static_cast<uint32_t>(row))->second;
  }
  void set(size_t row, int64_t ns) {
    if (narrow_[row] == kWide) wide_.erase(static_cast<uint32_t>(row));
    if (ns >= 0 && ns < kWide) {
      narrow_[row] = static_cast<uint32_t>(ns);
    } else {
      narrow_[row] = kWide;
      wide_[static_cast<uint32_t>(row)] = ns;
    }
  }
  void add(size_t row, int64_t ns) { set(row, (*this)[row] + ns); }
  size_t size() const { return narrow_.size(); }
  size_t MemoryBytes() const {
    return narrow_.capacity() * sizeof(uint32_t) + wide_.size() * (sizeof(uint32_t) + sizeof(int64_t) + 2 * sizeof(void*));
  }

 private:
  static constexpr uint32_t kWide = std::numeric_limits<uint32_t>::max();  // the value is in wide_
  std::vector<uint32_t> narrow_;
  std::unordered_map<uint32_t, int64_t> wide_;  // row -> ns, for rows marked kWide
};

}  // namespace pypto
