// What the text cells of profiler CSVs mean beyond plain numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pypto::csv {

// Cells that mean "no value" (not zero): empty, "N/A", "NA", "None", "-",
// "n/a". Inline, with the first byte tried first: it is asked of every cell of
// a kernel_details.csv, nearly all of them numbers.
inline bool IsAbsent(std::string_view cell) {
  if (cell.empty()) return true;
  const char first = cell[0];
  if (first != 'N' && first != 'n' && first != '-') return false;
  return cell == "N/A" || cell == "NA" || cell == "None" || cell == "-" || cell == "n/a";
}

// Times and integers: importers/common/number_text.h.
std::optional<double> ParseDouble(std::string_view cell);  // "0.052", "1e-05", "95.517"

// Removes every '"' from a shape/type list cell (Ascend writes the list as a
// quoted string inside a quoted CSV cell) and a "FORMAT_" prefix of each
// ';'-separated entry when `strip_format_prefix`.
std::string NormalizeListCell(std::string_view cell, bool strip_format_prefix = false);

}  // namespace pypto::csv
