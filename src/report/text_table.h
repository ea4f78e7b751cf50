// Terminal formatting helpers: aligned tables and human durations. Column
// widths count code points, so names with "µs" or non-ASCII text stay aligned.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/profile.h"

namespace pypto::report {

// Text cells longer than this (kernel names reach hundreds of characters) are
// cut with "…" in terminal tables; JSON output keeps them whole.
inline constexpr size_t kMaxCellWidth = 64;

// "812 ns", "12.345 µs", "3.210 ms", "1.500 s"; "-" for kUnknownNs.
std::string FormatDuration(TimeNs ns);
// "37.5%" from a fraction (0.375).
std::string FormatPercent(double fraction);
// Display width in code points (UTF-8 continuation bytes do not count).
size_t DisplayWidth(std::string_view text);
// Cuts `text` to at most `width` code points, ending in "…" when cut.
std::string Ellipsize(std::string_view text, size_t width);

// Makes a profile string (op name, shape, path, note) safe to print on a
// terminal: control characters (C0 including newline and TAB, DEL, C1), line
// and paragraph separators and bidi overrides become visible escapes ("\\n",
// "\\x1b", "\\u202e"), and invalid UTF-8 becomes U+FFFD. A name then cannot move
// the cursor, recolour or retitle the terminal, reorder the text around it or
// forge a report line. TextTable applies it to every cell.
std::string TerminalSafe(std::string_view text);

enum class Align { kLeft, kRight };

class TextTable {
 public:
  struct Column {
    std::string header;
    Align align = Align::kLeft;
  };
  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // Cells beyond the column count are ignored; missing cells are blank.
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  // Header + rows, each line prefixed by `indent` spaces, columns two spaces apart.
  std::string Render(size_t indent = 2) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace pypto::report
