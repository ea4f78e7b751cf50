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
