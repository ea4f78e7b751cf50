#include "model/string_table.h"

#include <cstring>

namespace pypto {
namespace {
constexpr size_t kChunkBytes = 1 << 20;  // arena chunk; larger strings get their own chunk
constexpr size_t kInitialSlots = 1024;   // power of two
}  // namespace

uint64_t HashString(std::string_view text) {
  // FNV-1a over 8-byte words then bytes, finished with a murmur-style mix.
  uint64_t h = 1469598103934665603ull ^ text.size();
  const char* p = text.data();
  size_t n = text.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  while (n--) h = (h ^ static_cast<unsigned char>(*p++)) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

StringTable::StringTable() : slots_(kInitialSlots, 0) {
  views_.push_back(std::string_view());
  hashes_.push_back(HashString(std::string_view()));
}

std::string_view StringTable::Store(std::string_view text) {
  if (text.empty()) return {};
  if (text.size() > kChunkBytes / 4) {
    big_strings_.push_back(std::make_unique<char[]>(text.size()));
    std::memcpy(big_strings_.back().get(), text.data(), text.size());
    big_bytes_ += text.size();
    return std::string_view(big_strings_.back().get(), text.size());
  }
  if (chunk_used_ + text.size() > chunk_capacity_) {
    chunks_.push_back(std::make_unique<char[]>(kChunkBytes));
    chunk_used_ = 0;
    chunk_capacity_ = kChunkBytes;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  std::memcpy(dst, text.data(), text.size());
  chunk_used_ += text.size();
  return std::string_view(dst, text.size());
}

StrId StringTable::Find(std::string_view text) const {
  if (text.empty()) return kEmptyStr;
  uint64_t h = HashString(text);
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    uint32_t slot = slots_[i];
    if (slot == 0) return kEmptyStr;
    StrId id = slot - 1;
    if (hashes_[id] == h && views_[id] == text) return id;
  }
}

StrId StringTable::Intern(std::string_view text) {
  if (text.empty()) return kEmptyStr;
  uint64_t h = HashString(text);
  size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    uint32_t slot = slots_[i];
    if (slot == 0) break;
    StrId id = slot - 1;
    if (hashes_[id] == h && views_[id] == text) return id;
  }
  StrId id = static_cast<StrId>(views_.size());
  views_.push_back(Store(text));
  hashes_.push_back(h);
  slots_[i] = id + 1;
  if (views_.size() * 2 > slots_.size()) Grow();
  return id;
}

void StringTable::Grow() {
  std::vector<uint32_t> bigger(slots_.size() * 2, 0);
  size_t mask = bigger.size() - 1;
  for (StrId id = 1; id < views_.size(); ++id) {
    size_t i = hashes_[id] & mask;
    while (bigger[i] != 0) i = (i + 1) & mask;
    bigger[i] = id + 1;
  }
  slots_.swap(bigger);
}

size_t StringTable::memory_bytes() const {
  size_t bytes = chunks_.size() * kChunkBytes + big_bytes_;
  bytes += views_.capacity() * sizeof(std::string_view) + hashes_.capacity() * 8 + slots_.capacity() * 4;
  return bytes;
}

}  // namespace pypto
