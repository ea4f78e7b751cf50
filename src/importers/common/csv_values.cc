#include "importers/common/csv_values.h"

#include <charconv>
#include <cmath>
#include <string>

#include "model/plain_decimal.h"

namespace pypto::csv {

std::optional<double> ParseDouble(std::string_view cell) {
  if (cell.empty()) return std::nullopt;
  if (cell[0] == '+') cell.remove_prefix(1);
  // Most cells of a PMU table: one division instead of from_chars, same value.
  if (const std::optional<PlainDecimal> plain = ParsePlainDecimal(cell)) return plain->Value();
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
