#include "model/plain_decimal.h"

#include "model/profile.h"

namespace pypto {

double PlainDecimal::Value() const {
  const double magnitude = static_cast<double>(digits) / kExactPowersOfTen[decimals];
  return negative ? -magnitude : magnitude;
}

std::optional<PlainDecimal> ParsePlainDecimal(std::string_view text) {
  PlainDecimal d;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    d.negative = true;
    ++i;
  }
  // Appends the run of digits at i to d.digits; how many, or -1 past the limit.
  int written = 0;
  auto read_digits = [&]() -> int {
    const size_t start = i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      d.digits = d.digits * 10 + static_cast<uint64_t>(text[i] - '0');
      if (++written > kMaxPlainDecimalDigits) return -1;
    }
    return static_cast<int>(i - start);
  };
  const size_t integer_start = i;
  const int integer_digits = read_digits();
  if (integer_digits <= 0) return std::nullopt;
  d.canonical_integer = integer_digits == 1 || text[integer_start] != '0';
  if (i == text.size()) return d;
  if (text[i] != '.') return std::nullopt;
  ++i;
  const int fraction_digits = read_digits();
  if (fraction_digits <= 0 || i != text.size()) return std::nullopt;
  d.decimals = static_cast<uint8_t>(fraction_digits);
  return d;
}

// The shortest form is std::to_chars': the decimal's digits
// without trailing zeros (it has at most 15, so no shorter string reads back
// as the same double), in fixed or scientific notation, whichever is shorter,
// fixed on a tie. Fixed notation with the cell's D decimals rounds the number
// back to the cell's digits (they are within 10^-16 of it, relatively).
std::optional<uint8_t> PlainDecimalTextForm(const PlainDecimal& d) {
  if (!d.canonical_integer) return std::nullopt;
  // |number| < 10^15: below the 1e21 under which NumberTextForm tries fixed notation.
  const uint8_t fixed_form = d.decimals <= kMaxFixedDecimals ? static_cast<uint8_t>(1 + d.decimals) : kNoNumberTextForm;
  if (d.digits == 0) return d.decimals == 0 ? kShortestNumberText : fixed_form;  // "0", "-0"; "0.000"
  uint64_t significant = d.digits;
  int trailing_zeros = 0;
  while (significant % 10 == 0) {
    significant /= 10;
    ++trailing_zeros;
  }
  int n = 1;  // digits of `significant`
  for (uint64_t rest = significant / 10; rest > 0; rest /= 10) ++n;
  // The number is significant's first digit x 10^exponent, |exponent| < 100.
  const int exponent = n - 1 + trailing_zeros - d.decimals;
  const int fixed_length = exponent >= 0 ? exponent + 1 + (n > exponent + 1 ? n - exponent : 0)  // "81430", "12.5"
                                         : 1 - exponent + n;                                       // "0.05"
  const int scientific_length = n + (n > 1 ? 1 : 0) + 4;                                           // "5e-02"
  const bool shortest_is_fixed = fixed_length <= scientific_length;
  if (shortest_is_fixed && (d.decimals == 0 || trailing_zeros == 0)) return kShortestNumberText;
  return d.decimals == 0 ? kNoNumberTextForm : fixed_form;
}

}  // namespace pypto
