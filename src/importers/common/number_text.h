// Exact parsing of numbers written as text, shared by every importer: times in
// µs or ms become int64 ns digit by digit (epoch µs x 1000 ~ 1.7e18 > 2^53, so
// a detour through double loses nanoseconds), ids become uint64 exactly.
//
// One rounding rule everywhere: digits below the target unit are rounded half
// away from zero on the first dropped digit ("1.2345" µs -> 1235 ns,
// "-0.0005" µs -> -1 ns). Surrounding blanks (space, tab, CR, LF: JSON tokens,
// CSV cells with a trailing tab) are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pypto::number_text {

enum class NumberParse : uint8_t {
  kOk,
  kInvalid,   // not a number
  kOverflow,  // a number that does not fit int64 in the target unit
};

// "[+-]digits[.digits][(e|E)[+-]digits]" (either digit run may be empty, not
// both) times 10^scale_digits, as int64, rounded as above. An exponent below
// -1000 is 0; above +1000 overflows (unless the mantissa is 0).
NumberParse ParseScaledDecimal(std::string_view text, int scale_digits, int64_t* out);

// Microseconds / milliseconds as text -> nanoseconds; nullopt when invalid or
// out of range (callers that tell the two apart use ParseScaledDecimal).
std::optional<int64_t> MicrosToNs(std::string_view text);
std::optional<int64_t> MillisToNs(std::string_view text);

// "-42", "+7": an exact int64; nullopt for fractions, exponents, junk, overflow.
std::optional<int64_t> ParseInt64(std::string_view text);
// "18446744073709551615" or "0x1f" / "0X1F": an exact uint64 (flow and
// correlation ids may exceed 2^53; ROCm writes ids as hex strings).
std::optional<uint64_t> ParseUint64(std::string_view text);

}  // namespace pypto::number_text
