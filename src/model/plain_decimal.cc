#include "model/plain_decimal.h"

namespace pypto {
namespace {

// 10^0 .. 10^15, all exact doubles.
constexpr double kPowersOfTen[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

}  // namespace

double PlainDecimal::Value() const {
  const double magnitude = static_cast<double>(digits) / kPowersOfTen[decimals];
  return negative ? -magnitude : magnitude;
}

std::optional<PlainDecimal> ParsePlainDecimal(std::string_view text) {
  PlainDecimal d;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    d.negative = true;
    ++i;
  }
  const size_t integer_start = i;
  int written = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    d.digits = d.digits * 10 + static_cast<uint64_t>(text[i] - '0');
    ++i;
    if (++written > kMaxPlainDecimalDigits) return std::nullopt;
  }
  const size_t integer_digits = i - integer_start;
  if (integer_digits == 0) return std::nullopt;
  d.canonical_integer = integer_digits == 1 || text[integer_start] != '0';
  if (i == text.size()) return d;
  if (text[i] != '.') return std::nullopt;
  ++i;
  const size_t fraction_start = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    d.digits = d.digits * 10 + static_cast<uint64_t>(text[i] - '0');
    ++i;
    if (++written > kMaxPlainDecimalDigits) return std::nullopt;
  }
  if (i != text.size() || i == fraction_start) return std::nullopt;
  d.decimals = static_cast<uint8_t>(i - fraction_start);
  return d;
}

}  // namespace pypto
