// Numbers written "[-]digits[.digits]" with few digits (PMU ratios "0.486",
// cycle counts "81431", "0.000"): most cells of a kernel_details.csv. Their
// value and their text form (model/profile.h) follow from the digits with one
// division, where std::from_chars and std::to_chars (the general path, kept for
// every other number) cost most of a CSV import's numeric work.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pypto {

// At most this many digits in all (DBL_DIG): any decimal of 15 significant
// digits or fewer is a distinct double, and reads back from its double
// unchanged (C11 5.2.4.2.2), which the text-form rule below relies on.
inline constexpr int kMaxPlainDecimalDigits = 15;

// 10^0 .. 10^15, every one an exact double: the divisors of a plain decimal
// and of the attribute table's decimals (model/profile.cc).
inline constexpr double kExactPowersOfTen[kMaxPlainDecimalDigits + 1] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

struct PlainDecimal {
  uint64_t digits = 0;   // every digit written, as one integer (< 10^15)
  uint8_t decimals = 0;  // digits after the point (0: no point)
  bool negative = false;
  bool canonical_integer = false;  // the integer part is "0" or starts with 1-9
  // The double nearest the decimal, as std::from_chars gives it: digits and
  // 10^decimals are exact doubles (< 2^53 and <= 10^22), so one IEEE division
  // rounds the quotient correctly.
  double Value() const;
};

// `text` parsed when it is exactly "[-]D+" or "[-]D+.D+" with at most
// kMaxPlainDecimalDigits digits; nullopt for anything else ('+', exponents,
// blanks, ".5", "5.", inf, more digits), which the general parsers handle.
std::optional<PlainDecimal> ParsePlainDecimal(std::string_view text);

// The text form (model/profile.h: kShortestNumberText, 1 + decimals, or
// kNoNumberTextForm) of the cell `d` was parsed from, found from its digits
// as Profile::NumberTextForm finds it by formatting; nullopt where only
// formatting decides (an integer part with leading zeros).
std::optional<uint8_t> PlainDecimalTextForm(const PlainDecimal& d);

}  // namespace pypto
