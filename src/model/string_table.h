// Interned strings: every name, category, shape text and key in a Profile is
// stored once and referred to by a 32-bit id. Id 0 is the empty string.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pypto {

using StrId = uint32_t;
inline constexpr StrId kEmptyStr = 0;

class StringTable {
 public:
  StringTable();
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&&) noexcept = default;
  StringTable& operator=(StringTable&&) noexcept = default;

  StrId Intern(std::string_view text);
  // Returns the id if `text` was interned before, else kEmptyStr.
  StrId Find(std::string_view text) const;
  std::string_view Get(StrId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  size_t memory_bytes() const;

 private:
  // Open addressing, linear probing; slots hold id+1 (0 = free). Written here
  // rather than taken from a library because strings live in a chunked arena
  // (stable views, no per-string allocation) that std/absl maps do not give us.
  void Grow();
  std::string_view Store(std::string_view text);

  std::vector<std::unique_ptr<char[]>> chunks_;
  std::vector<std::unique_ptr<char[]>> big_strings_;  // strings above a quarter chunk
  size_t big_bytes_ = 0;
  size_t chunk_used_ = 0;
  size_t chunk_capacity_ = 0;
  std::vector<std::string_view> views_;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> slots_;
};

uint64_t HashString(std::string_view text);

}  // namespace pypto
