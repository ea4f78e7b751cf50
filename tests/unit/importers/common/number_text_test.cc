// One parser for numbers written as text (importers/common/number_text.h):
// the cases each format writes, from the fixtures and the format references.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <random>
#include <string>

#include "importers/common/number_text.h"

namespace pypto::number_text {
namespace {

int64_t Ns(std::string_view text) {
  int64_t ns = -12345;
  EXPECT_EQ(ParseScaledDecimal(text, 3, &ns), NumberParse::kOk) << text;
  return ns;
}

TEST(NumberText, IntegersAndEpochMicrosecondsAreExact) {
  EXPECT_EQ(Ns("0"), 0);
  EXPECT_EQ(Ns("1623142623460111"), 1623142623460111000);  // Kineto epoch µs of torch 1.9
  // 1.7e15 µs has a double ulp of 0.25 µs; the text is exact.
  EXPECT_EQ(Ns("1694039968955744.123"), 1694039968955744123);
  EXPECT_EQ(Ns("1704161511420306.491"), 1704161511420306491);  // trace_view "ts" string
  EXPECT_EQ(Ns("1764246877073569.640"), 1764246877073569640);  // kernel_details cell
  EXPECT_EQ(Ns("4909914216204.635"), 4909914216204635);
  EXPECT_EQ(Ns("2.5"), 2500);
  EXPECT_EQ(Ns("13.08"), 13080);
  EXPECT_EQ(Ns("1881.080000"), 1881080);
  EXPECT_EQ(Ns(".5"), 500);
}

TEST(NumberText, DigitsBelowTheUnitRoundHalfAwayFromZero) {
  EXPECT_EQ(Ns("1.23456"), 1235);            // 1234.56 ns
  EXPECT_EQ(Ns("496.8508"), 496851);          // 496850.8 ns
  EXPECT_EQ(Ns("21.1005"), 21101);            // 21100.5 ns: the tie goes up
  EXPECT_EQ(Ns("12.77012757357446"), 12770);  // 12770.127... ns
  EXPECT_EQ(Ns("231290.09999999995"), 231290100);  // float noise in a CSV cell
  EXPECT_EQ(Ns("-0.0005"), -1);               // -0.5 ns: away from zero
  EXPECT_EQ(Ns("-0.0004"), 0);
  // 25 fraction digits: more than 64 bits hold; the first dropped digit (6)
  // still rounds: 0.1234567890123456789 µs = 123.4567... ns.
  EXPECT_EQ(Ns("0.1234567890123456789012345"), 123);
  EXPECT_EQ(Ns("0.0009999999999999999999999"), 1);
}

TEST(NumberText, SignsBlanksAndExponents) {
  EXPECT_EQ(Ns("-5"), -5000);
  EXPECT_EQ(Ns("-2.5"), -2500);
  EXPECT_EQ(Ns("+7"), 7000);
  EXPECT_EQ(Ns(" 8.5 "), 8500);                               // JSON token with blanks
  EXPECT_EQ(Ns("1764246877073569.640\t"), 1764246877073569640);  // CSV trailing tab
  EXPECT_EQ(Ns("1.5e3"), 1500000);
  EXPECT_EQ(Ns("2.5e+2"), 250000);
  EXPECT_EQ(Ns("1E-3"), 1);
  EXPECT_EQ(Ns("1e-05"), 0);   // 0.01 ns (Python float repr in a CSV)
  EXPECT_EQ(Ns("5e-4"), 1);    // 0.5 ns rounds up
  EXPECT_EQ(Ns("1e-5000"), 0);
  EXPECT_EQ(Ns("0e5000"), 0);
}

TEST(NumberText, OverflowAndInvalidAreToldApart) {
  int64_t ns = 0;
  EXPECT_EQ(ParseScaledDecimal("9223372036854775", 3, &ns), NumberParse::kOk);  // 9.22e18 ns fits
  EXPECT_EQ(ns, 9223372036854775000);
  EXPECT_EQ(ParseScaledDecimal("-9223372036854775.808", 3, &ns), NumberParse::kOk);
  EXPECT_EQ(ns, INT64_MIN);
  EXPECT_EQ(ParseScaledDecimal("9223372036854776", 3, &ns), NumberParse::kOverflow);
  EXPECT_EQ(ParseScaledDecimal("99999999999999999999", 3, &ns), NumberParse::kOverflow);
  EXPECT_EQ(ParseScaledDecimal("1e300", 3, &ns), NumberParse::kOverflow);
  EXPECT_EQ(ParseScaledDecimal("1e5000", 3, &ns), NumberParse::kOverflow);
  for (const char* bad : {"", "N/A", "12abc", "12ab", "1e", "1e+", ".", "-", "1.2.3", "0x10", "1 2"})
    EXPECT_EQ(ParseScaledDecimal(bad, 3, &ns), NumberParse::kInvalid) << bad;
  EXPECT_FALSE(MicrosToNs("N/A").has_value());
  EXPECT_FALSE(MicrosToNs("99999999999999999999").has_value());
}

TEST(NumberText, MillisecondsToNanoseconds) {
  EXPECT_EQ(MillisToNs("79.08952021875"), 79089520);  // analysis.db step times: 79089520.21875 ns
  EXPECT_EQ(MillisToNs("0.0000005"), 1);
}

TEST(NumberText, IntegersAndIds) {
  EXPECT_EQ(ParseInt64("4294967295"), 4294967295);
  EXPECT_EQ(ParseInt64("-1"), -1);
  EXPECT_EQ(ParseInt64("+3"), 3);
  EXPECT_EQ(ParseInt64(" 12 "), 12);
  EXPECT_EQ(ParseInt64("-9223372036854775808"), INT64_MIN);
  EXPECT_FALSE(ParseInt64("9223372036854775808"));
  EXPECT_FALSE(ParseInt64("1.5"));
  EXPECT_FALSE(ParseInt64("1e3"));
  EXPECT_FALSE(ParseInt64("-"));
  EXPECT_EQ(ParseUint64("18446744073709551615"), UINT64_MAX);  // flow ids beyond 2^53
  EXPECT_FALSE(ParseUint64("18446744073709551616").has_value());
  EXPECT_EQ(ParseUint64("0x0"), 0u);  // ROCm "stream": "0x0"
  EXPECT_EQ(ParseUint64("0X1F"), 31u);
  EXPECT_EQ(ParseUint64("0xffffffffffffffff"), UINT64_MAX);
  EXPECT_FALSE(ParseUint64("0x1ffffffffffffffff").has_value());
  EXPECT_FALSE(ParseUint64("-1").has_value());
  EXPECT_FALSE(ParseUint64("0x").has_value());
  EXPECT_FALSE(ParseUint64("12g").has_value());
}

// The word-at-a-time path (up to 19 digits, eight at once) against
// std::from_chars, which reads the same texts digit by digit: every length
// 1..20, digits across each eight-byte boundary, and one byte made a non-digit
// at each place (the bytes beside '0' and '9', a space, a point, a sign).
TEST(NumberText, ParseUint64ReadsEveryLengthAsFromChars) {
  EXPECT_EQ(ParseUint64("1744186037391047425"), 1744186037391047425u);  // PYTORCH_API startNs, 19 digits
  EXPECT_EQ(ParseUint64("9999999999999999999"), 9999999999999999999u);  // the largest 19-digit text
  EXPECT_EQ(ParseUint64("12345678"), 12345678u);
  EXPECT_EQ(ParseUint64("0012345678"), 12345678u);  // a leading zero: the digit-by-digit path
  EXPECT_EQ(ParseUint64(" 87654321 "), 87654321u);
  EXPECT_FALSE(ParseUint64("1234567/").has_value());
  EXPECT_FALSE(ParseUint64("1234567:").has_value());
  EXPECT_FALSE(ParseUint64("+12345678").has_value());
  std::mt19937_64 random(20261207);
  int checked = 0;
  for (int length = 1; length <= 20; ++length)
    for (int round = 0; round < 200; ++round) {
      std::string text;
      for (int i = 0; i < length; ++i) text += static_cast<char>('0' + random() % 10);
      if (round % 2 == 1) {
        static constexpr char kNotDigits[] = {'/', ':', ' ', '.', '-', 'a', '\x80'};
        text[random() % length] = kNotDigits[random() % sizeof kNotDigits];
      }
      uint64_t expected = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), expected);
      const bool whole = error == std::errc() && end == text.data() + text.size();
      const std::optional<uint64_t> parsed = ParseUint64(text);
      // A blank at either end is trimmed, so such a text may still parse: only
      // texts from_chars reads whole are compared by value.
      if (whole) {
        ASSERT_TRUE(parsed.has_value()) << text;
        EXPECT_EQ(*parsed, expected) << text;
        ++checked;
      } else if (text.find(' ') == std::string::npos) {
        EXPECT_FALSE(parsed.has_value()) << text;
      }
    }
  EXPECT_GT(checked, 1900);  // about half of 4000 texts are all digits (a 20-digit one may overflow)
}

}  // namespace
}  // namespace pypto::number_text
