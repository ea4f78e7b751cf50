// What the standalone data generators share (they link no engine code, so this
// header is theirs alone): the deterministic random numbers that make a seed
// give byte-identical files, and the size argument "--bytes 300M".
#pragma once

#include <cstdint>
#include <cstdlib>

namespace pypto::bench {

// splitmix64 (Steele, Lea & Flood 2014): fast, and the same sequence on every
// platform for a seed. Each generator derives its own jitter helpers from it.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 53 random bits.
  double Uniform() { return (Next() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  uint64_t s_;
};

// "300M", "1.5G", "64k", "2000" (decimal: 1M = 1e6), an optional trailing B.
inline bool ParseSize(const char* s, uint64_t* out) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || v < 0) return false;
  switch (*end) {
    case 'k': case 'K': v *= 1e3; ++end; break;
    case 'm': case 'M': v *= 1e6; ++end; break;
    case 'g': case 'G': v *= 1e9; ++end; break;
    default: break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end) return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

}  // namespace pypto::bench
