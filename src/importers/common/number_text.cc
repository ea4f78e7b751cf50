#include "importers/common/number_text.h"

#include <bit>
#include <cstring>
#include <limits>

namespace pypto::number_text {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Decimal texts of at most this many digits cannot overflow uint64
// (10^19 - 1 < 2^64 - 1), so ParseUint64 reads them without overflow checks.
constexpr size_t kDigitsThatFitUint64 = 19;

// The eight ASCII digits at `text` as a number into *value, or false when
// one byte is not a digit. SWAR on the bytes read as one little-endian word:
// a byte is a digit when its high nibble is 3 and adding 6 keeps it so; the
// digits are then combined in pairs, fours and the eight by three multiplies
// (the method fast_float and simdjson describe; written here for ParseUint64's
// 19-digit epoch-ns texts from PYTORCH_API, millions a database: 5.8 M of them
// took 130 ms digit by digit, 67 ms this way).
bool EightDigits(const char* text, uint64_t* value) {
  uint64_t word;
  std::memcpy(&word, text, sizeof word);
  constexpr uint64_t kHighNibbles = 0xF0F0F0F0F0F0F0F0ull;
  if (((word & kHighNibbles) | (((word + 0x0606060606060606ull) & kHighNibbles) >> 4)) != 0x3333333333333333ull)
    return false;
  word -= 0x3030303030303030ull;                 // bytes are digits 0..9, the first in the low byte
  word = word * 10 + (word >> 8);                // each even byte: a two-digit number
  constexpr uint64_t kPairMask = 0x000000FF000000FFull;
  constexpr uint64_t kPairsTimes = 100 + (1000000ull << 32), kPairsOnes = 1 + (10000ull << 32);
  *value = (((word & kPairMask) * kPairsTimes) + (((word >> 16) & kPairMask) * kPairsOnes)) >> 32;
  return true;
}

// Exponents beyond this are 0 or an overflow whatever the mantissa (int64
// holds 19 digits; the mantissa keeps at most 19 significant digits).
constexpr int kExponentClamp = 1000;

}  // namespace

NumberParse ParseScaledDecimal(std::string_view text, int scale_digits, int64_t* out) {
  text = TrimBlanks(text);
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  // The mantissa's digits as one integer while it fits, with the count of
  // digits after the point kept in it; digits that no longer fit are counted
  // (integer part: they scale the value up) or dropped (fraction part), and
  // the first one dropped still decides the rounding.
  uint64_t magnitude = 0;
  int fraction_digits = 0;
  int dropped_int_digits = 0;
  int first_dropped_digit = -1;  // first fraction digit that did not fit, if any
  bool any_digit = false, seen_point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (IsDigit(c)) {
      any_digit = true;
      if (magnitude > (std::numeric_limits<uint64_t>::max() - 9) / 10) {
        if (seen_point) {
          if (first_dropped_digit < 0) first_dropped_digit = c - '0';
        } else {
          ++dropped_int_digits;
        }
        continue;
      }
      magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
      if (seen_point) ++fraction_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return NumberParse::kInvalid;
  int exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    if (i >= text.size() || !IsDigit(text[i])) return NumberParse::kInvalid;
    bool clamped = false;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (exponent <= kExponentClamp) exponent = exponent * 10 + (text[i] - '0');
      clamped = clamped || exponent > kExponentClamp;
    }
    if (i != text.size()) return NumberParse::kInvalid;
    if (clamped) {
      if (exp_negative || magnitude == 0) return (*out = 0, NumberParse::kOk);
      return NumberParse::kOverflow;
    }
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return NumberParse::kInvalid;
  if (dropped_int_digits > 0 && magnitude != 0) return NumberParse::kOverflow;
  // value = magnitude * 10^(scale + exponent - fraction_digits).
  int shift = scale_digits + exponent - fraction_digits;
  uint64_t result = magnitude;
  if (shift >= 0) {
    for (int k = 0; k < shift && result != 0; ++k)
      if (__builtin_mul_overflow(result, uint64_t{10}, &result)) return NumberParse::kOverflow;
  } else {
    // Divide by 10^-shift; the last digit divided away is the first dropped one.
    int last_removed = first_dropped_digit;
    for (int k = 0; k < -shift && (result != 0 || last_removed > 0); ++k) {
      last_removed = static_cast<int>(result % 10);
      result /= 10;
    }
    if (last_removed >= 5 && __builtin_add_overflow(result, uint64_t{1}, &result)) return NumberParse::kOverflow;
  }
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (result > kMaxPositive + 1) return NumberParse::kOverflow;
    *out = result == kMaxPositive + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(result);
  } else {
    if (result > kMaxPositive) return NumberParse::kOverflow;
    *out = static_cast<int64_t>(result);
  }
  return NumberParse::kOk;
}

std::optional<int64_t> MicrosToNs(std::string_view text) {
  int64_t ns = 0;
  if (ParseScaledDecimal(text, 3, &ns) != NumberParse::kOk) return std::nullopt;
  return ns;
}

std::optional<int64_t> MillisToNs(std::string_view text) {
  int64_t ns = 0;
  if (ParseScaledDecimal(text, 6, &ns) != NumberParse::kOk) return std::nullopt;
  return ns;
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  text = TrimBlanks(text);
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (!IsDigit(c)) return std::nullopt;
    if (__builtin_mul_overflow(v, uint64_t{10}, &v) || __builtin_add_overflow(v, uint64_t(c - '0'), &v))
      return std::nullopt;
  }
  if (negative) {
    if (v > uint64_t{1} << 63) return std::nullopt;
    return static_cast<int64_t>(0 - v);
  }
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<uint64_t> ParseUint64(std::string_view text) {
  text = TrimBlanks(text);
  if constexpr (std::endian::native == std::endian::little) {
    if (!text.empty() && text.size() <= kDigitsThatFitUint64 && text[0] != '0') {
      uint64_t v = 0;
      size_t i = 0;
      for (uint64_t eight; i + 8 <= text.size(); i += 8) {
        if (!EightDigits(text.data() + i, &eight)) return std::nullopt;
        v = v * 100000000 + eight;
      }
      for (; i < text.size(); ++i) {
        if (!IsDigit(text[i])) return std::nullopt;
        v = v * 10 + static_cast<uint64_t>(text[i] - '0');
      }
      return v;
    }
  }
  uint64_t base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    uint64_t d;
    if (IsDigit(c)) d = static_cast<uint64_t>(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f') d = static_cast<uint64_t>(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F') d = static_cast<uint64_t>(c - 'A' + 10);
    else return std::nullopt;
    if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v)) return std::nullopt;
  }
  return v;
}

}  // namespace pypto::number_text
