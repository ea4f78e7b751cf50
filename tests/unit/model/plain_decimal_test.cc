// Plain decimals: the value and the text form found from the digits must be
// those of the general path (std::from_chars, and std::to_chars in
// shortest and fixed notation) on every cell the fast path takes. The oracle
// below is NumberTextForm's definition written with std::to_chars directly.
#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "importers/common/csv_values.h"
#include "model/plain_decimal.h"
#include "model/profile.h"

namespace pypto {
namespace {

double FromChars(std::string_view text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  EXPECT_EQ(ec, std::errc()) << text;
  EXPECT_EQ(ptr, text.data() + text.size()) << text;
  return v;
}

// NumberTextForm by formatting: the shortest round-trip text, else fixed
// notation with the cell's decimals (below 1e21, at most kMaxFixedDecimals).
uint8_t FormByFormatting(std::string_view cell, double number) {
  char buffer[128];
  auto shortest = std::to_chars(buffer, buffer + sizeof buffer, number);
  if (std::string_view(buffer, shortest.ptr - buffer) == cell) return kShortestNumberText;
  const size_t point = cell.find('.');
  if (point == std::string_view::npos || std::fabs(number) >= 1e21) return kNoNumberTextForm;
  const size_t decimals = cell.size() - point - 1;
  if (decimals == 0 || decimals > kMaxFixedDecimals) return kNoNumberTextForm;
  auto fixed = std::to_chars(buffer, buffer + sizeof buffer, number, std::chars_format::fixed, static_cast<int>(decimals));
  return std::string_view(buffer, fixed.ptr - buffer) == cell ? static_cast<uint8_t>(1 + decimals) : kNoNumberTextForm;
}

void ExpectSameAsGeneralPath(const std::string& cell) {
  SCOPED_TRACE(cell);
  const std::optional<PlainDecimal> plain = ParsePlainDecimal(cell);
  ASSERT_TRUE(plain.has_value());
  const double general = FromChars(cell);
  EXPECT_EQ(std::bit_cast<uint64_t>(plain->Value()), std::bit_cast<uint64_t>(general));
  const std::optional<double> parsed = csv::ParseDouble(cell);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(std::bit_cast<uint64_t>(*parsed), std::bit_cast<uint64_t>(general));
  EXPECT_EQ(Profile::NumberTextForm(cell, general), FormByFormatting(cell, general));
}

TEST(PlainDecimal, ValueAndTextFormAreTheGeneralPathsOnChosenCells) {
  // The forms of a kernel_details.csv (ratios, cycle counts, "0.000"), the
  // places where to_chars switches to scientific notation (1e-05, 1e+05,
  // 0.0001 tying 1e-04 in length), zeros and negative zeros, leading zeros,
  // trailing zeros on both sides of the point, and 15 digits.
  for (const char* cell :
       {"0",         "-0",         "0.0",        "-0.0",        "0.000",      "-0.000",     "1",
        "81431",     "81430",      "100000",     "1000000",     "123000",     "0.486",      "1.234",
        "0.5",       "0.05",       "0.001",      "0.0001",      "0.00001",    "0.000001",   "0.00012",
        "0.0000123", "1.250",      "1.200",      "100.00",      "12.5",       "-12.5",      "007",
        "00.5",      "0.10",       "10.0",       "999999999999999", "0.00000000000001", "123456789012.345",
        "99999.99999", "-0.0001",  "1000.000",   "5e0",         "20000",      "200000",     "2000000"}) {
    const std::string text(cell);
    if (!ParsePlainDecimal(text)) continue;  // "5e0": not plain, the general path's
    ExpectSameAsGeneralPath(text);
  }
  EXPECT_FALSE(ParsePlainDecimal("5e0"));
}

TEST(PlainDecimal, RefusesWhatIsNotPlain) {
  for (const char* cell : {"", "-", "+1", ".5", "5.", "1.2.3", "1e5", " 1", "1 ", "inf", "nan", "0x10", "1,5",
                           "1234567890123456", "0.123456789012345", "--1", "1-"})
    EXPECT_FALSE(ParsePlainDecimal(cell)) << cell;
  // The general path still reads what the fast one refuses.
  EXPECT_EQ(csv::ParseDouble("+1.5"), 1.5);
  EXPECT_EQ(csv::ParseDouble("1234567890123456"), 1234567890123456.0);
  EXPECT_EQ(csv::ParseDouble("1e5"), 1e5);
}

TEST(PlainDecimal, ValueAndTextFormAreTheGeneralPathsOnRandomCells) {
  // 200,000 random plain decimals of 1 to 15 digits, 0 to 14 of them after
  // the point, with runs of zeros at either end (where the forms differ).
  std::mt19937_64 rng(20261206);
  for (int i = 0; i < 200000; ++i) {
    const int digits = 1 + static_cast<int>(rng() % 15);
    const int decimals = static_cast<int>(rng() % digits);  // at least one integer digit
    std::string text = (rng() % 4 == 0) ? "-" : "";
    for (int k = 0; k < digits; ++k) {
      if (k == digits - decimals && decimals > 0) text.push_back('.');
      const uint64_t pick = rng() % 10;
      // Zeros three times as often as other digits, so leading and trailing runs occur.
      text.push_back(pick < 3 ? '0' : static_cast<char>('0' + rng() % 10));
    }
    ExpectSameAsGeneralPath(text);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace pypto
