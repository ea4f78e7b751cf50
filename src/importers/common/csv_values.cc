#include "importers/common/csv_values.h"

#include <charconv>
#include <cmath>
#include <string>

namespace pypto::csv {

bool IsAbsent(std::string_view cell) {
  return cell.empty() || cell == "N/A" || cell == "NA" || cell == "None" || cell == "-" || cell == "n/a";
}

namespace {

// Parses [-]digits[.digits] scaled by 10^scale_digits, rounding on the next
// digit. Falls back to long double for exponent notation (short values only,
// e.g. "1e-05" from Python float repr, where precision is not at stake).
std::optional<int64_t> ParseScaledDecimal(std::string_view s, int scale_digits) {
  if (s.empty()) return std::nullopt;
  if (s.find_first_of("eE") != std::string_view::npos) {
    auto d = ParseDouble(s);
    if (!d || !std::isfinite(*d)) return std::nullopt;
    long double v = static_cast<long double>(*d) * std::pow(10.0L, scale_digits);
    if (v > 9.2e18L || v < -9.2e18L) return std::nullopt;
    return static_cast<int64_t>(std::llround(static_cast<double>(v)));
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    i = 1;
  }
  unsigned __int128 value = 0;
  const unsigned __int128 kMax = static_cast<unsigned __int128>(INT64_MAX);
  bool any_digit = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    value = value * 10 + static_cast<unsigned>(s[i] - '0');
    any_digit = true;
    if (value > kMax) return std::nullopt;
  }
  int fraction_digits = 0;
  bool round_up = false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      any_digit = true;
      if (fraction_digits < scale_digits) {
        value = value * 10 + static_cast<unsigned>(s[i] - '0');
        ++fraction_digits;
      } else if (fraction_digits == scale_digits) {
        round_up = s[i] >= '5';
        ++fraction_digits;  // later digits do not change half-up rounding
      }
    }
  }
  if (i != s.size() || !any_digit) return std::nullopt;
  for (int k = std::min(fraction_digits, scale_digits); k < scale_digits; ++k) value *= 10;
  if (round_up) value += 1;
  if (value > kMax) return std::nullopt;
  int64_t v = static_cast<int64_t>(value);
  return negative ? -v : v;
}

}  // namespace

std::optional<int64_t> ParseMicrosToNs(std::string_view cell) { return ParseScaledDecimal(cell, 3); }
std::optional<int64_t> ParseMillisToNs(std::string_view cell) { return ParseScaledDecimal(cell, 6); }

std::optional<int64_t> ParseInt64(std::string_view cell) {
  if (cell.empty()) return std::nullopt;
  if (cell[0] == '+') cell.remove_prefix(1);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (ec != std::errc() || ptr != cell.data() + cell.size()) return std::nullopt;
  return v;
}

std::optional<double> ParseDouble(std::string_view cell) {
  if (cell.empty()) return std::nullopt;
  if (cell[0] == '+') cell.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (ec != std::errc() || ptr != cell.data() + cell.size()) return std::nullopt;
  return v;
}

std::string NormalizeListCell(std::string_view cell, bool strip_format_prefix) {
  std::string out;
  out.reserve(cell.size());
  for (char c : cell)
    if (c != '"') out.push_back(c);
  if (!strip_format_prefix || out.find("FORMAT_") == std::string::npos) return out;
  std::string stripped;
  stripped.reserve(out.size());
  size_t start = 0;
  while (true) {
    size_t end = out.find(';', start);
    std::string_view entry(out.data() + start, (end == std::string::npos ? out.size() : end) - start);
    if (entry.substr(0, 7) == "FORMAT_") entry.remove_prefix(7);
    stripped.append(entry);
    if (end == std::string::npos) break;
    stripped.push_back(';');
    start = end + 1;
  }
  return stripped;
}

}  // namespace pypto::csv
