// A column that costs nothing while every row holds its default, and a plain
// vector from the first row that does not. Device tasks carry columns that
// one format fills and another never does: an Ascend kernel_details.csv has
// no launcher, launch dimensions, payload bytes or graph launches, and those
// columns were 17 of the ~62 bytes a task kept for a 1 M-task file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pypto {

template <typename T, T kDefault>
class DefaultedColumn {
 public:
  T operator[](size_t row) const { return values_.empty() ? kDefault : values_[row]; }
  size_t size() const { return size_; }
  // True while no row holds anything but the default (no storage is kept).
  bool all_default() const { return values_.empty(); }

  void push_back(T value) {
    if (values_.empty()) {
      if (value == kDefault) {
        ++size_;
        return;
      }
      Materialize();
    }
    values_.push_back(value);
    ++size_;
  }
  void set(size_t row, T value) {
    if (values_.empty()) {
      if (value == kDefault) return;
      Materialize();
    }
    values_[row] = value;
  }
  // `rows` rows, each holding `value`.
  void assign(size_t rows, T value) {
    std::vector<T>().swap(values_);
    size_ = rows;
    if (value != kDefault) values_.assign(rows, value);
  }
  // Grows with default rows, or drops the last rows.
  void resize(size_t rows) {
    if (!values_.empty()) values_.resize(rows, kDefault);
    size_ = rows;
  }
  // Kept as a hint while no storage is kept: the storage, once needed, is
  // sized for it at once.
  void reserve(size_t rows) {
    reserve_hint_ = std::max(reserve_hint_, rows);
    if (!values_.empty()) values_.reserve(rows);
  }
  void clear() {
    std::vector<T>().swap(values_);
    size_ = 0;
    reserve_hint_ = 0;
  }
  void Append(const DefaultedColumn& other) {
    if (other.values_.empty()) {
      resize(size_ + other.size_);
      return;
    }
    if (values_.empty()) Materialize();
    values_.insert(values_.end(), other.values_.begin(), other.values_.end());
    size_ += other.size_;
  }
  size_t MemoryBytes() const { return values_.capacity() * sizeof(T); }
  // The rows it has room for, or was asked to make room for.
  size_t capacity() const { return std::max(values_.capacity(), reserve_hint_); }
  // The same values row by row, however kept.
  bool operator==(const DefaultedColumn& other) const {
    if (size_ != other.size_) return false;
    if (values_.empty() == other.values_.empty()) return values_ == other.values_;
    for (size_t row = 0; row < size_; ++row)
      if ((*this)[row] != other[row]) return false;
    return true;
  }

 private:
  void Materialize() {
    values_.reserve(std::max(reserve_hint_, size_ + 1));
    values_.assign(size_, kDefault);
  }

  std::vector<T> values_;  // empty while every row holds kDefault
  size_t size_ = 0;
  size_t reserve_hint_ = 0;
};

}  // namespace pypto
