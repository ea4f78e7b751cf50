// A column of 32-bit values, each kept in 0, 1, 2 or 4 bytes by its size, with
// random access by row.
//
// Why: an attribute row's value (AttributeTable) is a decimal's mantissa or a
// string id, and a kernel_details.csv gives ~25 PMU figures a task. Most are
// small: in the CANN 8.3 LLM job's file 54 % are 0 (the cube counters of a
// vector kernel and the reverse), 38 % fit one or two bytes (ratios such as
// 599 for "0.599", times such as 1234 for "1.234") and 7 % need four (cycle
// counts): 0.9 bytes a value on average. Four bytes each were 110 MB for the
// bench's 1 M-task file, a third of its peak memory.
//
// How: each block of 32 rows has a 64-bit word of 2-bit width codes (code 0,
// 1, 2, 3 = 0, 1, 2, 4 bytes) and the offset of its first value in one byte
// array. A row's offset is its block's plus the widths of the rows before it
// in the block: a few shifts and adds. Overhead: 16 bytes a block, half a byte a
// row.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

namespace pypto {

class PackedValues {
 public:
  size_t size() const { return size_; }

  void push_back(uint32_t value) {
    const unsigned slot = static_cast<unsigned>(size_ % kRowsPerBlock);
    if (slot == 0) {
      width_codes_.push_back(0);
      block_offset_.push_back(bytes_.size());
    }
    if (value != 0) {
      const uint64_t code = value > 0xFFFFu ? 3 : value > 0xFFu ? 2 : 1;
      bytes_.AppendLowBytes(value, code == 3 ? 4 : static_cast<size_t>(code));
      width_codes_.back() |= code << (2 * slot);
    }
    ++size_;
  }

  uint32_t operator[](size_t row) const {
    const size_t block = row / kRowsPerBlock;
    const unsigned shift = static_cast<unsigned>(2 * (row % kRowsPerBlock));
    const uint64_t codes = width_codes_[block];
    const unsigned code = static_cast<unsigned>(codes >> shift) & 3u;
    if (code == 0) return 0;
    // Widths of the rows before `row` in its block: a code is its width but
    // for code 3 (4 bytes), so the sum of the codes plus the count of 3s.
    const uint64_t before = codes & ((uint64_t{1} << shift) - 1);
    const uint64_t threes = before & (before >> 1) & kLowBits;
    const size_t at = block_offset_[block] + SumOfCodes(before) + SumOfCodes(threes);
    const uint8_t* p = bytes_.data() + at;
    switch (code) {
      case 1: return p[0];
      case 2: return p[0] | uint32_t{p[1]} << 8;
      default: return p[0] | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
    }
  }

  // Room for n rows in all, at their widest. Pages of the byte array that are
  // never written are never resident, so the reserve costs address space only.
  void reserve(size_t n) {
    const size_t blocks = (n + kRowsPerBlock - 1) / kRowsPerBlock;
    width_codes_.reserve(blocks);
    block_offset_.reserve(blocks);
    bytes_.Reserve(n * sizeof(uint32_t));
  }
  void clear() {
    width_codes_.clear();
    block_offset_.clear();
    bytes_.Clear();
    size_ = 0;
  }
  // Bytes in use: the reserve beyond them is address space, not memory (above).
  size_t MemoryBytes() const { return (width_codes_.size() + block_offset_.size()) * sizeof(uint64_t) + bytes_.size(); }
  // The storage of a value sequence is unique, so equal rows compare equal.
  bool operator==(const PackedValues&) const = default;

 private:
  static constexpr size_t kRowsPerBlock = 32;  // 2 bits a row fill one 64-bit word
  static constexpr uint64_t kLowBits = 0x5555555555555555ull;
  // The sum of the 32 2-bit fields of `codes`, by adding neighbours in place
  // (std::popcount compiles to a library call where the build may not assume
  // the POPCNT instruction, and three of those were most of a read).
  static size_t SumOfCodes(uint64_t codes) {
    uint64_t sums = (codes & 0x3333333333333333ull) + ((codes >> 2) & 0x3333333333333333ull);  // 4-bit fields, <= 6
    sums = (sums + (sums >> 4)) & 0x0F0F0F0F0F0F0F0Full;                                      // bytes, <= 12
    return static_cast<size_t>((sums * 0x0101010101010101ull) >> 56);                         // <= 96
  }
  std::vector<uint64_t> width_codes_;   // per block: 2 bits a row, from the low bits up
  std::vector<uint64_t> block_offset_;  // per block: where its first value starts in bytes_
  // A byte array that appends a value's low bytes with one store: room for
  // four more bytes is kept, so the four are written and `width` counted.
  // Grown with realloc, which moves a large block's pages instead of copying
  // them (a vector's growth held the old and new arrays at once).
  class Bytes {
   public:
    Bytes() = default;
    Bytes(const Bytes& other) { *this = other; }
    Bytes(Bytes&& other) noexcept { Swap(other); }
    Bytes& operator=(const Bytes& other) {
      if (this != &other) {
        Clear();
        Reserve(other.used_);
        if (other.used_ != 0) std::memcpy(data_, other.data_, other.used_);
        used_ = other.used_;
      }
      return *this;
    }
    Bytes& operator=(Bytes&& other) noexcept {
      Bytes(std::move(other)).Swap(*this);
      return *this;
    }
    ~Bytes() { std::free(data_); }
    bool operator==(const Bytes& other) const {
      return used_ == other.used_ && (used_ == 0 || std::memcmp(data_, other.data_, used_) == 0);
    }
    size_t size() const { return used_; }
    const uint8_t* data() const { return data_; }
    void AppendLowBytes(uint32_t value, size_t width) {
      if (capacity_ - used_ < sizeof(uint32_t)) Reserve(std::max<size_t>(2 * capacity_, kFirstCapacity));
      uint8_t* p = data_ + used_;
      p[0] = static_cast<uint8_t>(value);
      p[1] = static_cast<uint8_t>(value >> 8);
      p[2] = static_cast<uint8_t>(value >> 16);
      p[3] = static_cast<uint8_t>(value >> 24);
      used_ += width;
    }
    void Reserve(size_t bytes) {
      if (bytes <= capacity_) return;
      void* grown = std::realloc(data_, bytes);
      if (grown == nullptr) throw std::bad_alloc();
      data_ = static_cast<uint8_t*>(grown);
      capacity_ = bytes;
    }
    void Clear() {
      std::free(data_);
      data_ = nullptr;
      used_ = capacity_ = 0;
    }

   private:
    static constexpr size_t kFirstCapacity = 256;
    void Swap(Bytes& other) noexcept {
      std::swap(data_, other.data_);
      std::swap(used_, other.used_);
      std::swap(capacity_, other.capacity_);
    }
    uint8_t* data_ = nullptr;
    size_t used_ = 0;
    size_t capacity_ = 0;
  };
  Bytes bytes_;  // the values, little-endian, in row order
  size_t size_ = 0;
};

}  // namespace pypto
